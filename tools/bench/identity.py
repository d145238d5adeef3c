"""Identities: resolvable private addresses under a flood, ours (`nearby-gateway-bench identity`: the
gateway's AirIngest with 32 [[identity]] keys, AES-128 from libcrypto, a bounded address cache) vs
Home Assistant's resolver, bluetooth-data-tools' resolve_private_address (PyPI cryptography's AES, the
same libcrypto underneath), trying the same 32 keys on the same number of new, random RPAs.

Both sides take every address as new and resolve it against every key (none matches: the worst
case, what a flood costs). CPU per new address is CPU time ÷ addresses, best of the passes. Ours
also runs a paced flood at 10,000 new addresses/s and reports the process's CPU share and peak RSS.

    identity.py --peer IDENTITIES ADDRESSES REPETITIONS   (the peer's side, printed as JSON)
"""
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def peer(identities, addresses, repetitions):
    from bluetooth_data_tools import get_cipher_for_irk, resolve_private_address
    generator = random.Random(40)
    ciphers = [get_cipher_for_irk(generator.randbytes(16)) for _ in range(identities)]
    pool = []
    for _ in range(addresses):
        raw = bytearray(generator.randbytes(6))
        raw[0] = (raw[0] & 0x3F) | 0x40
        pool.append(":".join(f"{b:02X}" for b in raw))
    best = float("inf")
    resolved = 0
    for _ in range(repetitions):
        start = time.process_time()
        for address in pool:
            for cipher in ciphers:
                if resolve_private_address(cipher, address):
                    resolved += 1
                    break
        best = min(best, (time.process_time() - start) / len(pool))
    return {"ns_per_new_address": best * 1e9, "resolved": resolved}


def run(bench_bin, python, work, quick):
    identities, addresses = 32, (20_000 if quick else 100_000)
    reps = 2 if quick else 3
    seconds = 3 if quick else 10
    out = subprocess.run([bench_bin, "identity", "--identities", str(identities), "--addresses", str(addresses),
                          "--repetitions", str(reps), "--seconds", str(seconds)],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    ours = json.loads(out.strip().splitlines()[-1])
    peer_addresses = addresses // 10   # the peer is ~100× slower; the same per-address cost on fewer
    out = subprocess.run([python, os.path.abspath(__file__), "--peer", str(identities), str(peer_addresses), str(reps)],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    theirs = json.loads(out.strip().splitlines()[-1])
    return {"identities": identities, "addresses": addresses, "peer_addresses": peer_addresses, "repetitions": reps,
            "ours": ours, "peer": theirs}


def rows(d):
    from report import row
    o, p, f = d["ours"], d["peer"], d["ours"]["flood"]
    name = "bluetooth-data-tools resolve_private_address (HA)"
    n = d["identities"]
    return [
        row("identity", f"CPU per new address, {n} identities, none resolving ({n} AES each)",
            o["ns_per_new_address"] / 1000, p["ns_per_new_address"] / 1000, name, "µs", "lower",
            f"{o['aes_per_new_address']:.0f} AES per new address; a cached address {o['ns_per_cached_address']:.0f} ns"),
        row("identity", f"CPU share at {f['rate_target']:,} new addresses/s ({n} identities, one core = 100 %)",
            f["cpu_share"], p["ns_per_new_address"] * f["rate_target"] / 1e9, name + " (computed from its µs per address)",
            "%", "lower", f"measured over {f['seconds']:.0f} s at {f['rate']:,.0f}/s; target: bounded"),
        row("identity", "peak RSS growth over the flood (address cache bounded)",
            (o["peak_rss_kib"]["after_flood"] - o["peak_rss_kib"]["after_passes"]) / 1024, None, "-", "MB", "lower",
            f"cache {f['cache_entries']:,} of {o['cache_capacity']:,} addresses after {f['sent']:,} new ones"),
    ]


def details(d):
    o, p, f = d["ours"], d["peer"], d["ours"]["flood"]
    rss = o["peak_rss_kib"]
    return (f"**Identity run.** {d['identities']} identities with random keys; {d['addresses']:,} random resolvable "
            f"private addresses per pass for ours, {d['peer_addresses']:,} for the peer (each address new, tried "
            f"against every key, none resolving), best of {d['repetitions']} passes of CPU time. Ours: "
            f"{o['ns_per_new_address']:.0f} ns per new address through the gateway's `AirIngest` (one `EVP_EncryptUpdate` "
            f"per key on contexts keyed once), {o['ns_per_cached_address']:.0f} ns per repeated address (a cache hit). "
            f"Peer: {p['ns_per_new_address']:.0f} ns per new address. Paced flood: {f['sent']:,} new addresses in "
            f"{f['seconds']:.1f} s, CPU {f['cpu_share'] * 100:.1f} % of one core, the cache at {f['cache_entries']:,} "
            f"entries; peak RSS {rss['before'] / 1024:.1f} MB before, {rss['after_passes'] / 1024:.1f} MB after the passes, "
            f"{rss['after_flood'] / 1024:.1f} MB after the flood.")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--peer":
        print(json.dumps(peer(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
    else:
        sys.exit(__doc__)
