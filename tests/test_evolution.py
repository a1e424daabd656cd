"""The agentic write path against the real Neo4j and, for the LLM path, the scripted server over HTTP."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import Answer, Delay, Fault, ScriptedLLM
from amem_graph.core import validation
from amem_graph.embedding import composite_text
from amem_graph.errors import EvolutionConflict, LLMNotConfigured
from amem_graph.models import NoteInput
from amem_graph.settings import LLMSettings
from amem_graph.store.base import NoteRevision
from amem_graph.write.evolution import revise_if_current

STORES = ("neo4j", "embedded")


def analysis(links: list | None = None, updates: list | None = None, **fields: object) -> Answer:
    body = {"keywords": ["beagle", "max"], "context": "Alice's dog Max is a beagle.", "tags": ["pets"],
            "links": links or [], "neighbour_updates": updates or [], **fields}
    return Answer(json.dumps(body))


def graph_is_sound(memory: AgenticMemory) -> None:
    """Every link joins two notes of the tenant; every note's versions run 1..version-1 exactly once
    (through the store contract, so that it holds on each store)."""
    notes = memory.list(limit=1_000)
    ids = {note.id for note in notes}
    for note in notes:
        assert all(link.other(note.id) in ids for link in memory.get(note.id).links), note.id
        assert [v.version for v in memory.history(note.id).versions] == list(range(1, note.version)), note.id


def test_heuristic_analysis_links_with_evidence(memory: AgenticMemory) -> None:
    first = memory.add("Alice adopted a beagle named Max from the shelter.")
    memory.add("Bob went hiking in the Alps last summer.")
    second = memory.add("Max the beagle chewed Alice's favourite shoes.")
    assert (second.analysis, second.model) == ("heuristic", "heuristic-v1")
    assert second.keywords and second.context and second.tags
    link = next(link for link in second.links if link.other(second.id) == first.id)
    assert link.type == "RELATES_TO" and "beagle" in link.reason and 0 < link.confidence <= 1
    assert all("hiking" not in link.reason for link in second.links)
    graph_is_sound(memory)


def test_llm_add_evolves_exactly_the_intended_neighbour(llm: ScriptedLLM, llm_memory: AgenticMemory) -> None:
    mem = llm_memory
    llm.script(analysis(), analysis())
    dog = mem.add("Alice adopted a dog from the shelter in May.")
    hike = mem.add("Bob went hiking in the Alps.")
    llm.script(
        analysis(
            links=[{"target_id": "c1", "type": "ELABORATES", "reason": "names the adopted dog", "confidence": 0.9}],
            updates=[{"id": "c1", "context": "Alice adopted Max, a beagle puppy, in May.", "add_tags": ["beagle"],
                      "remove_tags": [], "reason": "the new note names the dog"}],
        )
    )
    max_note = mem.add("The dog Alice adopted is a beagle called Max.")
    offered = llm.requests[-1]["messages"][1]["content"]
    assert "c1: Alice adopted a dog" in offered and dog.id not in offered  # short handles, not ids
    assert (max_note.analysis, max_note.model) == ("llm", "scripted")
    [link] = max_note.links
    assert (link.target_id, link.type, link.reason, link.confidence) == (dog.id, "ELABORATES", "names the adopted dog", 0.9)
    evolved = mem.get(dog.id)
    assert evolved.context == "Alice adopted Max, a beagle puppy, in May." and "beagle" in evolved.tags
    assert evolved.version == 2 and evolved.content == dog.content  # what was said is never rewritten
    assert mem.get(hike.id).version == 1  # only the intended neighbour changed
    history = mem.history(dog.id)
    [old] = history.versions
    assert (old.version, old.context, old.tags) == (1, dog.context, dog.tags)
    evolution = next(e for e in history.evolutions if e.trigger_note_id == max_note.id)
    assert evolution.revised == ((dog.id, 1),) and evolution.analysis == "llm" and evolution.prompt_tokens > 0
    assert evolution.decision["links"][0]["type"] == "ELABORATES"
    # The evolved neighbour is found by its new context right away, and its vector embeds the new fields.
    assert dog.id in [h.note.id for h in mem.search("beagle puppy", k=2, mode="fulltext", hops=0)]
    stored = np.array(mem.get(dog.id, with_embedding=True).embedding)
    expected = mem.embedder.embed_one(composite_text(evolved.content, evolved.context, evolved.keywords, evolved.tags))
    assert float(stored @ expected) > 0.999
    graph_is_sound(mem)


def test_one_llm_call_per_added_note(llm: ScriptedLLM, llm_memory: AgenticMemory) -> None:
    for text in ("Caroline went to a support group.", "Melanie paints landscapes.", "Caroline paints too."):
        llm_memory.add(text)
    llm_memory.add("Caroline paints too.")  # a repeat: no call at all
    assert len(llm.requests) == 3
    usage = llm_memory.stats().llm["analyse_note"]
    assert usage["calls"] == 3 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_a_neighbour_archived_while_an_add_is_analysed_stays_as_it_was_archived(
    llm: ScriptedLLM, llm_memory: AgenticMemory
) -> None:
    """Retention and adds race: two adds are planned on A (one links and revises it, one supersedes it), a
    retention run archives A, then the adds write. The lock orders the writes; the archived A is left as it was
    archived (no new link, version or supersession) and each add's own note is whole. Restored, A is as it was."""
    mem = llm_memory
    llm.script(analysis())
    a = mem.add("Gina works at Door Dash.", event_time="2023-01-01T00:00:00Z")
    plans = []
    for content, answer in (
        ("Gina likes her work at Door Dash.", analysis(
            links=[{"target_id": "c1", "type": "RELATES_TO", "reason": "her job", "confidence": 0.9}],
            updates=[{"id": "c1", "context": "Gina works at Door Dash and likes it.", "add_tags": ["work"], "remove_tags": [], "reason": "she likes the work"}])),
        ("Gina lost her job at Door Dash.", analysis(
            links=[{"target_id": "c1", "type": "CONTRADICTS", "reason": "Gina lost that job at Door Dash", "confidence": 0.95}])),
    ):
        llm.script(answer)
        note = validation.note_input(NoteInput(content=content, event_time="2023-03-01T00:00:00Z"), 20_000)
        hits = mem._evolver._candidates(mem.tenant, note.content, mem.embedder.embed_one(note.content))
        plans.append((note, mem._evolver._plan(note, mem.analyser.analyse(note, hits), hits)))
    assert [r.id for r in plans[0][1].revisions] == [a.id], plans[0][1].decision
    assert [(link.target_id, link.type) for _, write in plans for link in write.links] == [
        (a.id, "RELATES_TO"), (a.id, "CONTRADICTS")]
    assert [old for old, _, _ in plans[1][1].contradictions] == [a.id]
    before = mem.get(a.id)
    assert mem.retention.archive([a.id]) == [a.id]
    for note, write in plans:
        outcome = mem._evolver._apply(mem.tenant, write, allow_stale=False)
        assert outcome.created and outcome.revised == () and outcome.decision["skipped_archived"] == [a.id]
        assert mem.get(outcome.note_id).content == note.content and mem.get(outcome.note_id).links == ()
    archived = mem.get(a.id)
    assert archived.archived_at is not None and archived.invalid_at is None
    assert (archived.version, archived.context, archived.tags, archived.links) == (before.version, before.context,
                                                                                  before.tags, before.links)
    assert mem.history(a.id).superseded_by == ()
    assert mem.retention.restore([a.id]) == [a.id]
    assert (mem.get(a.id).version, mem.get(a.id).links) == (before.version, before.links)
    graph_is_sound(mem)


