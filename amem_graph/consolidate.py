"""Consolidation after a change of embedding model: every vector of the database (notes, pages, facts,
segment centroids) is computed again with the configured model, and the vector index is rebuilt with its
dimension. Resumable by running it again: it always starts from the first node."""

from __future__ import annotations

from collections.abc import Callable

from . import schema
from .embedding import Embedder, composite_text
from .store.base import MemoryStore
from .tiers.analysis import embedded_text

BATCH = 256


def _text(kind: str, row: dict) -> str:
    if kind == "notes":
        return composite_text(row["content"], row["context"] or "", row["keywords"] or (), row["tags"] or ())
    if kind == "pages":
        return embedded_text(row["user_text"] or "", row["assistant_text"] or "") or " "
    return row["text"]


def consolidate(store: MemoryStore, embedder: Embedder, *, on_batch: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Re-embed everything with `embedder` and rebuild the index; returns how many of each kind."""
    store.begin_consolidation(embedder.model_name, embedder.dimension)
    counts: dict[str, int] = {}
    for kind in ("notes", "pages", "facts"):
        after, done = "", 0
        while rows := store.embedding_texts(kind, after, BATCH):
            vectors = embedder.embed([_text(kind, row) for row in rows])
            store.write_embeddings(kind, [(row["id"], vector) for row, vector in zip(rows, vectors, strict=True)])
            after, done = rows[-1]["id"], done + len(rows)
            if on_batch:
                on_batch(kind, len(rows))
        counts[kind] = done
    counts["segments"] = store.segment_centroids()
    schema.ensure(store, embedder.model_name, embedder.dimension, force=True)
    return counts
