"""The load bench's gateway under a wrapping command: what tools/footprint/make-link-order profiles
after the process bench's idle run, so that the code a gateway runs per advert is laid out together
too (docs/footprint.md, "Link order").

    python3 tools/footprint/steady.py BINARY --wrap 'valgrind --tool=callgrind ...'

A reader of tools/bench/load.py (--reader: `ours`, one subscription and a socket client on `#`, the
load bench's idle RSS row without [mqtt]; or `ours_mqtt`, the same with `[mqtt]` and discovery) on
its scripted H4 controller (tools/bench/home_mix.py): started and idle for --idle seconds; then
(under callgrind) `callgrind_control --dump` ends the profile's first part, so that the idle part
can be ordered before the per-advert part; then the warm-up (every known device once) and the home
mix at --rate adverts/s for --seconds."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
sys.path.insert(0, HERE)
import flood  # noqa: E402  (its slow stop and its wait for a listening socket, for a profiled gateway)
import home_mix  # noqa: E402
import load  # noqa: E402
import mqtt  # noqa: E402
import process  # noqa: E402


def wait_found(client, count, seconds):
    """As load.wait_found, with the time a gateway under callgrind needs."""
    deadline = time.monotonic() + seconds
    while (found := load.stats(client)["found"]) < count:
        if time.monotonic() > deadline:
            print(f"steady: {found} of {count} found after the warm-up; going on", file=sys.stderr)
            return
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--wrap", default="", help="command to run the gateway under")
    parser.add_argument("--reader", choices=["ours", "ours_mqtt"], default="ours")
    parser.add_argument("--idle", type=float, default=10)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    # load.Reader takes these from the module when it runs.
    process.stop, process.wait_path = flood.stop_slowly, flood.wait_listening
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work:
        os.chmod(work, 0o1777)   # mosquitto drops to its own user and creates its socket here
        binary = flood.wrapped(args.binary, args.wrap, work)
        mq, msock = mqtt.broker(work)
        reader = None
        try:
            reader = load.Reader(args.reader, binary, "/bin/true", work, msock)
            reader.controller.wait_scanning(timeout=120)
            time.sleep(args.idle)
            if "callgrind" in args.wrap:
                subprocess.run(["callgrind_control", "--dump=idle", str(reader.proc.pid)], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            reader.controller.warm_up(rate=args.rate)
            wait_found(reader.client, home_mix.KNOWN, 120)
            sent = reader.controller.play(args.rate, args.seconds)
            seen = load.stats(reader.client)["adverts_seen"]
            print(f"steady: {home_mix.KNOWN} warm-up adverts, then {sent} of the home mix; {seen} seen so far")
        finally:
            if reader is not None:
                reader.stop()
            process.stop(mq)


if __name__ == "__main__":
    main()
