"""Store-free unit tests of retrieval's pure parts: fusion (weighted min-max and RRF), MMR, the query priors
and the context block (the session score is tests/test_session_score.py's). Expected values are worked out
by hand from the formulas."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from amem_graph.core.text import vocatives
from amem_graph.models import Note, SearchHit, Step
from amem_graph.read.retrieval import (
    Retriever,
    Speakers,
    Tuning,
    format_context,
    fuse,
    without_names,
    without_stop_words,
)

pytestmark = pytest.mark.embedded


def note(note_id: str, content: str = "", *, session: str | None = None, speaker: str | None = None,
         event_time: datetime | None = None, context: str = "") -> Note:
    return Note(id=note_id, tenant="t", content=content or f"note {note_id}", content_hash=note_id,
                session=session, speaker=speaker, event_time=event_time, context=context)


A, B, C, D = (note(i) for i in "abcd")
VECTOR = [(A, 0.9), (B, 0.5), (C, 0.1)]  # min-max: a 1, b 0.5, c 0
FULLTEXT = [(B, 8.0), (D, 4.0), (A, 2.0)]  # min-max: b 1, d 1/3, a 0


def assert_ranked(hits: list[SearchHit], expected: list[tuple[str, float]]) -> None:
    """The hits are these notes in this order, with these scores."""
    assert [hit.note.id for hit in hits] == [note_id for note_id, _ in expected]
    assert [hit.score for hit in hits] == pytest.approx([score for _, score in expected])


def test_min_max_fusion_weighs_the_scaled_lists() -> None:
    hits = fuse(VECTOR, FULLTEXT, k=10, dense_weight=0.5)
    assert_ranked(hits, [("b", 0.5 * 0.5 + 0.5 * 1), ("a", 0.5 * 1 + 0.5 * 0), ("d", 0.5 / 3), ("c", 0.0)])
    by_id = {hit.note.id: hit for hit in hits}
    assert (by_id["b"].vector_score, by_id["b"].fulltext_score) == (0.5, 8.0)  # the raw index scores
    assert (by_id["d"].vector_score, by_id["d"].fulltext_score) == (None, 4.0)  # missing from a list: adds 0
    assert all(hit.seed_score == hit.score for hit in hits)


def test_the_dense_weight_moves_the_ranking() -> None:
    hits = fuse(VECTOR, FULLTEXT, k=10, dense_weight=0.8)
    assert_ranked(hits, [("a", 0.8), ("b", 0.8 * 0.5 + 0.2), ("d", 0.2 / 3), ("c", 0.0)])


def test_rrf_sums_reciprocal_ranks_scaled_so_rank_one_is_one() -> None:
    hits = fuse(VECTOR, FULLTEXT, k=10, dense_weight=0.9, fusion="rrf", rrf_k=60)  # the weight is min-max's only

    def rrf(*ranks: int) -> float:
        return 0.5 * sum(61 / (60 + rank) for rank in ranks)

    assert_ranked(hits, [("b", rrf(2, 1)), ("a", rrf(1, 3)), ("d", rrf(2)), ("c", rrf(3))])
    # rrf_k 1: ranks 1, 2, 3 count 2/2, 2/3, 2/4
    assert_ranked(fuse(VECTOR, FULLTEXT, k=10, fusion="rrf", rrf_k=1),
                  [("b", 0.5 * (2 / 3 + 1)), ("a", 0.5 * (1 + 0.5)), ("d", 0.5 * 2 / 3), ("c", 0.5 * 0.5)])


def test_one_list_alone_keeps_its_own_scaling_and_k_cuts() -> None:
    assert_ranked(fuse(VECTOR, [], k=10), [("a", 1.0), ("b", 0.5), ("c", 0.0)])
    assert_ranked(fuse([], FULLTEXT, k=2), [("b", 1.0), ("d", 1 / 3)])
    assert fuse([], [], k=5) == []


def test_equal_scores_scale_to_one_and_ties_go_by_id() -> None:
    hits = fuse([(C, 0.7), (A, 0.7)], [(B, 3.0)], k=10)
    assert_ranked(hits, [("a", 0.5), ("b", 0.5), ("c", 0.5)])


@pytest.fixture
def retriever() -> Iterator[Retriever]:
    made: list[Retriever] = []

    def make(**tuning: object) -> Retriever:
        made.append(Retriever(None, None, Tuning(**tuning)))  # type: ignore[arg-type]  # no store is read
        return made[-1]

    yield make  # type: ignore[misc]
    for r in made:
        r.close()


DOG = note("d1", "Alice adopted a beagle named Max")
TWIN = note("d2", "Alice adopted a beagle called Max")  # stems shared with DOG: 4 of 6
CHESS = note("c1", "Bob plays chess on Sundays")


def test_mmr_picks_a_diverse_note_over_a_near_duplicate(retriever) -> None:
    hits = [SearchHit(DOG, 1.0), SearchHit(TWIN, 0.95), SearchHit(CHESS, 0.6)]
    # λ 0.5: the twin scores 0.5·0.95 − 0.5·(4/6) = 0.142 after DOG, chess 0.5·0.6 − 0 = 0.3
    assert [h.note.id for h in retriever(mmr=0.5)._mmr(hits, 2)] == ["d1", "c1"]
    assert [h.note.id for h in retriever(mmr=0.5)._mmr(hits, 3)] == ["d1", "c1", "d2"]
    assert [h.note.id for h in retriever(mmr=1.0)._mmr(hits, 2)] == ["d1", "d2"]  # λ 1: relevance only
    # λ 0.8: 0.8·0.95 − 0.2·(2/3) = 0.627 beats 0.8·0.6 = 0.48: the twin is close enough in score to stay
    assert [h.note.id for h in retriever(mmr=0.8)._mmr(hits, 2)] == ["d1", "d2"]


def test_priors_for_a_named_speaker_and_for_when_questions(retriever) -> None:
    r = retriever(speaker_prior=0.2)
    said = SearchHit(note("a", "Caroline: we went hiking last week", speaker="Caroline"), 0.5)
    assert r._prior(said, ("Caroline",), when=False).score == pytest.approx(0.7)
    both = r._prior(said, ("Caroline",), when=True)
    assert both.score == pytest.approx(0.8) and dict(both.boosts) == pytest.approx({"speaker": 0.2, "time": 0.1})
    stamped = SearchHit(note("b", "[1:56 pm on 8 May, 2023] Mel: I painted a lake"), 0.5)
    assert r._prior(stamped, (), when=True) is stamped  # a month in the time stamp is not a time the note tells


def test_named_speakers_and_the_query_without_them() -> None:
    speakers = ["Caroline Smith", "Melanie", "Bob", "elise", "May"]
    assert Speakers.of(speakers).named("What did Caroline's sister tell Mel?")[0] == ("Caroline Smith",)
    assert Speakers.of(speakers).named("what did bob say?")[0] == ("Bob",)  # users type names in lower case too
    assert Speakers.of(speakers).named("What does Elise study?")[0] == ("elise",)  # and chat names come in lower case
    assert Speakers.of(speakers).named("what may happen?")[0] == ()  # a name that is a common word, in lower case
    assert Speakers.of(speakers).named("What did May say?")[0] == ("May",)
    assert without_names("What did Caroline's sister say?", ["Caroline Smith"]) == "What did sister say?"
    assert without_names("Caroline?", ["Caroline"]) == "Caroline?"  # nothing left: the query as it was


def test_bm25_query_drops_question_words_but_keeps_time_words() -> None:
    assert without_stop_words("What did Caroline do last week?") == "caroline last week"
    assert without_stop_words("What is it?") == "What is it?"


def test_context_block_names_times_contexts_and_the_links_that_led_there() -> None:
    seed = note("s", "Alice adopted Max.", event_time=datetime(2024, 5, 1, tzinfo=timezone.utc), context="A pet.")
    reached = note("r", "Max chewed the shoes.")
    far = note("f", "The shoes were new.")
    block = format_context([
        SearchHit(seed, 1.0),
        SearchHit(reached, 0.5, path=(Step("s", "ELABORATES", "same dog"),)),
        SearchHit(far, 0.2, path=(Step("gone", "RELATES_TO"),)),
    ])
    assert block.splitlines() == [
        "Relevant memories (best first):",
        "1. [2024-05-01] Alice adopted Max.",
        "   context: A pet.",
        "2. Max chewed the shoes.",
        "   linked from memory 1 (ELABORATES: same dog)",
        "3. The shoes were new.",
        "   linked from note gone (RELATES_TO)",
    ]
    assert format_context([]) == "No relevant memories."


def test_tuning_refuses_unknown_link_types() -> None:
    with pytest.raises(ValueError, match="KNOWS"):
        Tuning(weights={"KNOWS": 1.0})


def test_a_speaker_is_named_by_what_the_others_call_them_when_one_name_leads() -> None:
    calls = [("Emi", "Kate", 9), ("Emi", "California", 1), ("elise", "Emily", 2), ("elise", "Liz", 2),
             ("Bob", "Bobby", 5), ("Bob", "Robert", 6), ("Bob", "Emi", 40)]
    speakers = Speakers.of(["Emi", "elise", "Bob"], calls)
    assert speakers.named("What are Kate's hobbies?") == (("Emi",), ("Kate",))
    assert speakers.named("What does Emily study?") == ((), ())  # called so twice only, and as often by another name
    assert speakers.named("What did Robert buy?") == ((), ())  # not three times as often as "Bobby"
    assert speakers.named("What did Emi buy?") == (("Emi",), ("Emi",))  # another speaker's name stays theirs
    assert speakers.named("Where did kate and Elise go?") == (("Emi", "elise"), ("kate", "Elise"))
    assert without_names("What are Kate's hobbies?", ["Kate"]) == "What are hobbies?"
    assert speakers.besides("assistant") == () and Speakers.of(["user", "assistant"]).besides("assistant") == ("user",)


def test_a_chat_message_calls_its_addressee_by_name() -> None:
    assert vocatives("Hey Kate! How was the class?") == ["Kate"]
    assert vocatives("[1 May] Elise: Sounds great, Kate.") == ["Kate"]
    assert vocatives("Kate, did you see it?") == ["Kate"]
    assert vocatives("I went to Miami. Wow, absolutely!") == []
    assert vocatives("Thanks Kate's mom for the cake") == []
    assert vocatives("[1 May] elise: Hi Kate!", "elise") == ["Kate"]  # a speaker's name in lower case
    mel = Speakers.of(["Melanie", "Caroline"], [("Melanie", "Melanie", 49), ("Melanie", "Mel", 38), ("Melanie", "Mell", 1)])
    assert mel.named("What did Mel paint?") == (("Melanie",), ("Mel",))  # called by her name more, but that one is known


def test_leave_one_set_out_keeps_only_what_gains_on_a_set_it_was_not_chosen_on() -> None:
    from amem_graph.bench.locomo_recall import leave_one_set_out

    table = leave_one_set_out({
        "a": {"no x": -2.0, "+ y": 1.0, "no z": 1.0, "no w": -1.0, "no v": 0.0},
        "b": {"no x": -1.0, "+ y": 0.5, "no z": -3.0, "no w": 0.0, "no v": 0.0},
        "c": {"no x": -0.5, "+ y": 2.0, "no z": 1.0, "no w": -2.0, "no v": 0.0},
    })
    assert table["no x"]["verdict"] == "default"  # the ingredient helps on every held-out set
    assert table["no x"]["folds"]["c"] == {"choice": "default", "mean_change_on_others": -1.5, "gain_held_out": 0.5}
    assert table["+ y"]["verdict"] == "change"  # switching it on gains wherever it was not chosen
    assert table["no z"]["verdict"] == "no carry-over"
    assert table["no w"]["verdict"] == "default"  # no occasion on one set, a gain on the others
    assert table["no v"]["verdict"] == "no carry-over"  # no gain anywhere: not worth its code
    assert table["no z"]["folds"]["b"]["choice"] == "change" and table["no z"]["folds"]["b"]["gain_held_out"] == -3.0
