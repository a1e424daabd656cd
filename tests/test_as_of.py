"""Reading the memory as it stood at a moment (`as_of`, recorded time) and what held at a time (`valid_at`, valid
time). The property test's oracle is the memory itself: after each operation of a random history, the plain reads
(`get`, `history`, and the entities' `list`, `get` and `merges`) are recorded; read later `as_of` that moment, the
memory must give exactly what was recorded."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client
from typer.testing import CliRunner

from amem_graph import AgenticMemory
from amem_graph.bench.scripted_llm import Answer, ScriptedLLM
from amem_graph.cli import app
from amem_graph.core import validation
from amem_graph.entities.topics import MIN_TOPIC_NOTES
from amem_graph.errors import EntityNotFound, InvalidInput, NoteNotFound
from amem_graph.integrations.langchain import AmemRetriever, SearchMemoriesTool
from amem_graph.integrations.mcp import memory_server
from amem_graph.models import Entity, Note, NoteHistory
from amem_graph.settings import Settings

STORES = ("neo4j", "embedded")

TEXTS = (
    "Gina works at Door Dash as a driver.",
    "Gina lost her driver job at Door Dash.",
    "Gina opened a clothing store downtown.",
    "Jon lost his banking job and wants to open a dance studio.",
    "Jon found a place for the dance studio downtown.",
    "Gina and Jon met downtown for coffee.",
    "Jon's dance studio opened with a party.",
    "Gina's store sells jackets and shoes.",
)
LINK_TYPES = ("RELATES_TO", "SUPPORTS", "CONTRADICTS", "ELABORATES")
PROPOSED = ("RELATES_TO", "SUPPORTS", "CONTRADICTS", "CONTRADICTS")  # what the scripted model links by
LINK_BUDGET = 2  # small, so that evolutions invalidate links (and a user's link makes one valid again)
PAUSE_S = 0.003  # between an operation and the moment recorded after it: writes are stamped to the millisecond


EVIDENCE = "Gina, Jon, job, driver, Door Dash, downtown, store, studio"  # the analyser keeps a reason that names both notes


def answer(links: list[tuple[int, str]], update: str | None) -> Answer:
    """The scripted model's analysis: links to candidates c1..c3, and a neighbour update of c1."""
    body = {
        "keywords": ["gina", "jon"], "context": "Gina and Jon's work.", "tags": ["work"],
        "links": [{"target_id": f"c{c}", "type": kind, "reason": f"{kind.lower()}: {EVIDENCE}", "confidence": 0.95}
                  for c, kind in links],
        "neighbour_updates": [] if update is None else [
            {"id": "c1", "context": update, "add_tags": [update.split()[0].lower()], "remove_tags": [],
             "reason": f"the new note says more: {EVIDENCE}"}
        ],
    }
    return Answer(json.dumps(body))


add_op = st.tuples(
    st.just("add"), st.integers(0, len(TEXTS) - 1), st.sampled_from([None, "s1", "s2"]),
    st.lists(st.tuples(st.integers(1, 3), st.sampled_from(PROPOSED)), min_size=1, max_size=3, unique_by=lambda x: x[0]),
    st.sampled_from([None, "Later news about work.", "Plans changed since."]),
)
update_op = st.tuples(st.just("update"), st.integers(0, 50), st.sampled_from(["tags", "content", "event_time"]))
link_op = st.tuples(st.just("link"), st.integers(0, 50), st.integers(0, 50), st.sampled_from(LINK_TYPES))
revert_op = st.tuples(st.just("revert"), st.integers(0, 50), st.integers(0, 50))
archive_op = st.tuples(st.sampled_from(["archive", "restore"]), st.integers(0, 50))
merge_op = st.tuples(st.just("merge"), st.integers(0, 50), st.integers(0, 50))  # two entities the notes mention
unmerge_op = st.tuples(st.just("unmerge"), st.integers(0, 50))
operations = st.lists(
    st.one_of(add_op, add_op, update_op, link_op, revert_op, archive_op, merge_op, merge_op, unmerge_op),
    min_size=4, max_size=10,
)


