"""The embedded store's graph and its folder: transactions are all or nothing, a committed one survives a
reopen (snapshot and journal), damage is a clear error that changes nothing, and one process owns a
folder at a time."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from amem_graph.store.embedded.graph import ConstraintViolation, PropertyGraph
from amem_graph.store.embedded.persist import CorruptStore, Folder

pytestmark = pytest.mark.embedded  # the embedded store only: no Neo4j
WHEN = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def fill(graph: PropertyGraph) -> None:
    with graph.transaction():
        a = graph.create_node(["Note"], {"id": "a", "tenant": "t", "source": "", "content_hash": "1",
                                         "embedding": np.ones(4, dtype=np.float32), "created_at": WHEN})
        b = graph.create_node(["Note"], {"id": "b", "tenant": "t", "source": "", "content_hash": "2",
                                         "tags": ["x", "y"]})
        graph.create_rel("RELATES_TO", a, b, {"reason": "both", "confidence": 0.5})


def snapshot_of(graph: PropertyGraph) -> tuple:
    return (
        {k: (sorted(n.labels), {p: (v.tolist() if isinstance(v, np.ndarray) else v) for p, v in n.props.items()})
         for k, n in graph.nodes.items()},
        {k: (r.type, r.start, r.end, r.props) for k, r in graph.rels.items()},
    )


def test_a_failed_transaction_leaves_the_graph_as_it_was() -> None:
    graph = PropertyGraph()
    fill(graph)
    before = snapshot_of(graph)
    a = graph.unique("Note", id="a")
    with pytest.raises(ConstraintViolation):
        with graph.transaction():
            graph.set(a, context="changed", tags=["z"])
            graph.delete_node(graph.unique("Note", id="b"))
            graph.create_node(["Note"], {"id": "c", "tenant": "t", "source": "", "content_hash": "3"})
            graph.create_node(["Note"], {"id": "a", "tenant": "t", "source": "", "content_hash": "4"})  # taken
    assert snapshot_of(graph) == before
    assert graph.unique("Note", id="c") is None and graph.unique("Note", id="b") is not None
    assert [r.type for r in graph.relationships(a)] == ["RELATES_TO"]
    assert {n.props["id"] for n in graph.labelled("Note", tenant="t")} == {"a", "b"}


def test_committed_work_survives_reopening_from_journal_and_snapshot(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    graph = folder.open()
    fill(graph)
    expected = snapshot_of(graph)
    folder.close()
    again = Folder(tmp_path)
    reopened = again.open()  # from the journal alone
    assert snapshot_of(reopened) == expected
    assert reopened.unique("Note", id="a").props["created_at"] == WHEN
    again.save(reopened)
    with reopened.transaction():
        reopened.set(reopened.unique("Note", id="b"), context="after the snapshot")
    expected = snapshot_of(reopened)
    again.close()
    third = Folder(tmp_path)
    assert snapshot_of(third.open()) == expected  # snapshot, then the journal after it
    third.close()


def test_damage_is_a_clear_error_and_a_torn_last_line_is_dropped(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    fill(folder.open())
    folder.close()
    journal = tmp_path / "journal.jsonl"
    good = journal.read_text()
    journal.write_text(good + '{"tx": 2, "sha2')  # a crash while appending the next transaction
    torn = Folder(tmp_path)
    assert len(torn.open().nodes) == 2
    torn.close()
    journal.write_text(good.replace('"reason', '"REASON'))  # damaged in the middle: checksum
    with pytest.raises(CorruptStore, match="line 1"):
        Folder(tmp_path).open()
    journal.write_text(good)
    saver = Folder(tmp_path)
    saver.save(saver.open())
    saver.close()
    snapshot = tmp_path / "graph.snapshot"
    data = bytearray(snapshot.read_bytes())
    data[len(data) // 2] ^= 0xFF
    snapshot.write_bytes(bytes(data))
    with pytest.raises(CorruptStore, match="damaged"):
        Folder(tmp_path).open()
    assert snapshot.read_bytes() == bytes(data)  # nothing was reset


def test_one_process_owns_a_folder(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    folder.open()
    code = (
        "import sys; from amem_graph.store.embedded.persist import Folder\n"
        "from amem_graph.errors import StoreUnavailable\n"
        "try:\n    Folder(sys.argv[1]).open()\nexcept StoreUnavailable as e:\n    print(e); sys.exit(3)\n"
    )
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 3 and "is open in process" in run.stdout
    folder.close()
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_store_writes_a_snapshot_only_after_changes(tmp_path: Path) -> None:
    from amem_graph.maintenance import schema
    from amem_graph.store.embedded.store import EmbeddedStore

    store = EmbeddedStore(tmp_path)
    schema.ensure(store, "sentence-transformers/all-MiniLM-L6-v2", 384)
    store.close()
    snapshot = tmp_path / "graph.snapshot"
    written = snapshot.stat().st_mtime_ns
    reader = EmbeddedStore(tmp_path)
    assert reader.stats().schema["embedding_dimension"] == 384
    reader.close()
    assert snapshot.stat().st_mtime_ns == written  # reading changed nothing, so nothing was rewritten


def test_a_torn_line_is_cut_so_later_commits_stay_readable(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    fill(folder.open())
    folder.close()
    journal = tmp_path / "journal.jsonl"
    journal.write_text(journal.read_text() + '{"tx": 2, "sha2')  # a crash while appending
    again = Folder(tmp_path)
    graph = again.open()
    with graph.transaction():
        graph.set(graph.unique("Note", id="a"), context="after the crash")
    again.close()  # no snapshot: the journal alone must hold it
    third = Folder(tmp_path)
    assert third.open().unique("Note", id="a").props["context"] == "after the crash"
    third.close()


def test_a_transaction_that_cannot_be_journaled_is_undone(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    graph = folder.open()
    fill(graph)
    a = graph.unique("Note", id="a")
    with pytest.raises(TypeError):
        with graph.transaction():
            graph.set(a, context="never stored", importance=object())  # JSON cannot hold it
    assert "context" not in a.props and "importance" not in a.props
    with graph.transaction():
        graph.set(a, context="stored")
    folder.close()
    reopened = Folder(tmp_path)
    assert reopened.open().unique("Note", id="a").props["context"] == "stored"
    reopened.close()


def test_consolidation_re_embeds_the_embedded_store(tmp_path: Path, settings) -> None:
    from dataclasses import replace

    from amem_graph import AgenticMemory
    from amem_graph.errors import SchemaMismatch
    from amem_graph.maintenance.consolidate import consolidate
    from amem_graph.store.base import SCHEMA_VERSION, SchemaWrite
    from amem_graph.store.embedded.store import EmbeddedStore

    store = EmbeddedStore(tmp_path)
    local = replace(settings, store="embedded")
    with AgenticMemory(local, tenant="t", store=store) as memory:
        note = memory.add("Ines restores old bicycles in her garage.")
        memory.add_turn("I restore old bicycles.", "Nice hobby!", session_id="s1")
        before = memory.get(note.id, with_embedding=True).embedding
        store.schema(create=SchemaWrite("another/model", 8, SCHEMA_VERSION))  # as a different model would have left it
        with pytest.raises(SchemaMismatch):
            AgenticMemory(local, tenant="t", store=store, init_schema=False)
        counts = consolidate(store, memory.embedder)
        assert counts["notes"] == 1 and counts["pages"] == 1
        again = AgenticMemory(local, tenant="t", store=store)
        after = again.get(note.id, with_embedding=True).embedding
        assert after is not None and before is not None and np.dot(after, before) > 0.999
        assert again.search("bicycles", k=1)[0].note.id == note.id
    store.close()
