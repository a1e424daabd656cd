"""Entity merges as of a moment, on both stores: an unmerge keeps the merge it ends, so `get`, `merges`, `list`
and `profile` as of a moment see the merges made by then and not undone by then, and the entities and notes
the memory held then."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from typing import Any

import pytest
from mcp import Client
from typer.testing import CliRunner

from amem_graph import AgenticMemory, EntityNotFound, InvalidInput
from amem_graph.cli import app
from amem_graph.core import validation
from amem_graph.integrations.mcp import memory_server

STORES = ("neo4j", "embedded")
PAUSE_S = 0.003  # writes are stamped to the millisecond


def moment() -> datetime:
    """A moment strictly between the writes before and after it."""
    time.sleep(PAUSE_S)
    at = validation.now()
    time.sleep(PAUSE_S)
    return at


def keys(memory: AgenticMemory, at: datetime | None = None) -> set[str]:
    return {e.key for e in memory.entities.list(limit=1000, as_of=at)}


def merged(memory: AgenticMemory, name: str, at: datetime | None = None) -> list[tuple[str, str]]:
    return [(m.alias, m.reason) for m in memory.entities.merges(name, as_of=at)]


def test_merge_unmerge_and_merge_again_read_as_of_each_moment(memory: AgenticMemory) -> None:
    first = memory.add("Caroline: I love my ice-cream maker.", speaker="Caroline")
    alone = moment()
    tired = memory.add("Melanie: My friend Caroline Hill said she was tired.", speaker="Melanie")
    apart = moment()
    memory.entities.merge("Caroline Hill", "caroline", reason="her surname")
    joined = moment()
    memory.update(tired.id, content="Melanie: My friend Caroline Hill said she was tired again.")
    memory.entities.unmerge("Caroline Hill")
    undone = moment()
    memory.entities.merge("Caroline Hill", "caroline", reason="her surname after all")
    again = moment()
    memory.retention.archive([first.id])

    # Before Melanie's note the memory held no Caroline Hill, nor Melanie.
    with pytest.raises(EntityNotFound, match="as of"):
        memory.entities.get("Caroline Hill", as_of=alone)
    assert {"caroline", "melanie", "caroline hill"} & keys(memory, alone) == {"caroline"}
    caroline = memory.entities.get("Caroline", as_of=alone)
    assert (caroline.mentions, caroline.merged) == (1, ())
    assert merged(memory, "Caroline", alone) == []

    for apart_then in (apart, undone):
        hill = memory.entities.get("Caroline Hill", as_of=apart_then)
        assert (hill.key, hill.alias_of, hill.mentions) == ("caroline hill", None, 1)
        assert memory.entities.get("Caroline", as_of=apart_then).merged == ()
        assert {"caroline", "caroline hill", "melanie"} <= keys(memory, apart_then)
        assert merged(memory, "Caroline", apart_then) == []
        assert [n.id for n in memory.entities.profile("Caroline", as_of=apart_then).notes] == [first.id]

    for joined_then, reason in ((joined, "her surname"), (again, "her surname after all")):
        caroline = memory.entities.get("Caroline Hill", as_of=joined_then)  # the alias reads as Caroline
        assert (caroline.key, caroline.merged, caroline.mentions) == ("caroline", ("caroline hill",), 1)
        assert "caroline hill" not in keys(memory, joined_then)
        assert merged(memory, "Caroline Hill", joined_then) == [("caroline hill", reason)]
        profile = memory.entities.profile("Caroline", as_of=joined_then)
        assert [n.id for n in profile.notes] == [first.id, tired.id]
        assert "caroline hill" not in {e.key for e, _ in profile.related}
        assert "melanie" in {e.key for e, _ in profile.related}
    # The notes as they were then: the update came after `joined`; the archiving after `again`.
    assert memory.entities.profile("Caroline", as_of=joined).notes[1].content.endswith("was tired.")
    assert memory.entities.profile("Caroline", as_of=again).notes[1].content.endswith("tired again.")
    assert [n.id for n in memory.entities.profile("Caroline").notes] == [tired.id]
    [made] = memory.entities.merges("Caroline")
    assert made.at is not None and undone < made.at < again

    # As of now is the plain read.
    now = validation.now()
    assert memory.entities.get("Caroline Hill", as_of=now) == memory.entities.get("Caroline Hill")
    assert memory.entities.list(limit=1000, as_of=now) == memory.entities.list(limit=1000)
    assert memory.entities.list(limit=2, offset=1, as_of=now) == memory.entities.list(limit=2, offset=1)
    assert memory.entities.merges("Caroline", as_of=now) == memory.entities.merges("Caroline")
    assert memory.entities.profile("Caroline", as_of=now) == memory.entities.profile("Caroline")

    # The ended merge travels with the tenant.
    _, records = memory.admin.export()
    exported = list(records)
    assert [r["type"] for r in exported if r["kind"] == "relationship"].count("WAS_ALIAS_OF") == 1
    memory.admin.delete_tenant()
    memory.admin.import_([r for r in exported if r["kind"] == "node"], [r for r in exported if r["kind"] == "relationship"])
    assert merged(memory, "Caroline", joined) == [("caroline hill", "her surname")]
    assert merged(memory, "Caroline", undone) == []
    assert memory.admin.check().sound


def test_erasing_the_notes_erases_the_entity_with_its_merges_from_every_time(memory: AgenticMemory) -> None:
    luna = memory.add("Gina: Luna chased a moth all night.", speaker="Gina")
    nickname = memory.add("Gina: At the vet they call my cat Lunita.", speaker="Gina")
    memory.entities.merge("Lunita", "Luna")
    joined = moment()
    memory.entities.unmerge("Lunita")
    assert memory.entities.get("Luna", as_of=joined).merged == ("lunita",)
    memory.delete(nickname.id)  # only it mentioned Lunita: the entity goes, and its merges with it
    with pytest.raises(EntityNotFound):
        memory.entities.get("Lunita", as_of=joined)
    assert memory.entities.get("Luna", as_of=joined).merged == ()
    assert memory.entities.merges("Luna", as_of=joined) == []
    memory.delete(luna.id)
    assert memory.entities.list(as_of=joined) == []


def test_a_time_that_is_not_one_is_refused(memory: AgenticMemory) -> None:
    memory.add("Gina: Luna chased a moth all night.", speaker="Gina")
    for bad in ("yesterday", 12):
        with pytest.raises(InvalidInput, match="as_of"):
            memory.entities.get("Luna", as_of=bad)
        with pytest.raises(InvalidInput, match="as_of"):
            memory.entities.list(as_of=bad)
        with pytest.raises(InvalidInput, match="as_of"):
            memory.entities.merges("Luna", as_of=bad)
        with pytest.raises(InvalidInput, match="as_of"):
            memory.entities.profile("Luna", as_of=bad)


def test_the_cli_and_mcp_read_entities_as_of_a_moment(memory: AgenticMemory, cli_env: dict[str, str]) -> None:
    memory.add("Gina: Luna chased a moth all night.", speaker="Gina")
    memory.add("Gina: At the vet they call my cat Lunita.", speaker="Gina")
    before = moment().isoformat()
    memory.entities.merge("Lunita", "Luna", reason="nickname")

    def cli(*args: str) -> Any:
        result = CliRunner().invoke(app, [*args, "-t", memory.tenant, "--json"], env=cli_env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert cli("entity", "show", "Lunita", "--as-of", before)["entity"]["key"] == "lunita"
    assert cli("entity", "show", "Lunita")["entity"]["key"] == "luna"
    assert "lunita" in {e["key"] for e in cli("entity", "list", "--as-of", before)}
    assert "lunita" not in {e["key"] for e in cli("entity", "list")}
    assert cli("entity", "merges", "Luna", "--as-of", before) == []
    assert [m["alias"] for m in cli("entity", "merges", "Luna")] == ["lunita"]
    refused = CliRunner().invoke(app, ["entity", "list", "-t", memory.tenant, "--as-of", "yesterday"], env=cli_env)
    assert refused.exit_code != 0 and "as_of" in refused.output

    async def mcp() -> None:
        async with Client(memory_server(memory)) as client:
            found = await client.call_tool("entity", {"name": "Lunita", "as_of": before})
            assert not found.is_error and (found.structured_content or {})["entity"]["key"] == "lunita"
            found = await client.call_tool("entity", {"name": "Lunita"})
            assert not found.is_error and (found.structured_content or {})["entity"]["key"] == "luna"
            refused = await client.call_tool("entity", {"name": "Lunita", "as_of": "yesterday"})
            assert refused.is_error

    asyncio.run(mcp())
