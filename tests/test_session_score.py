"""The session score on both stores: a note gains from the other notes of its session, never from itself, so
notes with and without a session rank on equal terms."""

import pytest

from amem_graph import AgenticMemory
from amem_graph.core.tuning import Tuning

STORES = ("neo4j", "embedded")


def test_a_note_alone_in_its_session_gains_nothing_over_a_note_without_one(memory: AgenticMemory) -> None:
    answer = memory.add("Caroline moved from Sweden.")
    buns = memory.add("Melanie: I baked cinnamon buns with Caroline this morning.", session="chat-1")
    hits = {hit.note.id: hit for hit in memory.search("Where is Caroline from?", k=2, hops=0)}
    assert set(hits) == {answer.id, buns.id}
    # What each index ranks first is not fixed (Lucene scores by the whole server's index), so the check is
    # that each note keeps its index score: a bonus from the turn's own score would raise the turn's.
    for hit in hits.values():
        assert hit.score == pytest.approx(hit.seed_score)
    assert [name for hit in hits.values() for name, _ in hit.boosts] == []


def test_a_note_gains_from_the_best_other_note_of_its_session(memory: AgenticMemory) -> None:
    turns = [memory.add(text, session="chat-1") for text in (
        "Caroline: I went to the pottery class on Saturday.", "Melanie: Did you make anything?",
        "Caroline: A little blue pottery bowl, my first pottery.")]
    alone = memory.add("Melanie signed up for a pottery course.")
    hits = memory.search("pottery", k=10, hops=0, mode="fulltext")
    bonus = {hit.note.id: dict(hit.boosts).get("session", 0.0) for hit in hits}
    before = {hit.note.id: hit.score - bonus[hit.note.id] for hit in hits}
    assert set(before) == {note.id for note in (*turns, alone)}  # the second turn by its neighbourhood
    for note in turns:
        best_other = max(before[other.id] for other in turns if other.id != note.id)
        assert bonus[note.id] == pytest.approx(Tuning().session_weight * best_other)
    assert bonus[alone.id] == 0.0
