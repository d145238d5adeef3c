"""No silent skip (docs/testing.md): the skipped tests of a Swift Testing run, read from its xUnit
report (`--xunit-output`), checked against Tests/allowed-skips for one place.

    python3 tools/test/skips.py PLACE REPORT.xml [--filtered N] [--count-file FILE]

Prints every skipped test with its reason; exits 1 if one is not allowed at PLACE (its name and
the start of its reason must match a line), 2 if the report is missing. --filtered N adds the N
tests the caller left out with `--skip` (allow-listed, printed by the caller) to the count, which
is written to FILE for the run's summary.
"""
import argparse
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ALLOW_LIST = Path(__file__).resolve().parents[2] / "Tests" / "allowed-skips"


def allowed(place):
    """(test, reason) pairs allowed at place."""
    pairs = []
    for line in ALLOW_LIST.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        where, test, reason = line.split("|", 2)
        if where == place:
            pairs.append((test, reason))
    return pairs


def skipped(report):
    """(suite, test, reason) of every skipped test case in an xUnit report."""
    root = ElementTree.parse(report).getroot()
    for case in root.iter("testcase"):
        mark = case.find("skipped")
        if mark is not None:
            yield case.get("classname", ""), case.get("name", ""), (mark.text or "").strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("place")
    parser.add_argument("report")
    parser.add_argument("--filtered", type=int, default=0)
    parser.add_argument("--count-file")
    args = parser.parse_args()
    if not Path(args.report).is_file():
        print(f"skips: no test report at {args.report} (did the tests run?)", file=sys.stderr)
        return 2
    rules = allowed(args.place)
    count, refused = args.filtered, []
    for suite, name, reason in skipped(args.report):
        count += 1
        function = name.split("(")[0]
        ok = any(function == test and reason.startswith(start) for test, start in rules)
        print(f"skips: {'allowed' if ok else 'NOT ALLOWED'} at {args.place}: {suite}.{name}: {reason}")
        if not ok:
            refused.append(f"{suite}.{name}")
    if args.count_file:
        Path(args.count_file).write_text(f"{count}\n")
    print(f"skips: {count} skipped at {args.place} ({args.filtered} left out by the allow-list)")
    if refused:
        print(f"skips: {len(refused)} skipped test(s) not in Tests/allowed-skips for {args.place}: "
              + ", ".join(refused), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
