"""The daemon's signals (routine.daemon.signals): a reload or a stop is seen at once, whichever of
the daemon's threads the kernel hands the signal to (it once waited for the next signal when a
worker thread took it), and a signal not asked for neither stops nor reloads it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import scaled

CHILD = textwrap.dedent("""\
    import signal, sys, threading
    from routine.daemon.signals import SignalPipe

    pipe = SignalPipe((signal.SIGTERM, signal.SIGHUP))
    signal.signal(signal.SIGUSR1, lambda *_: None)  # handled, but not one the daemon asked for
    ready = threading.Event()

    def worker():
        ready.set()
        threading.Event().wait()  # a part of the daemon, asleep

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    ready.wait()

    def send():  # each signal handed to the worker thread, not the main thread asleep in the pipe's read
        for sig in (signal.SIGUSR1, signal.SIGHUP, signal.SIGTERM):
            signal.pthread_kill(thread.ident, sig)

    threading.Timer(0.2, send).start()
    print(pipe.next().name, flush=True)
    print(pipe.next().name, flush=True)
    """)


def test_a_signal_taken_by_another_thread_wakes_the_main_thread_and_others_are_passed_over():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=scaled(30))
    assert done.returncode == 0, done.stderr
    # Signals pending together come in the kernel's order, not the order sent; each comes once.
    assert sorted(done.stdout.split()) == ["SIGHUP", "SIGTERM"], done.stdout
