"""The load bench's Python peer (tools/bench/load.py): what Theengs Gateway does per advert.

  load_peer.py H4_SOCKET MQTT_SOCKET

Connects paho-mqtt to the broker (its network loop on its own thread, as Theengs runs it), asks the H4
controller to scan, and for every LE Advertising Report: bluetooth-data-tools parses the AD structures
(`parse_advertisement_data_bytes`, the function Home Assistant's scanner calls, with its LRU cache),
and one JSON message is published to `home/TheengsGateway/BTtoMQTT/<address>` (QoS 0, not retained),
as Theengs publishes each decoded advert. At SIGTERM prints `{"reports":N,"published":M}` and exits.
"""
import json
import signal
import socket
import sys
import time

import paho.mqtt.client as mqtt
from bluetooth_data_tools import parse_advertisement_data_bytes

SCAN_ENABLE = bytes([0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])


class Stop(Exception):
    pass


def on_term(_signo, _frame):
    raise Stop()


def main():
    h4, broker = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGTERM, on_term)
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="load-peer", transport="unix")
    client.connect(broker)
    client.loop_start()
    deadline = time.monotonic() + 10
    while not client.is_connected():
        if time.monotonic() > deadline:
            raise SystemExit("load_peer: no MQTT connection within 10 s")
        time.sleep(0.01)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(h4)
    sock.sendall(SCAN_ENABLE)
    reports = published = 0
    buffer = b""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            buffer += data
            o = 0
            while len(buffer) - o >= 3:
                length = buffer[o + 2]
                if len(buffer) - o < 3 + length:
                    break
                event = buffer[o + 1:o + 3 + length]
                o += 3 + length
                if event[0] != 0x3E or len(event) < 4 or event[2] != 0x02:
                    continue
                p = 4
                for _ in range(event[3]):
                    if p + 9 > len(event):
                        break
                    kind, address, size = event[p], event[p + 2:p + 8], event[p + 8]
                    ad = event[p + 9:p + 9 + size]
                    rssi = event[p + 9 + size] - 256 if event[p + 9 + size] > 127 else event[p + 9 + size]
                    p += 10 + size
                    reports += 1
                    name, uuids, service_data, manufacturer, tx_power = parse_advertisement_data_bytes(ad)
                    mac = ":".join(f"{b:02X}" for b in reversed(address))
                    message = {"id": mac, "rssi": rssi, "adv_type": kind}
                    if name:
                        message["name"] = name
                    if uuids:
                        message["servicedatauuid"] = uuids[0]
                    for key, value in service_data.items():
                        message["servicedata"] = value.hex()
                        message["servicedatauuid"] = key
                    for company, value in manufacturer.items():
                        message["manufacturerdata"] = company.to_bytes(2, "little").hex() + value.hex()
                    if tx_power is not None:
                        message["txpower"] = tx_power
                    client.publish(f"home/TheengsGateway/BTtoMQTT/{mac.replace(':', '')}", json.dumps(message))
                    published += 1
            buffer = buffer[o:]
    except Stop:
        pass
    client.loop_stop()
    client.disconnect()
    print(json.dumps({"reports": reports, "published": published}), flush=True)


if __name__ == "__main__":
    main()
