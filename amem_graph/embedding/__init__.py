"""Sentence embeddings on ONNX Runtime with no torch: the models of the table (embedding/catalog.py) — pooling,
query and document prefixes, token limit, pinned weights — their graph written once from their weights
(embedding/bert.py). Other models run there too when they are BERT encoders in safetensors; the rest run on
torch through sentence-transformers, the `torch` extra. Queries and documents are embedded as each model
prescribes: `embed_query` for a question, `embed` for what is stored (notes, passages, pages, facts)."""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import Literal

import numpy as np

from ..core.log import event
from ..errors import AmemError, InvalidInput
from ..models import Passage
from ..settings import DEFAULT_MODEL, EMBEDDING_BACKENDS, Settings, default_home
from . import bert, catalog, download, onnx, packaged, passages

canonical_model = catalog.canonical  # one name per model: an alias and its hub id compare equal

Backend = Literal["torch", "onnx", "onnx-int8"]
MAX_MODEL_CHARS = 1_000  # a hub id, or a folder's path


def resolve_model(name: str, home: Path) -> str:
    """The packaged model's folder (unpacked under `home` from its package), or the name as given: a folder, or
    a hub id (a downloaded model's ONNX export is found by `_onnx_encoder`; torch loads it by its id)."""
    if catalog.spec(name) is catalog.MINILM and (folder := packaged.folder(home)):
        return str(folder)
    return name


_loading = threading.Lock()


def _load(name: str, home: Path):
    with _loading:  # threads that embed at once load the model once
        return _load_once(name, home)


@cache
def _load_once(name: str, home: Path):
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise AmemError(f"{name!r} runs on torch, which is not installed: pip install 'amem-graph[torch]'") from None
    try:
        with _no_progress_bars():
            return SentenceTransformer(resolve_model(name, home), device="cpu")
    except Exception as err:  # the library raises many kinds; the user needs the model name and the cause
        raise AmemError(f"cannot load embedding model {name!r}: {err}") from err


@contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers draws a "Loading weights" bar on stderr at every load: noise in every command's output
    (and a log) that the user did not ask for. Off for the load only, so a caller's own bars stay as set."""
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars
    from transformers.utils import logging as transformers_logging

    bars_on, hub_off = transformers_logging.is_progress_bar_enabled(), are_progress_bars_disabled()
    transformers_logging.disable_progress_bar()  # the hub's bars (downloads) too
    try:
        yield
    finally:
        if bars_on:
            transformers_logging.enable_progress_bar()
        if hub_off:  # enable_progress_bar turned the hub's on as well
            disable_progress_bars()


