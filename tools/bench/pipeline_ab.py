"""Same-machine before/after of the advert pipeline (BENCHMARKS.md's `pipeline` rows): builds two
commits (or source trees) with the shipped flags, writes one corpus with the first binary, then runs
each binary's `pipeline` bench in turn, ROUNDS times, so both see the same load. Prints one line per run
(reports/s of the `pipeline`, `hci_parse` and `ad_values` stages, best wall-clock pass; the `pipeline`
stage's reports per CPU second, `pipeline_cpu`, which a busy machine disturbs much less; load
average) and fails when the outcomes (found, lost, ...) differ between any two runs.
  python3 tools/bench/pipeline_ab.py [--rounds N] [--reports N] [--shipped-size] [A [B ...]]
A and B: a commit (default 6834b74, the last commit before the module split, and HEAD), a source
directory built as it is (e.g. `.` for uncommitted changes) or a built `nearby-gateway-bench`;
LABEL=SPEC names a side; more than two sides are run in turn the same way. Commits are
exported (git archive) to .cache/pipeline-ab/<commit>/ and built there in their own scratch path, kept
for the next run: a build of this package takes minutes on a 2-core machine. Before the split the
bench is `nearby-gateway bench pipeline`; after it, `nearby-gateway-bench pipeline` (same flags).
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(REPO, ".cache", "pipeline-ab")
STAGES = ("pipeline", "hci_parse", "ad_values")
CPU = "pipeline_cpu"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def side(spec):
    """The bench command of SPEC: a built `nearby-gateway-bench` binary as it is, else its source."""
    if os.path.isfile(spec) and os.access(spec, os.X_OK):
        return None, [os.path.abspath(spec)], spec
    tree, name = source_tree(spec)
    return tree, bench_command(tree), name


def source_tree(spec):
    """The directory to build for SPEC: itself when it is a directory, else the commit exported once
    (a temporary directory renamed into place, so an interrupted export is never taken as complete)."""
    if os.path.isdir(spec):
        return os.path.abspath(spec), spec
    commit = git("rev-parse", "--verify", spec + "^{commit}")
    tree = os.path.join(CACHE, commit)
    if not os.path.isdir(tree):
        os.makedirs(CACHE, exist_ok=True)
        partial = tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=CACHE)
        try:
            archive = subprocess.Popen(["git", "-C", REPO, "archive", commit], stdout=subprocess.PIPE)
            subprocess.run(["tar", "-x", "-C", partial], stdin=archive.stdout, check=True)
            if archive.wait() != 0:
                raise SystemExit(f"git archive {commit} failed")
            os.rename(partial, tree)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return tree, commit[:10]


def build(tree, product):
    """Release build of PRODUCT with this checkout's scripts/shipped-build-flags (the same flags for
    both sides, whatever each commit shipped), in TREE/.build-pipeline-ab. Returns the binary."""
    scratch = os.path.join(tree, ".build-pipeline-ab")
    swift = f"swift build -c release --package-path {shlex.quote(tree)} --scratch-path {shlex.quote(scratch)}"
    script = (f"set -euo pipefail; source {shlex.quote(os.path.join(REPO, 'scripts', 'shipped-build-flags'))}; "
              f"shipped_build_scratch {shlex.quote(scratch)}; "
              f"{swift} --product {product} \"${{shipped_build_flags[@]}}\" >&2; "
              f"{swift} --show-bin-path \"${{shipped_build_flags[@]}}\"")
    print(f"building {product} in {tree}", file=sys.stderr, flush=True)
    bin_dir = subprocess.run(["bash", "-c", script], check=True, stdout=subprocess.PIPE, text=True).stdout.split()[-1]
    return os.path.join(bin_dir, product)


def bench_command(tree):
    """The bench's command: `nearby-gateway bench` before the split, `nearby-gateway-bench` after it."""
    if os.path.isdir(os.path.join(tree, "Sources", "GatewayBench")):
        return [build(tree, "nearby-gateway-bench")]
    return [build(tree, "nearby-gateway"), "bench"]


def shipped_size(tree):
    """Bytes of the shipped binary stripped as scripts/package strips it (before the split the bench
    was part of it)."""
    binary = build(tree, "nearby-gateway")
    with tempfile.TemporaryDirectory(prefix="pipeline-ab-strip-") as work:
        stripped = os.path.join(work, "nearby-gateway")
        subprocess.run(["strip", "--strip-unneeded", "--remove-section=.comment", "--remove-section=.note", "-o", stripped,
                        binary], check=True)
        return os.path.getsize(stripped)


