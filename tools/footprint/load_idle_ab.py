"""Same-machine before/after of the load bench's idle RSS rows (tools/bench/load.py, issue 38): its
`ours` and `ours_mqtt` readers, each on its own scripted H4 controller, on one Mosquitto, started and
idle for S seconds, run by each binary in turn, interleaved. Prints per window each reader's VmRSS,
RssAnon and RssFile, the binary's own resident pages and those per ELF section (pagemap, as
tools/footprint/idle.py); with --text-pages DIR, the resident .text pages of `ours` per window.

    .venv/bin/python tools/footprint/load_idle_ab.py [--rounds N] [--seconds S] LABEL=BINARY...

No btvirt: the controllers are the bench's own. Needs NEARBY_GATEWAY_BOARDS=boards in a checkout."""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
sys.path.insert(0, HERE)
import flood  # noqa: E402  (its wait for a listening socket)
import idle  # noqa: E402  (its pagemap count per section)
import idle_ab  # noqa: E402  (its whole read of a binary before each window)
import load  # noqa: E402
import mqtt  # noqa: E402
import process  # noqa: E402

READERS = ["ours", "ours_mqtt"]


def status(pid):
    """VmRSS, RssAnon and RssFile in MB."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                values[key] = int(value.split()[0]) / 1024
    return values


def window(binary, seconds, text_pages=None):
    idle_ab.cached(binary)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work:
        os.chmod(work, 0o1777)   # mosquitto drops to its own user and creates its socket here
        mq, msock = mqtt.broker(work)
        readers, rows = [], {}
        try:
            for name in READERS:
                readers.append(load.Reader(name, binary, "/bin/true", work, msock))
            for reader in readers:
                reader.controller.wait_scanning()
            time.sleep(2 + seconds)   # as load.py: 2 s for the start-up's threads, then the idle window
            for reader in readers:
                by_section, pages = idle.resident_by_section(reader.proc.pid, binary)
                rows[reader.name] = dict(status(reader.proc.pid), binary=sum(by_section.values()) / 1024,
                                         sections=by_section)
                if text_pages and reader.name == "ours":
                    with open(text_pages, "w") as f:
                        f.write("".join(f"{page:x}\n" for page in pages))
        finally:
            for reader in readers:
                reader.stop()
            process.stop(mq)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--text-pages", help="a folder for each window's resident .text pages of `ours`")
    parser.add_argument("binaries", nargs="+", help="LABEL=BINARY")
    args = parser.parse_args()
    # load.Reader takes it from the module: a socket that exists may not accept yet on a busy machine.
    process.wait_path = flood.wait_listening
    pairs = [b.split("=", 1) for b in args.binaries]
    for r in range(args.rounds):
        for label, binary in pairs:
            binary = os.path.realpath(binary)
            pages = os.path.join(args.text_pages, f"{label}-{r}.txt") if args.text_pages else None
            rows = window(binary, args.seconds, pages)
            for name, row in rows.items():
                top = sorted(row["sections"].items(), key=lambda kv: -kv[1])[:8]
                print(f"round {r} {label:>8} {name:>9}: VmRSS {row['VmRSS']:.2f} MB (anon {row['RssAnon']:.2f}, "
                      f"file {row['RssFile']:.2f}), binary {row['binary']:.2f} MB: "
                      + ", ".join(f"{sec} {kb / 1024:.2f}" for sec, kb in top)
                      + f"; load1 {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