def seen(note: Note) -> dict[str, Any]:
    """What a read of a note shows that has a history (usage counters have none)."""
    fields = {k: v for k, v in note.to_dict().items() if k not in ("retrieval_count", "last_accessed", "links")}
    fields["links"] = sorted((x.source_id, x.target_id, x.type, x.invalid_at) for x in note.links)
    return fields


def seen_history(history: NoteHistory) -> dict[str, Any]:
    return {"note": seen(history.note), "versions": history.versions, "evolutions": [e.id for e in history.evolutions],
            "superseded_by": history.superseded_by}


def seen_entity(entity: Entity) -> tuple[Any, ...]:
    """What a read of an entity shows that has a history (its kind, other names and first/last seen keep none)."""
    return entity.key, entity.name, entity.mentions, entity.alias_of, entity.merged


def seen_entities(mem: AgenticMemory, tenant: str, at: datetime | None = None) -> dict[str, Any]:
    """The entities listed, each entity by its key (an alias as the one it was merged into), and the merges into
    each listed entity that has some."""
    listed = mem.entities.list(tenant=tenant, limit=1_000, as_of=at)
    keys = sorted({e.key for e in listed} | {key for e in listed for key in e.merged})
    return {
        "list": [seen_entity(e) for e in listed],
        "get": {key: seen_entity(mem.entities.get(key, tenant=tenant, as_of=at)) for key in keys},
        "merges": {e.key: mem.entities.merges(e.key, tenant=tenant, as_of=at) for e in listed if e.merged},
    }


@dataclass
class Moment:
    at: datetime
    notes: dict[str, dict[str, Any]]  # id → seen_history, as the plain reads gave it then
    entities: dict[str, Any]  # seen_entities then


def run(mem: AgenticMemory, llm: ScriptedLLM, tenant: str, ops: list[tuple[Any, ...]]) -> list[Moment]:
    ids: list[str] = []
    moments: list[Moment] = []
    for op in ops:
        if op[0] == "add":
            _, text, session, links, update = op
            llm.script(answer(links, update))
            note = mem.add(f"{TEXTS[text]} ({len(ids)})", tenant=tenant, session=session, speaker="Gina")
            ids.append(note.id)
        elif not ids:
            continue
        elif op[0] == "update":
            note = mem.get(ids[op[1] % len(ids)], tenant=tenant)
            if op[2] == "tags":
                mem.update(note.id, tenant=tenant, tags=[*note.tags, f"t{len(note.tags)}"])
            elif op[2] == "content":
                mem.update(note.id, tenant=tenant, content=f"{note.content} Still true.")
            else:
                mem.update(note.id, tenant=tenant, event_time=datetime(2023, 5, 1 + op[1] % 20, tzinfo=timezone.utc))
        elif op[0] == "link":
            source, target = ids[op[1] % len(ids)], ids[op[2] % len(ids)]
            if source != target:
                mem.link(source, target, op[3], reason="a user said so", tenant=tenant)
        elif op[0] == "revert":
            note_id = ids[op[1] % len(ids)]
            versions = mem.history(note_id, tenant=tenant).versions
            if versions:
                mem.revert(note_id, versions[op[2] % len(versions)].version, tenant=tenant)
        elif op[0] == "archive":
            mem.retention.archive([ids[op[1] % len(ids)]], tenant=tenant)
        elif op[0] == "restore":
            mem.retention.restore([ids[op[1] % len(ids)]], tenant=tenant)
        elif op[0] == "merge":  # an entity with none merged into it, into another
            listed = mem.entities.list(tenant=tenant, limit=1_000)
            candidates = [e.key for e in listed if not e.merged]
            if candidates and len(listed) > 1:
                alias = candidates[op[1] % len(candidates)]
                into = [e.key for e in listed if e.key != alias]
                with contextlib.suppress(InvalidInput):  # a name that resolves to the other: one entity already
                    mem.entities.merge(alias, into[op[2] % len(into)], reason="one thing", tenant=tenant)
        elif op[0] == "unmerge":
            aliases = sorted(key for e in mem.entities.list(tenant=tenant, limit=1_000) for key in e.merged)
            if aliases:
                mem.entities.unmerge(aliases[op[1] % len(aliases)], tenant=tenant)
        time.sleep(PAUSE_S)
        at = validation.now()
        notes = {n.id: seen_history(mem.history(n.id, tenant=tenant))
                 for n in mem.list(tenant=tenant, limit=1_000, include_superseded=True, include_archived=True)}
        moments.append(Moment(at, notes, seen_entities(mem, tenant)))
        time.sleep(PAUSE_S)
    return moments