def last_json(cmd):
    return timed_json(cmd)[0]


def timed_json(cmd):
    """The command's last line as JSON, and the CPU seconds (user + system) the process used."""
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(cmd, stdout=out)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise subprocess.CalledProcessError(child.returncode, cmd)
        out.seek(0)
        return json.loads(out.read().decode().strip().splitlines()[-1]), usage.ru_utime + usage.ru_stime


def pipeline_cpu(cmd, corpus, passes):
    """Reports per CPU second of the `pipeline` stage: the CPU of PASSES passes less that of a run that
    only reads the corpus (`--repetitions 0`). Unlike the stage's own figure (wall-clock, best pass),
    it does not count the time a loaded machine gives to other processes."""
    base = cmd + ["pipeline", "--corpus", corpus, "--only", "pipeline"]
    result, busy = timed_json(base + ["--repetitions", str(passes)])
    _, setup = timed_json(base + ["--repetitions", "0"])
    reports = next(s["reports"] for s in result["stages"] if s["name"] == "pipeline")
    return passes * reports / max(busy - setup, 1e-9), result["outcomes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reports", type=int, default=1_000_000)
    ap.add_argument("--repetitions", type=int, default=3, help="timed passes per stage in each run (best counts)")
    ap.add_argument("--cpu-passes", type=int, default=3, help="passes of the pipeline stage timed by CPU time (0: none)")
    ap.add_argument("--shipped-size", action="store_true", help="also build each side's nearby-gateway; print its stripped size")
    ap.add_argument("sides", nargs="*", default=[],
                    help="[LABEL=]COMMIT, DIRECTORY or built nearby-gateway-bench (default 6834b74 HEAD)")
    args = ap.parse_args()
    specs = args.sides if len(args.sides) >= 2 else (args.sides or ["6834b74"]) + ["HEAD"]
    sides = []
    for spec in specs:
        label, _, what = spec.rpartition("=")
        tree, cmd, name = side(what)
        sides.append((label or name, cmd))
        if args.shipped_size and tree:
            print(f"{label or name}: shipped nearby-gateway, stripped: {shipped_size(tree):,} B", flush=True)
    print("bench binaries: " + "; ".join(f"{label} {shlex.join(cmd)}" for label, cmd in sides), flush=True)

    work = tempfile.mkdtemp(prefix="pipeline-ab-")
    try:
        corpus = os.path.join(work, "corpus.bin")
        meta = last_json(sides[0][1] + ["corpus", "--reports", str(args.reports), "--seed", "1", "--out", corpus])
        print(f"corpus: {meta['reports']:,} reports in {meta['events']:,} events (seed 1)", flush=True)
        measured = STAGES + ((CPU,) if args.cpu_passes else ())
        rates = {label: {s: [] for s in measured} for label, _ in sides}
        reference = None
        for r in range(args.rounds):
            for label, cmd in sides:
                result = last_json(cmd + ["pipeline", "--corpus", corpus, "--repetitions", str(args.repetitions),
                                          "--only", ",".join(STAGES)])
                by_name = {s["name"]: s["reports_per_s"] for s in result["stages"]}
                outcomes = [result["outcomes"]]
                if args.cpu_passes:
                    by_name[CPU], cpu_outcomes = pipeline_cpu(cmd, corpus, args.cpu_passes)
                    outcomes.append(cpu_outcomes)
                for s in measured:
                    rates[label][s].append(by_name[s])
                reference = reference or outcomes[0]
                same = all(o == reference for o in outcomes)
                print(f"round {r} {label:>12}: " + ", ".join(f"{s} {by_name[s] / 1e6:.2f} M/s" for s in measured)
                      + f"; load1 {os.getloadavg()[0]:.2f}; "
                      + ("same outcomes" if same else f"OUTCOMES DIFFER: {outcomes} vs {reference}"), flush=True)
                if not same:
                    raise SystemExit(1)
        print(f"outcomes (every run): {json.dumps(reference, sort_keys=True)}")
        for s in measured:
            base = max(rates[sides[0][0]][s])
            print(f"{s:>10}: " + "; ".join(f"{label} {min(v[s]) / 1e6:.2f}-{max(v[s]) / 1e6:.2f} M/s "
                                             f"(best {max(v[s]) / base:.3f}x {sides[0][0]})" for label, v in rates.items()))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
