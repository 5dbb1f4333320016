"""`routine search QUERY [--agent NAME] [-k N]`: ranked notes with heading and snippet."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from routine.access import resolve
from routine.config.loader import agent_named, load_agents, load_config
from routine.daemon import client
from routine.errors import UsageError
from routine.memory.retrieve import better_outside, outside_sentence
from routine.terminal.output import print_json, say
from routine.terminal.progress import ProgressPrinter

if TYPE_CHECKING:
    from routine.config.model import AgentSpec, Config
    from routine.memory.retrieve import HitRecord


def run(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise UsageError(f"-k must be 1 or more, not {args.k}.", "ask for at least one note, e.g. -k 6.")
    if not args.query.strip():
        raise UsageError("The query is empty.", "say what to look for, e.g. `routine search \"battery supplier\"`.")
    progress = ProgressPrinter()
    try:
        hits, hidden = _search(args, progress)
    finally:
        progress.end()
    if args.json:
        print_json(hits)
    elif not hits:
        print("No matching notes" + (f" that {args.agent} may read." if args.agent else "."))
    else:
        for rank, hit in enumerate(hits, 1):
            print(f"{rank}. {hit['link']}  ({hit['score']:.2f})")
            if hit["snippet"]:
                say(f"   {hit['snippet']}")
    if hidden:
        say(hidden, sys.stderr if args.json else sys.stdout)
    return 0


def _search(args: argparse.Namespace, progress: ProgressPrinter) -> tuple[list[HitRecord], str | None]:
    """The hits, and for an agent's search the sentence naming better matches its `reads:` hid."""
    config = load_config(args.config)
    if not args.agent:
        return searches(config, args.query, args.k, [None], progress)[0], None
    agents, problems = load_agents(config, require_vault=True)
    agent = agent_named(agents, problems, args.agent)
    hits, hidden = agent_search(config, agent, args.query, args.k, progress)
    return hits, hidden


def agent_search(config: Config, agent: AgentSpec, query: str, k: int, progress: ProgressPrinter | None = None,
                 index: Any = None) -> tuple[list[HitRecord], str | None]:
    """An agent's search (its scopes as `routine.access` resolves them) and, when the whole vault
    ranks notes outside its reads above its last hit, the sentence that says so."""
    reads = resolve(config, agent).read_globs
    hits, everyone = searches(config, query, k, [reads, None], progress, index)
    hidden = better_outside(hits, everyone, reads, (config.layout.archive, config.layout.agents), k)
    return hits, outside_sentence(agent.name, hidden) if hidden else None


def searches(config: Config, query: str, k: int, scopes: list[list[str] | None],
             progress: ProgressPrinter | None = None, index: Any = None) -> list[list[HitRecord]]:
    """One search per scope (None: the whole vault), on ``index`` when one is open here, else through
    the daemon when it runs (it holds the index), else here on one open index."""
    if index is not None:
        return [[hit.as_dict() for hit in index.search(query, k, reads, progress=progress)] for reads in scopes]
    found: list[list[HitRecord]] = []
    for reads in scopes:
        final = client.call({"op": "search", "query": query, "k": k, "reads": reads})
        if final is None:
            break
        found.append(client.result_of(final))
    else:
        return found
    from routine.memory import VaultIndex  # lazy: numpy, only when no daemon searches

    # No daemon holds the model warm: say why the first answer takes a while.
    print(
        f"routine: no daemon is running, so the search model ({config.memory.embedding_model or 'the shipped MiniLM'}) "
        "loads here first; this can take 10–20 s (with the daemon running, searches are quick).",
        file=sys.stderr,
        flush=True,
    )
    with VaultIndex(config) as index:
        return [[hit.as_dict() for hit in index.search(query, k, reads, progress=progress, refresh=i == 0)]
                for i, reads in enumerate(scopes)]
