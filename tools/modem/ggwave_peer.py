#!/usr/bin/env python3
"""PyPI ggwave as the reference peer of our Swift modem (used by Tests/ModemTests and benchmarks).

  ggwave_peer.py encode PROTOCOL_ID VOLUME HEX OUT.wav     write ggwave's own waveform (float32 WAV)
  ggwave_peer.py encode-batch < LINES                      each line: PROTOCOL_ID VOLUME HEX OUT.wav
  ggwave_peer.py decode FILE.wav...                        one line per file: FILE<TAB>hex,hex,...

decode feeds the file to one ggwave instance in 1024-sample blocks, as a capture loop would, and lists
every payload it reports (empty after the tab when none).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ggwave  # noqa: E402
import numpy as np  # noqa: E402

from wavio import read_wav, write_wav  # noqa: E402


def decode_samples(samples, block=1024):
    instance = ggwave.init()
    found = []
    try:
        samples = np.asarray(samples, dtype=np.float32)
        for start in range(0, len(samples), block):
            res = ggwave.decode(instance, samples[start:start + block].tobytes())
            if res is not None:
                found.append(bytes(res))
    finally:
        ggwave.free(instance)
    return found


def main(argv):
    ggwave.disableLog()
    if len(argv) >= 5 and argv[0] == "encode":
        payload = bytes.fromhex(argv[3])
        wave = ggwave.encode(payload, protocolId=int(argv[1]), volume=int(argv[2]))
        write_wav(argv[4], np.frombuffer(wave, dtype=np.float32), float32=True)
        return 0
    if argv == ["encode-batch"]:
        for line in sys.stdin:
            if line.strip():
                pid, volume, hexpayload, out = line.split()
                wave = ggwave.encode(bytes.fromhex(hexpayload), protocolId=int(pid), volume=int(volume))
                write_wav(out, np.frombuffer(wave, dtype=np.float32), float32=True)
        return 0
    if len(argv) >= 2 and argv[0] == "decode":
        for path in argv[1:]:
            samples, rate = read_wav(path)
            if rate != 48000:
                print(f"{path}\tERROR rate {rate}")
                continue
            print(path + "\t" + ",".join(p.hex() for p in decode_samples(samples)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
