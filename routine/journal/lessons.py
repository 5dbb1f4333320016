"""What an agent can learn from its own days, read from the journal: the evidence behind its
memory entries (``routine.vault.agent_memory``).

- **kept**: a section it wrote, measured at 48 h (``journal.keep``): kept, rewritten in part, or deleted;
- **decided**: the person approved or rejected one of its proposals;
- **reviewed**: a Critic step that reviewed its output (later in the same block run, or a block
  chained ``after:`` that run) gave a verdict;
- **told**: in a chat with it, the person stated a rule or a preference anywhere in a message
  ("… ? Remember: no meetings before 10:00.", "from now on …", "I prefer …": ``rule_in``, no model);
  only the person's words count: a chat note an agent wrote is never answered, so never journaled
  (``routine.vault.provenance.is_persons_chat``).

Each piece of evidence has a key; ``learned`` keeps every key taken (table ``memory_learned``,
migration ``022_agent_memory``), so nothing is learned twice, and an entry the person deleted
is not learned again. Every entry names its source (a note, or a terminal conversation); evidence
whose note the agent may not read (``readable``) gives no entry: a memory never carries what its
agent could not have seen.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from datetime import date, datetime, timedelta, timezone

from routine.journal.stamps import utc_seconds
from routine.vault.agent_memory import Entry
from routine.verdicts import verdict_of

# A sentence in which the person states a rule or a preference: it begins (after a filler word or
# two: "ok,", "and", "please") with one of these. Deterministic, no model: a question is never one.
_RULE = re.compile(
    r"^(?:remember|note for next time|keep in mind|from now on|going forward|in future|in the future|always|never"
    r"|don't|do not|dont|avoid|make sure|i prefer|i'd prefer|i would prefer|i'd rather|i would rather|i never"
    r"|i always|i don't|i do not|i like|i hate|i want you to|no \w+ (?:before|after|on|during)\b)\b", re.IGNORECASE)
_FILLER = re.compile(r"^(?:(?:ok(?:ay)?|so|and|but|also|oh|thanks|thank you|by the way|btw|please|pls|just)"
                     r"\b[,:;]?\s*)+", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
MAX_SENTENCES = 40  # a message's first sentences are looked at: a pasted document is no rule list
REVIEWER = "critic"
WINDOW = timedelta(days=14)  # how far back a run looks for what its agent has not learned yet


def rule_in(message: str) -> str | None:
    """The sentences of a person's chat message that state a rule or a preference, as one line
    ("Should I move the call? Remember: no meetings before 10:00." → "Remember: no meetings before
    10:00."); None when it states none."""
    found = []
    for sentence in _SENTENCE.findall(" ".join(message.split()))[:MAX_SENTENCES]:
        said = sentence.strip()
        if said.endswith("?"):
            continue
        if _RULE.match(_FILLER.sub("", said)):
            found.append(said)
    return " ".join(found) or None


def _day(iso: str) -> date:
    return datetime.fromisoformat(iso).astimezone(timezone.utc).date()


def _link(note: str) -> str:
    return f"[[{note.removesuffix('.md')}]]"


def evidence(db: sqlite3.Connection, agent: str, readable: Callable[[str], bool], now: datetime) -> list[Entry]:
    """Every entry the journal holds evidence for, of the last ``WINDOW`` (a run reads a bounded
    journal however long routine has run), that was not learned before; oldest first."""
    since = utc_seconds(now - WINDOW)
    learned = {r[0] for r in db.execute("SELECT key FROM memory_learned WHERE agent=?", (agent,))}
    found = [*_kept(db, agent, since), *_decided(db, agent, since), *_reviewed(db, agent, readable, since),
             *_told(db, agent, since)]
    return sorted((e for e, source in found if e.key not in learned and (source is None or readable(source))),
                  key=lambda e: (e.day, e.key))


def learned(db: sqlite3.Connection, agent: str, entries: list[Entry], at: datetime) -> None:
    db.executemany("INSERT OR IGNORE INTO memory_learned (agent, key, learned_at) VALUES (?,?,?)",
                   [(agent, e.key, utc_seconds(at)) for e in entries])
    db.commit()


def _kept(db: sqlite3.Connection, agent: str, since: str) -> Iterator[tuple[Entry, str | None]]:
    rows = db.execute("SELECT id, note, section, kept, ending, measured_at FROM written_sections WHERE agent=?"
                      " AND via='run' AND measured_at >= ? AND ending != 'superseded'", (agent, since))
    for row_id, note, section, kept, ending, at in rows:
        if ending == "deleted":
            text = f"The person deleted your {section}."
        elif ending == "kept":
            text = f"The person kept your {section} as you wrote it."
        else:
            text = f"The person rewrote your {section}, keeping {round(100 * (kept or 0))}% of it."
        yield Entry(_day(at), text, f"keep-{row_id}", note), note


def _decided(db: sqlite3.Connection, agent: str, since: str) -> Iterator[tuple[Entry, str | None]]:
    rows = db.execute("SELECT d.id, d.decision, d.target, d.section, d.at FROM decisions d JOIN runs r"
                      " ON r.id = d.run_id WHERE r.agent=? AND d.outcome IN ('applied', 'rejected') AND d.at >= ?",
                      (agent, since))
    for row_id, decision, target, section, at in rows:
        what = section or ("the note" if target else "a note")
        yield Entry(_day(at), f"The person {decision} your proposal for {what}.", f"decision-{row_id}",
                    target or None), target


def _reviewed(db: sqlite3.Connection, agent: str, readable: Callable[[str], bool],
              since: str) -> Iterator[tuple[Entry, str | None]]:
    rows = db.execute(
        "SELECT c.id, c.output, c.wrote, c.started_at, a.wrote FROM runs a JOIN runs c"
        " ON c.agent=? AND c.kind='step' AND c.status IN ('ok', 'proposal')"
        " AND ((c.parent = a.parent AND c.step > a.step)"
        "      OR c.parent IN (SELECT id FROM runs WHERE trigger = 'after:' || a.parent))"
        " WHERE a.agent=? AND a.kind='step' AND a.status IN ('ok', 'proposal') AND a.parent IS NOT NULL"
        " AND a.started_at >= ?", (REVIEWER, agent, since))
    for run_id, output, review_note, at, reviewed in rows:
        verdict = verdict_of(output)
        review, subject = _path_of(review_note), _path_of(reviewed)
        what = f"your {_link(subject)}" if subject else "your output"
        text = f"A review by the Critic of {what}: " + (f"verdict {verdict}." if verdict else "no verdict.")
        point, source = _first_point(output), None
        if point and review and readable(review):  # its words only where the agent may read the review
            text, source = f"{text} First point: {point}", review
        yield Entry(_day(at), text, f"review-{run_id}", source), None


def _told(db: sqlite3.Connection, agent: str, since: str) -> Iterator[tuple[Entry, str | None]]:
    """What the person said in a conversation with the agent that states a rule (``rule_in``):
    sourced by the chat note (whose reads are checked) or the terminal conversation. A turn copied
    from a note into a terminal session (``from_note``) was said there, not here."""
    rows = db.execute("SELECT m.id, m.content, m.at, c.id, c.note FROM chat_messages m JOIN chats c ON c.id = m.chat"
                      " WHERE c.agent=? AND m.role='user' AND m.at >= ?"
                      " AND (m.details IS NULL OR m.details NOT LIKE '%\"from_note\"%')", (agent, since))
    for row_id, content, at, chat_id, note in rows:
        rule = rule_in(content or "")
        if rule:
            yield Entry(_day(at), f"The person told you: “{rule}”", f"chat-{row_id}", note or f"chat {chat_id}"), note


def _path_of(wrote: str | None) -> str | None:
    """A step run's `wrote` column (JSON: its path, outcome, proposal) as the note's vault path."""
    try:
        found = json.loads(wrote or "null")
    except ValueError:
        return None
    return found.get("path") if isinstance(found, dict) and isinstance(found.get("path"), str) else None


def _first_point(output: str | None) -> str | None:
    for line in (output or "").splitlines():
        line = line.strip()
        if line.startswith(("- ", "* ", "1. ")) and verdict_of(line) is None:
            return line.lstrip("-*1. ").strip()
    return None
