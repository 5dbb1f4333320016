"""A person's PDFs are not all friendly: a 1 MB flate bomb, an 800-byte PDF of nested brackets and
a few KB that take pypdf minutes of CPU lie in Papers/ beside a good PDF. Each is one log line and
one file left out (read in a child process under CPU, wall-clock, memory and recursion limits); the
good one is found by search, the index pass ends within its caps, the 07:30 block runs, and a PDF
saved while the daemon runs is indexed like a note. Real pypdf, the real index and daemon."""

from __future__ import annotations

import json
import time

from pdfmaker import flate_bomb, make_pdf, nested_brackets, slow_pdf
from test_daemon import daemon
from test_pdf import FAKE_EMBEDDINGS, SENTENCE
from waits import scaled, wait_until

HOSTILE = ("Papers/Bomb.pdf", "Papers/Brackets.pdf", "Papers/Slow.pdf")


def hostile_papers(home) -> None:
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    papers = home.vault / "Papers"
    papers.mkdir(exist_ok=True)
    (papers / "Bomb.pdf").write_bytes(flate_bomb())
    (papers / "Brackets.pdf").write_bytes(nested_brackets())
    (papers / "Slow.pdf").write_bytes(slow_pdf())
    (papers / "Spec.pdf").write_bytes(make_pdf(["Garden shed specification", SENTENCE]))


def test_hostile_pdfs_are_left_out_with_a_line_each_and_the_good_one_is_found(initialised, ollama):
    from routine.vault.pdf import PDF_LIMITS

    home = initialised
    hostile_papers(home)
    started = time.monotonic()
    done = home.run("index", process=True)
    took = time.monotonic() - started
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert took < scaled(3 * PDF_LIMITS.wall_seconds), took  # one file's limit, not minutes per page
    listed = done.stdout.split("PDFs left out", 1)[1]
    assert all(rel in listed for rel in HOSTILE) and "Spec.pdf" not in listed
    for rel in HOSTILE:  # one line each, naming it and why
        assert done.stderr.count(f"{rel} is not a PDF routine can read") == 1, done.stderr
    slow = "Papers/Slow.pdf is not a PDF routine can read (reading it took"
    assert f"{slow} more than 10 s of CPU" in done.stderr or f"{slow} longer than 30 s" in done.stderr  # a loaded box
    hits = json.loads(home.run("search", "supplier quotes lead time larch hinges", "--json", check=True).stdout)
    assert "[[Papers/Spec.pdf#page=2]]" in [h["link"] for h in hits]
    again = home.run("index", "--json", process=True, check=True)  # left out until they change: not read again
    assert json.loads(again.stdout)["unreadable"] == [] and "not a PDF" not in again.stderr


def test_the_morning_block_runs_beside_hostile_pdfs_and_a_pdf_saved_meanwhile_is_searchable(initialised, ollama):
    home = initialised
    hostile_papers(home)
    with daemon(home):
        fired = home.run("fire", "morning-alignment", "--json")
        assert fired.returncode == 0, fired.stdout + fired.stderr
        assert json.loads(fired.stdout)["status"] == "ok"
        (home.vault / "Papers" / "Quote.pdf").write_bytes(make_pdf(["Quote", "The glazier charges 420 euros."]))

        def found() -> bool:
            hits = json.loads(home.run("search", "glazier charges", "--json", check=True).stdout)
            return bool(hits) and hits[0]["path"] == "Papers/Quote.pdf"

        wait_until(found, 60, "the PDF saved meanwhile to be found")
    log = (home.root / "daemon.log").read_text()
    assert "Traceback" not in log
    assert all(log.count(f"{rel} is not a PDF routine can read") == 1 for rel in HOSTILE), log
