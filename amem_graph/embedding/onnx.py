"""A sentence-transformers model (Transformer → mean pooling → normalise) on ONNX Runtime: its graph written
once from the model's weights (embedding/bert.py) and cached under $AMEM_HOME/models with its int8 copy.
Texts are tokenised once, and batched by length so that padding costs little."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from . import bert

EXPORT_VERSION = 3  # bump when the written graph changes: a new cache entry
# Texts the int8 copy is checked on against the full graph (and the tests check the full graph against torch).
CHECK_TEXTS = (
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie painted a sunrise over the lake last summer.",
    "When did Jon open his dance studio?",
    "ok",
)
MIN_COSINE = 0.999  # the full graph against torch (tests/test_embedding.py, `bench embed`)
MAX_WORKERS = 8  # sessions that embed many texts at once (one per core, at most this many)
MIN_COSINE_INT8 = 0.95  # int8 weights move vectors a little; recall decides whether that is kept (BENCHMARKS.md)


class OnnxUnavailable(Exception):
    """The model cannot run on ONNX Runtime here (what is missing, or why its graph was refused)."""


def supported(folder: Path) -> bool:
    """A sentence-transformers folder of Transformer, mean Pooling and optionally Normalize: what the exported
    graph computes."""
    try:
        modules = json.loads((folder / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pooling = next(m for m in modules if m["type"].endswith("Pooling"))
        config = json.loads((folder / pooling["path"] / "config.json").read_text())
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return False
    modes = {k for k, v in config.items() if k.startswith("pooling_mode") and v}
    return kinds[:2] == ["Transformer", "Pooling"] and set(kinds[2:]) <= {"Normalize"} and modes == {"pooling_mode_mean_tokens"}


def cache_path(name: str, folder: Path, home: Path) -> Path:
    """Where the export of the model `name` (in `folder`) is kept: keyed by its configuration and weights."""
    digest = hashlib.sha256(f"v{EXPORT_VERSION}".encode())
    for file in ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json"):
        part = folder / file
        digest.update(part.read_bytes() if part.is_file() else b"-")
    for weights in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")) + sorted(folder.glob("*.onnx")):
        digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
        with weights.open("rb") as handle:
            digest.update(handle.read(1 << 20))
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name.rsplit("/", 1)[-1])[:60]
    return home / "models" / "onnx" / f"{slug}-{digest.hexdigest()[:16]}" / "model.onnx"


def write_graph(folder: Path, target: Path) -> None:
    """The model's graph (embedding/bert.py) into `target`, atomically: a reader sees all of it or none."""
    with _replacing(target) as temporary:
        try:
            bert.write(folder, temporary)
        except bert.GraphUnsupported as err:
            raise OnnxUnavailable(str(err)) from None


def write_export_graph(export: Path, target: Path, *, heads: int, pooling: str) -> None:
    """The graph of the model whose ONNX export is `export` (the hub's form: its last hidden state), written as
    `write_graph` writes one (fused operators, pooling and normalisation inside) from the export's weights."""
    with _replacing(target) as temporary:
        try:
            bert.build(bert.weights_of_export(export), temporary, heads=heads, pooling=pooling)
        except (bert.GraphUnsupported, KeyError) as err:
            raise OnnxUnavailable(f"{export}: {err}") from None


def quantize(full: Path, target: Path) -> None:
    """An int8 copy of a full graph: the weights of every MatMul and Attention quantised per channel,
    activations dynamically (the graph's operators are fused already)."""
    try:
        import onnx as onnx_
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as err:
        raise OnnxUnavailable(f"quantising needs onnx and onnxruntime: {err}") from None
    with _replacing(target) as temporary, _root_logger_quiet():
        quantize_dynamic(full, temporary, weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Attention"],
                         extra_options={"DefaultTensorType": onnx_.TensorProto.FLOAT})


@contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A temporary path beside `target` that becomes `target` when the block succeeds, and is gone otherwise."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


@contextmanager
def _root_logger_quiet() -> Iterator[None]:
    """The quantiser advises pre-processing through the root logger (`logging.warning`), which also gives a
    program without logging set up a stderr handler for good. Neither is the user's concern: for the call, the
    root logger drops warnings, and a handler is in place so that none is added."""
    root = logging.getLogger()
    guard = logging.NullHandler()
    level = root.level
    root.addHandler(guard)
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)
        root.removeHandler(guard)


