"""Modem: our Swift ggwave-compatible modem vs PyPI ggwave (its C++ core through the Python binding).

Cost: encode = CPU time to produce a beacon ÷ the beacon's duration; decode = time to feed
0.5 s silence + beacon + 0.5 s silence in 1024-sample blocks ÷ that stream's duration. Same payload
(i·37+11 mod 256), volume 50, one thread, total over R passes. "listening to one protocol" restricts
both receivers to the protocol sent (ggwave: rxToggleProtocol); "listening to all" is each side's
default (ours: the three [U] protocols, as the gateway runs; ggwave: all of its protocols).

Decode success vs SNR: tools/modem/robustness.py (the modem's own generator, seeded) writes noisy
files: ggwave's own waveform at a random offset in 0.5–1.5 s of silence each side, white Gaussian
noise over the whole file at the given SNR (beacon power ÷ noise variance, full band), and records
whether ggwave's receiver (all protocols, 1024-sample blocks) found exactly the payload. Ours
decodes the same files (`nearby-gateway-bench modem-decode`, 1024-sample blocks) under the same criterion.
"""
import json
import os
import subprocess
import sys
import time

import ggwave
import numpy as np

PROTOCOLS = {3: "ultrasound-normal", 4: "ultrasound-fast", 5: "ultrasound-fastest"}
SNRS = [20, 10, 5, 0, -5, -10, -15, -20]


def ggwave_cost(pid, length, reps, only_this):
    payload = bytes((i * 37 + 11) & 0xFF for i in range(length))
    # rxToggleProtocol is global in ggwave: set it for the instances made below, then restore.
    if only_this:
        for other in range(0, 12):
            ggwave.rxToggleProtocol(other, 1 if other == pid else 0)
    try:
        t0 = time.perf_counter()
        for _ in range(reps):
            wave = ggwave.encode(payload, protocolId=pid, volume=50)
        encode = time.perf_counter() - t0
        samples = np.frombuffer(wave, dtype=np.float32)
        pad = np.zeros(24000, np.float32)
        stream = np.concatenate([pad, samples, pad])
        blocks = [stream[i:i + 1024].tobytes() for i in range(0, len(stream), 1024)]
        ok = True
        t0 = time.perf_counter()
        for _ in range(reps):
            inst = ggwave.init()
            found = []
            for block in blocks:
                res = ggwave.decode(inst, block)
                if res is not None:
                    found.append(bytes(res))
            ggwave.free(inst)
            ok = ok and found == [payload]
        decode = time.perf_counter() - t0
    finally:
        if only_this:
            for other in range(0, 12):
                ggwave.rxToggleProtocol(other, 1)
    return {"encode": encode / (reps * len(samples) / 48000), "decode": decode / (reps * len(stream) / 48000), "decoded_all": ok}


def run(binary, python, work, quick):
    ggwave.disableLog()
    os.makedirs(work, exist_ok=True)
    reps = 2 if quick else 5
    lengths = [32] if quick else [32, 140]
    cost = []
    for length in lengths:
        ours = json.loads(subprocess.run([binary, "modem-cost", "--length", str(length), "--repetitions", str(reps)],
                                         check=True, stdout=subprocess.PIPE, text=True).stdout)
        for row in ours["protocols"]:
            pid = row["ggwave_id"]
            one = ggwave_cost(pid, length, reps, True)
            every = ggwave_cost(pid, length, reps, False)
            cost.append({"protocol": row["protocol"], "length": length, "ours": row, "ggwave": one, "ggwave_every_protocol": every})
    trials = 3 if quick else 20
    files = os.path.join(work, "snr")
    robustness = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "modem", "robustness.py")
    subprocess.run([python, robustness, "generate", files, "--snr", ",".join(str(s) for s in SNRS), "--lengths", "32",
                    "--trials", str(trials), "--seed", "1"], check=True)
    with open(os.path.join(files, "manifest.tsv")) as f:
        manifest = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    ours = json.loads(subprocess.run([binary, "modem-decode"] + [os.path.join(files, m[0]) for m in manifest],
                                     check=True, stdout=subprocess.PIPE, text=True).stdout)
    table = {}
    for name, pid, snr, payload, ggwave_ok, _start in manifest:
        cell = table.setdefault(PROTOCOLS[int(pid)], {}).setdefault(str(int(float(snr))), {"trials": 0, "ours": 0, "ggwave": 0})
        cell["trials"] += 1
        cell["ggwave"] += int(ggwave_ok)
        cell["ours"] += int(ours["files"].get(name) == [payload])
    channels = channel_run(binary, python, os.path.join(work, "channel"), 5 if quick else 20)
    return {"cost": cost, "snr": table, "snr_trials": trials, "snrs": SNRS, "reps": reps,
            "decode_seconds": ours["seconds"], "audio_seconds": ours["audio_seconds"], "channels": channels}


