"""The load bench's air (tools/bench/load.py): a scripted H4 controller (scripted_idle.Controller: it
answers every command as a Broadcom 4.1 chip) that plays a home's adverts at a fixed total rate.

The home mix, by advert number n (n % 50):
- 0: a new iBeacon (a device arriving: a found event, and a Home Assistant discovery config);
- 1: a frame of ours (one of 3 one-chunk messages of namespace `home`, the gateway's API key);
- 2…9: phone-like noise (16 %): Apple Nearby Info manufacturer data (a byte changing at every
  advert) and a name from 30 phones on resolvable private addresses, all taking new addresses every
  10,000 adverts of the mix (~53 of each phone's);
- the rest (80 %): repeats of the KNOWN iBeacons (300, round robin), each repeat's RSSI one step on
  through −60…−66 dBm, so that some repeats move a found entry's signal.

`play_only` plays one kind alone: `arrivals` (new iBeacons only) or `repeats` (the known ones at one
fixed RSSI), the two sides of a found event's cost (tools/bench/load.py).

Each advert is one LE Advertising Report event (one report), written when due; adverts due within
the same millisecond share one write (at 2,000/s two per write, as a USB controller's 1 ms interrupt
polling delivers them).
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import process  # noqa: E402  (the frame format's independent implementation, loaded there)
import scripted_idle  # noqa: E402

KNOWN = 300
NAMESPACE = "home"
FRAME_TYPES = ["t0", "t1", "t2"]
UUID_KNOWN = bytes.fromhex("e2c56db5dffb48d2b060d0f5a71096e0")
UUID_NEW = bytes.fromhex("f7826da64fa24e988024bc5b71e0893e")
FLAGS = bytes([2, 0x01, 0x06])


def ibeacon(uuid, major, minor):
    return (FLAGS + bytes([26, 0xFF, 0x4C, 0x00, 0x02, 0x15]) + uuid + major.to_bytes(2, "big")
            + minor.to_bytes(2, "big") + bytes([0xC5]))


def report(event_type, address_type, address, ad, rssi):
    """An LE Advertising Report event, H4-framed, with one report."""
    body = bytes([0x02, 1, event_type, address_type]) + address + bytes([len(ad)]) + ad + bytes([rssi & 0xFF])
    return bytes([0x04, 0x3E, len(body)]) + body


class HomeMix(scripted_idle.Controller):
    def __init__(self, path, api_key):
        super().__init__(path)
        self.api_key = api_key
        self.n = 0           # adverts played so far (continues across windows)
        self.new = 0         # new devices so far
        self.repeats = [0] * KNOWN
        self.next_known = 0
        self.known = [ibeacon(UUID_KNOWN, 1, k) for k in range(KNOWN)]
        self.frames = {}     # epoch → the 3 frames' AD payloads

    def _report(self):
        return   # no neighbour of scripted_idle's: play() sends everything

    def wait_scanning(self, timeout=15):
        deadline = time.monotonic() + timeout
        while not (self.scanning and self.conn):
            if time.monotonic() > deadline:
                raise RuntimeError("the reader never enabled scanning on the scripted controller")
            time.sleep(0.01)

    def _frame_ads(self):
        epoch = int(time.time()) // process.ROTATE_S
        if epoch not in self.frames:
            f = process._frames
            k = f.epoch_key(self.api_key, epoch)
            self.frames = {epoch: [f.ble(f.chunks(k, f.body(NAMESPACE, t, b"hi"), 19)[0]) for t in FRAME_TYPES]}
        return self.frames[epoch]

    def known_advert(self, k, rssi=None):
        r = self.repeats[k]
        self.repeats[k] += 1
        address = bytes([k & 0xFF, k >> 8, 0x10, 0x20, 0x30, 0xC1])   # random static
        return report(0x03, 0x01, address, self.known[k], -60 - r % 7 if rssi is None else rssi)

    def new_advert(self):
        """A device arriving: an iBeacon never heard before (a found event for the reader)."""
        j = self.new
        self.new += 1
        address = bytes([j & 0xFF, (j >> 8) & 0xFF, j >> 16, 0x44, 0x55, 0xC2])
        return report(0x03, 0x01, address, ibeacon(UUID_NEW, 2, j & 0xFFFF), -70)

    def advert(self):
        n, slot = self.n, self.n % 50
        self.n += 1
        if slot == 0:
            return self.new_advert()
        if slot == 1:
            frame = self._frame_ads()[(n // 50) % len(FRAME_TYPES)]
            return report(0x03, 0x01, bytes([0x01, 0x02, 0x03, 0x04, 0x05, 0xC3]), frame, -55)
        if slot < 10:
            phone = (n // 50 * 8 + slot - 2) % 30
            epoch = n // 10_000   # the phones' new addresses (a rotation, shortened)
            address = bytes([phone, epoch & 0xFF, (epoch >> 8) & 0xFF, 0x77, 0x66, 0x45])   # resolvable private
            ad = (bytes([2, 0x01, 0x1A, 7, 0xFF, 0x4C, 0x00, 0x10, 0x03, 0x1B, n & 0xFF])
                  + bytes([0x0C, 0x09]) + b"phone" + bytes(6))
            return report(0x00, 0x01, address, ad[:31], -75 - n % 10)
        return self.known_advert(self._next_known())

    def send(self, data):
        """Written when the reader scans (a controller reports nothing otherwise); False when it does not."""
        conn = self.conn
        if conn is None:
            raise RuntimeError("the reader went away")
        if not self.scanning:
            return False
        conn.sendall(data)
        return True

    def warm_up(self, rate=1000):
        """Every known device once, at `rate`: afterwards each is found."""
        self._play([self.known_advert(k) for k in range(KNOWN)], rate)

    def play(self, rate, seconds):
        """The home mix at `rate` adverts/s for `seconds`; returns how many were written (none while
        the reader has scanning off)."""
        total = int(rate * seconds)
        return self._play(None, rate, total)

    def play_only(self, kind, rate, seconds):
        """One kind of advert alone at `rate`: `arrivals` (every advert a new iBeacon: a found event
        each) or `repeats` (the known iBeacons at one fixed RSSI: nothing a client can see changes)."""
        make = (self.new_advert if kind == "arrivals"
                else lambda: self.known_advert(self._next_known(), rssi=-63))
        return self._play(None, rate, int(rate * seconds), make)

    def _next_known(self):
        self.next_known = (self.next_known + 1) % KNOWN
        return self.next_known

    def _play(self, fixed, rate, total=None, make=None):
        total = len(fixed) if fixed is not None else total
        make = make or self.advert
        t0, sent, written = time.monotonic(), 0, 0
        while sent < total:
            due = min(total, int((time.monotonic() - t0) * rate) + 1)
            if due > sent:
                chunk = fixed[sent:due] if fixed is not None else [make() for _ in range(due - sent)]
                if self.send(b"".join(chunk)):
                    written += due - sent
                sent = due
            wait = t0 + sent / rate - time.monotonic()
            time.sleep(max(wait, 0.001))
        return written
