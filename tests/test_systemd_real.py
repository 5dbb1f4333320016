"""routine's system unit under a real systemd, booted in a container of its own (tests/systemd_box.py):
installed with `routine service install` as the README says, then driven with systemctl. Ready only
after READY=1, a hang killed by the watchdog and restarted, only the vault and the state dir
writable, the IP filter letting through the configured notify server and dropping one named after
install, `systemctl reload`, a clean stop, ROUTINE_RUN in the journal, run_command's bubblewrap
sandbox inside the unit. Skipped, with the reason, where the machine cannot boot systemd."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from systemd_box import REPO, Box, python_paths
from waits import scaled, wait_until

pytestmark = pytest.mark.xdist_group("systemd-box")  # one container at a time

UNIT = "routine@alice.service"
VAULT = "/home/alice/Vault"
STATE = "/home/alice/.local/state/routine"
CONFIG = "/home/alice/.config/routine/routine.yaml"
WATCHDOG_S = 6
# Test-only settings beside the installed unit: this checkout's code, the hashing embedder (no model
# download), litellm's bundled price list, and a short watchdog and restart delay so the test is quick.
DROP_IN = f"""[Service]
Environment=PYTHONPATH={REPO} ROUTINE_TEST_EMBEDDER=hashing LITELLM_LOCAL_MODEL_COST_MAP=True
WatchdogSec={WATCHDOG_S}s
RestartSec=1s
"""
TESTER = textwrap.dedent("""\
    ---
    agent: tester
    role: Runs one command
    model: general
    reads: ["Projects/**"]
    writes: ["Projects/**"]
    approval: none
    tools: [run_command]
    write: {note: "Projects/Tester log.md", section: "Result"}
    task: Run the command.
    ---
    You run commands.
    """)
SCHEDULE = textwrap.dedent("""\
    blocks:
      check:
        cron: "0 3 * * *"
        steps:
          - agent: tester
            inputs: ["calendar: today"]
    """)
ALICE_ENV = {"PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "ROUTINE_TEST_EMBEDDER": "hashing",
             "ROUTINE_RUNTIME_DIR": "/run/routine/alice"}


@pytest.fixture
def box(tmp_path):
    box = Box(tmp_path / "box")
    canary = tmp_path / "canary"  # in the machine's /tmp: the container's systemd must not clean it
    canary.write_text("still here")
    binds = [p for p in python_paths() if not str(p).startswith("/usr")]
    try:
        box.boot(binds)
        assert canary.read_text() == "still here"
        yield box
    finally:
        box.close()
    assert canary.read_text() == "still here"


def routine(box: Box, *args: str, check: bool = True, timeout: float = 120, env: dict[str, str] | None = None):
    return box.run(str(Path(sys.prefix) / "bin" / "routine"), *args, user="alice", env=env or ALICE_ENV,
                   check=check, timeout=timeout)


def _alice(box: Box) -> None:
    # alice, her vault and config, as a person sets them up; this Python reachable to her.
    box.sh("useradd -m -s /bin/sh alice")
    for parent in Path(sys.executable).resolve().parents:
        box.run("chmod", "o+x", str(parent), check=False)
    routine(box, "init", VAULT)
    box.run("tee", "-a", CONFIG, user="alice", input=textwrap.dedent("""
        notify: {urls: [ntfy://192.168.1.30/routine], "on": [alerts]}
        calendars: [http://192.168.1.20/family.ics]
        sandbox: {workdir: Projects/Sandbox, timeout: 20s}
        """))
    box.sh(f"rm -f /home/alice/.config/routine/schedules/*.yaml && mkdir -p {VAULT}/Projects/Sandbox",
           user="alice")
    box.run("tee", "/home/alice/.config/routine/schedules/test.yaml", user="alice", input=SCHEDULE)
    box.run("tee", f"{VAULT}/Agents/Tester.md", user="alice", input=TESTER)



def journal(box: Box, *args: str) -> str:
    return box.run("journalctl", "-u", UNIT, "--no-pager", *args).stdout


def received(box: Box, address: str) -> list[dict]:
    proc = box.run("cat", f"/run/peers/received-{address}.jsonl", check=False)
    return [json.loads(line) for line in proc.stdout.splitlines()]


@contextmanager
def lan(box: Box) -> Iterator[None]:
    """The LAN of the README, on the container's own loopback: Ollama, two phones' ntfy servers, a calendar."""
    box.sh("for a in 192.168.1.20 192.168.1.30 192.168.1.31; do ip addr add $a/32 dev lo; done; mkdir -p /run/peers")
    peers = box.spawn(sys.executable, str(REPO / "tests" / "systemd_box_peers.py"), "/run/peers",
                      env={"PYTHONPATH": str(REPO / "tests")})
    try:
        assert peers.stdout is not None and peers.stdout.readline().strip() == "ready"
        yield
    finally:
        box.sh("kill $(cat /run/peers/pid)", check=False)  # nsenter returns once its child has ended
        try:
            peers.wait(scaled(10))
        except subprocess.TimeoutExpired:
            peers.kill()


def test_the_system_unit_under_a_real_systemd(box):
    with lan(box):
        _check(box)


def test_the_user_unit_runs_lingering_and_doctor_checks_its_allow_list(box):
    """`service install --user` into alice's own service manager, kept running by linger."""
    with lan(box):
        _alice(box)
        box.run("loginctl", "enable-linger", "alice")
        uid = box.run("id", "-u", "alice").stdout.strip()
        wait_until(lambda: box.run("test", "-S", f"/run/user/{uid}/systemd/private", check=False).returncode == 0,
                   timeout=60, what="alice's lingering service manager")
        env = {**ALICE_ENV, "XDG_RUNTIME_DIR": f"/run/user/{uid}"}
        del env["ROUTINE_RUNTIME_DIR"]
        # In the container /proc/kmsg is nspawn's FIFO, which a user manager (systemd 252) has nothing to
        # cover with ("Failed to mount …/inaccessible/fifo to …/proc/kmsg"); on a machine it is a file.
        box.sh("mkdir -p ~/.config/systemd/user/routine.service.d && "
               "cat > ~/.config/systemd/user/routine.service.d/test.conf", user="alice",
               input=DROP_IN + "ProtectKernelLogs=no\n")
        install = routine(box, "service", "install", "--user", env=env, timeout=180, check=False)
        assert install.returncode == 0, box.run("journalctl", "--no-pager", "-n", "30", "-o", "cat").stdout
        assert "Enabled routine.service" in install.stdout, install.stdout
        assert "enable-linger" not in install.stdout  # lingering already: no hint
        assert "192.168.1.30 (notify (ntfy)) → 192.168.1.30" in install.stdout

        def user_show(prop: str) -> str:
            return box.run("systemctl", "--user", "show", "-p", prop, "--value", "routine.service", user="alice",
                           env={"XDG_RUNTIME_DIR": f"/run/user/{uid}"}).stdout.strip()

        assert user_show("ActiveState") == "active" and user_show("SubState") == "running"
        assert routine(box, "status", env=env).stdout.startswith("daemon: running")
        assert "ok   service: routine.service lets through every host" in routine(box, "doctor", env=env).stdout
        box.run("sed", "-i", "s|urls: \\[ntfy://192.168.1.30/routine\\]|urls: [ntfy://192.168.1.31/routine]|",
                CONFIG, user="alice")
        doctor = routine(box, "doctor", env=env, check=False)
        assert "FAIL service: routine.yaml names 192.168.1.31" in doctor.stdout, doctor.stdout
        assert "routine service install --user` again" in doctor.stdout


def _check(box: Box) -> None:
    _alice(box)
    box.sh(f"mkdir -p /etc/systemd/system/{UNIT}.d && cat > /etc/systemd/system/{UNIT}.d/test.conf",
           input=DROP_IN)

    # Installed as the README says (sudo routine service install): written, enabled, started.
    started = time.monotonic()
    install = box.run(str(Path(sys.prefix) / "bin" / "routine"), "service", "install", timeout=180,
                      env={"SUDO_USER": "alice", "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert "192.168.1.30 (notify (ntfy)) → 192.168.1.30" in install.stdout, install.stdout
    from routine.redact import source_name  # a calendar without `name:`: its host and a short hash, no path

    assert f"192.168.1.20 (calendar {source_name('http://192.168.1.20/family.ics')}) → 192.168.1.20" in install.stdout
    assert f"Enabled {UNIT}" in install.stdout, install.stdout
    unit_text = box.run("cat", f"/etc/systemd/system/{UNIT}").stdout
    assert re.search(r"^IPAddressAllow=localhost .*192\.168\.1\.30", unit_text, re.M), unit_text

    # Active (running) only once the daemon said READY=1: its own first lines come before "Started".
    assert box.show(UNIT, "ActiveState") == "active" and box.show(UNIT, "SubState") == "running"
    lines = journal(box, "-o", "cat").splitlines()
    started_at = next(i for i, line in enumerate(lines) if line.startswith("Started routine@alice.service"))
    starting_at = next(i for i, line in enumerate(lines) if line.startswith("Starting routine@alice.service"))
    assert any(line.startswith("timer block:check") for line in lines[starting_at:started_at]), lines
    assert box.show(UNIT, "StatusText"), "the daemon's STATUS= line"

    # The watchdog is fed while healthy: two of its intervals pass, the daemon is not restarted, and
    # its last ping came well after it started (systemd's clock is the machine's CLOCK_MONOTONIC).
    pid = box.show(UNIT, "MainPID")
    active_at = int(box.show(UNIT, "ActiveEnterTimestampMonotonic")) / 1e6
    wait_until(lambda: time.monotonic() > active_at + 2 * WATCHDOG_S, timeout=3 * WATCHDOG_S,
               what="two watchdog intervals to pass")
    assert box.show(UNIT, "MainPID") == pid and box.show(UNIT, "NRestarts") == "0"
    assert int(box.show(UNIT, "WatchdogTimestampMonotonic")) / 1e6 > active_at + WATCHDOG_S

    # The sandbox, seen from inside the unit: the vault and the state dir writable, nothing else.
    uid, gid = box.run("id", "-u", "alice").stdout.strip(), box.run("id", "-g", "alice").stdout.strip()
    for path, writable in ((f"{VAULT}/probe", True), (f"{STATE}/probe", True), ("/home/alice/probe", False),
                           ("/etc/probe", False), ("/usr/probe", False), ("/opt/probe", False)):
        tried = box.run("nsenter", "-t", pid, "-m", "-U", "--setuid", uid, "--setgid", gid,
                        "sh", "-c", f"echo x > {path} && rm {path}", check=False)
        assert (tried.returncode == 0) == writable, (path, tried.stderr)
        if not writable:
            assert "Read-only file system" in tried.stderr, (path, tried.stderr)

    # A run through the daemon: run_command in bubblewrap inside the unit, the LAN calendar read,
    # the note written to the vault.
    fired = routine(box, "fire", "check", timeout=180)
    assert "Wrote" in fired.stdout, fired.stdout + fired.stderr
    run_id = json.loads(routine(box, "runs", "list", "--json").stdout)[0]["id"]
    log = json.loads(routine(box, "runs", "show", run_id, "--json").stdout)["log"]
    ran = [json.loads(e["result"]) for e in log if e["type"] == "tool" and not e.get("refused")]
    assert ran and ran[0]["return_code"] == 0 and "made under systemd" in ran[0]["output"], log
    assert box.run("cat", f"{VAULT}/Projects/Sandbox/made.txt").stdout == "made under systemd\n"
    assert box.run("cat", "/run/peers/fetched-192.168.1.20.txt").stdout == "/family.ics\n"

    # A second phone named after install, taken in by `systemctl reload`.
    box.run("sed", "-i", "s|urls: \\[ntfy://192.168.1.30/routine\\]|urls: [ntfy://192.168.1.30/routine, "
            "ntfy://192.168.1.31/routine]|", CONFIG, user="alice")
    box.run("systemctl", "reload", UNIT)
    wait_until(lambda: "re-reading the config" in journal(box, "-o", "cat"), timeout=30,
               what="the daemon re-read its config on SIGHUP")
    assert box.show(UNIT, "MainPID") == pid
    # An alert (a schedule edit it rejects) goes to both phones: the first is told; the unit drops the
    # second, and the failed send, doctor and status say it is the filter's doing.
    box.sh("echo 'blocks: [not, a, mapping]' > /home/alice/.config/routine/schedules/broken.yaml", user="alice")
    try:
        wait_until(lambda: received(box, "192.168.1.30"), timeout=60, what="the first phone is told")
        wait_until(lambda: "refused by the service's IP filter" in routine(box, "notify", "list").stdout,
                   timeout=60, what="the dropped send named as the filter's doing")
    except AssertionError as exc:
        said = routine(box, "notify", "list").stdout
        raise AssertionError(f"{exc}\n{said}\n{journal(box, '-o', 'cat')[-3000:]}") from None
    assert "config rejected" in received(box, "192.168.1.30")[0]["body"]
    assert received(box, "192.168.1.31") == []
    doctor = routine(box, "doctor", check=False)
    assert "FAIL service: routine.yaml names 192.168.1.31" in doctor.stdout, doctor.stdout
    assert "sudo routine service install" in doctor.stdout
    assert "192.168.1.31" in routine(box, "status").stdout
    box.run("rm", "/home/alice/.config/routine/schedules/broken.yaml", user="alice")

    # Every run's lines in the journal carry its id.
    runs = json.loads(routine(box, "runs", "list", "--json").stdout)
    tagged = {json.loads(line).get("ROUTINE_RUN") for line in journal(box, "-o", "json").splitlines()}
    agent_runs = {r["id"] for r in runs if r["agent"]}
    assert agent_runs and agent_runs <= tagged, (runs, tagged)

    # A hang: no pings, so systemd's watchdog kills the daemon and Restart= starts it again.
    box.run("kill", "-STOP", pid)
    wait_until(lambda: box.show(UNIT, "NRestarts") == "1" and box.show(UNIT, "SubState") == "running",
               timeout=60, what="the hung daemon is killed and restarted")
    assert box.show(UNIT, "MainPID") != pid
    assert "Watchdog timeout" in journal(box)

    # Stop: well within TimeoutStopSec, cleanly, with every run recorded as finished.
    stop_started = time.monotonic()
    box.run("systemctl", "stop", UNIT, timeout=90)
    assert time.monotonic() - stop_started < 60
    assert box.show(UNIT, "ActiveState") == "inactive" and box.show(UNIT, "Result") == "success"
    after = json.loads(routine(box, "runs", "list", "--json").stdout)
    assert {r["id"] for r in runs} <= {r["id"] for r in after}
    assert all(r["status"] != "running" for r in after), after
    assert time.monotonic() - started < scaled(600)
