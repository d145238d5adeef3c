#!/usr/bin/env python3
"""A real Home Assistant against a real gateway (scripts/homeassistant-test; docs/mqtt.md).

  ha_test.py --hass scripts/homeassistant-test --version V      (NEARBY_GATEWAY_BIN: the binary)

One Home Assistant (started through `scripts/homeassistant-test hass`, in the Debian 13 root), one
Mosquitto (TCP on loopback, a password), gateway B (the binary under test, `[mqtt]` with commands, one
subscription) and gateway A publishing on btvirt's air. Everything is read through Home Assistant's
own API: an owner made by onboarding, a token from /auth/token, the MQTT integration set up by its
config flow (REST), the registries over the websocket API, states over REST. Only the standard
library: it runs on the host's Python. Every wait polls for a condition with a generous deadline.
"""
import argparse
import base64
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ha_client import HomeAssistantAPI, LineClient  # noqa: E402

HA_START_S = 900      # Home Assistant's first start on a 2-core machine at load 20
STEP_S = 120          # anything else
USER, PASSWORD = "gw", "ha-test-" + base64.b32encode(os.urandom(10)).decode().lower()
NODE = "gw-ha"        # the gateway's client id, and so Home Assistant's node id
OBJECTS = {"subscription_1": "binary_sensor", "found": "sensor", "errors": "sensor",
           "background": "switch", "permission": "switch"}

started = time.monotonic()


def step(text):
    print(f"homeassistant-test: [+{time.monotonic() - started:5.1f}s] {text}", flush=True)


