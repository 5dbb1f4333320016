"""Model residency: at most two models resident, swaps chosen with the future in view.

The stand-in Ollama allows three resident models, so every "never more than two" here is
routine's doing. Calls go through the real `ollama` and `litellm` clients.
"""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta, timezone

import ollama as ollama_client
import pytest

from fake_ollama import FakeOllama
from routine.config.loader import load_config
from routine.errors import ConfigError, ModelBusy
from routine.journal import Journal
from routine.journal.model_events import ModelEvents
from routine.models.client import ModelClient
from routine.models.manager import ModelManager
from routine.models.plan import Use
from routine.models.preloader import Preloader

MISTRAL, QWEN, CODER = "mistral:7b-instruct-q4_K_M", "qwen2.5:7b-instruct-q4_K_M", "qwen2.5-coder:7b-instruct-q4_K_M"
T0 = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)


def write_config(tmp_path, url, extra_ollama="", extra_models="", extra="") -> object:
    path = tmp_path / "routine.yaml"
    path.write_text(
        f"vault: {tmp_path / 'Vault'}\n"
        f"ollama:\n  host: {url}\n  max_resident: 2\n{extra_ollama}"
        "models:\n"
        f"  general: {{model: ollama_chat/{MISTRAL}, num_ctx: 4096}}\n"
        f"  analyst: {{model: ollama_chat/{QWEN}, num_ctx: 4096}}\n"
        f"  coder: {{model: ollama_chat/{CODER}, num_ctx: 4096}}\n"
        f"{extra_models}"
        "retry_backoff: 0.01\nrequest_timeout: 30\n" + extra)
    return load_config(path)


@pytest.fixture
def srv():
    server = FakeOllama(max_loaded=3, load_delay=0.05).start()
    yield server
    server.stop()


@pytest.fixture
def events(tmp_path):
    journal = Journal(tmp_path / "journal.sqlite3")
    yield ModelEvents(journal.db)
    journal.close()


class Clock:
    def __init__(self, now=T0):
        self.now = now

    def __call__(self):
        return self.now


def test_three_models_racing_never_make_three_resident(tmp_path, srv, events):
    config = write_config(tmp_path, srv.url)
    client = ModelClient(config, ModelManager(config, events=events))
    for model in (MISTRAL, QWEN, CODER):
        srv.script(model, [{"content": f"answer from {model}", "delay": 0.6}])
    answers, errors = {}, []

    def ask(alias):
        try:
            answers[alias] = client.complete(alias, [{"role": "user", "content": "hello"}])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(a,)) for a in ("general", "analyst", "coder")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert {a: r.text for a, r in answers.items()} == {
        "general": f"answer from {MISTRAL}", "analyst": f"answer from {QWEN}", "coder": f"answer from {CODER}"}
    assert srv.peak_resident == 2
    # The third model loaded only after a victim was unloaded and gone.
    kinds = [(e["kind"], e["model"]) for e in srv.events if e["kind"] in ("load", "unload", "reload", "evict")]
    third_load = [i for i, (k, _) in enumerate(kinds) if k == "load"][2]
    assert any(k == "unload" for k, _ in kinds[:third_load])
    assert not any(k in ("reload", "evict") for k, _ in kinds)  # Ollama never had to decide
    # One of the three started cold after waiting; the journal knows every load and why.
    assert sum(not r.warm for r in answers.values()) == 3
    reasons = [(e["event"], e["reason"]) for e in events.recent()]
    assert reasons.count(("load", "on-demand")) == 3
    assert any(ev == "unload" and reason.startswith("evict-for:") for ev, reason in reasons)


