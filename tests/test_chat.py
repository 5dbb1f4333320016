"""Conversations, in process: sessions with memory, the rolling summary, tool calls, chat notes.

Only the model server is a stand-in (tests/fake_ollama.py, reached through litellm); the journal,
the vault, the search index and Mistral's tokenizer are real. The daemon, the terminal and
streaming are in tests/test_chat_daemon.py.
"""

from __future__ import annotations

import json
import re

import pytest

from routine.models.tokens import MistralTokens, count_request

MODEL = "mistral:7b-instruct-q4_K_M"
WORDS = [
    "kiln",
    "glaze",
    "relay",
    "supplier",
    "firing",
    "schedule",
    "thermocouple",
    "invoice",
    "client",
    "pricing",
    "draft",
    "launch",
    "review",
    "battery",
    "report",
    "garden",
    "budget",
    "sprint",
    "workshop",
    "notes",
    "plan",
    "deadline",
    "Friday",
    "Monday",
    "outline",
    "chapter",
]


def prose(seed: int, words: int) -> str:
    """Varied sentences (a real answer is not a loop; the reply check would reject one)."""
    import random

    rng = random.Random(seed)
    out = []
    while len(out) < words:
        sentence = [rng.choice(WORDS) for _ in range(rng.randint(6, 12))]
        out += sentence[:-1] + [sentence[-1] + "."]
    return " ".join(out).capitalize()
FILLER = ("The kiln controller needs its thermocouple calibrated before the glaze tests, and the "
          "supplier said the new relay ships on Thursday, so the firing schedule moves a day. ")


@pytest.fixture
def chat_home(initialised, monkeypatch):
    """An initialised home whose search index embeds through the stand-in (no MiniLM load), with the
    environment set for calls into routine from this process."""
    home = initialised
    home.config.write_text(home.config.read_text() + "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n")
    for key in ("ROUTINE_CONFIG", "ROUTINE_STATE_DIR", "ROUTINE_RUNTIME_DIR", "OLLAMA_HOST", "HOME"):
        monkeypatch.setenv(key, home.env[key])
    monkeypatch.setenv("OLLAMA_API_BASE", home.env["OLLAMA_HOST"])
    return home


def small_window(home, num_ctx: int, num_predict: int) -> None:
    text = home.config.read_text()
    text = text.replace("num_ctx: 8192\n    tokenizer: mistral",
                        f"num_ctx: {num_ctx}\n    num_predict: {num_predict}\n    tokenizer: mistral", 1)
    home.config.write_text(text)


def cli(capsys, *args) -> tuple[int, str, str]:
    """`routine ARGS` through the real entry point, in this process."""
    from routine.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def chat_requests(ollama) -> list[dict]:
    """The conversation's requests (not the fold's, not the embedder's), in order."""
    return [
        r
        for r in list(ollama.requests)
        if r["_path"] == "/api/chat"
        and "in a\nconversation with"
        in r["messages"][0]["content"].replace("in a conversation with", "in a\nconversation with")
    ]


def fold_requests(ollama) -> list[dict]:
    return [r for r in list(ollama.requests) if r["_path"] == "/api/chat"
            and r["messages"][0]["content"].startswith("You keep the running summary")]


def runner_for(home):
    from routine.config.loader import load_agents, load_config
    from routine.flows.step_setup import STEP_SETUP
    from routine.journal import Journal
    from routine.runner.step import Runner

    config = load_config(None)
    agents, _ = load_agents(config)
    journal = Journal()
    return Runner(config, journal, setup=STEP_SETUP), journal, agents


def test_ask_then_continue_keeps_the_conversation_and_the_journal_has_every_message(chat_home, ollama, capsys):
    code, out, err = cli(capsys, "ask", "strategist", "Which key result matters most this week?")
    assert code == 0, err
    assert "Which key result matters most this week?" in out  # the stand-in echoes the question
    chat_id = re.search(r"conversation (c[\w-]+)", err)[1]
    code, out, err = cli(capsys, "ask", "strategist", "-c", "And what should I drop?")
    assert code == 0, err and f"conversation {chat_id}" in err
    last = chat_requests(ollama)[-1]["messages"]
    # The second request carries the first exchange, then the new message stamped with date, time and zone.
    assert last[1]["role"] == "user"  # stamped with when it was sent, as the new one is
    assert re.match(r"\[\w{3} \d{4}-\d\d-\d\d \d\d:\d\d \S+\] Which key result matters most this week\?$",
                    last[1]["content"])
    assert last[2]["role"] == "assistant" and "Which key result" in last[2]["content"]
    assert re.match(r"\[\w{3} \d{4}-\d\d-\d\d \d\d:\d\d \S+\] And what should I drop\?", last[3]["content"])
    assert "[[Plans/OKRs]]" in last[0]["content"] or "## [[Plans/OKRs]]" in last[0]["content"]  # grounding
    code, out, _ = cli(capsys, "chats", "show", chat_id, "--json")
    chat = json.loads(out)
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "user", "assistant"]
    answer = chat["messages"][1]
    assert answer["model"] == f"ollama_chat/{MODEL}" and answer["tokens"] > 0 and answer["tokens_in"] > 0
    assert "Plans/OKRs.md" in answer["details"]["sources"]
    code, out, _ = cli(capsys, "chats", "list")
    assert chat_id in out and "strategist" in out


