"""Run inside the systemd container (tests/test_systemd_real.py): what routine talks to there.

The stand-in Ollama on loopback, scripted so that the tester agent runs one command in the
Builder's sandbox; two ntfy servers (a POST with a body is all they are) and a calendar server,
each on an address of the container's own loopback (its own network namespace: nothing of the
machine's network). What each ntfy server receives is appended to OUT/received-ADDRESS.jsonl.

    python tests/systemd_box_peers.py OUT   # prints "ready", writes OUT/pid, serves until SIGTERM
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from fake_ollama import FakeOllama

MISTRAL = "mistral:7b-instruct-q4_K_M"
NTFY = ("192.168.1.30", "192.168.1.31")
CALENDAR = "192.168.1.20"
COMMAND = "echo made under systemd > /work/made.txt && cat /work/made.txt"
ICS = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//routine test//EN\r\nBEGIN:VEVENT\r\nUID:1@box\r\n"
       "DTSTART:20200101T090000Z\r\nDTEND:20200101T100000Z\r\nRRULE:FREQ=DAILY\r\nSUMMARY:Stand-up\r\n"
       "END:VEVENT\r\nEND:VCALENDAR\r\n")


def serve(address: str, out: Path) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with open(out / f"received-{address}.jsonl", "a") as f:
                f.write(json.dumps({"path": self.path, "body": body.decode("utf-8", "replace")}) + "\n")
            self._answer(b'{"id": "1"}', "application/json")

        def do_GET(self) -> None:  # noqa: N802
            with open(out / f"fetched-{address}.txt", "a") as f:
                f.write(self.path + "\n")
            self._answer(ICS.encode(), "text/calendar")

        def _answer(self, data: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((address, 80), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    out = Path(sys.argv[1])
    call = {"tool_calls": [{"name": "run_command", "arguments": {"command": COMMAND}}]}
    ollama = FakeOllama(host="127.0.0.1", port=11434)
    ollama.script(MISTRAL, [call, "Ran it."])
    ollama.start()
    servers = [serve(a, out) for a in (*NTFY, CALENDAR)]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    (out / "pid").write_text(str(os.getpid()))
    print("ready", flush=True)
    while not stop.wait(0.5):  # a wait with a timeout: the SIGTERM handler runs between waits
        pass
    for server in servers:
        server.shutdown()
    ollama.stop()


if __name__ == "__main__":
    main()
