"""Writes the linker's symbol-ordering file (tools/footprint/link-order.txt, passed by
scripts/shipped-build-flags) from callgrind profiles of the shipped binary: every function of the
binary that ran in them, profile by profile (the first profile's first), each profile's in the order
callgrind first lists them. lld puts the
sections holding them first in .text, so the code a gateway runs is contiguous and the pages
fault-around brings in beside it are code it runs too (docs/footprint.md, "Link order").

    tools/footprint/order.py OUT CALLGRIND_OUT... [--object NAME]

Only functions of the object whose path ends in NAME (default: nearby-gateway) are kept, by their
mangled (linkage) names: run callgrind with --demangle=no."""
import argparse
import os
import re

DEFINE = re.compile(r"^(c?)(ob|fn|fl|fi|fe)=\((\d+)\)(?: (.*))?$")


def functions(path, object_suffix):
    """Names of the functions of OBJECT_SUFFIX that ran, in one profile."""
    names = {"ob": {}, "fn": {}}
    ran, current_ob = [], None
    with open(path, errors="replace") as f:
        for line in f:
            match = DEFINE.match(line.rstrip("\n"))
            if not match:
                continue
            called, kind, key, name = match.groups()
            if kind not in names:
                continue
            if name is not None:
                names[kind][key] = name
            if called:
                continue
            if kind == "ob":
                current_ob = names["ob"].get(key)
            elif (current_ob or "").endswith(object_suffix):
                # callgrind writes a block only for a function that had cost: it ran
                ran.append(names["fn"].get(key))
    return ran


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("profiles", nargs="+")
    parser.add_argument("--object", default="nearby-gateway")
    args = parser.parse_args()
    seen, order, added = set(), [], []
    for profile in args.profiles:
        before = len(order)
        for name in functions(profile, args.object):
            # callgrind names a function by its symbol, with "'2" etc. for recursion levels; a function
            # without one ("0x...": LLVM's private helpers) is placed by tools/footprint/text-front.ld
            name = name.split("'", 1)[0]
            if name not in seen and not name.startswith("0x"):
                seen.add(name)
                order.append(name)
        added.append(f"{os.path.basename(profile)} +{len(order) - before}")
    with open(args.out, "w") as f:
        f.write("".join(f"{name}\n" for name in order))
    print(f"{args.out}: {len(order)} symbols ({', '.join(added)})")


if __name__ == "__main__":
    main()
