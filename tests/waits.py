"""Waiting in tests: on a condition, with a timeout scaled by one setting.

``ROUTINE_TEST_TIMEOUT_SCALE`` (default 1) multiplies every timeout a test waits with: raise it
on a slow or crowded machine (``ROUTINE_TEST_TIMEOUT_SCALE=3 make test``) instead of editing
tests. A wait ends as soon as its condition holds, so a larger scale costs nothing when all is well.
"""

from __future__ import annotations

import os
import time
from typing import Callable, TypeVar

T = TypeVar("T")

TIMEOUT_SCALE = float(os.environ.get("ROUTINE_TEST_TIMEOUT_SCALE") or 1)


def scaled(seconds: float) -> float:
    """A timeout for this machine: ``seconds`` times ROUTINE_TEST_TIMEOUT_SCALE."""
    return seconds * TIMEOUT_SCALE


def wait_until(condition: Callable[[], T], timeout: float, what: str = "the condition", interval: float = 0.2) -> T:
    """The first true value of ``condition()``, asked every ``interval`` seconds; an AssertionError
    naming ``what`` after ``scaled(timeout)`` seconds without one."""
    limit = scaled(timeout)
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {limit:g}s waiting for {what}")
        time.sleep(interval)
