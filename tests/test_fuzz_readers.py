"""Every reader of outside text, fuzzed and held to one contract (issue 46; APScheduler runs its
suite over every data store, this runs it over every reader).

The readers: a note's properties, a model's change block, a config file's YAML, the one YAML
reader, verdict lines, chat notes, `.ics` calendars (through the bounded child, as routine reads
them), task lines, wikilinks, PDF names, notify URLs. Each is handed the seed corpus
(``tests/fuzz_seeds.py``: every attack of issue 46 and the two rounds before) and Hypothesis's
text, built from the pieces these formats are made of. Every call must:

- raise nothing but routine's own errors (``RoutineError``, or the calendar's ``CalendarUnreadable``
  that its report turns into a sentence);
- end within a time cap and a memory cap (tracemalloc's peak), both set by the input's size;
- give back no more than the input could hold plainly (no alias expanded into megabytes);
- show no secret of a URL (one that stands only inside URLs in its input) in a log line (as
  routine's log filter writes it) or an error (as the CLI shows it), nor in what a reader that
  redacts gives back;
- write nothing, inside the vault or out.

The normal run (CI) tries a few inputs per reader (``ROUTINE_FUZZ_EXAMPLES``, 20 by default);
``make fuzz`` many (2,000), and prints the figures: inputs tried per reader, the worst time and
memory seen.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
import tracemalloc
from collections.abc import Callable, Iterator
from datetime import date, datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_seeds import SECRETS, SEEDS
from routine.config.model import AgentSpec
from routine.config.yamlfile import parse_yaml
from routine.errors import RoutineError
from routine.host.logs import RedactFilter
from routine.outside.yamlread import REPLY, read_yaml
from routine.person.agenda import CalendarUnreadable, events_between
from routine.person.asks import BadAsk, ask_in
from routine.projects.tasks import parse_tasks
from routine.redact import URL, redact_text, redact_url
from routine.runner.advice import changes_in
from routine.schedule.edit import from_proposal
from routine.vault.chat_notes import parse_chat
from routine.vault.frontmatter import parse_frontmatter
from routine.vault.notes import link_targets, resolve_wikilink, wikilinks
from routine.vault.pdf import PAGE
from routine.vault.scope import resolve
from routine.verdicts import Form, verdict_of
from waits import scaled

EXAMPLES = int(os.environ.get("ROUTINE_FUZZ_EXAMPLES", "20"))
ALLOWED = (RoutineError, CalendarUnreadable, BadAsk)  # routine's own: each is one sentence where it is shown
DAY = date(2026, 11, 28)
NOW = datetime(2026, 11, 28, 9, 0, tzinfo=timezone.utc)


@dataclasses.dataclass(frozen=True)
class Reader:
    name: str
    read: Callable[[str, Path], object]
    echoes: bool = True      # gives back parts of its input as they are (a link, a task): secrets included
    seconds: float = 2.0     # its time cap for a small input, before the box's scale
    share: int = 1           # 1 in this many of the examples (a reader that starts a process per input)


def _calendar(text: str, vault: Path) -> object:
    return events_between(text.encode("utf-8", "surrogateescape"), "cal", DAY, DAY.replace(day=30),
                          ZoneInfo("Europe/Berlin"))


def _pdf_name(text: str, vault: Path) -> object:
    """A PDF's name as an agent asks for it (`Papers/Spec.pdf#page=3`): the read_note tool's split,
    then the one path resolver; what it resolves to must lie in the vault."""
    rel, _, anchor = text.strip().removeprefix("[[").removesuffix("]]").partition("#")
    page = PAGE.match(anchor.strip())
    path, tidy = resolve(vault, rel)
    assert Path(os.path.realpath(path)).is_relative_to(os.path.realpath(vault)), path
    return tidy, page[1] if page else None


def _links(text: str, vault: Path) -> object:
    found = wikilinks(text)
    return found, link_targets(text), [resolve_wikilink(vault, target) for target in found[:50]]


PLANNER = AgentSpec(name="planner", role="plans", model="default", reads=(), writes=(), approval="auto", tools=(),
                    grounding=(), write=None, task="", system_prompt="You are the Planner.", source="Agents/Planner.md")

READERS = [
    Reader("properties", lambda text, _: parse_frontmatter(f"---\n{text}\n---\nThe body.\n")),
    Reader("change block", lambda text, _: changes_in(f"My advice.\n\n```change\n{text}\n```\n",
                                                          {"planner": PLANNER})),
    Reader("config YAML", lambda text, _: parse_yaml(text, "schedules/x.yaml").data),
    Reader("YAML reader", lambda text, _: read_yaml(text, "the change block", REPLY).data),
    Reader("ask block", lambda text, _: ask_in(f"I need one fact.\n\n```ask\n{text}\n```\n", NOW)),
    Reader("schedule values", lambda text, _: from_proposal("[[schedules/daily.yaml]]", "prep", text)),
    Reader("verdict", lambda text, _: (verdict_of(text), verdict_of(text, Form.BOLD))),
    Reader("chat note", lambda text, _: (parse_chat("Chats/x.md", text),
                                         parse_chat("Chats/y.md", f"---\nchat: planner\n---\n{text}"))),
    Reader(".ics", _calendar, seconds=16.0, share=10),  # the child's own wall cap (EXPAND_LIMITS) is 15 s
    Reader("task lines", lambda text, _: parse_tasks("Projects/Shed/Tasks.md", text)),
    Reader("wikilinks", _links),
    Reader("PDF name", _pdf_name),
    Reader("notify URL", lambda text, _: (redact_url(text), redact_text(text)), echoes=False),
]

FIGURES: dict[str, dict[str, float]] = {}


class _Collect(logging.Handler):
    """Every record, as routine's log filter leaves it (the secrets of URLs redacted)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.addFilter(RedactFilter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage() + (record.exc_text or ""))