def test_victim_is_the_model_needed_farthest_ahead_not_the_least_recent(tmp_path, srv, events):
    config = write_config(tmp_path, srv.url)
    clock = Clock()
    # general is needed at 10:00, analyst only at 15:00.
    needs = {MISTRAL: T0.replace(hour=10), QWEN: T0.replace(hour=15)}
    manager = ModelManager(config, events=events, forecast=lambda key, now: needs.get(key[1]), clock=clock)
    general, analyst, coder = (config.models[n] for n in ("general", "analyst", "coder"))
    manager.lease(analyst, analyst.primary).release()
    clock.now += timedelta(minutes=1)
    manager.lease(general, general.primary).release()  # general is the most recently used...
    clock.now += timedelta(minutes=1)
    with manager.lease(coder, coder.primary) as lease:
        assert not lease.warm
    # ...yet analyst went: it is needed farthest in the future (LRU would have taken general).
    assert set(srv.resident()) == {MISTRAL, CODER}
    assert events.recent(1)[0]["event"] == "load"
    assert [e for e in events.recent() if e["event"] == "unload"][0]["model"] == QWEN


def test_without_a_forecast_the_least_recently_used_goes(tmp_path, srv):
    config = write_config(tmp_path, srv.url)
    clock = Clock()
    manager = ModelManager(config, clock=clock)
    for name in ("general", "analyst", "general", "coder"):
        clock.now += timedelta(minutes=1)
        manager.lease(config.models[name], config.models[name].primary).release()
    assert set(srv.resident()) == {MISTRAL, CODER}


def test_a_model_another_client_loaded_counts_and_is_left_alone(tmp_path, srv):
    ollama_client.Client(host=srv.url).generate(model="llama3.2:3b", prompt="", keep_alive=-1)
    config = write_config(tmp_path, srv.url)
    manager = ModelManager(config)
    general, analyst = config.models["general"], config.models["analyst"]
    with manager.lease(general, general.primary):
        with pytest.raises(ModelBusy) as busy:
            manager.lease(analyst, analyst.primary, timeout=0.3)
    assert "llama3.2:3b (loaded by another program)" in busy.value.message
    assert "unload_foreign" in busy.value.fix
    assert set(srv.resident()) == {"llama3.2:3b", MISTRAL}
    # Once our own model is idle, it is the one that makes room.
    manager.lease(analyst, analyst.primary).release()
    assert set(srv.resident()) == {"llama3.2:3b", QWEN}


def test_unload_foreign_lets_routine_make_room(tmp_path, srv):
    ollama_client.Client(host=srv.url).generate(model="llama3.2:3b", prompt="", keep_alive=-1)
    config = write_config(tmp_path, srv.url, extra_ollama="  unload_foreign: true\n")
    manager = ModelManager(config)
    general, analyst = config.models["general"], config.models["analyst"]
    with manager.lease(general, general.primary):
        manager.lease(analyst, analyst.primary, timeout=5).release()
    assert set(srv.resident()) == {MISTRAL, QWEN}


def test_requests_are_pinned_so_a_resident_model_is_never_reloaded(tmp_path, srv, events):
    config = write_config(tmp_path, srv.url)
    client = ModelClient(config, ModelManager(config, events=events, managed=True))
    answers = [client.complete(alias, [{"role": "user", "content": f"turn {i}"}])
               for i, alias in enumerate(["general", "general", "analyst", "general", "coder", "coder", "general"])]
    assert not [e for e in srv.events if e["kind"] == "reload"]
    assert {e["num_ctx"] for e in srv.events if e["kind"] in ("load", "request")} == {4096}
    # Every chat carried the same options and keep_alive -1 (the daemon unloads, not Ollama).
    chats = [r for r in srv.requests if r["_path"] == "/api/chat"]
    assert {(r["options"]["num_ctx"], r["keep_alive"]) for r in chats} == {(4096, -1)}
    # load_duration and /api/ps agree: a warm answer had no load, a cold one had the fake's load.
    loads = sum(e["kind"] == "load" for e in srv.events)
    assert sum(not a.warm for a in answers) == loads
    assert all(a.load_duration_ms == 0 for a in answers if a.warm)
    assert all(a.load_duration_ms > 0 for a in answers if not a.warm)


