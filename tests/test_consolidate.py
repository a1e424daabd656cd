"""Moving a database to another embedding model (`amem-graph consolidate`): a run killed midway leaves a database
that refuses to open until the consolidation ends, and run again it resumes where it stopped, so every note is
embedded once with the new model and none is left with the old one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.texts import sentences
from amem_graph.consolidate import BATCH, consolidate
from amem_graph.embedding import Embedder, catalog, composite_text
from amem_graph.errors import SchemaMismatch
from amem_graph.store.embedded.store import EmbeddedStore

pytestmark = pytest.mark.slow

NOTES = 2 * BATCH + 100
# The consolidation in a process of its own, saying each batch it committed, then pausing: the test kills it there.
KILLED = """
import time
from amem_graph import admin
from amem_graph.embedding import Embedder
from amem_graph.settings import Settings
settings = Settings.from_env()
embedder = Embedder.of(settings)
embedder.embed(["warm"])
admin.consolidate(settings, embedder, on_batch=lambda kind, n: (print(kind, n, flush=True), time.sleep(30)))
"""


class Counting(Embedder):
    """The new model, counting what it embeds."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner.model_name, inner.batch_size, backend=inner.requested, home=inner.home)
        self.texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return super().embed(texts)


@pytest.mark.embedded
def test_a_consolidation_killed_midway_resumes_and_embeds_every_note_once(
    base_settings: Settings, tmp_path: Path, model_files: Callable[[catalog.ModelSpec, Path], None],
) -> None:
    model_files(catalog.E5_SMALL, base_settings.home)  # the new model: the subprocess fetches it there
    old = replace(base_settings, store="embedded", data_dir=tmp_path / "db", neo4j_uri=None, neo4j_password=None,
                  embedding_model=catalog.MINILM.name)
    with AgenticMemory(old, tenant="t") as memory:
        memory.add_many(sentences(NOTES), tenant="t")
        ids = sorted(note.id for note in memory.list(limit=NOTES + 1))
    assert len(ids) == NOTES
    new_model = catalog.E5_SMALL.name
    env = {**os.environ, "AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(tmp_path / "db"),
           "AMEM_EMBEDDING_MODEL": new_model, "AMEM_HOME": str(base_settings.home)}
    env.pop("NEO4J_URI", None)
    process = subprocess.Popen([sys.executable, "-c", KILLED], env=env, stdout=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline() if process.stdout else ""
        assert first.split() == ["notes", str(BATCH)], first
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)

    new = replace(old, embedding_model=new_model)
    store = EmbeddedStore(tmp_path / "db")
    try:
        state = store.schema_state()
        assert state.model == new_model and state.consolidating == f"notes:{ids[BATCH - 1]}"
        with pytest.raises(SchemaMismatch, match="consolidation .* is under way"):
            AgenticMemory(new, tenant="t", store=store)
        embedder = Counting(Embedder.of(new))
        counts = consolidate(store, embedder)
        assert counts["notes"] == NOTES - BATCH  # resumed after the batch the killed run committed
        assert store.schema_state().consolidating is None
        with AgenticMemory(new, tenant="t", store=store) as memory:
            notes = [memory.get(i, with_embedding=True) for i in ids]
            texts = [composite_text(n.content, n.context, n.keywords, n.tags) for n in notes]
            assert sorted(embedder.texts) == sorted(texts[BATCH:])  # the rest, each once
            expected = Embedder.of(new).embed(texts)
            stored = np.asarray([n.embedding for n in notes], dtype=np.float32)
            assert (stored * expected).sum(axis=1).min() > 0.999  # every note the new model's, the first batch too
            assert memory.search(notes[-1].content, k=1)[0].note.id == notes[-1].id
    finally:
        store.close()


class Interrupted(Exception):
    """Stands for a kill between two batches: each batch is committed before the next one starts."""


def test_an_interrupted_consolidation_of_neo4j_resumes_after_its_last_batch(neo4j_settings: Settings) -> None:
    """The same on Neo4j (its shared test database, with the model it has: a consolidation reads and writes the
    whole database): the marker says how far the interrupted run got, the database refuses to open, and the
    next run does only the rest."""
    from amem_graph.store import open_store

    with AgenticMemory(neo4j_settings, tenant=f"consolidate-{os.getpid()}") as memory:
        memory.add_many(sentences(BATCH + 10))
        held = memory.stats().labels.get("Note", 0)
    store = open_store(neo4j_settings)
    embedder = Embedder.of(neo4j_settings)

    def stop(kind: str, _: int) -> None:
        raise Interrupted(kind)

    try:
        with pytest.raises(Interrupted):
            consolidate(store, embedder, on_batch=stop)
        assert (store.schema_state().consolidating or "").startswith("notes:")
        with pytest.raises(SchemaMismatch, match="under way"):
            AgenticMemory(neo4j_settings, tenant="t", store=store)
        counts = consolidate(store, embedder)
        assert counts["notes"] == held - BATCH
        assert store.schema_state().consolidating is None
    finally:
        if store.schema_state().consolidating:  # the shared database opens for the other tests, whatever happened
            consolidate(store, embedder)
        store.close()
