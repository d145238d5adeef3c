"""Minimal WAV reading/writing for the modem tools (PCM16 and float32 mono, as the gateway writes)."""
import struct

import numpy as np


def read_wav(path):
    """Returns (float32 mono samples, sample rate)."""
    data = open(path, "rb").read()
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError(f"{path}: not a WAV file")
    off, fmt = 12, None
    while off + 8 <= len(data):
        cid, size = data[off:off + 4], struct.unpack("<I", data[off + 4:off + 8])[0]
        body = data[off + 8:off + 8 + size]
        if cid == b"fmt ":
            tag, channels, rate = struct.unpack("<HHI", body[:8])
            bits = struct.unpack("<H", body[14:16])[0]
            if tag == 0xFFFE:
                tag = struct.unpack("<H", body[24:26])[0]
            fmt = (tag, channels, rate, bits)
        elif cid == b"data":
            tag, channels, rate, bits = fmt
            if tag == 1 and bits == 16:
                x = np.frombuffer(body[:len(body) // 2 * 2], dtype="<i2").astype(np.float32) / 32768
            elif tag == 3 and bits == 32:
                x = np.frombuffer(body[:len(body) // 4 * 4], dtype="<f4").astype(np.float32)
            else:
                raise ValueError(f"{path}: unsupported format {tag}/{bits}")
            x = x[: len(x) // channels * channels].reshape(-1, channels).mean(axis=1)
            return x.astype(np.float32), rate
        off += 8 + size + (size & 1)
    raise ValueError(f"{path}: no data chunk")


def write_wav(path, samples, rate=48000, float32=True):
    samples = np.asarray(samples, dtype=np.float32)
    if float32:
        body, tag, width = samples.astype("<f4").tobytes(), 3, 4
    else:
        body = np.clip(np.round(samples * 32768), -32768, 32767).astype("<i2").tobytes()
        tag, width = 1, 2
    header = b"RIFF" + struct.pack("<I", 36 + len(body)) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, tag, 1, rate, rate * width, width, width * 8)
    header += b"data" + struct.pack("<I", len(body))
    with open(path, "wb") as f:
        f.write(header + body)