def test_aliases_pinning_one_model_differently_are_refused(tmp_path, srv):
    with pytest.raises(ConfigError) as err:
        write_config(tmp_path, srv.url, extra_models=f"  long: {{model: ollama_chat/{MISTRAL}, num_ctx: 16384}}\n")
    assert "Ollama would reload the model" in str(err.value)
    assert "routine.yaml:" in str(err.value)


def test_preload_loads_ahead_of_the_step_and_never_evicts_a_sooner_need(tmp_path, srv, events):
    config = write_config(tmp_path, srv.url)
    clock = Clock(T0.replace(hour=9, minute=50))
    key = lambda name: (srv.url, name)  # noqa: E731
    uses = [Use(T0.replace(hour=10), key(CODER), "coder", "builder", "deep-work", 0)]
    needs = {MISTRAL: T0.replace(hour=10, minute=1), QWEN: T0.replace(hour=10, minute=30)}
    manager = ModelManager(config, events=events, forecast=lambda k, now: needs.get(k[1]), clock=clock)
    preloader = Preloader(manager, lambda: config, lambda a, b: [u for u in uses if a <= u.at <= b],
                          lambda k: timedelta(minutes=2), clock=clock)
    for name in ("general", "analyst"):
        manager.lease(config.models[name], config.models[name].primary).release()

    wake = preloader.run_due(clock.now)
    assert wake == T0.replace(hour=9, minute=55)  # first the idle check, at the end of the grace
    clock.now = wake
    wake = preloader.run_due(clock.now)
    assert wake == T0.replace(hour=9, minute=58)  # then the lead time before the step: no polling
    assert set(srv.resident()) == {MISTRAL, QWEN}  # both are needed within idle_unload: kept
    clock.now = wake
    preloader.run_due(clock.now)
    assert set(srv.resident()) == {MISTRAL, CODER}  # qwen (needed 10:30) made way, mistral (10:01) stayed
    assert [(e["event"], e["reason"]) for e in events.recent(2)] == [
        ("load", "preload"),
        ("unload", f"evict-for:{CODER}"),
    ]

    # A preload whose only victim is needed before the step is refused.
    needs[CODER] = T0.replace(hour=10, minute=5)
    assert not manager.preload(config.models["analyst"], config.models["analyst"].primary,
                               needed_at=T0.replace(hour=10, minute=30))
    assert set(srv.resident()) == {MISTRAL, CODER}


def test_idle_models_are_unloaded_and_in_use_ones_are_not(tmp_path, srv, events):
    config = write_config(tmp_path, srv.url, extra_ollama="  idle_unload: 1h\n")
    clock = Clock()
    needs = {MISTRAL: T0 + timedelta(minutes=30)}  # general is needed soon; analyst not at all
    manager = ModelManager(config, events=events, forecast=lambda k, now: needs.get(k[1]), clock=clock, managed=True)
    for name in ("general", "analyst"):
        manager.lease(config.models[name], config.models[name].primary).release()
    assert manager.unload_idle() == T0 + timedelta(minutes=5)  # nothing before the grace: look again then
    clock.now += timedelta(minutes=6)
    manager.unload_idle()
    assert srv.resident() == [MISTRAL]
    assert events.recent(1)[0]["reason"] == "idle"
    manager.shutdown()
    assert srv.resident() == []
    assert events.recent(1)[0]["reason"] == "shutdown"


def test_a_second_deployment_takes_the_call_when_the_first_host_is_full(tmp_path, srv):
    other = FakeOllama(max_loaded=3, load_delay=0.01).start()
    try:
        for name in ("llama3.2:3b", "nomic-embed-text"):  # the first host is full of someone else's models
            ollama_client.Client(host=srv.url).generate(model=name, prompt="", keep_alive=-1)
        config = write_config(tmp_path, srv.url, extra_models=(
            f"  shared: {{model: ollama_chat/{QWEN}, num_ctx: 4096, deployments: [{{api_base: '{other.url}'}}]}}\n"))
        answer = ModelClient(config).complete("shared", [{"role": "user", "content": "hi"}])
        assert answer.text.endswith(QWEN)
        assert other.resident() == [QWEN]
        assert QWEN not in srv.resident()
    finally:
        other.stop()