def channel_run(binary, python, files, trials):
    subprocess.run([binary, "modem-channel", "--out", files, "--trials", str(trials), "--seed", "1", "--length", "16"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(files, "manifest.tsv")) as f:
        manifest = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    paths = [os.path.join(files, m[0]) for m in manifest]
    ours = json.loads(subprocess.run([binary, "modem-decode"] + paths, check=True, stdout=subprocess.PIPE, text=True).stdout)
    peer = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "modem", "ggwave_peer.py")
    theirs = {}
    for line in subprocess.run([python, peer, "decode"] + paths, check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines():
        name, _, found = line.partition("\t")
        theirs[os.path.basename(name)] = [p for p in found.split(",") if p]
    cells = {}
    for name, pid, cell, payload, _start in manifest:
        c = cells.setdefault(cell, {}).setdefault(PROTOCOLS[int(pid)], {"trials": 0, "ours": 0, "ggwave": 0})
        c["trials"] += 1
        c["ours"] += int(ours["files"].get(name) == [payload])
        c["ggwave"] += int(theirs.get(name) == [payload])
    return {"cells": cells, "trials": trials, "decode_seconds": ours["seconds"], "audio_seconds": ours["audio_seconds"]}


CELL_NAMES = {
    "white-noise-15dB": "white noise only",
    "clock+100ppm": "receiver clock +100 ppm", "clock+150ppm": "receiver clock +150 ppm",
    "clock+200ppm": "receiver clock +200 ppm", "clock+1000ppm": "receiver clock +1000 ppm",
    "clock-1000ppm": "receiver clock −1000 ppm", "rt60-0.5s": "room RT60 0.5 s", "rt60-1.0s": "room RT60 1.0 s",
    "lowpass-16kHz": "speaker low-pass 16 kHz", "lowpass-18kHz": "speaker low-pass 18 kHz",
    "tilt-3dB/kHz": "speaker tilt −3 dB/kHz above 15 kHz", "lowpass-18kHz-10dB": "speaker low-pass 18 kHz",
    "tilt-3dB/kHz-10dB": "speaker tilt −3 dB/kHz above 15 kHz",
}


def rows(d):
    from report import row
    out = []
    for c in d["cost"]:
        p, n = c["protocol"], c["length"]
        out.append(row("modem", f"{p} {n} B: encode cost", c["ours"]["encode"], c["ggwave"]["encode"], "PyPI ggwave", "x RT", "lower",
                       "target ≤ 0.05 of real time"))
        out.append(row("modem", f"{p} {n} B: decode cost, listening to this protocol", c["ours"]["decode"], c["ggwave"]["decode"],
                       "PyPI ggwave", "x RT", "lower",
                       "target ≤ 0.05" + ("" if c["ours"]["decoded_all"] and c["ggwave"]["decoded_all"] else "; A DECODE FAILED")))
        out.append(row("modem", f"{p} {n} B: decode cost, listening to all (ours 3 [U], ggwave all)",
                       c["ours"]["decode_every_protocol"], c["ggwave_every_protocol"]["decode"], "PyPI ggwave", "x RT", "lower"))
    for proto, cells in d["snr"].items():
        for snr in sorted(cells, key=lambda s: -int(s)):
            cell = cells[snr]
            out.append(row("modem", f"{proto}: decoded at {int(snr):+d} dB SNR ({cell['trials']} trials)",
                           cell["ours"] / cell["trials"], cell["ggwave"] / cell["trials"], "PyPI ggwave", "%", "higher",
                           f"ours {cell['ours']}/{cell['trials']}, ggwave {cell['ggwave']}/{cell['trials']}"))
    ch = d.get("channels")
    if ch:
        for cell, protos in ch["cells"].items():
            snr = "-15 dB" if cell.endswith("-15dB") else "-10 dB" if cell.endswith("-10dB") else "0 dB"
            for proto, c in protos.items():
                out.append(row("modem", f"{proto}: {CELL_NAMES.get(cell, cell)}, {snr} SNR ({c['trials']} trials)",
                               c["ours"] / c["trials"], c["ggwave"] / c["trials"], "PyPI ggwave", "%", "higher",
                               f"ours {c['ours']}/{c['trials']}, ggwave {c['ggwave']}/{c['trials']}"))
        out.append(row("modem", "decode cost over the whole channel corpus (tracking on, all 3 [U])",
                       ch["decode_seconds"] / max(1e-9, ch["audio_seconds"]), None, "-", "x RT", "lower", "target ≤ 0.05"))
    return out


def details(d):
    return (f"**Modem run.** Cost: {d['reps']} passes per figure. SNR: {d['snr_trials']} trials per protocol and SNR, "
            f"32-byte random payloads (seed 1); our receiver spent {d['decode_seconds']:.1f} s on "
            f"{d['audio_seconds']:.0f} s of noisy audio ({d['decode_seconds'] / max(1e-9, d['audio_seconds']):.3f} of real time, "
            f"listening for all three [U] protocols).")


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.executable, sys.argv[2], "--quick" in sys.argv), indent=1))
