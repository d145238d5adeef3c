"""Finds stack-promoted objects that are never initialised in optimised SIL: what Swift 6.2.3's optimizer
(Debian's swiftlang, the compiler of the arm64 package) made of `monitor`'s default filters, an array
literal in `cond ? [...] : filters`: `alloc_ref [stack] [tail_elems ...]` whose only uses are
`end_cow_mutation` and `dealloc_stack_ref`, its value used after that as an array whose count and
elements were never written (the arm64 monitor died allocating 365,089,858,112 bytes, issue 26).

usage: stack_objects.py FILE.sil...   prints each such object with its function; exits 1 if there is one
       stack_objects.py commands BUILD_YAML DIR
                                      writes DIR/<Module>.args: the release build's compile command of each
                                      module of Sources/, as `swiftc -O -emit-sil` of that module alone
                                      (one argument a line; scripts/arm64-test sil runs them)
"""
import json
import os
import re
import sys

FUNCTION = re.compile(r"^sil .*@(\S+) :")
DEFINITION = re.compile(r"^\s*(%\d+) = (\w+)")
STACK_OBJECT = re.compile(r"^\s*(%\d+) = alloc_ref (?:\[[^\]]*\] )*?\[stack\](?: \[[^\]]*\])* \[tail_elems .*// users?: (.*)$")
HARMLESS = ("end_cow_mutation", "dealloc_stack_ref", "debug_value")


def uninitialised(lines):
    """(line number, function, text) of each stack object with tail elements nothing writes."""
    found = []
    function = None
    for number, line in enumerate(lines):
        match = FUNCTION.match(line)
        if match:
            function = match.group(1)
            continue
        match = STACK_OBJECT.match(line)
        if not match:
            continue
        users = [user.strip() for user in match.group(2).split(",")]
        kinds = []
        for user in users:
            # A user is the instruction that defines it, or (no result) the one whose "// id:" it is.
            for later in lines[number + 1:number + 400]:
                if re.match(r"^\s*" + re.escape(user) + r" = ", later) or re.search(r"// id: " + re.escape(user) + r"\b", later):
                    kinds.append(later.split("=", 1)[-1].split()[0] if " = " in later else later.split()[0])
                    break
            else:
                kinds.append("?")
        if all(kind in HARMLESS for kind in kinds):
            found.append((number + 1, function, line.strip()[:140]))
    return found


def sil_commands(build_yaml, folder):
    """The -emit-sil form of each Sources/ module's compile command in SwiftPM's release.yaml."""
    with open(build_yaml) as f:
        text = f.read()
    count = 0
    for name, args in re.findall(r'"C\.(\w+)-[\w-]+-release\.module":\n(?:    .*\n)*?    args: (\[.*\])', text):
        args = json.loads(args)
        # The repository is /src in the toolchain root; the module's source list is a file of the build.
        top = os.path.dirname(os.path.dirname(os.path.abspath(build_yaml)))
        listed = next((a[1:] for a in args if a.startswith("@")), None)
        if not listed or not os.path.exists(listed.replace("/src/", top + "/", 1)):
            continue
        with open(listed.replace("/src/", top + "/", 1)) as f:
            if not all(line.startswith("/src/Sources/") for line in f.read().split()):
                continue
        command, skip = [], 0
        for arg in args:
            if skip:
                skip -= 1
            elif arg in ("-emit-module-path", "-output-file-map", "-num-threads", "-index-store-path"):
                skip = 1   # one output file, one thread: -emit-sil -o needs them gone
            elif arg in ("-emit-dependencies", "-emit-module", "-c", "-serialize-diagnostics", "-parseable-output") or re.fullmatch(r"-j\d+", arg):
                pass
            else:
                command.append(arg)
        command += ["-emit-sil", "-o", f"{name}.sil"]
        with open(os.path.join(folder, f"{name}.args"), "w") as f:
            f.write("\n".join(command) + "\n")
        count += 1
    print(f"stack_objects: {count} modules of Sources/ in {build_yaml}")
    return 0 if count else 1


def main(paths):
    bad = 0
    for path in paths:
        with open(path, errors="replace") as f:
            lines = f.read().split("\n")
        for number, function, text in uninitialised(lines):
            bad += 1
            print(f"{path}:{number}: in {function}: a stack object nothing initialises: {text}")
    print(f"stack_objects: {len(paths)} SIL files, {bad} uninitialised stack object(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "commands":
        sys.exit(sil_commands(sys.argv[2], sys.argv[3]))
    sys.exit(main(sys.argv[1:]) if len(sys.argv) > 1 else (print(__doc__), 2)[1])