def _shipped_schedule(home):
    """The config, agents and blocks `routine init` ships, loaded in this process."""
    import os

    from routine.config.loader import load_agents
    from routine.schedule.loader import load_schedules

    os.environ["ROUTINE_CONFIG"] = str(home.config)
    try:
        config = load_config()
    finally:
        del os.environ["ROUTINE_CONFIG"]
    agents, _ = load_agents(config)
    return config, agents, load_schedules(config, agents).blocks.values()


def test_next_scheduled_use_agrees_with_the_enumerated_plan(initialised):
    """The manager's quick forecast and the day plan must tell the same story."""
    from zoneinfo import ZoneInfo

    from routine.models.plan import Forecast, next_scheduled_use, upcoming_uses

    config, agents, blocks = _shipped_schedule(initialised)
    tz = ZoneInfo("Europe/Berlin")
    start = datetime(2026, 11, 23, 6, 0, tzinfo=tz)
    forecast = Forecast(
        upcoming_uses(config, agents, blocks, start - timedelta(hours=1), start + timedelta(days=9), tz)
    )
    keys = {u.model for u in forecast.uses}
    assert len(keys) == 3
    for minutes in range(0, 7 * 24 * 60, 47):
        now = start + timedelta(minutes=minutes)
        for key in keys:
            assert next_scheduled_use(config, agents, blocks, key, now, tz) == forecast.next_use(key, now), (key, now)


