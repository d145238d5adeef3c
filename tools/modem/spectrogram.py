#!/usr/bin/env python3
"""Spectrogram of a beacon WAV (as written by `nearby-gateway beacon --out`), for docs/modem.md.

  spectrogram.py BEACON.wav OUT.png [--title TEXT]

Needs numpy and matplotlib (pip install matplotlib into the venv). 1024-sample Hann frames with
hop 256, shown from 14 to 20 kHz where the ultrasound protocols put their tones.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from wavio import read_wav  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wav")
    ap.add_argument("png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    x, rate = read_wav(args.wav)
    n, hop = 1024, 256
    window = np.hanning(n)
    frames = [x[i:i + n] * window for i in range(0, len(x) - n, hop)]
    spec = np.abs(np.fft.rfft(np.array(frames), axis=1)) ** 2
    db = 10 * np.log10(spec.T + 1e-12)
    freqs = np.fft.rfftfreq(n, 1 / rate)
    band = (freqs >= 14000) & (freqs <= 20000)
    times = np.arange(len(frames)) * hop / rate
    fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
    top = db[band].max()
    mesh = ax.pcolormesh(times, freqs[band] / 1000, db[band], shading="auto", vmin=top - 60, vmax=top, cmap="magma")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("frequency (kHz)")
    ax.set_title(args.title or os.path.basename(args.wav))
    fig.colorbar(mesh, ax=ax, label="dB (relative)")
    fig.tight_layout()
    fig.savefig(args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
