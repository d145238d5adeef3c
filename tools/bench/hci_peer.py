"""Raw HCI over btvirt's H4 socket, for the gateway-process benchmark: a passive observer that stamps
every advertising report it hears (CLOCK_MONOTONIC), and a bare advertiser, the floor our gateway is
compared with (nothing between the command and the air but one socket write)."""
import socket
import struct
import threading
import time

SERVER = "/tmp/bt-server-le"


class Controller:
    """One emulated LE controller (one connection to btvirt), commands sent one at a time."""

    def __init__(self, path=SERVER, wait_s=30):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The air may still be starting (a private air's relay appears once btvirt accepts): wait
        # for it as a radio does for a late controller, within a bound.
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        self.buffer = b""
        self.lock = threading.Lock()
        self.complete = threading.Condition(self.lock)
        self.answers = []
        self.on_report = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def command(self, ogf, ocf, params=b"", timeout=2.0):
        opcode = (ogf << 10) | ocf
        with self.lock:
            self.answers = [a for a in self.answers if a[0] != opcode]
            self.sock.sendall(struct.pack("<BHB", 0x01, opcode, len(params)) + params)
            deadline = time.monotonic() + timeout
            while True:
                for answer in self.answers:
                    if answer[0] == opcode:
                        self.answers.remove(answer)
                        return answer[1]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"HCI command {opcode:#06x}: no answer")
                self.complete.wait(left)

    def _read(self):
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            now = time.monotonic_ns()
            self.buffer += data
            while len(self.buffer) >= 3 and self.buffer[0] == 0x04:
                length = self.buffer[2]
                if len(self.buffer) < 3 + length:
                    break
                packet, self.buffer = self.buffer[1:3 + length], self.buffer[3 + length:]
                self._event(packet, now)
            if self.buffer and self.buffer[0] != 0x04:
                self.buffer = b""   # nothing else is expected from a controller here

    def _event(self, packet, now):
        code = packet[0]
        if code == 0x0E and len(packet) >= 6:        # Command Complete: status is the first return byte
            opcode = packet[3] | packet[4] << 8
            with self.lock:
                self.answers.append((opcode, packet[5]))
                self.complete.notify_all()
        elif code == 0x0F and len(packet) >= 6:      # Command Status
            opcode = packet[4] | packet[5] << 8
            with self.lock:
                self.answers.append((opcode, packet[2]))
                self.complete.notify_all()
        elif code == 0x3E and len(packet) >= 4 and packet[2] == 0x02 and self.on_report:
            o = 4
            for _ in range(packet[3]):
                if o + 9 > len(packet):
                    return
                n = packet[o + 8]
                self.on_report(now, bytes(packet[o + 2:o + 8]), bytes(packet[o + 9:o + 9 + n]))
                o += 10 + n

    def reset(self):
        self.command(0x03, 0x0003)


class Observer:
    """A passive scanner remembering, per marker (bytes looked for in the AD data), the first and last
    time it was heard."""

    def __init__(self):
        self.controller = Controller()
        self.lock = threading.Lock()
        self.watch = {}      # marker -> [first_ns, last_ns, count]
        self.controller.on_report = self._report
        self.controller.reset()
        self.controller.command(0x08, 0x000B, bytes([0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]))  # passive, 10 ms/10 ms
        self.controller.command(0x08, 0x000C, bytes([0x01, 0x00]))                                 # enable, no dup filter

    def add(self, marker):
        with self.lock:
            self.watch.setdefault(marker, [None, None, 0])

    def seen(self, marker):
        with self.lock:
            first, last, count = self.watch.get(marker, [None, None, 0])
            return first, last, count

    def wait_first(self, marker, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            first, _, _ = self.seen(marker)
            if first is not None:
                return first
            time.sleep(0.001)
        return None

    def _report(self, now, address, data):
        with self.lock:
            for marker, entry in self.watch.items():
                if marker in data:
                    if entry[0] is None:
                        entry[0] = now
                    entry[1] = now
                    entry[2] += 1

    def close(self):
        self.controller.close()


class BareAdvertiser:
    """Advertises through raw HCI commands: the least any advertiser on this controller can do."""

    def __init__(self):
        self.controller = Controller()
        self.controller.reset()
        # 100 ms, ADV_NONCONN_IND, public address, all channels.
        self.controller.command(0x08, 0x0006, bytes([0xA0, 0x00, 0xA0, 0x00, 0x03, 0x00, 0x00]) + bytes(6) + bytes([0x07, 0x00]))

    def advertise(self, ad):
        """Disable, set the data, enable; returns the monotonic ns just before the enable command."""
        self.controller.command(0x08, 0x000A, b"\x00")
        self.controller.command(0x08, 0x0008, bytes([len(ad)]) + ad + bytes(31 - len(ad)))
        t0 = time.monotonic_ns()
        self.controller.command(0x08, 0x000A, b"\x01")
        return t0

    def close(self):
        self.controller.close()
