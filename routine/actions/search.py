"""`routine search QUERY [--agent NAME] [-k N]`: ranked notes with heading and snippet."""

from __future__ import annotations

import argparse
import sys

from routine import control
from routine.cli.output import print_json
from routine.cli.progress import ProgressPrinter
from routine.config.loader import agent_named, load_agents, load_config
from routine.errors import UsageError


def run(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise UsageError(f"-k must be 1 or more, not {args.k}.", "ask for at least one note, e.g. -k 6.")
    if not args.query.strip():
        raise UsageError("The query is empty.", "say what to look for, e.g. `routine search \"battery supplier\"`.")
    progress = ProgressPrinter()
    try:
        hits = _search(args, progress)
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
                print(f"   {hit['snippet']}")
    return 0


def _search(args: argparse.Namespace, progress: ProgressPrinter) -> list[dict]:
    config = None
    reads = None
    if args.agent:
        config = load_config(args.config)
        agents, problems = load_agents(config, require_vault=True)
        from routine.access import resolve

        reads = resolve(config, agent_named(agents, problems, args.agent)).read_globs
    final = control.call({"op": "search", "query": args.query, "k": args.k, "reads": reads})
    if final is not None:  # the daemon runs: it holds the index
        return control.result_of(final)
    from routine.memory import VaultIndex

    config = config or load_config(args.config)
    # No daemon holds the model warm: say why the first answer takes a while.
    print(
        f"routine: no daemon is running, so the search model ({config.memory.embedding_model or 'the shipped MiniLM'}) "
        "loads here first; this can take 10–20 s (with the daemon running, searches are quick).",
        file=sys.stderr,
        flush=True,
    )
    with VaultIndex(config) as index:
        return [hit.as_dict() for hit in index.search(args.query, args.k, reads, progress=progress)]
