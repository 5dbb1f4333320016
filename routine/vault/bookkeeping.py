"""What routine records in a note's properties, and nothing more: bookkeeping that does not grow.

A note routine writes into (a daily note, a plan) gets one small property, ``routine: {agent,
run, at}``, naming the latest write; each section's own agent and run are in its begin marker,
and a run's sources are in the journal (``routine runs show``). The person's own properties are
never rewritten: a flow list stays a flow list, order and comments stay, and so do a flow map wrapped
over lines and an anchor with its aliases (``update_frontmatter`` edits only the lines of the keys it sets).

A note routine creates whole is routine's: it also carries ``sources`` (never the note itself)
and a ``routine/<agent>`` tag, each on one line.

Older versions kept parallel ``agent``/``model``/``run`` lists, ``generated`` and every source
in every note they wrote into; the next write takes those keys out (``legacy_keys``), and only
when they are recognisably routine's (each listed agent has its ``routine/<agent>`` tag and
``generated`` is there), so a person's own ``model:`` is never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from routine.jsonvalue import JSONObject, Parsed
from routine.vault.frontmatter import FlowList, FlowMap, FrontmatterSplit, update_frontmatter
from routine.vault.notes import wikilink_for
from routine.vault.proposals import iso_time, source_links
from routine.vault.provenance import ROUTINE_PROPERTY, TAG_PREFIX

PROPERTY = ROUTINE_PROPERTY  # the one property routine keeps in a note it writes into
# The keys earlier versions wrote into every note (and a model's own frontmatter may carry).
PROVENANCE_KEYS = ("agent", "model", "run", "generated", "sources", "tags", PROPERTY)
_LEGACY = ("agent", "model", "run", "generated", "sources")
MAX_SOURCES = 20


@dataclass(frozen=True)
class Provenance:
    agent: str
    model: str
    run: str
    generated: datetime
    sources: list[str] = field(default_factory=list)


def _listed(value: object) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _tags(value: object) -> list[str]:
    if isinstance(value, str):
        return [part for part in value.replace(",", " ").split() if part]
    return _listed(value)


def stamp(prov: Provenance) -> FlowMap:
    """``{agent: …, run: …, at: …}``: the latest write, on one line."""
    return FlowMap(agent=prov.agent, run=prov.run, at=iso_time(prov.generated))


def legacy_keys(existing: Mapping[str, object]) -> tuple[str, ...]:
    """The bulky keys an earlier routine wrote into this note, when they are surely its own."""
    agents = _listed(existing.get("agent"))
    tags = {tag.lstrip("#") for tag in _tags(existing.get("tags"))}
    if not agents or "generated" not in existing or not all(f"{TAG_PREFIX}{a}" in tags for a in agents):
        return ()
    return tuple(key for key in _LEGACY if key in existing)


def provenance_properties(prov: Provenance, existing: Mapping[str, object]) -> tuple[JSONObject, tuple[str, ...]]:
    """(keys to set, keys to take out) for a note that already has ``existing`` properties:
    the one ``routine`` property; an earlier version's bulky keys out, and its tags out of the
    person's tags (what is left written on one line, as Obsidian writes it)."""
    updates: JSONObject = {PROPERTY: stamp(prov)}
    remove = legacy_keys(existing)
    if remove and "tags" in existing:
        kept = [tag for tag in _tags(existing["tags"]) if not tag.lstrip("#").startswith(TAG_PREFIX)]
        if kept:
            updates["tags"] = FlowList(kept)
        else:
            remove = (*remove, "tags")
    return updates, remove


def stamped_block(split: FrontmatterSplit, prov: Provenance) -> str:
    """The note's frontmatter block with routine's bookkeeping set, the person's lines as they were."""
    updates, remove = provenance_properties(prov, split.data)
    return update_frontmatter(split, updates, remove)


def new_note_properties(prov: Provenance, given: Mapping[str, object], rel: str) -> Parsed:
    """The properties of a note routine creates whole: the model's own (``given``, less any
    bookkeeping it made up), routine's stamp, its sources (never itself) and its tag."""
    properties = {key: value for key, value in given.items() if key not in PROVENANCE_KEYS}
    properties[PROPERTY] = stamp(prov)
    itself = wikilink_for(rel)
    sources = [link for link in source_links(prov.sources) if link != itself]
    if sources:
        properties["sources"] = FlowList(sources[-MAX_SOURCES:])
    tags = _tags(given.get("tags"))
    ours = f"{TAG_PREFIX}{prov.agent}"
    properties["tags"] = FlowList(tags if any(t.lstrip("#") == ours for t in tags) else [*tags, ours])
    return properties
