"""Real PDF files for tests, written by hand (PDF 1.4, one Helvetica text line per line of a page):
what a person's exported paper or invoice holds, without a PDF library to make it."""

from __future__ import annotations


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str | None]) -> bytes:
    """One page per item: its text (lines), or None for a page with no text layer (a scan)."""
    objects: list[bytes] = []
    n = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    font = 3 + 2 * n
    for i, text in enumerate(pages):
        content = 4 + 2 * i
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
        if text is None:
            stream = b"0.5 g 72 72 468 648 re f"  # a grey box: an image-like page with no text
        else:
            lines = [f"({_escape(line)}) Tj 0 -16 Td" for line in text.splitlines()]
            stream = ("BT /F1 12 Tf 72 720 Td " + " ".join(lines) + " ET").encode("latin-1")
        objects.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return _pdf_of(objects)


def _pdf_of(objects: list[bytes]) -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _pages_sharing(stream: bytes, pages: int) -> bytes:
    """``pages`` pages that all show one flate-compressed content ``stream``."""
    import zlib

    data = zlib.compress(stream, 9)
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    content, font = 3 + pages, 4 + pages
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode()]
    objects += [f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
                f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()] * pages
    objects.append(b"<< /Length " + str(len(data)).encode() + b" /Filter /FlateDecode >>\nstream\n" + data
                   + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return _pdf_of(objects)


def flate_bomb() -> bytes:
    """About 1 MB that inflates to 1 GB: a page's content stream of zeros."""
    return _pages_sharing(b"\0" * (1 << 30), 1)


def nested_brackets(depth: int = 600) -> bytes:
    """About 800 bytes: a catalog that opens arrays ``depth`` deep (deeper than a parser recurses)."""
    return _pdf_of([b"<< /Type /Catalog /Pages 2 0 R /X " + b"[" * depth + b" >>",
                    b"<< /Type /Pages /Kids [] /Count 0 >>"])


def slow_pdf(pages: int = 200) -> bytes:
    """A few KB under every pypdf limit that take minutes of CPU to read: each page shows the same
    stream of 100,000 text operations."""
    return _pages_sharing(b"BT /F1 12 Tf " + b"(a) Tj " * 100_000 + b"ET", pages)
