"""`routine run` under systemd's eyes: the notify protocol (READY, STATUS, WATCHDOG, STOPPING)
spoken to a datagram socket the test owns, the watchdog withheld while the work queue is
wedged, and log records as journald receives them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from test_daemon import MINUTELY, daemon, only_schedule, status, wait_for


class Datagrams:
    """A socket the test owns, standing in for systemd's: collects every datagram with its time."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.received: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.received.append((time.monotonic(), data.decode("utf-8", errors="replace")))

    def lines(self, prefix: str) -> list[tuple[float, str]]:
        return [(t, line) for t, msg in list(self.received) for line in msg.splitlines() if line.startswith(prefix)]

    def close(self):
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def test_notify_ready_status_watchdog_and_wedged_queue_stops_pings(initialised, ollama, tmp_path):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    # A step may take 2 x request_timeout per attempt, times its alias and one fallback, plus
    # a margin: 14 s here, so a step silent for longer is wedged.
    home.config.write_text(home.config.read_text() + "request_timeout: 1\nretries: 0\n")
    # The wedge: a note the strategist always reads never answers (a FIFO with no writer, as
    # a hung network mount would): no timeout covers that read.
    okrs = home.vault / "Plans" / "OKRs.md"
    okrs.unlink()
    os.mkfifo(okrs)
    systemd = Datagrams(tmp_path / "notify.sock")
    home.env.update(NOTIFY_SOCKET=systemd.path, WATCHDOG_USEC="2000000")
    try:
        with daemon(home) as proc:
            ready = wait_for(lambda: systemd.lines("READY=1"), 30, "READY=1")
            statuses = systemd.lines("STATUS=")
            assert statuses and statuses[0][0] <= ready[0][0] + 0.01
            assert "next every-minute" in statuses[0][1] and "models:" in statuses[0][1], statuses[0][1]
            wait_for(lambda: len(systemd.lines("WATCHDOG=1")) >= 3, 10, "three watchdog pings")

            fire = subprocess.Popen([sys.executable, "-m", "routine", "fire", "strategist", "--json"], env=home.env,
                                    cwd=home.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_for(lambda: status(home)["queue"]["running"], 10, "the fire to run")
            unhealthy = wait_for(lambda: [s for s in systemd.lines("STATUS=") if "not healthy" in s[1]], 40,
                                 "the daemon to call itself unhealthy")
            assert "fire strategist has shown no progress" in unhealthy[0][1]
            st = status(home)
            assert st["health"]["ok"] is False and "no progress" in st["health"]["problems"][0]
            pings_then = len(systemd.lines("WATCHDOG=1"))
            time.sleep(3.5)  # more than three ping intervals of 1 s
            assert len(systemd.lines("WATCHDOG=1")) == pings_then, "pings went on while the queue was wedged"
            assert proc.poll() is None

            with open(okrs, "w") as writer:  # the mount comes back: the read returns
                writer.write("# OKRs\n- KR1: ship the thing\n")
            out, err = fire.communicate(timeout=60)
            assert fire.returncode == 0, err
            assert json.loads(out)["status"] == "ok"
            wait_for(lambda: len(systemd.lines("WATCHDOG=1")) > pings_then, 10, "pings to resume")
            assert status(home)["health"]["ok"] is True

            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
        assert systemd.lines("STOPPING=1")
    finally:
        systemd.close()
