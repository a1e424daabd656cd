"""`bench load` on both stores, short: concurrent writers and readers lose, duplicate and break nothing, and the
verification that says so finds a write that is missing (timings are never asserted)."""

from __future__ import annotations

import pytest

from amem_graph import AgenticMemory
from amem_graph.bench import load

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
