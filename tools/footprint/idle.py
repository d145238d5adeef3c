"""Idle footprint of one gateway binary, by hand, inside `scripts/private-air` (docs/footprint.md):
gateway A of the process bench (two subscriptions, one publication; gateway B beside it, run by the
same binary) idles for S seconds, then A's RSS is printed per mapping and, for the binary's own
mappings, per ELF section (resident pages from /proc/PID/pagemap).

    scripts/private-air python3 tools/footprint/idle.py BINARY [--seconds S] [--wrap 'valgrind ...']

--wrap runs A under a command (e.g. callgrind for tools/footprint/order.py); --pid-file writes A's
pid, --hold keeps both running until that file is deleted (for perf, strace, gdb by hand)."""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import gateway_process  # noqa: E402  the bench's configs and helpers: the set-up measured is the bench's

PAGE = os.sysconf("SC_PAGE_SIZE")


def sections(binary):
    """(name, file offset, size, address) of every section that occupies the file."""
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        line = line.replace("[ ", "[")
        fields = line.split()
        if len(fields) > 6 and fields[0].startswith("[") and fields[0] != "[Nr]" and fields[2] != "NOBITS":
            found.append((fields[1], int(fields[4], 16), int(fields[5], 16), int(fields[3], 16)))
    return found


def resident_by_section(pid, binary):
    """KB resident per section of BINARY in process PID, and the resident .text pages (ELF addresses)."""
    real = os.path.realpath(binary)
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 5 and os.path.realpath(fields[5]) == real:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                maps.append((start, end, int(fields[2], 16)))
    secs = sections(binary)
    by_section, text_pages = {}, []
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end, offset in maps:
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read((end - start) // PAGE * 8)
            for i in range((end - start) // PAGE):
                if not struct.unpack_from("<Q", entries, i * 8)[0] >> 63:
                    continue
                file_offset = offset + i * PAGE
                name = "(between sections)"
                for sec, sec_offset, size, address in secs:
                    if sec_offset <= file_offset < sec_offset + size or file_offset <= sec_offset < file_offset + PAGE:
                        name = sec
                        if sec == ".text":
                            text_pages.append(address + max(0, file_offset - sec_offset) // PAGE * PAGE)
                        break
                by_section[name] = by_section.get(name, 0) + PAGE // 1024
    return by_section, text_pages


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--wrap", default="")
    parser.add_argument("--pid-file")
    parser.add_argument("--hold", action="store_true")
    parser.add_argument("--text-pages", help="write the resident .text pages' addresses (hex) here")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="footprint-")
    key = f"footprint-{os.getpid()}"
    gp = gateway_process
    a_conf = gp.config(work, "a", key, 2, gp.subscription("bench", 2) + gp.subscription("other", 2)
                       + gp.publication("bench-a", "hello", "from-a"))
    b_conf = gp.config(work, "b", key, 2, gp.publication("bench-b", "hello", "from-b") + gp.subscription("bench-a", 2))
    procs = []
    try:
        a = subprocess.Popen(args.wrap.split() + [binary, "run", "--config", a_conf],
                             stdout=subprocess.DEVNULL)
        procs.append(a)
        b = gateway_process.gateway(binary, b_conf, procs)
        gateway_process.wait_path(f"{work}/a.sock", a, 120 if args.wrap else 15)
        gateway_process.wait_path(f"{work}/b.sock", b)
        if args.pid_file:
            with open(args.pid_file, "w") as f:
                f.write(f"{a.pid}\n")
        time.sleep(2 + args.seconds)
        if args.hold:
            while os.path.exists(args.pid_file):
                time.sleep(0.5)
        if a.poll() is not None:
            sys.exit(f"gateway A exited with {a.returncode}")
        if not args.wrap:
            mem = gateway_process.memory(a.pid)
            by_map = gateway_process.rss_by_mapping(a.pid, top=100)
            print(f"VmRSS {mem['VmRSS']:.2f} MB  VmHWM {mem['VmHWM']:.2f} MB")
            for name, kb in by_map.items():
                print(f"  {kb / 1024:7.2f} MB  {name}")
            by_section, text_pages = resident_by_section(a.pid, binary)
            print(f"{os.path.basename(binary)} by section (pagemap):")
            for name, kb in sorted(by_section.items(), key=lambda kv: -kv[1]):
                print(f"  {kb / 1024:7.2f} MB  {name}")
            if args.text_pages:
                with open(args.text_pages, "w") as f:
                    f.write("".join(f"{page:x}\n" for page in text_pages))
    finally:
        for proc in reversed(procs):
            gateway_process.stop(proc)


if __name__ == "__main__":
    main()
