"""Parsing what comes from outside in a child process with limits: a PDF (pypdf), a calendar
(icalendar and its recurring events). Either library can be made to run for hours or take
gigabytes by a file of a few hundred bytes, so neither runs in routine's own processes.

``run_child`` starts ``python -m MODULE ARGS`` with the bytes on stdin and a wall-clock
deadline; the child calls ``limit_self`` first (the kernel ends it past its CPU time, its
address space is capped, its recursion too) and answers with ``answer``: one JSON object on
stdout. Every way the child can end becomes a ``ChildFailed`` with one sentence.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int
    wall_seconds: float
    memory_bytes: int = 1 << 30
    recursion: int = 1000


class ChildFailed(Exception):
    """Why the child gave no answer, as the end of a sentence ("reading it took …")."""


def run_child(module: str, args: list[str], data: bytes, limits: Limits) -> dict[str, Any]:
    """The child's answer, or ``ChildFailed``; an answer ``{"error": why}`` is a ChildFailed too."""
    argv = [sys.executable, "-m", module, str(limits.cpu_seconds), str(limits.memory_bytes), str(limits.recursion),
            *args]
    try:
        done = subprocess.run(argv, input=data, capture_output=True, timeout=limits.wall_seconds, check=False)
    except subprocess.TimeoutExpired:
        raise ChildFailed(f"reading it took longer than {limits.wall_seconds:g} s") from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ChildFailed(f"reading it took more than {limits.cpu_seconds} s of CPU" if done.returncode in (-24, -9)
                          else f"its reader stopped (exit {done.returncode})")
    if "error" in answer:
        raise ChildFailed(str(answer["error"]))
    return answer


def limit_self(argv: list[str]) -> list[str]:
    """In the child, first: apply the limits ``run_child`` passed; the child's own arguments."""
    cpu, memory, depth = (int(a) for a in argv[:3])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.setrecursionlimit(depth)
    import logging

    logging.disable(logging.CRITICAL)  # the libraries' warnings about a damaged file: the one sentence says it
    return argv[3:]


def answer(work: Any) -> int:
    """Run ``work()`` in the child and write its answer (or why it failed) as one JSON line."""
    try:
        result = work()
    except MemoryError:
        result = {"error": "it needs more memory than such a file may take"}
    except RecursionError:
        result = {"error": "its parts are nested deeper than such a file may nest them"}
    except Exception as exc:  # every parser error, their own limits' included: one sentence in the parent
        result = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    sys.stdout.write(json.dumps(result, default=str))
    sys.stdout.flush()
    return 0
