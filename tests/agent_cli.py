"""Run `routine ARGS` in this process through the real entry point (`routine.cli.main`), with a
test home's environment: fast, and exactly the code a person's command runs."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def cli(home, *args: str, check: bool = True) -> Result:
    from routine.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(home.env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    result = Result(code, out.getvalue(), err.getvalue())
    if check and code != 0:
        raise AssertionError(f"routine {' '.join(args)} exited {code}\n{result.stdout}\n{result.stderr}")
    return result
