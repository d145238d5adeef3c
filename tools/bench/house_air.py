"""The air of the simulated house for real gateways: one scripted H4 controller per gateway (a UNIX
socket that `radio.device = "h4:<path>"` connects to), answering every HCI command as
TestSupport's ScriptedController does (Command Complete, a Broadcom 4.1 chip without extended
advertising) and delivering the LE Advertising Reports the simulation hands it, each at its own RSSI.
And the people on it: what each one advertises, and the fleet topic its room is decided under.
"""
import os
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class Controller:
    """One connection at a time (a new one is the radio reconnecting); reports only while scanning."""

    def __init__(self, path):
        self.path, self.conn, self.scanning, self.stopped = path, None, False, False
        self.lock = threading.Lock()
        self.sent = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.conn, self.scanning = conn, False
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        buf = b""
        while True:
            try:
                chunk = conn.recv(4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            while len(buf) >= 4 and buf[0] == 1 and len(buf) >= 4 + buf[3]:
                opcode, params = buf[1] | buf[2] << 8, buf[4:4 + buf[3]]
                buf = buf[4 + buf[3]:]
                self._answer(conn, opcode, params)
            if buf and buf[0] != 1:
                buf = b""   # not a command: resynchronise
        with self.lock:
            if self.conn is conn:
                self.conn, self.scanning = None, False

    def _answer(self, conn, opcode, params):
        returned = {0x1001: bytes([7, 0, 0, 7, 0x0F, 0, 0, 0]),   # HCI 4.1, Broadcom
                    0x2003: bytes(8),                            # no extended advertising
                    0x1009: bytes([0x42, 0, 0x5C, 0x12, 0x34, 0x56])}.get(opcode, b"")
        if opcode == 0x0C03:   # Reset
            with self.lock:
                self.scanning = False
        if opcode == 0x200C:   # LE Set Scan Enable
            with self.lock:
                self.scanning = params[:1] == b"\x01"
        body = bytes([1, opcode & 0xFF, opcode >> 8, 0]) + returned
        self._send(conn, bytes([4, 0x0E, len(body)]) + body)

    def report(self, address, ad, rssi):
        """One LE Advertising Report (ADV_NONCONN_IND, random address) at `rssi`, if scanning."""
        with self.lock:
            conn = self.conn if self.scanning else None
        if conn is None:
            return False
        event = bytes([1, 3, 1]) + bytes(reversed(address)) + bytes([len(ad)]) + ad + bytes([rssi & 0xFF])
        if self._send(conn, bytes([4, 0x3E, len(event) + 1, 0x02]) + event):
            self.sent += 1
            return True
        return False

    @staticmethod
    def _send(conn, data):
        try:
            conn.sendall(data)
            return True
        except OSError:
            return False

    def is_scanning(self):
        with self.lock:
            return self.scanning

    def stop(self):
        self.stopped = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            if self.conn:
                self.conn.close()
        if os.path.exists(self.path):
            os.unlink(self.path)


class IBeaconPerson:
    """A person stood in for by an iBeacon (one fixed advert). The fleet decides its room under
    `ibeacon/<uuid>/<major>/<minor>` (docs/mqtt.md, "Rooms")."""

    def __init__(self, index):
        self.uuid = bytes(range(0x40, 0x50))
        self.major, self.minor = 7, index
        self.address = bytes([0xC0 | index, 0x11, 0x22, 0x33, 0x44, index])
        u = self.uuid.hex()
        self.key = f"ibeacon/{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}/{self.major}/{self.minor}"
        self.kind = "person (iBeacon)"

    def advert(self, now):
        return (bytes([0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + self.uuid
                + self.major.to_bytes(2, "big") + self.minor.to_bytes(2, "big") + bytes([0xC5]))   # -59 dBm at 1 m


class OurMessage:
    """One of our own publications (a phone running the app), one BLE chunk per advert, framed by
    the independent implementation (tools/system-test/guest/frame-open) under the epoch of `now`.
    The fleet decides its room under `<ns>/<type>`."""

    def __init__(self, index, api_key, rotate_s, namespace="hs", type_=None):
        import process   # loads frame-open
        self.frames = process._frames
        self.api_key, self.rotate_s = api_key, rotate_s
        self.namespace, self.type = namespace, type_ or f"ph{index}"
        self.address = bytes([0xC0 | index, 0x55, 0x66, 0x77, 0x88, index])
        self.key = f"{self.namespace}/{self.type}"
        self.kind = "our message (BLE)"
        self._cache = (None, None)

    def advert(self, now):
        epoch = int(now) // self.rotate_s
        if self._cache[0] != epoch:
            k = self.frames.epoch_key(self.api_key, epoch)
            frame = self.frames.chunks(k, self.frames.body(self.namespace, self.type, b"x"), 19)[0]
            self._cache = (epoch, self.frames.ble(frame))
        return self._cache[1]


def wait_scanning(controllers, procs, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(c.is_scanning() for c in controllers):
            return
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{p.args[:3]} exited with {p.returncode}")
        time.sleep(0.05)
    raise RuntimeError("not every gateway started scanning in time")
