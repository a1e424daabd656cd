"""A tenant's memory depends on that tenant alone: over random histories of its writes (adds in sessions, updates,
deletes, imports), interleaved before, between and after with the writes of an adversarial neighbour that repeats
the tenant's query words thousands of times, the tenant's search hits (ids, order, scores), its context and the
links its adds make are exactly those of the same history written with no neighbour at all."""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import amem_graph.store.neo4j_notes as neo4j_notes
from amem_graph import AgenticMemory
from amem_graph.models import NoteInput

STORES = ("neo4j", "embedded")

QUERIES = (
    "Where did Caroline walk the dog?",
    "guitar lessons on Friday",
    "What did Melanie paint at the beach",
    "school trip with friends",
)
SPEAKERS = ("Caroline", "Melanie")
WORDS = ("dog walk park guitar lesson Friday paint beach school trip friend sunset pottery camping museum "
         "adoption concert library marathon kitten recipe garden").split()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))


def tenant_history(seed: int) -> list[tuple[Any, ...]]:
    """The tenant's writes, by local name (n0, n1, ...): adds in two sessions, updates, deletes and imports."""
    rng = random.Random(seed)
    steps: list[tuple[Any, ...]] = []
    made: list[str] = []
    for i in range(rng.randint(14, 20)):
        roll = rng.random()
        if roll < 0.6 or len(made) < 3:
            name = f"n{i:03d}"
            speaker = rng.choice(SPEAKERS)
            steps.append(("add", name, f"{speaker}: {sentence(rng)}", rng.choice(("s1", "s2")), speaker))
            made.append(name)
        elif roll < 0.75:
            steps.append(("update", rng.choice(made), sentence(rng), (rng.choice(WORDS), rng.choice(WORDS))))
        elif roll < 0.85:
            gone = made.pop(rng.randrange(len(made)))
            steps.append(("delete", gone))
        else:
            names = [f"n{i:03d}i{j}" for j in range(rng.randint(2, 5))]
            steps.append(("import", [(name, sentence(rng)) for name in names]))
            made += names
    return steps


def neighbour_history(seed: int, count: int) -> list[list[tuple[Any, ...]]]:
    """What the neighbour writes before each of the tenant's `count` steps and after the last: the tenant's query
    words again and again (adds, imports, updates and deletes of its own notes), or nothing."""
    rng = random.Random(seed + 1000)
    query_words = " ".join(QUERIES).replace("?", "").split()
    bursts: list[list[tuple[Any, ...]]] = []
    for _ in range(count + 1):
        burst: list[tuple[Any, ...]] = []
        if rng.random() < 0.4:
            flood = " ".join(rng.choice(query_words) for _ in range(rng.randint(200, 600)))
            burst.append(("add", flood))
            burst.append(("import", [" ".join(rng.choice(query_words) for _ in range(30)) for _ in range(rng.randint(5, 40))]))
            if rng.random() < 0.5:
                burst.append(("update", " ".join(rng.choice(query_words) for _ in range(100))))
            if rng.random() < 0.3:
                burst.append(("delete",))
        bursts.append(burst)
    return bursts


def run_neighbour(memory: AgenticMemory, burst: list[tuple[Any, ...]], held: list[str]) -> None:
    for step in burst:
        if step[0] == "add":
            held.append(memory.add(step[1], session="flood", speaker="Caroline").id)
        elif step[0] == "import":
            held += memory.add_many([NoteInput(content=text, session="flood") for text in step[1]])
        elif step[0] == "update" and held:
            memory.update(held[-1], context=step[1], keywords=step[1].split()[:5])
        elif step[0] == "delete" and held:
            memory.delete(held.pop(0))


