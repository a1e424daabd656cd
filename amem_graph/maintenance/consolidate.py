"""Consolidation after a change of embedding model: the vector index is rebuilt with the configured model's
dimension, then every vector of the database (notes, passages, pages, facts, segment centroids) is computed again
with it. Killed, it resumes where it stopped when run again; until it ends, the database refuses to open."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core import validation
from ..embedding import Embedder, canonical_model, composite_text
from ..errors import SchemaMismatch
from ..store.base import SCHEMA_VERSION, MemoryStore, SchemaState, SchemaWrite
from ..tiers.analysis import embedded_text

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
    """Rebuild the index and re-embed everything with `embedder`; returns how many of each kind were embedded by
    this call. Each batch's vectors and how far the work got are written in one transaction, so a run that is
    killed resumes where it stopped when called again: every vector is embedded once."""
    state = store.schema()
    if state.version is not None and state.version > SCHEMA_VERSION:
        raise SchemaMismatch(f"{store.location} holds a newer amem-graph schema ({state.version}): upgrade amem-graph")
    kind, after = _resumed(state, canonical_model(embedder.model_name))
    if not after and kind == KINDS[0]:
        # Under way before the marker names the new model: a kill in between is found by the next open.
        store.write_embeddings(kind, [], reached=f"{kind}:")
        # not schema.ensure: its check refuses the old model's marker, which is what this replaces
        store.schema(create=SchemaWrite(embedder.model_name, embedder.dimension, state.version))
    store.dimension = embedder.dimension
    counts: dict[str, int] = {}
    for current in KINDS[KINDS.index(kind):]:
        start, done = (after if current == kind else ""), 0
        while rows := store.embedding_texts(current, start, BATCH):
            vectors = _vectors(embedder, current, rows)
            checked = [(row["id"], validation.vector(v, embedder.dimension)) for row, v in zip(rows, vectors, strict=True)]
            start, done = rows[-1]["id"], done + len(rows)
            store.write_embeddings(current, checked, reached=f"{current}:{start}")
            if on_batch:
                on_batch(current, len(rows))
        counts[current] = done
    store.write_embeddings(KINDS[-1], [], reached=None)
    return counts


def _resumed(state: SchemaState, model: str) -> tuple[str, str]:
    """Where to start: after the last batch written, when a consolidation to `model` is under way; else at the
    first note."""
    if state.consolidating and state.model == model:
        kind, _, after = state.consolidating.partition(":")
        if kind in KINDS:
            return kind, after
    return KINDS[0], ""
