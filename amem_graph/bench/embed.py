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


def run(models: str | Sequence[str], *, texts: Sequence[str] | None = None, n: int = 2000, singles: int = 300,
        rounds: int = 3, batch_size: int = 64, home: Any = None, backends: Sequence[str] = ()) -> dict[str, Any]:
    """Each model on each backend (every backend that runs here by default) embeds the same `n` texts in batches
    and `singles` of them one at a time, in alternating rounds (so all see the same machine); the vectors of a
    model's backends are compared with its torch vectors, or with its full ONNX graph's where torch is not
    installed (the core install). With several models, each entry is named "model/backend"."""
    texts = list(texts or sentences(n))[:n]
    models = [models] if isinstance(models, str) else list(models)
    backends = tuple(backends) or (BACKENDS if importlib.util.find_spec("sentence_transformers") else BACKENDS[1:])
    named = {(b if len(models) == 1 else f"{m}/{b}"): (m, b) for m in models for b in backends}
    embedders = {name: Embedder(m, batch_size, backend=b, home=home) for name, (m, b) in named.items()}
    for embedder in embedders.values():
        embedder.embed(texts[:batch_size])  # load, write the graph if needed, warm up: before any clock runs
    names = tuple(named)
    seconds = dict.fromkeys(names, 0.0)
    single_ms: dict[str, list[float]] = {name: [] for name in names}
    vectors: dict[str, np.ndarray] = {}
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            began = time.perf_counter()
            vectors[name] = embedders[name].embed(texts)
            seconds[name] += time.perf_counter() - began
            single_ms[name] += [ms(embedders[name].embed, [t]) for t in texts[:singles]]
    per_s = {name: round(rounds * len(texts) / seconds[name], 1) for name in names}
    base = {m: next(name for name, (model, _) in named.items() if model == m) for m in models}
    return {
        "benchmark": "embed",
        "model": models[0] if len(models) == 1 else models,
        "texts": len(texts), "batch_size": batch_size, "rounds": rounds,
        "backends": {name: {"sentences_per_s": per_s[name], "single_ms": percentiles(single_ms[name])} for name in names},
        **{f"{name}_vs_{base[m]}": _versus(name, base[m], per_s, single_ms, vectors)
           for name, (m, _) in named.items() if name != base[m]},
    }


def _versus(backend: str, base: str, per_s: dict[str, float], single_ms: dict[str, list[float]],
            vectors: dict[str, np.ndarray]) -> dict[str, float]:
    cosines = (vectors[backend] * vectors[base]).sum(axis=1)
    return {
        "batch_speedup": round(per_s[backend] / per_s[base], 2),
        "single_p50_speedup": round(percentiles(single_ms[base])["p50"] / percentiles(single_ms[backend])["p50"], 2),
        "cosine_min": round(float(cosines.min()), 6), "cosine_mean": round(float(cosines.mean()), 6),
    }