def observe(memory: AgenticMemory, tenant: str, seed: int, neighbour: Callable[[int], None]) -> dict[str, Any]:
    """Write the tenant's history (the neighbour's burst before each step and after the last); what its adds
    linked and what its searches find, by local name."""
    ids: dict[str, str] = {}
    local = {}
    links: list[Any] = []
    for number, step in enumerate(tenant_history(seed)):
        neighbour(number)
        if step[0] == "add":
            ids[step[1]] = f"{tenant}-{step[1]}"
            local[ids[step[1]]] = step[1]
            note = memory.add(step[2], id=ids[step[1]], session=step[3], speaker=step[4])
            links.append((step[1], sorted((local[link.target_id], link.type, link.reason) for link in note.links)))
        elif step[0] == "update":
            memory.update(ids[step[1]], context=step[2], keywords=step[3])
        elif step[0] == "delete":
            memory.delete(ids[step[1]])
        else:
            for name, _ in step[1]:
                ids[name] = f"{tenant}-{name}"
                local[ids[name]] = name
            memory.add_many([NoteInput(content=text, id=ids[name], session="s3") for name, text in step[1]])
    neighbour(len(tenant_history(seed)))
    found = {}
    for query in QUERIES:
        hits = memory.search(query, k=10)
        found[query] = [
            (local[hit.note.id], round(hit.score, 6), None if hit.fulltext_score is None else round(hit.fulltext_score, 6),
             None if hit.vector_score is None else round(hit.vector_score, 6))
            for hit in hits
        ]
        found[query, "fulltext"] = [(local[h.note.id], round(h.score, 6)) for h in memory.search(query, k=10, mode="fulltext")]
        context = memory.context(query)
        for note_id, name in local.items():
            context = context.replace(note_id, name)
        found[query, "context"] = context
    return {"links": links, "found": found}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_a_tenants_results_are_those_it_would_get_alone(
    memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory], seed: int,
) -> None:
    run = uuid.uuid4().hex[:8]
    alone, crowded, flooder = f"alone-{run}", f"crowded-{run}", f"flood-{run}"
    with open_memory(alone) as first, open_memory(crowded) as second, open_memory(flooder) as neighbour:
        try:
            expected = observe(first, alone, seed, lambda _: None)
            bursts = neighbour_history(seed, len(tenant_history(seed)))
            held: list[str] = []
            got = observe(second, crowded, seed, lambda number: run_neighbour(neighbour, bursts[number], held))
            assert held, "the neighbour wrote nothing"
        finally:
            for tenant in (alone, crowded, flooder):
                memory.admin.delete_tenant(tenant)
    assert any(expected["found"][query] for query in QUERIES), "the searches found nothing: the test tests nothing"
    assert got["links"] == expected["links"]
    for key, hits in expected["found"].items():
        assert got["found"][key] == hits, key


@pytest.mark.slow
@pytest.mark.neo4j_only  # it compares Neo4j, crowded, with an embedded store of the tenant alone
def test_both_stores_rank_a_tenants_notes_alike(
    memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory], embedded_settings, embedded_share,
) -> None:
    run = uuid.uuid4().hex[:8]
    on_neo4j, flooder, alone = f"neo-{run}", f"flood-{run}", f"emb-{run}"
    seed = 3
    bursts = neighbour_history(seed, len(tenant_history(seed)))
    held: list[str] = []
    with open_memory(on_neo4j) as server, open_memory(flooder) as neighbour:
        try:
            crowded = observe(server, on_neo4j, seed, lambda number: run_neighbour(neighbour, bursts[number], held))
        finally:
            for tenant in (on_neo4j, flooder):
                memory.admin.delete_tenant(tenant)
    with AgenticMemory(embedded_settings, tenant=alone, store=embedded_share.store()) as embedded:
        single = observe(embedded, alone, seed, lambda _: None)
    assert crowded["links"] == single["links"]
    for query in QUERIES:
        for key in (query, (query, "fulltext")):
            assert [hit[0] for hit in crowded["found"][key]] == [hit[0] for hit in single["found"][key]], key
            assert scores(crowded["found"][key]) == pytest.approx(scores(single["found"][key]), abs=2e-6), key


def scores(hits: list[tuple[Any, ...]]) -> list[float]:
    """A search's scores in a row (-1 for an index that did not find a hit)."""
    return [-1.0 if value is None else value for hit in hits for value in hit[1:]]


# -- past the candidate cuts: histories drawn by hypothesis ---------------------------------------------------------

