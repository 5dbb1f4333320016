"""Benchmark: a conversation far longer than the window, through the stand-in Ollama.

A terminal session with the Strategist (its real prompt, grounding and tools) on a model alias
with a small window, answered by the stand-in with ~300-token replies. Per turn it prints the
request's tokens by Mistral's own tokenizer against the window's limit, how many turns the
summary covers, the summary's size, and how long routine took around the model call. Nothing
may exceed the limit; the question and the latest turns are always sent whole.

    make bench-chat          # or: .venv/bin/python bench/chat.py [--turns 30] [--num-ctx 4096]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

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


def prose(rng: random.Random, words: int) -> str:
    out: list[str] = []
    while len(out) < words:
        sentence = [rng.choice(WORDS) for _ in range(rng.randint(6, 12))]
        out += sentence[:-1] + [sentence[-1] + "."]
    return " ".join(out).capitalize()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--num-ctx", type=int, default=4096)
    ap.add_argument("--num-predict", type=int, default=512)
    args = ap.parse_args()
    rng = random.Random(7)
    from fake_ollama import FakeOllama

    def reply(model, messages):
        if messages[0]["content"].startswith("You keep the running summary"):
            return "- " + prose(rng, 120)
        return prose(rng, 220)

    tmp = Path(tempfile.mkdtemp(prefix="routine-bench-chat-"))
    with FakeOllama(max_loaded=2, load_delay=0.0, reply_fn=reply) as srv:
        os.environ.update(ROUTINE_CONFIG=str(tmp / "config" / "routine.yaml"), ROUTINE_STATE_DIR=str(tmp / "state"),
                          ROUTINE_RUNTIME_DIR=str(tmp / "run"), OLLAMA_HOST=srv.url, OLLAMA_API_BASE=srv.url,
                          LITELLM_LOCAL_MODEL_COST_MAP="True")
        subprocess.run([sys.executable, "-m", "routine", "init", str(tmp / "Vault")], check=True,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        config_file = tmp / "config" / "routine.yaml"
        text = config_file.read_text().replace(
            "num_ctx: 8192\n    tokenizer: mistral",
            f"num_ctx: {args.num_ctx}\n    num_predict: {args.num_predict}\n    tokenizer: mistral", 1)
        config_file.write_text(text + "\nmemory: {embedding_model: 'ollama:nomic-embed-text'}\n")
        return run(args, srv, rng)


def run(args, srv, rng) -> int:
    from routine.chat.sessions import ask
    from routine.config.loader import load_agents, load_config
    from routine.flows.step_setup import STEP_SETUP
    from routine.journal import Journal
    from routine.journal.chats import ChatStore
    from routine.models.tokens import MistralTokens, count_request
    from routine.runner.step import Runner

    config = load_config(None)
    agents, _ = load_agents(config)
    journal = Journal()
    runner = Runner(config, journal, setup=STEP_SETUP)
    tokens, limit = MistralTokens(), args.num_ctx - args.num_predict
    print(f"window {args.num_ctx}, answer reserve {args.num_predict}: at most {limit} prompt tokens per request\n")
    print(f"{'turn':>4}  {'sent':>5}  {'worst':>5}  {'covers':>6}  {'summary':>7}  {'folds':>5}  {'ms':>6}")
    chat, worst_all, over = None, 0, 0
    try:
        for turn in range(1, args.turns + 1):
            seen = len(srv.requests)
            started = time.monotonic()
            chat = ask(runner, journal, agents["strategist"], f"Question {turn}: " + prose(rng, 60), session=chat).chat
            ms = int((time.monotonic() - started) * 1000)
            sent = [r for r in list(srv.requests)[seen:] if r["_path"] == "/api/chat"]
            counts = [count_request(tokens, r["messages"], r.get("tools")) for r in sent]
            folds = sum(r["messages"][0]["content"].startswith("You keep the running summary") for r in sent)
            stored = ChatStore(journal.db).get(chat)
            worst_all = max(worst_all, *counts)
            over += sum(c > limit for c in counts)
            print(f"{turn:>4}  {counts[-1]:>5}  {max(counts):>5}  {stored.folded:>6}  "
                  f"{tokens.text(stored.summary):>7}  {folds:>5}  {ms:>6}")
    finally:
        runner.close()
        journal.close()
    print(f"\nlargest request {worst_all} of {limit} tokens; requests over the limit: {over}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
