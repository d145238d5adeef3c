"""A client of the gateway's socket for the Python tools (the bench, the Home Assistant stage): it
reads on a thread of its own, keeps each event line with its CLOCK_MONOTONIC stamp, and answers
`request` with the command's reply (OK…, ERR…, PONG)."""
import socket
import threading
import time


class LineClient:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.lock = threading.Condition()
        self.lines = []
        self.replies = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buffer = b""
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            now = time.monotonic_ns()
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            with self.lock:
                for line in lines:
                    text = line.decode(errors="replace")
                    if text.startswith(("OK", "ERR", "PONG")):
                        self.replies.append(text)
                    else:
                        self.lines.append((now, text))
                self.lock.notify_all()

    def request(self, line, timeout=5):
        with self.lock:
            self.replies.clear()
            self.sock.sendall((line + "\n").encode())
            if not self.lock.wait_for(lambda: self.replies, timeout):
                raise TimeoutError(f"no reply to {line!r} within {timeout} s")
            return self.replies.pop(0)

    def wait_topic(self, topic, timeout):
        """The first event line of `topic` (stamp, text), or (None, None) after `timeout` s."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for stamp, text in self.lines:
                    if text.split(" ", 1)[0] == topic:
                        return stamp, text
                left = deadline - time.monotonic()
                if left <= 0 or not self.lock.wait(left):
                    if time.monotonic() >= deadline:
                        return None, None

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
