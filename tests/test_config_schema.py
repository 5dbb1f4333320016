"""routine.yaml has one source of truth, the schema (routine/config/schema.py): every key is
described there with its default, the loader takes its defaults from there, and the shipped
routine.example.yaml shows exactly those keys and defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import yaml

from routine.config.notify import CHANNELS, topics
from routine.config.schema import CONFIG, LIBRARY_TOOLS
from routine.durations import parse_duration

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "routine.example.yaml"


def _branches(schema: dict) -> list[dict]:
    return [schema, *schema.get("oneOf", ()), *schema.get("anyOf", ())]


def schema_keys(schema: dict, prefix: tuple = ()):
    """(path, schema) of every key at every level; '*' is a named entry (an alias), '[]' a list item."""
    for branch in _branches(schema):
        for name, sub in branch.get("properties", {}).items():
            yield prefix + (name,), sub
            yield from schema_keys(sub, prefix + (name,))
        if isinstance(branch.get("additionalProperties"), dict):
            yield from schema_keys(branch["additionalProperties"], prefix + ("*",))
        if isinstance(branch.get("items"), dict):
            yield from schema_keys(branch["items"], prefix + ("[]",))


KEYS = dict(schema_keys(CONFIG))


def schema_path(path: tuple) -> tuple | None:
    """The schema's path of a key as written in a file (models.general.num_ctx → models.*.num_ctx)."""
    node, out = CONFIG, ()
    for part in path:
        found = None
        for branch in _branches(node):
            if part == "[]" and isinstance(branch.get("items"), dict):
                found, name = branch["items"], "[]"
            elif part in branch.get("properties", {}):
                found, name = branch["properties"][part], part
            elif part != "[]" and isinstance(branch.get("additionalProperties"), dict):
                found, name = branch["additionalProperties"], "*"
            if found is not None:
                break
        if found is None:
            return None
        node, out = found, out + (name,)
    return out


# --- the schema describes every key -------------------------------------------------------


def test_every_routine_yaml_key_is_described():
    undescribed = [".".join(p) for p, s in KEYS.items() if len(s.get("description", "")) < 10]
    assert len(KEYS) > 45, "the walk found the keys"
    assert not undescribed, f"give these keys a description in routine/config/schema.py: {undescribed}"


# --- the example shows the schema -----------------------------------------------------------


@dataclass
class Shown:
    line: int
    path: tuple        # as written: ('models', 'general', 'num_ctx')
    value: str | None  # None: a section (its keys follow)
    commented: bool
    explained: bool    # a comment on its line, or a comment line just above
    item: bool = False  # begins a list item (`- key: value`)


SETTING = re.compile(
    r'^(?P<lead> *)(?P<hash># ?)?(?P<indent> *)(?P<dash>- )?"?(?P<key>[a-z_][a-z0-9_]*)"?:(?: +(?P<rest>.*))?$'
)


def example_keys(text: str) -> list[Shown]:
    """Every key the example shows, commented out or not; prose comments are skipped."""
    shown: list[Shown] = []
    stack: list[tuple[int, str]] = []
    previous = ""
    for number, line in enumerate(text.splitlines(), 1):
        m = SETTING.match(line)
        if not m:
            previous = line
            continue
        depth = len(m["lead"]) + len(m["indent"])
        if m["dash"]:  # a list item: its keys sit two further in
            stack = [(d, k) for d, k in stack if d < depth]
            stack.append((depth, "[]"))
            depth += 2
        stack = [(d, k) for d, k in stack if d < depth]
        value, _, comment = (" " + (m["rest"] or "")).partition(" #")
        above = previous.strip().startswith("#") and not SETTING.match(previous)
        shown.append(Shown(number, tuple(k for _, k in stack) + (m["key"],), value.strip() or None,
                           bool(m["hash"]), bool(comment.strip()) or above, bool(m["dash"])))
        if not value.strip():
            stack.append((depth, m["key"]))
        previous = line
    return shown


SHOWN = example_keys(EXAMPLE.read_text(encoding="utf-8"))