def test_contradiction_supersedes_the_older_fact(llm: ScriptedLLM, llm_memory: AgenticMemory) -> None:
    mem = llm_memory
    llm.script(analysis())
    old = mem.add("Gina works at Door Dash.", event_time="2023-01-01T00:00:00Z")
    llm.script(analysis(links=[{"target_id": "c1", "type": "CONTRADICTS", "reason": "Gina lost that job at Door Dash", "confidence": 0.95}]))
    new = mem.add("Gina lost her job at Door Dash.", event_time="2023-03-01T00:00:00Z")
    assert mem.get(old.id).invalid_at is not None and mem.get(new.id).invalid_at is None
    superseded = mem.history(old.id).superseded_by
    assert [(s.newer_id, s.reason) for s in superseded] == [(new.id, "Gina lost that job at Door Dash")]
    assert old.id not in [h.note.id for h in mem.search("Gina Door Dash", k=5)]
    assert old.id in [h.note.id for h in mem.search("Gina Door Dash", k=5, include_superseded=True)]
    # Expansion does not bring it back either: only the CONTRADICTS link from the newer note reaches it.
    assert [h.note.id for h in mem.search("lost", mode="fulltext", hops=2)] == [new.id]
    reached = mem.search("lost", mode="fulltext", hops=1, include_superseded=True)
    assert [(h.note.id, [s.type for s in h.path]) for h in reached] == [(new.id, []), (old.id, ["CONTRADICTS"])]
    assert mem.get(old.id).content == old.content  # invalidated, never deleted
    assert [(s.newer_id, s.reason) for s in mem.history(old.id).superseded_by] == [(new.id, "Gina lost that job at Door Dash")]
    mem.delete(new.id)  # what invalidated the old fact is gone: it is valid again
    assert mem.get(old.id).invalid_at is None


