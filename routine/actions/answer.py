"""`routine answer ID TEXT`: answer a question an agent asked; its block goes on from the step
that asked, with the answer. Through the daemon's control socket when it runs (the block is resumed
on its queue at once); else straight into the journal, and the daemon resumes the block when it
starts. Without ID: the questions that wait on the person.
"""

from __future__ import annotations

import argparse
import sys

from routine.config.loader import load_config, zone_name_of
from routine.daemon import client
from routine.daemon.status import waiting
from routine.errors import EXIT_JOB_FAILED, UsageError
from routine.flows.questions import answer_question
from routine.terminal.output import Clock, print_json


def run(args: argparse.Namespace) -> int:
    if not args.question:
        return _list(args)
    text = " ".join(args.text).strip()
    if not text:
        raise UsageError(f"No answer given for question {args.question}.",
                         f"write it after the id: `routine answer {args.question} TEXT`.")
    final = client.call({"op": "answer", "question": args.question, "text": text})
    if final is not None:
        if final.get("error") and "result" not in final:
            print(f"routine: {final['error']}" + (f" Fix: {final['fix']}" if final.get("fix") else ""), file=sys.stderr)
            return int(final.get("exit", EXIT_JOB_FAILED))
        result = final["result"]
    else:
        result = answer_question(load_config(args.config), args.question, text, "cli").summary()
    if args.json:
        print_json(result)
    elif result["accepted"]:
        print(result["message"])
    else:
        print(f"routine: {result['message']}", file=sys.stderr)
    return 0 if result["accepted"] else EXIT_JOB_FAILED


def _list(args: argparse.Namespace) -> int:
    open_ = waiting()
    if args.json:
        print_json([w.to_json() for w in open_])
        return 0
    clock = Clock.named(zone_name_of(args.config))
    for question in open_:
        print(f"{question.line(clock.zone)}\n  answer: routine answer {question.id} TEXT")
    if not open_:
        print("No question waits for you.")
    return 0
