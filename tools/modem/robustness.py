#!/usr/bin/env python3
"""Noisy ggwave test files, and how PyPI ggwave's own receiver fares on them.

  robustness.py generate OUT_DIR --snr 20,10,0,-5,-10 --lengths 1,16,64,140 --trials 2 [--seed 1]

For every protocol ([U] Normal/Fast/Fastest), length, SNR and trial: a random payload, ggwave's own
waveform (volume 50) at a random, non-frame-aligned offset inside 0.5 to 1.5 s of noise on each side,
white Gaussian noise added over the whole file. SNR is the mean power of the beacon's samples over
the noise variance (full band, 0 to 24 kHz). Files are float32 WAV; OUT_DIR/manifest.tsv lists
  file  protocol_id  snr_db  payload_hex  ggwave_ok  start_sample
where ggwave_ok is 1 when ggwave's receiver (fed 1024-sample blocks) reported exactly the payload.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ggwave  # noqa: E402
import numpy as np  # noqa: E402

from ggwave_peer import decode_samples  # noqa: E402
from wavio import write_wav  # noqa: E402

PROTOCOLS = {3: "ultrasound-normal", 4: "ultrasound-fast", 5: "ultrasound-fastest"}


def noisy_beacon(rng, payload, protocol_id, snr_db):
    beacon = np.frombuffer(ggwave.encode(payload, protocolId=protocol_id, volume=50), dtype=np.float32)
    lead = rng.integers(24000, 72000)
    tail = rng.integers(24000, 72000)
    signal = np.concatenate([np.zeros(lead, np.float32), beacon, np.zeros(tail, np.float32)])
    power = float(np.mean(beacon.astype(np.float64) ** 2))
    sigma = np.sqrt(power / 10 ** (snr_db / 10))
    return (signal + rng.normal(0, sigma, len(signal))).astype(np.float32), int(lead)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["generate"])
    ap.add_argument("out")
    ap.add_argument("--snr", default="20,10,0,-5,-10")
    ap.add_argument("--lengths", default="1,16,64,140")
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--protocols", default="3,4,5")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    ggwave.disableLog()
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for pid in [int(p) for p in args.protocols.split(",")]:
        for length in [int(x) for x in args.lengths.split(",")]:
            for snr in [float(s) for s in args.snr.split(",")]:
                for trial in range(args.trials):
                    payload = bytes(rng.integers(0, 256, length, dtype=np.uint8))
                    samples, lead = noisy_beacon(rng, payload, pid, snr)
                    name = f"p{pid}-n{length}-snr{snr:+g}-t{trial}.wav"
                    path = os.path.join(args.out, name)
                    write_wav(path, samples, float32=True)
                    ok = int(decode_samples(samples) == [payload])
                    rows.append(f"{name}\t{pid}\t{snr:g}\t{payload.hex()}\t{ok}\t{lead}")
    with open(os.path.join(args.out, "manifest.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