def test_a_contradiction_without_two_event_times_goes_by_when_notes_were_stored(
    llm: ScriptedLLM, llm_memory: AgenticMemory
) -> None:
    mem = llm_memory
    llm.script(analysis())
    undated = mem.add("Gina works at Door Dash.")  # stored first, no event time
    llm.script(analysis(links=[{"target_id": "c1", "type": "CONTRADICTS", "reason": "Gina quit Door Dash", "confidence": 0.9}]))
    dated = mem.add("Gina quit Door Dash.", event_time="2023-01-01T00:00:00Z")  # a past event time, stored later
    assert mem.get(undated.id).invalid_at is not None and mem.get(dated.id).invalid_at is None


def test_a_contradicting_note_about_an_earlier_time_is_the_one_superseded(
    llm: ScriptedLLM, llm_memory: AgenticMemory
) -> None:
    mem = llm_memory
    llm.script(analysis())
    current = mem.add("Gina manages her own clothing store.", event_time="2023-06-01T00:00:00Z")
    llm.script(analysis(links=[{"target_id": "c1", "type": "CONTRADICTS", "reason": "Gina has a different job", "confidence": 0.9}]))
    earlier = mem.add("Gina works at Door Dash.", event_time="2023-01-01T00:00:00Z")  # told late, true earlier
    assert mem.get(earlier.id).invalid_at is not None and mem.get(current.id).invalid_at is None
    assert [s.newer_id for s in mem.history(earlier.id).superseded_by] == [current.id]


