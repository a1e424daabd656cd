"""Retrieval on small hand-made graphs, against the real Neo4j: expansion, decay, filters, provenance,
sessions and the neighbourhood each note keeps."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timezone

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.errors import InvalidInput
from amem_graph.models import NoteInput
from amem_graph.read.retrieval import Retriever, Speakers, Tuning, format_context, without_names
from amem_graph.store.lucene import lucene_query

STORES = ("neo4j", "embedded")


def chain(memory: AgenticMemory) -> dict[str, str]:
    """seed --RELATES_TO(0.9)--> middle --ELABORATES(0.8)--> far, plus an unlinked bystander.
    Only `seed` holds the query's words; bulk import keeps the analyser from adding links of its own."""
    texts = {
        "seed": "The observatory dome was repainted in cobalt blue.",
        "middle": "Volunteers spent the weekend on scaffolding.",
        "far": "Marguerite baked lemon cakes for everyone.",
        "bystander": "Traffic on the bridge was slow this morning.",
    }
    ids = dict(zip(texts, memory.add_many([NoteInput(t, source=name) for name, t in texts.items()]), strict=True))
    memory.link(ids["seed"], ids["middle"], "RELATES_TO", reason="same repair project", confidence=0.9)
    memory.link(ids["middle"], ids["far"], "ELABORATES", reason="fed the volunteers", confidence=0.8)
    return ids


def test_expansion_reaches_a_two_hop_note_that_no_seed_reaches(memory: AgenticMemory) -> None:
    ids = chain(memory)
    query = "observatory dome cobalt"
    assert [h.note.id for h in memory.search(query, mode="fulltext", hops=0)] == [ids["seed"]]
    one = {h.note.id for h in memory.search(query, mode="fulltext", hops=1)}
    assert one == {ids["seed"], ids["middle"]}
    hits = {h.note.id: h for h in memory.search(query, mode="fulltext", hops=2)}
    assert set(hits) == {ids["seed"], ids["middle"], ids["far"]}  # never the unlinked bystander
    far = hits[ids["far"]]
    assert [(s.from_id, s.type, s.reason) for s in far.path] == [
        (ids["seed"], "RELATES_TO", "same repair project"), (ids["middle"], "ELABORATES", "fed the volunteers"),
    ]
    assert far.vector_score is None and far.fulltext_score is None and hits[ids["seed"]].path == ()
    assert far.to_dict()["hops"] == 2 and far.to_dict()["path"][1]["confidence"] == 0.8


def test_scores_decay_per_hop_and_with_confidence_and_type(memory: AgenticMemory) -> None:
    ids = chain(memory)
    hits = {h.note.id: h for h in memory.search("observatory dome cobalt", mode="fulltext", hops=2)}
    seed, middle, far = (hits[ids[n]].score for n in ("seed", "middle", "far"))
    tuning = Tuning()
    assert middle == pytest.approx(seed * tuning.decay * tuning.weights["RELATES_TO"] * 0.9)
    assert far == pytest.approx(middle * tuning.decay * tuning.weights["ELABORATES"] * 0.8)
    assert seed > middle > far
    # A type without a weight is not followed at all.
    retriever = Retriever(memory._store, memory.embedder, replace(tuning, weights={"RELATES_TO": 0.5}))
    try:
        reached = {h.note.id for h in retriever.search(memory.tenant, "observatory dome cobalt", k=10, mode="fulltext")}
    finally:
        retriever.close()
    assert reached == {ids["seed"], ids["middle"]}


def retire(memory: AgenticMemory, source: str, target: str, kind: str) -> None:
    """Invalidate a link as the link budget would (invalid_at set), in whichever store holds it."""
    if memory.admin.kind == "embedded":
        graph = memory._store.graph
        start = graph.unique("Note", id=source)
        rel = next(r for r in graph.relationships(start, [kind]) if graph.nodes[r.end].props["id"] == target)
        with graph.transaction():
            graph.set_rel(rel, invalid_at=datetime.now(timezone.utc))
        return
    with memory._store._driver.session() as session:
        session.run(
            f"MATCH (:Note {{id: $a}})-[r:{kind}]->(:Note {{id: $b}}) SET r.invalid_at = datetime()", a=source, b=target,
        ).consume()


def test_invalid_links_are_not_followed(memory: AgenticMemory) -> None:
    ids = chain(memory)
    retire(memory, ids["middle"], ids["far"], "ELABORATES")
    assert ids["far"] not in {h.note.id for h in memory.search("observatory dome cobalt", mode="fulltext", hops=2)}


