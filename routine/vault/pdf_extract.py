"""The child process that reads one PDF (``python -m routine.vault.pdf_extract LIMITS… PAGES CHARS``),
under ``routine.outside.bounded``'s limits: the PDF's bytes on stdin, one JSON line out,
``{"pages": [...], "more": N}`` (``more``: pages past the cap, not read) or ``{"error": why}``.
``routine.vault.pdf.pages_of`` starts it.
"""

from __future__ import annotations

import sys

from routine.jsonvalue import JSONObject
from routine.outside.bounded import answer, limit_self


def extract(raw: bytes, max_pages: int, max_chars: int) -> JSONObject:
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
    max_pages, max_chars = (int(a) for a in limit_self(argv))
    raw = sys.stdin.buffer.read()
    return answer(lambda: extract(raw, max_pages, max_chars))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
