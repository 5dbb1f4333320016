"""The scoreboard of trials: per model and agent, how often answers pass the reply checks, the
grounding check and the tool-call check, with Ollama's figures; a recommendation in words; the
`Routine/Models.md` note. It recommends; it never switches an agent's model."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from statistics import mean
from typing import Any, Iterable

from routine.config.model import Config
from routine.config.providers import Provider
from routine.journal.trials import Trial, TrialStatus
from routine.vault import update_live_block

BLOCK = "models"


@dataclass(frozen=True)
class Score:
    model: str             # the model as its server names it (qwen2.5:7b-instruct-q4_K_M)
    agent: str
    role: str              # candidate (replayed) | original (the run as it ran)
    answers: int
    passed: int
    reply_ok: float | None
    grounding_ok: float | None
    tool_calls_valid: float | None
    tokens_per_s: float | None
    ttft_ms: float | None
    answer_chars: float | None
    load_ms: float | None
    closeness: float | None
    peak_memory_mb: float | None = None  # the largest size in memory Ollama reported after an answer
    failed: int = 0        # trials that got no answer at all (the server away, the model missing)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.answers if self.answers else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "pass_rate": round(self.pass_rate, 3)}


def served(model: str | None) -> str:
    return Provider.of(model).served_name(model) if model else "?"


def scores(config: Config, trials: Iterable[Trial]) -> list[Score]:
    """Per (model, agent): the candidates' answers and, once per run, the originals'."""
    judged: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    failed: dict[tuple[str, str, str], int] = {}
    originals: set[str] = set()
    for trial in trials:
        agent = trial.agent or "?"
        model = served(trial.model or _alias_model(config, trial.candidate))
        if trial.status is TrialStatus.FAILED:
            failed[(model, agent, "candidate")] = failed.get((model, agent, "candidate"), 0) + 1
            continue
        if trial.status is not TrialStatus.DONE or trial.result is None:
            continue
        judged.setdefault((model, agent, "candidate"), []).append(trial.result["candidate"])
        if trial.run not in originals:
            originals.add(trial.run)
            judged.setdefault((served(trial.original_model), agent, "original"), []).append(trial.result["original"])
    keys = sorted(set(judged) | set(failed))
    return [_score(key, judged.get(key, []), failed.get(key, 0)) for key in keys]


def _alias_model(config: Config, alias: str) -> str | None:
    found = config.models.get(alias)
    return found.primary.model if found else None


def _score(key: tuple[str, str, str], answers: list[dict[str, Any]], failed: int) -> Score:
    def rate(name: str) -> float | None:
        seen = [a[name] for a in answers if a.get(name) is not None]
        return round(sum(1 for v in seen if v) / len(seen), 3) if seen else None

    def avg(name: str) -> float | None:
        seen = [a[name] for a in answers if a.get(name) is not None]
        return round(mean(seen), 3) if seen else None

    memory = [a["memory_mb"] for a in answers if a.get("memory_mb") is not None]
    return Score(*key, answers=len(answers), passed=sum(1 for a in answers if a.get("passed")),
                 reply_ok=rate("reply_ok"), grounding_ok=rate("grounding_ok"),
                 tool_calls_valid=rate("tool_calls_valid"), tokens_per_s=avg("tokens_per_s"), ttft_ms=avg("ttft_ms"),
                 answer_chars=avg("answer_chars"), load_ms=avg("load_ms"), closeness=avg("closeness"),
                 peak_memory_mb=max(memory) if memory else None, failed=failed)


def overall(rows: list[Score]) -> list[Score]:
    """Every model over all agents (candidates and originals apart), best pass rate first."""
    groups: dict[tuple[str, str], list[Score]] = {}
    for row in rows:
        groups.setdefault((row.model, row.role), []).append(row)
    merged = []
    for (model, role), group in groups.items():
        answers = sum(r.answers for r in group)

        def weighted(name: str, group: list[Score] = group) -> float | None:
            seen = [(getattr(r, name), r.answers) for r in group if getattr(r, name) is not None and r.answers]
            return round(sum(v * n for v, n in seen) / sum(n for _, n in seen), 3) if seen else None

        peaks = [r.peak_memory_mb for r in group if r.peak_memory_mb is not None]
        merged.append(Score(model, "all", role, answers, sum(r.passed for r in group), weighted("reply_ok"),
                            weighted("grounding_ok"), weighted("tool_calls_valid"), weighted("tokens_per_s"),
                            weighted("ttft_ms"), weighted("answer_chars"), weighted("load_ms"), weighted("closeness"),
                            max(peaks) if peaks else None, sum(r.failed for r in group)))
    return ranked(merged)


def ranked(rows: list[Score]) -> list[Score]:
    return sorted(rows, key=lambda r: (-r.pass_rate, -(r.tokens_per_s or 0), r.model))


def recommendation(rows: list[Score]) -> list[str]:
    """One sentence per agent with trials: the best candidate against the model the runs used."""
    sentences = []
    for agent in sorted({r.agent for r in rows}):
        mine = [r for r in rows if r.agent == agent and r.answers]
        candidates = ranked([r for r in mine if r.role == "candidate"])
        originals = ranked([r for r in mine if r.role == "original"])
        if not candidates or not originals:
            continue
        best, was = candidates[0], originals[0]
        where = f"on your {agent.title()} runs ({_sample(best)} of {best.model}, {_sample(was)} of {was.model})"
        few = best.answers < MIN_SAMPLE
        caveat = ("; too few to be sure: queue more (`routine models try ALIAS --runs today`, or run ids)"
                  if few else "")
        if best.pass_rate > was.pass_rate:
            sentences.append(f"{best.model} passes {best.pass_rate:.0%} vs {was.pass_rate:.0%} for {was.model} "
                             f"{where}{_speed(best, was)}{caveat or '; switch its alias yourself if you agree'}.")
        elif best.pass_rate == was.pass_rate:
            sentences.append(f"{best.model} passes as often as {was.model} {where}: {best.pass_rate:.0%}"
                             f"{_speed(best, was)}{caveat}.")
        else:
            sentences.append(f"{was.model} stays best {where}: it passes {was.pass_rate:.0%} vs "
                             f"{best.pass_rate:.0%} for {best.model}{_speed(was, best)}{caveat}.")
    return sentences


MIN_SAMPLE = 5  # trials of a candidate below which a recommendation says it is too few to be sure


def _sample(score: Score) -> str:
    noun = "trial" if score.role == "candidate" else "run"
    return f"{score.answers} {noun}{'s' * (score.answers != 1)}"


def _speed(subject: Score, other: Score) -> str:
    """How fast ``subject`` generates against ``other`` ("1.3× slower"), from their tokens/s."""
    if not subject.tokens_per_s or not other.tokens_per_s:
        return ""
    ratio = other.tokens_per_s / subject.tokens_per_s
    if abs(ratio - 1) < 0.05:
        return ", about as fast"
    return f", {ratio:.1f}× slower" if ratio > 1 else f", {1 / ratio:.1f}× faster"


def note_rel(config: Config) -> str:
    """`Routine/Models.md`: beside the dashboard."""
    return str(PurePosixPath(config.layout.dashboard).parent / "Models.md")


COLUMNS = ("model", "agent", "as", "answers", "passes", "reply checks", "grounding", "tool calls", "tokens/s",
           "first token", "answer chars", "load", "memory", "closeness", "no answer")


def table_rows(rows: list[Score]) -> list[list[str]]:
    def pct(v: float | None) -> str:
        return "–" if v is None else f"{v:.0%}"

    def num(v: float | None, unit: str = "") -> str:
        return "–" if v is None else f"{v:.0f}{unit}" if v >= 10 else f"{v:.2g}{unit}"

    return [[r.model, r.agent, r.role, str(r.answers), pct(r.pass_rate), pct(r.reply_ok), pct(r.grounding_ok),
             pct(r.tool_calls_valid), num(r.tokens_per_s), num(r.ttft_ms, " ms"), num(r.answer_chars),
             num(r.load_ms, " ms"), num(r.peak_memory_mb, " MB"), pct(r.closeness), str(r.failed)] for r in rows]


def write_note(config: Config, rows: list[Score]) -> str:
    """`Routine/Models.md` brought up to date (its generated block only; the rest is the person's)."""
    said = [f"**{s}**" for s in recommendation(rows)] or ["No trial has an answer yet."]
    lines = [*said, "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows([*overall(rows), *ranked(rows)])]
    lines += ["", "Trials replay real requests (yesterday's unless `--runs today` or run ids are named) on another "
              "model (`routine models try`); nothing here "
              "changes a model. *as*: candidate = the model tried, original = the model the runs used. *closeness*: "
              "to a section you edited afterwards, as you kept it."]
    update_live_block(config.vault, note_rel(config), BLOCK, "\n".join(lines), "Models")
    return note_rel(config)