def test_the_tenant_filter_never_leaks(settings: Settings, memory: AgenticMemory) -> None:
    ids = chain(memory)
    other_tenant = memory.tenant + "-other"
    with AgenticMemory(settings, tenant=other_tenant) as other:
        try:
            theirs = chain(other)
            for mode in ("hybrid", "vector", "fulltext"):
                hits = memory.search("observatory dome cobalt blue volunteers lemon", mode=mode, hops=3, k=50)
                assert {h.note.tenant for h in hits} == {memory.tenant}
                assert not {h.note.id for h in hits} & set(theirs.values())
                assert all(s.from_id in ids.values() for h in hits for s in h.path)
        finally:
            other.admin.delete_tenant(other_tenant)


def test_session_turns_are_chained_and_their_neighbourhood_refreshed_without_history(memory: AgenticMemory) -> None:
    turns = ["Alice: I adopted a beagle.", "Bob: What is its name?", "Alice: Max, after my grandfather.",
             "Bob: Does Max bark?"]
    notes, moments = [], []
    for i, turn in enumerate(turns, start=1):
        notes.append(memory.add(turn, session="s1", source=f"D1:{i}"))
        time.sleep(0.005)  # the stores keep times to the millisecond: the moment lies strictly between two writes
        moments.append(datetime.now(timezone.utc))
        time.sleep(0.005)
    first, second, third, fourth = (memory.get(n.id) for n in notes)
    assert [n.seq for n in (first, second, third, fourth)] == [1, 2, 3, 4]
    assert first.speaker == "Alice" and second.speaker == "Bob"
    assert first.neighbourhood == "\n".join(turns[:3])  # itself and the two turns after it
    assert fourth.neighbourhood == "\n".join(turns[1:])  # two before, itself
    # Derived text is not history: the refreshes kept no version, and reads as of a moment cut it back.
    assert memory.history(first.id).versions == () and first.version == 1
    assert [memory.get(first.id, as_of=at).neighbourhood for at in moments] == [
        "\n".join(turns[:1]), "\n".join(turns[:2]), "\n".join(turns[:3]), "\n".join(turns[:3])]
    memory.update(first.id, tags=["beagle"], reason="tagged by hand")  # a version holds the text of its moment
    assert memory.get(first.id, as_of=moments[0]).neighbourhood == "\n".join(turns[:1])
    assert memory.get(first.id, as_of=moments[1]).neighbourhood == "\n".join(turns[:2])
    assert first.content == turns[0]  # what was said is never rewritten
    # The neighbourhood is searchable: "beagle" is said only in the first turn.
    found = memory.search("beagle", mode="fulltext", hops=0, k=10)
    assert {h.note.id for h in found} == {first.id, second.id, third.id}
    assert found[0].note.id == first.id  # its own words count twice
    # Deleting a turn closes the chain over the gap (walked alone: typed links may join these turns too).
    memory.delete(second.id)
    chain_only = Retriever(memory._store, memory.embedder, Tuning(weights={"NEXT": 0.6}))
    try:
        hits = chain_only.search(memory.tenant, "beagle", mode="fulltext", hops=1, k=10)
    finally:
        chain_only.close()
    path = {h.note.id: h.path for h in hits}
    assert [(s.from_id, s.type) for s in path[fourth.id]] == [(third.id, "NEXT")]
    assert [(s.from_id, s.type) for s in path[third.id]] in ([], [(first.id, "NEXT")])


def test_filters_apply_to_seeds_and_expanded_notes(memory: AgenticMemory) -> None:
    ids = memory.add_many([
        NoteInput("Alice: The lighthouse keeper retired.", source="a", session="s1", tags=("coast",),
                  event_time="2023-05-01T10:00:00Z"),
        NoteInput("Bob: The lighthouse lamp was replaced.", source="b", session="s1", tags=("repairs",),
                  event_time="2023-05-01T10:00:00Z"),
        NoteInput("Alice: Gulls nest on the lighthouse.", source="c", session="s2", tags=("birds", "coast"),
                  event_time="2023-06-01T10:00:00Z"),
    ])
    def found(**filters: object) -> set[str]:
        return {h.note.id for h in memory.search("lighthouse", k=10, hops=2, **filters)}  # type: ignore[arg-type]
    assert found() == set(ids)
    assert found(speakers=["Alice"]) == {ids[0], ids[2]}
    assert found(tags=["repairs"]) == {ids[1]}
    assert found(sessions=["s2"]) == {ids[2]}
    assert found(after="2023-05-15T00:00:00Z") == {ids[2]}
    assert found(before="2023-05-15T00:00:00Z") == {ids[0], ids[1]}
    with pytest.raises(InvalidInput, match="earlier than"):
        memory.search("lighthouse", after="2023-06-01T00:00:00Z", before="2023-05-01T00:00:00Z")
    for bad in ({"hops": 4}, {"hops": -1}, {"speakers": "Alice"}, {"after": "last week"}):
        with pytest.raises(InvalidInput):
            memory.search("lighthouse", **bad)  # type: ignore[arg-type]


