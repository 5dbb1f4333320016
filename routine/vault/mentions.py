"""Dates and names as a reply writes them (pure): what the grounding check compares with the notes.

Dates: 2026-12-04, 4 December 2026, Dec 4, 2026, and without a year (Dec 4, 4th December, Friday
4 Dec), with the weekday written beside them when there is one. Names: a person or a project where
the wording makes one of it — after a cue ("call", "ask", "check with", "waiting on", "owner:",
"@"), before a verb only people do ("Sarah confirmed"), a possessive ("Priya's feedback"), "project
X" or "the X pilot", and a first and last name inside a sentence ("Maria Schneider").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from enum import Enum

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH = r"(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?" \
         r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_WEEKDAY = r"(?:(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)[a-z]*\.?,?\s+(?:the\s+)?)?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?!\d)")
_DAY_MONTH = re.compile(rf"\b{_WEEKDAY}{_DAY}(?: of)? {_MONTH}\.?(?:,? (\d{{4}}))?(?![\w-])", re.I)
_MONTH_DAY = re.compile(rf"\b{_WEEKDAY}{_MONTH}\.? {_DAY}(?:,? (\d{{4}}))?(?![\w:-])", re.I)
TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b|\b\d{1,2}\s?(?:am|pm)\b", re.I)
# 14.12.2026 (day first, as most of Europe writes it)
_DOTTED = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d])")
# Thursday (26/11), due 26/11, by 12/16/2026: a date only after a weekday or a word that takes one (else a ratio)
_SLASHED = re.compile(r"(?:\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)[a-z]*\.?,?\s*\(?|\b(?:due|on|by|until|till"
                      r"|before|after|from|deadline|dated?)\s+)(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?![\d/])",
                      re.I)
_ORDINAL_HINT = re.compile(r"\d(?:st|nd|rd|th)\b", re.I)
# the 27th, Friday the 27th, Sunday 20th: a day of a month not named (the nearest to today; the weekday's)
_ORDINAL = re.compile(r"(?:\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)[a-z]*\.?,?\s+(?:the\s+)?|\bthe\s+)"
                      r"(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?!at\b|and\b|or\b|to\b|for\b|is\b|was\b|when\b|with\b|in\b|on\b"
                      r"|so\b|but\b|of\s+(?:the\s+)?month\b)[a-z])", re.I)

# Fri 27: (a planner's day list): a weekday, then a day of a month not named, the clause ending there
_WEEKDAY_DAY = re.compile(r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)[a-z]*\.?,?\s+(\d{1,2})"
                          r"(?=\s*(?:[;,)]|[:.](?!\d)|\s[—–-]\s|$))", re.I | re.M)


@dataclass(frozen=True)
class Written:
    """A date as written: its year (None when not written), month, day and weekday (None when not)."""

    text: str
    year: int | None
    month: int   # 0: not written ("the 27th"), the month nearest today that has the day (and the weekday)
    day: int
    weekday: int | None

    def on(self, year: int) -> date | None:
        try:
            return date(year, self.month, self.day)
        except ValueError:
            return None

    def matches(self, day: date) -> bool:
        """``day`` is a date this one may name (its year left out when not written)."""
        return (self.month in (0, day.month) and self.day == day.day and (self.year in (None, day.year))
                and (self.month != 0 or self.weekday in (None, day.weekday())))

    def months(self, today: date) -> list[tuple[int, int]]:
        """The (year, month)s this date may be in, nearest today first."""
        if self.month:
            return [(y, self.month) for y in ([self.year] if self.year else [today.year, today.year + 1,
                                                                             today.year - 1])]
        out = []
        for shift in (0, 1, -1, 2, -2):
            m = today.month - 1 + shift
            out.append((today.year + m // 12, m % 12 + 1))
        return out


def dates_in(text: str) -> list[Written]:
    out = [Written(m[0], int(m[1]), int(m[2]), int(m[3]), None) for m in ISO.finditer(text)]
    for m in _DAY_MONTH.finditer(text):
        out.append(Written(m[0], int(m[4]) if m[4] else None, _month(m[3]), int(m[2]), _weekday(m[1])))
    for m in _MONTH_DAY.finditer(text):
        out.append(Written(m[0], int(m[4]) if m[4] else None, _month(m[2]), int(m[3]), _weekday(m[1])))
    for m in _DOTTED.finditer(text) if "." in text else ():
        out.append(Written(m[0], int(m[3]), int(m[2]), int(m[1]), None))
    for m in _SLASHED.finditer(text) if "/" in text else ():
        out.append(_slashed(m))
    ordinals = list(_ORDINAL.finditer(text)) if _ORDINAL_HINT.search(text) else []
    taken = [m.span() for m in (*_DAY_MONTH.finditer(text), *_MONTH_DAY.finditer(text))] if ordinals else []
    for m in ordinals:
        if not any(a <= m.start(2) < b for a, b in taken):
            out.append(Written(m[0].removeprefix("the ").removeprefix("The "), None, 0, int(m[2]), _weekday(m[1])))
    out.extend(Written(m[0], None, 0, int(m[2]), _weekday(m[1])) for m in _WEEKDAY_DAY.finditer(text))
    return [replace(w, text=w.text.rstrip(".,").lstrip("(")) for w in out if 0 <= w.month <= 12 and 1 <= w.day <= 31]


def _slashed(m: re.Match[str]) -> Written:
    """26/11 (day first) or 11/26 (month first, when the day first is not a date)."""
    a, b = int(m[2]), int(m[3])
    year = (int(m[4]) + (2000 if len(m[4]) == 2 else 0)) if m[4] else None
    day, month = (a, b) if b <= 12 else (b, a)
    text = m[0][m[0].index(m[2], len(m[0]) - len(m[2]) - len(m[3]) - len(m[4] or "") - 2):]
    return Written(text, year, month, day, _weekday(m[1]))


def without_dates(text: str) -> str:
    """``text`` with its dates and times of day blanked (they are not figures)."""
    for pattern in (ISO, _DAY_MONTH, _MONTH_DAY, TIME):
        text = pattern.sub(lambda m: " " * len(m[0]), text)
    for pattern, hint in ((_DOTTED, "."), (_SLASHED, "/")):
        if hint in text:
            text = pattern.sub(lambda m: " " * len(m[0]), text)
    if _ORDINAL_HINT.search(text):
        text = _ORDINAL.sub(lambda m: " " * len(m[0]), text)
    return _WEEKDAY_DAY.sub(lambda m: " " * len(m[0]), text)


def known_dates(text: str, today: date) -> set[date]:
    """The dates a text states; one without a year is taken in the year that puts it nearest today."""
    return dated(dates_in(text), today)


def dated(written: list[Written], today: date) -> set[date]:
    """The dates of dates as written (``known_dates``)."""
    out = set()
    for w in written:
        found = []
        for year, month in w.months(today):
            try:
                found.append(date(year, month, w.day))
            except ValueError:
                continue
        found = [d for d in found if w.matches(d)]
        if found:
            out.add(min(found, key=lambda d: abs((d - today).days)))
    return out


def _month(name: str) -> int:
    return next(i for i, full in enumerate(MONTHS, 1) if full.startswith(name.lower()[:3]))


def _weekday(name: str | None) -> int | None:
    return None if not name else next(i for i, full in enumerate(WEEKDAYS) if full.startswith(name.lower()[:3]))


# --- names ----------------------------------------------------------------------------------------

class NameKind(str, Enum):
    PERSON = "person"
    PROJECT = "project"


_NAME = r"([A-ZÀ-Þ][\w'’-]+(?: [A-ZÀ-Þ][\w'’-]+)?)"
_ONE = r"([A-ZÀ-Þ][\w'’-]+)"
_MID = r"(?<=[a-z0-9,;] )"  # inside a sentence: a capital there is a name, not the sentence's start
_PERSON_CUES = [
    re.compile(r"\b(?:[Cc]all|[Pp]hone|[Aa]sk|[Ee]-?mail|[Pp]ing|[Mm]essage|[Tt]ext|[Tt]ell|[Rr]emind|[Tt]hank"
               r"|[Cc]c|[Ll]oop in|[Nn]udge|[Ii]nvite|[Cc]hase"
               r"|(?:[Mm]eet(?:ing)?|[Ss]ync|[Cc]heck|[Tt]alk|[Ss]peak|[Cc]hat|[Cc]atch up|[Ff]ollow[ -]up|[Cc]all)"
               r" (?:in )?(?:with|to)|[Ww]ait(?:ing)? (?:on|for)|[Hh]ear(?:ing)? back from|(?:[Rr]eply|[Aa]nswer|"
               r"[Ss]ign-?off|[Ff]eedback|[Aa]pproval|[Oo]k|[Gg]o-ahead) from|[Oo]wner:?|[Oo]wned by"
               r"|[Aa]ssign(?:ed)? to|[Hh]and (?:it )?(?:off|over) to|[Dd]elegate to|[Pp]er)\s+@?" + _NAME),
    re.compile(r"(?<![\w@])@" + _ONE),
    re.compile(_NAME + r" (?:said|says|confirmed|agreed|promised|mentioned|suggested|replied|emailed|called"
               r"|asked for|wants|owes|signed off|approved|is out|is on leave|will send|will confirm|will review)\b"),
    re.compile(r"([A-ZÀ-Þ][a-zà-ÿ]+ [A-ZÀ-Þ][a-zà-ÿ'’-]+) (?:from|at|of) [A-ZÀ-Þ]"),  # Sophie Martin from Northwind
]
_WORKSTREAM = (r" (?:project|pilot|launch|rollout|migration|initiative|workstream|roadmap|milestone|pipeline"
               r"|integration|dashboard|app|study|dataset|prototype|platform|programme|program|data loader|rewrite)\b")
_PROJECT_CUES = [
    re.compile(r"\b[Pp]roject:? " + _ONE),
    re.compile(_MID + _ONE + _WORKSTREAM),
    # "3. Beacon dashboard": a workstream named at a list item's start
    re.compile(r"(?m)^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?" + _ONE + _WORKSTREAM),
]
# "the Catering Line", "the Pop-up Café": a title-case name of two words or more, inside a sentence
_TITLED = re.compile(r"(?<=[a-z,;] )(?<=\bthe )([A-ZÀ-Þ][\w'’-]+(?: [A-ZÀ-Þ][\w'’-]+)+)(?![\w'’-])")
# "→ `Projects/Bread School/`": a project's folder, where a reply files a note
_FOLDER = re.compile(r"(?<![\w/\[|])Projects/([^/`\]\[|\n]+)/")
_POSSESSIVE = re.compile(_ONE + r"(?:'s|’s) (?:feedback|review|sign-?off|answer|reply|email|call|team|input|"
                         r"approval|numbers|estimate|quote|offer|contract|deadline|launch|pilot)\b")
NOT_NAMES = frozenset({*WEEKDAYS, *MONTHS, "today", "tomorrow", "yesterday", "the", "a", "an", "me", "you", "them",
                       "it", "this", "that", "next", "last", "everyone", "someone", "anyone", "nobody", "i", "we",
                       "they", "he", "she", "our", "my", "your", "their", "his", "her", "its", "all", "each", "both",
                       "team", "legal", "finance", "support", "sales", "kr", "okr", "okrs", "q1", "q2", "q3", "q4",
                       "new", "one", "two", "three", "first", "second", "main", "key", "top", "current", "weekly",
                       "daily", "monthly", "morning", "evening", "week", "month", "year", "it's", "that's",
                       "there", "here", "then", "if", "and", "but", "or", "so", "also", "please", "maybe"})


@dataclass(frozen=True)
class Named:
    name: str
    kind: NameKind


def names_in(prose: str) -> list[Named]:
    """The people and projects a reply names, each once, in order of kind then appearance."""
    found: list[Named] = []
    for pattern in _PROJECT_CUES:
        found += [Named(_clean(m[1]), NameKind.PROJECT) for m in pattern.finditer(prose)]
    for line in prose.splitlines():
        if not line.lstrip().startswith(("#", "|")):  # (headings and table rows are titled in capitals)
            found += [Named(name, NameKind.PROJECT) for m in _TITLED.finditer(line) if (name := _titled(m[1]))]
    for pattern in [*_PERSON_CUES, _POSSESSIVE]:
        found += [Named(_clean(m[1]), NameKind.PERSON) for m in pattern.finditer(prose)]
    out: dict[str, Named] = {}
    for named in found:
        words = named.name.split()
        if words and words[0].lower() not in NOT_NAMES and not named.name.isupper():
            out.setdefault(named.name.lower(), named)
    return list(out.values())


# Latin letters of either case: Polish, Czech, Baltic names too ("Wiśniewski", "Łukasz", "Dvořák")
_UP, _LOW = "A-ZÀ-Þ\u0100-\u017f", "a-zà-ÿ\u0100-\u017f"
_PAIR = re.compile(rf"(?<![\w'’@#/\[|-])([{_UP}][{_LOW}]+(?:-[{_UP}][{_LOW}]+)?) ([{_UP}][{_LOW}'’]+"
                   rf"(?:-[{_UP}][{_LOW}]+)?)(?![\w'’-]| [{_UP}])")


# Words that open a sentence or a task in capitals, never a first name.
_NOT_FIRST = frozenset("""ask call check send email mail ping tell remind thank see review update move book plan
    draft write read fix ship push finish start follow chase confirm share post add cut set get put let make
    take keep give run test try use for with from in on at by to of after before since until during about
    into over under per via when while where what which who why how once then next also only just still
    even maybe perhaps both either each every any some most more less many much few several no not
    yes thanks dear hi hello good great nice done open closed new old big small high low
    does do did is are was were has have had can could will would should shall must might why how whose
    whether if unless because although though""".split())


def name_pairs(prose: str) -> list[str]:
    """Every first-and-last name a text may hold, wherever it stands ("Dana Whitfield in Legal holds the
    approval"): two capitalised words, not a heading's, neither a word the caller knows to be common
    (the caller checks that), each once."""
    out: dict[str, str] = {}
    for line in prose.splitlines():
        if line.lstrip().startswith(("#", "|")):
            continue  # a heading or a table row is titled in capitals
        for m in _PAIR.finditer(line):
            name = _clean(f"{m[1]} {m[2]}")
            if not {w.lower() for w in name.split()} & NOT_NAMES and name.split()[0].lower() not in _NOT_FIRST:
                out.setdefault(name.lower(), name)
    return list(out.values())


_MID_CAPITAL = re.compile(r"(?<=[a-z0-9,;] )([A-ZÀ-Þ][a-zà-ÿ]{2,})(?:'s|’s)?(?![\w'’-]| [A-ZÀ-Þ])")


def capitalised(prose: str) -> list[str]:
    """The single words a text writes with a capital inside a sentence ("… on Magpie instead"): names
    the caller checks the notes for. Headings and table rows are titled in capitals."""
    out: dict[str, str] = {}
    for line in prose.splitlines():
        if line.lstrip().startswith(("#", "|")):
            continue
        for m in _MID_CAPITAL.finditer(line):
            word = m[1].lower()
            if _AFTER_TIME.search(line[:m.start()]) and not line.startswith(":", m.end()):
                continue  # "- [ ] 14:00 Prepare questions": a time block opens with a verb; "12:00 Heron:" names
            if _DAYS_SECTION.search(line, 0, m.start()):
                continue  # "in today's Alignment", "yesterday's Plan": a section of a daily note, not a name
            if word not in NOT_NAMES and word not in _MONTH_NAMES and word not in _NOT_FIRST \
                    and word[:3] not in _WEEKDAY_NAMES:
                out.setdefault(m[1].lower(), m[1])
    return list(out.values())


def _titled(phrase: str) -> str:
    """A title-case name as a project's: up to an acronym ("the Lumen GPU budget" names Lumen, checked
    alone), a month or a weekday; "" when one word is left."""
    words: list[str] = []
    for word in phrase.split():
        if word.isupper() or word.lower() in NOT_NAMES or word.lower() in _MONTH_NAMES:
            break
        words.append(word)
    return " ".join(words) if len(words) >= 2 else ""


def folders_in(reply: str) -> list[Named]:
    """The projects a reply names by their folder ("file it under `Projects/Bread School/`")."""
    return [Named(m[1].strip(), NameKind.PROJECT) for m in _FOLDER.finditer(reply)]


def _clean(name: str) -> str:
    name = re.sub(r"(?:'s|’s|'|’)$", "", name.strip(" -"))
    words = name.split()
    if len(words) == 2 and (words[1].lower() in NOT_NAMES or words[1].lower().rstrip(".") in _MONTH_NAMES):
        return words[0]  # "ask Priya Friday": Priya
    return name


_DAYS_SECTION = re.compile(r"\b(?:today|yesterday|tomorrow|this week|last week)(?:'s|’s) $", re.I)
_AFTER_TIME = re.compile(r"\d{1,2}:\d{2}\s*(?:[–-]\s*\d{1,2}:\d{2})?\s*$")
_WEEKDAY_NAMES = frozenset(d[:3] for d in WEEKDAYS)
_MONTH_NAMES = frozenset({*MONTHS, *(m[:3] for m in MONTHS), "sept"})


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Þ*(\[])|(?<=;)\s+")


def sentences(line: str) -> list[str]:
    """The sentences of one line of a reply (a clause after a semicolon counts as one)."""
    return [s for s in _SENTENCE.split(line) if s.strip()]
