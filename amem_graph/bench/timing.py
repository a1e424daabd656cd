"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..embedding import Embedder


class TimedEmbedder(Embedder):
    """An Embedder that adds up the seconds spent in embed()."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner.model_name, inner.batch_size, backend=inner.requested, home=inner.home)
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return super().embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


def ms(call: Callable[..., object], *args: Any, **kwargs: Any) -> float:
    """Milliseconds that `call(*args, **kwargs)` takes."""
    began = time.perf_counter()
    call(*args, **kwargs)
    return (time.perf_counter() - began) * 1000


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    data = np.asarray(samples_ms)
    return {"p50": round(float(np.percentile(data, 50)), 3), "p95": round(float(np.percentile(data, 95)), 3),
            "mean": round(float(data.mean()), 3), "n": int(data.size)}
