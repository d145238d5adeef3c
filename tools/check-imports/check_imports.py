"""The module graph, checked three ways against Package.swift (`swift package dump-package`):

1. each target's `import`s are exactly its declared dependencies (system modules aside): a
   dependency no file imports, or an import Package.swift does not declare, is a mismatch;
2. each target depends only on targets declared above it (Package.swift's order is lowest first);
3. docs/architecture.md's module graph (the ```-block after "### Module graph") is the one this
   script draws from Package.swift (`--print-graph` prints it).

    python3 tools/check-imports/check_imports.py [--print-graph]

Exits 1 naming every mismatch; 0 when all three hold."""
import argparse
import json
import os
import re
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# Modules of the toolchain and the C library, which Package.swift does not declare.
SYSTEM = {"Glibc", "Musl", "Foundation", "FoundationEssentials", "FoundationNetworking", "Synchronization",
          "Dispatch", "Testing", "XCTest", "_Concurrency", "Swift"}
IMPORT = re.compile(r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?"
                    r"import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)")
# Shown in the graph, not checked as imports: the product targets' own line says what they are.
GRAPH_TARGETS_SKIPPED_TYPES = {"test", "system"}


def package():
    out = subprocess.run(["swift", "package", "dump-package"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def dependencies(target):
    names = []
    for dep in target["dependencies"]:
        kind = next(iter(dep))
        names.append(dep[kind][0])
    return names


def folder(target):
    if target.get("path"):
        return os.path.join(REPO, target["path"])
    return os.path.join(REPO, "Tests" if target["type"] == "test" else "Sources", target["name"])


def imports(path):
    found = {}
    for root, _, files in os.walk(path):
        for name in files:
            if not name.endswith(".swift"):
                continue
            file = os.path.join(root, name)
            with open(file, encoding="utf-8") as handle:
                in_string = False   # inside a multi-line string literal (a Python script in a test)
                for line in handle:
                    if line.count('"""') % 2 == 1:
                        in_string = not in_string
                        continue
                    match = None if in_string else IMPORT.match(line)
                    if match:
                        found.setdefault(match.group(1), os.path.relpath(file, REPO))
    return found


def has_swift(path):
    return any(name.endswith(".swift") for _, _, files in os.walk(path) for name in files)


def graph(targets):
    """One line a Swift module of the product and the bench, in Package.swift's order."""
    lines = []
    width = max(len(t["name"]) for t in targets) + 2
    for target in targets:
        if target["type"] in GRAPH_TARGETS_SKIPPED_TYPES or not has_swift(folder(target)):
            continue
        deps = dependencies(target)
        lines.append((target["name"].ljust(width) + "← " + (", ".join(deps) if deps else "(nothing)")).rstrip())
    return lines


def documented_graph():
    with open(os.path.join(REPO, "docs", "architecture.md"), encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"### Module graph\n.*?```\n(.*?)```", text, re.S)
    return match.group(1).rstrip("\n").split("\n") if match else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--print-graph", action="store_true", help="print the graph docs/architecture.md should show")
    args = parser.parse_args()
    targets = package()["targets"]
    drawn = graph(targets)
    if args.print_graph:
        print("\n".join(drawn))
        return 0
    problems = []
    declared_at = {t["name"]: k for k, t in enumerate(targets)}
    for index, target in enumerate(targets):
        deps = dependencies(target)
        for dep in deps:
            if dep in declared_at and declared_at[dep] > index:
                problems.append(f"{target['name']}: depends on {dep}, declared below it in Package.swift")
        path = folder(target)
        if not has_swift(path):
            continue
        found = imports(path)
        used = {name for name in found if name not in SYSTEM}
        for dep in deps:
            if dep not in used:
                problems.append(f"{target['name']}: declares {dep}, which none of its files imports")
        for name in sorted(used - set(deps) - {target["name"]}):
            problems.append(f"{target['name']}: {found[name]} imports {name}, which Package.swift does not declare")
    documented = documented_graph()
    if documented != drawn:
        problems.append("docs/architecture.md's module graph differs from Package.swift's; it should read:\n"
                        + "\n".join("    " + line for line in drawn))
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"imports match Package.swift in {len(targets)} targets; the order and docs/architecture.md's graph too")
    return 0


if __name__ == "__main__":
    sys.exit(main())
