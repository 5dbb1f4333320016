"""One door for YAML (issue 46): every YAML routine parses goes through ``routine/outside/yamlread.py``,
under a budget. The AST check below fails when a PyYAML loader is called anywhere else in routine/;
the alias bomb that took 40 s and 2.4 GB in a model's change block, and that turned 334 bytes of a
note's properties into 5.8 million characters, is one sentence in under a second and 50 MB in a
change block, a schedule file and a note's properties — and the schedule's other blocks still load."""

from __future__ import annotations

import ast
import logging
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from deciders import second_deciders
from routine.errors import OutsideTextRefused
from routine.outside.yamlread import CONFIG, PROPERTIES, REPLY, read_yaml

READER = "outside/yamlread.py"
_CALLS = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "full_load_all",
          "unsafe_load_all", "compose", "compose_all", "parse", "scan"}


def _is_loader(name: str) -> bool:
    return name in _CALLS or name.endswith("Loader")


def yaml_loads(tree: ast.AST, rel: str) -> list[str]:
    """Where ``tree`` calls or names a PyYAML loader: ``yaml.safe_load(…)``, ``yaml.CSafeLoader``,
    ``from yaml import load``, ``getattr(yaml, "CSafeLoader")`` (PyYAML imported under any name)."""
    names = {"yaml"} | {alias.asname for node in ast.walk(tree) if isinstance(node, ast.Import)
                        for alias in node.names if alias.name == "yaml" and alias.asname}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names \
                and _is_loader(node.attr):
            found.append(f"{rel}:{node.lineno} yaml.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "yaml":
            found += [f"{rel}:{node.lineno} from yaml import {a.name}" for a in node.names if _is_loader(a.name)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in names \
                and isinstance(node.args[1], ast.Constant) and _is_loader(str(node.args[1].value)):
            found.append(f"{rel}:{node.lineno} getattr(yaml, {node.args[1].value!r})")
    return found


def test_no_module_but_the_one_reader_calls_a_yaml_loader():
    offenders = second_deciders(READER, yaml_loads)
    assert not offenders, (f"YAML is read only by routine/{READER} (read_yaml/load_yaml, with a budget); "
                           f"these parse it themselves: {offenders}")


@pytest.mark.parametrize("snippet", ["import yaml\nyaml.safe_load(text)\n", "from yaml import full_load\n",
                                     "import yaml as y\ny.load(t, Loader=y.CSafeLoader)\n",
                                     "import yaml\ngetattr(yaml, 'CSafeLoader')\n",
                                     "import yaml\nyaml.compose(text)\n"])
def test_the_check_finds_each_way_of_calling_a_loader(snippet):
    assert yaml_loads(ast.parse(snippet), "x.py")


# 446 bytes: nine levels of ten aliases each, then the key that holds them all (issue 46's reproduction).
BOMB_LEVELS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))