def test_link_budget_invalidates_the_weakest_link(settings: Settings, tenant: str) -> None:
    confidences = iter([0.9, 0.3, 0.6])

    def link_to_the_hub(request: dict) -> Answer:
        """Link each new note to the hub, wherever the hub is among the candidates."""
        user = request["messages"][1]["content"]
        hub = next((line.split(":")[0] for line in user.splitlines()[1:] if "meets on Fridays" in line), None)
        links = [{"target_id": hub, "type": "RELATES_TO", "reason": "club", "confidence": next(confidences)}] if hub else []
        return analysis(links=links)

    with ScriptedLLM(responder=link_to_the_hub) as llm:
        configured = replace(settings, link_budget=2, llm=LLMSettings(background=False, base_url=llm.base_url, model="scripted", backoff_s=0))
        with AgenticMemory(configured, tenant=tenant) as mem:
            try:
                hub = mem.add("The book club meets on Fridays.")
                added = [mem.add(text) for text in ("Ann joined the book club.", "Ben left the book club.",
                                                    "Cy hosts the book club.")]
                links = mem.get(hub.id).links
                assert sorted(link.confidence for link in links if link.invalid_at is None) == [0.6, 0.9]
                [dropped] = [link for link in links if link.invalid_at is not None]
                assert dropped.confidence == 0.3 and dropped.reason == "club"  # kept, with its reason
                assert dropped.source_id == added[1].id
                [cys] = mem.history(added[2].id).evolutions  # Cy's add pushed the hub past its budget
                assert cys.decision["link_budget_invalidated"] == [
                    {"source_id": added[1].id, "target_id": hub.id, "type": "RELATES_TO"}
                ]
            finally:
                mem.admin.delete_tenant(tenant)


def test_revert_restores_a_version_and_keeps_the_chain(llm: ScriptedLLM, llm_memory: AgenticMemory) -> None:
    mem = llm_memory
    llm.script(analysis())
    dog = mem.add("Alice adopted a dog.")
    llm.script(analysis(updates=[{"id": "c1", "context": "The dog is Max.", "add_tags": ["max"], "remove_tags": [],
                                  "reason": "named"}]))
    mem.add("Alice's dog is named Max.")
    assert mem.get(dog.id).context == "The dog is Max."
    reverted = mem.revert(dog.id, 1)
    assert (reverted.context, reverted.tags, reverted.version) == (dog.context, dog.tags, 3)
    versions = mem.history(dog.id).versions
    assert [v.version for v in versions] == [1, 2] and versions[1].context == "The dog is Max."
    assert versions[1].reason == "revert to version 1"
    with pytest.raises(Exception, match="has no version 7"):
        mem.revert(dog.id, 7)
    graph_is_sound(mem)


def test_revert_restores_absent_fields_and_the_analyser(settings: Settings, tenant: str, llm: ScriptedLLM) -> None:
    with AgenticMemory(settings, tenant=tenant) as offline:
        try:
            note = offline.add("Nate bought a turtle.")  # no category, no event time, heuristic analysis
            configured = replace(settings, llm=LLMSettings(background=False, base_url=llm.base_url, model="scripted", backoff_s=0))
            with AgenticMemory(configured, tenant=tenant) as online:
                assert online.reanalyze([note.id]) == [note.id]
                online.update(note.id, category="pets", event_time="2023-01-01T00:00:00Z")
                changed = online.get(note.id)
                assert (changed.analysis, changed.category, changed.version) == ("llm", "pets", 3)
                reverted = online.revert(note.id, 1)
            assert (reverted.category, reverted.event_time, reverted.context) == (None, None, note.context)
            assert (reverted.analysis, reverted.model, reverted.keywords) == ("heuristic", "heuristic-v1", note.keywords)
        finally:
            offline.admin.delete_tenant(tenant)


def test_an_update_against_a_stale_version_changes_nothing(memory: AgenticMemory) -> None:
    note = memory.add("Nate bought a turtle.")
    memory.update(note.id, context="first edit")
    with pytest.raises(EvolutionConflict):
        memory._store.write(memory.tenant, lambda tx: revise_if_current(
            tx, NoteRevision(note.id, {"context": "stale"}, "r"), note.version))
    after = memory.get(note.id)
    assert (after.context, after.version) == ("first edit", 2)


