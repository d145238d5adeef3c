"""Floods an emulated LE air with distinct iBeacons, the way a hostile neighbour with a cheap board can:
one advertising enable per beacon, each with another (major, minor) and UUID byte, so every report is a
new beacon to any gateway that includes iBeacons. Used by the end-to-end test of the found set's bound.

    python beacons.py SERVER_SOCKET FIRST COUNT

Prints 'sent N' when done. Raw HCI through tools/bench/hci_peer.py."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import hci_peer  # noqa: E402


def ibeacon(k):
    uuid = bytes([0xF1, 0x00, 0xD5, (k >> 16) & 0xFF]) + bytes(12)
    data = bytes([0x4C, 0x00, 0x02, 0x15]) + uuid + bytes([(k >> 8) & 0xFF, k & 0xFF, 0x00, 0x01, 0xC5])
    return bytes([len(data) + 1, 0xFF]) + data


def main():
    server, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    controller = hci_peer.Controller(server)
    controller.reset()
    # ADV_NONCONN_IND, 100 ms (btvirt sends one report per enable whatever the interval).
    controller.command(0x08, 0x0006, bytes([0xA0, 0x00, 0xA0, 0x00, 0x03, 0x00, 0x00]) + bytes(6) + bytes([0x07, 0x00]))
    for k in range(first, first + count):
        ad = ibeacon(k)
        controller.command(0x08, 0x000A, b"\x00")
        controller.command(0x08, 0x0008, bytes([len(ad)]) + ad + bytes(31 - len(ad)))
        controller.command(0x08, 0x000A, b"\x01")
    controller.command(0x08, 0x000A, b"\x00")
    controller.close()
    print(f"sent {count}", flush=True)


if __name__ == "__main__":
    main()