LEAKED = "Sure, the beta first.\n<|im_start|>user\nAnd tomorrow?"  # a reply streamed, then refused


def test_ask_marks_a_streamed_answer_that_was_rejected_before_the_retry(chat_home, ollama, capsys):
    """`routine ask` streams as the model writes; a reply the checks refuse was already on screen: the
    stream says it was rejected, on a line of its own, before the retry's answer."""
    good = prose(7, 40)
    ollama.script(MODEL, [LEAKED, good])
    code, out, err = cli(capsys, "ask", "strategist", "What matters today?")
    assert code == 0, err
    rejected, _, accepted = out.partition("— this answer was rejected (chat-template control tokens instead of "
                                          "text); asking again —\n")
    assert "Sure, the beta first." in rejected and accepted.strip() == good
    assert "reply 2" in err and "chat-template control tokens" in err
    chat_id = re.search(r"conversation (c[\w-]+)", err)[1]
    code, out, _ = cli(capsys, "chats", "show", chat_id, "--json")
    answer = json.loads(out)["messages"][-1]
    assert answer["content"].strip() == good and "control tokens" in answer["details"]["rejected"][0]


def test_ask_json_says_which_reply_was_accepted(chat_home, ollama, capsys):
    good = prose(8, 40)
    ollama.script(MODEL, [LEAKED, good])
    code, out, err = cli(capsys, "ask", "strategist", "What matters today?", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["answer"] == good and result["attempt"] == 2
    assert result["rejected"] == ["chat-template control tokens instead of text"]
    ollama.script(MODEL, [good])
    result = json.loads(cli(capsys, "ask", "strategist", "-c", "And then?", "--json")[1])
    assert result["attempt"] == 1 and result["rejected"] == []


def test_a_tool_call_in_a_conversation_is_logged_with_its_result_and_shown(chat_home, ollama, capsys):
    ollama.script(MODEL, [{"tool_calls": [{"name": "read_note", "arguments": {"path": "Plans/Project Map.md"}}]},
                          "The Project Map lists no projects yet ([[Plans/Project Map]])."])
    code, out, err = cli(capsys, "ask", "strategist", "What is on my project map?")
    assert code == 0, err
    assert "The Project Map lists no projects yet" in out
    chat_id = re.search(r"conversation (c[\w-]+)", err)[1]
    code, out, _ = cli(capsys, "chats", "show", chat_id, "--json")
    messages = json.loads(out)["messages"]
    assert [m["role"] for m in messages] == ["user", "tool", "assistant"]
    call = messages[1]
    assert call["tool"] == "read_note" and call["arguments"] == {"path": "Plans/Project Map.md"}
    assert "Project Map" in call["result"]
    # The model's second turn got the tool's result.
    second = chat_requests(ollama)[-1]["messages"]
    assert second[-1]["role"] == "tool" and "Project Map" in second[-1]["content"]
    code, out, _ = cli(capsys, "chats", "show", chat_id)
    assert "tool call read_note" in out and "Plans/Project Map.md" in out and "result:" in out


def long_replies(model, messages):
    """Answers of about 300 tokens; a fold request gets a short summary naming what it folded."""
    system = messages[0]["content"]
    if system.startswith("You keep the running summary"):
        asked = re.findall(r"\*\*Person:\*\* (?:\[[^\]]*\] )?(Question \d+)", messages[-1]["content"])
        before = re.findall(r"Question \d+", messages[-1]["content"].split("# Turns to fold in")[0])
        return "- Folded so far: " + ", ".join(dict.fromkeys(before + asked))
    question = re.search(r"Question \d+", messages[-1]["content"])
    return f"Answer to {question[0] if question else '?'}: " + prose(len(messages), 220)


def test_a_conversation_longer_than_the_window_folds_into_a_summary_and_never_overflows(chat_home, ollama):
    from routine.chat.sessions import ask
    from routine.journal.chats import ChatStore

    small_window(chat_home, 4096, 512)
    ollama.reply_fn = long_replies
    runner, journal, agents = runner_for(chat_home)
    limit = 4096 - 512
    try:
        chat = None
        for i in range(1, 13):
            question = f"Question {i}: " + FILLER * 3
            chat = ask(runner, journal, agents["strategist"], question, session=chat).chat
        stored = ChatStore(journal.db).get(chat)
    finally:
        runner.close()
        journal.close()
    assert fold_requests(ollama), "the history never outgrew the window"
    assert stored.folded >= 4 and "Question 1" in stored.summary
    tokens = MistralTokens()  # Mistral's own tokenizer, on what the stand-in received
    sent = [r for r in ollama.requests if r["_path"] == "/api/chat"]
    assert sent and all(r["model"] == MODEL for r in sent)
    worst = max(count_request(tokens, r["messages"], r.get("tools")) for r in sent)
    assert worst <= limit, f"a request counted {worst} tokens, over {limit}"
    last = chat_requests(ollama)[-1]["messages"]
    assert "The conversation so far, summarised" in last[0]["content"] and "Question 1" in last[0]["content"]
    # The question is intact, and so are the latest turns before it.
    assert last[-1]["content"].endswith(f"Question 12: {FILLER * 3}".strip())
    assert last[-3]["content"].endswith(f"Question 11: {FILLER * 3}".strip())
    assert last[-2]["content"].startswith("Answer to Question 11") and last[-2]["content"].endswith(".")
    assert not any("Question 1:" in m["content"] for m in last[1:])  # folded, not sent raw
    roles = [m.role.value for m in stored_messages(chat)]
    assert "summary" in roles


def stored_messages(chat_id):  # read back through a fresh journal, as `chats show` would
    from routine.journal import Journal
    from routine.journal.chats import ChatStore

    journal = Journal()
    try:
        return ChatStore(journal.db).get(chat_id).messages
    finally:
        journal.close()


def chat_note(home, rel: str, body: str) -> None:
    path = home.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nchat: strategist\n---\n" + body)


def test_a_long_chat_note_gets_a_visible_summary_and_the_answer_after_the_question(chat_home, ollama):
    from routine.chat.notes import answer_note

    small_window(chat_home, 4096, 512)
    ollama.reply_fn = long_replies
    turns = []
    for i in range(1, 9):
        turns.append(f"Question {i}: {FILLER * 3}\n")
        turns.append(f"> [!agent] Strategist · 09:0{i}\n> Answer to Question {i}: {prose(i, 220)}\n")
    turns.append("Question 9: what now?\n")
    chat_note(chat_home, "Chats/Long.md", "\n".join(turns))
    runner, journal, agents = runner_for(chat_home)
    try:
        done = answer_note(runner, journal, agents, "Chats/Long.md")
        again = answer_note(runner, journal, agents, "Chats/Long.md")
    finally:
        runner.close()
        journal.close()
    assert done is not None and done.folded >= 2 and again is None  # one answer per message
    text = chat_home.note("Chats/Long.md")
    assert re.search(r"^summary_covers: \d+$", text, re.MULTILINE)
    body = text.split("---\n", 2)[2]
    assert body.lstrip().startswith("> [!summary] Summary so far") and "Question 1" in body.split("\n\n")[0]
    assert body.rstrip().split("\n> [!agent]")[-1].startswith(" Strategist")
    assert body.index("Question 9: what now?") < body.rindex("> [!agent] Strategist")
    assert text.count("> [!agent]") == 9
    for i in range(1, 9):  # the person's words are all still there
        assert f"Question {i}: {FILLER * 3}".strip() in text
    limit = 4096 - 512
    tokens = MistralTokens()
    assert all(count_request(tokens, r["messages"], r.get("tools")) <= limit
               for r in ollama.requests if r["_path"] == "/api/chat")


def test_a_terminal_conversation_can_start_from_a_chat_note(chat_home, ollama, capsys, monkeypatch):
    import io

    chat_note(chat_home, "Chats/Garden.md", "When should I order the seeds?\n\n"
                                            "> [!agent] Strategist · 09:00\n> By Friday, for the spring beds.\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("And the compost?\n/exit\n"))
    code, out, err = cli(capsys, "chat", "strategist", "--note", "Chats/Garden.md")
    assert code == 0, err
    assert "And the compost?" in out  # the stand-in's echo, printed as it streamed
    sent = chat_requests(ollama)[-1]["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]
    assert sent[1]["content"] == "When should I order the seeds?"
    assert sent[2]["content"] == "By Friday, for the spring beds."
    assert chat_home.note("Chats/Garden.md").count("[!agent]") == 1  # the note itself is not touched


def test_a_chat_note_is_read_as_the_person_left_it():
    from routine.vault.chat_notes import parse_chat

    text = ("---\nchat: \"[[Strategist]]\"\nsummary_covers: 2\n---\n%% a hint for the person %%\n\n"
            "> [!summary] Summary so far\n> - KR 1.1 came first.\n\nWhat next?\n\n"
            "> [!agent] Strategist · 20:15\n> Do the pricing page. [[Plans/OKRs]]\n>\n> *Sources:* [[Plans/OKRs]]\n\n"
            "> [!note] my own callout\n> stays mine\n\nAnd after that? %% not for the model %%\n")
    note = parse_chat("Chats/A.md", text)
    assert note.agent == "strategist" and note.covers == 2 and note.summary == "- KR 1.1 came first."
    assert [(t.role, t.text) for t in note.turns] == [
        ("user", "What next?"), ("assistant", "Do the pricing page. [[Plans/OKRs]]"),
        ("user", "> [!note] my own callout\n> stays mine\n\nAnd after that?")]
    assert note.pending() is note.turns[-1]
    answered = parse_chat("Chats/A.md", text.split("> [!note]")[0])
    assert answered.pending() is None  # the last word is the agent's: nothing to answer


def test_folding_keeps_the_latest_exchange_and_folds_whole_exchanges():
    from routine.chat.fold import Turn, how_many_to_fold
    from routine.models.tokens import Estimate

    counter = Estimate(4.0)
    turns = [Turn("user", "q" * 400), Turn("assistant", "a" * 400)] * 4  # about 110 tokens each
    assert how_many_to_fold(counter, turns, 2000) == 0
    assert how_many_to_fold(counter, turns, 700) == 6  # down to the latest exchange, well inside the room
    assert how_many_to_fold(counter, turns, 150) == 8  # even the latest exchange does not fit: all of it


def test_an_answer_goes_after_the_message_it_answers_even_if_the_person_wrote_on(tmp_path):
    from datetime import datetime

    from routine.vault.chat_notes import answer_callout, append_answer, parse_chat

    note = tmp_path / "Chats" / "A.md"
    note.parent.mkdir()
    note.write_text("---\nchat: strategist\n---\nFirst question?\n")
    asked = parse_chat("Chats/A.md", note.read_text()).pending()
    note.write_text(note.read_text() + "Oh, and a second thing.\n")  # typed while the model answered
    # (the person's text grew, so the question read before is now the head of a longer message)
    append_answer(tmp_path, "Chats/A.md", asked.raw, answer_callout("strategist", datetime(2026, 11, 22, 9, 5),
                                                                     "First answer.", ["Plans/OKRs.md"]))
    text = note.read_text()
    assert text.index("First question?") < text.index("> [!agent] Strategist · 09:05") < text.index("Oh, and a second")
    again = parse_chat("Chats/A.md", text)
    assert again.pending().text == "Oh, and a second thing."  # the next message, to be answered next


def test_a_garbage_reply_never_lands_in_a_chat_note(chat_home, ollama):
    from routine.chat.notes import answer_note
    from routine.errors import ReplyRejected

    garbage = "<|im_end|><|im_start|>" * 20
    ollama.script(MODEL, [garbage, garbage])                       # the alias, and its one retry
    ollama.script("qwen2.5:7b-instruct-q4_K_M", [garbage, garbage])  # its fallback, and its retry
    chat_note(chat_home, "Chats/Bad.md", "What matters today?\n")
    before = chat_home.note("Chats/Bad.md")
    runner, journal, agents = runner_for(chat_home)
    try:
        with pytest.raises(ReplyRejected):
            answer_note(runner, journal, agents, "Chats/Bad.md")
        rows = journal.db.execute("SELECT role, details FROM chat_messages").fetchall()
    finally:
        runner.close()
        journal.close()
    assert chat_home.note("Chats/Bad.md") == before
    assert [r[0] for r in rows] == ["user"] and "control tokens" in json.loads(rows[0][1])["error"]
