"""The MemoryOS tiers against the real Neo4j: STM pages and chains, segments and heat, promotion to
notes and persona facts, retrieval across tiers, restarts, tenant isolation and LLM faults."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from amem_graph import AgenticMemory, InvalidInput, Settings
from amem_graph.bench.scripted_llm import Answer, Fault, Raw, ScriptedLLM, slow_answer
from amem_graph.core import validation
from amem_graph.errors import LLMNotConfigured
from amem_graph.settings import LLMSettings
from amem_graph.store.embedded.store import EmbeddedStore

from .conftest import tenant_graph

STORES = ("neo4j", "embedded")

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
DOG = ["I adopted a beagle named Max last week.", "My beagle Max loves chasing squirrels.",
       "Max the beagle chewed my shoes again.", "I took Max the beagle to the vet today."]
WORK = ["I work as a nurse at the city hospital.", "The hospital nurses work long night shifts.",
        "My nurse shifts at the hospital start at six."]


@pytest.fixture
def open_tiers(
    settings: Settings, tenant: str, store_kind: str, tmp_path: Path
) -> Iterator[Callable[..., AgenticMemory]]:
    """Opens memories with tier settings overridden (and a clock that tests move); cleans the tenant up.
    On the embedded store, each open is a restart: the store is closed and loaded again from its folder."""
    opened: list[AgenticMemory] = []
    stores: list[EmbeddedStore] = []

    def open_(llm: LLMSettings | None = None, **tiers: Any) -> AgenticMemory:
        custom = replace(settings, tiers=replace(settings.tiers, **tiers), llm=llm or settings.llm)
        if store_kind == "embedded":
            for store in stores:
                store.close()
            stores.append(EmbeddedStore(tmp_path / "embedded"))
        memory = AgenticMemory(custom, tenant=tenant, store=stores[-1] if stores else None)
        memory.tiers.clock = lambda: T0
        opened.append(memory)
        return memory

    yield open_
    opened[-1].admin.delete_tenant(tenant)
    for memory in opened:
        memory.close()  # closing twice is harmless
    for store in stores:
        store.close()


def at(memory: AgenticMemory, seconds: float) -> None:
    memory.tiers.clock = lambda: T0 + timedelta(seconds=seconds)


def test_stm_overflow_moves_exactly_the_oldest_page(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=3, promote_heat=100.0)
    pages = [memory.add_turn(text, "Noted.", session_id="s1") for text in [*DOG[:3]]]
    assert [p.seq for p in memory.tiers.stm(session_id="s1")] == [1, 2, 3]
    assert memory.tiers.segments() == []
    memory.add_turn(DOG[3], session_id="s1")  # one side empty: kept
    stm = memory.tiers.stm(session_id="s1")
    assert [p.seq for p in stm] == [2, 3, 4] and stm[-1].assistant_text == ""
    [segment] = memory.tiers.segments()
    assert [p.id for p in memory.tiers.segment_pages(segment.id)] == [pages[0].id]
    assert memory.tiers.stm(session_id="other") == []  # STM is per session


def test_an_empty_turn_is_refused_and_writes_nothing(
    open_tiers: Callable[..., AgenticMemory], count_nodes: Callable[[str], int], tenant: str
) -> None:
    memory = open_tiers()
    before = count_nodes(tenant)
    for user, assistant in (("", ""), ("  ", "\n"), ("bad \x00 byte", "")):
        with pytest.raises(InvalidInput):
            memory.add_turn(user, assistant)
    with pytest.raises(InvalidInput):
        memory.add_turn("fine", session_id="")
    assert count_nodes(tenant) == before


def test_continuing_turns_share_a_chain_and_a_new_topic_starts_one(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(promote_heat=100.0)
    first = memory.add_turn(DOG[0], "Beagles are great.", session_id="s1")
    second = memory.add_turn(DOG[1], "That is what beagles do.", session_id="s1")
    third = memory.add_turn("What do you think about quantum computing hardware?", "Qubits are fragile.", session_id="s1")
    assert second.chain_id == first.chain_id and "beagle" in second.chain_summary.lower()
    assert third.chain_id != first.chain_id
    assert memory.add_turn(DOG[2], session_id="s2").chain_id not in {first.chain_id, third.chain_id}  # chains stay in a session
    stm = memory.tiers.stm(session_id="s1")
    assert [p.chain_id for p in stm] == [first.chain_id, first.chain_id, third.chain_id]
    assert stm[1].chain_summary == second.chain_summary  # kept in the graph, read back


def test_a_page_joins_a_segment_only_above_the_merge_threshold(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=100.0)
    for text in [DOG[0], DOG[1], "The central bank raised interest rates by half a point.", "done"]:
        memory.add_turn(text, session_id="s1")
    segments = {s.pages: s for s in memory.tiers.segments()}
    assert sorted(segments) == [1, 2]  # the two beagle turns merged; the bank turn started its own segment
    assert "beagle" in segments[2].keywords and "beagle" in segments[2].summary
    strict = open_tiers(stm_capacity=1, promote_heat=100.0, merge_threshold=1.9)
    for text in [DOG[2], DOG[3], "done"]:
        strict.add_turn(text, session_id="s2")
    assert sorted(s.pages for s in strict.tiers.segments()) == [1, 1, 1, 2]  # nothing reaches 1.9


def test_heat_decays_with_time_and_a_visit_warms_a_segment(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=100.0, heat_mu=100.0)
    for text in [DOG[0], WORK[0], "done"]:
        memory.add_turn(text, session_id="s1")
    fresh = {s.summary: s.heat for s in memory.tiers.segments()}
    assert all(h == pytest.approx(2.0) for h in fresh.values())  # one page (beta) + recency 1 (gamma)
    at(memory, 1_000)  # ten mu later: recency e^-10
    assert all(s.heat == pytest.approx(1.0, abs=1e-3) for s in memory.tiers.segments())
    memory.context_for("Tell me about the beagle Max", segments=1, notes=0)
    heats = {s.keywords[0]: s for s in memory.tiers.segments()}
    dog = next(s for s in heats.values() if "beagle" in s.keywords)
    assert dog.visits == 1 and dog.heat == pytest.approx(3.0)  # a visit, a page, and recency again 1
    assert sorted(s.heat for s in heats.values())[0] == pytest.approx(1.0, abs=1e-3)  # the other one stayed cold


def test_every_hot_segment_is_promoted_in_one_pass(open_tiers: Callable[..., AgenticMemory], tenant: str) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=100.0)
    for text in [*DOG[:2], *WORK[:2], "The central bank raised interest rates.", "done"]:
        memory.add_turn(text, session_id="s1")
    assert sorted(s.pages for s in memory.tiers.segments()) == [1, 2, 2]
    memory.tiers.settings = replace(memory.tiers.settings, promote_heat=2.5)  # both two-page segments are hot
    promotions = memory.tiers.promote()
    assert len(promotions) == 2 and all(len(p.note_ids) == 2 for p in promotions)
    promoted = {s.id: s for s in memory.tiers.segments() if s.promotions}
    assert set(promoted) == {p.segment_id for p in promotions}
    assert all(s.visits == 0 and s.interaction_len == 0 and s.heat < 2.5 for s in promoted.values())  # reset
    for promotion in promotions:
        pages = {p.id for p in memory.tiers.segment_pages(promotion.segment_id)}
        for note_id in promotion.note_ids:
            note = memory.get(note_id)
            assert note.source and note.source.removeprefix("page:") in pages and note.analysis == "heuristic"
    nodes, rels = tenant_graph(memory)  # provenance in the graph: each note -> its page and segment
    sources = [
        (nodes[r["start"]]["props"]["id"], nodes[r["end"]]["labels"][0], nodes[r["end"]]["props"]["id"])
        for r in rels if r["type"] == "DERIVED_FROM" and nodes[r["start"]]["labels"] == ["Note"]
    ]
    expected = {(note_id, "Segment", p.segment_id) for p in promotions for note_id in p.note_ids}
    assert expected <= set(sources)
    assert sum(label == "Page" for _, label, _ in sources) == 4
    assert memory.tiers.promote() == []  # cooled down: nothing more to promote


def test_a_segment_is_claimed_once_by_concurrent_promotions(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=100.0)
    for text in DOG[:3]:
        memory.add_turn(text, session_id="s1")
    [segment] = memory.tiers.segments()  # two beagle pages, read by two would-be promoters
    claim = partial(memory.tiers._claim, segment=segment, now=T0)
    assert memory._store.write(memory.tenant, claim)
    assert not memory._store.write(memory.tenant, claim)  # the second one backs off
    memory.add_turn(DOG[3], session_id="s1")  # the third beagle page joins after the claim: it counts
    [after] = memory.tiers.segments()
    assert after.promotions == 1 and after.visits == 0 and after.interaction_len == 1


def test_persona_facts_are_deduplicated_and_updated_with_history(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=1.5)  # every segment is promoted as soon as a page joins
    for text in ["I live in Boston.", "I love hiking in the mountains.", "I love hiking in the mountains!",
                 "I live in Seattle now.", "done"]:
        memory.add_turn(text, session_id="s1")
    facts = {f.text: f for f in memory.tiers.persona(kinds=["profile"])}
    assert set(facts) == {"I love hiking in the mountains.", "I live in Seattle now."}
    assert facts["I love hiking in the mountains."].mentions == 2
    assert len(facts["I live in Seattle now."].page_ids) == 1
    assert len(memory._store.read(memory.tenant, lambda tx: tx.facts("assistant", limit=100))) == 2  # the Boston fact is no longer active...
    nodes, rels = tenant_graph(memory)
    old = [(nodes[r["start"]]["props"], nodes[r["end"]]["props"], r["props"]) for r in rels
           if r["type"] == "SUPERSEDED_BY" and nodes[r["start"]]["labels"] == ["Fact"]]
    assert [(o["text"], n["text"], o.get("invalid_at") is not None) for o, n, _ in old] == [
        ("I live in Boston.", "I live in Seattle now.", True)]
    assert "Boston" in old[0][2]["reason"]  # ...it is kept, invalidated, as history
    with pytest.raises(InvalidInput):
        memory.tiers.persona(kinds=["hobbies"])


def test_facts_that_only_start_alike_are_both_kept(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=1.5)
    said = ["I have a dog named Max.", "I have a cat named Luna.", "I play the guitar every day.",
            "I play the piano every day."]
    for text in [*said, "done"]:
        memory.add_turn(text, session_id="s1")
    assert sorted(f.text for f in memory.tiers.persona()) == sorted(said)  # none replaced another


def test_capacities_archive_instead_of_deleting(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=100.0, segment_capacity=2)
    for second, text in enumerate([DOG[0], WORK[0], "The central bank raised interest rates.", "done"]):
        at(memory, second)
        memory.add_turn(text, session_id="s1")
    active = memory.tiers.segments()
    everything = memory.tiers.segments(include_archived=True)
    assert len(active) == 2 and len(everything) == 3
    archived = next(s for s in everything if s.archived_at is not None)
    assert "beagle" in archived.keywords  # the coldest: the oldest, never visited
    assert memory.tiers.segment_pages(archived.id)  # its page is kept


def test_context_for_assembles_every_tier(open_tiers: Callable[..., AgenticMemory]) -> None:
    memory = open_tiers(stm_capacity=2, promote_heat=2.5)
    for text in [*DOG, *WORK]:
        memory.add_turn(text, "I see.", session_id="s1")
    context = memory.context_for("What is the name of my beagle?", session_id="s1")
    assert [p.user_text for p in context.stm] == WORK[1:]
    assert context.segments and any("beagle" in hit.segment.summary for hit in context.segments)
    assert any("Max" in p.page.user_text for hit in context.segments for p in hit.pages)
    assert context.notes and context.notes[0].note.source.startswith("page:")
    assert any(hit.fact.kind == "profile" for hit in context.facts)
    block = context.prompt()
    for section in ("short-term memory", "mid-term memory", "persona", "notes"):
        assert section in block
    ranked = context.ranked_pages()
    assert len(ranked) == len(set(ranked)) and context.to_dict()["ranked_pages"] == ranked
    dog_page = next(p.page.id for hit in context.segments for p in hit.pages if "named Max" in p.page.user_text)
    assert dog_page in ranked[:3]
    assert any(f.uses for f in memory.tiers.persona())  # the facts a context used are counted
    visits = {s.id: s.visits for s in memory.tiers.segments()}
    for bad in ({"segments": -1}, {"hops": 9}, {"notes": -1}, {"session_id": ""}):
        with pytest.raises(InvalidInput):
            memory.context_for("beagle", **bad)
    assert {s.id: s.visits for s in memory.tiers.segments()} == visits  # refused before anything was written


def test_the_tiers_survive_a_restart(open_tiers: Callable[..., AgenticMemory]) -> None:
    first = open_tiers(stm_capacity=2, promote_heat=100.0)
    for text in DOG[:3]:
        first.add_turn(text, session_id="s1")
    before = (first.tiers.stm(session_id="s1"), first.tiers.segments())
    first.close()
    second = open_tiers(stm_capacity=2, promote_heat=100.0)
    assert (second.tiers.stm(session_id="s1"), second.tiers.segments()) == before
    page = second.add_turn(DOG[3], session_id="s1")
    assert page.seq == 4 and page.chain_id == before[0][-1].chain_id  # the chain goes on across the restart
    assert sum(s.pages for s in second.tiers.segments()) == 2


def test_no_page_or_fact_of_one_tenant_is_reachable_from_another(
    open_tiers: Callable[..., AgenticMemory], settings: Settings, tenant: str
) -> None:
    memory = open_tiers(stm_capacity=1, promote_heat=1.5)
    for text in ["I live in Boston.", *DOG[:2], "done"]:
        memory.add_turn(text, "I will remember that.", session_id="s1")
    other = f"{tenant}-other"
    try:
        memory.add_turn("I collect vintage stamps.", "I will remember that.", tenant=other, session_id="s1")
        context = memory.context_for("Where do I live? What is my beagle called?", tenant=other, session_id="s1")
        seen = [context.prompt(), *(p.user_text for p in context.stm)]
        assert not any("Boston" in text or "beagle" in text for text in seen)
        assert context.segments == () and context.facts == () and context.notes == ()
        theirs = {p.id for p in memory.tiers.pages(tenant=other)}
        found = {hit.page.id for hit in (*context.matched, *context.similar)} | set(context.ranked_pages())
        assert context.similar and found <= theirs  # the page searches stay in the tenant
        assert memory.tiers.persona(tenant=other) == [] and memory.tiers.segments(tenant=other) == []
        assert memory.tiers.persona()  # the first tenant has its facts
    finally:
        memory.admin.delete_tenant(other)



def test_llm_faults_store_no_error_strings_and_lose_no_page(
    open_tiers: Callable[..., AgenticMemory], llm: ScriptedLLM, tenant: str
) -> None:
    memory = open_tiers(
        LLMSettings(background=False, base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0, max_retries=0),
        stm_capacity=1, promote_heat=1.5,
    )
    error = "Error: scripted failure 500"
    llm.script(Fault(500, message=error), Raw(b'{"choices": [{"message": {"content": "Error: rate limited"}}]}'),
               Answer('{"continues": "maybe", "chain_summary": 7, "keywords": "x"}'), Fault(503, message=error),
               Answer("Error: the model is overloaded"), Fault(500, message=error))
    for text in ["I live in Boston.", "I love hiking in the mountains.", "done"]:
        memory.add_turn(text, "Noted, thank you.", session_id="s1")
    assert [p.user_text for p in memory.tiers.stm(session_id="s1")] == ["done"]
    # Every property of every memory node but what was said (a page's sides and neighbourhood) and the
    # Evolution audit records (which keep why an analysis degraded, on purpose): no text of a failure.
    said = {"user_text", "assistant_text", "neighbourhood", "embedding"}
    nodes, _ = tenant_graph(memory, tenant)
    derived = " ".join(str(v) for n in nodes.values() if "Evolution" not in n["labels"]
                       for k, v in n["props"].items() if k not in said)
    assert not re.search(r"error|rate limited|overloaded|scripted failure", derived, re.IGNORECASE)
    pages = memory.tiers.pages()
    assert [p.user_text for p in pages] == ["I live in Boston.", "I love hiking in the mountains.", "done"]
    assert sum(s.pages for s in memory.tiers.segments()) == 2  # no page lost on the way to the segments
    assert "degraded" in {p.analysis for p in pages} | {s.analysis for s in memory.tiers.segments()}
    assert any(f.analysis == "llm" for f in memory.tiers.persona())  # answers that fit were still used


def test_the_llm_path_analyses_turns_and_respond_answers_and_remembers(
    open_tiers: Callable[..., AgenticMemory], llm: ScriptedLLM
) -> None:
    memory = open_tiers(LLMSettings(background=False, base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0),
                        stm_capacity=1, promote_heat=1.5)
    first = memory.add_turn(DOG[0], "Lovely!", session_id="s1")
    second = memory.add_turn(DOG[1], "Fun.", session_id="s1")
    assert first.analysis == "llm" and second.chain_id == first.chain_id and second.chain_summary.startswith("Talk about")
    assert any(f.text == DOG[0] and f.analysis == "llm" for f in memory.tiers.persona())
    reply = memory.respond("What is my dog called?", session_id="s1")
    assert reply.startswith("You said")
    assert memory.tiers.stm(session_id="s1")[-1].assistant_text == reply
    prompt = next(r for r in reversed(llm.requests) if r["response_format"]["json_schema"]["name"] == "respond")
    assert "beagle" in prompt["messages"][0]["content"]  # the tiers' context went to the model
    llm.script(Fault(500), Fault(500), Fault(500), Fault(500))
    with pytest.raises(Exception) as failure:
        memory.respond("Where do I live?", session_id="s1")
    assert failure.type.__name__ == "LLMError"
    assert memory.tiers.stm(session_id="s1")[-1].user_text == "Where do I live?"  # the question is kept


def test_a_turn_in_the_background_returns_before_the_model_and_settles_behind_it(
    open_tiers: Callable[..., AgenticMemory],
) -> None:
    with ScriptedLLM(slow_answer(0.3)) as slow:
        memory = open_tiers(LLMSettings(base_url=slow.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0),
                            stm_capacity=1, promote_heat=1.5)
        first = memory.add_turn(DOG[0], "Lovely!", session_id="s1")
        second = memory.add_turn(DOG[1], "Fun.", session_id="s1")
        # Chained by the offline rule, no call waited for: the model answers in 0.3 s.
        assert first.analysis == second.analysis == "heuristic"
        assert not any(r["response_format"]["json_schema"]["name"] == "tier_turn" for r in slow.requests)
        assert memory.wait(60) and memory.tiers.settling() == 0
        assert [p.user_text for p in memory.tiers.stm(session_id="s1")] == [DOG[1]]
        segments = memory.tiers.segments()
        assert sum(s.pages for s in segments) == 1 and {s.analysis for s in segments} == {"llm"}
        assert any(f.text == DOG[0] and f.analysis == "llm" for f in memory.tiers.persona())
        assert memory.stats().queue["settling"] == 0


def test_turns_a_close_leaves_unsettled_settle_with_the_sessions_next_turn(
    open_tiers: Callable[..., AgenticMemory],
) -> None:
    with ScriptedLLM(slow_answer(0.5)) as slow:
        settings = LLMSettings(base_url=slow.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0)
        memory = open_tiers(settings, stm_capacity=1, promote_heat=100.0)
        for text in ("I walk Max every morning.", "Max is a beagle.", "I live in Boston.", "I play chess."):
            memory.add_turn(text, "Noted.", session_id="s1")
        memory.tiers.close(timeout=0.0)  # as a process that stops: what has not settled stays short-term
        assert len(memory.tiers.stm(session_id="s1")) > 1
        again = open_tiers(settings, stm_capacity=1, promote_heat=100.0)
        again.add_turn("I like tea.", "Noted.", session_id="s1", background=False)
        assert [p.user_text for p in again.tiers.stm(session_id="s1")] == ["I like tea."]
        assert sum(s.pages for s in again.tiers.segments()) == 4  # no page lost on the way


def test_respond_needs_an_llm(open_tiers: Callable[..., AgenticMemory]) -> None:
    with pytest.raises(LLMNotConfigured):
        open_tiers().respond("hello")


def test_of_two_values_proposed_together_the_later_is_kept(memory: AgenticMemory) -> None:
    from amem_graph.models import ProposedFact
    from amem_graph.tiers import persona

    proposed = [ProposedFact("profile", "I live in Boston.", "p1"), ProposedFact("profile", "I love jazz.", "p1"),
                ProposedFact("profile", "I live in Seattle now.", "p2")]
    writes = persona.decide(proposed, memory.embedder.embed([p.text for p in proposed]), [], assistant="a",
                            analysis="heuristic", model=None)
    assert [w.text for w in writes] == ["I love jazz.", "I live in Seattle now."]


def test_context_for_as_of_answers_from_the_tiers_of_then(open_tiers: Callable[..., AgenticMemory]) -> None:
    """The oracle is the memory itself: after each turn the plain reads of every tier are recorded with the
    moment; `context_for` as of each moment must hold exactly what they held, and count nothing."""
    memory = open_tiers(stm_capacity=1, promote_heat=1.5)  # a page joins a segment, which is promoted, a turn later
    memory.tiers.clock = validation.now  # pages, segments and facts on the clock the notes use
    said = ["I live in Boston.", "I love hiking in the mountains.", "I live in Seattle now.", "done"]
    seen: list[tuple[datetime, dict[str, Any]]] = []
    start = validation.now()
    time.sleep(0.005)
    for text in said:
        memory.add_turn(text, "Noted.", session_id="s1")
        time.sleep(0.005)  # times are kept to the millisecond
        seen.append((validation.now(), {
            "stm": [p.user_text for p in memory.tiers.stm(session_id="s1")],
            "facts": sorted(f.text for f in memory.tiers.persona()),
            "segments": sorted(s.id for s in memory.tiers.segments()),
            "notes": sorted(n.id for n in memory.list(limit=100)),
        }))
        time.sleep(0.005)
    assert seen[1][1]["facts"] == ["I live in Boston."] and "I live in Boston." not in seen[3][1]["facts"]
    visits = {s.id: s.visits for s in memory.tiers.segments()}
    uses = {f.id: f.uses for f in memory.tiers.persona()}
    limits = {"segments": 100, "facts": 100, "notes": 100, "matches": 100, "pages": 100}
    for moment, held in seen:
        then = memory.context_for("Where do I live?", as_of=moment, **limits)
        assert then.session_id == "s1" and [p.user_text for p in then.stm] == held["stm"]
        assert all(p.tier == "stm" and p.segment_id is None for p in then.stm)
        assert sorted(hit.fact.text for hit in then.facts) == held["facts"]
        assert sorted(hit.segment.id for hit in then.segments) == held["segments"]
        assert {hit.note.id for hit in then.notes} <= set(held["notes"])
        pages = {hit.page.id: hit.page for hit in (*then.similar, *then.matched)}
        stm_then = {p.id for p in then.stm}
        assert {p.user_text for p in pages.values()} == set(said[: seen.index((moment, held)) + 1])
        for page in pages.values():  # each page as it was then: short-term, or in the segment it had joined
            assert (page.segment_id is None) == (page.id in stm_then)
            assert page.segment_id is None or page.segment_id in held["segments"]
    before = memory.context_for("Where do I live?", as_of=start, **limits)
    assert (before.stm, before.facts, before.segments, before.notes, before.similar) == ((), (), (), (), ())
    assert {s.id: s.visits for s in memory.tiers.segments()} == visits  # reading the past is no visit
    assert {f.id: f.uses for f in memory.tiers.persona()} == uses
    now, plain = validation.now(), memory.context_for("Where do I live?", **limits)
    latest = memory.context_for("Where do I live?", as_of=now, **limits)
    assert replace(latest, segments=(), facts=()) == replace(plain, segments=(), facts=())  # as of now is the plain call
    assert [(h.segment.id, h.score, h.pages) for h in latest.segments] == [(h.segment.id, h.score, h.pages) for h in plain.segments]
    assert [(h.fact.id, h.score) for h in latest.facts] == [(h.fact.id, h.score) for h in plain.facts]  # (but its uses)
    with pytest.raises(InvalidInput):
        memory.context_for("beagle", as_of="not a time")
