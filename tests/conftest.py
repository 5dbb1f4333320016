"""Shared fixtures: an isolated home for routine (config, state, vault) and a stand-in Ollama.

`home.run(ARGS)` runs the real entry point (`routine.cli.main`) with the environment variables
a person would set, its own working directory, stdin, stdout and stderr: in this process by
default (as simonw/llm's tests do: no interpreter start, no litellm import per call), or as a
real `python -m routine` subprocess with `process=True` where the process boundary is the
point (the daemon, signals, what a fresh process imports). `ROUTINE_TEST_SUBPROCESS=1` runs
every call as a subprocess. `routine run` is a real process forked warm (tests/warm_start.py:
litellm imported once per test worker, not once per daemon); `ROUTINE_TEST_COLD_START=1` starts
it cold. Only the Ollama server is a stand-in (tests/fake_ollama.py),
reached through the real `ollama` and `litellm` clients.

Speed without less realism: a test's search index embeds with a stand-in (the hashing
embedder, `ROUTINE_TEST_EMBEDDER=hashing`: no torch) unless the test is marked
`real_embeddings` (the search and memory tests: the shipped MiniLM, for real); per-minute blocks
run on a clock the test drives (the `driven_clock` fixture, `ROUTINE_TEST_CLOCK`); waits are on
conditions, with timeouts scaled by `ROUTINE_TEST_TIMEOUT_SCALE` (tests/waits.py).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import traceback
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(REPO))  # in-process runs use this worktree's routine, like PYTHONPATH does

from fake_ollama import FakeOllama  # noqa: E402
from waits import scaled  # noqa: E402
from warm_start import WarmStarter  # noqa: E402

ALWAYS_SUBPROCESS = os.environ.get("ROUTINE_TEST_SUBPROCESS") == "1"


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch):
    """pytest-xdist's workers set COLUMNS=80: a test that calls routine in this process is no
    terminal unless it says so (`env_extra={"COLUMNS": …}`), as a pipe in CI is none."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


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
    starter: WarmStarter  # real routine processes, forked warm (tests/warm_start.py)

    def run(self, *args: str, check: bool = False, timeout: float = 120, input: str | None = None,
            env_extra: dict | None = None, process: bool = False):
        """Run `routine ARGS` as a person would; in this process unless ``process`` (then
        ``timeout`` applies). `routine run`, the daemon, is always a real process. A real process
        is started warm (tests/warm_start.py)."""
        env = {**self.env, **(env_extra or {})}
        if process or ALWAYS_SUBPROCESS or (args and args[0] == "run"):
            proc = self.starter.run(list(args), env, self.root, timeout=scaled(timeout), input=input)
        else:
            proc = run_in_process(list(args), env, self.root, input)
        if check and proc.returncode != 0:
            raise AssertionError(f"routine {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc

    def note(self, rel: str) -> str:
        return (self.vault / rel).read_text(encoding="utf-8")


def run_in_process(args: list[str], env: dict, cwd: Path, stdin: str | None) -> subprocess.CompletedProcess:
    """`routine.cli.main(args)` with this environment, directory and streams, all put back after.
    An uncaught exception becomes a traceback on stderr and exit 1, as in a real process."""
    from routine.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    saved_levels = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's usage errors, --help, --version
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            err.write(exc.code + "\n")
    except KeyboardInterrupt:
        raise
    except BaseException:
        traceback.print_exc(file=err)
        code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for handler in root.handlers:
            if handler not in saved_handlers:
                with contextlib.suppress(Exception):
                    handler.close()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        for name, level in saved_levels.items():
            logging.getLogger(name).setLevel(level)
    return subprocess.CompletedProcess(["routine", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def warm_starter():
    """This test worker's warm-start server (tests/warm_start.py), started on first use."""
    starter = WarmStarter()
    yield starter
    starter.close()


@pytest.fixture(scope="session")
def shipped_models(tmp_path_factory) -> Path:
    """The shipped MiniLM unpacked and exported to ONNX by routine's own code, once per test worker
    (the export starts torch for seconds); a test that embeds for real gets a linked copy in its
    state dir, as a box has it after its first index pass."""
    from routine.memory.embedder import exported, shipped_model_dir

    state = tmp_path_factory.mktemp("shipped-state")
    exported(shipped_model_dir(state))
    return state / "models"


@pytest.fixture
def home(tmp_path, ollama, request, warm_starter) -> Home:
    # Not COLUMNS/LINES either: pytest-xdist's workers set COLUMNS=80, and a test's routine is no
    # terminal unless the test says so (`env_extra={"COLUMNS": …}`), as a pipe in CI is none.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ROUTINE_", "XDG_", "OLLAMA_")) and k not in ("COLUMNS", "LINES")}
    env.update(
        HOME=str(tmp_path / "home"),
        ROUTINE_CONFIG=str(tmp_path / "config" / "routine.yaml"),
        ROUTINE_STATE_DIR=str(tmp_path / "state"),
        ROUTINE_RUNTIME_DIR=str(tmp_path / "run"),
        OLLAMA_HOST=ollama.url,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),  # REPO first
    )
    if not request.node.get_closest_marker("real_embeddings"):
        env["ROUTINE_TEST_EMBEDDER"] = "hashing"  # routine.memory.embedder: search is not under test here
    else:  # the ONNX export at first use is tested once per worker (shipped_models), not in every test
        import shutil

        shutil.copytree(request.getfixturevalue("shipped_models"), tmp_path / "state" / "models", copy_function=os.link)
    h = Home(root=tmp_path, vault=tmp_path / "Vault", config=tmp_path / "config" / "routine.yaml",
             state=tmp_path / "state", env=env, starter=warm_starter)
    return h


@pytest.fixture
def initialised(home) -> Home:
    home.run("init", str(home.vault), check=True)
    text = home.config.read_text()
    # Short backoff so failure tests do not wait for production delays.
    home.config.write_text(text + "\nretry_backoff: 0.05\n")
    return home


class DrivenClock:
    """The daemon's clock, driven by the test (routine.daemon.clock): the system clock plus an
    offset in seconds, written to the file ``ROUTINE_TEST_CLOCK`` names. It only moves forward."""

    def __init__(self, path: Path, start_second: float = 5.0):
        self.path = path
        # Start the daemon's day ``start_second`` into a minute, so a daemon started now has most
        # of a minute before any per-minute slot falls due: a slot fires only when the test moves
        # the clock to it (a daemon started a moment before a real minute boundary would otherwise
        # fire that minute on its own, before the test's first ``before_next_minute``).
        now = datetime.now(timezone.utc)
        minute = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
        self.offset = (minute - now).total_seconds() + start_second
        self._write()

    def now(self) -> datetime:
        """What the daemon's clock says now (UTC)."""
        return datetime.now(timezone.utc) + timedelta(seconds=self.offset)

    def before_next_minute(self, lead: float = 2.0) -> datetime:
        """Move the clock to ``lead`` seconds before its next minute (unless it is nearer already)
        and return that minute: the next per-minute slot, which the daemon's real timer fires
        ``lead`` seconds from now."""
        now = self.now()
        minute = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
        gap = (minute - now).total_seconds() - scaled(lead)
        if gap > 0:
            self.offset += gap
            self._write()
        return minute

    def move_to(self, when: datetime) -> None:
        """Move the clock forward to ``when`` (never back)."""
        gap = (when - self.now()).total_seconds()
        if gap > 0:
            self.offset += gap
            self._write()

    def _write(self) -> None:
        scratch = self.path.with_suffix(".tmp")
        scratch.write_text(f"{self.offset:.3f}\n")
        os.replace(scratch, self.path)  # the daemon never reads half a number


@pytest.fixture
def driven_clock(home) -> DrivenClock:
    """A clock the test drives for the daemons this test starts (set before `daemon(home)`)."""
    clock = DrivenClock(home.root / "clock")
    home.env["ROUTINE_TEST_CLOCK"] = str(clock.path)
    return clock


@pytest.fixture
def slots(tmp_path):
    """Real slot records (routine.journal.slots) in a fresh journal."""
    from routine.journal import Journal
    from routine.journal.slots import Slots

    journal = Journal(tmp_path / "journal.sqlite3")
    yield Slots(journal.db)
    journal.close()


# --- real-daemon tests: marked, and their time budgeted ------------------------------------------
# A test that starts `routine run` (test_daemon.daemon) is marked `daemon` at collection, so a
# quick local pass can leave them out (`pytest -m "not daemon"`). Each has a budget (default
# DAEMON_BUDGET seconds, or @pytest.mark.daemon(budget=N)); the ones over it are listed at the
# end of the run, with the total, beside --durations. A budget is a figure to watch, not a test.
DAEMON_BUDGET = 90.0
_daemon_times: dict[str, tuple[float, float]] = {}


def pytest_collection_modifyitems(config, items):
    import inspect

    for item in items:
        fn = getattr(item, "function", None)
        try:
            source = inspect.getsource(fn) if fn is not None else ""
        except (OSError, TypeError):
            source = ""
        if "with daemon(" in source and not item.get_closest_marker("daemon"):
            item.add_marker(pytest.mark.daemon)
    items.sort(key=_longest_first)


def _longest_first(item) -> int:
    """Run order: the long tests first (the simulated week, real daemons with the real embedding
    model, other real daemons), so that with xdist no worker starts a long one while the others
    run out of work. Stable: within a rank, the files' own order."""
    if item.get_closest_marker("xdist_group"):
        return 0
    daemon, real = item.get_closest_marker("daemon"), item.get_closest_marker("real_embeddings")
    return 1 if daemon and real else 2 if daemon else 3 if real else 4


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    marker = item.get_closest_marker("daemon")
    if marker is not None and call.when == "call":  # carried in the report, so xdist workers send it too
        outcome.get_result().user_properties.append(
            ("daemon_budget", float(marker.kwargs.get("budget", DAEMON_BUDGET)))
        )


def pytest_runtest_logreport(report):
    budget = dict(report.user_properties).get("daemon_budget")
    if budget is not None and report.when == "call":
        _daemon_times[report.nodeid] = (report.duration, budget)


def pytest_terminal_summary(terminalreporter):
    if not _daemon_times:
        return
    total = sum(d for d, _ in _daemon_times.values())
    over = [(n, d, b) for n, (d, b) in _daemon_times.items() if d > b]
    terminalreporter.write_line(f"real-daemon tests: {len(_daemon_times)}, {total:.0f} s in all; "
                                f"{len(over)} over their budget")
    for nodeid, duration, budget in sorted(over, key=lambda x: -x[1]):
        terminalreporter.write_line(f"  {duration:6.1f} s (budget {budget:.0f} s)  {nodeid}")
