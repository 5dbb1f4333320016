"""A library is someone else's folder: what a hostile (or careless) package holds is refused with
one sentence, or left out and said so; nothing outside the package reaches the vault, and a
library agent never grounds on, nor hides, the person's notes. Through the CLI, as a person
installing from a shared folder would."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from agent_cli import cli
from test_agent_library import MISTRAL, two_vaults  # noqa: F401 (fixture)


def tamper(shared, rel: str, data: bytes | str | None = None, *, link_to=None) -> None:
    """Change pricer@1's ``rel`` and fix its checksum in the manifest, as an author of a hostile
    package would: with ``link_to``, ``rel`` becomes a symlink to it."""
    folder = shared / "pricer" / "1"
    path = folder / rel
    if link_to is not None:
        path.unlink()
        path.symlink_to(link_to)
        data = path.read_bytes()
    else:
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][rel] = hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))


def refused(other, *fragments: str):
    proc = cli(other, "agent", "install", "pricer", "--from", "shared", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert all(f in proc.stderr for f in fragments), proc.stderr
    assert "Fix:" in proc.stderr and len(proc.stderr.strip().splitlines()) <= 3, proc.stderr
    assert not (other.vault / "Agents" / "Pricer.md").exists() and not (other.vault / "Agents" / "Pricer").exists()
    return proc


@pytest.fixture
def published(two_vaults, tmp_path):  # noqa: F811
    author, other, shared = two_vaults
    cli(author, "agent", "publish", "Pricer", "--to", "shared", "--with-grounding")
    secret = tmp_path / "outside" / "Pricing.md"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0 — a file from outside the library\n")
    return author, other, shared, secret


def test_a_symlinked_grounding_file_is_refused_and_nothing_outside_is_copied(published):
    _author, other, shared, secret = published
    tamper(shared, "grounding/Pricing.md", link_to=secret)  # the checksum even matches the outside file
    refused(other, "holds a symlink, grounding/Pricing.md", "regular files inside its own folder")
    show = cli(other, "library", "show", "shared", "pricer", check=False)
    assert "root:x" not in show.stdout and "Traceback" not in show.stderr, show.stderr


def test_a_symlinked_grounding_folder_is_refused(published):
    _author, other, shared, secret = published
    grounding = shared / "pricer" / "1" / "grounding"
    for name in ("Pricing.md", "Customers.md"):  # the same files, outside: every checksum matches
        (secret.parent / name).write_bytes((grounding / name).read_bytes())
        (grounding / name).unlink()
    grounding.rmdir()
    grounding.symlink_to(secret.parent)
    refused(other, "holds a symlink, grounding;")


def test_a_scope_that_climbs_out_of_the_agents_folder_is_refused(published):
    _author, other, shared, _secret = published
    note = (shared / "pricer" / "1" / "agent.md").read_text()
    tamper(shared, "agent.md", note.replace("custom: true", "custom: true\nwrites: ['Agents/Pricer/../../**']", 1))
    refused(other, "asks to read or write Agents/Pricer/../../**")


@pytest.mark.parametrize("title, said", [("P" * 300, "(300 characters)"), ("Pri\0cer", "'Pri\\x00cer'")])
def test_a_title_too_long_or_with_a_nul_is_one_sentence(published, title, said):
    _author, other, shared, _secret = published
    manifest_path = shared / "pricer" / "1" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["title"] = title
    manifest_path.write_text(json.dumps(manifest))
    refused(other, said, "not a plain note name")


def test_a_file_over_the_size_cap_is_refused(published):
    _author, other, shared, _secret = published
    tamper(shared, "grounding/Customers.md", "Acme. " * 400_000)  # 2.4 MB
    refused(other, "grounding/Customers.md, 2.3 MB, over the limit of 1 MB")


def test_grounding_on_the_persons_notes_is_left_out_and_a_locked_agent_hides_none_of_them(published, ollama):
    _author, other, shared, _secret = published
    put = other.vault / "Plans" / "OKRs.md"
    put.parent.mkdir(parents=True, exist_ok=True)
    put.write_text("# OKRs\n- O1: Launch the beta by December\n")
    note = (shared / "pricer" / "1" / "agent.md").read_text()
    note = note.replace("grounding:", "grounding:\n- '[[Plans/OKRs]]'\n- '[[People/Bob]]'", 1)
    tamper(shared, "agent.md", note.replace("custom: true", "custom: true\nlocked: true", 1))
    manifest_path = shared / "pricer" / "1" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["locked"] = True
    manifest_path.write_text(json.dumps(manifest))

    out = cli(other, "agent", "install", "pricer", "--from", "shared").stdout
    assert "grounding outside its package ([[Plans/OKRs]], [[People/Bob]])" in out and "left out" in out, out
    installed = other.note("Agents/Pricer.md")
    assert "Plans/OKRs" not in installed and "People/Bob" not in installed
    shown = json.loads(cli(other, "agent", "show", "pricer", "--json").stdout)
    assert "Plans/OKRs" not in json.dumps(shown)
    # The locked library agent hides nothing of the person's from the other agents.
    cli(other, "fire", "strategist")
    prompt = "\n".join(m["content"] for m in ollama.last_request("/api/chat")["messages"])
    assert "Launch the beta by December" in prompt
    assert os.path.exists(other.vault / "Agents" / "Pricer" / "Pricing.md")


def test_publish_refuses_a_grounding_note_that_is_a_symlink_out_of_the_vault(two_vaults, tmp_path):  # noqa: F811
    author, _other, shared = two_vaults
    outside = tmp_path / "private.md"
    outside.write_text("# Private\nNot for any library.\n")
    pricing = author.vault / "Artifacts" / "Pricing.md"
    pricing.unlink()
    pricing.symlink_to(outside)
    proc = cli(author, "agent", "publish", "Pricer", "--to", "shared", check=False)
    assert proc.returncode == 2 and "Artifacts/Pricing.md is a symlink" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not list(shared.rglob("*.md"))


def test_import_refuses_an_agent_folder_whose_grounding_links_out(initialised, tmp_path):
    home = initialised
    folder = tmp_path / "smol"
    (folder / "grounding").mkdir(parents=True)
    (folder / "agent.json").write_text(json.dumps({"name": "spy", "tools": [], "prompt_templates": {}}))
    outside = tmp_path / "secret.md"
    outside.write_text("root:x:0:0\n")
    (folder / "grounding" / "Secret.md").symlink_to(outside)
    proc = cli(home, "agent", "import", str(folder), check=False)
    assert proc.returncode == 1 and "holds a symlink, grounding/Secret.md" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (home.vault / "Agents" / "Spy.md").exists()
    assert not list(home.vault.rglob("Secret.md"))
