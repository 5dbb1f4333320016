"""Fitting context into the model's pinned context window, dropping the least important first.

No tokenizer is loaded (edge-frugal); we estimate conservatively at 3.5 characters a token,
which over-counts English and markdown for Llama/Mistral/Qwen tokenizers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from routine.errors import ContextTooSmall
from routine.runner.context import ContextItem

CHARS_PER_TOKEN = 3.5
MESSAGE_OVERHEAD = 8  # role markers and template tokens per message
MIN_USEFUL_TOKENS = 200  # below this, a truncated note is noise: drop it whole


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD


@dataclass
class Fitted:
    kept: list[ContextItem]
    dropped: list[dict]  # {"label", "source", "reason"}


def fit(items: list[ContextItem], fixed_text: str, num_ctx: int, reserve_output: int) -> Fitted:
    """Keep items while they fit beside ``fixed_text`` (system prompt, task, instructions).

    The fixed part is never cut: if it alone does not fit, that is an error the person must
    see, not a silently truncated task.
    """
    budget = num_ctx - reserve_output - estimate_tokens(fixed_text)
    if budget < 0:
        raise ContextTooSmall(
            f"The system prompt and task need about {estimate_tokens(fixed_text)} tokens, "
            f"more than the {num_ctx - reserve_output} the model's context leaves after its answer.",
            "shorten the agent's prompt or the task, or raise `num_ctx` for the model alias in routine.yaml.",
        )
    # Most important first; within a priority, earlier declared first.
    ranked = sorted(items, key=lambda it: (-it.priority, it.order))
    kept, dropped = [], []
    for item in ranked:
        cost = estimate_tokens(item.label) + estimate_tokens(item.text)
        if cost <= budget:
            kept.append(item)
            budget -= cost
        elif budget >= MIN_USEFUL_TOKENS:
            keep_chars = int((budget - estimate_tokens(item.label) - 16) * CHARS_PER_TOKEN)
            cut = len(item.text) - keep_chars
            item.text = item.text[:keep_chars].rstrip() + f"\n\n[… {cut} characters left out for length]"
            kept.append(item)
            dropped.append({"label": item.label, "source": item.source, "reason": f"truncated: last {cut} characters left out"})
            budget = 0
        else:
            dropped.append({"label": item.label, "source": item.source, "reason": "left out: no room in the context window"})
    kept.sort(key=lambda it: it.order)
    return Fitted(kept, dropped)