def _bounded(work: Callable[[], object]) -> object:
    """``work()``'s result, asserting it took under 1 s and 50 MB (tracemalloc's peak)."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = work()
        took, (_, peak) = time.perf_counter() - started, tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert took < 1.0 and peak < 50 << 20, (took, peak)
    return result


def test_the_alias_bomb_in_a_change_block_is_one_sentence_in_under_a_second(caplog):
    from routine.config.model import AgentSpec
    from routine.runner.advice import changes_in

    planner = AgentSpec(name="planner", role="plans", model="default", reads=(), writes=(), approval="auto", tools=(),
                        grounding=(), write=None, task="", system_prompt="You are the Planner.",
                        source="Agents/Planner.md")
    # issue 46's reply: with PyYAML's own loader, `why` became 722 million characters in the trial queue
    reply = f"Here is my advice.\n\n```change\n{BOMB_LEVELS}agent: planner\nadd: Plan less.\nwhy: *i\n```\n"
    with caplog.at_level(logging.WARNING, logger="routine.runner.advice"):
        found = _bounded(lambda: changes_in(reply, {"planner": planner}))
    assert found == []
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "change block 1 of the advice is not tried: it is not read (refused: it expands to " \
                               "more than 10,000 values" in said[0], said


def test_the_alias_bomb_in_a_notes_properties_is_left_unread_with_a_sentence(tmp_path):
    from routine.vault import read_note

    (tmp_path / "Inbox").mkdir()
    (tmp_path / "Inbox" / "Synced.md").write_text(f"---\n{BOMB_LEVELS}description: *i\n---\nThe body.\n")
    note = _bounded(lambda: read_note(tmp_path, "Inbox/Synced.md"))
    assert note.frontmatter == {} and note.frontmatter_error is not None
    assert "refused: it expands to more than 10,000 values" in note.frontmatter_error
    assert len(note.body) < 1000  # the text as written, not 5.8 million characters


def test_the_alias_bomb_in_a_schedule_file_is_located_and_the_other_schedules_still_load(initialised):
    from routine.config.loader import load_agents, load_config
    from routine.schedule.loader import in_force, load_file

    home = initialised
    config = load_config(home.config)
    agents, _ = load_agents(config)
    before = set(in_force(config, agents)[0].blocks)
    bad = home.config.parent / "schedules" / "bomb.yaml"
    bad.write_text(BOMB_LEVELS + "blocks: {x: *i}\n")
    alone = _bounded(lambda: load_file(bad, config, agents))  # the file itself: under 1 s and 50 MB
    assert [str(p) for p in alone.problems] == [f"{bad}:1: refused: it expands to more than 100,000 values (an "
                                                "&anchor repeated through *aliases); write the values out, or use "
                                                "fewer aliases and less nesting."]
    schedules, problems = in_force(config, agents)
    assert before and set(schedules.blocks) == before  # the day's blocks are all there still
    said = [str(p) for ps in problems.values() for p in ps]
    assert any(f"{bad}:1: refused: it expands to more than 100,000 values" in s for s in said), said


@pytest.mark.parametrize("budget", [CONFIG, PROPERTIES, REPLY], ids=lambda b: b.what)
@pytest.mark.parametrize("text, words", [
    ("a: &a [*a]\n", "refers to itself"),
    ("x: " + "[" * 120 + "]" * 120 + "\n", "nested more than"),
    ("x: " + "9" * 5000 + "\n", "cannot be read"),
    ("x: 2026-13-40\n", "in a date; write a real date"),
    ("a: [\n", "YAML syntax error"),
    ("x: !!python/object/apply:os.system [ls]\n", "YAML syntax error"),
    ("\x00\n", "YAML syntax error"),
    ("s: &s '" + "x" * 2000 + "'\nl: [" + ", ".join(["*s"] * 1000) + "]\n", "repeat its text"),
], ids=["recursive", "deep", "huge number", "no date", "syntax", "python tag", "NUL", "long aliased text"])
def test_each_refusal_is_one_located_sentence_with_its_fix(budget, text, words):
    with pytest.raises(OutsideTextRefused) as caught:
        _bounded(lambda: read_yaml(text, "f.yaml", budget))
    said = str(caught.value)
    assert said.startswith("f.yaml") and words in said and said.count(". ") == 0 and said.endswith("."), said


def test_a_text_past_the_byte_budget_is_refused_before_it_is_parsed():
    with pytest.raises(OutsideTextRefused, match="over the 65,536 it may hold"):
        _bounded(lambda: read_yaml("x: " + "y" * (REPLY.max_bytes + 1), "the change block", REPLY))


def test_anchors_a_person_writes_still_read():
    text = "base: &base {cron: '0 7 * * *', grace: 1h}\nblocks:\n  a: {<<: *base, description: A}\n"
    assert read_yaml(text, "f.yaml", CONFIG).data == {
        "base": {"cron": "0 7 * * *", "grace": "1h"},
        "blocks": {"a": {"cron": "0 7 * * *", "grace": "1h", "description": "A"}}}


def test_the_module_is_where_the_check_looks():
    assert (Path(__file__).resolve().parent.parent / "routine" / READER).is_file()
