"""`routine run` under systemd's eyes: the notify protocol (READY, STATUS, WATCHDOG, STOPPING)
spoken to a datagram socket the test owns, the watchdog withheld while the work queue is
wedged, and log records as journald receives them."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

from test_daemon import MINUTELY, daemon, only_schedule, status, wait_for
from waits import scaled


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


def test_notify_ready_status_and_watchdog_pings_then_stopping(initialised, ollama, tmp_path):
    """What systemd is told: READY after STATUS, watchdog pings while healthy, STOPPING at the end.
    (The wedged-queue half of this test wedged a step on a FIFO; reads now refuse FIFOs at once,
    so no outside wedge is left: the unhealthy path is covered by tests/test_supervise.py.)"""
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    systemd = Datagrams(tmp_path / "notify.sock")
    home.env.update(NOTIFY_SOCKET=systemd.path, WATCHDOG_USEC="2000000")
    try:
        with daemon(home) as proc:
            ready = wait_for(lambda: systemd.lines("READY=1"), 30, "READY=1")
            statuses = systemd.lines("STATUS=")
            assert statuses and statuses[0][0] <= ready[0][0] + 0.01
            assert "next every-minute" in statuses[0][1] and "models:" in statuses[0][1], statuses[0][1]
            wait_for(lambda: len(systemd.lines("WATCHDOG=1")) >= 3, 10, "three watchdog pings")
            out = home.run("fire", "strategist", "--json", check=True).stdout
            assert json.loads(out)["status"] == "ok"
            assert status(home)["health"]["ok"] is True
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=scaled(30)) == 0
        assert systemd.lines("STOPPING=1")
    finally:
        systemd.close()


def _journal_records(datagrams: Datagrams) -> list[dict]:
    """Decode journald's native protocol: KEY=value lines, or KEY\\n<le64 length><bytes>\\n."""
    records = []
    for _, text in list(datagrams.received):
        data, fields, i = text.encode(), {}, 0
        while i < len(data):
            nl = data.index(b"\n", i)
            line = data[i:nl]
            if b"=" in line:
                key, value = line.split(b"=", 1)
                i = nl + 1
            else:
                key = line
                size = int.from_bytes(data[nl + 1:nl + 9], "little")
                value = data[nl + 9:nl + 9 + size]
                i = nl + 9 + size + 1
            fields[key.decode()] = value.decode()
        records.append(fields)
    return records


def test_log_records_carry_the_run_id_to_journald_and_to_plain_lines(initialised, ollama, tmp_path):
    home = initialised
    journal = Datagrams(tmp_path / "journal.sock")
    stderr_path = tmp_path / "stderr.txt"
    try:
        with open(stderr_path, "w") as stderr:
            st = os.fstat(stderr.fileno())
            env = {**home.env, "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}", "ROUTINE_JOURNAL_SOCKET": journal.path,
                   "ROUTINE_LOG_LEVEL": "INFO"}
            proc = home.starter.popen(["fire", "strategist", "--json"], env=env, cwd=home.root,
                                      stdout=subprocess.PIPE, stderr=stderr)
            out, _ = proc.communicate(timeout=scaled(120))
        assert proc.returncode == 0, stderr_path.read_text()
        run_id = json.loads(out)["run"]
        records = wait_for(lambda: [r for r in _journal_records(journal) if r.get("ROUTINE_RUN") == run_id], 5,
                           "the run's records in the journal")
        done = [r for r in records if "wrote Daily/" in r["MESSAGE"]]
        assert done, records
        assert done[0]["ROUTINE_AGENT"] == "strategist"
        assert done[0]["ROUTINE_MODEL"] == "ollama_chat/mistral:7b-instruct-q4_K_M"
        assert done[0]["SYSLOG_IDENTIFIER"] == "routine" and done[0]["PRIORITY"] == "6"
        assert done[0]["LOGGER"] == "routine.runner.step" and done[0]["CODE_FUNC"]
        assert "wrote Daily/" not in stderr_path.read_text()  # the journal got it, not the stream
    finally:
        journal.close()

    # On a terminal (or any plain stream): one line per record, each of the run with its id.
    plain = home.run("fire", "strategist", "--json", check=True, env_extra={"ROUTINE_LOG_LEVEL": "INFO"})
    run_id = json.loads(plain.stdout)["run"]
    run_lines = [line for line in plain.stderr.splitlines() if "strategist" in line]
    assert run_lines and all(f"[run {run_id}]" in line for line in run_lines), plain.stderr


