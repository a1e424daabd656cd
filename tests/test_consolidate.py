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
from amem_graph.embedding import Embedder, catalog, composite_text
from amem_graph.errors import SchemaMismatch
from amem_graph.maintenance.consolidate import BATCH, consolidate
from amem_graph.store.embedded.store import EmbeddedStore

pytestmark = pytest.mark.slow

STORES = ("neo4j", "embedded")
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
        state = store.schema()
        assert state.model == new_model and state.consolidating == f"notes:{ids[BATCH - 1]}"
        with pytest.raises(SchemaMismatch, match="consolidation .* is under way"):
            AgenticMemory(new, tenant="t", store=store)
        embedder = Counting(Embedder.of(new))
        counts = consolidate(store, embedder)
        assert counts["notes"] == NOTES - BATCH  # resumed after the batch the killed run committed
        assert store.schema().consolidating is None
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

    tenant = f"consolidate-{os.getpid()}"
    with AgenticMemory(neo4j_settings, tenant=tenant) as memory:
        memory.add_many(sentences(BATCH + 10))
        held = memory.stats().labels.get("Note", 0)
    store = open_store(neo4j_settings)
    embedder = Embedder.of(neo4j_settings)

    def stop(kind: str, _: int) -> None:
        raise Interrupted(kind)

    try:
        with pytest.raises(Interrupted):
            consolidate(store, embedder, on_batch=stop)
        assert (store.schema().consolidating or "").startswith("notes:")
        with pytest.raises(SchemaMismatch, match="under way"):
            AgenticMemory(neo4j_settings, tenant="t", store=store)
        counts = consolidate(store, embedder)
        assert counts["notes"] == held - BATCH
        assert store.schema().consolidating is None
    finally:
        if store.schema().consolidating:  # the shared database opens for the other tests, whatever happened
            consolidate(store, embedder)
        store.close()
        with AgenticMemory(neo4j_settings, tenant=tenant) as memory:
            memory.admin.delete_tenant(tenant)


def test_a_memory_open_while_a_consolidation_runs_writes_nothing_and_searches_by_keyword(memory: AgenticMemory) -> None:
    """A consolidation re-embeds what was written before it began. A memory opened before it would write vectors
    of the model it opened with, behind the consolidation's cursor: it writes nothing (a typed error) until the
    consolidation ends. Its searches meanwhile rank by keyword, entities and the graph, since half the vectors
    are the new model's. Here the consolidation keeps the model (the Neo4j test database is shared), so the
    memory writes again once it ends. The adapters' searches by vector are refused meanwhile (typed): they
    promise similarity, and vectors of two models have none; their reads by id or key go on."""
    from amem_graph.integrations.langchain import AmemStore, AmemVectorStore

    kept = memory.add("The lighthouse keeper painted the door blue.")
    documents, items = AmemVectorStore(memory), AmemStore(memory)
    documents.add_texts(["The lighthouse stands on the northern cape."], ids=["cape"])
    items.put((memory.tenant,), "door", {"text": "The door is blue."})
    store = memory._store
    seen: dict[str, object] = {}

    def during(kind: str, _: int) -> None:
        if seen:
            return
        with pytest.raises(SchemaMismatch, match="being moved to the embedding model"):
            memory.add("A note written while the vectors move.")
        with pytest.raises(SchemaMismatch, match="being moved"):
            memory.add_turn("I moved house.", "Congratulations!", session_id="s")
        seen["notes"] = [n.content for n in memory.list()]
        seen["hits"] = [h.note.id for h in memory.search("lighthouse keeper door", k=3)]
        seen["context"] = memory.context_for("lighthouse keeper").notes
        for vector_search in (lambda: documents.similarity_search("lighthouse", k=1),
                              lambda: items.search((memory.tenant,), query="door colour", limit=1)):
            with pytest.raises(SchemaMismatch, match="a search by vector waits until it is done"):
                vector_search()
        seen["by id"] = [d.page_content for d in documents.get_by_ids(["cape"])]
        seen["by key"] = [i.key for i in items.search((memory.tenant,), limit=3)]

    embedder = Embedder.of(memory.settings)
    try:
        consolidate(store, embedder, on_batch=during)
    finally:
        if store.schema().consolidating:  # the store opens for the other tests, whatever happened
            consolidate(store, embedder)
    assert sorted(seen["notes"]) == sorted([kept.content, "The door is blue.",
                                            "The lighthouse stands on the northern cape."])
    assert seen["hits"][0] == kept.id  # by its words: the vector channel is off
    assert seen["context"]
    assert seen["by id"] == ["The lighthouse stands on the northern cape."] and seen["by key"] == ["door"]
    assert documents.similarity_search("northern cape", k=1)[0].page_content.startswith("The lighthouse stands")
    assert memory.add("Written after the consolidation ended.").content.startswith("Written")


@pytest.mark.embedded
def test_a_memory_of_the_old_model_writes_nothing_after_a_consolidation_and_one_of_the_new_model_does(
    base_settings: Settings, tmp_path: Path, model_files: Callable[[catalog.ModelSpec, Path], None],
) -> None:
    """After a consolidation to another model, a memory still open with the old one refuses writes (its vectors
    are not comparable) and searches by keyword; a memory opened with the new model writes and searches by
    meaning."""
    model_files(catalog.E5_SMALL, base_settings.home)
    old = replace(base_settings, store="embedded", data_dir=tmp_path / "db", neo4j_uri=None, neo4j_password=None,
                  embedding_model=catalog.MINILM.name)
    new = replace(old, embedding_model=catalog.E5_SMALL.name)
    store = EmbeddedStore(tmp_path / "db")
    try:
        with AgenticMemory(old, tenant="t", store=store) as stale:
            kept = stale.add("The lighthouse keeper painted the door blue.")
            consolidate(store, Embedder.of(new))
            with pytest.raises(SchemaMismatch, match="was moved to the embedding model .*e5-small-v2"):
                stale.add("Written with the old model.")
            assert [h.note.id for h in stale.search("lighthouse keeper door", k=1)] == [kept.id]
            assert [n.id for n in stale.list()] == [kept.id]
        with AgenticMemory(new, tenant="t", store=store) as fresh:
            added = fresh.add("My sister adopted a grey kitten.")
            assert fresh.search("a small cat joined the family", k=1, mode="vector")[0].note.id == added.id
    finally:
        store.close()
