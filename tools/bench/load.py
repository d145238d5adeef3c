"""What an advert costs the whole process (issue 38, item 1): `scripts/bench --only load`.

Four readers side by side, each on its own scripted H4 controller (tools/bench/home_mix.py:
the home mix, 300 known iBeacons repeating with RSSI stepping through −60…−66 dBm, new iBeacons, our
frames, phone noise), all on this machine's one Mosquitto (tools/bench/mosquitto.conf, a UNIX socket
in the run's private folder, started here and stopped after):
- `ours`: `nearby-gateway run`, the binary the .deb ships, log level warning, one subscription
  (namespace `home`, every type, include = ["ibeacon"], lost_after_s = 600 so that no known device is
  lost during the run), one socket client subscribed to `#`;
- `ours_mqtt`: the same with `[mqtt]` (discovery on: Home Assistant configs) bridging to Mosquitto;
- `floor`: tools/bench/load_floor.c, one blocking read() at a time, walking the AD structures;
- `python`: tools/bench/load_peer.py, bluetooth-data-tools parsing each advert and paho-mqtt
  publishing one JSON message per advert to the same Mosquitto (what Theengs Gateway does).

All four connected and scanning, IDLE_S seconds of nothing (idle CPU, RSS, all at once); each one's
warm-up (every known device once; ours waits for their 300 found events); then, rate by rate, ROUNDS
rounds of one WINDOW_S window per reader (the others idle meanwhile; each round in a rotated order),
each window plus DRAIN_S for the last adverts to be handled; the row is each reader's round with the
least CPU per advert, the other rounds are in the JSON and the notes. Per window (tools/bench/
proc_sample.py): CPU (the tasks' schedstat run time, ns; /proc/PID/stat's 10 ms ticks in the
notes), context switches of every thread, the most threads, the load average. Per advert =
over the window / adverts written in it; nothing is subtracted (idle is its own row).
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import home_mix  # noqa: E402
import mqtt  # noqa: E402  (its Mosquitto: unbounded queues, UNIX socket)
import process  # noqa: E402
import proc_sample  # noqa: E402
from line_client import LineClient  # noqa: E402

RATES = [10, 100, 360, 2000]
# The found event's cost: windows of one kind of advert alone at this rate (home_mix.play_only):
# arrivals (each a new iBeacon, a found event) against repeats that change nothing visible.
FOUND_RATE = 100
KINDS = ["repeats", "arrivals"]
SUBJECTS = ["ours", "ours_mqtt", "floor", "python"]
LOST_AFTER = 600
WINDOW_S, ROUNDS, IDLE_S = 10, 2, 8
DRAIN_S = 0.3


def run(binary, top, work, quick):
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o1777)   # Mosquitto, started as root, runs as its own user and makes its socket here
    floor = os.path.join(work, "load_floor")
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", floor, os.path.join(HERE, "load_floor.c")], check=True)
    window, idle, rounds = (3, 3, 1) if quick else (WINDOW_S, IDLE_S, ROUNDS)
    result = {"rates": RATES, "found_rate": FOUND_RATE, "window_s": window, "idle_s": idle, "rounds": rounds, "known": home_mix.KNOWN,
              "subjects": {}, "load_before": os.getloadavg(), "built_from": built_from(top)}
    mq, msock = mqtt.broker(work)
    readers = []
    try:
        for name in SUBJECTS:
            readers.append(Reader(name, binary, floor, work, msock))
        for reader in readers:
            reader.controller.wait_scanning()
        time.sleep(2)   # the first commands answered, the start-up's threads come and gone
        windows = [proc_sample.Window(reader.proc.pid) for reader in readers]
        time.sleep(idle)   # all four idle at once: nothing on any air
        for reader, w in zip(readers, windows):
            reader.out["idle"] = w.close()
        for reader in readers:
            reader.warm_up()
        # Each rate: the readers' windows one after the other, in a rotated order each round, so that
        # the machine's load drifts over all of them alike; the least disturbed round is the row.
        for rate in RATES:
            for n in range(rounds):
                for reader in readers[n % len(readers):] + readers[:n % len(readers)]:
                    reader.window(rate, window)
        for n in range(rounds):
            for reader in readers[n % len(readers):] + readers[:n % len(readers)]:
                for kind in KINDS:
                    reader.window(FOUND_RATE, window, kind)
    finally:
        for reader in readers:
            reader.stop()
        process.stop(mq)
    for reader in readers:
        result["subjects"][reader.name] = reader.out
    result["load_after"] = os.getloadavg()
    return result


def built_from(top):
    """The checkout's commit, and the last one that changed what the binary is built from."""
    git = lambda *args: subprocess.run(["git", "-C", top, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       text=True).stdout.strip()
    dirty = " (uncommitted changes)" if git("status", "--porcelain", "--", "Sources", "Package.swift") else ""
    last = git("log", "-1", "--format=%h", "--", "Sources", "Package.swift")
    return f"{git('rev-parse', '--short', 'HEAD')}, Sources last changed in {last}{dirty}"


def gateway_config(work, name, key, msock):
    body = (f'[[subscription]]\nnamespace = "{home_mix.NAMESPACE}"\ntype = "*"\nmediums = ["ble"]\n'
            f'include = ["ibeacon"]\nlost_after_s = {LOST_AFTER}\n')
    if name == "ours_mqtt":
        body += f'[mqtt]\nurl = "unix://{msock}"\nclient_id = "load-bench"\ndiscovery = true\n'
    conf = process.config(work, name, key, LOST_AFTER, body)
    with open(conf) as f:
        text = f.read().replace('device = "h4:/tmp/bt-server-le"', f'device = "h4:{work}/{name}-h4.sock"')
    with open(conf, "w") as f:
        f.write(text)
    return conf


def stats(client):
    """The gateway's `GET stats` (one `$SYS/stats` line, no OK)."""
    with client.lock:
        before = len(client.lines)
        client.sock.sendall(b"GET stats\n")
        found = lambda: [t for _, t in client.lines[before:] if t.startswith("$SYS/stats ")]
        if not client.lock.wait_for(found, 30):
            raise TimeoutError("no $SYS/stats line")
        return json.loads(found()[0].split(" ", 1)[1])


def events(client, t0, t1):
    """Event lines the `#` client got between the monotonic stamps, by topic level 1 (found, signal…)."""
    with client.lock:
        topics = [text.split(" ", 1)[0] for stamp, text in client.lines if t0 <= stamp <= t1]
    out = {}
    for topic in topics:
        if not topic.startswith("$SYS"):
            out[topic.split("/", 1)[0]] = out.get(topic.split("/", 1)[0], 0) + 1
    return out


def wait_found(client, count, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = stats(client)
        if s["found"] >= count:
            return s["found"]
        time.sleep(0.2)
    raise RuntimeError(f"warm-up: {stats(client)['found']} found of {count}")


class Reader:
    """One reader of the home mix on its own scripted controller: started at once, measured window by window."""

    def __init__(self, name, binary, floor, work, msock):
        key = f"bench-load-{os.getpid()}"
        self.name, self.client, self.procs, self.proc = name, None, [], None
        self.out = {"windows": {}, "rounds": {}}
        self.controller = home_mix.HomeMix(os.path.join(work, f"{name}-h4.sock"), key)
        try:
            self._start(name, binary, floor, work, key, msock)
        except BaseException:
            self.stop()
            raise

    def _start(self, name, binary, floor, work, key, msock):
        if name.startswith("ours"):
            self.proc = process.gateway(binary, gateway_config(work, name, key, msock), self.procs)
            process.wait_path(f"{work}/{name}.sock", self.proc)
            self.client = LineClient(f"{work}/{name}.sock")
            if not self.client.request("SUB #").startswith("OK"):
                raise RuntimeError("SUB # refused")
        else:
            cmd = ([floor, self.controller.path] if name == "floor"
                   else [sys.executable, os.path.join(HERE, "load_peer.py"), self.controller.path, msock])
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            self.procs.append(self.proc)

    def warm_up(self):
        self.controller.warm_up()
        if self.client:
            self.out["warm_found"] = wait_found(self.client, home_mix.KNOWN)
            if self.name == "ours_mqtt":
                settle_mqtt(self.client)
        else:
            time.sleep(1)

    def window(self, rate, seconds, kind=None):
        """One measured window of the home mix at `rate`, or of one `kind` alone (KINDS)."""
        before = stats(self.client) if self.client else None
        t0 = time.monotonic_ns()
        w = proc_sample.Window(self.proc.pid)
        sent = self.controller.play_only(kind, rate, seconds) if kind else self.controller.play(rate, seconds)
        time.sleep(DRAIN_S)
        r = w.close()
        r.update(rate=rate, sent=sent)
        if self.client:
            r["events"] = events(self.client, t0, time.monotonic_ns())
            after = stats(self.client)
            r["adverts_seen"] = after["adverts_seen"] - before["adverts_seen"]
            r["radio_dropped"] = after["radio_dropped"]
            if "mqtt" in after:
                r["mqtt"] = after["mqtt"]
                r["mqtt_published"] = after["mqtt"]["published"] - before["mqtt"]["published"]
        key = f"{kind}@{rate}" if kind else str(rate)
        self.out["rounds"].setdefault(key, []).append(r)
        # The row: the round with the least CPU per advert (the least disturbed by the machine).
        self.out["windows"][key] = min(self.out["rounds"][key], key=lambda x: per_advert(x)[0])
        print(f"   load: {self.name} {key}/s: {summary(r)}", file=sys.stderr, flush=True)

    def stop(self):
        if self.client:
            self.client.close()
        for p in self.procs:
            process.stop(p)
        self.controller.stop()
        if self.proc is not None and self.proc.stdout:
            self.out["counts"] = json.loads(self.proc.stdout.read() or "{}")


def settle_mqtt(client, timeout=30):
    """With [mqtt], the warm-up's messages handed to Mosquitto before the first window."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = stats(client)["mqtt"]
        if m["connected"] and m["queued"] == 0:
            return
        time.sleep(0.2)
    raise RuntimeError("the MQTT bridge never emptied its queue")


def cpu_s(r):
    """The window's CPU seconds: the tasks' schedstat run time (ns). /proc/PID/stat's utime + stime
    (10 ms ticks: ±67 µs per advert over 150 adverts) is in each row's note; a thread that exited in
    the window (`exited`) is counted up to its last 0.1 s sample."""
    return r["schedstat_cpu_s"]


def per_advert(r):
    return cpu_s(r) / max(1, r["sent"]) * 1e6, r["switches"] / max(1, r["sent"])


def summary(r):
    us, cs = per_advert(r)
    return (f"{r['sent']} adverts, {100 * cpu_s(r) / r['wall_s']:.2f} % of a core, {us:.1f} µs and {cs:.2f} "
            f"switches per advert, {r['threads']} threads, load {r['load1']:.2f}")


def note(r, idle):
    extra = "" if "adverts_seen" not in r else f"; adverts_seen {r['adverts_seen']:,}"
    extra += "" if "mqtt_published" not in r else f"; MQTT messages {r['mqtt_published']:,}"
    ev = ", ".join(f"{k} {v:,}" for k, v in sorted(r.get("events", {}).items()))
    above = 100 * (cpu_s(r) / r["wall_s"] - cpu_s(idle) / idle["wall_s"])
    return (f"{100 * cpu_s(r) / r['wall_s']:.2f} % of a core ({above:.2f} above idle); {r['threads']} threads; "
            f"{r['sent']:,} adverts{extra}{'; events ' + ev if ev else ''}; "
            f"/proc/PID/stat {r['stat_cpu_s'] * 1e6 / max(1, r['sent']):.0f} µs/advert (10 ms ticks)"
            f"{'; threads exited: ' + str(r['exited']) if r['exited'] else ''}; load {r['load1']:.2f}")


PEERS = {"floor": "bare C reader (load_floor.c), same H4 stream",
         "python": "bluetooth-data-tools + paho, one JSON per advert"}
PAIRS = [("ours", "floor", "no [mqtt]"), ("ours_mqtt", "python", "[mqtt] + HA discovery")]
OTHER = {"floor": "python", "python": "floor"}   # the note's second ratio


def spread(mine, peer, rate):
    """Every round's CPU per advert, ours / the peer's (the row shows the least of each)."""
    each = lambda subject: ", ".join(f"{per_advert(r)[0]:.3g}" for r in subject.get("rounds", {}).get(str(rate), []))
    return f"; rounds (µs): {each(mine)} / {each(peer)}" if mine.get("rounds") else ""


def by_thread(r):
    """Switches and µs per advert of each thread (by name; Dispatch's workers share one), busiest first."""
    if "by_thread" not in r:
        return ""
    n = max(1, r["sent"])
    parts = sorted(r["by_thread"].items(), key=lambda kv: -kv[1][0])
    return "; per thread: " + ", ".join(f"{name} {s / n:.2f} ({cpu * 1e6 / n:.0f} µs)" for name, (s, cpu) in parts if s)


def rows(d):
    """The section's rows (report.row imported here: report imports no bench module)."""
    from report import row
    s, out = d["subjects"], []
    for mine, peer, label in PAIRS:
        if mine not in s or peer not in s:
            continue
        a, b = s[mine], s[peer]
        out.append(row("load", f"idle CPU, {label}", 100 * cpu_s(a["idle"]) / a["idle"]["wall_s"],
                       100 * cpu_s(b["idle"]) / b["idle"]["wall_s"], PEERS[peer], "% of a core", "lower",
                       f"{d['idle_s']} s, scanning, nothing on the air; {a['idle']['threads']} threads, "
                       f"{a['idle'].get('threads_end', '?')} at the end ({a['idle']['exited']} exited: Dispatch's pool "
                       f"workers retire after a few idle seconds) against {b['idle']['threads']}; target ≤ 0.1 %; "
                       f"load {a['idle']['load1']:.2f}"))
        out.append(row("load", f"idle RSS, {label}", a["idle"]["rss_mb"], b["idle"]["rss_mb"], PEERS[peer], "MB", "lower",
                       "target ≤ 8.3 MB (Mosquitto's)"))
    for rate in d["rates"]:
        for mine, peer, label in PAIRS:
            if mine not in s or peer not in s:
                continue
            a, b = s[mine]["windows"][str(rate)], s[peer]["windows"][str(rate)]
            (aus, acs), (bus, bcs) = per_advert(a), per_advert(b)
            other = s.get(OTHER[peer], {}).get("windows", {}).get(str(rate))
            second = "" if not other else f"; ours ÷ {OTHER[peer]}: {aus / max(1e-9, per_advert(other)[0]):.3g}"
            second += spread(s[mine], s[peer], rate)
            out.append(row("load", f"CPU per advert at {rate:,}/s, home mix, {label}", aus, bus, PEERS[peer], "µs", "lower",
                           note(a, s[mine]["idle"]) + f". Peer: {100 * cpu_s(b) / b['wall_s']:.2f} % of a core, "
                           f"{b['threads']} threads{second}"))
            out.append(row("load", f"context switches per advert at {rate:,}/s, {label}", acs, bcs, PEERS[peer],
                           "switches", "lower", "every thread's voluntary + nonvoluntary; target ≤ 1.2" + by_thread(a)))
    return out + found_rows(d, row)


def found_rows(d, row):
    """A repeat that changes nothing visible, and what a found event adds to an advert (arrivals −
    repeats, each at FOUND_RATE): ours with [mqtt] against what the Python peer pays per advert (each
    one a published message)."""
    s, rate, out = d["subjects"], d.get("found_rate"), []
    if rate is None:
        return out
    w = lambda name, kind: s.get(name, {}).get("windows", {}).get(f"{kind}@{rate}")
    if w("ours", "repeats") and w("floor", "repeats"):
        a, b = w("ours", "repeats"), w("floor", "repeats")
        out.append(row("load", f"CPU per repeat advert that changes nothing visible at {rate:,}/s, no [mqtt]",
                       per_advert(a)[0], per_advert(b)[0], PEERS["floor"], "µs", "lower",
                       f"the known iBeacons at one RSSI; target ≤ 10 µs; {note(a, s['ours']['idle'])}"))
        out.append(row("load", f"context switches per repeat advert at {rate:,}/s, no [mqtt]", per_advert(a)[1],
                       per_advert(b)[1], PEERS["floor"], "switches", "lower", "target ≤ 1.2" + by_thread(a)))
    for mine, label in (("ours", "no [mqtt]"), ("ours_mqtt", "[mqtt] + HA discovery")):
        arrivals, repeats, peer = w(mine, "arrivals"), w(mine, "repeats"), w("python", "arrivals")
        if not (arrivals and repeats and peer):
            continue
        cost = per_advert(arrivals)[0] - per_advert(repeats)[0]
        out.append(row("load", f"found event's cost at {rate:,} arrivals/s, {label}", cost, per_advert(peer)[0],
                       PEERS["python"], "µs", "lower",
                       f"CPU per arriving iBeacon's advert − per repeat advert ({per_advert(arrivals)[0]:.1f} − "
                       f"{per_advert(repeats)[0]:.1f} µs); the peer: its CPU per advert of the same arrivals; "
                       f"target ≤ 50 µs; {note(arrivals, s[mine]['idle'])}"))
    return out


def details(d):
    s = d["subjects"]
    counts = "; ".join(f"{n} {s[n]['counts'].get('reports', 0):,}" for n in ("floor", "python")
                       if s.get(n, {}).get("counts"))
    drops = "; ".join(f"{n} {sum(s[n]['windows'][str(d['rates'][-1])].get('radio_dropped', {}).values())}"
                      for n in ("ours", "ours_mqtt") if n in s)
    built = f" The gateway built from {d['built_from']}." if d.get("built_from") else ""
    return (f"**Load run.** {d['known']} known iBeacons (each found in the warm-up), the home mix "
            f"(tools/bench/home_mix.py) at {', '.join(f'{r:,}' for r in d['rates'])} adverts/s, {d.get('rounds', 1)} "
            f"round(s) of {d['window_s']} s per reader (+{DRAIN_S} s drain), idle {d['idle_s']} s; load average "
            f"{d['load_before'][0]:.2f} before, {d['load_after'][0]:.2f} after.{built} Reports the peers handled in all: "
            f"{counts}. HCI input our gateway dropped over the run (`radio_dropped`, every reason): {drops}.")


if __name__ == "__main__":
    print(__doc__)
