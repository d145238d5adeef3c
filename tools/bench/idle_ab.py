"""Same-machine before/after of the idle rows (BENCHMARKS.md's process section): gateway A and B of
process.py's idle setup, run by each binary in turn, interleaved, on one private btvirt; Mosquitto with
its two subscribers beside every window. Prints one line per window with the load average at its end.
  scripts/private-air .venv/bin/python tools/bench/idle_ab.py [--rounds N] [--seconds S] LABEL=BINARY...
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gateway_process  # noqa: E402


def cached(binary):
    """Reads BINARY whole first, so every window starts with all of its pages in the page cache, as
    after an install: fault-around maps only cached pages around a fault, so a binary read once and
    another just linked would otherwise differ by ~1 MB of RSS for no reason of the code."""
    with open(binary, "rb") as f:
        while f.read(1 << 20):
            pass


def window(binary, seconds, lost_after=2):
    cached(binary)
    work = tempfile.mkdtemp(prefix="idle-ab-")
    os.chmod(work, 0o777)
    key = f"idle-ab-{os.getpid()}"
    procs = []
    try:
        a, b, _ = gateway_process.idle_gateways(binary, work, key, lost_after, procs)
        mq, paho = gateway_process.idle_mosquitto(work, procs)
        time.sleep(2)   # as process.py: first found and connections settle before the window
        a0, b0, m0, t0 = gateway_process.cpu_seconds(a.pid), gateway_process.cpu_seconds(b.pid), gateway_process.cpu_seconds(mq.pid), time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - t0
        row = {"a_cpu": (gateway_process.cpu_seconds(a.pid) - a0) / wall, "b_cpu": (gateway_process.cpu_seconds(b.pid) - b0) / wall,
               "mq_cpu": (gateway_process.cpu_seconds(mq.pid) - m0) / wall, "a": gateway_process.memory(a.pid),
               "mq": gateway_process.memory(mq.pid), "load": os.getloadavg()[0],
               "by_mapping": gateway_process.rss_by_mapping(a.pid, 6)}
        for c in paho:
            c.loop_stop()
            c.disconnect()
        return row
    finally:
        for p in procs:
            gateway_process.stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("binaries", nargs="+", help="LABEL=BINARY")
    args = ap.parse_args()
    pairs = [b.split("=", 1) for b in args.binaries]
    for r in range(args.rounds):
        for label, binary in pairs:
            row = window(binary, args.seconds)
            print(f"round {r} {label:>8}: A RSS {row['a']['VmRSS']:.2f} MB (HWM {row['a']['VmHWM']:.2f}), "
                  f"A CPU {100 * row['a_cpu']:.2f} %, B CPU {100 * row['b_cpu']:.2f} %; "
                  f"Mosquitto RSS {row['mq']['VmRSS']:.2f} MB CPU {100 * row['mq_cpu']:.2f} %; "
                  f"load1 {row['load']:.2f}; A RSS KB by mapping {row['by_mapping']}", flush=True)


if __name__ == "__main__":
    main()
