"""Makes the ppm corpus: SNR-corpus files (robustness.py) at +5 ... -10 dB, resampled as if the
receiver's sample clock ran off by +1000, -1000 and +600 ppm (FFT resampling).

usage: resample_ppm.py SNR_CORPUS_DIR OUT_DIR   (writes OUT_DIR/manifest.tsv, same columns)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wavio import read_wav, write_wav  # noqa: E402

PPMS = (1000, -1000, 600)


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(src, "manifest.tsv"))]
    with open(os.path.join(dst, "manifest.tsv"), "w") as out:
        for row in rows:
            if int(row[2]) not in (5, 0, -5, -10):
                continue
            x, rate = read_wav(os.path.join(src, row[0]))
            spectrum = np.fft.rfft(x.astype(np.float64))
            for ppm in PPMS:
                n = int(round(len(x) * (1 + ppm * 1e-6)))
                resampled = np.zeros(n // 2 + 1, complex)
                m = min(len(spectrum), len(resampled))
                resampled[:m] = spectrum[:m]
                y = np.fft.irfft(resampled, n) * (n / len(x))
                name = row[0].replace(".wav", f"-{ppm:+d}ppm.wav")
                write_wav(os.path.join(dst, name), y.astype(np.float32), rate)
                out.write("\t".join([name] + row[1:]) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
