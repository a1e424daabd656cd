"""Consolidation after a change of embedding model: the vector index is rebuilt with the configured model's
dimension, then every vector of the database (notes, pages, facts, segment centroids) is computed again with
it. Resumable by running it again: it always starts from the first node."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import validation
from .embedding import Embedder, composite_text
from .errors import SchemaMismatch
from .store.base import SCHEMA_VERSION, MemoryStore
from .tiers.analysis import embedded_text

BATCH = 256
KINDS = ("notes", "passages", "pages", "facts", "segments")  # segments last: their centroids are their pages' new vectors


def _text(kind: str, row: dict) -> str:
    if kind == "notes":
        return composite_text(row["content"], row["context"] or "", row["keywords"] or (), row["tags"] or ())
    if kind == "passages":  # the same span: one the new model reads past its window is found by its start
        return row["content"][row["start"]: row["end"]]
    if kind == "pages":
        return embedded_text(row["user_text"] or "", row["assistant_text"] or "") or " "
    return row["text"]


def _vectors(embedder: Embedder, kind: str, rows: list[dict]) -> list[np.ndarray]:
    if kind == "segments":  # the mean of its pages', as when pages join it
        return [np.mean(np.asarray(row["pages"], dtype=np.float64), axis=0) for row in rows]
    return list(embedder.embed([_text(kind, row) for row in rows]))


def consolidate(store: MemoryStore, embedder: Embedder, *, on_batch: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Rebuild the index and re-embed everything with `embedder`; returns how many of each kind."""
    found = store.schema_state().version
    if found is not None and found > SCHEMA_VERSION:
        raise SchemaMismatch(f"{store.location} holds a newer amem-graph schema ({found}): upgrade amem-graph")
    # not schema.ensure: its check refuses the old model's marker, which is what this replaces
    store.create_schema(embedder.model_name, embedder.dimension, found)
    store.dimension = embedder.dimension
    counts: dict[str, int] = {}
    for kind in KINDS:
        after, done = "", 0
        while rows := store.embedding_texts(kind, after, BATCH):
            vectors = _vectors(embedder, kind, rows)
            checked = [(row["id"], validation.vector(v, embedder.dimension)) for row, v in zip(rows, vectors, strict=True)]
            store.write_embeddings(kind, checked)
            after, done = rows[-1]["id"], done + len(rows)
            if on_batch:
                on_batch(kind, len(rows))
        counts[kind] = done
    return counts
