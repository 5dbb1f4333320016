"""Ordered, named migrations of the run journal. Append only: never edit a released one.

Each migration runs once, in order, inside a transaction, and is recorded in `_migrations`.
"""

from __future__ import annotations

import sqlite3


def _script(db: sqlite3.Connection, sql: str) -> None:
    # Not executescript(): it COMMITs first, which would break the migration's transaction.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def m001_runs(db: sqlite3.Connection) -> None:
    _script(db,
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            parent TEXT,                -- the block run a step belongs to
            kind TEXT NOT NULL,         -- step | block
            block TEXT,
            step INTEGER,
            agent TEXT,
            model TEXT,
            trigger TEXT NOT NULL,      -- manual | schedule | catch-up | trigger:<path> | socket
            slot TEXT,                  -- scheduled slot (ISO) for schedule runs
            status TEXT NOT NULL,       -- running | ok | failed | refused | skipped | missed | interrupted | proposal
            error TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            duration_ms INTEGER,
            task TEXT,
            prompt TEXT,                -- JSON: the exact messages sent
            output TEXT,
            sources TEXT,               -- JSON: vault paths placed in context
            dropped TEXT,               -- JSON: context left out for the budget, with reasons
            wrote TEXT,                 -- JSON: what was written where
            tokens_in INTEGER,
            tokens_out INTEGER,
            load_duration_ms INTEGER,
            details TEXT                -- JSON: anything else (fallbacks, retries, tool log)
        );
        CREATE INDEX runs_started ON runs(started_at);
        CREATE INDEX runs_parent ON runs(parent);
        """
    )


MIGRATIONS = [
    ("001_runs", m001_runs),
]


def m002_slots(db: sqlite3.Connection) -> None:
    # One row per (block, scheduled slot): the primary key is what makes "a slot runs at
    # most once" hold across crashes, restarts and racing timers.
    _script(db, """
        CREATE TABLE slots (
            block TEXT NOT NULL,
            slot TEXT NOT NULL,        -- UTC instant, minute precision (routine.schedule.cron.slot_key)
            state TEXT NOT NULL,       -- claimed | running | done | failed | interrupted | missed | skipped
            run_id TEXT,
            reason TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (block, slot)
        );
        CREATE TABLE blocks_seen (
            block TEXT PRIMARY KEY,
            since TEXT NOT NULL        -- UTC instant the daemon first knew this block
        )
    """)


MIGRATIONS.append(("002_slots", m002_slots))


def m003_model_events(db: sqlite3.Connection) -> None:
    # Every load and unload of a model, with why: the residency story of a day, and the
    # learned load times that decide how early to preload.
    _script(db, """
        CREATE TABLE model_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,            -- UTC ISO time
            host TEXT NOT NULL,
            model TEXT NOT NULL,         -- the name Ollama knows
            alias TEXT,
            event TEXT NOT NULL,         -- load | unload | gone (unloaded by Ollama or another client)
            reason TEXT,                 -- on-demand | preload | evict-for:<model> | idle | shutdown | ...
            load_duration_ms INTEGER,
            run_id TEXT                  -- the run that needed the model, when one did
        );
        CREATE INDEX model_events_at ON model_events(at);
        ALTER TABLE runs ADD COLUMN warm INTEGER
    """)  # runs.warm: 1 when the model was resident as the step began (no comment inside ALTER:
    # SQLite splices the column text, comments included, into the stored table definition)


MIGRATIONS.append(("003_model_events", m003_model_events))


def m004_metrics(db: sqlite3.Connection) -> None:
    # Per-run figures (routine.host.sysmetrics): durations, tokens/s, CPU, memory, tegrastats,
    # version and commit, as one JSON object. (003 is kept for the model residency work.)
    db.execute("ALTER TABLE runs ADD COLUMN metrics TEXT")


MIGRATIONS.append(("004_metrics", m004_metrics))


def m005_vault_files(db: sqlite3.Connection) -> None:
    # What the vault watcher last knew of each note: a change while the daemon was down is seen
    # at start-up, and a dropped inotify event at the next reconcile. A cache: losing it only
    # means the next start takes a fresh baseline.
    _script(db, """
        CREATE TABLE vault_files (
            path TEXT PRIMARY KEY,      -- vault-relative
            mtime_ns INTEGER,
            size INTEGER,
            sha TEXT NOT NULL
        )
    """)


MIGRATIONS.append(("005_vault_files", m005_vault_files))


def m006_decisions(db: sqlite3.Connection) -> None:
    # Who decided what about a proposal, and when.
    _script(db, """
        CREATE TABLE decisions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,           -- UTC ISO time
            proposal TEXT NOT NULL,     -- the proposal note, where it was when decided
            target TEXT,
            section TEXT,
            decision TEXT NOT NULL,     -- approved | rejected
            outcome TEXT NOT NULL,      -- applied | rejected | conflict | refused
            by TEXT NOT NULL,           -- obsidian (the approved property) | cli
            run_id TEXT,                -- the run that proposed it
            archived_as TEXT,
            detail TEXT
        )
    """)


MIGRATIONS.append(("006_decisions", m006_decisions))


def m007_tool_log(db: sqlite3.Connection) -> None:
    # The transcript of a tool-using run: every model turn, tool call, argument, result, error.
    _script(db, "ALTER TABLE runs ADD COLUMN log TEXT")


MIGRATIONS.append(("007_tool_log", m007_tool_log))


def m012_token_samples(db: sqlite3.Connection) -> None:
    # What the server said it evaluated for a request we counted: calibrates the token estimate.
    _script(db, """
        CREATE TABLE token_samples (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            model TEXT NOT NULL,      -- the LiteLLM model string
            chars INTEGER NOT NULL,   -- characters counted by the ratio (not digits, not non-ASCII)
            fixed INTEGER NOT NULL,   -- tokens counted one each, plus the template overhead
            reported INTEGER NOT NULL -- prompt_eval_count / prompt_tokens
        );
        CREATE INDEX token_samples_model ON token_samples (model, id)
    """)


MIGRATIONS.append(("012_token_samples", m012_token_samples))


def m013_projects(db: sqlite3.Connection) -> None:
    # The project a run worked for (a project's cadence, a task picked up, a QA run).
    _script(db, "ALTER TABLE runs ADD COLUMN project TEXT")


MIGRATIONS.append(("013_projects", m013_projects))


def m016_chats(db: sqlite3.Connection) -> None:
    # Conversations with an agent (terminal sessions and chat notes) and every message of them.
    _script(db, """
        CREATE TABLE chats (
            id TEXT PRIMARY KEY,
            agent TEXT NOT NULL,
            origin TEXT NOT NULL,        -- terminal | note
            title TEXT,
            note TEXT,                   -- vault path of a chat note
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',  -- the running summary of folded turns
            folded INTEGER NOT NULL DEFAULT 0  -- how many of the conversation's messages it covers
        );
        CREATE INDEX chats_note ON chats (note);
        CREATE INDEX chats_agent ON chats (agent, origin, updated_at);
        CREATE TABLE chat_messages (
            id INTEGER PRIMARY KEY,
            chat TEXT NOT NULL REFERENCES chats(id),
            at TEXT NOT NULL,
            role TEXT NOT NULL,          -- user | assistant | tool | summary
            content TEXT NOT NULL DEFAULT '',
            tokens INTEGER,              -- the content's tokens by the model's counter
            model TEXT,
            duration_ms INTEGER,
            tokens_in INTEGER,
            tokens_out INTEGER,
            tool TEXT,                   -- a tool call: the tool's name
            arguments TEXT,              -- JSON
            result TEXT,
            details TEXT                 -- JSON: sources, counted/limit, errors
        );
        CREATE INDEX chat_messages_chat ON chat_messages (chat, id)
    """)


MIGRATIONS.append(("016_chats", m016_chats))


def m017_grounding(db: sqlite3.Connection) -> None:
    # issue 25: the grounding check of a step's reply (JSON: strictness, findings, asked_again, held)
    _script(db, "ALTER TABLE runs ADD COLUMN grounding TEXT")


MIGRATIONS.append(("017_grounding", m017_grounding))


def m018_notifications(db: sqlite3.Connection) -> None:
    # What was sent to the person outside the vault (routine/person/notifications.py): one row per key,
    # so each alert, proposal or task notifies once; held in quiet hours; failures counted.
    _script(db, """
        CREATE TABLE notifications (
            key TEXT PRIMARY KEY,        -- alert:<note>, resolved:<note>, proposal:<note>, task:<file>:<hash>…
            topic TEXT NOT NULL,         -- alerts | proposals | tasks | ready | test
            title TEXT NOT NULL,
            body TEXT NOT NULL,
            at TEXT NOT NULL,            -- when it was asked for (UTC ISO)
            status TEXT NOT NULL,        -- sending | sent | held | failed
            sent_at TEXT,
            error TEXT
        );
        CREATE INDEX notifications_status ON notifications (status, at)
    """)


MIGRATIONS.append(("018_notifications", m018_notifications))


def m019_trials(db: sqlite3.Connection) -> None:
    # issue 28: a real run's request replayed on a candidate alias (routine/trials). One row per
    # (run, candidate): the same pair is never tried twice; the answer sits beside the original run.
    _script(db, """
        CREATE TABLE trials (
            id INTEGER PRIMARY KEY,
            run TEXT NOT NULL,           -- the step run replayed (runs.id)
            candidate TEXT NOT NULL,     -- the model alias tried
            agent TEXT,
            original_model TEXT,         -- runs.model of the run replayed
            status TEXT NOT NULL,        -- queued | running | done | failed
            queued_at TEXT NOT NULL,
            started_at TEXT,
            ended_at TEXT,
            model TEXT,                  -- the LiteLLM model string that answered
            answer TEXT,
            result TEXT,                 -- JSON: the verdicts and figures (routine.trials.replay.TrialResult)
            error TEXT,
            UNIQUE (run, candidate)
        );
        CREATE INDEX trials_status ON trials (status, id)
    """)


MIGRATIONS.append(("019_trials", m019_trials))


def m020_token_counters(db: sqlite3.Connection) -> None:
    # How each sample was counted: the counter (estimate or a tokenizer), its uncalibrated count of the
    # text, the template overhead added, what was counted when sent, and the run: errors per alias and run.
    _script(db, """
        ALTER TABLE token_samples ADD COLUMN counter TEXT;
        ALTER TABLE token_samples ADD COLUMN base INTEGER;
        ALTER TABLE token_samples ADD COLUMN overhead INTEGER;
        ALTER TABLE token_samples ADD COLUMN counted INTEGER;
        ALTER TABLE token_samples ADD COLUMN run_id TEXT;
        CREATE INDEX token_samples_run ON token_samples (run_id)
    """)


MIGRATIONS.append(("020_token_counters", m020_token_counters))


def m021_keep_rate(db: sqlite3.Connection) -> None:
    # issue 25, keep-rate: each generated section as written (by a run, or by an approval of its
    # proposal), and how much of it the person kept once it was 48 hours old (routine/journal/keep.py).
    _script(db, """
        CREATE TABLE written_sections (
            id INTEGER PRIMARY KEY,
            run_id TEXT,                 -- the step run that wrote it (an approval: the proposal's run)
            agent TEXT NOT NULL,
            block TEXT,                  -- the schedule block (NULL: a one-off `routine fire`)
            note TEXT NOT NULL,          -- vault path of the note
            section TEXT NOT NULL,       -- the section's title
            via TEXT NOT NULL,           -- run | approval
            written_at TEXT NOT NULL,    -- UTC ISO
            text TEXT NOT NULL,          -- the section's text as written
            measured_at TEXT,            -- UTC ISO, NULL until measured
            kept REAL,                   -- 0.0-1.0 of the written text still there
            ending TEXT                  -- kept | edited | deleted | superseded (measured before a newer write)
        );
        CREATE INDEX written_sections_due ON written_sections (measured_at, written_at);
        CREATE INDEX written_sections_note ON written_sections (note, section)
    """)


MIGRATIONS.append(("021_keep_rate", m021_keep_rate))


def m022_agent_memory(db: sqlite3.Connection) -> None:
    # issue 40, agent memory: every piece of evidence an agent's memory note has learned from
    # (routine/journal/lessons.py), so none is learned twice and a deleted entry stays deleted.
    _script(db, """
        CREATE TABLE memory_learned (
            agent TEXT NOT NULL,
            key TEXT NOT NULL,           -- keep-ID | decision-ID | review-RUN | chat-ID
            learned_at TEXT NOT NULL,    -- UTC ISO
            PRIMARY KEY (agent, key)
        )
    """)


MIGRATIONS.append(("022_agent_memory", m022_agent_memory))


def m023_prompt_trials(db: sqlite3.Connection) -> None:
    # issue 40, prompt trials: an agent note's body (a version: its hash) tried against a variant on
    # the agent's real runs (routine/trials/variants.py, `routine agent try`), and what came of it.
    _script(db, """
        CREATE TABLE prompt_trials (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,               -- UTC ISO
            agent TEXT NOT NULL,
            version TEXT NOT NULL,          -- the current note's body (routine.trials.variants.version_of)
            variant_version TEXT NOT NULL,
            variant_note TEXT NOT NULL,     -- where the variant was read
            runs INTEGER NOT NULL,
            current_passed INTEGER NOT NULL,
            variant_passed INTEGER NOT NULL,
            current_closeness REAL,         -- to what the person kept (NULL: no run's section was edited)
            variant_closeness REAL,
            better INTEGER NOT NULL,
            proposal TEXT                   -- the proposal to the agent note, when better
        )
    """)


MIGRATIONS.append(("023_prompt_trials", m023_prompt_trials))


def m024_prompt_version(db: sqlite3.Connection) -> None:
    # issue 40: the version of the agent note's body a step ran with, so keep-rate and trials are
    # counted per version of an agent's prompt (routine/journal/keep.py, `routine runs keep`).
    _script(db, "ALTER TABLE runs ADD COLUMN prompt_version TEXT")


MIGRATIONS.append(("024_prompt_version", m024_prompt_version))


def m025_prompt_trial_queue(db: sqlite3.Connection) -> None:
    # issue 40, advice that becomes a change: a variant of an agent note's body waiting for the
    # daemon's trials window (from a weekly step's `change` block, or `routine agent try` while the
    # daemon runs); one variant of one agent is queued once.
    _script(db, """
        CREATE TABLE prompt_trial_queue (
            id INTEGER PRIMARY KEY,
            agent TEXT NOT NULL,
            body TEXT NOT NULL,             -- the variant's instructions (the agent note's body)
            variant_version TEXT NOT NULL,  -- version_of(body)
            origin TEXT NOT NULL,           -- where it came from: a variant note, or `advice of run ID`
            why TEXT NOT NULL,              -- the advice's reason, said in the proposal
            run_ids TEXT,                   -- JSON list of the runs to replay (NULL: the agent's recent runs)
            since TEXT NOT NULL,            -- the recent runs: from here (UTC ISO) ...
            until TEXT NOT NULL,            -- ... to here
            status TEXT NOT NULL,           -- queued | running | done | failed
            queued_at TEXT NOT NULL,
            error TEXT,
            UNIQUE (agent, variant_version)
        )
    """)


MIGRATIONS.append(("025_prompt_trial_queue", m025_prompt_trial_queue))


def m026_reminders(db: sqlite3.Connection) -> None:
    # issue 45, reminders in words: one-shot reminders the person set (a task line's `(@2026-11-28
    # 15:00)`, "remind me at 15:00 to …" in a chat note, `routine remind`, an agent's
    # `remind_person`), fired once at their local time by the daemon's timers; a snooze fires again
    # once (`round` counts the fires, so each has its own notification key).
    _script(db, """
        CREATE TABLE reminders (
            id INTEGER PRIMARY KEY,
            text TEXT NOT NULL,             -- what to remind of, the person's words
            at TEXT NOT NULL,               -- when it fires next (UTC ISO)
            origin TEXT NOT NULL,           -- note | chat | cli | agent
            source TEXT NOT NULL UNIQUE,    -- where it was set: one reminder per source (a note's line, a chat turn)
            note TEXT,                      -- the vault note it was set in, if any
            status TEXT NOT NULL,           -- pending | fired | done | cancelled | passed
            round INTEGER NOT NULL DEFAULT 0,  -- fires so far (a snooze makes it pending again)
            created_at TEXT NOT NULL,
            fired_at TEXT,
            why TEXT                        -- how it ended: fired late, ticked, deleted, done from the phone
        )
    """)
    db.execute("CREATE INDEX reminders_pending ON reminders (status, at)")
    db.execute("CREATE INDEX reminders_note ON reminders (note)")


MIGRATIONS.append(("026_reminders", m026_reminders))


def m028_answers(db: sqlite3.Connection) -> None:
    # issue 45, answers from the phone (routine/journal/answers.py): a ticket per message that carries
    # choices (signed, single use, with an end), the channel's id of each message sent with one (a typed
    # reply names it), every answer that arrived (taken or refused, and why) and their running counts.
    _script(db, """
        CREATE TABLE answer_tickets (
            id TEXT PRIMARY KEY,         -- random, the buttons' tokens sign it with their choice
            message TEXT NOT NULL,       -- the notification's key
            subject TEXT NOT NULL,       -- a proposal's path, a question's or a reminder's id
            choices TEXT NOT NULL,       -- JSON [[kind, label, value], ...]
            bound TEXT,                  -- the subject's content when sent (a proposal's fingerprint)
            minted_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT,                -- single use: set by the first answer taken
            used_by TEXT
        );
        CREATE INDEX answer_tickets_message ON answer_tickets (message);
        CREATE TABLE answer_refs (
            channel TEXT NOT NULL,       -- telegram
            ref TEXT NOT NULL,           -- the channel's id of the message sent
            ticket TEXT NOT NULL,
            PRIMARY KEY (channel, ref)
        );
        CREATE TABLE answers (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            channel TEXT NOT NULL,       -- ntfy | telegram
            cursor TEXT,                 -- the channel's position after it (its reader resumes there)
            origin TEXT,                 -- who sent it, as the channel says (chat 123)
            ticket TEXT,
            kind TEXT,                   -- approve | reject | answer | snooze | done
            subject TEXT,
            outcome TEXT NOT NULL,       -- taken | refused
            reason TEXT,                 -- why refused: forged | unknown | expired | replayed | foreign | edited ...
            detail TEXT                  -- the sentence the person was given
        );
        CREATE INDEX answers_channel ON answers (channel, id);
        CREATE TABLE answer_counts (
            outcome TEXT NOT NULL,
            reason TEXT NOT NULL,        -- '' for taken
            n INTEGER NOT NULL,
            PRIMARY KEY (outcome, reason)
        )
    """)


MIGRATIONS.append(("028_answers", m028_answers))


def m034_questions(db: sqlite3.Connection) -> None:
    # issue 45, agents that ask and wait: a block's step asked the person (a fenced `ask` block); its
    # run waits (status `waiting`) until an answer, the deadline's default, or `skipped: no answer`
    # (routine/journal/questions.py, routine/flows/questions.py).
    _script(db, """
        CREATE TABLE questions (
            id TEXT PRIMARY KEY,            -- q-XXXXXX, what `routine answer ID` names
            run TEXT NOT NULL,              -- the block run that waits
            step_run TEXT NOT NULL,         -- the step run that asked
            block TEXT NOT NULL,
            step INTEGER NOT NULL,          -- the step's index: the block resumes from it
            agent TEXT NOT NULL,
            question TEXT NOT NULL,
            choices TEXT NOT NULL,          -- JSON list (empty: free text)
            deadline TEXT NOT NULL,         -- UTC ISO
            default_answer TEXT,            -- taken at the deadline (NULL: the run ends skipped: no answer)
            note TEXT,                      -- the Inbox/ question note
            state TEXT NOT NULL,            -- open | answered | expired
            answer TEXT,
            origin TEXT,                    -- cli | note | phone | deadline …
            asked_at TEXT NOT NULL,
            answered_at TEXT,
            resumed_at TEXT                 -- the block run was resumed with the answer
        )
    """)


MIGRATIONS.append(("034_questions", m034_questions))
