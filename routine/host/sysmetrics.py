"""Per-run figures for the run journal: time, tokens, this process's CPU and memory, the
machine's memory, on a Jetson the ``tegrastats`` line, and which routine produced the run.

Standard library only, and cheap: read at a run's start and end, never on a timer.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Protocol, TypedDict

from routine import __version__
from routine.jsonvalue import JSONObject

TEGRASTATS_TIMEOUT = 3.0  # seconds to wait for tegrastats' first line


class Started(TypedDict):
    """When a run started (``begin``), for ``finish``."""

    wall: float
    thread_cpu: float


def begin() -> Started:
    """Taken when a run starts; pass it to ``finish``."""
    return {"wall": time.monotonic(), "thread_cpu": time.thread_time()}


class Answer(Protocol):
    """What the figures take from a model's answer (``routine.models.client.Completion``, a layer up)."""

    @property
    def tokens_in(self) -> int | None: ...
    @property
    def tokens_out(self) -> int | None: ...
    @property
    def load_duration_ms(self) -> int | None: ...
    @property
    def duration_ms(self) -> int: ...


def finish(started: Started, completion: Answer | None = None) -> JSONObject:
    """The run's figures. ``completion``: the model's answer (routine.models.client.Completion)."""
    out: JSONObject = {"duration_s": round(time.monotonic() - started["wall"], 3),
                 "cpu_s": round(time.thread_time() - started["thread_cpu"], 3)}
    if completion is not None:
        out.update(model_s=round(completion.duration_ms / 1000, 3), load_duration_ms=completion.load_duration_ms,
                   tokens_in=completion.tokens_in, tokens_out=completion.tokens_out)
        speed = tokens_per_s(completion)
        if speed is not None:
            out["tokens_per_s"] = speed
    out.update(process())
    out.update(system_memory())
    tegra = tegrastats()
    if tegra:
        out["tegrastats"] = tegra
    out["version"] = __version__
    out["commit"] = commit()
    return out


def tokens_per_s(completion: Answer) -> float | None:
    """Tokens generated per second of a model's answer, its load time left out; None when unknown."""
    load_ms = completion.load_duration_ms or 0
    generation_s = max(0.0, (completion.duration_ms - load_ms) / 1000)
    if completion.tokens_out and generation_s > 0:
        return round(completion.tokens_out / generation_s, 2)
    return None


def process() -> dict[str, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out: dict[str, float] = {"process_cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
           "process_max_rss_mb": round(usage.ru_maxrss / 1024, 1)}  # ru_maxrss is in KiB on Linux
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        out["process_rss_mb"] = round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return out


def system_memory(meminfo: str | None = None) -> dict[str, int]:
    """MemTotal, MemAvailable and swap in use, in MiB, from /proc/meminfo."""
    if meminfo is None:
        try:
            meminfo = Path("/proc/meminfo").read_text()
        except OSError:
            return {}
    values: dict[str, float] = {}
    for line in meminfo.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[name] = int(parts[0]) / 1024  # kB -> MiB
    out: dict[str, int] = {}
    if "MemTotal" in values:
        out["mem_total_mb"] = round(values["MemTotal"])
    if "MemAvailable" in values:
        out["mem_available_mb"] = round(values["MemAvailable"])
    if "SwapTotal" in values and "SwapFree" in values:
        out["swap_used_mb"] = round(values["SwapTotal"] - values["SwapFree"])
    return out


# --- Jetson --------------------------------------------------------------------------------

_RAM = re.compile(r"\bRAM (\d+)/(\d+)MB")
_SWAP = re.compile(r"\bSWAP (\d+)/(\d+)MB")
_GR3D = re.compile(r"\bGR3D_FREQ (\d+)%(?:@\[?(\d+))?")
_EMC = re.compile(r"\bEMC_FREQ (\d+)%")
_TEMP = re.compile(r"\b([A-Za-z][A-Za-z0-9_]*)@(-?\d+(?:\.\d+)?)C\b")
_POWER = re.compile(r"\b([A-Z][A-Z0-9_]*) (\d+)mW/(\d+)mW")


def parse_tegrastats(line: str) -> JSONObject:
    """One tegrastats line -> figures. Fields a module lacks are left out."""
    out: JSONObject = {}
    if m := _RAM.search(line):
        out["ram_used_mb"], out["ram_total_mb"] = int(m[1]), int(m[2])
    if m := _SWAP.search(line):
        out["swap_used_mb"], out["swap_total_mb"] = int(m[1]), int(m[2])
    if m := _GR3D.search(line):
        out["gpu_load_pct"] = int(m[1])
        if m[2] is not None:
            out["gpu_freq_mhz"] = int(m[2])
    if m := _EMC.search(line):
        out["emc_load_pct"] = int(m[1])
    temps: JSONObject = {name.lower(): float(value) for name, value in _TEMP.findall(line) if float(value) > -200}
    if temps:  # -256C means "no sensor there"
        out["temp_c"] = temps
    power: JSONObject = {name: int(now) for name, now, _avg in _POWER.findall(line) if name != "NC"}
    if power:
        out["power_mw"] = power
    return out


def tegrastats() -> JSONObject | None:
    """The first line of ``tegrastats``, parsed; None when it is not installed (not a Jetson)."""
    binary = shutil.which("tegrastats")
    if binary is None:
        return None
    try:
        proc = subprocess.Popen([binary, "--interval", "100"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, text=True)
    except OSError:
        return None
    try:
        line = _first_line(proc, TEGRASTATS_TIMEOUT)
    finally:
        proc.kill()
        proc.wait()
    return parse_tegrastats(line) if line else None


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    import selectors

    if proc.stdout is None:  # started without stdout=PIPE
        return ""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            return ""
    return proc.stdout.readline().strip()


# --- which routine -------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def commit() -> str | None:
    """The git commit routine runs from, when it runs from a checkout; else None."""
    git = Path(__file__).resolve().parent.parent / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            git = Path(git.read_text().split(":", 1)[1].strip())
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head[:12]
        ref = head.split(":", 1)[1].strip()
        common = git / "commondir"
        base = (git / common.read_text().strip()).resolve() if common.is_file() else git
        for root in (git, base):
            if (root / ref).is_file():
                return (root / ref).read_text().strip()[:12]
        for line in (base / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0][:12]
    except (OSError, IndexError):
        pass
    return None


# The daemon's heap between runs (issue 47). glibc gives each new thread its own malloc arena (up to
# eight a core), and memory freed into one stays resident: a daemon whose runs come and go on many
# threads grows by megabytes a day though Python holds no more objects (measured with tracemalloc in
# the lived month). Two arenas, and the free pages given back after each run, keep it level.
_M_ARENA_MAX = -8  # mallopt's parameter number (malloc.h)


def _libc() -> object | None:
    import ctypes  # lazy: only the daemon, only once

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def cap_heap_arenas(arenas: int = 2) -> None:
    """At most ``arenas`` malloc arenas from now on (glibc; nothing elsewhere)."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, arenas)


def give_back_heap() -> None:
    """Return the heap's free pages to the system (glibc's malloc_trim; nothing elsewhere)."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)