def _prom_families(text: str) -> dict[str, dict]:
    """Parse node_exporter's textfile format strictly enough to catch a malformed file."""

    families: dict[str, dict] = {}
    sample = re.compile(
        r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (-?[0-9.e+]+)$'
    )
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in families, f"{name} described twice"
            families[name] = {"type": None, "samples": {}}
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert families[name]["type"] is None and kind in ("counter", "gauge")
            families[name]["type"] = kind
        else:
            m = sample.match(line)
            assert m, f"not a sample line: {line!r}"
            assert families[m[1]]["type"], f"{m[1]} has samples before its TYPE"
            families[m[1]]["samples"][m[2] or ""] = float(m[3])
    return families


def test_runs_record_metrics_and_the_daemon_keeps_textfile_and_dashboard_current(initialised, ollama):
    from routine.vault import resolve_wikilink, wikilinks

    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    dashboard = home.vault / "Routine" / "Dashboard.md"
    dashboard.write_text(dashboard.read_text() + "\nMy own line under the dashboard.\n")
    alert = home.vault / "Alerts" / "2026-11-21 0730 planner failed.md"
    alert.write_text("---\ntype: alert\nstatus: open\n---\nThe planner failed.\n")
    textfile = home.state / "metrics" / "routine.prom"
    with daemon(home) as proc:
        fired = json.loads(home.run("fire", "strategist", "--json", check=True).stdout)
        run_id, wrote = fired["run"], fired["wrote"]["path"]

        def counted():
            text = textfile.read_text() if textfile.exists() else ""
            return 'routine_runs_total{agent="strategist",status="ok"} 1' in text and text
        families = _prom_families(wait_for(counted, 15, "the textfile to count the run"))
        assert families["routine_runs_total"]["type"] == "counter"
        assert families["routine_tokens_total"]["samples"]['{agent="strategist",direction="out"}'] > 0
        assert families["routine_resident_models"]["samples"][""] == 1  # the stand-in Ollama holds mistral now
        assert families["routine_open_alerts"]["samples"][""] == 1
        assert families["routine_healthy"]["samples"][""] == 1
        assert "routine_next_fire_timestamp_seconds" in families and "routine_build_info" in families
        assert not [p for p in textfile.parent.iterdir() if p.name != "routine.prom"]  # no temp file left

        note = wait_for(lambda: wikilinks(dashboard.read_text()) and f"[[{wrote[:-3]}]]" in dashboard.read_text()
                        and dashboard.read_text(), 15, "the dashboard to link the note the run wrote")
        assert "If you still see only this text" not in note and "My own line under the dashboard." in note
        assert run_id in note and "mistral:7b-instruct-q4_K_M" in note and "every-minute" in note
        links = wikilinks(note)
        assert f"{alert.relative_to(home.vault).as_posix()[:-3]}" in links
        assert all(resolve_wikilink(home.vault, link) for link in links), links

        # Nothing changed, so a refresh leaves the note alone (no churn for sync tools).
        before, checked = dashboard.stat().st_mtime_ns, status(home)["dashboard"]["checked"]
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: status(home)["dashboard"]["checked"] != checked, 15, "a dashboard refresh")
        assert dashboard.stat().st_mtime_ns == before

    shown = json.loads(home.run("runs", "show", run_id, "--json", check=True).stdout)["metrics"]
    for key in ("duration_s", "model_s", "tokens_in", "tokens_out", "tokens_per_s", "cpu_s", "process_rss_mb",
                "mem_total_mb", "mem_available_mb", "version"):
        assert shown.get(key) is not None, key
    text = home.run("runs", "show", run_id, check=True).stdout
    assert "Metrics:" in text and "tokens/s:" in text and "memory available:" in text


def test_a_second_daemon_on_the_same_state_dir_refuses_to_start(initialised, tmp_path):
    home = initialised
    only_schedule(home, MINUTELY.replace('"* * * * *"', '"0 3 * * *"'))
    with daemon(home) as first:
        # As the system unit would be: its control socket elsewhere, the same state dir.
        second = home.run("run", env_extra={"ROUTINE_RUNTIME_DIR": str(tmp_path / "elsewhere")}, timeout=60)
        assert second.returncode == 1
        assert f"A routine daemon (pid {first.pid}) already runs with the state dir {home.state}" in second.stderr
        assert first.poll() is None
