"""A stdio MCP server served over streamable HTTP, byte for byte, for the gateway's tests:

  http_bridge.py --port-file FILE [--json] -- COMMAND ARGS...

Starts COMMAND (a stdio server such as scripted_server.py) and serves
http://127.0.0.1:PORT/mcp on a free port, writing PORT to FILE once it listens. A POSTed
request is written to the server's stdin as it came; every line the server writes until the
answer to that request is sent back as is, one server-sent event each (`text/event-stream`),
or with --json only the answer, as an `application/json` body. So what a misbehaving stdio
server writes (a lone surrogate escape, nesting past 128 levels) reaches an HTTP client
unchanged, which no SDK-built server would send. Notifications and answers POSTed by the
client are written to the server and acknowledged with 202. One request is served at a
time; GET (a standalone event stream) is 405, DELETE 200.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSION = "bridge-session-1"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--json", action="store_true")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()

    def send(line: bytes) -> None:
        server.stdin.write(line.rstrip(b"\n") + b"\n")
        server.stdin.flush()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def reply(self, status: int, body: bytes = b"", content_type: str | None = None):
            try:
                self.send_response(status)
                if content_type:
                    self.send_header("Content-Type", content_type)
                self.send_header("Mcp-Session-Id", SESSION)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (a toolgate call exits without reading DELETE's)

        def do_GET(self):
            self.reply(405)

        def do_DELETE(self):
            self.reply(200)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            message = json.loads(body)
            with lock:
                send(body)
                if "method" not in message or "id" not in message:
                    self.reply(202)
                    return
                lines = []
                while True:
                    line = server.stdout.readline()
                    if not line:
                        break
                    lines.append(line.rstrip(b"\n"))
                    # the answer: its id, no method (parsed loosely: it may not be valid JSON)
                    head = line[:200]
                    if b'"method"' not in line and (
                        f'"id": {json.dumps(message["id"])}'.encode() in head
                        or f'"id":{json.dumps(message["id"])}'.encode() in head
                    ):
                        break
            if args.json:
                self.reply(200, lines[-1] if lines else b"", "application/json")
            else:
                events = b"".join(b"event: message\ndata: " + l + b"\n\n" for l in lines)
                self.reply(200, events, "text/event-stream")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(httpd.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        httpd.serve_forever()
    finally:
        server.kill()


if __name__ == "__main__":
    main()