def test_ollama_embeddings_count_toward_the_limit_and_make_way_for_a_step(tmp_path, srv, events):
    from routine.memory.embedder import ServerEmbedder

    config = write_config(tmp_path, srv.url, extra="memory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    clock = Clock()
    needs = {QWEN: T0 + timedelta(hours=1)}  # the schedule needs the analyst later; nothing needs the embedder
    manager = ModelManager(config, events=events, forecast=lambda key, now: needs.get(key[1]), clock=clock)
    for name in ("general", "analyst"):
        clock.now += timedelta(minutes=1)
        manager.lease(config.models[name], config.models[name].primary).release()
    clock.now += timedelta(minutes=1)
    vectors = ServerEmbedder(config, "ollama:nomic-embed-text", manager=manager).embed(["the kiln", "the battery"])
    assert len(vectors) == 2 and len(vectors[0]) == 384
    assert sorted(srv.resident()) == ["nomic-embed-text:latest", QWEN]  # general, not needed again, made way
    # A step that needs general now: the embedding model (nothing scheduled needs it) goes.
    clock.now += timedelta(minutes=1)
    manager.lease(config.models["general"], config.models["general"].primary).release()
    assert srv.peak_resident == 2 and "nomic-embed-text:latest" not in srv.resident()
    assert not [e for e in srv.events if e["kind"] == "reload"]


def test_an_openai_compatible_deployment_answers_when_the_ollama_host_is_down(tmp_path, srv):
    """An alias may also run on an OpenAI-compatible server (here Ollama's own /v1 endpoint)."""
    config = write_config(tmp_path, "http://127.0.0.1:9", extra_models=(
        f"  remote: {{model: ollama_chat/{QWEN}, num_ctx: 4096, "
        f"deployments: [{{model: openai/{QWEN}, api_base: '{srv.url}/v1'}}]}}\n"))
    srv.script(QWEN, ["- from the OpenAI-compatible server"])
    answer = ModelClient(config).complete("remote", [{"role": "user", "content": "hi"}])
    assert answer.text == "- from the OpenAI-compatible server" and answer.model == f"openai/{QWEN}"
    assert "127.0.0.1:9" in answer.attempts[0] and "not reachable" in answer.attempts[0]
    assert srv.last_request("/v1/chat/completions")["messages"][-1]["content"] == "hi"


def test_many_parallel_steps_and_embeddings_never_make_three_resident(tmp_path, srv, events):
    """30 fires and a stream of Inbox notes to embed, in parallel: a view of /api/ps taken just
    before another thread's load finished must not make that model look gone (a third load)."""
    import time as _time

    from routine.memory.embedder import ServerEmbedder

    config = write_config(tmp_path, srv.url, extra="memory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    manager = ModelManager(config, events=events)
    embedder = ServerEmbedder(config, "ollama:nomic-embed-text", manager=manager)
    srv.ps_delay = 0.03  # a busy Jetson answers /api/ps late
    errors = []
    stop = _time.monotonic() + 4

    def step(alias):
        while _time.monotonic() < stop:
            try:
                with manager.lease(config.models[alias], config.models[alias].primary):
                    _time.sleep(0.01)  # pacing: a step holding its model a moment (waits for nothing)
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
            _time.sleep(0.01)  # pacing: the next step, a moment later

    def embed():
        while _time.monotonic() < stop:
            try:
                embedder.embed(["a note from the Inbox"])
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
            _time.sleep(0.01)

    threads = [threading.Thread(target=step, args=(a,)) for a in ("general", "analyst", "coder") * 4]
    threads += [threading.Thread(target=embed) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]
    assert len([e for e in srv.events if e["kind"] == "load"]) > 5  # it really swapped, many times
    assert srv.peak_resident <= 2
    # No model routine had just loaded was taken for gone (then a third load would begin).
    assert not [e for e in events.recent(limit=100_000) if e["event"] == "gone"]


def test_a_model_another_program_loads_while_ours_loads_is_counted(tmp_path, srv):
    """The person runs `ollama run llama3.2` while routine loads a model and a second step asks
    for a third: the second step's /api/ps answer (asked before our load finished, answered
    after) still counts the other program's model, so two stay resident, not three."""
    import time as _time

    config = write_config(tmp_path, srv.url)
    manager = ModelManager(config)
    general, analyst = config.models["general"], config.models["analyst"]
    srv.ps_delay = 0.3  # a busy host answers /api/ps late
    first = threading.Thread(target=lambda: manager.lease(general, general.primary).release())
    first.start()
    deadline = _time.monotonic() + 10
    while ("GET", "/api/ps") not in srv.http_log and _time.monotonic() < deadline:
        _time.sleep(0.005)  # pacing: until the first step's /api/ps is on its way
    ollama_client.Client(host=srv.url).generate(model="llama3.2:3b", prompt="", keep_alive=-1)  # the person
    srv.ps_delay = 1.0  # the second step's answer arrives after the first step's load finished
    second_errors = []

    def second():
        try:
            manager.lease(analyst, analyst.primary, timeout=5).release()
        except ModelBusy as exc:
            second_errors.append(exc)
    t2 = threading.Thread(target=second)
    t2.start()
    first.join(30)
    t2.join(30)
    assert srv.peak_resident == 2, srv.events
    assert "llama3.2:3b" in srv.resident()
    assert any(s["model"] == "llama3.2:3b" and not s["ours"] for s in manager.snapshot())


def test_the_preloader_plans_no_load_for_a_paused_or_holiday_slot(initialised, tmp_path):
    """What the daemon's preloader asks (`Residency.scheduled_uses`): a held slot needs no model."""
    from zoneinfo import ZoneInfo

    from routine.models.plan import upcoming_uses
    from routine.schedule import pause

    config, agents, blocks = _shipped_schedule(initialised)
    tz = ZoneInfo("Europe/Berlin")
    start = datetime(2026, 11, 23, 0, 0, tzinfo=tz)  # a Monday
    every = upcoming_uses(config, agents, blocks, start, start + timedelta(days=2), tz)
    first = every[0].block
    pause.pause(tmp_path, [first], None, start)
    held = pause.held_slots(tmp_path, ((date(2026, 11, 24), date(2026, 11, 24)),), tz)  # Tuesday: a holiday
    left = upcoming_uses(config, agents, blocks, start, start + timedelta(days=2), tz, held=held)
    assert left and all(u.block != first and u.at.date() == date(2026, 11, 23) for u in left)
    assert len(left) < len([u for u in every if u.at.date() == date(2026, 11, 23)])
