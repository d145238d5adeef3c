#!/usr/bin/env python3
"""Runs every benchmark with its peer in the same run, prints one table, writes BENCHMARKS.md.

  run.py --bin NEARBY_GATEWAY --bench-bin NEARBY_GATEWAY_BENCH --top REPO [--quick] [--only pipeline,fanout,modem,process,mqtt,load,identity,rooms,theengs]
         [--malloc-shim SO] [--out BENCHMARKS.md] [--json results.json]

Called by scripts/bench, which installs the peers and builds the release binary first.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402


def section_modules():
    """section → its module (each measures one thing and makes its own rows); a section whose
    module cannot be imported here (a missing peer library) is left out of the report."""
    modules = {}
    for section in SECTIONS + OPTIONAL:
        try:
            modules[section] = __import__(section)
        except ImportError:
            pass
    return modules

SECTIONS = ["pipeline", "fanout", "modem", "process", "mqtt", "load", "identity", "rooms"]
# Run only when named in --only (a qemu guest under TCG: minutes); other runs carry its rows over.
OPTIONAL = ["theengs"]


def machine():
    def cmd(args):
        try:
            return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
        except OSError:
            return "?"
    lscpu = {}
    for line in cmd(["lscpu"]).splitlines():
        key, _, value = line.partition(":")
        lscpu[key.strip()] = value.strip()
    return {
        "cpu": lscpu.get("Model name", "?"), "cpus": cmd(["nproc"]), "kernel": platform.release(),
        "hypervisor": lscpu.get("Hypervisor vendor", "none"), "os": cmd(["sh", "-c", ". /etc/os-release; echo $PRETTY_NAME"]),
        "swift": cmd(["swift", "--version"]).splitlines()[0] if cmd(["swift", "--version"]) else "?",
        "mosquitto": cmd(["sh", "-c", "mosquitto -h 2>&1 | head -1"]),
    }


def busy_processes():
    """Other processes using CPU when we start: the machine is shared, and this says how noisy it was."""
    out = subprocess.run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu"], stdout=subprocess.PIPE, text=True).stdout
    busy = []
    for line in out.splitlines()[1:6]:
        pcpu, _, comm = line.strip().partition(" ")
        try:
            if float(pcpu) >= 20:
                busy.append(f"{comm.strip()} {pcpu}%")
        except ValueError:
            pass
    return busy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the nearby-gateway the .deb ships")
    ap.add_argument("--bench-bin", required=True, help="nearby-gateway-bench, our side of each comparison")
    ap.add_argument("--top", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--malloc-shim")
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--render", metavar="RESULTS_JSON", help="only rewrite --out from an earlier run's results")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            results = json.load(f)
        rows = report.rows(results, section_modules())
        print(report.text_table(rows))
        if args.out:
            with open(args.out, "w") as f:
                f.write(report.markdown(results, rows, section_modules()))
        return 0
    only = [s for s in args.only.split(",") if s]
    work = tempfile.mkdtemp(prefix="nearby-bench-")
    os.chmod(work, 0o755)   # Mosquitto, started as root, runs as its own user and must reach its socket folder
    python = sys.executable
    results = {"quick": args.quick, "machine": machine(), "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
               "load_before": os.getloadavg(), "busy_before": busy_processes(), "sections": {}, "errors": {}}
    started = time.monotonic()
    for section in only:
        t0 = time.monotonic()
        print(f"== {section}", file=sys.stderr, flush=True)
        try:
            module = __import__(section)
            if section == "pipeline":
                data = module.run(args.bench_bin, python, os.path.join(work, section), args.quick, args.malloc_shim)
            elif section in ("modem", "identity"):
                data = module.run(args.bench_bin, python, os.path.join(work, section), args.quick)
            elif section in ("process", "load"):
                data = module.run(args.bin, args.top, os.path.join(work, section), args.quick)
            elif section in ("theengs", "rooms"):
                data = module.run(args.bin, args.top, os.path.join(work, section), args.quick)
            elif section == "mqtt":
                data = module.run(args.bin, args.bench_bin, args.top, python, os.path.join(work, section), args.quick)
            else:
                data = module.run(args.bench_bin, os.path.join(work, section), args.quick)
            data["section_seconds"] = time.monotonic() - t0
            results["sections"][section] = data
        except Exception as error:  # a broken section is reported, the others still run
            results["errors"][section] = f"{type(error).__name__}: {error}"
            print(f"   {section} failed: {error}", file=sys.stderr, flush=True)
    results["seconds"] = time.monotonic() - started
    shutil.rmtree(work, ignore_errors=True)   # the corpus alone is ~40 MB
    results["load_after"] = os.getloadavg()
    rows = report.rows(results, section_modules())
    print(report.text_table(rows))
    print(f"\n{results['seconds']:.1f} s of measuring; load average {results['load_before'][0]:.2f} before, "
          f"{results['load_after'][0]:.2f} after")
    for section, error in results["errors"].items():
        print(f"{section}: FAILED: {error}")
    if args.out and set(only) != set(SECTIONS + OPTIONAL):
        # A partial run keeps the other sections' rows of the file it rewrites, labelled with their run
        # (kept in the results too, so --render can write the same file again).
        results["carried"] = report.carried(args.out, set(results["sections"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report.markdown(results, rows, section_modules()))
        print(f"wrote {args.out}")
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
