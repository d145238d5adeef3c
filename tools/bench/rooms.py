"""Rooms measured on a simulated house (issue 40 item 3; docs/rooms.md has the model and the method).

Four real gateways (`nearby-gateway run`, the release build), one per room, each on its own scripted
H4 controller (house_air.Controller), all on one real Mosquitto (Debian's, on a private TCP port of
127.0.0.1, started here and stopped after). The simulation (house.py) walks people along scripted
routes in real time, 10 samples a second: each sample is one advertising report per person at each
gateway, at the RSSI of the path-loss model. A paho-mqtt client reads the fleet's decisions
(`<fleet>/room/<message>`, retained). From the same samples, the nearest-gateway rule (the strongest
report of each sample wins: the anchors' method) and the same rule on the RSSI smoothed as the
gateways smooth it. Scored by house.score: share of time in the true room after the settle time,
flaps per hour while standing still.
"""
import os
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import house  # noqa: E402
from house_air import Controller, IBeaconPerson, OurMessage, wait_scanning  # noqa: E402
from process import stop, wait_path  # noqa: E402

FLEET = "house"
TICK_S = 0.1
SETTLE_S = 15.0        # after the true room changes: the fleet's documented 5-8 s move, twice, rounded up
START_SETTLE_S = 20.0  # after the start: the gateways' 6 s settle, finding, first evidence
SEED = 40
ROTATE_S = 600


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mosquitto(work, port):
    conf = os.path.join(work, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n"
                "log_type error\nlog_type warning\n")
    proc = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited with {proc.returncode}")
            time.sleep(0.05)
    stop(proc)
    raise RuntimeError("mosquitto never listened")


def gateway_config(work, room, controller_path, port, api_key):
    path = os.path.join(work, f"{room}.toml")
    with open(path, "w") as f:
        f.write(f'''api_key = "{api_key}"
board = "sim"
log_level = "warning"
[radio]
device = "h4:{controller_path}"
lost_after_s = 30
rotate_s = {ROTATE_S}
[socket]
path = "{work}/{room}.sock"
[state]
path = "{work}/{room}-state.json"
[mqtt]
url = "mqtt://127.0.0.1:{port}"
client_id = "gw-{room}"
prefix = "house/{room}"
room = "{room}"
fleet = "{FLEET}"
reconnect_max_s = 4
[[subscription]]
namespace = "hs"
type = "*"
mediums = ["ble"]
mode = "scan"
include = ["ibeacon"]
lost_after_s = 30
''')
    return path


class Decisions:
    """The fleet's decisions as they arrive: per message, [(monotonic time, room)]."""

    def __init__(self, port):
        import paho.mqtt.client as mqtt
        self.lock, self.by_key = threading.Lock(), {}
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"rooms-bench-{os.getpid()}")
        self.client.on_message = self._message
        self.client.on_connect = lambda c, *_: c.subscribe(f"{FLEET}/room/#")
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def _message(self, client, userdata, msg):
        import json
        key = msg.topic[len(f"{FLEET}/room/"):]
        room = json.loads(msg.payload).get("room") if msg.payload else None
        with self.lock:
            self.by_key.setdefault(key, []).append((time.monotonic(), room))

    def at(self, key, t):
        """The room last decided for `key` at monotonic time `t`."""
        with self.lock:
            room = None
            for when, decided in self.by_key.get(key, []):
                if when > t:
                    break
                room = decided
            return room

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


def people(api_key, names):
    """The route's people: our message (a phone running the app) walks the first route, iBeacons the others.
    (An `[[identity]]` person fits here as one more kind: an advert and a fleet key.)"""
    out = {}
    for n, name in enumerate(names):
        out[name] = OurMessage(n + 1, api_key, ROTATE_S) if n == 0 else IBeaconPerson(n + 1)
    return out


def simulate(controllers, walkers, routes, duration):
    """Real time, TICK_S per sample: sends each sample to the gateways; returns the samples."""
    shadowing = house.Shadowing(SEED)
    samples = []   # (t since start, monotonic, {person: (position, standing, {gateway: rssi})})
    t0 = time.monotonic()
    next_tick, previous = t0, None
    while True:
        now = time.monotonic()
        t = now - t0
        if t > duration:
            return samples, t0
        positions, standing = {}, {}
        for name, route in routes.items():
            positions[name], standing[name] = route.at(t)
        heard = house.sample_tick(positions, shadowing, t - previous if previous is not None else TICK_S)
        previous = t
        wall = time.time()
        for name, walker in walkers.items():
            ad = walker.advert(wall)
            for room, controller in controllers.items():
                if heard[name][room] is not None:
                    controller.report(walker.address, ad, heard[name][room])
        samples.append((t, now, {n: (positions[n], standing[n], heard[n]) for n in routes}))
        next_tick += TICK_S
        time.sleep(max(0.0, next_tick - time.monotonic()))


def timelines(samples, walkers, decisions):
    """Per method, per person: [(t, true room, standing, decided room)]."""
    smoother = house.Smoother()
    out = {"fleet": {}, "nearest": {}, "nearest_smoothed": {}}
    for t, now, state in samples:
        for name, (position, standing, heard) in state.items():
            true_room = house.room_of(position)
            smoothed = {g: smoother.update((name, g), rssi, t) for g, rssi in heard.items()}
            out["fleet"].setdefault(name, []).append((t, true_room, standing, decisions.at(walkers[name].key, now)))
            out["nearest"].setdefault(name, []).append((t, true_room, standing, house.nearest(heard)))
            out["nearest_smoothed"].setdefault(name, []).append((t, true_room, standing, house.nearest(smoothed)))
    return out


