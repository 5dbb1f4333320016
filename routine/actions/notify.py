"""`routine notify test` and `routine notify list`."""

from __future__ import annotations

import argparse

from routine import paths
from routine.config.loader import load_config
from routine.config.model import Config
from routine.errors import UsageError
from routine.journal import Journal
from routine.journal.answers import AnswerBook
from routine.journal.notifications import NotificationLog
from routine.person.notifications import send_now
from routine.terminal.output import Clock, print_json, print_table


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if getattr(args, "notify_command", None) == "test":
        return _test(config, args.json)
    return _list(args.json, getattr(args, "limit", 20), Clock.named(config.zone_name()))


def _test(config: Config, as_json: bool) -> int:
    if not (config.notify.urls or config.notify.active):
        raise UsageError("No notification URLs are set, nor a channel of its own (ntfy, telegram).",
                         f"add `notify: {{urls: [ntfy://ntfy.lan/routine]}}` (any Apprise URL), or `notify: {{ntfy: "
                         f"{{topic: NAME, replies: NAME}}}}` for buttons, to {config.path}.")
    results = send_now(config.notify, "routine: a test message", "If you read this, routine can reach you here.")
    if as_json:
        print_json([{"url": r.url, "ok": r.ok, "error": r.error} for r in results])
    else:
        for r in results:
            print(f"{r.url}: {'sent' if r.ok else 'FAILED: ' + (r.error or '')}")
    return 0 if all(r.ok for r in results) else 1


def _list(as_json: bool, limit: int, clock: Clock) -> int:
    if not paths.journal_file().exists():
        rows, counts = [], {}
    else:
        journal = Journal()
        try:
            book, answers = NotificationLog(journal.db), AnswerBook(journal.db)
            rows, counts = book.recent(limit), book.counts()
            answered, tally = answers.recent(limit), answers.counts()
        finally:
            journal.close()
    if as_json:
        print_json({"counts": counts, "recent": rows, "answers": {"counts": tally, "recent": answered}})
        return 0
    print("notifications: " + (", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none yet"))
    if rows:
        print_table([{**r, "at": clock.show(r.get("at"))} for r in rows], ["at", "topic", "status", "title", "error"],
                    {"at": clock.label("at")})
    if tally:  # answers from the phone: taken, and refused by why (each refusal's sentence in `detail`)
        print("\nanswers: " + ", ".join(f"{n} {what}" for what, n in sorted(tally.items())))
        print_table([{**r, "at": clock.show(r.get("at"))} for r in answered],
                    ["at", "channel", "outcome", "reason", "subject", "detail"], {"at": clock.label("at")})
    return 0
