"""An answer from the phone, checked where it arrives (``routine.flows.answers.take``) with a real
journal and real signed tokens: one taken, the rest refused and counted — forged, unknown, expired,
replayed, from another chat — and a typed reply to one of routine's messages; the dispatch of an
answer's kind to its handler through the registry (a test handler stands in for a reminder's)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

T0 = datetime(2026, 11, 28, 8, 31, tzinfo=timezone.utc)


@pytest.fixture
def journal(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTINE_STATE_DIR", str(tmp_path / "state"))
    from routine.journal import Journal

    opened = Journal()
    yield opened
    opened.close()


def _ticket(journal, typed=False, within=timedelta(days=3)):
    from routine.journal.answers import AnswerBook
    from routine.person.tickets import AnswerKind, Asked, Choice, mint

    asked = Asked("Drafts/p.md", (Choice(AnswerKind.APPROVE, "Approve"), Choice(AnswerKind.REJECT, "Reject")),
                  "f1ngerprint", typed=typed)
    return mint(AnswerBook(journal.db), "proposal:Drafts/p.md", asked, T0, within)


def _from(data="", text="", channel="ntfy", foreign=None, in_reply_to=None, cursor="c1"):
    from routine.person.channels.base import Incoming

    return Incoming(channel, cursor, data=data, text=text, in_reply_to=in_reply_to, origin="chat 1", foreign=foreign)


def test_a_signed_token_is_taken_once_and_every_other_answer_is_refused_and_counted(journal, tmp_path):
    from routine.flows.answers import Refused, Taken, take
    from routine.journal.answers import AnswerBook, Refusal
    from routine.person.tickets import KEY_FILE, AnswerKind, token

    ticket = _ticket(journal)
    good = token(ticket.id, 0)
    key = tmp_path / "state" / KEY_FILE  # made on first use, readable by routine alone
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    assert len(good.encode()) <= 64  # fits Telegram's callback_data

    assert take(journal.db, _from(good, foreign="it came from chat 999, not the configured chat"), T0).reason \
        is Refusal.FOREIGN  # another chat: refused, and the token is not spent by it
    taken = take(journal.db, _from(good), T0 + timedelta(minutes=1))
    assert isinstance(taken, Taken) and taken.answer.kind is AnswerKind.APPROVE
    assert (taken.answer.subject, taken.answer.bound, taken.answer.by) == ("Drafts/p.md", "f1ngerprint", "phone:ntfy")

    forged = good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB")
    other = _ticket(journal)
    expired = _ticket(journal, within=timedelta(hours=1))
    cases = {
        good: Refusal.REPLAYED,
        forged: Refusal.FORGED,
        "approve everything": Refusal.FORGED,
        token(other.id, 5): Refusal.FORGED,  # a choice the message never offered, signed right
        token("A" * 12, 0): Refusal.UNKNOWN,  # signed with this key, but no message carries it
        token(expired.id, 1): Refusal.EXPIRED,
    }
    for data, reason in cases.items():
        refused = take(journal.db, _from(data), T0 + timedelta(hours=2))
        assert isinstance(refused, Refused) and refused.reason is reason, (data, refused)
        assert refused.sentence.startswith("Refused: ") and refused.sentence.endswith(".")
    counts = AnswerBook(journal.db).counts()
    assert counts == {"taken": 1, "refused foreign": 1, "refused replayed": 1, "refused forged": 3,
                      "refused unknown": 1, "refused expired": 1}
    assert isinstance(take(journal.db, _from(token(other.id, 1)), T0 + timedelta(hours=2)), Taken)


def test_a_token_signed_with_another_key_is_forged(journal, tmp_path, monkeypatch):
    from routine.flows.answers import take
    from routine.journal.answers import Refusal
    from routine.person.tickets import KEY_FILE, token

    ticket = _ticket(journal)
    token(ticket.id, 0)
    key = tmp_path / "state" / KEY_FILE
    mine = key.read_bytes()
    key.write_bytes(b"k" * 32)  # another routine's key (as a stranger who guessed the ticket would sign)
    theirs = token(ticket.id, 0)
    key.write_bytes(mine)
    assert take(journal.db, _from(theirs), T0).reason is Refusal.FORGED


def test_a_reply_typed_to_one_of_routines_messages_is_an_answer(journal):
    from routine.flows.answers import Refused, Taken, take
    from routine.journal.answers import AnswerBook, Refusal
    from routine.person.tickets import AnswerKind

    approve = _ticket(journal)
    question = _ticket(journal, typed=True)
    book = AnswerBook(journal.db)
    book.refer("telegram", "501", approve.id)
    book.refer("telegram", "502", question.id)
    said = take(journal.db, _from(text="  approve ", channel="telegram", in_reply_to="501"), T0)
    assert isinstance(said, Taken) and said.answer.kind is AnswerKind.APPROVE and said.answer.by == "phone:telegram"
    typed = take(journal.db, _from(text="Friday at ten", channel="telegram", in_reply_to="502"), T0)
    assert isinstance(typed, Taken) and typed.answer.kind is AnswerKind.ANSWER and typed.answer.value == "Friday at ten"
    stray = take(journal.db, _from(text="hello", channel="telegram", in_reply_to="999"), T0)
    assert isinstance(stray, Refused) and stray.reason is Refusal.UNKNOWN
    loose = take(journal.db, _from(text="hello", channel="telegram"), T0)
    assert isinstance(loose, Refused) and loose.reason is Refusal.UNREADABLE


def test_an_answer_is_carried_out_by_the_handler_registered_for_its_kind(journal):
    from routine.flows import answers
    from routine.flows.answers import Answer, Context, Handled, apply, register
    from routine.journal.answers import AnswerBook
    from routine.person.tickets import AnswerKind

    seen = []

    def snooze(ctx: Context, answer: Answer) -> Handled:
        seen.append((answer.subject, answer.value, answer.by))
        return Handled(f"Snoozed {answer.subject} for {answer.value}.")

    saved = dict(answers.HANDLERS)
    try:
        register(AnswerKind.SNOOZE, snooze)
        ctx = Context(None, {}, journal, T0)  # type: ignore[arg-type]  # the test handler reads neither
        done = apply(ctx, Answer(AnswerKind.SNOOZE, "reminder-7", "1h", None, "phone:ntfy", "t1"))
        assert done.sentence == "Snoozed reminder-7 for 1h." and seen == [("reminder-7", "1h", "phone:ntfy")]
        answers.HANDLERS.pop(AnswerKind.DONE, None)
        undone = apply(ctx, Answer(AnswerKind.DONE, "reminder-7", "", None, "phone:ntfy", "t2"))
        assert undone.refusal is not None and "cannot carry out a done answer yet" in undone.sentence
    finally:
        answers.HANDLERS.clear()
        answers.HANDLERS.update(saved)
    assert AnswerBook(journal.db).counts() == {}  # apply settles what take recorded; nothing was taken here
