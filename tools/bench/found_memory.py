"""Memory per found entry (issue 31, item 4): a gateway subscribed to iBeacons on a private btvirt is
flooded with distinct iBeacons (tools/flood/beacons.py) until its found set holds `limits.found`
entries; then every entry is left to expire.

    (VmRSS with the set full − VmRSS before the flood) / entries    memory per found entry
    VmRSS after every entry expired − VmRSS before the flood         what did not come back

    (VmRSS full − VmRSS part-full) / (entries full − entries then)   the slope: without the pages the
                                                                     first flood faults in once

Everything the gateway keeps per entry is counted: the found set, its deadline heaps, the retained
`found/...` events in the socket broker and, in the second measurement (`mqtt=True`), what the MQTT
bridge keeps of them and Home Assistant state, with `[mqtt]` (discovery on) bridging to a Mosquitto on a
unix socket (gateway_process.py's `idle_mosquitto`). No socket client subscribes, so no outgoing queue holds
the flood's lines. Run inside `scripts/private-air`
(process.py calls `measure`; by hand: `scripts/private-air python tools/bench/found_memory.py
--inner BINARY WORK OUT`).
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

FLOODER = os.path.join(HERE, "..", "flood", "beacons.py")


def anonymous_kb(pid):
    """RssAnon: the heap, stacks and written private pages, without the file pages code faults in."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return None


