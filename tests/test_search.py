"""Search on the real vector and fulltext indexes, scoped by tenant."""

import pytest

from amem_graph import AgenticMemory, InvalidInput, NoteInput
from amem_graph.store import neo4j_notes

STORES = ("neo4j", "embedded")

FACTS = [
    "Caroline is researching adoption agencies because she wants to be a mother.",
    "Melanie ran a charity race for mental health last Saturday.",
    "Caroline moved from Sweden four years ago.",
    "Melanie's kids love the beach and they went camping in the mountains.",
    "Jon lost his banking job and decided to open a dance studio.",
]


@pytest.fixture
def facts(memory: AgenticMemory) -> list[str]:
    return memory.add_many([NoteInput(content=f, source=f"fact-{i}") for i, f in enumerate(FACTS)])


@pytest.mark.parametrize("mode", ["hybrid", "vector", "fulltext"])
def test_each_mode_finds_the_matching_note(memory: AgenticMemory, facts: list[str], mode: str) -> None:
    hits = memory.search("Where did Caroline move from?", k=3, mode=mode)
    assert hits and hits[0].note.id == facts[2]
    assert all(hit.note.embedding is None for hit in hits)


def test_hybrid_explains_its_scores(memory: AgenticMemory, facts: list[str]) -> None:
    hits = memory.search("dance studio after losing a job", k=5)
    top = hits[0]
    assert top.note.id == facts[4]
    assert top.vector_score is not None and top.fulltext_score is not None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_fulltext_stems_english(memory: AgenticMemory, facts: list[str]) -> None:
    hits = memory.search("running races", k=2, mode="fulltext")  # the note says "ran a charity race"
    assert hits and hits[0].note.id == facts[1]


@pytest.mark.parametrize("query", ['what? (kids) AND "beach":*', "a/b\\c [x] {y} ~z ^w !v", "OR", "NOT beach"])
def test_lucene_syntax_in_queries_is_plain_text(memory: AgenticMemory, facts: list[str], query: str) -> None:
    memory.search(query, k=3, mode="fulltext")  # no parse error, whatever it finds


def test_search_stays_in_its_tenant_even_when_crowded(
    memory: AgenticMemory, settings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The vector index is shared; a tenant's notes must still be found among many closer ones of others,
    both when it has fewer than k notes (exact scan) and when it has more (wider approximate search). On Neo4j
    the index path is taken as by a tenant of more than EXACT_NOTES notes."""
    monkeypatch.setattr(neo4j_notes, "EXACT_NOTES", 0)
    few = memory.add("The secret recipe uses cardamom and orange peel.")
    crowd = f"{memory.tenant}-crowd"
    busy = f"{memory.tenant}-busy"
    with AgenticMemory(settings, tenant=crowd) as other, AgenticMemory(settings, tenant=busy) as third:
        try:
            other.add_many([f"Recipe number {i} uses cardamom, orange peel and spice {i}." for i in range(150)])
            hits = memory.search("recipe with cardamom and orange", k=5, mode="vector")
            assert [h.note.id for h in hits] == [few.id]
            if (knn := getattr(memory._store, "_knn", None)) is not None:  # Neo4j's shared index
                # A share too small for the index's cap goes to the exact scan at once, and forgets a little.
                mine = [key for key in knn.overfetch if key[1] == memory.tenant]
                knn.overfetch.update(dict.fromkeys(mine, 1e6))
                hits = memory.search("recipe with cardamom and orange", k=5, mode="vector")
                assert [h.note.id for h in hits] == [few.id] and mine
                assert all(knn.overfetch[key] < 1e6 for key in mine)
            own = set(third.add_many([f"Grandma's cake {i} has a hint of cardamom." for i in range(8)]))
            hits = third.search("recipe with cardamom and orange", k=5, mode="vector")
            assert len(hits) == 5 and {h.note.id for h in hits} <= own
        finally:
            other.admin.delete_tenant(crowd)
            third.admin.delete_tenant(busy)


@pytest.mark.parametrize(("kwargs", "message"), [({"k": 0}, "k must be"), ({"k": 1001}, "k must be"),
                                                 ({"mode": "magic"}, "mode must be"), ({"tenant": "a b"}, "tenant")])
def test_bad_search_arguments(memory: AgenticMemory, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.search("anything", **kwargs)
    with pytest.raises(InvalidInput, match="query is empty"):
        memory.search("  ")


def test_empty_tenant_finds_nothing(memory: AgenticMemory) -> None:
    assert memory.search("anything at all", k=5) == []


def test_long_and_stopword_only_queries(memory: AgenticMemory, facts: list[str]) -> None:
    # 1300 two-letter words: within the 4000-character query limit, over Lucene's 1024 clauses if passed whole
    long_query = " ".join(f"{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(1300))
    assert isinstance(memory.search(long_query, k=3, mode="fulltext"), list)  # no "too many clauses" error
    assert memory.search("the and of a", k=3, mode="fulltext") == []
    assert memory.search("the and of a", k=3)  # hybrid still has the vector side


def test_a_name_a_speaker_is_called_by_names_them_at_the_next_search(memory: AgenticMemory) -> None:
    """"Kate" becomes Emi's alias with the third note that calls her so: the search right after it knows, with
    no wait for the cached speaker list to expire."""
    turns = [
        ("Emi", "I took a pottery class on Sunday and made a bowl."),
        ("Elise", "Hey Kate! That sounds lovely."),
        ("Emi", "It was fun, I want to make mugs next."),
        ("Elise", "Kate, you should sell them at the market."),
        ("Emi", "Maybe one day, they are still wobbly."),
    ]
    for i, (speaker, text) in enumerate(turns):
        memory.add(f"{speaker}: {text}", source=f"t{i}", session="s1", speaker=speaker)

    def prior(query: str) -> set[str]:
        return {hit.note.speaker or "" for hit in memory.search(query, k=5) if "speaker" in dict(hit.boosts)}

    assert prior("What does Kate make?") == set()  # called so twice: not yet a name of hers
    memory.add("Elise: Thanks, Kate! See you at the market.", source="t5", session="s1", speaker="Elise")
    assert prior("What does Kate make?") == {"Emi"}


def test_a_speaker_imported_in_bulk_is_named_at_the_next_search(memory: AgenticMemory) -> None:
    memory.add("Emi: I took a pottery class on Sunday.", source="t0", speaker="Emi")
    assert memory.search("What did Zoe bake?", k=3)  # the speaker list is read and cached here
    memory.add_many([NoteInput(content="Zoe: I baked a lemon cake for the party.", source="t1", speaker="Zoe")])
    hits = memory.search("What did Zoe bake?", k=3)
    assert [hit.note.speaker for hit in hits if "speaker" in dict(hit.boosts)] == ["Zoe"]