DRAWN = settings(max_examples=int(os.environ.get("AMEM_ISOLATION_EXAMPLES", "3")), deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                        HealthCheck.data_too_large])
QUERY_WORDS = sorted({w.lower().strip("?") for q in QUERIES for w in q.split()} | set(WORDS))

words = st.lists(st.sampled_from(QUERY_WORDS), min_size=3, max_size=14).map(" ".join)


@st.composite
def crowded_histories(draw: Any) -> dict[str, Any]:
    """A tenant of 60 to 140 notes, most of them holding the queries' words (past the 50 keyword candidates Lucene
    hands over), in sessions, then updates and deletes; and a neighbour's floods of the same words, written before,
    between and after, in bulk and one by one."""
    notes = draw(st.lists(st.tuples(st.sampled_from(SPEAKERS), words, st.sampled_from(("s1", "s2", None))),
                          min_size=60, max_size=140))
    changes = draw(st.lists(st.tuples(st.sampled_from(("update", "delete")), st.integers(0, 10**6), words),
                            max_size=8))
    floods = draw(st.lists(st.lists(words, min_size=1, max_size=300), min_size=3, max_size=3))
    return {"notes": notes, "changes": changes, "floods": floods}


def _drawn_history(memory: AgenticMemory, tenant: str, history: dict[str, Any],
                   flood: Callable[[int], None]) -> dict[str, Any]:
    flood(0)
    rows = [NoteInput(content=f"{speaker}: {text} {i}", id=f"{tenant}-n{i}", session=session, speaker=speaker)
            for i, (speaker, text, session) in enumerate(history["notes"])]
    half = len(rows) // 2
    memory.add_many(rows[:half])
    flood(1)
    memory.add_many(rows[half:])
    held = [row.id for row in rows]
    for kind, pick, text in history["changes"]:
        target = held[pick % len(held)]
        if kind == "update":
            memory.update(target, context=text, keywords=text.split()[:4])
        elif len(held) > 1:
            memory.delete(target)
            held.remove(target)
    flood(2)
    local = {f"{tenant}-n{i}": f"n{i}" for i in range(len(rows))}
    found: dict[Any, Any] = {}
    for query in QUERIES:
        for mode in ("hybrid", "fulltext", "vector"):
            found[query, mode] = [(local[h.note.id], round(h.score, 6)) for h in memory.search(query, k=10, mode=mode)]
    return found


@pytest.mark.slow
@DRAWN
@given(history=crowded_histories())
def test_isolation_holds_past_the_candidate_cuts(
    memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory], monkeypatch: pytest.MonkeyPatch,
    history: dict[str, Any],
) -> None:
    """Tenants past the keyword candidates Lucene hands over, searched through the shared vector index (forced on
    Neo4j: no exact scan of a small tenant), with a neighbour flooding the same words: a tenant's hits and scores,
    by every mode, are those it gets with no neighbour writing."""
    monkeypatch.setattr(neo4j_notes, "EXACT_NOTES", 0)
    monkeypatch.setattr(neo4j_notes, "EXACT_PASSAGES", 0)
    run = uuid.uuid4().hex[:8]
    alone, crowded, flooder = f"alone-{run}", f"crowded-{run}", f"flood-{run}"
    with open_memory(alone) as first, open_memory(crowded) as second, open_memory(flooder) as neighbour:
        def flood(step: int) -> None:
            texts = history["floods"][step]
            neighbour.add_many([NoteInput(content=f"Caroline: {t} {step}-{i}") for i, t in enumerate(texts)])
            if texts:
                neighbour.add(" ".join(texts)[:20_000], speaker="Caroline")

        try:
            expected = _drawn_history(first, alone, history, lambda _: None)
            got = _drawn_history(second, crowded, history, flood)
        finally:
            for tenant in (alone, crowded, flooder):
                memory.admin.delete_tenant(tenant)
    assert any(expected.values()), "the searches found nothing: the test tests nothing"
    moved = {key: (expected[key], got[key]) for key in expected if got[key] != expected[key]}
    assert not moved, f"{len(moved)} of {len(expected)} searches moved: {sorted(moved)}"