def _size(value: object, limit: int) -> int:
    """The characters ``value`` holds (aliases counted each time), counting stops past ``limit``."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack += list(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack += [getattr(item, f.name) for f in dataclasses.fields(item)]
        else:
            total += len(str(item)) if isinstance(item, (int, float)) else 1
    return total


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def check(reader: Reader, text: str, root: Path) -> None:
    """``reader`` on ``text`` holds the contract (see the module's docstring)."""
    vault = root / "vault"
    before = _files(root)
    collect, logger = _Collect(), logging.getLogger()
    level, logger.level = logger.level, logging.DEBUG
    logger.addHandler(collect)
    error: BaseException | None = None
    result: object = None
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = reader.read(text, vault)
    except ALLOWED as exc:
        error = exc
    finally:
        took, (_, peak) = time.perf_counter() - started, tracemalloc.get_traced_memory()
        tracemalloc.stop()
        logger.removeHandler(collect)
        logger.level = level
    figures = FIGURES.setdefault(reader.name, {"inputs": 0, "seconds": 0.0, "bytes": 0})
    figures.update(inputs=figures["inputs"] + 1, seconds=max(figures["seconds"], took),
                   bytes=max(figures["bytes"], peak))
    size = len(text)
    assert took <= scaled(reader.seconds + size / 1e6), f"{reader.name} took {took:.2f} s on {size:,} characters"
    assert peak <= (64 << 20) + 32 * size, f"{reader.name} took {peak / 1e6:.1f} MB on {size:,} characters"
    limit = 16 * size + 100_000
    assert _size(result, limit) <= limit, f"{reader.name} gave back more than {limit:,} characters for {size:,}"
    said = "\n".join(collect.lines) + ("\n" + redact_text(str(error)) if error is not None else "")
    shown = said if reader.echoes else said + repr(result)
    hidden = [s for s in SECRETS if s in text and s not in URL.sub("", text)]  # each only inside a URL
    assert not [s for s in hidden if s in shown], f"{reader.name} showed a secret: {shown[:2000]}"
    assert _files(root) == before, f"{reader.name} wrote {_files(root) - before}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "vault" / "Papers").mkdir(parents=True)
    (root / "vault" / "Papers" / "Spec.pdf").write_bytes(b"%PDF-1.7\n")
    (root / "vault" / "Target 1.md").write_text("A note.\n")
    yield root
    _report()


def _report() -> None:
    """The figures, printed (``make fuzz`` shows them; `-s`) and written where ROUTINE_FUZZ_FIGURES says."""
    rows = [f"{name:<13} {f['inputs']:>7,} inputs  worst {f['seconds']:.3f} s  {f['bytes'] / 1e6:.1f} MB"
            for name, f in sorted(FIGURES.items())]
    print("\nfuzzed readers:\n" + "\n".join(rows))
    if os.environ.get("ROUTINE_FUZZ_FIGURES"):
        Path(os.environ["ROUTINE_FUZZ_FIGURES"]).write_text(json.dumps(FIGURES, indent=1))


@pytest.mark.parametrize("case", list(SEEDS))
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_every_reader_holds_the_contract_on_every_seed(reader: Reader, case: str, root: Path) -> None:
    check(reader, SEEDS[case], root)


# What these formats are made of: Hypothesis strings them together with text of its own and pieces
# of the seeds, so each input is near something a reader treats specially.
PIECES = ["&a ", "*a", "&b [*a, *a, *a]", "[", "]", "{", "}", ": ", "\n", "- ", "  ", "    ", "\t", "---\n",
          "```change\n", "```\n", "~~~", "[[", "]]", "|", "#", "#page=", ".pdf", ".md", "../", "/", "VERDICT:",
          "**Verdict:**", "> ", "> [!answer] planner\n", "> [!summary]\n", "- [ ] ", "- [x] ", "📅 2026-12-01",
          "BEGIN:VCALENDAR\r\n", "BEGIN:VEVENT\r\n", "END:VEVENT\r\n", "RRULE:FREQ=SECONDLY\r\n",
          "DTSTART:20261128T000000Z\r\n", "://", "@", "?token=", "S3cretPass", "%%", "`", "!!binary ", "!!python/",
          "<<: *a\n", "? ", "\x00", "\ufeff", "\udc80", "9" * 50, "2026-13-40", "chat: planner\n", "schedule: a.yaml\n"]
_SEED_PIECES = [text[i:i + 200] for text in SEEDS.values() for i in range(0, min(len(text), 2000), 200)]
TEXTS = st.lists(st.one_of(st.sampled_from(PIECES), st.sampled_from(_SEED_PIECES), st.text(max_size=30)),
                 max_size=40).map("".join)


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_every_reader_holds_the_contract_on_fuzzed_text(reader: Reader, root: Path) -> None:
    @settings(max_examples=max(EXAMPLES // reader.share, 2), deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(TEXTS)
    def fuzz(text: str) -> None:
        check(reader, text, root)

    fuzz()
