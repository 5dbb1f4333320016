"""PDFs in the vault are notes to read: their text, page by page, extracted with pypdf.

A PDF reads as markdown with one section per page headed `page=N`, so a search hit on it links
`[[Papers/Spec.pdf#page=3]]` (Obsidian opens the PDF at that page) and `read_note` can give one
page. Bounded: at most ``PDF_MAX_BYTES`` and ``PDF_MAX_PAGES``; a PDF with no text layer (a scan)
reads as empty and is said to be one. pypdf runs only in a child process of its own
(``routine.vault.pdf_extract``, ``routine.outside.bounded``), per file under a CPU-time, a wall-clock, a memory
and a recursion limit: a flate bomb, a PDF nested too deep or one that takes minutes to read is one sentence
(``NoteUnreadable``) and one file left out, never a failed search, index pass or block.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from routine.errors import NoteUnreadable
from routine.outside.bounded import ChildFailed, Limits, run_child
from routine.vault.files import NOTE_MAX_BYTES, read_regular

log = logging.getLogger(__name__)

PDF_MAX_BYTES = 50 * 2**20
PDF_MAX_PAGES = 500
# Per file: 10 s of CPU (a page that takes pypdf minutes is cut here), 30 s however loaded the
# machine, 1 GiB of address space (a decompression bomb ends here), 1000 Python frames (brackets
# nested deeper end here).
PDF_LIMITS = Limits(cpu_seconds=10, wall_seconds=30, memory_bytes=1 << 30, recursion=1000)
PDF_TEXT_MAX_CHARS = NOTE_MAX_BYTES  # the text kept of one PDF, all pages together
PAGE = re.compile(r"^page=(\d+)$")


def is_pdf(rel: str) -> bool:
    return rel.lower().endswith(".pdf")


def page_heading(number: int) -> str:
    return f"page={number}"


def pdf_pages(path: Path, label: str | None = None) -> list[str]:
    """The text of each page (empty for a page without a text layer)."""
    return pages_of(read_regular(path, PDF_MAX_BYTES, label=label), label or str(path))


def pages_of(raw: bytes, label: str) -> list[str]:
    """The text of each page of the PDF ``raw``, read in a bounded child process; a PDF that is
    none, or breaks a limit, raises ``NoteUnreadable`` naming ``label`` and why."""
    try:
        answer = run_child("routine.vault.pdf_extract", [str(PDF_MAX_PAGES), str(PDF_TEXT_MAX_CHARS)], raw, PDF_LIMITS)
    except ChildFailed as exc:
        raise NoteUnreadable(f"{label} is not a PDF routine can read ({exc}); it is left out.",
                             "open it in a PDF reader; save it again as PDF if it is damaged.") from None
    if answer.get("more"):
        log.info("%s: only its first %d pages are read", label, PDF_MAX_PAGES)
    return [str(page) for page in answer.get("pages") or []]


def pdf_markdown(pages: list[str]) -> str:
    """The pages as one markdown text, a `## page=N` section each (pages without text left out)."""
    return "\n\n".join(f"## {page_heading(i)}\n\n{text}" for i, text in enumerate(pages, 1) if text)


def read_pdf(path: Path, label: str | None = None, page: int | None = None) -> str:
    """A PDF as a model reads it: its pages' text, or one page's; says so when it has no text."""
    pages = pdf_pages(path, label)
    if page is not None:
        if not 1 <= page <= len(pages):
            return f"(it has {len(pages)} pages; there is no page {page})"
        return pages[page - 1] or f"(page {page} has no text layer: a scanned image)"
    return pdf_markdown(pages) or f"(no text layer on any of its {len(pages)} pages: a scanned PDF)"
