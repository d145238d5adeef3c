"""Kills scanners while an advertiser floods btvirt with reports; says after how many kills btvirt died.

Run by tools/btvirt-sigpipe/run inside a private /tmp with its own btvirt. One advertiser re-enables
advertising every 0.5 ms; a scanner process connects, scans, and is SIGKILLed while reports are on
their way to it; repeat. btvirt that does not ignore SIGPIPE dies (status 141) when it writes a report
to a connection whose reader is gone."""
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import hci_peer  # noqa: E402

SCANNER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import hci_peer
c = hci_peer.Controller()
c.reset()
c.command(0x08, 0x000B, bytes([0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]))   # passive, 10 ms/10 ms
c.command(0x08, 0x000C, bytes([0x01, 0x00]))                                 # enable, no duplicate filter
print("scanning", flush=True)
time.sleep(3600)
"""


def advertise(stop):
    advertiser = hci_peer.BareAdvertiser()
    advertiser.controller.command(0x08, 0x0008, bytes([3, 2, 1, 6]) + bytes(28))
    while not stop.is_set():
        try:
            advertiser.controller.command(0x08, 0x000A, b"\x00")
            advertiser.controller.command(0x08, 0x000A, b"\x01")
        except (OSError, TimeoutError):
            return
        time.sleep(0.0005)


def main():
    kills, btvirt = int(sys.argv[1]), int(sys.argv[2])
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")
    stop = threading.Event()
    threading.Thread(target=advertise, args=(stop,), daemon=True).start()
    for kill in range(1, kills + 1):
        scanner = subprocess.Popen([sys.executable, "-c", SCANNER, bench], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = scanner.stdout.readline()
        if line.strip() != b"scanning":
            scanner.kill()
            scanner.wait()
            alive = os.path.exists(f"/proc/{btvirt}") and open(f"/proc/{btvirt}/stat").read().split()[2] != "Z"
            print(f"died {kill}" if not alive else f"scanner-failed {kill}", flush=True)
            return
        time.sleep(0.002)   # reports are flowing to it now
        scanner.send_signal(signal.SIGKILL)
        scanner.wait()
        scanner.stdout.close()
        state = open(f"/proc/{btvirt}/stat").read().split()[2] if os.path.exists(f"/proc/{btvirt}") else "gone"
        if state in ("Z", "gone"):
            print(f"died {kill}", flush=True)
            return
    stop.set()
    print(f"survived {kills}", flush=True)


if __name__ == "__main__":
    main()
