#!/usr/bin/env python3
"""The air of the Theengs bench: a scripted LE controller on the kernel's hci_vhci (standard library
only; the controller part is tools/system-test/guest/vhci-peer's) that sends a mix of adverts at a
chosen rate and stamps each write to /dev/vhci with CLOCK_MONOTONIC (the guest has one clock, so the
subscriber's stamps compare with these).

  air.py --control FIFO --index-file FILE --devices N

Control lines (one a line on the FIFO):
  go RATE SECONDS OUT   send RATE adverts/s for SECONDS (only while scanning is on), then write
                        {"sent": [[seq, kind, t_ns], ...], "seconds": wall} to OUT and log "done OUT"
  quit                  exit (the kernel removes the controller)

The mix, by sequence number seq (one counter for the whole run, so every advert is unique):
  seq % 10 in 0..3  iBeacon, major/minor = seq >> 16, seq & 0xffff (a new beacon id every advert)
  seq % 10 in 4..5  Eddystone-UID, instance = seq (48 bits)
  seq % 10 in 6..9  phone-like noise: Apple "Nearby Info" manufacturer data, the flags of a phone
The address of advert seq is device seq % N (random static, C0:00:00:KK:HH:LL, KK the kind).
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import select
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_loader = importlib.machinery.SourceFileLoader(
    "vhci_peer", os.path.join(HERE, "..", "..", "system-test", "guest", "vhci-peer"))
_spec = importlib.util.spec_from_loader("vhci_peer", _loader)
peer = importlib.util.module_from_spec(_spec)
_loader.exec_module(peer)

UUID = bytes(range(0x10, 0x20))
NAMESPACE = bytes.fromhex("00112233445566778899")
KINDS = ["ibeacon"] * 4 + ["eddystone"] * 2 + ["noise"] * 4


def advert(seq, devices):
    kind = KINDS[seq % 10]
    device = seq % devices
    if kind == "ibeacon":
        data = (bytes([0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + UUID
                + struct.pack(">HHb", (seq >> 16) & 0xFFFF, seq & 0xFFFF, -59))
        code = 1
    elif kind == "eddystone":
        frame = bytes([0x00, 0xEB]) + NAMESPACE + seq.to_bytes(6, "big") + bytes(2)
        data = (bytes([0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, len(frame) + 3, 0x16, 0xAA, 0xFE]) + frame)
        code = 2
    else:
        # A phone: flags, Apple Nearby Info (type 0x10), a few changing bytes.
        # (Its length byte counts type and data: 10, so 3 changing bytes. It had 4, and every noise
        # advert ended in a stray byte our parser counted as malformed.)
        data = bytes([0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x03, 0x1C]) + seq.to_bytes(3, "big")
        code = 3
    address = bytes([device & 0xFF, (device >> 8) & 0xFF, code, 0x00, 0x00, 0xC0])
    rssi = -50 - (seq % 30)
    body = bytes([0x02, 0x01, 0x03, 0x01]) + address + bytes([len(data)]) + data + struct.pack("b", rssi)
    return kind, bytes([0x04, 0x3E, len(body)]) + body


def log(text):
    print(f"air: {text}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--control", required=True)
    ap.add_argument("--index-file", required=True)
    ap.add_argument("--devices", type=int, default=100)
    args = ap.parse_args()
    if not os.path.exists(args.control):
        os.mkfifo(args.control)
    control = os.open(args.control, os.O_RDWR | os.O_NONBLOCK)
    vhci = os.open("/dev/vhci", os.O_RDWR)
    os.write(vhci, bytes([0xFF, 0x00]))
    reply = os.read(vhci, 4)
    if len(reply) != 4 or reply[0] != 0xFF:
        log(f"unexpected answer to the vendor packet: {reply.hex()}")
        return 1
    index = struct.unpack("<H", reply[2:4])[0]
    with open(args.index_file + ".new", "w") as f:
        f.write(f"{index}\n")
    os.rename(args.index_file + ".new", args.index_file)
    log(f"registered hci{index}")

    scanning = False
    seq = 0
    job = None   # (rate, end, out, sent, start, next_due)
    pending = b""
    while True:
        if job and scanning:
            timeout = max(0.0, min(job[5], job[1]) - time.monotonic())
        elif job:
            timeout = max(0.0, job[1] - time.monotonic())
        else:
            timeout = None
        readable, _, _ = select.select([vhci, control], [], [], timeout)
        if vhci in readable:
            packet = os.read(vhci, 4096)
            if len(packet) >= 4 and packet[0] == 0x01:
                opcode = struct.unpack("<H", packet[1:3])[0]
                parameters = packet[4:4 + packet[3]]
                if opcode == peer.RESET:
                    scanning = False
                elif opcode == peer.LE_SET_SCAN_ENABLE and parameters:
                    if (parameters[0] == 1) != scanning:
                        log(f"[{time.monotonic():.1f}] scanning {'on' if parameters[0] == 1 else 'off'} "
                            f"({seq} adverts sent)")
                    scanning = parameters[0] == 1
                os.write(vhci, peer.command_complete(opcode, peer.RETURNS.get(opcode, b"")))
        if control in readable:
            pending += os.read(control, 4096)
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                words = line.decode(errors="replace").split()
                if words[:1] == ["go"] and len(words) == 4:
                    rate, seconds = float(words[1]), float(words[2])
                    now = time.monotonic()
                    job = [rate, now + seconds, words[3], [], now, now]
                    log(f"[{now:.1f}] go {rate:g}/s for {seconds:g} s")
                elif words[:1] == ["quit"]:
                    log("quit")
                    return 0
                elif words:
                    log(f"unknown control line: {line!r}")
        if job and scanning:
            rate, end, out, sent, start, _ = job
            now = time.monotonic()
            # What is due by now goes out, one report per write (as a controller does), at most 32
            # before the kernel's commands are answered again (it gives a controller 2 s). The send
            # ends at the window's end whatever was reached: a starved guest sends fewer, measured.
            due = int((min(now, end) - start) * rate) + 1
            for _ in range(min(32, due - len(sent))):
                kind, packet = advert(seq, args.devices)
                os.write(vhci, packet)
                sent.append((seq, kind, time.monotonic_ns()))
                seq += 1
            job[5] = start + len(sent) / rate
        if job and time.monotonic() >= job[1]:
            rate, end, out, sent, start, _ = job
            wall = time.monotonic() - start
            with open(out + ".new", "w") as f:
                json.dump({"sent": sent, "seconds": wall}, f)
            os.rename(out + ".new", out)
            log(f"[{time.monotonic():.1f}] done {out}: {len(sent)} adverts in {wall:.2f} s")
            job = None

if __name__ == "__main__":
    sys.exit(main())