def run(binary, top, work, quick):
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    api_key = f"rooms-bench-{os.getpid()}"
    routes = house.routes(scale=0.5 if quick else 1.0)
    duration = max(r.duration for r in routes.values())
    walkers = people(api_key, list(routes))
    procs, controllers, decisions = [], {}, None
    port = free_port()
    try:
        procs.append(mosquitto(work, port))
        for room in house.GATEWAYS:
            controllers[room] = Controller(os.path.join(work, f"{room}.ctl"))
            conf = gateway_config(work, room, controllers[room].path, port, api_key)
            with open(os.path.join(work, f"{room}.log"), "w") as log:
                procs.append(subprocess.Popen([binary, "run", "--config", conf], stdout=subprocess.DEVNULL, stderr=log,
                                              env=dict(os.environ, NEARBY_GATEWAY_BOARDS=os.path.join(top, "boards"))))
            wait_path(f"{work}/{room}.sock", procs[-1])
        decisions = Decisions(port)
        wait_scanning(list(controllers.values()), procs)
        samples, _ = simulate(controllers, walkers, routes, duration)
        time.sleep(1)   # the last decisions in flight
        lines = timelines(samples, walkers, decisions)
        for p in procs[1:]:
            if p.poll() is not None:
                raise RuntimeError(f"a gateway exited with {p.returncode} during the route")
    finally:
        if decisions:
            decisions.stop()
        for p in reversed(procs):
            stop(p)
        for c in controllers.values():
            c.stop()
    result = {"quick": quick, "duration_s": duration, "tick_s": TICK_S, "settle_s": SETTLE_S,
              "start_settle_s": START_SETTLE_S, "seed": SEED, "people": {n: w.kind for n, w in walkers.items()},
              "model": {"p1m": house.P1M, "n": house.EXPONENT, "wall_db": house.WALL_DB, "shadow_db": house.SHADOW_DB,
                        "shadow_tc_s": house.SHADOW_TC_S}, "reports_sent": sum(c.sent for c in controllers.values()),
              "decisions": sum(len(v) for v in decisions.by_key.values())}
    for method, line in lines.items():
        people_only = {n: v for n, v in line.items() if walkers[n].kind.startswith("person")}
        ours = {n: v for n, v in line.items() if not walkers[n].kind.startswith("person")}
        result[method] = {"people": house.score(people_only, SETTLE_S, START_SETTLE_S),
                          "ours": house.score(ours, SETTLE_S, START_SETTLE_S),
                          "per_person": {n: house.score({n: v}, SETTLE_S, START_SETTLE_S) for n, v in line.items()}}
    return result


def rows(d):
    from report import row
    out = []
    for who, label in (("people", "people (iBeacons)"), ("ours", "our message over BLE")):
        fleet, near, smooth = d["fleet"][who], d["nearest"][who], d["nearest_smoothed"][who]
        target = "target ≥ 95 %" if who == "people" else "no target over BLE (≥ 99 % is for audio)"
        out.append(row("rooms", f"time in the true room, {label}, after {d['settle_s']:.0f} s settle", fleet["right"],
                       near["right"], "nearest gateway, each sample", "%", "higher",
                       f"{target}; nearest on smoothed RSSI (τ 2 s): {100 * smooth['right']:.1f} %"))
        out.append(row("rooms", f"flaps per hour standing still, {label}", fleet["flaps_per_hour"], near["flaps_per_hour"],
                       "nearest gateway, each sample", "/h", "lower",
                       f"{fleet['flaps']} flaps ({fleet['away']} out of the true room) in {fleet['standing_s'] / 60:.1f} min standing (1 flap = "
                       f"{3600 / max(1.0, fleet['standing_s']):.1f}/h); target ≤ 2/h; nearest on smoothed RSSI: "
                       f"{smooth['flaps_per_hour']:.0f}/h"))
    return out


def details(d):
    m = d["model"]
    per = "; ".join(f"{n} ({d['people'][n]}): fleet {100 * s['right']:.1f} %, {s['flaps']} flaps, nearest "
                    f"{100 * d['nearest']['per_person'][n]['right']:.1f} %, {d['nearest']['per_person'][n]['flaps']} flaps"
                    for n, s in d["fleet"]["per_person"].items())
    return (f"**Rooms run.** A simulated house (docs/rooms.md): 4 rooms, 4 real gateways on one Mosquitto, each on "
            f"a scripted H4 controller; {len(d['people'])} walkers over {d['duration_s']:.0f} s of real time, "
            f"{1 / d['tick_s']:.0f} samples/s; log-distance P(1 m) {m['p1m']:.0f} dBm, n {m['n']}, {m['wall_db']:.0f} dB "
            f"per wall, shadowing σ {m['shadow_db']:.0f} dB (Gauss-Markov, {m['shadow_tc_s']:.0f} s), seed {d['seed']}. "
            f"Counted from {d['start_settle_s']:.0f} s after the start and {d['settle_s']:.0f} s after each change of "
            f"true room. {d['reports_sent']:,} reports sent, {d['decisions']} decisions read. Per walker: {per}.")
