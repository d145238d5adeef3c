#!/usr/bin/env python3
"""Resolvable private addresses for an IRK, made with PyPI cryptography's AES (not the gateway's).

    rpa.py KEY COUNT [SEED]

KEY is read the way Home Assistant's Private BLE Device reads it (its config flow's _parse_irk):
32 hex digits are the AES key as written; base64 (ending in '=') is reversed first. Prints COUNT
addresses, most significant byte first ("4A:..:.."), each prand || ah(IRK, prand) with the top two
bits 01 (Core Vol 6 Part B 1.3.2.2, Vol 3 Part H 2.2.2).
"""
import base64
import random
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def key_bytes(text: str) -> bytes:
    text = text.strip().removeprefix("irk:")
    if text.endswith("="):
        return bytes(reversed(base64.b64decode(text)))
    return bytes.fromhex(text)


def rpa(irk: bytes, prand: bytes) -> str:
    encryptor = Cipher(algorithms.AES(irk), modes.ECB()).encryptor()
    hashed = (encryptor.update(bytes(13) + prand) + encryptor.finalize())[13:]
    return ":".join(f"{b:02X}" for b in prand + hashed)


def main() -> None:
    irk = key_bytes(sys.argv[1])
    if len(irk) != 16:
        sys.exit("rpa.py: an IRK is 16 bytes")
    count = int(sys.argv[2])
    generator = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else None)
    for _ in range(count):
        prand = bytearray(generator.randbytes(3))
        prand[0] = (prand[0] & 0x3F) | 0x40
        print(rpa(irk, bytes(prand)))


if __name__ == "__main__":
    main()
