"""Scope globs and vault path checks, on real files and symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from routine.errors import PathEscape, ScopeError
from routine.vault import check_read, check_write, glob_match, in_scope, resolve


@pytest.mark.parametrize("pattern, rel", [
    ("Daily/**", "Daily/2026-11-22.md"),
    ("Daily/**", "Daily/a/b.md"),
    ("Daily/*.md", "Daily/My morning note.md"),
    ("**/*.md", "top.md"),                      # '**/' may match no folder at all
    ("**/*.md", "a/b/c.md"),
    ("Projects/**/Notes.md", "Projects/Notes.md"),
    ("Projects/**/Notes.md", "Projects/Big Idea/v2/Notes.md"),
    ("Daily/2026-11-2?.md", "Daily/2026-11-22.md"),
    ("Daily/2026-11-[0-9][0-9].md", "Daily/2026-11-05.md"),
    ("Plans/OKRs.md", "Plans/OKRs.md"),
    ("**", "anything/at/all.md"),
    ("Daily/[!a]*.md", "Daily/b.md"),
    ("Daily/[]x].md", "Daily/].md"),           # ']' first in a class is literal, as in fnmatch
    ("Inbox/x[.md", "Inbox/x[.md"),             # an unclosed '[' is literal
])
def test_glob_matches(pattern, rel):
    assert glob_match(pattern, rel)


@pytest.mark.parametrize("pattern, rel", [
    ("Daily/**", "Dailyx/y.md"),
    ("Daily/**", "Plans/Daily.md"),
    ("Daily/*.md", "Daily/Archive/old.md"),     # '*' stays inside one folder
    ("Daily/*.md", "Daily/x.txt"),
    ("Plans/OKRs.md", "Plans/OKRsXmd"),         # '.' is literal
    ("Plans/OKRs.md", "Plans/OKRs.md.bak"),     # whole path, not a prefix
    ("Daily/2026-11-2?.md", "Daily/2026-11-2/.md"),  # '?' is not '/'
    ("Daily/2026-11-[0-9][0-9].md", "Daily/2026-11-xx.md"),
    ("*.md", "Daily/x.md"),
    ("Daily/[!a]*.md", "Daily/a.md"),
    ("Daily/[]x].md", "Daily/y.md"),
    ("[!x]Daily.md", "/Daily.md"),              # a negated class never matches '/'
])
def test_glob_does_not_match(pattern, rel):
    assert not glob_match(pattern, rel)


def test_in_scope_any_glob():
    globs = ["Daily/**", "Drafts/**"]
    assert in_scope(globs, "Drafts/x.md")
    assert not in_scope(globs, "Plans/OKRs.md")
    assert not in_scope([], "Daily/x.md")


@pytest.fixture
def vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    (root / "Daily").mkdir(parents=True)
    (root / "Plans").mkdir()
    (root / "Plans" / "OKRs.md").write_text("okrs\n")
    return root


def test_resolve_normalises(vault):
    path, rel = resolve(vault, "./Daily//Morning note.md")
    assert rel == "Daily/Morning note.md"
    assert path == vault / "Daily" / "Morning note.md"


@pytest.mark.parametrize("bad", ["/etc/passwd", "../outside.md", "Daily/../../x.md", "Daily/../Plans/OKRs.md",
                                 "", "   ", "Daily/a\x00.md", "Daily\\x.md", ".", "./"])
def test_resolve_rejects_bad_text(vault, bad):
    with pytest.raises(PathEscape) as caught:
        resolve(vault, bad)
    assert caught.value.message.startswith("The path ")


def test_symlinked_folder_pointing_outside_is_an_escape(vault, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "Linked").symlink_to(outside)
    with pytest.raises(PathEscape, match="Linked/new.md"):
        resolve(vault, "Linked/new.md")  # the file does not exist yet: its parent is checked
    with pytest.raises(PathEscape):
        check_write(vault, ["**"], "Linked/new.md", "strategist")
    assert list(outside.iterdir()) == []


def test_symlinked_file_pointing_outside_is_an_escape(vault, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("private\n")
    (vault / "Daily" / "trap.md").symlink_to(secret)
    with pytest.raises(PathEscape):
        check_read(vault, ["**"], "Daily/trap.md", "critic")


def test_dangling_symlink_pointing_outside_is_an_escape(vault, tmp_path):
    (vault / "Daily" / "later.md").symlink_to(tmp_path / "not-yet.md")
    with pytest.raises(PathEscape):
        resolve(vault, "Daily/later.md")


def test_symlink_inside_pointing_inside_is_fine(vault):
    (vault / "Today.md").symlink_to(vault / "Daily" / "2026-11-22.md")
    (vault / "Daily" / "2026-11-22.md").write_text("today\n")
    path, rel = resolve(vault, "Today.md")
    assert rel == "Today.md"
    assert path == vault / "Daily" / "2026-11-22.md"  # writes go to the note, keeping the link


def test_symlinked_vault_root_is_fine(vault, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(vault)
    path, rel = resolve(alias, "Plans/OKRs.md")
    assert rel == "Plans/OKRs.md"
    assert path == alias / "Plans" / "OKRs.md"
    assert path.read_text() == "okrs\n"


def test_check_write_refuses_outside_scope_with_a_clear_sentence(vault):
    with pytest.raises(ScopeError) as caught:
        check_write(vault, ["Daily/**", "Drafts/**"], "Plans/OKRs.md", "strategist")
    assert caught.value.message == ("strategist may not write Plans/OKRs.md: outside its writes scope "
                                    "(Daily/**, Drafts/**).")
    assert not isinstance(caught.value, PathEscape)


def test_check_read_uses_the_reads_wording(vault):
    with pytest.raises(ScopeError, match="critic may not read Plans/OKRs.md: outside its reads scope \\(none\\)"):
        check_read(vault, [], "Plans/OKRs.md", "critic")
    assert check_read(vault, ["Plans/**"], "Plans/OKRs.md", "critic") == vault / "Plans" / "OKRs.md"


def test_symlink_inside_vault_cannot_widen_the_scope(vault):
    # Daily/okrs.md is in a Daily-only scope by name, but it is really Plans/OKRs.md.
    (vault / "Daily" / "okrs.md").symlink_to(os.path.join("..", "Plans", "OKRs.md"))
    with pytest.raises(ScopeError, match="a link to Plans/OKRs.md"):
        check_write(vault, ["Daily/**"], "Daily/okrs.md", "planner")
    assert check_write(vault, ["Daily/**", "Plans/**"], "Daily/okrs.md", "planner") == vault / "Plans" / "OKRs.md"


def test_hidden_folders_are_not_notes(vault):
    with pytest.raises(ScopeError, match="hidden"):
        check_write(vault, ["**"], ".obsidian/app.json", "builder")
