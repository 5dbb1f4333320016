"""The systemd units: as shipped and as `routine service install` writes them, they pass
`systemd-analyze verify` without a word and score an exposure of 2.0 or lower."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from waits import scaled

REPO = Path(__file__).resolve().parent.parent
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed (apt package systemd)")


def analyze(unit: Path, user: bool, tmp_path: Path) -> float:
    """Verify ``unit`` (no output allowed) and return its offline security exposure."""
    with tempfile.TemporaryDirectory(prefix="xdg-") as runtime:
        env = dict(os.environ)
        scope = []
        if user:
            # The user scope wants one, even offline. Short, not under tmp_path (longer under
            # pytest-xdist): systemd's own user units put sockets in it, and a socket path has 108 bytes.
            env["XDG_RUNTIME_DIR"] = runtime
            scope = ["--user"]
        verify = subprocess.run([ANALYZE, *scope, "verify", str(unit)], capture_output=True, text=True, env=env,
                                timeout=scaled(60))
        assert verify.returncode == 0 and not (verify.stdout + verify.stderr).strip(), verify.stdout + verify.stderr
        security = subprocess.run([ANALYZE, *scope, "security", "--offline=true", str(unit)], capture_output=True,
                                  text=True, env=env, timeout=scaled(60))
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", security.stdout)
    assert found, security.stdout + security.stderr
    return float(found[1])


@needs_analyze
@pytest.mark.parametrize("shipped, as_name, user", [("routine@.service", "routine@alice.service", False),
                                                     ("routine.service", "routine.service", True)])
def test_shipped_units_verify_clean_and_expose_at_most_2(tmp_path, shipped, as_name, user):
    unit = tmp_path / as_name
    shutil.copy(REPO / "systemd" / shipped, unit)
    text = unit.read_text()
    for line in ("Type=notify", "WatchdogSec=", "Restart=on-failure", "After=", "Wants=", "NoNewPrivileges=yes",
                 "PrivateTmp=yes", "ProtectSystem=strict", "IPAddressDeny=any", "IPAddressAllow=localhost"):
        assert line in text, line
    assert analyze(unit, user, tmp_path) <= 2.0


def _fake_systemctl(tmp_path: Path) -> tuple[Path, Path]:
    """A systemctl that records its arguments; the unit is never active."""
    log = tmp_path / "systemctl.log"
    script = tmp_path / "systemctl"
    script.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\n'
                      'case "$*" in *is-active*) exit 3;; esac\nexit 0\n')
    script.chmod(0o755)
    return script, log


@needs_analyze
def test_install_user_unit_writes_real_paths_then_reloads_and_enables(initialised, tmp_path):
    home = initialised
    vault = home.root / "My Vault"  # a space, as Obsidian vault names often have
    home.vault.rename(vault)
    home.config.write_text(home.config.read_text().replace(f"vault: {home.vault}", f'vault: "{vault}"'))
    systemctl, calls = _fake_systemctl(tmp_path)
    units = tmp_path / "units"
    env = {"ROUTINE_SYSTEMD_DIR": str(units), "ROUTINE_SYSTEMCTL": str(systemctl)}

    first = home.run("service", "install", "--user", check=True, env_extra=env)
    unit = units / "routine.service"
    assert f"Wrote {unit}" in first.stdout and "Enabled routine.service" in first.stdout
    assert "journalctl --user -u routine.service" in first.stdout
    assert calls.read_text().splitlines()[-2:] == ["--user daemon-reload", "--user enable --now routine.service"]

    text = unit.read_text()
    exec_start = shlex.split(re.search(r"^ExecStart=(.*)$", text, re.M)[1])
    assert os.access(exec_start[0], os.X_OK) and exec_start[-1] == "run"
    assert f'ReadWritePaths="{vault}" {home.state}' in text
    assert f"Environment=ROUTINE_CONFIG={home.config}" in text
    assert analyze(unit, True, tmp_path) <= 2.0  # clean even with the space in the vault's path

    again = home.run("service", "install", "--user", check=True, env_extra=env)
    assert f"Unchanged: {unit}" in again.stdout
    assert "restart" not in calls.read_text()


@needs_analyze
@pytest.mark.skipif(Path("/run/systemd/system").is_dir() and os.geteuid() == 0,
                    reason="systemd runs here and we are root: this would install the unit for real")
def test_install_system_unit_without_systemd_prints_the_commands(initialised, tmp_path):
    home = initialised
    # An Ollama on another box of the LAN (a documentation address: nothing is sent to it).
    env = {"ROUTINE_SYSTEMD_DIR": str(tmp_path / "units"), "OLLAMA_HOST": "http://192.0.2.10:11434"}
    if os.geteuid() == 0:
        env["SUDO_USER"] = "alice"  # as if alice ran it with sudo
    person = env.get("SUDO_USER") or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    proc = home.run("service", "install", check=True, env_extra=env)
    unit = tmp_path / "units" / f"routine@{person}.service"
    assert unit.exists(), proc.stdout
    assert f"sudo systemctl enable --now routine@{person}.service" in proc.stdout
    text = unit.read_text()
    assert "User=%i" in text and f"ReadWritePaths={home.vault} {home.state}" in text
    assert "IPAddressAllow=localhost 192.0.2.10\n" in text and "Environment=OLLAMA_HOST=http://192.0.2.10:11434" in text
    assert analyze(unit, False, tmp_path) <= 2.0

    printed = home.run("service", "install", "--print", check=True, env_extra=env)
    assert (
        printed.stdout.startswith("# Written by `routine service install`")
        and "systemctl enable --now" in printed.stdout
    )


def test_install_refuses_to_run_the_service_as_root(initialised):
    if os.geteuid() != 0:
        pytest.skip("only root can be refused")
    proc = initialised.run("service", "install", env_extra={"SUDO_USER": ""})
    assert proc.returncode == 2 and "would run as root" in proc.stderr and "--user" in proc.stderr


# The README's own examples: a phone on ntfy and a mail server, a calendar on the LAN. Addresses only
# (no lookups needed); nothing is sent to any of them.
LAN_CONFIG = """
notify:
  urls: [ntfy://192.168.1.30/routine, "mailtos://you:app-password@192.168.1.25", "tgram://123456789:abcdefgh/42"]
calendars: [http://192.168.1.20/family.ics]
"""


def test_the_unit_lets_through_every_host_the_config_names_and_status_flags_one_added_later(initialised, tmp_path):
    home = initialised
    home.config.write_text(home.config.read_text() + LAN_CONFIG)
    units = tmp_path / "units"
    env = {"ROUTINE_SYSTEMD_DIR": str(units), "ROUTINE_SYSTEMCTL": str(_fake_systemctl(tmp_path)[0])}
    installed = home.run("service", "install", "--user", check=True, env_extra=env)
    allow = re.search(r"^IPAddressAllow=(.*)$", (units / "routine.service").read_text(), re.M)[1].split()
    assert allow[0] == "localhost" and {"192.168.1.30", "192.168.1.25", "192.168.1.20"} <= set(allow)
    # Each host said with why, and what its name stood for: Apprise's own server for tgram://.
    from routine.redact import source_name  # a calendar without `name:`: its host and a short hash, no path

    for line in ("192.168.1.30 (notify (ntfy)) → 192.168.1.30", "192.168.1.25 (notify (mailtos)) → 192.168.1.25",
                 f"192.168.1.20 (calendar {source_name('http://192.168.1.20/family.ics')}) → 192.168.1.20",
                 "api.telegram.org (notify (tgram)) → "):
        assert line in installed.stdout, installed.stdout
    assert "abcdefgh" not in installed.stdout  # the bot's token is no host
    assert "service:" not in home.run("status", env_extra=env).stdout

    # A second phone, named after the install: the unit would refuse it, and status says so with the fix.
    # (doctor says it too: tests/test_systemd_real.py, inside a network namespace of its own, since doctor
    # also tries to reach each notify and calendar host, and these addresses are not to be tried from here.)
    home.config.write_text(home.config.read_text().replace("ntfy://192.168.1.30/routine",
                                                           "ntfy://192.168.1.30/routine, ntfy://192.168.1.31/other"))
    said = [line for line in home.run("status", env_extra=env).stdout.splitlines() if line.startswith("service:")]
    assert len(said) == 1 and "service: routine.yaml names 192.168.1.31 (notify (ntfy)" in said[0], said
    assert "run `routine service install --user` again" in said[0]


def test_a_name_that_does_not_resolve_gets_one_sentence(initialised, tmp_path):
    home = initialised
    home.config.write_text(home.config.read_text() + "\nnotify:\n  urls: [ntfy://phone.invalid/routine]\n")
    proc = home.run("service", "install", "--user", check=True,
                    env_extra={"ROUTINE_SYSTEMD_DIR": str(tmp_path / "units"),
                               "ROUTINE_SYSTEMCTL": str(_fake_systemctl(tmp_path)[0])})
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: could not resolve phone.invalid (notify (ntfy)): add its address to "
                        "IPAddressAllow= in the unit, or run `routine service install` again once it resolves"]
