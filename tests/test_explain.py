"""How a search hit is explained to a person: the query's words it holds and where, the words only the turns
around it hold, the part of a long note worth showing, and the short label the CLI prints."""

from __future__ import annotations

from amem_graph.models import Note, SearchHit, Step
from amem_graph.read import explain


def hit(content: str, neighbourhood: str = "", **fields: object) -> SearchHit:
    note = Note(id="0123456789abcdef", tenant="t", content=content, content_hash="h", neighbourhood=neighbourhood)
    return SearchHit(note=note, score=1.0, **fields)  # type: ignore[arg-type]


def test_the_words_a_hit_holds_are_found_by_stem_with_their_spans() -> None:
    found = explain.match("What did Gina say about the dances?", hit("Gina: I danced at the dance studio today."))
    assert found.words == ("Gina", "danced") and not found.around  # "dances" and "danced" share a stem
    content = "Gina: I danced at the dance studio today."
    assert [content[a:b] for a, b in found.spans] == ["Gina", "danced"]
    assert explain.label(hit(content), found) == "words: Gina, danced"


def test_words_only_the_turns_around_it_hold_are_named_as_such() -> None:
    turn = hit("Jon: That sounds amazing, tell me more!",
               neighbourhood="Gina: I am going to Rome next week.\nJon: That sounds amazing, tell me more!")
    found = explain.match("What did Gina say about Rome?", turn)
    assert found.words == () and found.around == ("Gina", "Rome")
    assert explain.label(turn, found) == "turns around: Gina, Rome"


def test_a_long_note_shows_the_part_that_matched() -> None:
    content = "x " * 300 + "We finally visited Rome in the spring." + " y" * 300
    found = explain.match("Rome", hit(content))
    start, end = found.excerpt
    assert end - start == explain.EXCERPT_CHARS and "Rome" in content[start:end]
    passage = explain.match("nothing matches here", hit(content, passage=(500, 700)))
    assert passage.excerpt[0] <= 500 < passage.excerpt[1]


def test_a_hit_found_by_meaning_or_through_a_link_says_so() -> None:
    alone = hit("A quiet walk by the lake.")
    assert explain.label(alone, explain.match("peaceful strolls", alone)) == "meaning"
    linked = hit("Max loves the beach.", path=(Step("fedcba9876543210", "RELATES_TO", "both about Max"),))
    assert explain.label(linked, explain.match("beach", linked)) == "RELATES_TO from fedcba98"
