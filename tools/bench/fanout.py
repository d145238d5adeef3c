"""Socket fan-out: our SocketBroker vs Mosquitto on a UNIX socket, same clients, same load.

Our side:  `nearby-gateway-bench fanout-server` (the real SocketBroker, events published in-process
           as the message manager does) + `nearby-gateway-bench fanout-clients --wire line` (100 connections).
Mosquitto: `mosquitto -c CONF` (listener on a UNIX socket) + `nearby-gateway-bench fanout-clients --wire mqtt`
           (100 MQTT 3.1.1 connections, QoS 0) + `nearby-gateway-bench mqtt-publish` (one MQTT connection).
Both publishers use the same pacer and the same JSON (CLOCK_MONOTONIC stamp first); both client
processes are the same Swift poll(2) loop, which stamps an event's arrival when its bytes are read.
Broker CPU, between GO and the end of the clients' run, divided by that wall time: for ours, the
server process's CPU minus its publishing thread's (clock_gettime; the broker's thread can't be
picked out in /proc, threads inherit their creator's name); for Mosquitto, utime+stime from /proc.
Memory: VmHWM (peak resident set) of the broker's process from /proc/PID/status, once with every
client subscribed just before GO and once after the clients' run, before the process is told to end;
for ours that process is `nearby-gateway-bench fanout-server` (SocketBroker plus the in-process publisher), not the
gateway, which this bench does not start.
"""
import json
import os
import shutil
import subprocess
import time

from report import row

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid, tid=None):
    path = f"/proc/{pid}/task/{tid}/stat" if tid else f"/proc/{pid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def status_kb(pid, field):
    """A `kB` field of /proc/PID/status (VmHWM, VmRSS), in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/{pid}/status has no {field}")


def expect(proc, word):
    line = proc.stdout.readline().strip()
    if line != word:
        raise RuntimeError(f"{proc.args[:3]}: expected {word}, got {line!r}")


def wait_for_socket(path, proc, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}")
        time.sleep(0.02)
    raise RuntimeError(f"{path} never appeared")


def run_side(binary, work, side, clients, rate, seconds, payload):
    events = int(rate * seconds)
    sock = os.path.join(work, f"{side}.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    procs = []
    try:
        if side == "ours":
            server = subprocess.Popen([binary, "fanout-server", "--socket", sock, "--rate", str(rate),
                                       "--seconds", str(seconds), "--payload-bytes", str(payload)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            procs.append(server)
            expect(server, "READY")
            broker_pid, broker_tid = server.pid, None   # the server reports its broker thread's CPU itself
            publisher = server
        else:
            conf = os.path.join(work, "mosquitto.conf")
            with open(os.path.join(os.path.dirname(__file__), "mosquitto.conf")) as f:
                text = f.read().replace("@SOCKET@", sock)
            with open(conf, "w") as f:
                f.write(text)
            broker = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            procs.append(broker)
            wait_for_socket(sock, broker)
            broker_pid, broker_tid = broker.pid, None
        receiver = subprocess.Popen([binary, "fanout-clients", "--socket", sock, "--wire",
                                     "line" if side == "ours" else "mqtt", "--clients", str(clients),
                                     "--events", str(events), "--deadline", str(seconds * 10 + 30)],
                                    stdout=subprocess.PIPE, text=True)
        procs.append(receiver)
        expect(receiver, "READY")
        if side != "ours":
            publisher = subprocess.Popen([binary, "mqtt-publish", "--socket", sock, "--rate", str(rate),
                                          "--seconds", str(seconds), "--payload-bytes", str(payload)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            procs.append(publisher)
            expect(publisher, "READY")
        hwm_before = status_kb(broker_pid, "VmHWM")
        cpu0 = cpu_seconds(broker_pid, broker_tid)
        rcpu0 = cpu_seconds(receiver.pid)
        t0 = time.monotonic()
        publisher.stdin.write("GO\n")
        publisher.stdin.flush()
        expect(publisher, "PUBLISHED")
        out = receiver.stdout.read()
        rcpu = cpu_seconds(receiver.pid) - rcpu0   # still readable: not reaped until wait()
        received = json.loads(out)
        receiver.wait()
        wall = time.monotonic() - t0
        cpu = cpu_seconds(broker_pid, broker_tid) - cpu0
        hwm = status_kb(broker_pid, "VmHWM")   # ours still waits for DONE, Mosquitto for SIGTERM
        publisher.stdin.write("DONE\n")
        publisher.stdin.flush()
        published = json.loads(publisher.stdout.read())
        publisher.wait()
        if side == "ours":
            cpu, wall = published["broker_cpu_seconds"], published["wall_seconds"]
        received.update({
            "published": published["published"], "publish_seconds": published["publish_seconds"],
            "broker_cpu_fraction": cpu / wall, "clients_cpu_fraction": rcpu / wall, "wall_seconds": wall,
            "broker_dropped": published.get("dropped"), "broker_hwm_bytes": hwm,
            "broker_hwm_before_bytes": hwm_before,
        })
        return received
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()


def run(binary, work, quick):
    if not shutil.which("mosquitto"):
        raise RuntimeError("mosquitto is not installed (scripts/bench installs it)")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o1777)   # mosquitto started as root drops to its own user and must create its socket here
    clients, payload = 100, 256
    seconds = 1 if quick else 10
    # The required load, and in the full run a tenth of it, to show where each broker meets p99 < 5 ms.
    rates = [10_000] if quick else [10_000, 1_000]
    points = []
    for rate in rates:
        ours = run_side(binary, work, "ours", clients, rate, seconds, payload)
        peer = run_side(binary, work, "mosquitto", clients, rate, seconds, payload)
        points.append({"clients": clients, "rate": rate, "seconds": seconds, "payload_bytes": payload,
                       "ours": ours, "mosquitto": peer})
    return {"points": points}

# Its rows and paragraph of BENCHMARKS.md (tools/bench/report.py lays them out).
def rows(data):
    out = []
    for d in data["points"]:
        out += fanout_point_rows(d, full=d is data["points"][0])
    return out


def fanout_memory_row(d, peer):
    """Peak RSS of each broker's process in the same run (absent in results from before it was measured)."""
    o, m = d["ours"], d["mosquitto"]
    if "broker_hwm_bytes" not in o:
        return []
    mb = lambda b: b / (1024 * 1024)   # MB as the process bench writes it (kB from /proc ÷ 1024)
    return [row("fanout", f"peak RSS (VmHWM) at {d['rate']:,} ev/s", mb(o["broker_hwm_bytes"]), mb(m["broker_hwm_bytes"]),
                peer, "MB", "lower",
                f"ours: `nearby-gateway-bench fanout-server` (SocketBroker + in-process publisher, not the gateway); with every client "
                f"subscribed, before the load: {mb(o['broker_hwm_before_bytes']):.1f} vs {mb(m['broker_hwm_before_bytes']):.1f} MB")]