def wait_for(what, probe, timeout=STEP_S, alive=(), seen=None):
    """Polls `probe` until it returns something true; fails naming `what` and the last value seen
    (or what `seen` says)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        for name, proc in alive:
            if proc.poll() is not None:
                raise SystemExit(f"FAIL: {name} exited ({proc.returncode}) while waiting for {what}")
        try:
            last = probe()
        except (OSError, urllib.error.URLError, ValueError) as error:
            last = error
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise SystemExit(f"FAIL: {what}: not within {timeout} s (last: {seen() if seen else last!r})")
        time.sleep(0.25)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mosquitto(work, port, procs):
    passwords = os.path.join(work, "passwd")
    subprocess.run(["/usr/bin/mosquitto_passwd", "-b", "-c", passwords, USER, PASSWORD], check=True)
    conf = os.path.join(work, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {passwords}\n"
                f"persistence false\nlog_dest stderr\n{'user root' if os.getuid() == 0 else ''}\n")
    proc = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(work, "mosquitto.log"), "w"))
    procs.append(("mosquitto", proc))
    wait_for("mosquitto listening", lambda: socket.create_connection(("127.0.0.1", port), 1).close() or True,
             alive=[("mosquitto", proc)])
    return proc


def gateway_config(work, name, key, body):
    path = os.path.join(work, f"{name}.toml")
    with open(path, "w") as f:
        f.write(f'api_key = "{key}"\nboard = "sim"\nlog_level = "info"\n'
                f'[radio]\ndevice = "h4:/tmp/bt-server-le"\nlost_after_s = 3\n'
                f'[socket]\npath = "{work}/{name}.sock"\n'
                f'[state]\npath = "{work}/{name}-state/state.json"\n'
                f'defaults = {{ background_mode = true, permission = "granted", power = "active" }}\n{body}')
    return path


def gateway(binary, config, name, work, procs):
    proc = subprocess.Popen([binary, "run", "--config", config], stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(work, f"{name}.log"), "w"))
    procs.append((f"gateway {name}", proc))
    socket_path = os.path.join(work, f"{name}.sock")
    wait_for(f"gateway {name}'s socket", lambda: os.path.exists(socket_path), alive=[(name, proc)])
    return proc, LineClient(socket_path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hass", required=True, help="scripts/homeassistant-test (its `hass` mode)")
    parser.add_argument("--version", required=True)
    args = parser.parse_args()
    binary = os.environ["NEARBY_GATEWAY_BIN"]
    work = tempfile.mkdtemp(prefix="nearby-ha-", dir="/tmp")   # /tmp is bound into the root
    procs = []
    ok = False
    try:
        run(args, binary, work, procs)
        ok = True
    finally:
        for name, proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"homeassistant-test: logs kept in {work} (home-assistant.log, b.log, mosquitto.log)", file=sys.stderr)


def run(args, binary, work, procs):
    # Home Assistant first: its start is the long pole; the rest starts meanwhile.
    ha_port, mqtt_port = free_port(), free_port()
    config_dir = os.path.join(work, "ha")
    os.makedirs(config_dir)
    with open(os.path.join(config_dir, "configuration.yaml"), "w") as f:
        f.write(f"homeassistant:\n  name: Nearby test\n  time_zone: UTC\n  country: DE\n  unit_system: metric\n"
                f"http:\n  server_host: 127.0.0.1\n  server_port: {ha_port}\n"
                f"logger:\n  default: warning\n")
    hass = subprocess.Popen([args.hass, "hass", "-c", config_dir, "--skip-pip"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    procs.append(("Home Assistant", hass))
    step(f"Home Assistant {args.version} starting on 127.0.0.1:{ha_port}")
    mosquitto(work, mqtt_port, procs)
    key = "ha-test-" + base64.b32encode(os.urandom(15)).decode().lower()
    subscription = '[[subscription]]\nnamespace = "den"\ntype = "*"\nmediums = ["ble"]\nmode = "scan"\n'
    mqtt = (f'[mqtt]\nurl = "mqtt://127.0.0.1:{mqtt_port}"\nclient_id = "{NODE}"\nusername = "{USER}"\n'
            f'password = "{PASSWORD}"\nprefix = "nearby/ha"\ncommands = true\nreconnect_max_s = 4\n')
    config_b = gateway_config(work, "b", key, mqtt + subscription)
    b, b_socket = gateway(binary, config_b, "b", work, procs)
    alive = [("Home Assistant", hass), ("gateway b", b)]

    api = HomeAssistantAPI(f"127.0.0.1:{ha_port}")
    wait_for("Home Assistant answering /api/onboarding", api.onboarding_ready, HA_START_S, alive)
    step("Home Assistant up; owner by onboarding, token from /auth/token")
    api.onboard("owner", "nearby-ha-test-password")
    flow = api.rest("POST", "/api/config/config_entries/flow", {"handler": "mqtt"})
    assert flow.get("step_id") == "broker", flow
    broker = {"broker": "127.0.0.1", "port": mqtt_port, "username": USER, "password": PASSWORD}
    def submit():
        # The form again with `cannot_connect` when its trial connection timed out (a busy machine): again.
        result = api.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", broker)
        assert result.get("type") in ("create_entry", "form"), f"the MQTT config flow ended with {result}"
        return result if result["type"] == "create_entry" else None
    wait_for("the MQTT config flow creating its entry", submit, alive=alive)
    step("MQTT integration set up by its config flow")

    # The registries: the gateway's device and its five entities, found by their unique ids.
    ws = api.websocket()
    def registered():
        entities = {e["unique_id"]: e for e in ws.call("config/entity_registry/list") if e["platform"] == "mqtt"}
        return entities if all(f"{NODE}_{o}" in entities for o in OBJECTS) else None
    entities = wait_for("the five entities in the entity registry", registered, alive=alive)
    devices = [d for d in ws.call("config/device_registry/list") if ["mqtt", f"nearby_gateway_{NODE}"] in d["identifiers"]]
    assert len(devices) == 1, f"devices with the gateway's identifier: {devices}"
    device = devices[0]
    assert (device["manufacturer"], device["model"], device["name"]) == ("Nearby Gateway", "sim", f"Nearby Gateway {NODE}"), device
    ids = {}
    for obj, component in OBJECTS.items():
        entity = entities[f"{NODE}_{obj}"]
        assert entity["device_id"] == device["id"], entity
        assert entity["entity_id"] == f"{component}.{NODE.replace('-', '_')}_{obj}", entity   # from default_entity_id
        ids[obj] = entity["entity_id"]
    step(f"registry: device {device['name']!r} ({device['model']}) with {sorted(ids.values())}")

    def state(obj, want, attributes=None):
        """Waits until the entity's state is `want` and its attributes include `attributes`."""
        last = [None]
        def probe():
            current = last[0] = api.rest("GET", f"/api/states/{ids[obj]}")
            attrs = current.get("attributes", {})
            return current if current["state"] == want and all(attrs.get(k) == v for k, v in (attributes or {}).items()) else None
        return wait_for(f"{ids[obj]} == {want} {attributes or ''}", probe, alive=alive, seen=lambda: last[0])

    presence = state("subscription_1", "off", {"presence": "OFF", "found": 0, "namespace": "den", "type": "*"})
    assert presence["attributes"].get("device_class") == "presence", presence
    state("found", "0")
    state("errors", "0", {"errors": []})
    state("background", "on")
    state("permission", "on")
    step("states: presence off, found 0, errors 0, background and permission on")

    # Found: A publishes what B's subscription matches.
    a, a_socket = gateway(binary, gateway_config(work, "a", key, ""), "a", work, procs)
    alive.append(("gateway a", a))
    reply = a_socket.request(f"PUB den/door {base64.b64encode(b'open').decode()} mediums=ble mode=broadcast", timeout=60)
    assert reply.startswith("OK "), reply
    on = state("subscription_1", "on", {"presence": "ON", "found": 1})
    # btvirt's reports carry no RSSI: the attributes are there, null (SignalTests has the values).
    assert "rssi" in on["attributes"] and "distance_m" in on["attributes"], on
    state("found", "1")
    step("found: presence on, found 1")

    # Errors: a config B cannot reload raises `config`; the good one clears it.
    with open(config_b) as f:
        good = f.read()
    with open(config_b, "a") as f:
        f.write("\nthis is not toml\n")
    b.send_signal(signal.SIGHUP)
    state("errors", "1", {"errors": ["config"]})
    with open(config_b, "w") as f:
        f.write(good)
    b.send_signal(signal.SIGHUP)
    state("errors", "0", {"errors": []})
    step("errors: 1 (config) after a bad reload, 0 after a good one")

    # The background switch, turned off in Home Assistant, reaches the gateway.
    api.rest("POST", "/api/services/switch/turn_off", {"entity_id": ids["background"]})
    wait_for("GET background == OK off on the gateway", lambda: b_socket.request("GET background", timeout=60) == "OK off", alive=alive)
    state("background", "off")
    step("switch: turned off in Home Assistant, GET background answers off")

    # Lost: A's publication ends with its client's connection.
    a_socket.close()
    state("subscription_1", "off", {"presence": "OFF", "found": 0})
    state("found", "0")
    step("lost: presence off, found 0")

    # Killed: the broker sends the gateway's will, every entity becomes unavailable.
    alive.remove(("gateway b", b))
    b.kill()
    b.wait()
    for obj in OBJECTS:
        state(obj, "unavailable")
    step("gateway killed: all five unavailable")

    with open(os.path.join(config_dir, "home-assistant.log")) as f:
        log = f.read()
    complaints = [line for line in log.splitlines() if any(word in line for word in (NODE, "nearby/ha", "nearby_gateway"))]
    assert not complaints, "Home Assistant's log about the gateway:\n" + "\n".join(complaints)
    others = [line for line in log.splitlines() if " WARNING " in line or " ERROR " in line]
    for line in others:
        print(f"homeassistant-test: (Home Assistant's own) {line[:200]}")
    step("Home Assistant's log has no warning or error about the gateway's configs: PASS")


if __name__ == "__main__":
    main()
