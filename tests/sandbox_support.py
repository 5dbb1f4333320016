"""What the sandbox tests need: bubblewrap. Without it they skip with the reason and the fix,
so `make test` passes on a fresh machine either way (`make test-no-bwrap` proves it)."""

from __future__ import annotations

import shutil

import pytest

needs_bubblewrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                      reason="bubblewrap is not installed (apt install bubblewrap): run_command's "
                                             "sandbox cannot be tested here")