def test_the_example_shows_no_key_the_schema_lacks():
    unknown = [f"line {s.line}: {'.'.join(s.path)}" for s in SHOWN if schema_path(s.path) is None]
    assert len(SHOWN) > 40, "the parse found the keys"
    assert not unknown, f"routine.example.yaml shows keys routine.yaml does not have: {unknown}"


def test_every_key_is_in_the_example_with_a_comment():
    explained = {schema_path(s.path) for s in SHOWN if s.explained}
    missing = [".".join(p) for p in KEYS if p not in explained]
    assert not missing, f"show these keys in routine.example.yaml, each with a comment: {missing}"


def test_the_example_shows_the_schemas_defaults():
    wrong = []
    for s in SHOWN:
        spec = KEYS.get(schema_path(s.path) or ())
        in_entry = "*" in (schema_path(s.path) or ())  # an alias or library of the example's own
        if s.value is None or spec is None or "default" not in spec or (in_entry and not s.commented):
            continue
        if yaml.safe_load(s.value) != spec["default"]:
            wrong.append(f"line {s.line}: {'.'.join(s.path)} shows {s.value}, the default is {spec['default']!r}")
    assert not wrong, wrong


def test_the_example_is_valid_with_every_key_uncommented():
    import jsonschema

    # Keys quoted, as YAML 1.1 would read `on:` as true.
    lines = [" " * (2 * len(s.path) - 4) + "- " + f'"{s.path[-1]}": {s.value or ""}' if s.item
             else " " * (2 * len(s.path) - 2) + f'"{s.path[-1]}": {s.value or ""}' for s in SHOWN]
    doc = yaml.safe_load("\n".join(lines))
    errors = [e.message for e in jsonschema.Draft202012Validator(CONFIG).iter_errors(doc)]
    assert not errors, errors


# --- the loader takes its defaults from the schema ----------------------------------------


def _seconds(text: str) -> float:
    return parse_duration(text).total_seconds()


def _size(text: str) -> int:
    from routine.config.loader import parse_size

    return parse_size(text)


