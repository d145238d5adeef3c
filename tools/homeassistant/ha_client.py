"""Clients for tools/homeassistant/ha_test.py, standard library only: Home Assistant's REST and
websocket APIs (RFC 6455, just what a client of Home Assistant needs) and the gateway's socket."""
import base64
import json
import os
import socket
import struct
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from line_client import LineClient  # noqa: E402,F401  (the gateway socket, shared with the bench)

CLIENT_ID_PATH = "/"   # onboarding and /auth/token name a client by a URL on Home Assistant itself


class HomeAssistantAPI:
    def __init__(self, address):
        self.address = address
        self.token = None

    def rest(self, method, path, body=None, form=None, timeout=60):
        headers = {}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        if form is not None:
            data, headers["Content-Type"] = urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(f"http://{self.address}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            raise SystemExit(f"FAIL: {method} {path}: HTTP {error.code}: {error.read().decode(errors='replace')}")
        return json.loads(text) if text else None

    def onboarding_ready(self):
        """True once the HTTP API answers and onboarding's user step is there to be done."""
        with urllib.request.urlopen(f"http://{self.address}/api/onboarding", timeout=10) as response:
            steps = json.loads(response.read())
        return any(s.get("step") == "user" and not s.get("done") for s in steps)

    def onboard(self, username, password):
        """The owner made through onboarding, then a token for it from /auth/token."""
        client_id = f"http://{self.address}{CLIENT_ID_PATH}"
        user = self.rest("POST", "/api/onboarding/users", {"client_id": client_id, "name": "Owner", "username": username,
                                                            "password": password, "language": "en"})
        tokens = self.rest("POST", "/auth/token", form={"grant_type": "authorization_code", "code": user["auth_code"],
                                                         "client_id": client_id})
        self.token = tokens["access_token"]

    def websocket(self):
        return WebSocket(self.address, self.token)


class WebSocket:
    """Home Assistant's websocket API: authenticated at once; `call` sends a command, returns its result."""

    def __init__(self, address, token):
        host, port = address.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /api/websocket HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise OSError("websocket: the connection closed during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError(f"websocket: handshake refused: {head!r}")
        self.next_id = 1
        assert self.receive()["type"] == "auth_required"
        self.send({"type": "auth", "access_token": token})
        reply = self.receive()
        if reply["type"] != "auth_ok":
            raise SystemExit(f"FAIL: websocket auth: {reply}")

    def call(self, command, **fields):
        message_id, self.next_id = self.next_id, self.next_id + 1
        self.send({"id": message_id, "type": command, **fields})
        while True:
            reply = self.receive()
            if reply.get("id") == message_id and reply.get("type") == "result":
                if not reply.get("success"):
                    raise SystemExit(f"FAIL: websocket {command}: {reply}")
                return reply["result"]

    def send(self, message, opcode=0x1):
        payload = json.dumps(message).encode() if opcode == 0x1 else message
        mask = os.urandom(4)   # a client's frames are masked
        length = len(payload)
        header = bytes([0x80 | opcode])
        if length < 126:
            header += bytes([0x80 | length])
        elif length < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", length)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", length)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self):
        data = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read(8))
            payload = self._read(length)   # a server's frames are not masked
            opcode = first & 0x0F
            if opcode == 0x9:
                self.send(payload, opcode=0xA)   # ping: pong
                continue
            if opcode == 0x8:
                raise OSError("websocket: closed by Home Assistant")
            data += payload
            if first & 0x80:
                return json.loads(data)

    def _read(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise OSError("websocket: connection closed")
            data += chunk
        return data