def fanout_point_rows(d, full):
    o, m = d["ours"], d["mosquitto"]
    peer = "Mosquitto 2 (UNIX socket)"
    label = f"{d['clients']} clients × {d['rate']:,} ev/s × {d['seconds']} s"
    if not full:
        return [
            row("fanout", f"delivered ({label})", o["received"] / o["expected"], m["received"] / m["expected"], peer, "%", "higher"),
            row("fanout", f"latency p99 at {d['rate']:,} ev/s", o["p99_us"] / 1000, m["p99_us"] / 1000, peer, "ms", "lower"),
            row("fanout", f"broker CPU at {d['rate']:,} ev/s", o["broker_cpu_fraction"], m["broker_cpu_fraction"], peer, "%", "lower"),
        ] + fanout_memory_row(d, peer)
    out = [
        row("fanout", f"delivered ({label})", o["received"] / o["expected"], m["received"] / m["expected"], peer, "%", "higher"),
        row("fanout", "publishing took (10k/s must take the nominal time)", o["publish_seconds"], m["publish_seconds"], peer, "s",
            "lower", f"nominal {d['seconds']} s; Mosquitto slows its publisher down instead of dropping"),
        row("fanout", "latency p50", o["p50_us"] / 1000, m["p50_us"] / 1000, peer, "ms", "lower"),
        row("fanout", "latency p99 (target < 5 ms)", o["p99_us"] / 1000, m["p99_us"] / 1000, peer, "ms", "lower"),
        row("fanout", "latency max", o["max_us"] / 1000, m["max_us"] / 1000, peer, "ms", "lower"),
        row("fanout", "broker CPU (one core = 100 %)", o["broker_cpu_fraction"], m["broker_cpu_fraction"], peer, "%", "lower",
            "SocketBroker thread vs mosquitto process"),
        row("fanout", "broker CPU per delivered event", o["broker_cpu_fraction"] * o["wall_seconds"] / max(1, o["received"]) * 1e6,
            m["broker_cpu_fraction"] * m["wall_seconds"] / max(1, m["received"]) * 1e6, peer, "µs", "lower"),
        row("fanout", "receiving clients' CPU (same code, line vs MQTT framing)", o["clients_cpu_fraction"],
            m["clients_cpu_fraction"], peer, "%", "lower"),
    ] + fanout_memory_row(d, peer)
    return out


def details(data):
    return "\n\n".join(fanout_point_details(d) for d in data["points"])


def fanout_point_details(d):
    o, m = d["ours"], d["mosquitto"]
    return (f"**Fan-out run.** {d['clients']} clients, {d['rate']:,} events/s for {d['seconds']} s, "
            f"{d['payload_bytes']}-byte JSON per event. Ours: {o['received']:,} of {o['expected']:,} delivered, broker "
            f"dropped {o.get('broker_dropped')} (per-client queue bound), per client {o['min_per_client']:,}…"
            f"{o['max_per_client']:,}, {o['unparsable']} other lines ($SYS/dropped notices). Mosquitto: "
            f"{m['received']:,} of {m['expected']:,}, per client {m['min_per_client']:,}…{m['max_per_client']:,}; its "
            f"publisher needed {m['publish_seconds']:.1f} s for {m['published']:,} events (back-pressure).")


if __name__ == "__main__":
    import sys
    print(json.dumps(run(sys.argv[1], sys.argv[2], "--quick" in sys.argv), indent=1))