@pytest.fixture
def budget_memory(settings: Settings, llm_memory: AgenticMemory) -> Iterator[AgenticMemory]:
    """`llm_memory` with a link budget of LINK_BUDGET."""
    shared = llm_memory._store if llm_memory.admin.kind == "embedded" else None
    with AgenticMemory(replace(llm_memory.settings, link_budget=LINK_BUDGET), store=shared) as mem:
        yield mem


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(ops=operations)
# A turn updated, then a turn after it in its session: its neighbourhood grows, and reads as of the moment
# between must still show the line it held then.
@example(ops=[("add", 0, "s1", [(1, "RELATES_TO")], None), ("update", 0, "content"),
              ("add", 0, "s1", [(1, "RELATES_TO")], None)])
# A topic mentioned by three notes: shown from the third, found by its name before.
@example(ops=[("add", 0, None, [(1, "RELATES_TO")], None),
              *[("add", 2, None, [(1, "RELATES_TO")], None)] * 3])
def test_reads_as_of_a_moment_give_what_the_memory_held_then(
    llm: ScriptedLLM, budget_memory: AgenticMemory, ops: list[tuple[Any, ...]],
) -> None:
    mem, tenant = budget_memory, f"asof-{uuid.uuid4().hex[:8]}"
    try:
        moments = run(mem, llm, tenant, ops)
        final = {n.id for n in mem.list(tenant=tenant, limit=1_000, include_superseded=True, include_archived=True)}
        entity_keys = set(seen_entities(mem, tenant)["get"])
        for moment in moments:
            # The entities as of then: those mentioned by then, merged as they were then.
            assert seen_entities(mem, tenant, moment.at) == moment.entities
            for key in entity_keys - set(moment.entities["get"]):
                # Not listed then: not mentioned by then, or a topic that had not recurred by then (kept, and
                # found by its name, but not shown: docs/python.md, "What an entity is").
                try:
                    hidden = mem.entities.get(key, tenant=tenant, as_of=moment.at)
                except EntityNotFound:
                    continue
                assert hidden.kind == "topic" and 0 < hidden.mentions < MIN_TOPIC_NOTES, (key, hidden)
            for note_id in final:
                if note_id not in moment.notes:
                    with pytest.raises(NoteNotFound):
                        mem.get(note_id, tenant=tenant, as_of=moment.at)
                    continue
                then = moment.notes[note_id]
                assert seen(mem.get(note_id, tenant=tenant, as_of=moment.at)) == then["note"]
                assert seen_history(mem.history(note_id, tenant=tenant, as_of=moment.at)) == then
            # Search as of then finds only what the memory held then, as it was then.
            for include_superseded in (False, True):
                hits = mem.search("Gina Jon work downtown job", k=20, tenant=tenant, as_of=moment.at,
                                  include_superseded=include_superseded)
                for hit in hits:
                    assert hit.note.id in moment.notes
                    then = moment.notes[hit.note.id]["note"]
                    assert (hit.note.content, hit.note.tags, hit.note.version) == (
                        then["content"], tuple(then["tags"]), then["version"])
                    assert include_superseded or then["invalid_at"] is None
                    assert then["archived_at"] is None
                if not include_superseded:  # every current note the memory held then is among the hits
                    current = {i for i, h in moment.notes.items()
                               if h["note"]["invalid_at"] is None and h["note"]["archived_at"] is None}
                    assert {hit.note.id for hit in hits} <= set(moment.notes) and len(hits) == min(20, len(current))
        # As of now is the plain read.
        now = validation.now()
        for note_id in final:
            assert seen(mem.get(note_id, tenant=tenant, as_of=now)) == seen(mem.get(note_id, tenant=tenant))
            assert (seen_history(mem.history(note_id, tenant=tenant, as_of=now))
                    == seen_history(mem.history(note_id, tenant=tenant)))

        def ranked(**kw: Any) -> list[tuple[str, float, dict[str, Any]]]:
            return [(hit.note.id, hit.score, seen(hit.note))
                    for hit in mem.search("Gina Jon work downtown job", k=20, tenant=tenant, **kw)]

        assert ranked(as_of=now) == ranked()
        assert seen_entities(mem, tenant, now) == seen_entities(mem, tenant)
    finally:
        mem.admin.delete_tenant(tenant)


