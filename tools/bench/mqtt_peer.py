"""The MQTT bench's peer (tools/bench/mqtt.py): paho-mqtt publishing what our bridge publishes.

  mqtt_peer.py SOCKET EVENTS PREFIX QOS PAYLOAD_BYTES [--idle]

READY once connected; at GO publishes EVENTS found events to `<PREFIX>/found/bench/t<n % 100>`,
retained, with the JSON `nearby-gateway-bench mqtt-bridge` sends (FanoutPayload: the CLOCK_MONOTONIC
stamp first, padded to PAYLOAD_BYTES), waits until paho has written them all, PUBLISHED; at the next
line prints its JSON. --idle: only connects, says READY and stays until stdin closes.
"""
import json
import sys
import time

import paho.mqtt.client as mqtt

TOPICS = 100


def payload(stamp, total):
    # Sources/GatewayBench/FanoutPayload.swift, json(forBroker: true), byte for byte.
    head = '{"bench_ns":%020d,"namespace":"bench","type":"greeting","medium":"ble","rssi":null,"content":"' % stamp
    tail = '","first_seen":"2026-11-23T12:00:00.000Z","last_seen":"2026-11-23T12:00:00.000Z"'
    padding = max(0, total - len(head) - len(tail) - len(',"retained":false}'))
    return (head + "A" * padding + tail + "}").encode()


def main():
    sock, events, prefix, qos, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-paho-{prefix}", transport="unix")
    client.max_queued_messages_set(0)   # unbounded, as our bridge's queue is sized to hold every event
    client.connect(sock)
    client.loop_start()
    deadline = time.monotonic() + 10
    while not client.is_connected():
        if time.monotonic() > deadline:
            raise SystemExit("paho: no connection within 10 s")
        time.sleep(0.01)
    print("READY", flush=True)
    if "--idle" in sys.argv:
        sys.stdin.read()
        client.loop_stop()
        client.disconnect()
        return
    if sys.stdin.readline().strip() != "GO":
        return
    cpu0 = time.process_time()
    start = time.monotonic()
    last = None
    for n in range(events):
        last = client.publish(f"{prefix}/found/bench/t{n % TOPICS}", payload(time.monotonic_ns(), size), qos=qos, retain=True)
    last.wait_for_publish(60)
    publish_seconds = time.monotonic() - start
    print("PUBLISHED", flush=True)
    sys.stdin.readline()
    cpu = time.process_time() - cpu0
    client.loop_stop()
    client.disconnect()
    print(json.dumps({"published": events, "publish_seconds": publish_seconds, "cpu_seconds": cpu}), flush=True)


if __name__ == "__main__":
    main()
