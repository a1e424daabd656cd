"""`check` (amem_graph/maintenance/invariants.py): a tenant the engine wrote is sound on both stores, and each rule finds
the damage it names (a tenant imported from an export with that damage made to it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory
from amem_graph.cli import app

STORES = ("neo4j", "embedded")
Records = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def fill(memory: AgenticMemory) -> None:
    """Notes that link and evolve, a session chain, an update (a version), a deletion, an archived note and a
    restored one, tier pages."""
    turns = ["Caroline: I went to the pottery class on Friday and fired a ceramic vase in the kiln.",
             "Melanie: Did you make a bowl at the class?",
             "Caroline: Yes, a blue pottery bowl for my mum.", "Melanie: Your mum will love the bowl."]
    ids = [memory.add(t, session="s1").id for t in turns]
    memory.add("Caroline gave her mum a blue bowl she made in pottery class.")
    memory.add("Caroline: The kiln fired my vase twice.")  # another session's note: evolves the first turn
    memory.update(ids[3], tags=["praise"], reason="tagged")
    memory.delete(ids[1])
    memory.retention.archive([ids[0], ids[3]])
    memory.retention.restore([ids[3]])
    for i in range(3):
        memory.add_turn(f"I walked the dog in the park, day {i}.", "Sounds lovely.", session_id="chat")


def test_what_the_engine_writes_is_sound(memory: AgenticMemory) -> None:
    fill(memory)
    report = memory.admin.check()
    assert report.sound, report.violations
    assert report.notes == 5 and report.nodes > report.notes and report.relationships > 0
    assert memory.tenant in memory.admin.tenants()


def _records(memory: AgenticMemory) -> Records:
    _, records = memory.admin.export()
    rows = list(records)
    return [r for r in rows if r["kind"] == "node"], [r for r in rows if r["kind"] == "relationship"]


def _labelled(nodes: list[dict[str, Any]], label: str) -> list[dict[str, Any]]:
    return [n for n in nodes if label in n["labels"]]


def _drop_version(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> None:
    version = _labelled(nodes, "NoteVersion")[0]
    nodes.remove(version)
    rels[:] = [r for r in rels if version["key"] not in (r["start"], r["end"])]


def _break_chain(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> None:
    rels.remove(next(r for r in rels if r["type"] == "NEXT"))


def _miscount_entity(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> None:
    _labelled(nodes, "Entity")[0]["props"]["mentions"] += 1


def _unrevise(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> None:
    rels.remove(next(r for r in rels if r["type"] == "REVISED"))


def _stretch_confidence(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> None:
    link = next(r for r in rels if r["type"] in ("RELATES_TO", "SUPPORTS", "ELABORATES", "FOLLOWS"))
    link["props"]["confidence"] = 1.5


def _reopen_archive(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> None:
    restored = next(n for n in _labelled(nodes, "Note") if len(n["props"].get("archived_periods") or []) == 2)
    restored["props"]["archived_periods"] = restored["props"]["archived_periods"][:1]  # archived, by its periods


def _pend_analysed(nodes: list[dict[str, Any]], rels: list[dict[str, Any]]) -> None:
    """An evolution that applied a queued analysis, while its note still says it waits for one."""
    evolution = _labelled(nodes, "Evolution")[0]
    evolution["props"]["decision"] = json.dumps({**json.loads(evolution["props"]["decision"]), "queued": True})
    trigger = next(n for n in _labelled(nodes, "Note") if n["props"]["id"] == evolution["props"]["trigger_note_id"])
    trigger["props"]["analysis"] = "pending"


@pytest.mark.parametrize(("damage", "rule"), [
    (_drop_version, "versions"), (_break_chain, "chains"), (_miscount_entity, "mentions"),
    (_unrevise, "evolutions"), (_stretch_confidence, "links"), (_reopen_archive, "archives"),
    (_pend_analysed, "analysis"),
])
def test_each_rule_finds_its_damage(memory: AgenticMemory, damage: Callable[[list, list], None], rule: str) -> None:
    fill(memory)
    nodes, rels = _records(memory)
    damage(nodes, rels)
    memory.admin.delete_tenant(memory.tenant)
    memory.admin.import_(nodes, rels)  # the tenant again, with the damage
    report = memory.admin.check()
    assert not report.sound and set(report.counts) == {rule}, report.violations
    assert all(v.rule == rule for v in report.violations)


def test_the_ranking_statistics_are_recounted(memory: AgenticMemory) -> None:
    """The statistics search ranks with (Term and Corpus nodes on Neo4j, the postings of the embedded store) are
    recounted from the texts: one term's count off by one, or a field's document count, is found."""
    fill(memory)
    assert memory.admin.check().sound
    store: Any = memory._store
    if memory.admin.kind == "neo4j":
        store._driver.execute_query(
            "MATCH (t:Term {tenant: $tenant, index: 'note_text', term: 'potteri'}) SET t.df = [n IN t.df | n + 1]",
            {"tenant": memory.tenant})
        store._driver.execute_query(
            "MATCH (c:Corpus {tenant: $tenant, index: 'page_text'}) SET c.docs = [n IN c.docs | n + 2]",
            {"tenant": memory.tenant})
    else:
        store.statistics("note_text", memory.tenant)  # the postings caught up with the graph, then damaged
        text = store._fulltext.tenants[memory.tenant]
        text.postings["content"]["potteri"][-1] = 1
        store._page_text.tenants[memory.tenant].docs["user_text"] += 2
    report = memory.admin.check()
    assert set(report.counts) == {"statistics"}, report.violations
    details = " ".join(v.detail for v in report.violations)
    assert "note_text content term 'potteri'" in details and "page_text user_text" in details


def test_the_cli_says_sound_or_exits_10(memory: AgenticMemory, cli_env: dict[str, str]) -> None:
    if memory.admin.kind == "embedded":
        pytest.skip("the CLI opens the embedded store's folder, which this process holds")
    fill(memory)
    runner = CliRunner()
    ok = runner.invoke(app, ["check", "-t", memory.tenant, "--json"], env=cli_env, catch_exceptions=False)
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["tenants"][0]["sound"] is True
    nodes, rels = _records(memory)
    _break_chain(nodes, rels)
    memory.admin.delete_tenant(memory.tenant)
    memory.admin.import_(nodes, rels)
    out = runner.invoke(app, ["check", "-t", memory.tenant], env=cli_env, catch_exceptions=False)
    assert out.exit_code == 10 and "chains" in out.stdout
