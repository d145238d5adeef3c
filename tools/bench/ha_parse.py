#!/usr/bin/env python3
"""Peer of the advert benchmark: Home Assistant's bluetooth-data-tools parsing the same AD payloads.

  ha_parse.py CORPUS [--repetitions N]      prints one JSON object

The corpus is the file `nearby-gateway-bench corpus` writes ("NGBC", u32 events, u32 reports, then
u16-length-prefixed LE Advertising Report event packets). The AD payloads are taken out of the events
before any timing (HA gets them from BlueZ/bleak already separated), in corpus order, skipping events
whose lengths lie, exactly as our side does.

Two figures, each the best of N passes over every payload:
- parse_advertisement_data((payload,)): the public API as Home Assistant calls it, with its LRU caches
  (cleared before every pass; the hit rate is reported, since repeated adverts are the real case);
- _uncached_parse_advertisement_bytes(payload): the Cython parse itself, no cache.
When run under tools/bench/malloc_count.so with PYTHONMALLOC=malloc, allocator calls per payload are
counted too (one extra pass each).
"""
import argparse
import ctypes
import json
import struct
import sys
import time

from bluetooth_data_tools import gap, parse_advertisement_data


def read_payloads(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"NGBC":
        raise SystemExit(f"{path}: not a corpus file")
    count, _reports = struct.unpack_from("<II", data, 4)
    offset = 12
    payloads = []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, offset)
        packet = data[offset + 2:offset + 2 + length]
        offset += 2 + length
        payloads.extend(legacy_reports(packet))
    return payloads


def legacy_reports(packet):
    """AD payloads of an LE Advertising Report event; [] when its lengths don't add up."""
    if len(packet) < 4 or packet[0] != 0x3E or packet[1] != len(packet) - 2 or packet[2] != 0x02:
        return []
    out, o = [], 4
    for _ in range(packet[3]):
        if o + 9 > len(packet) or packet[o + 8] > 31:
            return []
        n = packet[o + 8]
        out.append(bytes(packet[o + 9:o + 9 + n]))
        o += 10 + n
        if o > len(packet):
            return []
    return out if o == len(packet) else []


def clear_caches():
    for name in ("_parse_advertisement_data", "_parse_advertisement_data_from_tuple",
                 "parse_advertisement_data_bytes", "parse_advertisement_data_tuple",
                 "_uint128_bytes_as_uuid", "_uint16_int_as_uuid", "_uint32_int_as_uuid"):
        fn = getattr(gap, name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


def cached_pass(payloads):
    parse = parse_advertisement_data
    for p in payloads:
        parse((p,))


def uncached_pass(payloads):
    parse = gap._uncached_parse_advertisement_bytes
    for p in payloads:
        parse(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--repetitions", type=int, default=3)
    args = ap.parse_args()
    payloads = read_payloads(args.corpus)
    try:
        counter = ctypes.CDLL(None).bench_malloc_count
        counter.restype = ctypes.c_ulonglong
    except AttributeError:
        counter = None
    stages = []
    for name, body in (("ha_parse_cached", cached_pass), ("ha_parse_uncached", uncached_pass)):
        best = 0.0
        if args.repetitions > 0:
            best = float("inf")
            for _ in range(args.repetitions):
                clear_caches()
                start = time.perf_counter()
                body(payloads)
                best = min(best, time.perf_counter() - start)
        stage = {"name": name, "reports": len(payloads), "seconds": best,
                 "reports_per_s": len(payloads) / best if best else 0}
        if name == "ha_parse_cached":
            info = gap._parse_advertisement_data.cache_info()
            stage["cache_hit_rate"] = info.hits / max(1, info.hits + info.misses)
        if counter is not None:
            clear_caches()
            before = counter()
            body(payloads)
            stage["allocs_per_report"] = (counter() - before) / len(payloads)
        stages.append(stage)
    json.dump({"stages": stages, "python": sys.version.split()[0],
               "bluetooth_data_tools": getattr(sys.modules["bluetooth_data_tools"], "__version__", "?")}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