def test_valid_time_and_recorded_time_on_one_example(llm: ScriptedLLM, llm_memory: AgenticMemory) -> None:
    """Gina drove for Door Dash from 2022 and lost that job in March 2023; the memory learned both today."""
    mem = llm_memory
    llm.script(answer([], None))
    old = mem.add("Gina works at Door Dash as a driver.", event_time="2022-01-10T00:00:00+00:00")
    learned_old = validation.now()
    time.sleep(PAUSE_S)
    llm.script(answer([(1, "CONTRADICTS")], None))
    new = mem.add("Gina lost her driver job at Door Dash.", event_time="2023-03-01T00:00:00+00:00")
    old = mem.get(old.id)
    assert old.valid_to == new.valid_from == datetime(2023, 3, 1, tzinfo=timezone.utc)
    assert old.invalid_at is not None and old.invalid_at >= learned_old

    query = "Gina Door Dash driver job"
    found = lambda **kw: {hit.note.id for hit in mem.search(query, k=5, **kw)}
    assert found() == {new.id}
    # Valid time: in 2022 the old fact held, whatever was learned later; in 2024 only the new one.
    assert found(valid_at="2022-06-01T00:00:00+00:00") == {old.id}
    assert found(valid_at="2024-01-01T00:00:00+00:00") == {new.id}
    assert found(valid_at="2021-01-01T00:00:00+00:00") == set()
    # Recorded time: before the memory learned of the new note, the old one was current.
    assert found(as_of=learned_old) == {old.id}
    assert mem.get(old.id, as_of=learned_old).invalid_at is None
    assert mem.history(old.id, as_of=learned_old).superseded_by == ()
    with pytest.raises(NoteNotFound):
        mem.get(new.id, as_of=learned_old)
    with pytest.raises(NoteNotFound):
        mem.get(old.id, as_of=learned_old - timedelta(days=1))


def test_a_time_that_is_not_one_is_refused(memory: AgenticMemory) -> None:
    note = memory.add("Gina works at Door Dash as a driver.")
    for bad in ("yesterday", 12, "2024-13-01"):
        with pytest.raises(InvalidInput, match="as_of"):
            memory.get(note.id, as_of=bad)
        with pytest.raises(InvalidInput, match="as_of"):
            memory.search("Gina", as_of=bad)
        with pytest.raises(InvalidInput, match="valid_at"):
            memory.search("Gina", valid_at=bad)


