"""The child process that reads one PDF (``python -m routine.vault.pdf_extract CPU MEMORY DEPTH``).

pypdf parses whatever it is given: a flate bomb, brackets nested a thousand deep, a page that
takes minutes of CPU. So it runs here, never in routine's own processes: the PDF's bytes on
stdin, under a CPU-time limit (``RLIMIT_CPU``: the kernel ends it), an address-space limit
(``RLIMIT_AS``) and a recursion limit, set before pypdf is imported. The answer is one JSON
line on stdout: ``{"pages": [...], "more": N}`` (``more``: pages past the cap, not read), or
``{"error": "what pypdf said"}``. ``routine.vault.pdf.pages_of`` starts it, with a wall-clock
deadline of its own, and turns every way it can end into one sentence.
"""

from __future__ import annotations

import json
import resource
import sys


def _limit(cpu_seconds: int, memory_bytes: int, depth: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    sys.setrecursionlimit(depth)


def extract(raw: bytes, max_pages: int, max_chars: int) -> dict:
    """The text of each page of ``raw`` (at most ``max_pages``, ``max_chars`` in all)."""
    import io

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(raw))
    count = len(reader.pages)
    pages: list[str] = []
    left = max_chars
    for page in reader.pages[:max_pages]:
        text = (page.extract_text() or "").strip()[:max(left, 0)]
        left -= len(text)
        pages.append(text)
    return {"pages": pages, "more": max(count - max_pages, 0)}


def main(argv: list[str]) -> int:
    cpu, memory, depth, max_pages, max_chars = (int(a) for a in argv[:5])
    _limit(cpu, memory, depth)
    import logging

    logging.disable(logging.CRITICAL)  # pypdf's warnings about a damaged file: the one sentence says it
    raw = sys.stdin.buffer.read()
    try:
        answer = extract(raw, max_pages, max_chars)
    except MemoryError:
        answer = {"error": "it needs more memory than a PDF may take"}
    except RecursionError:
        answer = {"error": "its objects are nested deeper than a PDF may nest them"}
    except Exception as exc:  # every pypdf error, its limits' included: one sentence in the parent
        answer = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
