"""The MQTT bridge (docs/mqtt.md) against paho-mqtt, the client Theengs Gateway publishes through.

Throughput, end to end: one Mosquitto on a UNIX socket (tools/bench/mosquitto.conf); one subscriber
(`nearby-gateway-bench fanout-clients --wire mqtt --clients 1`, the fan-out bench's MQTT reader) on
`<prefix>/found/bench/#` counts arrivals. Ours: `nearby-gateway-bench mqtt-bridge`, the gateway's real
MQTTBridge (libmosquitto on its own thread) fed N found events in-process, as the message manager
feeds it. Peer: tools/bench/mqtt_peer.py, paho-mqtt publishing the same N payloads (same topics,
retain flag, QoS, bytes). events/s = N / (GO → the subscriber's last arrival). Client CPU: ours, the
bridge's thread (the process minus the feeding thread); paho, its whole process (the publish calls
encode the packets, its loop thread writes them).

Added RSS/CPU, idle: inside scripts/private-air (a quiet btvirt of its own), two gateways with the
same config (one subscription, nothing on the air) except that one has [mqtt] and is connected to the
broker; VmRSS/VmHWM at the end and CPU over D seconds, both measured over the same window. Beside
them, an idle paho-mqtt client process connected to the same broker: the least a Python gateway's
MQTT side costs.
"""
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gateway_process import in_private_air, inner_main, stop  # noqa: E402

PREFIX = "bench"


def expect(proc, word, what):
    line = proc.stdout.readline().strip()
    if line != word:
        raise RuntimeError(f"{what}: expected {word}, got {line!r}")


def broker(work):
    from fanout import wait_for_socket
    sock = os.path.join(work, "mqtt.sock")
    conf = os.path.join(work, "mosquitto-mqtt.conf")
    with open(os.path.join(HERE, "mosquitto.conf")) as f:
        text = f.read().replace("@SOCKET@", sock)
    # A burst of QoS 0 messages to one subscriber must not be cut by the per-client queue (1000 by
    # default): we measure the publishers, not the broker's limits.
    text += "max_queued_messages 0\n"
    with open(conf, "w") as f:
        f.write(text)
    proc = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_socket(sock, proc)
    return proc, sock


def throughput(bench, python, sock, side, events, qos, payload, prefix):
    """One run; `prefix` is new for each run, so no retained message of an earlier one reaches the subscriber."""
    procs = []
    try:
        receiver = subprocess.Popen([bench, "fanout-clients", "--socket", sock, "--wire", "mqtt", "--clients", "1",
                                     "--events", str(events), "--filter", f"{prefix}/found/bench/#",
                                     "--deadline", "120"], stdout=subprocess.PIPE, text=True)
        procs.append(receiver)
        expect(receiver, "READY", "subscriber")
        if side == "ours":
            cmd = [bench, "mqtt-bridge", "--url", f"unix://{sock}", "--events", str(events), "--prefix", prefix,
                   "--qos", str(qos), "--payload-bytes", str(payload)]
        else:
            cmd = [python, os.path.join(HERE, "mqtt_peer.py"), sock, str(events), prefix, str(qos), str(payload)]
        publisher = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(publisher)
        expect(publisher, "READY", side)
        t0 = time.monotonic()
        publisher.stdin.write("GO\n")
        publisher.stdin.flush()
        expect(publisher, "PUBLISHED", side)
        received = json.loads(receiver.stdout.read())
        receiver.wait()
        # The receiver stops 2 s after its last event when some never come: its own clock says when
        # the last one arrived (seconds counts from its start, just before GO).
        wall = time.monotonic() - t0 - (2.0 if received["received"] < events else 0.0)
        publisher.stdin.write("DONE\n")
        publisher.stdin.flush()
        published = json.loads(publisher.stdout.read())
        publisher.wait()
        cpu = published["bridge_cpu_seconds"] if side == "ours" else published["cpu_seconds"]
        return {"events": events, "received": received["received"], "wall_seconds": wall,
                "events_per_s": received["received"] / wall, "client_cpu_seconds": cpu,
                "cpu_us_per_event": cpu / max(1, received["received"]) * 1e6,
                "publish_seconds": published["publish_seconds"], "dropped": published.get("dropped", 0),
                "p50_ms": received["p50_us"] / 1000, "p99_ms": received["p99_us"] / 1000}
    finally:
        for p in procs:
            stop(p)


def run(binary, bench, top, python, work, quick):
    if not shutil.which("mosquitto"):
        raise RuntimeError("mosquitto is not installed (scripts/bench installs it)")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o1777)   # mosquitto started as root drops to its own user and must create its socket here
    events = 2_000 if quick else 20_000
    qos, payload = 0, 256
    result = {"events": events, "qos": qos, "payload_bytes": payload, "runs": 1 if quick else 3}
    mq, sock = broker(work)
    try:
        # Alternated, best of `runs` each: the machine is shared, the best run is the least disturbed.
        ours, peer = [], []
        for n in range(result["runs"]):
            ours.append(throughput(bench, python, sock, "ours", events, qos, payload, f"{PREFIX}-ours-{n}"))
            peer.append(throughput(bench, python, sock, "paho", events, qos, payload, f"{PREFIX}-paho-{n}"))
        best = lambda runs: max(runs, key=lambda r: r["events_per_s"])
        result["ours"], result["paho"] = best(ours), best(peer)
        result["all_events_per_s"] = {"ours": [r["events_per_s"] for r in ours], "paho": [r["events_per_s"] for r in peer]}
    finally:
        stop(mq)
    result["idle"] = idle_outer(binary, top, python, quick)
    return result


