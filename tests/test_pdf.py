"""PDFs are notes to read: a real PDF's sentence found by `routine search` and cited by its page
(`[[Research/Papers/Spec.pdf#page=2]]`, as Obsidian opens it), read by `read_note` in a research
step, a scanned PDF listed as such. Real pypdf, the real index (the stand-in's embeddings, since
the model is not under test here), the stand-in Ollama driving the research agent's tools."""

from __future__ import annotations

import json

from pdfmaker import make_pdf

FAKE_EMBEDDINGS = "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n"
SENTENCE = "The supplier quotes a lead time of 14 weeks for the larch hinges."
ANALYST = "qwen2.5:7b-instruct-q4_K_M"


def with_pdfs(home) -> None:
    home.config.write_text(home.config.read_text() + FAKE_EMBEDDINGS)
    papers = home.vault / "Research" / "Papers"
    papers.mkdir(parents=True, exist_ok=True)
    (papers / "Spec.pdf").write_bytes(make_pdf(["Garden shed specification\nRevision 3", SENTENCE,
                                                "Appendix: drawings"]))
    (papers / "Invoice scan.pdf").write_bytes(make_pdf([None, None]))
    (papers / "Broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf\n")


def test_a_pdfs_sentence_is_found_by_search_and_cited_by_its_page(initialised, ollama):
    home = initialised
    with_pdfs(home)
    indexed = home.run("index", check=True)
    assert "PDFs with no text layer (scans; found by their names only): Research/Papers/Invoice scan.pdf" \
        in indexed.stdout
    assert "Traceback" not in indexed.stderr
    hits = json.loads(home.run("search", "lead time for the hinges", "--json", check=True).stdout)
    top = hits[0]
    assert top["path"] == "Research/Papers/Spec.pdf" and top["heading"] == "page=2"
    assert top["link"] == "[[Research/Papers/Spec.pdf#page=2]]" and SENTENCE in top["snippet"]
    home.run("search", "lead time for the hinges", check=True)  # the plain listing prints too


def test_a_research_step_reads_and_cites_a_pdf_page_through_its_tools(initialised, ollama):
    home = initialised
    with_pdfs(home)
    ollama.script(ANALYST, [
        {"tool_calls": [{"name": "search_notes", "arguments": {"query": "hinges lead time"}}]},
        {"tool_calls": [{"name": "read_note", "arguments": {"path": "Research/Papers/Spec.pdf#page=2"}}]},
        {"tool_calls": [{"name": "read_note", "arguments": {"path": "Research/Papers/Invoice scan.pdf"}}]},
        "The hinges take 14 weeks ([[Research/Papers/Spec.pdf#page=2]]).",
    ])
    home.run("fire", "research", "--task", "How long do the shed hinges take to arrive?", check=True)
    tool_results = [m["content"] for body in ollama.requests for m in body.get("messages", [])
                    if m.get("role") == "tool"]
    found = next(r for r in tool_results if "search" in r.lower() or "[[" in r)
    assert f"[[Research/Papers/Spec.pdf#page=2]] (path Research/Papers/Spec.pdf): {SENTENCE}" in found
    assert any(r.startswith("# Research/Papers/Spec.pdf#page=2 (PDF)") and SENTENCE in r for r in tool_results)
    assert any("no text layer on any of its 2 pages: a scanned PDF" in r for r in tool_results)
    brief = next((home.vault / "Research").glob("*.md")).read_text()
    assert "[[Research/Papers/Spec.pdf#page=2]]" in brief


def test_a_pdf_that_is_none_is_skipped_with_one_line_and_the_rest_indexed(initialised, ollama):
    home = initialised
    with_pdfs(home)
    done = home.run("index", "--json", check=True)
    stats = json.loads(done.stdout)
    assert stats["notes"] >= 2 and "Traceback" not in done.stderr  # Spec and the scan; Broken.pdf left out
    hits = json.loads(home.run("search", "Broken", "--json", check=True).stdout)
    assert all(h["path"] != "Research/Papers/Broken.pdf" for h in hits)
