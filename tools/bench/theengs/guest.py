#!/usr/bin/env python3
"""Inside the real-kernel guest (tools/system-test/boot): one Mosquitto, then each gateway in turn on
a controller of its own from air.py on /dev/vhci, fed the same mix at each rate; a paho subscriber
stamps every message (CLOCK_MONOTONIC, the clock air.py stamps its writes with).

  guest.py --gateway BIN --theengs-python PY --rates 100,1000,5000 --seconds S --devices N --out JSON

Ours runs alone (no bluetoothd: it needs none, it uses its raw HCI socket); Theengs Gateway runs with
dbus-daemon and bluetoothd, as it must. One after the other on the same kernel, so on the one vCPU
neither pays for the other.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt

from probes import QueueWatch, cpu_seconds, hci_events, rss_mb, vcpu_seconds, vcpu_speed

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = "/tmp/theengs-bench"


def log(text):
    print(f"theengs-bench: [{time.monotonic():.1f}] {text}", flush=True)


def wait_for(what, test, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if test():
            return
        time.sleep(0.2)
    raise RuntimeError(f"timed out ({seconds} s) waiting for {what}")


def broker_listening():
    try:
        socket.create_connection(("127.0.0.1", 1883), timeout=1).close()
        return True
    except OSError:
        return False


class Subscriber:
    """Every message on the broker, stamped on receipt."""

    def __init__(self):
        self.lock = threading.Lock()
        self.messages = []
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-subscriber")
        self.client.on_message = self._message
        self.client.on_connect = lambda c, u, f, r, p: c.subscribe("#")
        self.client.connect("127.0.0.1", 1883)
        self.client.loop_start()

    def _message(self, client, userdata, message):
        now = time.monotonic_ns()
        with self.lock:
            self.messages.append((now, message.topic, message.payload))

    def take(self):
        with self.lock:
            taken, self.messages = self.messages, []
        return taken


class CSubscriber:
    """A second subscriber on `#`, in C (mosquitto_sub), stamping each message with CLOCK_REALTIME in
    nanoseconds: on one emulated vCPU a Python subscriber may take longer to read a message than a
    gateway takes to send it, and its stamps would then measure itself. The stamps are made monotonic
    with the offset between the two clocks read here."""

    def __init__(self):
        self.path = f"{WORK}/c-subscriber.txt"
        self.offset = time.time_ns() - time.monotonic_ns()
        self.process = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-t", "#", "-i", "bench-c-subscriber",
                                         "-F", "%U %t %p"], stdout=open(self.path, "w"), stderr=subprocess.STDOUT)
        self.read_at = 0

    def take(self):
        with open(self.path, "rb") as f:
            f.seek(self.read_at)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.read_at += end
        out = []
        for line in data[:end].decode("utf-8", "replace").splitlines():
            stamp, _, rest = line.partition(" ")
            topic, _, payload = rest.partition(" ")
            seconds, _, nanos = stamp.partition(".")
            try:
                t = int(seconds) * 1_000_000_000 + int(nanos.ljust(9, "0")[:9]) - self.offset
            except ValueError:
                continue
            out.append((t, topic, payload.encode()))
        return out


def seq_of(side, topic, payload):
    """The advert a message is about (its sequence number), or None for other messages."""
    if side == "ours":
        parts = topic.split("/")
        if len(parts) < 2 or parts[1] != "found" or not payload:
            return None
        if parts[2] == "ibeacon" and len(parts) == 6:
            return (int(parts[4]) << 16) | int(parts[5])
        if parts[2] == "eddystone" and len(parts) == 5:
            return int(parts[4], 16)
        return None
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    if data.get("model_id") == "IBEACON":
        return (int(data["major"]) << 16) | int(data["minor"])
    servicedata = data.get("servicedata", "")
    if data.get("servicedatauuid") == "feaa" and servicedata.startswith("00"):
        return int(servicedata[24:36], 16)
    return None


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def control(line):
    with open(f"{WORK}/air.ctl", "w") as f:
        f.write(line + "\n")


def start_air(side, devices, procs):
    for name in ("air.ctl", "air.index"):
        if os.path.exists(f"{WORK}/{name}"):
            os.remove(f"{WORK}/{name}")
    # At nice -10: the air stands for a controller, which is hardware and never waits for the CPU the
    # gateway it feeds is using (at nice 0 it missed the kernel's 2 s command timeout).
    air = subprocess.Popen(["nice", "-n", "-10", sys.executable, os.path.join(HERE, "air.py"), "--control", f"{WORK}/air.ctl",
                            "--index-file", f"{WORK}/air.index", "--devices", str(devices)],
                           stdout=open(f"{WORK}/air-{side}.log", "w"), stderr=subprocess.STDOUT)
    procs.append(air)
    # Python's start under TCG, from the host's root over 9p, took over 60 s on a loaded host.
    wait_for("the air's controller", lambda: os.path.exists(f"{WORK}/air.index"), 300)
    hci = "hci" + open(f"{WORK}/air.index").read().strip()
    wait_for(f"{hci} in sysfs", lambda: os.path.exists(f"/sys/class/bluetooth/{hci}"), 60)
    return air, hci


def scanning(side):
    return lambda: "scanning on" in open(f"{WORK}/air-{side}.log").read()


def our_gateway(binary, hci, procs):
    os.makedirs(f"{WORK}/ours", exist_ok=True)
    config = f"{WORK}/ours/gateway.toml"
    with open(config, "w") as f:
        f.write(f'''api_key   = "bench-shared-key"
board     = "sim"
log_level = "warning"

[radio]
device       = "{hci}"
exclusive    = false
lost_after_s = 3

[socket]
path = "{WORK}/ours/gateway.sock"

[state]
path = "{WORK}/ours/state.json"
defaults = {{ background_mode = true, permission = "granted", power = "active" }}

[[subscription]]
namespace    = "bench"
type         = "*"
mediums      = ["ble"]
mode         = "scan"
include      = ["ibeacon", "eddystone-uid"]

[mqtt]
url       = "mqtt://127.0.0.1:1883"
client_id = "bench-ours"
prefix    = "ours"
discovery = false
''')
    gw = subprocess.Popen([binary, "run", "--config", config], stdout=open(f"{WORK}/ours/gateway.log", "w"),
                          stderr=subprocess.STDOUT)
    procs.append(gw)
    return [gw.pid]


def theengs_gateway(python, hci, procs):
    os.makedirs("/run/dbus", exist_ok=True)
    dbus = subprocess.Popen(["dbus-daemon", "--system", "--nofork", "--nopidfile"],
                            stdout=open(f"{WORK}/dbus.log", "w"), stderr=subprocess.STDOUT)
    procs.append(dbus)
    wait_for("the system bus", lambda: os.path.exists("/run/dbus/system_bus_socket"), 60)
    bluetoothd = subprocess.Popen(["/usr/libexec/bluetooth/bluetoothd", "-n"],
                                  stdout=open(f"{WORK}/bluetoothd.log", "w"), stderr=subprocess.STDOUT)
    procs.append(bluetoothd)
    # Theengs Gateway's defaults but: scan without its 5 s pauses (ble_time_between_scans 0, one long
    # scan), no Home Assistant discovery and no presence topic (ours has discovery off too), every
    # advert published (publish_all, its default).
    gw = subprocess.Popen([python, "-m", "TheengsGateway", "-c", f"{WORK}/theengsgw.conf", "-H", "127.0.0.1",
                           "-P", "1883", "-a", hci, "-pt", "theengs", "-D", "0", "-pr", "0", "-pa", "1",
                           "-sd", "100000", "-tb", "0", "-ll", "WARNING"],
                          stdout=open(f"{WORK}/theengs.log", "w"), stderr=subprocess.STDOUT)
    procs.append(gw)
    return [gw.pid, bluetoothd.pid]


def our_stats():
    """Our gateway's `GET stats` (its drops, evictions, queue), for the run's details; None if it
    does not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(f"{WORK}/ours/gateway.sock")
            s.sendall(b"GET stats\n")
            data = b""
            while b"$SYS/stats " not in data or not data.split(b"$SYS/stats ", 1)[1].count(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    return None
                data += chunk
            return json.loads(data.split(b"$SYS/stats ", 1)[1].split(b"\n", 1)[0])
    except (OSError, ValueError):
        return None


def latencies_of(side, messages, stamps):
    """Per advert, the first message about it: latency in ms; and the count of other messages."""
    latencies, seen, other = [], set(), 0
    for t, topic, payload in messages:
        seq = seq_of(side, topic, payload)
        if seq in stamps and seq not in seen:
            seen.add(seq)
            latencies.append((t - stamps[seq]) / 1e6)
        elif seq is None:
            other += 1
    return latencies, seen, other


def measure(side, pids, subscriber, c_subscriber, rates, seconds, others, hci):
    """`others`: the other processes on the vCPU (the air, the broker, the subscribers), by name: where
    the vCPU went is in each point, so a latency that is a wait for the CPU can be told as one."""
    results = []
    for rate in rates:
        out = f"{WORK}/sent-{side}-{rate}.json"
        subscriber.take()
        c_subscriber.take()
        others0 = {name: cpu_seconds(pid) for name, pid in others.items()}
        busy0, idle0 = vcpu_seconds()
        cpu0 = sum(cpu_seconds(p) for p in pids)
        events0 = hci_events(hci)
        queue = QueueWatch()
        t0 = time.monotonic()
        control(f"go {rate} {seconds} {out}")
        wait_for(f"the air at {rate}/s", lambda: queue.sample() or os.path.exists(out), seconds + 120)
        # Messages still on their way: wait until none arrived for 10 s (at most 120 s after the air's
        # end); a message later than that counts as lost.
        last = -1
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < 10 and time.monotonic() - t0 < seconds + 120:
            time.sleep(0.5)
            queue.sample()
            n = len(subscriber.messages)
            if n != last:
                last, quiet_since = n, time.monotonic()
        wall = time.monotonic() - t0
        cpu = (sum(cpu_seconds(p) for p in pids) - cpu0) / wall
        busy1, idle1 = vcpu_seconds()
        vcpu = {name: (cpu_seconds(pid) - others0[name]) / wall for name, pid in others.items()}
        vcpu.update({"gateway": cpu, "busy": (busy1 - busy0) / wall, "idle": (idle1 - idle0) / wall})
        rss = sum(rss_mb(p) for p in pids)
        sent = json.load(open(out))
        stamps = {seq: t for seq, kind, t in sent["sent"] if kind in ("ibeacon", "eddystone")}
        latencies, seen, other = latencies_of(side, subscriber.take(), stamps)
        c_latencies, c_seen, _ = latencies_of(side, c_subscriber.take(), stamps)
        point = {"rate": rate, "sent": len(sent["sent"]), "send_seconds": sent["seconds"],
                 "reached": len(sent["sent"]) / sent["seconds"], "expected": len(stamps), "received": len(seen),
                 "lost": len(stamps) - len(seen), "other_messages": other, "window_s": wall,
                 "cpu": cpu, "rss_mb": rss, "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99),
                 "c_received": len(c_seen), "c_p50_ms": percentile(c_latencies, 50),
                 "c_p99_ms": percentile(c_latencies, 99), "vcpu": vcpu,
                 "hci_events": None if events0 is None else (hci_events(hci) or 0) - events0,
                 "hci_socket_max_bytes": queue.most}
        if side == "ours":
            point["gateway_stats"] = our_stats()
        log(f"{side} {rate}/s: {json.dumps(point)}")
        results.append(point)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gateway", required=True)
    ap.add_argument("--theengs-python", required=True)
    ap.add_argument("--rates", default="100,1000,5000")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--devices", type=int, default=100)
    ap.add_argument("--sides", default="ours,theengs")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    os.makedirs(WORK, exist_ok=True)
    subprocess.run(["modprobe", "hci_vhci"], check=True)
    with open(f"{WORK}/mosquitto.conf", "w") as f:
        f.write("listener 1883 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n"
                "max_queued_messages 1000000\n")
    broker = subprocess.Popen(["mosquitto", "-c", f"{WORK}/mosquitto.conf"],
                              stdout=open(f"{WORK}/mosquitto.log", "w"), stderr=subprocess.STDOUT)
    result = {"rates": rates, "seconds": args.seconds, "devices": args.devices, "sides": {},
              "kernel": os.uname().release, "cpus": os.cpu_count()}
    c_subscriber = None
    # Before anything else runs: the vCPU alone.
    result["sysbench_cpu_events_per_s"] = vcpu_speed()
    log(f"sysbench cpu (1 thread): {result['sysbench_cpu_events_per_s']} events/s")
    try:
        wait_for("Mosquitto listening on 127.0.0.1:1883", broker_listening, 60)
        subscriber = Subscriber()
        c_subscriber = CSubscriber()
        for side in args.sides.split(","):
            procs = []
            try:
                log(f"{side}: starting")
                air, hci = start_air(side, args.devices, procs)
                others = {"air": air.pid, "broker": broker.pid, "c_subscriber": c_subscriber.process.pid,
                          "driver_and_paho_subscriber": os.getpid()}
                if side == "ours":
                    # Nobody powers the controller but bluetoothd, which ours does without.
                    subprocess.run(["hciconfig", hci, "up"], check=True)
                    pids = our_gateway(args.gateway, hci, procs)
                else:
                    pids = theengs_gateway(args.theengs_python, hci, procs)
                wait_for(f"{side} scanning on {hci}", scanning(side), 300)
                # Warm-up: a trickle until the first message through the broker (everything started).
                subscriber.take()
                control(f"go 10 15 {WORK}/warmup-{side}.json")
                wait_for(f"{side}'s first message", lambda: any(
                    seq_of(side, t, p) is not None for _, t, p in list(subscriber.messages)), 300)
                wait_for("the warm-up's end", lambda: os.path.exists(f"{WORK}/warmup-{side}.json"), 300)
                time.sleep(3)
                log(f"{side}: warm; measuring")
                result["sides"][side] = {"points": measure(side, pids, subscriber, c_subscriber, rates, args.seconds, others,
                                                           hci)}
            except Exception as error:
                result["sides"][side] = {"error": f"{type(error).__name__}: {error}"}
                log(f"{side} failed: {error}")
                for name in ("air-" + side + ".log", "theengs.log", "bluetoothd.log", "ours/gateway.log"):
                    path = f"{WORK}/{name}"
                    if os.path.exists(path):
                        log(f"-- {name}:\n" + "".join(open(path).readlines()[-20:]))
            finally:
                for p in reversed(procs):
                    p.terminate()
                    try:
                        p.wait(10)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
    finally:
        if c_subscriber:
            c_subscriber.process.terminate()
        broker.terminate()
        broker.wait()
        # The logs of the air, the daemons and both gateways, for the host to read (/results is 9p).
        subprocess.run(f"mkdir -p /results/logs && cp {WORK}/*.log {WORK}/*/*.log /results/logs/ 2>/dev/null",
                       shell=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0 if all("points" in s for s in result["sides"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