def idle_outer(binary, top, python, quick):
    """Re-runs this file inside scripts/private-air for the idle gateways, reads its JSON."""
    return in_private_air(top, os.path.abspath(__file__), "--idle", binary, quick, python)


def idle_inner(binary, work, out, quick):
    from gateway_process import config, cpu_seconds, gateway, memory, subscription, wait_path
    seconds = 10 if quick else 60
    key = f"bench-mqtt-{os.getpid()}"
    procs = []
    try:
        mq, sock = broker(work)
        procs.append(mq)
        body = subscription("bench", 2)
        mqtt_section = f'[mqtt]\nurl = "unix://{sock}"\nclient_id = "bench-idle"\nprefix = "{PREFIX}"\n'
        # The same config but [mqtt]: one subscription, nothing on the air.
        plain = gateway(binary, config(work, "plain", key, 2, body), procs)
        bridged = gateway(binary, config(work, "bridged", key, 2, body + mqtt_section), procs)
        wait_path(f"{work}/plain.sock", plain)
        wait_path(f"{work}/bridged.sock", bridged)
        paho = subprocess.Popen([sys.executable, os.path.join(HERE, "mqtt_peer.py"), sock, "0", PREFIX, "0", "0", "--idle"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(paho)
        expect(paho, "READY", "idle paho client")
        connected = subprocess.run(["mosquitto_sub", "--unix", sock, "-t", f"{PREFIX}/status", "-C", "1", "-W", "10"],
                                   stdout=subprocess.PIPE, text=True).stdout.strip()
        if connected != "online":
            raise RuntimeError(f"the bridged gateway did not connect: {PREFIX}/status is {connected!r}")
        time.sleep(2)   # let start-up settle before the window opens
        pids = {"without": plain.pid, "with": bridged.pid, "paho": paho.pid}
        cpu0, t0 = {k: cpu_seconds(p) for k, p in pids.items()}, time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - t0
        result = {"seconds": seconds}
        for k, p in pids.items():
            result[k] = dict(memory(p), cpu=(cpu_seconds(p) - cpu0[k]) / wall)
    finally:
        for p in procs:
            stop(p)
    with open(out, "w") as f:
        json.dump(result, f)


def rows(d):
    from report import row
    o, p, i = d["ours"], d["paho"], d["idle"]
    peer = "paho-mqtt (Theengs Gateway's client)"
    label = f"{d['events']:,} found events, QoS {d['qos']}, {d['payload_bytes']} B"
    return [
        row("mqtt", f"events/s through the bridge to a subscriber ({label})", o["events_per_s"], p["events_per_s"], peer,
            "ev/s", "higher", f"best of {d['runs']}; same Mosquitto, same subscriber"),
        row("mqtt", "delivered", o["received"] / o["events"], p["received"] / p["events"], peer, "%", "higher"),
        row("mqtt", "client CPU per event (bridge thread vs paho process)", o["cpu_us_per_event"], p["cpu_us_per_event"],
            peer, "µs", "lower"),
        row("mqtt", f"idle RSS, gateway with [mqtt] connected ({i['seconds']} s)", i["with"]["VmRSS"], i["without"]["VmRSS"],
            "the same gateway without [mqtt]", "MB", "lower", f"added {i['with']['VmRSS'] - i['without']['VmRSS']:.2f} MB"),
        row("mqtt", "idle RSS added by [mqtt] (with − without)", i["with"]["VmRSS"] - i["without"]["VmRSS"],
            i["paho"]["VmRSS"], "an idle paho-mqtt client process", "MB", "lower"),
        row("mqtt", "idle CPU, gateway with [mqtt] connected (one core = 100 %)", i["with"]["cpu"], i["without"]["cpu"],
            "the same gateway without [mqtt]", "%", "lower", f"idle paho client {i['paho']['cpu'] * 100:.2f} %"),
    ]


def details(d):
    o, p, i = d["ours"], d["paho"], d["idle"]
    return (f"**MQTT bridge run.** {d['events']:,} found events on 100 retained topics, {d['payload_bytes']}-byte JSON, "
            f"QoS {d['qos']}, Mosquitto on a UNIX socket, one subscriber; {d['runs']} alternated runs per side, events/s "
            f"ours {[round(x) for x in d['all_events_per_s']['ours']]}, paho {[round(x) for x in d['all_events_per_s']['paho']]}. "
            f"Best ours: {o['received']:,} received in {o['wall_seconds']:.3f} s (fed in {o['publish_seconds']:.3f} s, "
            f"{o['dropped']} dropped), latency p50 {o['p50_ms']:.1f} ms / p99 {o['p99_ms']:.1f} ms. Best paho: "
            f"{p['received']:,} in {p['wall_seconds']:.3f} s (published in {p['publish_seconds']:.3f} s), p50 "
            f"{p['p50_ms']:.1f} ms / p99 {p['p99_ms']:.1f} ms. Idle ({i['seconds']} s, private air): without [mqtt] "
            f"VmRSS {i['without']['VmRSS']:.2f} MB, VmHWM {i['without']['VmHWM']:.2f} MB, CPU {i['without']['cpu'] * 100:.2f} %; "
            f"with [mqtt] VmRSS {i['with']['VmRSS']:.2f} MB, VmHWM {i['with']['VmHWM']:.2f} MB, CPU {i['with']['cpu'] * 100:.2f} %; "
            f"idle paho client VmRSS {i['paho']['VmRSS']:.2f} MB, CPU {i['paho']['cpu'] * 100:.2f} %.")


if __name__ == "__main__":
    inner_main("--idle", idle_inner, __doc__)
