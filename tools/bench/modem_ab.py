"""Same-machine before/after of the modem cost rows: each build's `modem-cost` and PyPI ggwave
(modem.py's ggwave_cost) interleaved, round by round, on one machine. A build is given as the command
that runs its modem-cost (an older build's is `nearby-gateway bench modem-cost`).
  .venv/bin/python tools/bench/modem_ab.py [--rounds N] [--length B] 'LABEL=COMMAND ...'...
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import modem  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--length", type=int, default=32)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("builds", nargs="+", help="LABEL=COMMAND")
    args = ap.parse_args()
    modem.ggwave.disableLog()
    builds = [b.split("=", 1) for b in args.builds]
    for r in range(args.rounds):
        for label, command in builds:
            out = subprocess.run(shlex.split(command) + ["--length", str(args.length), "--repetitions", str(args.repetitions)],
                                 check=True, stdout=subprocess.PIPE, text=True).stdout
            rows = {row["protocol"]: row for row in json.loads(out)["protocols"]}
            print(f"round {r} {label:>8}: decode one protocol " + ", ".join(
                f"{p} {1000 * rows[p]['decode']:.2f}" for p in sorted(rows)) + f" ms/s; load1 {os.getloadavg()[0]:.2f}", flush=True)
        for pid, name in modem.PROTOCOLS.items():
            g = modem.ggwave_cost(pid, args.length, args.repetitions, True)
            print(f"round {r}   ggwave: {name} decode {1000 * g['decode']:.2f} ms/s; load1 {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
