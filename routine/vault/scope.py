"""Where an agent may read and write: vault-relative paths, scope globs and escape checks.

Principle 4 of the product: permissions are enforced by the runtime, not by the prompt. A
path that a model (or a rendered schedule template) produces is untrusted text, so every
note path goes through ``resolve`` before any file is opened: it must name something inside
the vault, also after following symlinks, and must match the agent's scope globs.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from routine.errors import PathEscape, ScopeError
from routine.vault.presence import require_vault


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a scope glob into a regex over a whole vault-relative POSIX path.

    fnmatch is not used because its ``*`` crosses ``/``: ``Daily/*.md`` must not reach
    ``Daily/Archive/x.md``, while ``Daily/**`` must.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")  # zero or more whole folders
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            # As in fnmatch: '!' (or '^') negates, and a ']' right after the opening is literal.
            first = i + 1
            negate = pattern[first:first + 1] in ("!", "^")
            if negate:
                first += 1
            close = pattern.find("]", first + 1)
            if close < 0:  # an unclosed bracket is a literal
                out.append(re.escape(ch))
                i += 1
                continue
            inner = re.sub(r"([\\\[\]^])", r"\\\1", pattern[first:close])
            out.append(f"[^/{inner}]" if negate else f"[{inner}]")
            i = close + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def glob_match(pattern: str, rel: str) -> bool:
    """True when the vault-relative POSIX path ``rel`` matches the scope glob ``pattern``.

    ``**`` matches any run of characters including ``/`` (``**/`` may match no folder at
    all), ``*`` stays within one path segment, ``?`` is one character, ``[abc]`` a class.
    """
    pattern = pattern.strip().removeprefix("./")
    rel = rel.removeprefix("./")
    return _glob_regex(pattern).match(rel) is not None


def glob_literal(rel: str) -> str:
    """A path (or a folder's name) as a scope glob that matches only itself: ``*``, ``?`` and
    ``[`` put in brackets, so a project folder named ``*`` grants nothing beyond itself."""
    return re.sub(r"([*?\[])", r"[\1]", rel)


def in_scope(globs: list[str], rel: str) -> bool:
    """Matched by a glob and by no ``!glob`` (an exclusion: the runtime adds one for every note
    grounding a locked agent, in every other agent's scopes, and for every artifact an agent neither
    owns nor was assigned: ``routine.access``)."""
    return (any(glob_match(p, rel) for p in globs if not p.startswith("!"))
            and not excluded(globs, rel))


def excluded(globs: list[str], rel: str) -> str | None:
    """The ``!glob`` that excludes ``rel``, if any."""
    return next((p for p in globs if p.startswith("!") and glob_match(p[1:], rel)), None)


MAX_PATH = 4096  # characters of a vault path (Linux's PATH_MAX); a name a model made up can be megabytes
MAX_NAME = 255   # bytes of one folder's or file's name (NAME_MAX)


def _escape(rel: str, why: str) -> PathEscape:
    shown = rel if len(rel) <= 200 else f"{rel[:200]}…"
    return PathEscape(f"The path {shown!r} {why}, so routine refused it.",
                      "use a path relative to the vault root, such as 'Daily/2026-11-22.md'.")


def normalise_rel(rel: str) -> str:
    """Check the text of a vault path (no file system access) and return its tidy form.

    Rejected: empty, NUL, backslash (a separator on Windows and a way to smuggle one in
    through a synced vault), absolute paths, any ``..`` component, and a path or a name longer
    than the file system takes (a megabyte of a name would cost minutes of lookups). ``.`` and doubled
    slashes are dropped so the same note always has the same name.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise _escape(str(rel), "is empty")
    if "\x00" in rel:
        raise _escape(rel, "contains a NUL character")
    if "\\" in rel:
        raise _escape(rel, "contains a backslash")
    if rel.startswith("/"):
        raise _escape(rel, "is absolute")
    if len(rel) > MAX_PATH:
        raise _escape(rel, f"is {len(rel):,} characters long, more than a path may be ({MAX_PATH:,})")
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME for part in parts):
        raise _escape(rel, f"has a name longer than {MAX_NAME} bytes")
    if ".." in parts:
        raise _escape(rel, "climbs out with '..'")
    if not parts:
        raise _escape(rel, "names the vault itself, not a note")
    return "/".join(parts)


def resolve(vault_root: Path, rel: str) -> tuple[Path, str]:
    """Return (absolute path, normalised rel) for a note path, or raise PathEscape.

    Symlinks of every existing component are followed (also the parent folder of a note not
    created yet): a vault may link folders to each other, but never to outside. The absolute
    path returned is the link's target, spelled under the vault root as the caller gave it,
    so a write through a symlinked note updates the note it points to and keeps the link.
    """
    tidy = normalise_rel(rel)
    if not os.path.isdir(vault_root):
        require_vault(Path(vault_root))
    root_abs = os.path.abspath(vault_root)
    root_real = os.path.realpath(vault_root)
    real = os.path.realpath(os.path.join(root_abs, *tidy.split("/")))
    if real == root_real or not real.startswith(root_real.rstrip(os.sep) + os.sep):
        raise _escape(tidy, f"leads outside the vault ({real}) through a symlink")
    inside = os.path.relpath(real, root_real)
    return Path(root_abs, inside), tidy


def _refuse(agent: str, verb: str, rel: str, scope: str, globs: list[str]) -> ScopeError:
    if excluded(globs, rel.split(" (a link to ")[0]) or excluded(globs, rel.rsplit(" (a link to ", 1)[-1].rstrip(")")):
        return ScopeError(f"{agent} may not {verb} {rel}: it is taken out of {agent}'s scope — it grounds a locked "
                          f"agent, or it is an artifact {agent} neither owns nor was assigned.",
                          "a locked agent's grounding is that agent's alone; an artifact is written only by its "
                          "`owner:` or the agent a task linking it is assigned to. Ask the person, or work without it.")
    listed = ", ".join(g for g in globs if not g.startswith("!")) or "none"
    return ScopeError(f"{agent} may not {verb} {rel}: outside its {scope} scope ({listed}).",
                      f"add a matching glob to `{scope}:` in the agent note Agents/{agent}.md, "
                      "or point the step at a path inside its scope.")


def checked(vault_root: Path, globs: list[str], rel: str, agent: str, verb: str) -> tuple[Path, str]:
    """resolve + scope check; returns (absolute path, normalised rel).

    Both the name asked for and, when a symlink inside the vault redirects it, the note it
    really reaches must be in scope: otherwise ``Daily/okrs.md -> ../Plans/OKRs.md`` would
    let a Daily-only agent rewrite the OKRs.
    """
    scope = "writes" if verb == "write" else "reads"
    path, tidy = resolve(vault_root, rel)
    if any(part.startswith(".") for part in tidy.split("/")):
        # .obsidian, .git and .trash hold the app's state, not the person's notes.
        raise ScopeError(f"{agent} may not {verb} {tidy}: hidden files and folders are not notes.",
                         "use a path without a leading '.' in any folder or file name.")
    if not in_scope(globs, tidy):
        raise _refuse(agent, verb, tidy, scope, globs)
    really = path.relative_to(os.path.abspath(vault_root)).as_posix()
    if really != tidy and not in_scope(globs, really):
        raise _refuse(agent, verb, f"{tidy} (a link to {really})", scope, globs)
    return path, tidy


def check_read(vault_root: Path, globs: list[str], rel: str, agent: str = "this agent") -> Path:
    return checked(vault_root, globs, rel, agent, "read")[0]


def check_write(vault_root: Path, globs: list[str], rel: str, agent: str = "this agent") -> Path:
    return checked(vault_root, globs, rel, agent, "write")[0]