# How each default shows on the loaded Config: (read it, the schema's default as the code holds it).
LOADED = {
    ("ollama", "host"): (lambda c: c.ollama_host, str),
    ("ollama", "max_resident"): (lambda c: c.max_resident, int),
    ("ollama", "unload_foreign"): (lambda c: c.unload_foreign, bool),
    ("ollama", "idle_unload"): (lambda c: c.idle_unload, _seconds),
    ("ollama", "preload"): (lambda c: c.preload, bool),
    ("models", "*", "num_ctx"): (lambda c: c.models["general"].num_ctx, int),
    ("models", "*", "num_predict"): (lambda c: c.models["general"].num_predict, int),
    ("models", "*", "tokenizer"): (lambda c: c.models["general"].tokenizer, str),
    ("models", "*", "fallbacks"): (lambda c: c.models["general"].fallbacks, tuple),
    ("models", "*", "options"): (lambda c: c.models["general"].options, lambda d: tuple(sorted(d.items()))),
    ("models", "*", "keep_alive"): (lambda c: c.models["general"].keep_alive, str),
    ("models", "*", "deployments"): (lambda c: c.models["general"].deployments[1:], tuple),
    ("sandbox", "workdir"): (lambda c: c.sandbox_workdir, str),
    ("sandbox", "mode"): (lambda c: c.sandbox_mode, str),
    ("sandbox", "timeout"): (lambda c: c.sandbox_timeout, _seconds),
    ("sandbox", "memory"): (lambda c: c.sandbox_memory, _size),
    ("sandbox", "output"): (lambda c: c.sandbox_output, _size),
    ("watch", "inotify"): (lambda c: c.watch_inotify, bool),
    ("watch", "reconcile"): (lambda c: c.reconcile_every, _seconds),
    ("chat", "quiet"): (lambda c: c.chat_quiet, _seconds),
    ("projects", "pickup_backoff"): (lambda c: c.pickup_backoff, _seconds),
    ("request_timeout",): (lambda c: c.request_timeout, float),
    ("retries",): (lambda c: c.retries, int),
    ("retry_backoff",): (lambda c: c.retry_backoff, float),
    **{("layout", k): (lambda c, k=k: getattr(c.layout, k), str) for k in
       ("daily", "weekly", "drafts", "alerts", "archive", "agents", "dashboard", "chats")},
    ("libraries", "*", "tools"): (lambda c: c.libraries["shared"].tools, tuple),
    ("holiday",): (lambda c: c.holiday, tuple),
    ("calendars",): (lambda c: c.calendars, tuple),
    ("notify", "urls"): (lambda c: c.notify.urls, tuple),
    ("notify", "on"): (lambda c: c.notify.on, topics),
    ("notify", "ready"): (lambda c: c.notify.ready, tuple),
    ("notify", "quiet_hours"): (lambda c: c.notify.quiet, lambda v: None),
    ("notify", "remind"): (lambda c: c.notify.remind, lambda v: timedelta(days=1)),
    ("notify", "answer_within"): (lambda c: c.notify.answer_within, parse_duration),
    **{("notify", kind.KEY, k): (lambda c, kind=kind, k=k: getattr(c.notify.channel(kind), k), str)
       for kind in CHANNELS.values() for k in kind.SCHEMA},
    ("trials", "window"): (lambda c: c.trials.window, lambda v: None),
    ("trials", "clear"): (lambda c: c.trials.clear, _seconds),
    ("events", "listen"): (lambda c: c.events.listen, str),
    ("events", "per_minute"): (lambda c: c.events.per_minute, int),
    ("events", "tokens"): (lambda c: c.events.tokens, lambda v: tuple(sorted(v.items()))),
    ("memory", "embedding_model"): (lambda c: c.memory.embedding_model, str),
    ("memory", "unload_after"): (lambda c: c.memory.unload_after, float),
    ("memory", "chunk_chars"): (lambda c: c.memory.chunk_chars, int),
    ("mcp_servers",): (lambda c: {}, dict),
    ("mcp_servers", "*", "args"): (lambda c: c.mcp_servers["git"].args, tuple),
    ("mcp_servers", "*", "env"): (lambda c: c.mcp_servers["git"].env, lambda d: tuple(d.items())),
    ("mcp_servers", "*", "paths"): (lambda c: c.mcp_servers["git"].paths, tuple),
    ("mcp_servers", "*", "hosts"): (lambda c: c.mcp_servers["git"].hosts, tuple),
    ("mcp_servers", "*", "timeout"): (lambda c: c.mcp_servers["git"].timeout, _seconds),
}
# Keys with no fixed default: required, or worked out (the machine's zone, the state dir, ollama.host).
NO_DEFAULT = {("vault",), ("timezone",), ("models",), ("models", "*", "model"), ("models", "*", "api_base"),
              ("models", "*", "deployments", "[]", "model"), ("models", "*", "deployments", "[]", "api_base"),
              ("models", "*", "deployments", "[]", "api_key_env"), ("metrics", "textfile"), ("libraries",),
              ("libraries", "*", "path"), ("calendars", "[]", "source"), ("calendars", "[]", "name"),
              ("mcp_servers", "*", "command"), ("mcp_servers", "*", "url"),
              ("author",)}


def test_every_key_has_a_default_or_says_why_not():
    sections = {p for p, s in KEYS.items() if "properties" in s}
    with_default = {p for p, s in KEYS.items() if "default" in s}
    assert with_default == set(LOADED), "a key with a default needs a row in LOADED (how it shows when loaded)"
    assert set(KEYS) - sections - with_default == NO_DEFAULT, "a key without a default must be worked out"


