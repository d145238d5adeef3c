"""No import cycle among the Python modules under a folder (docs/testing.md, "The harness"): every
`import X` / `from X import` of a module that lives beside the importer (the tools put their own
folder on sys.path), at any depth in the file (imports inside functions count: they only hide a
cycle), becomes an edge; a cycle is printed and fails.

    python3 tools/test/import_cycles.py tools
"""
import ast
import sys
from pathlib import Path


def graph(folder):
    """{module path: set of module paths it imports}, for the modules under folder."""
    edges = {}
    for path in sorted(Path(folder).rglob("*.py")):
        siblings = {p.stem: p for p in path.parent.glob("*.py")}
        names = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        edges[path] = {siblings[name] for name in names if name in siblings and siblings[name] != path}
    return edges


def cycles(edges):
    """Each cycle once, as a list of paths (depth-first search; white/grey/black)."""
    state, stack, found = {}, [], []

    def visit(node):
        state[node] = "grey"
        stack.append(node)
        for after in sorted(edges.get(node, ())):
            if state.get(after) == "grey":
                found.append(stack[stack.index(after):] + [after])
            elif after not in state:
                visit(after)
        stack.pop()
        state[node] = "black"

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "tools"
    edges = graph(folder)
    found = cycles(edges)
    for cycle in found:
        print("import cycle: " + " -> ".join(str(p) for p in cycle), file=sys.stderr)
    print(f"import_cycles: {len(edges)} modules under {folder}, "
          f"{sum(len(e) for e in edges.values())} imports between them, {len(found)} cycle(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