@pytest.mark.parametrize(
    "fault",
    [
        (Fault(429), Fault(429)),
        (Fault(500), Fault(502)),
        (Delay(2.0), Delay(2.0)),
        (Answer(None, refusal="I won't."),),
        # A complete, valid answer that the server marks as cut off: it must not be applied.
        (Answer(json.dumps({"keywords": ["x"], "context": "y", "tags": [], "links": [], "neighbour_updates": [
            {"id": "c1", "context": "HACK", "add_tags": [], "remove_tags": [], "reason": "r"}]}), finish_reason="length"),),
        (Answer("<<<not json>>>"),),
    ],
    ids=["429", "5xx", "timeout", "refusal", "truncated", "malformed"],
)
def test_llm_faults_store_a_degraded_note_and_no_llm_evolution(
    llm: ScriptedLLM, llm_memory: AgenticMemory, fault: tuple, caplog: pytest.LogCaptureFixture
) -> None:
    mem = llm_memory
    llm.script(analysis())
    neighbour = mem.add("Alice adopted a dog named Max.")
    llm.script(*fault)
    with caplog.at_level("WARNING", logger="amem_graph"):
        note = mem.add("Max the dog loves the beach.")
    assert note.analysis == "degraded" and note.keywords and note.context  # heuristic fields, not empty
    assert "HACK" not in mem.get(neighbour.id).context
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.getMessage().startswith("{")]
    degraded = [line for line in lines if line["event"] == "analysis_degraded"]
    assert degraded and degraded[0]["note_id"] == note.id and degraded[0]["kind"]
    graph_is_sound(mem)


def test_reanalyze_upgrades_heuristic_notes(settings: Settings, tenant: str, llm: ScriptedLLM) -> None:
    with AgenticMemory(settings, tenant=tenant) as offline:
        try:
            first = offline.add("Caroline went to a support group.")
            second = offline.add("Caroline says the support group helped her.")
            with pytest.raises(LLMNotConfigured):
                offline.reanalyze()
            configured = replace(settings, llm=LLMSettings(background=False, base_url=llm.base_url, model="scripted", backoff_s=0))
            with AgenticMemory(configured, tenant=tenant) as online:
                assert sorted(online.reanalyze()) == sorted([first.id, second.id])
                upgraded = online.get(second.id)
                assert (upgraded.analysis, upgraded.model) == ("llm", "scripted")
                assert any(v.reason == "reanalysis" for v in online.history(second.id).versions)
                assert online.reanalyze() == []  # nothing heuristic is left
                graph_is_sound(online)
        finally:
            offline.admin.delete_tenant(tenant)


def test_an_evolution_planned_on_a_stale_neighbour_is_refused_then_skipped(
    llm: ScriptedLLM, llm_memory: AgenticMemory
) -> None:
    """The lost-update guard, step by step: plan an evolution of A, let A change, then try to write."""
    mem = llm_memory
    llm.script(analysis())
    a = mem.add("Alice adopted a dog.")
    llm.script(analysis(updates=[{"id": "c1", "context": "The dog is Max.", "add_tags": [], "remove_tags": [],
                                  "reason": "named"}]))
    note = validation.note_input(NoteInput(content="Alice's dog is named Max."), 20_000)
    hits = mem._evolver._candidates(mem.tenant, note.content, mem.embedder.embed_one(note.content))
    write = mem._evolver._plan(note, mem.analyser.analyse(note, hits), hits)
    assert [r.id for r in write.revisions] == [a.id]
    mem.update(a.id, context="Edited meanwhile.")  # A moves on to version 2
    with pytest.raises(EvolutionConflict):
        mem._evolver._apply(mem.tenant, write, allow_stale=False)
    assert mem.stats(tenant=mem.tenant).labels["Note"] == 1  # the refused write left nothing
    outcome = mem._evolver._apply(mem.tenant, write, allow_stale=True)
    assert outcome.created and outcome.revised == () and outcome.decision["skipped_stale"] == [a.id]
    assert mem.get(a.id).context == "Edited meanwhile."  # the stale plan did not overwrite the edit