def test_every_interface_reads_as_of_a_moment(llm: ScriptedLLM, llm_memory: AgenticMemory, cli_env: dict[str, str]) -> None:
    """The CLI, MCP and LangChain forms of get, history and search take the moment (and search the valid time)."""
    mem = llm_memory
    llm.script(answer([], None))
    old = mem.add("Gina works at Door Dash as a driver.", event_time="2022-01-10T00:00:00+00:00")
    time.sleep(PAUSE_S)
    before = validation.now().isoformat()
    time.sleep(PAUSE_S)
    llm.script(answer([(1, "CONTRADICTS")], None))
    new = mem.add("Gina lost her driver job at Door Dash.", event_time="2023-03-01T00:00:00+00:00")
    query, in_2022 = "Gina Door Dash driver job", "2022-06-01T00:00:00+00:00"

    def cli(*args: str) -> Any:
        result = CliRunner().invoke(app, [*args, "-t", mem.tenant, "--json"], env=cli_env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert {hit["note"]["id"] for hit in cli("search", query, "--as-of", before)} == {old.id}
    assert {hit["note"]["id"] for hit in cli("search", query, "--valid-at", in_2022)} == {old.id}
    assert {hit["note"]["id"] for hit in cli("search", query)} == {new.id}
    assert cli("get", old.id, "--as-of", before)["invalid_at"] is None and cli("get", old.id)["invalid_at"]
    assert cli("history", old.id, "--as-of", before)["superseded_by"] == []
    assert cli("show", old.id)["superseded_by"]
    missing = CliRunner().invoke(app, ["get", new.id, "-t", mem.tenant, "--as-of", before], env=cli_env)
    assert missing.exit_code != 0 and "as of" in missing.output

    async def mcp() -> None:
        async with Client(memory_server(mem)) as client:
            async def call(tool: str, **arguments: Any) -> dict[str, Any]:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, result.content)
                return result.structured_content or {}

            found = await call("search_memory", query=query, k=5, as_of=before)
            assert {hit["note"]["id"] for hit in found["hits"]} == {old.id}
            found = await call("search_memory", query=query, k=5, valid_at=in_2022)
            assert {hit["note"]["id"] for hit in found["hits"]} == {old.id}
            assert (await call("memory_context", query=query, as_of=before))["note_ids"] == [old.id]
            assert (await call("get_memory", id=old.id, as_of=before))["note"]["invalid_at"] is None
            assert (await call("memory_history", id=old.id, as_of=before))["superseded_by"] == []
            refused = await client.call_tool("get_memory", {"id": new.id, "as_of": before})
            assert refused.is_error

    asyncio.run(mcp())

    retriever = AmemRetriever(memory=mem, k=5)
    assert [d.id for d in retriever.invoke(query, as_of=before)] == [old.id]
    assert [d.id for d in AmemRetriever(memory=mem, k=5, search_kwargs={"valid_at": in_2022}).invoke(query)] == [old.id]
    message = SearchMemoriesTool(memory=mem).invoke(
        {"type": "tool_call", "id": "1", "name": "search_memories", "args": {"query": query, "k": 5, "as_of": before}}
    )
    assert [hit["note_id"] for hit in message.artifact] == [old.id]


def test_a_user_supersedes_a_note_by_hand(memory: AgenticMemory) -> None:
    old = memory.add("Gina works at Door Dash as a driver.", event_time="2022-01-10T00:00:00+00:00")
    new = memory.add("Gina now runs her own clothing store.", event_time="2023-03-01T00:00:00+00:00")
    for bad in ((old.id, old.id), (old.id, "no-such-note"), ("no-such-note", new.id)):
        with pytest.raises((InvalidInput, NoteNotFound)):
            memory.supersede(*bad, reason="Gina changed jobs")
    assert memory.get(old.id).invalid_at is None  # a refused call changes nothing
    with pytest.raises(InvalidInput):
        memory.supersede(old.id, new.id, reason="")
    superseded = memory.supersede(old.id, new.id, reason="Gina changed jobs")
    assert superseded.invalid_at is not None and superseded.valid_to == new.valid_from
    assert [(s.newer_id, s.reason) for s in memory.history(old.id).superseded_by] == [(new.id, "Gina changed jobs")]
    assert any(link.type == "CONTRADICTS" and link.source_id == new.id for link in memory.get(old.id).links)
    assert old.id not in {hit.note.id for hit in memory.search("Where does Gina work?", k=5)}
