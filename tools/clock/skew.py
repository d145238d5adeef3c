#!/usr/bin/env python3
"""Two gateways on btvirt whose wall clocks differ (libfaketime on one): how long until each finds the
other's message. Also a box that boots at 1970 and steps to the right time later (FAKETIME_TIMESTAMP_FILE).

    tools/clock/skew.py BINARY [--limit S] CASE...   CASE: +5m, +2h, +3d, ... or boot1970:60

Each case runs two gateways with their own api_key (cases share the air but not the key, so they run at
once). Prints one line per case: the seconds from start until A found B and B found A, or "never" within
--limit. The gateways log at info level; "found skew/<name>" is the line waited for. docs/protocol.md,
"Clocks that disagree", has the numbers this printed.
"""
import argparse, os, secrets, subprocess, sys, tempfile, time

LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def config(folder, name, key, rotate):
    return f'''api_key = "{key}"
board = "sim"
log_level = "info"

[radio]
device = "h4:/tmp/bt-server-le"
interval_ms = 100
rotate_s = {rotate}
lost_after_s = 10

[socket]
path = "{folder}/{name}.sock"

[state]
path = "{folder}/{name}-state/state.json"
defaults = {{ background_mode = true, permission = "granted", power = "active" }}

[[publication]]
namespace = "skew"
type = "{name}"
content = "hello from {name}"
mediums = ["ble"]

[[subscription]]
namespace = "skew"
type = "*"
mediums = ["ble"]
'''

def start(binary, folder, name, key, rotate, fake):
    """`fake`: FAKETIME's value ("+3d"), or a FAKETIME_TIMESTAMP_FILE path ("file:PATH"); None for the true clock.
    libfaketime preloaded into a shell that execs the gateway: preloaded into the gateway directly,
    libfaketime 0.9.10 leaves a Swift program without its arguments (CommandLine.arguments is empty),
    and the faketime command forks, so terminating it leaves the gateway running."""
    path = os.path.join(folder, f"{name}.toml")
    with open(path, "w") as f:
        f.write(config(folder, name, key, rotate))
    command = [binary, "run", "--config", path]
    env = dict(os.environ)
    if fake is not None:
        env.update(LD_PRELOAD=LIB, FAKETIME_DONT_FAKE_MONOTONIC="1")
        if fake.startswith("file:"):
            env.update(FAKETIME_TIMESTAMP_FILE=fake[5:], FAKETIME_NO_CACHE="1")
        else:
            env.update(FAKETIME=fake)
        command = ["sh", "-c", 'exec "$@"', "sh"] + command
    log = open(os.path.join(folder, f"{name}.log"), "w")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)

def found(folder, name, other):
    try:
        with open(os.path.join(folder, f"{name}.log")) as f:
            return f"found skew/{other}" in f.read()
    except FileNotFoundError:
        return False

def run_cases(binary, cases, limit, rotate, keep):
    runs = []
    for case in cases:
        folder = tempfile.mkdtemp(prefix="skew-")
        key = secrets.token_hex(16)
        fake, step = None, None
        if case.startswith("boot1970"):
            step = float(case.split(":")[1])
            stamp = os.path.join(folder, "faketime")
            with open(stamp, "w") as f:
                f.write("@1970-01-01 00:00:00\n")
            fake = "file:" + stamp
        else:
            fake = case
        a = start(binary, folder, "a", key, rotate, None)
        b = start(binary, folder, "b", key, rotate, fake)
        runs.append(dict(case=case, folder=folder, procs=[a, b], step=step, stepped=False, a=None, b=None))
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and (keep or any(r["a"] is None or r["b"] is None for r in runs)):
        now = time.monotonic() - t0
        for r in runs:
            if r["step"] is not None and not r["stepped"] and now >= r["step"]:
                with open(os.path.join(r["folder"], "faketime"), "w") as f:
                    f.write("+0\n")
                r["stepped"] = True
            if r["a"] is None and found(r["folder"], "a", "b"): r["a"] = now
            if r["b"] is None and found(r["folder"], "b", "a"): r["b"] = now
        time.sleep(0.5)
    for r in runs:
        for p in r["procs"]:
            p.terminate()
        for p in r["procs"]:
            p.wait()
        fmt = lambda v: "never" if v is None else f"{v:.1f} s"
        counts = []
        for name, other in (("a", "b"), ("b", "a")):
            with open(os.path.join(r["folder"], f"{name}.log")) as f:
                text = f.read()
            counts.append(f"{name}: {text.count(f'found skew/{other}')} found, {text.count(f'lost skew/{other}')} lost")
        print(f"{r['case']:>12}: A (true clock) found B after {fmt(r['a'])}, B (faked) found A after {fmt(r['b'])};"
              f" {'; '.join(counts)} (ran {limit if r['a'] is None or r['b'] is None else 'until both found'}"
              f" s, rotate_s {rotate}; logs in {r['folder']})", flush=True)

def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--limit", type=float, default=180)
    p.add_argument("--rotate", type=int, default=600)
    p.add_argument("--keep", action="store_true", help="run for --limit even when both found (count found/lost)")
    p.add_argument("cases", nargs="+")
    args = p.parse_args()
    run_cases(args.binary, args.cases, args.limit, args.rotate, args.keep)

if __name__ == "__main__":
    sys.exit(main())