@cache
def _dimension_from_files(path: str) -> int | None:
    """A sentence-transformers folder of Transformer + Pooling (+ Normalize) outputs the pooling dimension."""
    folder = Path(path)
    try:
        modules = json.loads((folder / "modules.json").read_text())
        kinds = {m["type"].rsplit(".", 1)[-1] for m in modules}
        if not kinds <= {"Transformer", "Pooling", "Normalize"}:
            return None
        pooling = next(m for m in modules if m["type"].endswith("Pooling"))
        config = json.loads((folder / pooling["path"] / "config.json").read_text())
        return int(config["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None


_exporting = threading.Lock()


@cache
def _onnx_encoder(name: str, home: Path, int8: bool) -> onnx.OnnxEncoder:
    """The model on ONNX Runtime (its int8 copy with `int8`), its graph written on first use; the int8 copy is
    checked against it. OnnxUnavailable if the model cannot run there; AmemError if its files cannot be had."""
    spec = catalog.spec(name)
    if spec is not None and spec.download is not None:
        folder = download.folder(spec, home)
        write = partial(onnx.write_export_graph, folder / "model.onnx", heads=spec.heads, pooling=spec.pooling)
    else:
        folder = Path(resolve_model(name, home))
        if not onnx.supported(folder):
            raise onnx.OnnxUnavailable(f"{name!r} is not a local Transformer + mean-pooling model folder")
        if why := bert.buildable(folder):
            raise onnx.OnnxUnavailable(f"{name!r}: {why}")
        write = partial(onnx.write_graph, folder)
    tokens = spec.tokens if spec else None
    full = onnx.cache_path(name, folder, home)
    quantized = full.with_name("model-int8.onnx")
    with _exporting:
        if not full.is_file() or (int8 and not quantized.is_file()):
            with _preparing(name, full.parent):
                if not full.is_file():
                    write(full)
                if int8 and not quantized.is_file():
                    onnx.quantize(full, quantized)
                    _check(name, folder, quantized, reference=full, tokens=tokens)
    graph = quantized if int8 else full
    return onnx.OnnxEncoder(folder, graph, alone=int8, tokens=tokens)


@contextmanager
def _preparing(name: str, folder: Path) -> Iterator[None]:
    """One line on stderr while the model is exported for ONNX Runtime, the first time it is used on a
    machine: the one wait of a first run that the user did not start, so it says what it is and how long."""
    began = time.perf_counter()
    sys.stderr.write(f"Preparing the embedding model {name} for ONNX Runtime (once per machine, into {folder}) ... ")
    sys.stderr.flush()
    try:
        yield
    except BaseException:
        sys.stderr.write("failed\n")
        raise
    sys.stderr.write(f"done in {time.perf_counter() - began:.0f} s\n")


def _check(name: str, folder: Path, quantized: Path, *, reference: Path, tokens: int | None) -> None:
    """The int8 copy must stay near the full graph's vectors for the check texts (cosine ≥ MIN_COSINE_INT8), or
    it is removed. (The full graph gives torch's vectors: tests/test_embedding.py checks it where torch is.)"""
    vectors = onnx.OnnxEncoder(folder, quantized, alone=True, tokens=tokens).encode(onnx.CHECK_TEXTS, 8)
    expected = onnx.OnnxEncoder(folder, reference, tokens=tokens).encode(onnx.CHECK_TEXTS, 8)
    lowest = float((vectors * expected).sum(axis=1).min())
    if lowest < onnx.MIN_COSINE_INT8:
        quantized.unlink()
        raise onnx.OnnxUnavailable(f"the int8 graph of {name!r} strays from the full one (cosine {lowest:.5f})")
    event("embedding_prepared", logging.INFO, model=name, path=str(quantized), min_cosine=round(lowest, 6))


class Embedder:
    """Turns texts into unit-length float32 vectors. One model instance per name (and backend) per process.
    `backend`: "torch"; "onnx" (ONNX Runtime, torch's vectors); "onnx-int8" (its weights in int8: vectors
    within a cosine of about 0.99 of torch's); or "auto" (onnx-int8, else onnx, else torch: the first that
    runs here). The ONNX graphs are cached under `home`/models."""

    def __init__(
        self, model: str = DEFAULT_MODEL, batch_size: int = 64, *, backend: str = "auto", home: Path | None = None
    ) -> None:
        if backend not in EMBEDDING_BACKENDS:
            raise AmemError(f"embedding backend must be one of {', '.join(EMBEDDING_BACKENDS)}, got {backend!r}")
        if not isinstance(model, str) or not model.strip() or model != model.strip() or len(model) > MAX_MODEL_CHARS \
                or not model.isprintable():
            raise InvalidInput(f"an embedding model is a hub id or a folder (printable, at most {MAX_MODEL_CHARS} "
                               f"characters, no surrounding spaces), not {str(model)[:80]!r}")
        self.model_name = model
        self.batch_size = batch_size
        self.requested = backend
        self.home = home or default_home()
        self.spec = catalog.spec(model)  # None: a model outside the table (no prefixes)
        self._backend: Backend | None = None
        self._encoder: onnx.OnnxEncoder | None = None
        self._prefix_tokens: int | None = None

    @classmethod
    def of(cls, settings: Settings) -> Embedder:
        """The embedder the settings name (AMEM_EMBEDDING_MODEL, _BATCH_SIZE, _BACKEND)."""
        return cls(settings.embedding_model, settings.embedding_batch_size, backend=settings.embedding_backend,
                   home=settings.home)

    @property
    def backend(self) -> Backend:
        """The backend that embeds: chosen on first use (an export may run then)."""
        if self._backend is None:
            self._backend = self._choose()
        return self._backend

    def _choose(self) -> Backend:
        if self.requested == "torch":
            return "torch"
        # auto: int8 first (its recall on LoCoMo is fp32's, at twice the speed: BENCHMARKS.md), then fp32.
        tried: tuple[Backend, ...] = ("onnx-int8", "onnx") if self.requested == "auto" else (self.requested,)  # type: ignore[assignment]
        why = ""
        for backend in tried:
            try:
                self._encoder = _onnx_encoder(self.model_name, self.home, backend == "onnx-int8")
                return backend
            except onnx.OnnxUnavailable as err:
                why = str(err)
        if self.requested != "auto":
            raise AmemError(f"AMEM_EMBEDDING_BACKEND={self.requested}, but {why}")
        event("embedding_backend", logging.INFO, backend="torch", why=why)
        return "torch"

    @property
    def dimension(self) -> int:
        """Read from the table or the model's files when they say it plainly, so commands that never embed skip
        torch."""
        if self.spec is not None:
            return self.spec.dimension
        if known := _dimension_from_files(resolve_model(self.model_name, self.home)):
            return known
        model = _load(self.model_name, self.home)
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        if not isinstance(found := getter(), int) or found < 1:
            raise AmemError(f"embedding model {self.model_name!r} does not say the size of its vectors")
        return found

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of what is stored and compared with other stored text: notes, passages, pages, facts (the
        model's document form)."""
        return self._encode([self._document_prefix + text for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a question asked of the memory (the model's query form)."""
        return self._encode([(self.spec.query_prefix if self.spec else "") + text])[0]

    @property
    def _document_prefix(self) -> str:
        return self.spec.document_prefix if self.spec else ""

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.backend != "torch" and self._encoder is not None:
            return self._encoder.encode(texts, self.batch_size)
        model = _load(self.model_name, self.home)
        vectors = model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def similarity(self, cosine: float) -> float:
        """A cosine of this model on the scale the engine's fixed cosines are set on (all-MiniLM-L6-v2's): what a
        rule compares with a threshold (catalog.on_reference_scale)."""
        return catalog.on_reference_scale(self.spec, cosine)

    @property
    def cosine_unit(self) -> float:
        """This model's cosine span for one unit of the reference scale: a margin set on that scale, times this."""
        return catalog.cosine_unit(self.spec)

    @property
    def window(self) -> int:
        """How many tokens of a stored text the model reads (its limit less the special tokens and the document
        prefix); the rest is found through passages."""
        if self._prefix_tokens is None:
            self._prefix_tokens = len(self._offsets(self._document_prefix)) if self._document_prefix else 0
        prefix = self._prefix_tokens
        if self.backend != "torch" and self._encoder is not None:
            return self._encoder.window - prefix
        model = _load(self.model_name, self.home)
        return int(model.max_seq_length) - len(model.tokenizer("")["input_ids"]) - prefix

    def fills_window(self, text: str) -> bool:
        """Whether the model reads only the start of `text`: then whatever a composite appends to it (context,
        keywords, tags) is cut off too, and the composite's vector is the text's own."""
        window = self.window
        return len(text) > window and len(self._offsets(text)) > window

    def passages(self, texts: Sequence[str]) -> list[list[Passage]]:
        """For each text, the passages that cover what the model does not read of it (passages.spans), each with
        its vector; none for a text within the window, which costs no more than its length check."""
        cut = [self.passage_spans(text) for text in texts]
        pieces = [text[start:end] for text, spans in zip(texts, cut, strict=True) for start, end in spans]
        vectors = iter(self.embed(pieces)) if pieces else iter(())
        return [[Passage(start, end, next(vectors)) for start, end in spans] for spans in cut]

    def passage_spans(self, text: str) -> list[tuple[int, int]]:
        """The character spans of `text` that its passages cover (passages.spans): none for a text within the
        window, which costs no more than its length check; else the tokenizer alone, no model."""
        window = self.window
        return passages.spans(self._offsets(text), window) if len(text) > window else []

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        if self.backend != "torch" and self._encoder is not None:
            return self._encoder.offsets(text)
        encoded = _load(self.model_name, self.home).tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [tuple(span) for span in encoded["offset_mapping"]]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Raw cosine in [-1, 1] (what the statements compute as `2 * vector.similarity.cosine(a, b) - 1`)."""
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm else 0.0


def composite_text(content: str, context: str = "", keywords: Sequence[str] = (), tags: Sequence[str] = ()) -> str:
    """A-Mem embeds the note with what was derived from it: content ⊕ context ⊕ keywords ⊕ tags."""
    parts = [content]
    if context:
        parts.append(context)
    if keywords:
        parts.append("keywords: " + ", ".join(keywords))
    if tags:
        parts.append("tags: " + ", ".join(tags))
    return "\n".join(parts)