class OnnxEncoder:
    """Unit vectors for texts from an exported model; one per graph per process, shared by its threads. With
    `alone`, each text is run by itself: an int8 graph scales its activations by what is in the batch, so a
    text batched with others would get another vector than alone (and alone it pays nothing for padding).
    Many texts run alone are shared among one single-threaded session per core."""

    def __init__(self, folder: Path, graph: Path, *, alone: bool = False, tokens: int | None = None) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as err:
            raise OnnxUnavailable(f"the ONNX backend needs onnxruntime and tokenizers: {err}") from None

        def session(threads: int) -> Any:
            options = onnxruntime.SessionOptions()
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.intra_op_num_threads = threads
            options.log_severity_level = 3  # its warnings about unused initialisers are not the user's concern
            try:
                return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
            except Exception as err:  # a damaged file, or a runtime too old for it: ONNX cannot run it here
                raise OnnxUnavailable(f"ONNX Runtime cannot load {graph}: {err}"[:500]) from None

        self._cores = max(1, min(os.cpu_count() or 1, MAX_WORKERS))
        self._session = session(self._cores)  # one text, or a batch: every core on it
        self._alone = alone
        self._lean = session(1) if alone and self._cores > 1 else None
        self._pool = ThreadPoolExecutor(self._cores, thread_name_prefix="amem-embed") if self._lean else None
        tokens = tokens or _max_tokens(folder)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(tokens)
        self._lock = threading.Lock()  # the tokenizer's settings are shared state; encoding is quick
        self._whole = Tokenizer.from_file(str(folder / "tokenizer.json"))  # reads past the window: passages
        self._whole.no_padding()
        self._whole.no_truncation()
        # What the model reads of a text: its limit less the special tokens put around every text.
        self.window = tokens - len(self._whole.encode("").ids)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """The character span of each of the text's tokens, the whole text (no special tokens)."""
        return [tuple(span) for span in self._whole.encode(text, add_special_tokens=False).offsets]  # type: ignore[misc]

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        with self._lock:  # a few texts: one by one (a batch wakes the tokenizer's thread pool, costing more)
            encoded = self._tokenizer.encode_batch(list(texts)) if len(texts) > 16 else map(self._tokenizer.encode, texts)
            ids = [e.ids for e in encoded]
        if not self._alone:
            return self._batched(self._session, ids, batch_size)
        if self._pool is None or len(ids) < 2 * self._cores:
            return np.vstack([self._run(self._session, [one]) for one in ids])
        parts = [list(range(start, len(ids), self._cores)) for start in range(self._cores)]
        lean = self._lean
        done = self._pool.map(lambda part: [self._run(lean, [ids[i]]) for i in part], parts)
        out = np.empty((len(ids), 0), dtype=np.float32)
        for part, vectors in zip(parts, done, strict=True):
            stacked = np.vstack(vectors)
            if out.shape[1] == 0:
                out = np.empty((len(ids), stacked.shape[1]), dtype=np.float32)
            out[part] = stacked
        return out

    def _batched(self, session: Any, ids: list[list[int]], batch_size: int) -> np.ndarray:
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths together: little padding
        out = np.empty((len(ids), 0), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chosen = order[start: start + batch_size]
            vectors = self._run(session, [ids[i] for i in chosen])
            if out.shape[1] == 0:
                out = np.empty((len(ids), vectors.shape[1]), dtype=np.float32)
            out[chosen] = vectors
        return out

    @staticmethod
    def _run(session: Any, ids: list[list[int]]) -> np.ndarray:
        width = max(len(one) for one in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        for row, one in enumerate(ids):
            tokens[row, : len(one)] = one
        mask = (np.arange(width)[None, :] < np.array([len(one) for one in ids])[:, None]).astype(np.int64)
        vectors = session.run(None, {"input_ids": tokens, "attention_mask": mask, "token_type_ids": np.zeros_like(tokens)})[0]
        return np.asarray(vectors, dtype=np.float32)


def _max_tokens(folder: Path) -> int:
    """sentence-transformers' max_seq_length for the model (what it truncates to), else the model's limit."""
    try:
        return int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return int(json.loads((folder / "config.json").read_text()).get("max_position_embeddings", 512))


__all__ = ["MIN_COSINE", "MIN_COSINE_INT8", "OnnxEncoder", "OnnxUnavailable", "cache_path", "quantize", "supported",
           "write_export_graph", "write_graph"]