def test_a_config_of_only_the_required_keys_loads_with_the_schemas_defaults(tmp_path, monkeypatch):
    from routine.config.loader import load_config

    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.setenv("ROUTINE_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "routine.yaml"
    # Only the required keys (a library named by its folder alone shows the library defaults).
    path.write_text("vault: Vault\nmodels:\n  general: ollama_chat/m\nlibraries:\n  shared: Agents\n"
                    "mcp_servers:\n  git:\n    command: mcp-server-git\n")
    config = load_config(path)
    wrong = {}
    for key, (loaded, form) in LOADED.items():
        want = form(KEYS[key]["default"])
        if loaded(config) != want:
            wrong[".".join(key)] = (loaded(config), want)
    assert not wrong, f"loaded differently from the schema's default (loaded, schema): {wrong}"
    # ... and the keys with no fixed default are worked out.
    assert config.vault == tmp_path / "Vault" and config.timezone is None
    assert config.author is None  # publish falls back to the login name
    assert config.metrics_textfile == tmp_path / "state" / "metrics" / "routine.prom"
    assert config.models["general"].api_base is None
    assert [d.api_base for d in config.models["general"].deployments] == ["http://127.0.0.1:11434"]
    assert config.libraries["general"].tools == LIBRARY_TOOLS


def test_an_alias_made_in_code_has_the_same_defaults_as_a_loaded_one(tmp_path, monkeypatch):
    from routine.config.loader import load_config
    from routine.config.model import ModelAlias

    path = tmp_path / "routine.yaml"
    path.write_text("vault: Vault\nmodels:\n  general: {model: ollama_chat/m}\n")
    loaded = load_config(path).models["general"]
    made = ModelAlias(name="general", model="ollama_chat/m", deployments=loaded.deployments)
    assert made == loaded


def test_an_agent_note_of_only_the_required_keys_has_the_schemas_defaults(tmp_path):
    from routine.config.loader import load_config, parse_agent_note
    from routine.config.model import AgentSpec
    from routine.config.schedule_schema import AGENT

    path = tmp_path / "routine.yaml"
    path.write_text("vault: Vault\nmodels:\n  general: ollama_chat/m\n")
    spec, problems = parse_agent_note("---\nagent: helper\nmodel: general\n---\nHelp.\n", "Agents/Helper.md",
                                      load_config(path))
    assert spec is not None and not problems
    schema = AGENT["properties"]
    assert spec.approval == schema["approval"]["default"]
    assert spec.max_iterations == schema["max_iterations"]["default"]
    assert spec.timeout == _seconds(schema["timeout"]["default"])
    made = AgentSpec(name="helper", role="", model="general", reads=(), writes=(), approval="none", tools=(),
                     grounding=(), write=None, task="", system_prompt="Help.", source="Agents/Helper.md")
    assert (made.max_iterations, made.timeout) == (spec.max_iterations, spec.timeout)


def test_a_block_and_trigger_of_only_the_required_keys_have_the_schemas_defaults(initialised):
    """Schedule files' defaults are the schema's too: a block read from a file, a block built in
    code (a project's cadence) and the schema agree, so changing one side alone fails here."""
    from routine.config.loader import load_agents, load_config
    from routine.config.schedule_schema import BLOCK, STEP, TRIGGER
    from routine.config.schema import defaults
    from routine.schedule.cron import Cron
    from routine.schedule.loader import load_schedules
    from routine.schedule.model import Block, Trigger

    config = load_config(initialised.config)
    for old in config.schedules_dir.glob("*.yaml"):
        old.unlink()
    (config.schedules_dir / "bare.yaml").write_text(
        "blocks:\n  bare:\n    cron: '0 9 * * *'\n    steps:\n"
        "      - {agent: planner, search: {query: plans}, graph: {around: Plans/OKRs}}\n"
        "triggers:\n  - {on: created, path: 'Inbox/*.md', agent: librarian}\n")
    agents, _ = load_agents(config)
    schedules = load_schedules(config, agents)
    block, trigger = schedules.blocks["bare"], schedules.triggers[0]
    want, step = defaults(BLOCK), block.steps[0]
    assert (block.description, block.missed, block.enabled) == (want["description"], want["missed"], want["enabled"])
    assert block.grace == parse_duration(want["grace"])
    assert (block.retry.attempts, block.retry.backoff) == (want["retry"]["attempts"],
                                                           parse_duration(want["retry"]["backoff"]))
    assert step.search is not None and step.search.k == STEP["properties"]["search"]["properties"]["k"]["default"]
    assert step.graph is not None and step.graph.depth == STEP["properties"]["graph"]["properties"]["depth"]["default"]
    assert trigger.debounce == parse_duration(defaults(TRIGGER)["debounce"])
    made = Block(id="bare", file=block.file, cron=Cron.parse("0 9 * * *"), timezone=block.timezone, steps=block.steps)
    assert made == block
    assert Trigger(id=trigger.id, file=trigger.file, on="created", path="Inbox/*.md", agent="librarian",
                   write=trigger.write) == trigger
