"""Fusing ranked lists from the vector and fulltext indexes into one ranking."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from .models import Note, SearchHit
from .store import NoteStore

Mode = Literal["hybrid", "vector", "fulltext"]
MODES: tuple[str, ...] = ("hybrid", "vector", "fulltext")
DENSE_WEIGHT = 0.6  # A-Mem-style weighted min-max fusion; 0.6 measured best on LoCoMo (issue 4)


def _min_max(scores: Sequence[float]) -> list[float]:
    low, high = min(scores), max(scores)
    if high - low < 1e-12:
        return [1.0] * len(scores)
    return [(s - low) / (high - low) for s in scores]


def fuse(
    vector_hits: Sequence[tuple[Note, float]],
    fulltext_hits: Sequence[tuple[Note, float]],
    k: int,
    dense_weight: float = DENSE_WEIGHT,
) -> list[SearchHit]:
    """Weighted min-max fusion: α·minmax(dense) + (1−α)·minmax(BM25); a list missing a note adds 0."""
    notes: dict[str, Note] = {}
    raw: dict[str, dict[str, float]] = {"vector": {}, "fulltext": {}}
    normed: dict[str, dict[str, float]] = {"vector": {}, "fulltext": {}}
    for name, hits in (("vector", vector_hits), ("fulltext", fulltext_hits)):
        if not hits:
            continue
        for (note, score), scaled in zip(hits, _min_max([s for _, s in hits]), strict=True):
            notes.setdefault(note.id, note)
            raw[name][note.id] = score
            normed[name][note.id] = scaled
    fused = [
        SearchHit(
            note,
            dense_weight * normed["vector"].get(note_id, 0.0) + (1 - dense_weight) * normed["fulltext"].get(note_id, 0.0),
            raw["vector"].get(note_id),
            raw["fulltext"].get(note_id),
        )
        for note_id, note in notes.items()
    ]
    fused.sort(key=lambda hit: (-hit.score, hit.note.id))
    return fused[:k]


def seeds(
    store: NoteStore, tenant: str, query: str, vector: np.ndarray | None, k: int, *, mode: Mode = "hybrid",
    include_invalid: bool = False,
) -> list[SearchHit]:
    """The k best notes for a query from the vector index, the fulltext index, or both fused.
    `vector` is the query's embedding (needed unless mode is "fulltext")."""
    pool = k if mode != "hybrid" else max(2 * k, 20)
    dense: list[tuple[Note, float]] = []
    lexical: list[tuple[Note, float]] = []
    if mode in ("hybrid", "vector") and vector is not None:
        dense = store.vector_search(tenant, vector, pool, include_invalid=include_invalid)
    if mode in ("hybrid", "fulltext"):
        lexical = store.fulltext_search(tenant, query, pool, include_invalid=include_invalid)
    return fuse(dense, lexical, k)
