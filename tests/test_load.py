"""`bench load` on both stores, short: concurrent writers and readers lose, duplicate and break nothing, and the
verification that says so finds a write that is missing (timings are never asserted)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.bench import load
from amem_graph.embedding import Embedder, catalog

STORES = ("neo4j", "embedded")


@pytest.mark.slow
def test_concurrent_writers_and_readers_lose_nothing(memory: AgenticMemory) -> None:
    result = load.run(memory, writers=3, readers=3, tenants=2, seconds=8, max_ops=8)
    assert result["errors"] == {} and result["sound"], result
    assert result["lost"] == 0 and result["duplicated"] == 0 and result["invariant_violations"] == {}
    assert result["acknowledged"]["notes"] > load.IDLE_ROUNDS // 2 and result["mismatched_reads"] == 0
    assert {"add", "search"} <= set(result["latency_ms"]) and set(result["latency_ms"]["add"]) == {"p50", "p95", "p99", "n"}
    assert result["held"]["notes"] >= result["acknowledged"]["notes"]


@pytest.mark.slow
def test_retention_and_restores_beside_writers_and_readers_lose_nothing(memory: AgenticMemory) -> None:
    result = load.run(memory, writers=3, readers=2, tenants=2, seconds=10, max_ops=12, maintenance=True)
    assert result["errors"] == {} and result["sound"], result
    assert result["lost"] == 0 and result["wrong_content"] == 0 and result["invariant_violations"] == {}
    done = result["maintenance"]
    assert done["retention_runs"] >= 1 and done["archived"] >= 1, done
    assert result["held"]["notes"] >= result["acknowledged"]["notes"] >= result["archived_at_end"]


def test_the_verification_finds_a_missing_write(memory: AgenticMemory) -> None:
    note = memory.add("Alice keeps bees on the roof.")
    ledger = load._Ledger()
    ledger.notes = {note.id: (memory.tenant, note.content), "never-written": (memory.tenant, "Bob paints boats.")}
    ledger.updates[note.id] = 1  # an update acknowledged that the note's version does not show
    verdict = load._verify(memory, [memory.tenant], [ledger])
    assert verdict["lost"] == 1 and verdict["lost_ids"] == ["never-written"] and verdict["under_versioned"] == 1
    assert not verdict["sound"] and verdict["invariant_violations"] == {}


@pytest.mark.slow
@pytest.mark.embedded
def test_a_consolidation_halfway_through_the_load_loses_nothing_and_leaves_no_old_vector(
    base_settings: Settings, tmp_path: Path, model_files: Callable[[catalog.ModelSpec, Path], None],
) -> None:
    """The embedded store is closed for the move (the threads wait), then opened with the new model; the
    threads go on with it. Every note ends with the new model's vector."""
    model_files(catalog.E5_SMALL, base_settings.home)
    settings = replace(base_settings, store="embedded", data_dir=tmp_path / "db", neo4j_uri=None,
                       neo4j_password=None, embedding_model=catalog.MINILM.name)
    with AgenticMemory(settings) as memory:
        result = load.run(memory, writers=3, readers=2, tenants=2, seconds=16, max_ops=40, maintenance=True,
                          consolidate_to=catalog.E5_SMALL.name)
    assert result["errors"] == {} and result["sound"], result
    moved = result["consolidation"]
    assert moved["to"] == catalog.E5_SMALL.name and moved["embedded_again"]["notes"] >= load.IDLE_ROUNDS // 2, moved
    assert result["old_model_vectors"] == 0 and result["maintenance"]["migrated"] >= moved["embedded_again"]["notes"]


def test_the_verification_finds_a_vector_of_the_old_model(
    memory: AgenticMemory, base_settings: Settings, model_files: Callable[[catalog.ModelSpec, Path], None],
) -> None:
    model_files(catalog.E5_SMALL, base_settings.home)
    memory.add_many(["Alice keeps bees on the roof.", "Bob paints boats in the harbour."])
    _, records = memory.admin.export()
    notes = [r["props"] for r in records if r["kind"] == "node" and "Note" in r["labels"]]
    other = Embedder.of(replace(base_settings, embedding_model=catalog.E5_SMALL.name))
    moved = load._Stale(other, memory.embedder)  # the notes' vectors are the model moved from
    moved.count(notes)
    kept = load._Stale(memory.embedder, other)
    kept.count(notes)
    assert (moved.found, kept.found) == (2, 0)
