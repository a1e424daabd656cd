"""Retention a user sets: a policy archives notes (out of search, context and listings, kept with their links and
history), a dry run names exactly what a run archives, an interrupted run loses nothing, restore brings a note
back whole. The erasure of an archived note is in test_security.py."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from datetime import timedelta
from typing import Any

import pytest
from mcp import Client
from typer.testing import CliRunner

from amem_graph import AgenticMemory
from amem_graph.cli import app
from amem_graph.core import validation
from amem_graph.errors import InvalidInput
from amem_graph.integrations.mcp import memory_server
from amem_graph.models import Note, RetentionPolicy
from amem_graph.settings import Settings

STORES = ("neo4j", "embedded")

TEXTS = [f"Note {i}: Gina talked about the {thing}." for i, thing in enumerate(
    ("bakery", "dance studio", "clothing store", "jackets", "Door Dash", "coffee shop"))]


def added(memory: AgenticMemory) -> list[Note]:
    """Six notes; the first three linked to each other as well, so they are warmer (more valid links)."""
    notes = [memory.add(text) for text in TEXTS]
    for a, b in ((0, 1), (1, 2), (0, 2)):
        memory.link(notes[a].id, notes[b].id, "RELATES_TO", reason="the same afternoon")
    return [memory.get(note.id) for note in notes]


def searchable(memory: AgenticMemory) -> set[str]:
    return {hit.note.id for hit in memory.search("Gina talked about", k=50, hops=0)}


def test_a_dry_run_names_what_the_run_archives(memory: AgenticMemory) -> None:
    notes = added(memory)
    now = validation.now()
    links = {n.id: sum(1 for link in n.links if link.invalid_at is None) for n in notes}

    planned = memory.retention.plan(RetentionPolicy(max_notes=4), now=now)
    assert len(planned) == 2 and all(a.reason == "max_notes" for a in planned)
    coldest = {a.note_id for a in planned}  # never recalled, so the fewest links make the coldest
    assert max(links[i] for i in coldest) <= min(links[n.id] for n in notes if n.id not in coldest)
    assert searchable(memory) == {n.id for n in notes}  # a dry run archives nothing

    ran = memory.retention.run(RetentionPolicy(max_notes=4), now=now, batch=1)
    assert ran == planned
    gone = {a.note_id for a in ran}
    assert searchable(memory) == {n.id for n in notes} - gone
    assert {n.id for n in memory.list()} == {n.id for n in notes} - gone
    assert {n.id for n in memory.list(include_archived=True)} == {n.id for n in notes}
    assert gone <= {hit.note.id for hit in memory.search("Gina talked about", k=50, include_archived=True)}
    assert all(memory.get(i).archived_at is not None for i in gone)  # by id: named, so returned, marked
    assert not any(i in memory.context("Gina talked about", k=10) for i in gone)
    assert memory.retention.plan(RetentionPolicy(max_notes=4), now=now) == []  # it holds now

    # Unused for a day (a week on): every note, whatever its links; a heat above every note's: the rest.
    later = now + timedelta(days=7)
    assert {a.note_id for a in memory.retention.plan(RetentionPolicy(unused_days=1), now=later)} == (
        {n.id for n in notes} - gone)
    assert all(a.reason == "unused" for a in memory.retention.plan(RetentionPolicy(unused_days=1), now=later))
    cold = memory.retention.plan(RetentionPolicy(min_heat=100.0), now=now)
    assert {a.note_id for a in cold} == {n.id for n in notes} - gone and all(a.reason == "cold" for a in cold)


def test_an_interrupted_run_loses_nothing_and_running_again_finishes_it(memory: AgenticMemory) -> None:
    notes = added(memory)
    now = validation.now()
    policy = RetentionPolicy(max_notes=1)
    planned = memory.retention.plan(policy, now=now)
    assert len(planned) == 5

    def interrupt(_: int) -> None:
        raise KeyboardInterrupt  # as a user's Ctrl-C after the first batch committed

    with pytest.raises(KeyboardInterrupt):
        memory.retention.run(policy, now=now, batch=2, on_batch=interrupt)
    first = {n.id for n in memory.list(include_archived=True) if n.archived_at is not None}
    assert first == {a.note_id for a in planned[:2]}  # the first batch whole, nothing of the next
    rest = memory.retention.run(policy, now=now, batch=2)
    assert {a.note_id for a in rest} == {a.note_id for a in planned[2:]}
    every = memory.list(include_archived=True, limit=100)
    assert {n.id for n in every} == {n.id for n in notes}  # no note lost
    assert len(memory.list()) == 1 and memory.admin.check().sound


def test_restore_brings_back_the_note_with_its_links_and_history(memory: AgenticMemory) -> None:
    notes = added(memory)
    memory.update(notes[0].id, tags=["afternoon"])
    before, history = memory.get(notes[0].id), memory.history(notes[0].id)
    assert memory.retention.archive([notes[0].id, notes[0].id]) == [notes[0].id]  # an id twice: one change
    assert memory.retention.archive([notes[0].id]) == []  # archived already: left as it is
    assert len(memory.get(notes[0].id).archived_periods) == 1
    assert notes[0].id not in searchable(memory)
    assert memory.retention.restore([notes[0].id]) == [notes[0].id]
    assert memory.retention.restore([notes[0].id]) == []
    after = memory.get(notes[0].id)
    assert after.archived_at is None and len(after.archived_periods) == 2
    assert (after.content, after.tags, after.version, after.links) == (before.content, before.tags, before.version,
                                                                      before.links)
    assert memory.history(notes[0].id).versions == history.versions
    assert notes[0].id in searchable(memory)
    # As of the archived moment, the memory had it archived.
    at = after.archived_periods[0]
    assert memory.get(notes[0].id, as_of=at).archived_at == at
    assert notes[0].id not in {h.note.id for h in memory.search("Gina talked about", k=50, hops=0, as_of=at)}


def test_a_policy_is_kept_per_tenant_and_bad_ones_are_refused(memory: AgenticMemory, open_memory: Any) -> None:
    added(memory)
    assert memory.retention.policy() is None
    with pytest.raises(InvalidInput, match="no retention policy"):
        memory.retention.plan()
    memory.retention.set_policy(RetentionPolicy(max_notes=3, unused_days=30))
    assert memory.retention.policy() == RetentionPolicy(max_notes=3, unused_days=30)
    assert len(memory.retention.plan()) == 3
    with open_memory(f"{memory.tenant}-other") as other:
        try:
            assert other.retention.policy() is None
        finally:
            other.admin.delete_tenant()
    for bad in (RetentionPolicy(max_notes=0), RetentionPolicy(max_notes=2.5), RetentionPolicy(unused_days=0),  # type: ignore[arg-type]
                RetentionPolicy(min_heat=-1.0), RetentionPolicy(min_heat=float("nan")), RetentionPolicy(max_notes=True),
                RetentionPolicy(unused_days=1e9), RetentionPolicy(max_notes=2**63),  # past what a store carries
                RetentionPolicy(min_heat=10**400)):
        with pytest.raises(InvalidInput):
            memory.retention.set_policy(bad)
        with pytest.raises(InvalidInput):
            memory.retention.run(bad)
    with pytest.raises(InvalidInput, match="no rule"):
        memory.retention.plan(RetentionPolicy())
    assert memory.retention.policy() == RetentionPolicy(max_notes=3, unused_days=30)  # unchanged
    assert len(memory.list()) == 6
    memory.retention.set_policy(RetentionPolicy())
    assert memory.retention.policy() is None
    # The policy moves with an export.
    memory.retention.set_policy(RetentionPolicy(min_heat=0.5))
    _, records = memory.admin.export()
    assert any("Retention" in r.get("labels", ()) for r in records)


def test_the_cli_and_mcp_plan_run_and_restore(memory: AgenticMemory, cli_env: dict[str, str]) -> None:
    notes = added(memory)

    def cli(*args: str) -> Any:
        result = CliRunner().invoke(app, ["retention", *args, "-t", memory.tenant, "--json"], env=cli_env,
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert cli("policy") is None
    assert cli("policy", "--max-notes", "5") == {"max_notes": 5, "unused_days": None, "min_heat": None}
    planned = cli("plan")
    assert len(planned) == 1 and planned[0]["reason"] == "max_notes"
    assert [a["note_id"] for a in cli("run")] == [planned[0]["note_id"]]
    assert cli("restore", planned[0]["note_id"]) == {"restored": [planned[0]["note_id"]]}
    assert cli("archive", notes[5].id[:8]) == {"archived": [notes[5].id]}
    listed = CliRunner().invoke(app, ["list", "-t", memory.tenant, "--json", "--archived"], env=cli_env)
    assert notes[5].id in listed.stdout
    assert cli("policy", "--clear") is None
    refused = CliRunner().invoke(app, ["retention", "policy", "--max-notes", "0", "-t", memory.tenant], env=cli_env)
    assert refused.exit_code != 0

    async def mcp() -> None:
        async with Client(memory_server(memory)) as client:
            async def call(tool: str, **arguments: Any) -> dict[str, Any]:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, result.content)
                return result.structured_content or {}

            plan = (await call("retention_plan", max_notes=3))["archive"]
            assert len(plan) == 2  # notes[5] is archived already
            ran = (await call("retention_run", max_notes=3))["archived"]
            ids = [a["note_id"] for a in ran]
            assert ids == [a["note_id"] for a in plan]
            assert (await call("restore_memory", ids=ids))["restored"] == ids
            assert (await client.call_tool("retention_run", {})).is_error  # no policy set, none given

    asyncio.run(mcp())


KILLED_RUN = """
import os, signal, sys
from amem_graph import AgenticMemory, RetentionPolicy
with AgenticMemory(tenant=sys.argv[1]) as memory:
    if sys.argv[2] == "fill":
        memory.add_many([f"Note {i}: Gina talked about the weather." for i in range(6)])
    else:  # killed (SIGKILL, no clean-up) as soon as the first batch has committed
        memory.retention.run(RetentionPolicy(max_notes=1), batch=2,
                             on_batch=lambda n: os.kill(os.getpid(), signal.SIGKILL))
