"""Counts that learn: per model, the scale between what we count and what the server says it evaluated.

Each answered request is a sample (``routine.journal.token_samples``): the text as the alias's counter
counts it uncalibrated, the template overhead we add, what we counted when sending it and what the
server reported. The scale is the largest ratio of reported to counted text among the latest samples
(a cached prompt prefix only makes a sample look cheaper), raised a little, with no cap that keeps it
wrong: a Qwen tokenizer's ~0.65 of the estimate is learned as well as a denser one's 1.5. A tokenizer
of the model's family is trusted for the text: it is only ever scaled up.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from routine.journal.token_samples import Sample, TokenSamples
from routine.models.tokens import (
    CALIBRATION_SAFETY,
    ESTIMATE,
    MAX_SCALE,
    MIN_SAMPLE_TOKENS,
    MIN_SAMPLES,
    MIN_SCALE,
    SAMPLE_WINDOW,
    Counter,
    Estimate,
    Message,
    Method,
    Scaled,
    ToolSchema,
    base_counter,
    count_texts,
    overhead,
    request_texts,
    shape_of,
    tokenizer_of,
)


def _ratio(sample: Sample) -> float | None:
    text = sample.reported - sample.overhead
    return text / sample.base if sample.base >= MIN_SAMPLE_TOKENS and text > 0 else None


def scale_of(samples: list[Sample], counter: str) -> float | None:
    """The learned scale for ``counter`` from these samples; None until there are enough."""
    ratios = [r for s in samples if s.counter == counter and (r := _ratio(s)) is not None]
    if len(ratios) < MIN_SAMPLES:
        return None
    scale = min(MAX_SCALE, max(MIN_SCALE, max(ratios) * CALIBRATION_SAFETY))
    return scale if counter == ESTIMATE else max(1.0, scale)


@dataclass(frozen=True)
class Accuracy:
    """How well an alias's counts match the server's: mean signed error in percent (positive: counted high)."""

    method: Method
    samples: int          # all samples of the alias's model
    error_now: float | None   # the current count, re-applied to the samples taken with the same counter
    error_sent: float | None  # what was counted when each request was sent


def error_percent(counted: int, reported: int) -> float:
    return 100.0 * (counted - reported) / reported


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


class Calibration:
    """Per model: the learned scale. ``store`` persists samples; without one (a test, a dry run
    without state) they live only in memory."""

    def __init__(self, store: TokenSamples | None = None):
        self.store = store
        self._lock = threading.Lock()
        self._samples: dict[str, list[Sample]] = {}

    def counter(self, model: str, tokenizer: str | None) -> Counter:
        name = tokenizer_of(model, tokenizer)
        scale = scale_of(self._load(model), name)
        if name == ESTIMATE:
            return Estimate(scale=scale)
        inner = base_counter(name)
        return inner if scale is None or scale <= 1.0 else Scaled(inner, scale)

    def record(self, model: str, tokenizer: str | None, messages: list[Message], tools: list[ToolSchema] | None,
               reported: int | None, counted: int | None = None, run_id: str | None = None) -> None:
        """One request and the prompt tokens the server reported for it."""
        if not reported:
            return
        name = tokenizer_of(model, tokenizer)
        sample = Sample(name, count_texts(base_counter(name), messages, tools), overhead(messages, tools),
                        counted, reported, run_id, model)
        with self._lock:
            samples = self._load(model)
            samples.insert(0, sample)
            del samples[SAMPLE_WINDOW:]
        if self.store is not None:
            shapes = [shape_of(t) for t in request_texts(messages, tools)]
            self.store.add(model, sample, sum(s.chars for s in shapes), sum(s.fixed for s in shapes))

    def accuracy(self, model: str, tokenizer: str | None, limit: int = SAMPLE_WINDOW) -> Accuracy:
        name = tokenizer_of(model, tokenizer)
        samples = self.store.recent(model, limit) if self.store is not None else list(self._load(model))
        scale = scale_of(self._load(model), name)
        method = Method.TOKENIZER if name != ESTIMATE else Method.DEFAULT if scale is None else Method.CALIBRATED
        factor = 1.0 if scale is None else scale
        now = [error_percent(math.ceil(s.base * factor) + s.overhead, s.reported)
               for s in samples if s.counter == name]
        sent = [error_percent(s.counted, s.reported) for s in samples if s.counted]
        return Accuracy(method, len(samples), _mean(now), _mean(sent))

    def _load(self, model: str) -> list[Sample]:
        """The latest samples first."""
        if model not in self._samples:
            self._samples[model] = self.store.recent(model, SAMPLE_WINDOW) if self.store is not None else []
        return self._samples[model]
