"""The keyword half of the hybrid ranking (pure): what the words of a query say about a note.

Embeddings find a note by meaning but blur exact names, dates and numbers: "Supplier call
notes" should find the note of that title, and "2026-12-01" the note with that date. A note
earns keyword points for the query's words in its title (most), and for exact words, numbers
and dates in the text of its candidate chunk.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\d{4}-\d{2}-\d{2}|[\w][\w.-]*\w|\w", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be by for from in is it of on or that the this to was what when where which who with".split()
)
TITLE_WEIGHT, TEXT_WEIGHT = 0.6, 0.25


def words(text: str) -> list[str]:
    """The query's or a text's words, lowercased; stop words dropped."""
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP]


def exact_word(word: str) -> bool:
    """A word worth matching exactly: has a digit, or is longer than two letters."""
    return any(ch.isdigit() for ch in word) or len(word) > 2


def keyword_score(query_words: list[str], title: str, text: str) -> float:
    """0 (no word of the query) … TITLE_WEIGHT + TEXT_WEIGHT (all of them in the title and text)."""
    if not query_words:
        return 0.0
    in_title = set(words(title))
    title_share = sum(w in in_title for w in query_words) / len(query_words)
    body = set(words(text))
    exact = [w for w in query_words if exact_word(w)]
    text_share = sum(w in body for w in exact) / len(exact) if exact else 0.0
    return TITLE_WEIGHT * title_share + TEXT_WEIGHT * text_share
