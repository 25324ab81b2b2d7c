#!/usr/bin/env python3
"""A hostile (or broken) Basket server for the client's tests (Tests/EndToEndTests/HostileServerTests).

    hostile_server.py MODE LOGFILE

Listens on 127.0.0.1 on a free port, prints "listening on PORT", and answers the Basket API the
way MODE says. Every request is appended to LOGFILE as "METHOD PATH AUTHORIZATION" so a test can
see what the client sent (and where its token went). Modes:

    redirect     every /v1 request answers 307 to /stolen on this same server (a client that
                 follows it sends its token there: the log shows it)
    push-fields  a push answers 200 {"ok": true}: no accepted, cursor or epoch
    foreign      pages hold an operation of another list
    clock        a push is refused with clock_skew and a server time ten years ahead
    more         every page says more follows but holds nothing
    epochs       every page has a new epoch
    truncated    every /v1 answer announces more bytes than it sends, then closes
    oversized    every /v1 answer is a 40 MiB JSON body
    escape       errors whose message carries terminal escape sequences
    gzipbomb     every /v1 answer is 1 GiB of JSON gzipped into about a megabyte
    drip         every /v1 answer sends its head, then a byte every 2 s, forever

Anything that is not the mode's target gets a plausible answer (accounts, tokens, lists).
Loopback only; it stops when the test kills it.
"""
import json
import sys
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
LOG = sys.argv[2]
OTHER_LIST = "0123456789abcdef0123456789abcdef"


def now_ms():
    return int(time.time() * 1000)


def gzip_bomb():
    """1 GiB of a JSON string's padding, gzipped (about 1 MB), made once at start."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [packer.compress(b'{"lists": [], "pad": "')]
    chunk = b"x" * (1 << 20)
    for _ in range(1024):
        parts.append(packer.compress(chunk))
    parts.append(packer.compress(b'"}'))
    parts.append(packer.flush())
    return b"".join(parts)


BOMB = gzip_bomb() if MODE == "gzipbomb" else b""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with open(LOG, "a") as log:
            log.write(f"{self.command} {self.path} {self.headers.get('Authorization', '-')}\n")

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status, obj=None, raw=None, length=None, headers=()):
        data = raw if raw is not None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length if length is not None else len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def page(self, list_id, after):
        ops = "basket-ops 1\nL " + list_id + "\n"
        if MODE == "foreign":
            item = uuid.uuid4().hex
            ops = "basket-ops 1\nL " + OTHER_LIST + "\n" + f"{item}\tname\t{(now_ms() << 16):016x}\t0000000000000009\t=Stray\n"
            return {"count": 1, "cursor": after + 1, "epoch": "e1", "historyComplete": True, "more": False,
                    "serverTime": now_ms(), "ops": ops}
        if MODE == "more":
            return {"count": 0, "cursor": after, "epoch": "e1", "historyComplete": True, "more": True,
                    "serverTime": now_ms(), "ops": ops}
        epoch = uuid.uuid4().hex[:16] if MODE == "epochs" else "e1"
        return {"count": 0, "cursor": after, "epoch": epoch, "historyComplete": True, "more": False,
                "serverTime": now_ms(), "ops": ops}

    def handle_any(self):
        self.record()
        body = self.body()
        path = self.path.split("?")[0]
        query = dict(p.split("=", 1) for p in self.path.split("?", 1)[1].split("&")) if "?" in self.path else {}
        if path == "/stolen":
            return self.send(200, {"stolen": True})
        if MODE == "redirect" and path.startswith("/v1"):
            port = self.server.server_address[1]
            return self.send(307, {}, headers=[("Location", f"http://127.0.0.1:{port}/stolen")])
        if MODE == "truncated" and path.startswith("/v1"):
            self.send(200, raw=b'{"lists": [', length=5000)
            self.close_connection = True
            return
        if MODE == "oversized" and path.startswith("/v1"):
            return self.send(200, raw=b'{"lists": [], "pad": "' + b"x" * (40 << 20) + b'"}')
        if MODE == "gzipbomb" and path.startswith("/v1"):
            return self.send(200, raw=BOMB, headers=[("Content-Encoding", "gzip")])
        if MODE == "drip" and path.startswith("/v1"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            for _ in range(600):  # 20 minutes at most; the test kills it long before
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(2)
            self.close_connection = True
            return
        if MODE == "escape" and path.startswith("/v1/lists"):
            return self.send(403, {"error": "forbidden\x1b[2J", "message": "go away \x1b]0;pwned\x07\x1b[31m"})
        if path == "/v1/accounts":
            return self.send(201, {"id": 1, "name": "alice"})
        if path == "/v1/tokens":
            return self.send(201, {"token": "t0k3n", "account": "alice"})
        if path == "/v1/lists" and self.command == "GET":
            return self.send(200, {"lists": []})
        if path == "/v1/lists" and self.command == "POST":
            list_id = json.loads(body or b"{}").get("id", "")
            return self.send(201, {"id": list_id, "role": "owner", "epoch": "e1", "cursor": 0})
        parts = path.split("/")
        if len(parts) == 5 and parts[1] == "v1" and parts[2] == "lists" and parts[4] == "ops":
            list_id = parts[3]
            if self.command == "POST":
                if MODE == "push-fields":
                    return self.send(200, {"ok": True})
                if MODE == "clock":
                    ahead = now_ms() + 10 * 365 * 86_400_000
                    return self.send(400, {"error": "clock_skew", "message": "too far ahead",
                                           "serverTime": ahead, "offsetMilliseconds": 1})
                text = json.loads(body).get("ops", "")
                count = sum(1 for line in text.split("\n")[1:] if line and not line.startswith("L "))
                return self.send(200, {"accepted": count, "duplicates": 0, "cursor": count, "epoch": "e1",
                                       "serverTime": now_ms()})
            return self.send(200, self.page(list_id, int(query.get("after", "0"))))
        return self.send(404, {"error": "not_found", "message": "no route"})

    do_GET = handle_any
    do_POST = handle_any
    do_DELETE = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