"""


def test_a_killed_run_loses_nothing(settings: Settings, store_kind: str, cli_env: dict[str, str]) -> None:
    """A process killed in the middle of a run: the batches it committed stay archived, no note is lost, and the
    next run archives the rest. (No memory of this test holds the store open while the process runs.)"""
    tenant = f"kill-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, **cli_env}
    fill = subprocess.run([sys.executable, "-c", KILLED_RUN, tenant, "fill"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert fill.returncode == 0, fill.stderr
    killed = subprocess.run([sys.executable, "-c", KILLED_RUN, tenant, "run"], env=env, capture_output=True,
                            text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with AgenticMemory(settings, tenant=tenant) as memory:
        try:
            every = memory.list(include_archived=True)
            assert len(every) == 6 and sum(note.archived_at is not None for note in every) == 2
            assert len(memory.retention.run(RetentionPolicy(max_notes=1))) == 3
            assert len(memory.list()) == 1 and len(memory.list(include_archived=True)) == 6
            assert memory.admin.check().sound
        finally:
            memory.admin.delete_tenant()


def test_a_huge_whole_heat_is_kept_as_a_number(memory: AgenticMemory) -> None:
    """A whole min_heat past 2**63 - 1 once crashed Neo4j's driver: days and heat are stored as floats."""
    kept = memory.retention.set_policy(RetentionPolicy(min_heat=10**27, unused_days=30))
    assert kept == RetentionPolicy(min_heat=1e27, unused_days=30.0) == memory.retention.policy()
    memory.retention.set_policy(RetentionPolicy())
