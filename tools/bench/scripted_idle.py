"""Idle on a controller like a Pi's: the process bench's gateway A (two subscriptions, one
publication) on a scripted H4 controller that answers as a Broadcom Bluetooth 4.1 chip (manufacturer
0x000F, no extended advertising, as TestSupport's ScriptedController does; with --extended, extended
advertising with 4 sets) and reports a neighbour's
advert 10 times a second (A hears 10 adverts/s on btvirt too). Measures A's CPU and the HCI commands
it sends per second, by opcode, over S seconds; several builds interleaved, round by round.
  .venv/bin/python tools/bench/scripted_idle.py [--rounds N] [--seconds S] [--extended] LABEL=BINARY...
(NEARBY_GATEWAY_BOARDS=boards when the binary is outside the repository.)
"""
import argparse
import collections
import os
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gateway_process  # noqa: E402

NAMES = {0x2008: "LE Set Advertising Data", 0x200A: "LE Set Advertising Enable", 0x200C: "LE Set Scan Enable",
         0x2005: "LE Set Random Address", 0x2006: "LE Set Advertising Parameters"}


class Controller:
    """One connection at a time; answers every command with Command Complete, status 0."""

    def __init__(self, path, extended=False, report_interval=0.1):
        self.path, self.interval, self.extended = path, report_interval, extended
        self.commands = []   # (monotonic time, opcode)
        self.scanning, self.conn, self.stopped = False, None, False
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        threading.Thread(target=self._accept, daemon=True).start()
        threading.Thread(target=self._report, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.conn = conn
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        buf = b""
        while True:
            try:
                chunk = conn.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while len(buf) >= 4 and buf[0] == 1 and len(buf) >= 4 + buf[3]:
                opcode, params = buf[1] | buf[2] << 8, buf[4:4 + buf[3]]
                buf = buf[4 + buf[3]:]
                self._answer(conn, opcode, params)

    def _answer(self, conn, opcode, params):
        returned = {0x1001: bytes([7, 0, 0, 7, 0x0F, 0, 0, 0]),   # HCI 4.1, Broadcom
                    # LE features: extended advertising (bit 12) only with --extended
                    0x2003: bytes([0, 0x10 if self.extended else 0, 0, 0, 0, 0, 0, 0]),
                    0x203A: bytes([31, 0]),    # LE Read Maximum Advertising Data Length
                    0x203B: bytes([4]),        # LE Read Number of Supported Advertising Sets
                    0x1009: bytes([0x42, 0, 0x5C, 0x12, 0x34, 0x56])}.get(opcode, b"")
        if opcode in (0x200C, 0x2042):   # LE Set (Extended) Scan Enable
            self.scanning = params[:1] == b"\x01"
        self.commands.append((time.monotonic(), opcode))
        body = bytes([1, opcode & 0xFF, opcode >> 8, 0]) + returned
        conn.sendall(bytes([4, 0x0E, len(body)]) + body)

    def _report(self):
        seq = 0
        while not self.stopped:
            time.sleep(self.interval)   # the controller's own pace
            conn = self.conn
            if conn is None or not self.scanning:
                continue
            seq = (seq + 1) & 0xFF
            ad = bytes([5, 0xFF, 0x4C, 0, 0x10, seq])
            if self.extended:   # LE Extended Advertising Report: legacy ADV_NONCONN_IND, RSSI -60
                report = (bytes([1, 0x10, 0, 0, 1, 2, 3, 4, 5, 0xC6, 1, 0, 0xFF, 0x7F, 0xC4, 0, 0, 0]) + bytes(6)
                          + bytes([len(ad)]) + ad)
                subevent = 0x0D
            else:
                report = bytes([1, 0, 0, 1, 2, 3, 4, 5, 0xC6, len(ad)]) + ad + bytes([0xC4])   # one report, RSSI -60
                subevent = 0x02
            try:
                conn.sendall(bytes([4, 0x3E, len(report) + 1, subevent]) + report)
            except OSError:
                pass

    def stop(self):
        self.stopped = True
        self.listener.close()
        if self.conn:
            self.conn.close()
        os.unlink(self.path)


def window(binary, seconds, extended, lost_after=2):
    work = tempfile.mkdtemp(prefix="scripted-idle-")
    path = os.path.join(work, "controller.sock")
    controller = Controller(path, extended)
    key = f"scripted-idle-{os.getpid()}"
    conf = gateway_process.config(work, "a", key, lost_after, gateway_process.subscription("bench", lost_after)
                          + gateway_process.subscription("other", lost_after) + gateway_process.publication("bench-a", "hello", "from-a"))
    with open(conf) as f:
        text = f.read().replace('device = "h4:/tmp/bt-server-le"', f'device = "h4:{path}"')
    with open(conf, "w") as f:
        f.write(text)
    procs = []
    try:
        a = gateway_process.gateway(binary, conf, procs)
        gateway_process.wait_path(f"{work}/a.sock", a)
        time.sleep(2)
        c0, t0 = gateway_process.cpu_seconds(a.pid), time.monotonic()
        time.sleep(seconds)
        t1 = time.monotonic()
        cpu = (gateway_process.cpu_seconds(a.pid) - c0) / (t1 - t0)
        counts = collections.Counter(op for t, op in controller.commands if t0 <= t < t1)
        return {"cpu": cpu, "rss": gateway_process.memory(a.pid)["VmRSS"], "per_s": {op: n / (t1 - t0) for op, n in counts.items()},
                "load": os.getloadavg()[0]}
    finally:
        for p in procs:
            gateway_process.stop(p)
        controller.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--extended", action="store_true", help="a controller with extended advertising and 4 sets")
    ap.add_argument("binaries", nargs="+", help="LABEL=BINARY")
    args = ap.parse_args()
    for r in range(args.rounds):
        for label, binary in (b.split("=", 1) for b in args.binaries):
            row = window(binary, args.seconds, args.extended)
            commands = ", ".join(f"{NAMES.get(op, hex(op))} {n:.1f}" for op, n in sorted(row["per_s"].items()))
            print(f"round {r} {label:>8}: CPU {100 * row['cpu']:.2f} %, RSS {row['rss']:.2f} MB, "
                  f"HCI commands/s {sum(row['per_s'].values()):.1f} ({commands or 'none'}); load1 {row['load']:.2f}", flush=True)


if __name__ == "__main__":
    main()
