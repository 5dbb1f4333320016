"""Shared fixtures: an isolated home for routine (config, state, vault) and a stand-in Ollama.

The CLI is run as a person runs it: a subprocess of `python -m routine` with the environment
variables a person would set. Only the Ollama server is a stand-in (tests/fake_ollama.py), and
it is reached through the real `ollama` and `litellm` clients.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).parent))

from fake_ollama import FakeOllama  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def ollama():
    server = FakeOllama(max_loaded=3, load_delay=0.01).start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Home:
    root: Path
    vault: Path
    config: Path
    state: Path
    env: dict

    def run(self, *args: str, check: bool = False, timeout: float = 120, input: str | None = None,
            env_extra: dict | None = None):
        """Run `routine ARGS` as a subprocess, as a person would."""
        env = {**self.env, **(env_extra or {})}
        proc = subprocess.run([sys.executable, "-m", "routine", *args], env=env, cwd=self.root,
                              capture_output=True, text=True, timeout=timeout, input=input)
        if check and proc.returncode != 0:
            raise AssertionError(f"routine {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc

    def note(self, rel: str) -> str:
        return (self.vault / rel).read_text(encoding="utf-8")


@pytest.fixture
def home(tmp_path, ollama) -> Home:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROUTINE_", "XDG_", "OLLAMA_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        ROUTINE_CONFIG=str(tmp_path / "config" / "routine.yaml"),
        ROUTINE_STATE_DIR=str(tmp_path / "state"),
        ROUTINE_RUNTIME_DIR=str(tmp_path / "run"),
        OLLAMA_HOST=ollama.url,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONPATH=str(REPO),
    )
    h = Home(root=tmp_path, vault=tmp_path / "Vault", config=tmp_path / "config" / "routine.yaml",
             state=tmp_path / "state", env=env)
    return h


@pytest.fixture
def initialised(home) -> Home:
    home.run("init", str(home.vault), check=True)
    text = home.config.read_text()
    # Short backoff so failure tests do not wait for production delays.
    home.config.write_text(text + "\nretry_backoff: 0.05\n")
    return home


@pytest.fixture
def slots(tmp_path):
    """Real slot records (routine.journal.slots) in a fresh journal."""
    from routine.journal import Journal
    from routine.journal.slots import Slots

    journal = Journal(tmp_path / "journal.sqlite3")
    yield Slots(journal.db)
    journal.close()
