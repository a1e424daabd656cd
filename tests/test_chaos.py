"""`bench chaos`, short: SIGKILLs of the embedded store's process and of a private Neo4j server in the middle of
writes lose no acknowledged write and leave no partial batch; the plan then completes with every note once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from amem_graph import AgenticMemory, NoteInput, Settings
from amem_graph.bench import chaos
from amem_graph.embedding import Embedder, catalog
from amem_graph.maintenance.consolidate import consolidate


def _assert_sound(result: dict) -> None:
    assert result["sound"], result
    assert result["lost"] == 0 and result["partial_batches"] == 0 and result["open_failures"] == 0
    assert result["invariant_violations"] == [] and result["final"]["duplicated"] == 0
    assert result["final"]["missing_after_rerun"] == 0 and result["final"]["planned_notes"] > 0
    assert sum(r["acknowledged_steps"] for r in result["rounds"]) > 0  # the kills came while it wrote


@pytest.mark.slow
@pytest.mark.embedded
def test_killing_the_embedded_store_mid_write_loses_nothing(base_settings: Settings, tmp_path: Path) -> None:
    result = chaos.run(base_settings, "embedded", kills=4, max_delay=1.5, workdir=tmp_path)
    _assert_sound(result)
    assert result["maintenance"]["archived"] > 0, (result["steps_planned"], result["maintenance"])  # retention ran


@pytest.mark.slow
@pytest.mark.embedded
def test_kills_while_the_llm_hangs_and_resets_lose_nothing(base_settings: Settings, tmp_path: Path) -> None:
    result = chaos.run(base_settings, "embedded", kills=3, max_delay=2.0, llm_faults=True, workdir=tmp_path)
    _assert_sound(result)
    served = result["llm_replies"]
    assert served["answer"] > 0 and served["hang"] + served["reset"] + served["503"] > 0, served
    assert result["final"]["analyses"].get("llm", 0) > 0, result["final"]["analyses"]


@pytest.mark.slow
def test_killing_neo4j_mid_write_loses_nothing(base_settings: Settings, tmp_path: Path) -> None:
    _assert_sound(chaos.run(base_settings, "neo4j", kills=1, max_delay=4.0, workdir=tmp_path))


@pytest.mark.embedded
def test_the_verification_finds_a_partial_batch(base_settings: Settings, tmp_path: Path) -> None:
    env = {"AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(tmp_path / "embedded"), "HF_HUB_OFFLINE": "1"}
    with AgenticMemory(Settings.from_env(env), tenant="chaos-t") as memory:
        texts = chaos.sentences(chaos.BATCH, seed=1000)
        memory.add_many([NoteInput(content=t, source=s) for t, s in zip(texts, chaos.planned_sources(0, "embedded"),
                                                                           strict=True)][:5])
    verdict = chaos._verify(env, "chaos-t", "embedded", {}, {"page-never-written"}, 0)
    assert verdict["partial_batches"] == 1 and verdict["lost"] == 1 and not verdict["sound"]


@pytest.mark.slow
@pytest.mark.embedded
def test_kills_with_consolidations_in_the_plan_lose_nothing(
    base_settings: Settings, tmp_path: Path, model_files: Callable[[catalog.ModelSpec, Path], None],
) -> None:
    """The plan moves the database to another model and back; a child opens it with the model it is marked
    with, and first finishes a consolidation a kill stopped."""
    model_files(catalog.E5_SMALL, base_settings.home)
    result = chaos.run(base_settings, "embedded", kills=2, max_delay=1.5, workdir=tmp_path,
                       consolidate_to=catalog.E5_SMALL.name)
    _assert_sound(result)
    assert result["maintenance"]["embedded_again"] > 0, result["maintenance"]


class Stop(Exception):
    """Stands for a kill between two batches of a consolidation."""


@pytest.mark.embedded
def test_the_verification_reads_a_database_a_killed_consolidation_left(base_settings: Settings, tmp_path: Path) -> None:
    """No memory opens a database whose consolidation stopped midway; the verification reads it all the same."""
    env = {"AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(tmp_path / "embedded"), "HF_HUB_OFFLINE": "1"}
    settings = Settings.from_env(env)
    with AgenticMemory(settings, tenant="chaos-t") as memory:
        ids = memory.add_many([NoteInput(content=t, source=s) for t, s in zip(
            chaos.sentences(chaos.BATCH, seed=1000), chaos.planned_sources(0, "embedded"), strict=True)])

        def stop(kind: str, _: int) -> None:
            raise Stop(kind)

        with pytest.raises(Stop):
            consolidate(memory._store, Embedder.of(settings), on_batch=stop)
    verdict = chaos._verify(env, "chaos-t", "embedded", dict.fromkeys(ids, 0), set(), 0)
    assert verdict["sound"] and verdict["lost"] == 0 and "open_error" not in verdict, verdict