def test_a_named_speaker_is_preferred_and_left_out_of_the_dense_query(memory: AgenticMemory) -> None:
    memory.add_many([
        NoteInput("Caroline: I love hiking in the mountains.", source="c"),
        NoteInput("Melanie: I love hiking in the mountains too.", source="m"),
    ])
    assert Speakers.of(["Melanie", "Caroline"]).named("What does Caroline's family enjoy?")[0] == ("Caroline",)
    assert without_names("What does Caroline's family enjoy?", ["Caroline"]) == "What does family enjoy?"
    assert without_names("Caroline?", ["Caroline"]) == "Caroline?"  # nothing would be left
    hits = {h.note.speaker: h for h in memory.search("Where does Caroline like hiking?", k=2, hops=0)}
    prior = Tuning().speaker_prior
    assert dict(hits["Caroline"].boosts) == {"speaker": prior} and hits["Melanie"].boosts == ()
    assert hits["Caroline"].score == pytest.approx(hits["Caroline"].seed_score + prior)
    assert hits["Melanie"].score == pytest.approx(hits["Melanie"].seed_score)


def test_context_formats_memories_and_the_links_that_led_to_them(memory: AgenticMemory) -> None:
    chain(memory)
    block = memory.context("observatory dome cobalt", k=3, mode="fulltext")
    lines = block.splitlines()
    assert lines[0] == "Relevant memories (best first):"
    assert lines[1] == "1. The observatory dome was repainted in cobalt blue."
    assert "   linked from memory 1 (RELATES_TO: same repair project)" in lines
    assert "   linked from memory 2 (ELABORATES: fed the volunteers)" in lines
    assert format_context([]) == "No relevant memories."


def test_search_counts_retrievals_off_the_hot_path(memory: AgenticMemory) -> None:
    ids = chain(memory)
    memory.search("observatory dome cobalt", mode="fulltext", hops=0)
    deadline = time.monotonic() + 10  # the count is written on a background thread
    while memory.get(ids["seed"]).retrieval_count == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    seed = memory.get(ids["seed"])
    assert seed.retrieval_count == 1 and seed.last_accessed is not None
    assert seed.version == 1  # a retrieval changes no version
    assert memory.get(ids["bystander"]).retrieval_count == 0



def test_retrieval_counts_gathered_together_count_every_search(memory: AgenticMemory) -> None:
    ids = chain(memory)
    for _ in range(3):  # within one flush interval: written in one statement, each search counted
        memory.search("observatory dome cobalt", mode="fulltext", hops=0)
    deadline = time.monotonic() + 10
    while memory.get(ids["seed"]).retrieval_count == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert memory.get(ids["seed"]).retrieval_count == 3


def test_lexical_field_boosts_name_only_index_fields() -> None:
    assert lucene_query("Cobalt dome!", {"content": 2.0, "neighbourhood": 1.0}) == (
        "content:(cobalt dome)^2 neighbourhood:(cobalt dome)^1"
    )
    with pytest.raises(InvalidInput, match="unknown text fields"):
        lucene_query("dome", {"content) OR id:(x": 1.0})
    with pytest.raises(ValueError, match="no such link types"):
        Tuning(weights={"KNOWS": 1.0})


def test_rrf_and_min_max_fusion_both_rank(memory: AgenticMemory) -> None:
    chain(memory)
    for fusion in ("minmax", "rrf"):
        retriever = Retriever(memory._store, memory.embedder, Tuning(fusion=fusion))  # type: ignore[arg-type]
        try:
            hits = retriever.search(memory.tenant, "observatory dome cobalt", k=2, hops=0)
        finally:
            retriever.close()
        assert hits[0].note.content.startswith("The observatory dome") and hits[0].score == pytest.approx(1.0)