def measure(binary, work, key, limit=4096, lost_after=30, batch=2048, mqtt=False):
    from gateway_process import config, gateway, idle_mosquitto, memory, rss_by_mapping, stop, wait_path
    from line_client import LineClient
    body = ('[[subscription]]\nnamespace = "flood"\ntype = "*"\nmediums = ["ble"]\ninclude = ["ibeacon"]\n'
            f"lost_after_s = {lost_after}\n[limits]\nfound = {limit}\n")
    procs, paho = [], []
    try:
        if mqtt:
            _, paho = idle_mosquitto(work, procs)
            body += f'[mqtt]\nurl = "unix://{work}/mq.sock"\nclient_id = "found-memory"\ndiscovery = true\n'
        name = "fmq" if mqtt else "fm"   # its own socket: the first run's may still be there
        path = config(work, name, key, lost_after, body)
        gw = gateway(binary, path, procs)
        wait_path(f"{work}/{name}.sock", gw)
        client = LineClient(f"{work}/{name}.sock")

        def stats():
            # GET stats answers with one `$SYS/stats` line (no OK).
            with client.lock:
                before = len(client.lines)
                client.sock.sendall(b"GET stats\n")
                found = lambda: [t for _, t in client.lines[before:] if t.startswith("$SYS/stats ")]
                if not client.lock.wait_for(found, 60):
                    raise TimeoutError("no $SYS/stats line")
                return json.loads(found()[0].split(" ", 1)[1])

        def settled():
            # With [mqtt], the bridge has handed everything to Mosquitto (its queue is empty).
            s = stats()
            deadline = time.monotonic() + 60
            while mqtt and (not s["mqtt"]["connected"] or s["mqtt"]["queued"] > 0) and time.monotonic() < deadline:
                time.sleep(0.2)
                s = stats()
            return s

        time.sleep(2)   # started, scanning, first commands answered
        settled()
        before, anon_before = memory(gw.pid)["VmRSS"], anonymous_kb(gw.pid)
        sent, full_at, partial = 0, None, None
        # Fresh beacons in batches until the set is full: how many reports reach the scanner depends
        # on the machine's load, so the gateway's own count decides.
        while sent < 40 * batch:
            subprocess.run([sys.executable, FLOODER, "/tmp/bt-server-le", str(sent), str(batch)], check=True,
                           stdout=subprocess.DEVNULL)
            sent += batch
            s = settled()
            if s["found"] >= limit:
                full_at = time.monotonic()
                break
            if partial is None and s["found"] >= limit // 4:
                partial = {"found": s["found"], "rss_mb": memory(gw.pid)["VmRSS"], "rss_anon_kb": anonymous_kb(gw.pid)}
        if full_at is None:
            raise RuntimeError(f"found set never full: {sent} sent, {s}")
        full, anon_full = memory(gw.pid)["VmRSS"], anonymous_kb(gw.pid)
        full_stats, full_map = s, rss_by_mapping(gw.pid)
        # Every entry expires lost_after after its last sighting; the flood is over.
        deadline = time.monotonic() + lost_after + 30
        while stats()["found"] > 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"entries never expired: {stats()}")
            time.sleep(0.5)
        time.sleep(1)
        expired = memory(gw.pid)["VmRSS"]
        anon = {"before": anon_before, "full": anon_full, "expired": anonymous_kb(gw.pid)}
        if os.environ.get("NEARBY_FOUND_MEMORY_GDB_TRIM"):
            # By hand only: what glibc would hand back if asked (docs/footprint-found.md).
            subprocess.run(["gdb", "-p", str(gw.pid), "-batch", "-ex", "call (int) malloc_trim(0)"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            anon["after_gdb_malloc_trim"] = anonymous_kb(gw.pid)
        client.close()
        return {"limit": limit, "mqtt": mqtt, "partial": partial, "lost_after_s": lost_after, "sent": sent, "rss_before_mb": before, "rss_full_mb": full,
                "rss_expired_mb": expired, "found": full_stats["found"], "evicted": full_stats["found_evicted"],
                "per_entry_bytes": (full - before) * 1024 * 1024 / full_stats["found"],
                "rss_kb_by_mapping_full": full_map,
                "rss_anon_kb": anon}
    finally:
        for c in paho:
            c.loop_stop()
            c.disconnect()
        for p in reversed(procs):
            stop(p)


def rows(d):
    """The process section's rows of this measurement (`d` is the section's result)."""
    from report import row
    out = []
    for name, label in (("found_memory", ""), ("found_memory_mqtt", ", with [mqtt] and Home Assistant discovery")):
        fm = d.get(name)
        if not fm:
            continue
        growth = fm["rss_full_mb"] - fm["rss_before_mb"]
        out.append(row("process", f"memory per found entry at limits.found = {fm['limit']:,} (distinct iBeacons){label}",
                       fm["per_entry_bytes"], 1024, "target ≤ 1 KB", "B", "lower",
                       "(RSS with the set full − RSS before the flood) / entries; found set, retained events, indexes"
                       + (", what the MQTT bridge keeps of them and Home Assistant state" if fm.get("mqtt") else "")))
        anon = fm.get("rss_anon_kb", {})
        if anon.get("full") is not None and anon.get("before") is not None:
            out.append(row("process", f"the same{label}, anonymous memory only (RssAnon)",
                           (anon["full"] - anon["before"]) * 1024 / fm["found"], 1024, "target ≤ 1 KB", "B", "lower",
                           "without the code pages the flood faults in once (file pages, not per entry)"))
        part = fm.get("partial")
        if part and fm["found"] > part["found"]:
            out.append(row("process", f"the same{label}, slope of VmRSS from {part['found']:,} to {fm['found']:,} entries",
                           (fm["rss_full_mb"] - part["rss_mb"]) * 1024 * 1024 / (fm["found"] - part["found"]), 1024,
                           "target ≤ 1 KB", "B", "lower",
                           "what each further entry adds once the first flood has faulted in code pages and grown the queues"))
        out.append(row("process", f"RSS after every entry expired − RSS before the flood{label} (lost_after_s = {fm['lost_after_s']})",
                       fm["rss_expired_mb"] - fm["rss_before_mb"], growth, "RSS growth with the set full", "MB", "lower",
                       "what the expiry did not give back"))
    return out


def details(d):
    out = ""
    for name, label in (("found_memory", "Found-set flood"), ("found_memory_mqtt", "The same with [mqtt]")):
        fm = d.get(name)
        if not fm:
            out += f" {label}: not measured: {d.get(name + '_error', 'absent from this run')}."
            continue
        anon = fm.get("rss_anon_kb", {})
        out += (f" {label}: {fm['sent']:,} distinct iBeacons sent until {fm['found']:,} were found ({fm['evicted']:,} evicted); "
                f"VmRSS {fm['rss_before_mb']:.1f} → {fm['rss_full_mb']:.1f} → {fm['rss_expired_mb']:.1f} MB (before, full, all expired), "
                f"RssAnon {anon.get('before')} → {anon.get('full')} → {anon.get('expired')} kB.")
    return out


def inner(binary, work, out, quick):
    result = {"found_memory": measure(binary, work, f"bench-found-memory-{os.getpid()}")}
    result["found_memory_mqtt"] = measure(binary, work, f"bench-found-memory-mqtt-{os.getpid()}", mqtt=True)
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    from gateway_process import inner_main
    inner_main("--inner", inner, __doc__)
