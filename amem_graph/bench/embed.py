"""`bench embed`: the embedding backends side by side in one run — sentences/s in batches, ms per single text,
and how close their vectors are (to torch's where the `torch` extra is installed)."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..embedding import Embedder
from .texts import sentences
from .timing import ms, percentiles

BACKENDS = ("torch", "onnx", "onnx-int8")


def run(model: str, *, texts: Sequence[str] | None = None, n: int = 2000, singles: int = 300, rounds: int = 3,
        batch_size: int = 64, home: Any = None) -> dict[str, Any]:
    """Each backend embeds the same `n` texts in batches and `singles` of them one at a time, in alternating
    rounds (so both see the same machine); the vectors of each are compared with torch's, or with the full ONNX
    graph's where torch is not installed (the core install)."""
    texts = list(texts or sentences(n))[:n]
    backends = BACKENDS if importlib.util.find_spec("sentence_transformers") else BACKENDS[1:]
    embedders = {b: Embedder(model, batch_size, backend=b, home=home) for b in backends}
    for embedder in embedders.values():
        embedder.embed(texts[:batch_size])  # load, write the graph if needed, warm up: before any clock runs
    seconds = dict.fromkeys(backends, 0.0)
    single_ms: dict[str, list[float]] = {b: [] for b in backends}
    vectors: dict[str, np.ndarray] = {}
    for round_ in range(rounds):
        order = backends if round_ % 2 == 0 else backends[::-1]
        for backend in order:
            began = time.perf_counter()
            vectors[backend] = embedders[backend].embed(texts)
            seconds[backend] += time.perf_counter() - began
            single_ms[backend] += [ms(embedders[backend].embed, [t]) for t in texts[:singles]]
    per_s = {b: round(rounds * len(texts) / seconds[b], 1) for b in backends}
    base = backends[0]
    return {
        "benchmark": "embed",
        "model": model,
        "texts": len(texts), "batch_size": batch_size, "rounds": rounds,
        "backends": {b: {"sentences_per_s": per_s[b], "single_ms": percentiles(single_ms[b])} for b in backends},
        **{f"{b}_vs_{base}": _versus(b, base, per_s, single_ms, vectors) for b in backends if b != base},
    }


def _versus(backend: str, base: str, per_s: dict[str, float], single_ms: dict[str, list[float]],
            vectors: dict[str, np.ndarray]) -> dict[str, float]:
    cosines = (vectors[backend] * vectors[base]).sum(axis=1)
    return {
        "batch_speedup": round(per_s[backend] / per_s[base], 2),
        "single_p50_speedup": round(percentiles(single_ms[base])["p50"] / percentiles(single_ms[backend])["p50"], 2),
        "cosine_min": round(float(cosines.min()), 6), "cosine_mean": round(float(cosines.mean()), 6),
    }
