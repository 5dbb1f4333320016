"""Export the shipped all-MiniLM-L6-v2 to ONNX, once: ``python -m routine.memory.onnx_export FOLDER OUT``.

Run by ``embedder.exported`` in a child process, so torch (a few hundred megabytes) is
never held by the index worker. Offline: the weights are the unpacked shipped model's; the file
appears atomically (written beside, then renamed), so a crash leaves no half graph.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from routine.atomicfile import commit_file

OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "HF_HUB_DISABLE_PROGRESS_BARS")


def export(folder: Path, out: Path) -> None:
    for var in OFFLINE:  # never reach a model hub
        os.environ[var] = "1"
    import torch
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(str(folder), local_files_only=True)
    bert.eval()

    class Hidden(torch.nn.Module):  # keyword arguments: BertModel's positional order differs by version
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            hidden: torch.Tensor = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                              token_type_ids=token_type_ids).last_hidden_state
            return hidden

    ids = torch.ones(1, 8, dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]}
    fd, scratch = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=out.parent)
    os.close(fd)
    try:
        with torch.no_grad():
            torch.onnx.export(Hidden(bert), (ids, ids, torch.zeros_like(ids)), scratch, input_names=names,
                              output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
        commit_file(Path(scratch), out)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore")
    export(Path(sys.argv[1]), Path(sys.argv[2]))
