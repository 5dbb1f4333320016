"""Progress of long work in the terminal's conventions, import-free: a bar with rate and ETA for a
pass over the vault (indexing), and for a fired job a live status line while a step loads or
answers (tokens so far) with one line per step as it ends. On a terminal only: piped output,
`--json` and `--quiet` stay silent."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import Callable, TextIO

BAR_WIDTH = 30
REDRAW_SECONDS = 0.1  # a live line is redrawn at most this often
TICK_SECONDS = 1.0  # a live line's seconds move on even when nothing happens (a model loading, a server away)
CLEAR = "\r\x1b[K"  # back to the line's start, and clear it


def width_of(stream: TextIO) -> int:
    """The width of the terminal ``stream`` writes to (COLUMNS first, as shutil reads it)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return shutil.get_terminal_size().columns


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s // 60:.0f} min {s % 60:02.0f} s"


class ProgressPrinter:
    """Call with (what, done, total). Writes to stderr, so stdout stays the command's answer."""

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None, quiet: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.quiet, self.clock = quiet, clock
        self._started: float | None = None
        self._last_time = 0.0
        self._open_bar = False

    def __call__(self, what: str, done: int, total: int) -> None:
        if total <= 0 or self.quiet or not self.tty:  # piped (a log, `| cat`): silent
            return
        now = self.clock()
        if self._started is None or done == 0:
            self._started = now
        share = done / total
        finished = done >= total
        if not finished and now - self._last_time < REDRAW_SECONDS:
            return
        filled = int(BAR_WIDTH * share)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        line = f"{what} [{bar}] {done}/{total} notes{self._pace(now, done, total)}"
        self.stream.write(CLEAR + _fit(line, width_of(self.stream) - 1))
        self._open_bar = not finished
        if finished:
            self.stream.write("\n")
        self._last_time = now
        self.stream.flush()

    def _pace(self, now: float, done: int, total: int) -> str:
        """`, 4.2 notes/s, 9 s left` once there is a rate to tell; the time taken when done."""
        spent = now - (self._started or now)
        if done >= total:
            return f", {_seconds(spent)}" if spent >= 1 else ""
        if done <= 0 or spent <= 0:
            return ""
        rate = done / spent
        return f", {rate:.1f} notes/s, {_seconds((total - done) / rate)} left"

    def end(self) -> None:
        """Close an unfinished bar (the pass failed or was interrupted) so messages start clean."""
        if self._open_bar:
            self.stream.write("\n")
            self.stream.flush()
            self._open_bar = False


class StepProgress:
    """A fired job on a terminal. While a step runs, one live line: `[2/4] planner · answering ·
    37 tokens · 3 s · qwen3:4b`; as it ends, a line of its own: `✓ [2/4] planner · 6.1 s ·
    14.8 tokens/s · wrote Daily/….md · qwen3:4b`. Every line fits the terminal (the model's name is
    cut first). Does nothing when off."""

    def __init__(self, on: bool, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.on, self.stream, self.clock = on, stream or sys.stderr, clock
        self.steps = 0  # the block's step count, 0 for a single agent
        self.index = 0
        self._agent = self._model = self._phase = ""
        self._tokens = 0
        self._start = self._first = self._drawn = 0.0
        self._live = False
        self._lock = threading.Lock()  # the ticker and the events write the same line
        self._ticker: threading.Thread | None = None

    def block(self, steps: int) -> None:
        self.steps = steps

    def step(self, index: int) -> None:
        self.index = index

    def started(self, agent: str, model: str) -> None:
        self._agent, self._model, self._phase = agent, model.split("/")[-1], "starting"
        self._tokens, self._start, self._first = 0, self.clock(), 0.0
        self._draw(force=True)
        if self.on and self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while True:
            time.sleep(TICK_SECONDS)
            if self._live:
                self._draw(force=True)

    def phase(self, phase: str) -> None:
        self._phase = "answering" if phase == "generating" else phase
        self._draw(force=True)

    def token(self) -> None:
        if not self._tokens:
            self._first = self.clock()
            self._phase = "answering"
        self._tokens += 1
        self._draw()

    def ended(self, ok: bool, said: str) -> None:
        """The step's line: its mark, agent, model, seconds, tokens/s, and what it wrote (or why not)."""
        if not self.on:
            return
        now = self.clock()
        figures = [f"{now - self._start:.1f} s"]
        if self._tokens > 1 and now > self._first:
            figures.append(f"{self._tokens / (now - self._first):.1f} tokens/s")
        self._write_line(" · ".join([f"{'✓' if ok else '✗'} {self._where()}{self._agent}", *figures, said,
                                     self._model]))

    def note(self, text: str) -> None:
        """A line of its own above the live one (a retry, a wait in the queue)."""
        if self.on:
            self._write_line(text)
            self._draw(force=True)

    def close(self) -> None:
        with self._lock:
            if self.on and self._live:
                self.stream.write(CLEAR)
                self.stream.flush()
                self._live = False

    def _where(self) -> str:
        return f"[{self.index + 1}/{self.steps}] " if self.steps else ""

    def _write_line(self, text: str) -> None:
        with self._lock:
            self.stream.write(CLEAR + _fit(text, width_of(self.stream) - 1) + "\n")
            self.stream.flush()
            self._live = False

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if not self.on or not self._agent or (not force and now - self._drawn < REDRAW_SECONDS):
            return
        parts = [f"{self._where()}{self._agent}", self._phase]
        if self._tokens:
            parts.append(f"{self._tokens} tokens")
        parts += [f"{now - self._start:.0f} s", self._model]
        with self._lock:
            self.stream.write(CLEAR + _fit(" · ".join(parts), width_of(self.stream) - 1))
            self.stream.flush()
            self._drawn, self._live = now, True
