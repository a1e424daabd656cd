"""Store-free unit tests of the analysis text work: the heuristic analyser (RAKE, tags, context, evidence-named
links and neighbour updates), the prompts the LLM is sent, and the tolerant reader of its answers."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from amem_graph.errors import LLMError
from amem_graph.llm.heuristic import HeuristicAnalyser, rake
from amem_graph.llm.parsing import parse_answer
from amem_graph.llm.prompts import (
    ANALYSIS_SCHEMA,
    ANALYSIS_SYSTEM,
    MAX_CANDIDATE_CHARS,
    analysis_messages,
    handle,
    persona_messages,
    qa_messages,
    turn_messages,
)
from amem_graph.models import LINK_TYPES, NeighbourUpdate, Note, NoteInput, SearchHit

pytestmark = pytest.mark.embedded

BALL = "Max chased the ball. Max caught the red ball."


def note(note_id: str, content: str, **fields: object) -> Note:
    return Note(id=note_id, tenant="t", content=content, content_hash=note_id, **fields)  # type: ignore[arg-type]


def test_rake_scores_words_by_degree_over_frequency() -> None:
    keywords, scores = rake(BALL)
    # phrases: [max chased] [ball] [max caught] [red ball]; max: degree 4 / freq 2, ball: 3 / 2, the rest 2 / 1
    assert scores == {"max": 2.0, "chased": 2.0, "ball": 1.5, "caught": 2.0, "red": 2.0}
    # phrase scores 4, 1.5, 4, 3.5: ties keep their order in the text
    assert keywords == ["max chased", "max caught", "red ball", "ball"]
    assert rake(BALL, limit=2)[0] == ["max chased", "max caught"]
    assert rake("Alice adopted a beagle puppy named Max.")[0] == ["beagle puppy named", "alice adopted", "max"]  # 3 words at most


def test_heuristic_fields_of_a_note() -> None:
    plain = HeuristicAnalyser().analyse(NoteInput(content=BALL, id="n"), [])
    assert plain.keywords == ("max chased", "max caught", "red ball", "ball")
    assert plain.tags == ("catch", "chase", "max")  # best word scores (2.0 each, by name), each in one form
    assert plain.context == "About max chased, max caught, red ball."
    assert (plain.analysis, plain.model, plain.links, plain.updates) == ("heuristic", "heuristic-v1", (), ())
    said = HeuristicAnalyser().analyse(
        NoteInput(content=f"Nate: {BALL}", id="n", event_time=datetime(2024, 5, 1, tzinfo=timezone.utc)), [])
    assert said.context == "Nate talks about max chased, max caught, red ball (01 May 2024)."
    assert said.keywords == plain.keywords  # the speaker is not a keyword
    assert HeuristicAnalyser().analyse(NoteInput(content="Oh, ok!", id="n"), []).context == "About a short remark."


def test_heuristic_links_need_similarity_or_shared_terms_and_name_their_evidence() -> None:
    words = note("w", "Biscuit loves his red frisbee.")  # found by words alone (no vector score): biscuit, frisbee
    one_word = note("o", "Biscuit naps all afternoon.")  # shares biscuit only
    common = note("c", "A red ball caught my eye.")  # shares red and catch: common words, which say nothing
    similar = note("s", "Completely unrelated taxes.")
    candidates = [
        SearchHit(words, 0.5),
        SearchHit(one_word, 0.5),  # by words alone, one shared term is not enough
        SearchHit(common, 0.5, vector_score=0.7),  # cosine 0.4, and nothing distinctive shared
        SearchHit(similar, 0.5, vector_score=0.8),  # cosine 2·0.8−1 = 0.6 ≥ 0.55: similar enough alone
        SearchHit(note("n", "Biscuit naps all afternoon."), 0.5, vector_score=0.7),  # cosine 0.4 ≥ 0.30, a shared term
        SearchHit(note("x", "Biscuit naps all afternoon."), 0.5, vector_score=0.6),  # cosine 0.2: too far
    ]
    frisbee = "Nate: Biscuit chased the frisbee. Biscuit caught the red frisbee."
    result = HeuristicAnalyser().analyse(NoteInput(content=frisbee, id="new"), candidates)
    links = {link.target_id: link for link in result.links}
    assert set(links) == {"w", "s", "n"} and all(link.type == "RELATES_TO" for link in result.links)
    # each reason names what the two share and the other note by its words
    assert (links["w"].reason, links["w"].confidence) == ("both mention biscuit, frisbee: “Biscuit loves his red frisbee.”", 0.3)
    assert (links["s"].reason, links["s"].confidence) == ("says something alike: “Completely unrelated taxes.”", 0.36)
    assert (links["n"].reason, links["n"].confidence) == ("both mention biscuit: “Biscuit naps all afternoon.”", 0.39)
    assert result.updates == ()  # links this loose (confidence under 0.5) evolve no neighbour
    close = SearchHit(note("c", "Biscuit chased his red frisbee.", session="s1"), 0.5, vector_score=0.9)
    looser = SearchHit(note("l", "Biscuit naps after chasing.", session="s1"), 0.5, vector_score=0.85)
    evolved = HeuristicAnalyser().analyse(NoteInput(content=frisbee, id="new", session="s2"), [looser, close])
    # One note evolves, the closest (confidence 0.78 against 0.57): it gets the new note's tags that its words
    # hold and that are no common English words ("catch", "chase" are), and the reason names the new note by its words
    assert [link.confidence for link in evolved.links] == [0.57, 0.78]
    assert evolved.updates == (NeighbourUpdate(
        id="c", add_tags=("biscuit",), reason="tags biscuit shared with the related “Biscuit chased the frisbee. Biscuit caught the red...”",
    ),)
    same_session = HeuristicAnalyser().analyse(NoteInput(content=frisbee, id="new", session="s1"), [close])
    assert same_session.updates == ()  # within a session the turns' neighbourhood joins them already
    tagged = [SearchHit(note("c", "Biscuit chased his red frisbee.", tags=("biscuits",)), 0.5, vector_score=0.9)]
    assert HeuristicAnalyser().analyse(NoteInput(content=frisbee, id="new"), tagged).updates == ()  # one form a word


def test_analysis_prompt_shows_candidates_by_handle_with_dates_and_limits() -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    new = NoteInput(content="[1:56 pm on 8 May, 2023] Caroline: I went to a support group.", event_time=when)
    first = note("id-1", "Caroline likes painting.", context="Caroline's hobby.", tags=("art", "hobby"))
    long = note("id-2", "x" * 1000)
    system, user = analysis_messages(new, [SearchHit(first, 1.0), SearchHit(long, 0.5)])
    assert system == {"role": "system", "content": ANALYSIS_SYSTEM}
    lines = user["content"].splitlines()
    assert lines[0] == "NEW: (2023-05-08) Caroline: I went to a support group."  # the stamp becomes the ISO date
    assert lines[1] == "CANDIDATES:"
    assert lines[2] == "c1: Caroline likes painting. | context: Caroline's hobby. | tags: art, hobby"
    assert lines[3] == "c2: " + "x" * MAX_CANDIDATE_CHARS
    assert "id-1" not in user["content"]  # ids are never shown, only handles
    assert [handle(i) for i in range(3)] == ["c1", "c2", "c3"]
    assert analysis_messages(NoteInput(content="hi"), [])[1]["content"] == "NEW: hi\nCANDIDATES: none"
    link_types = ANALYSIS_SCHEMA["properties"]["links"]["items"]["properties"]["type"]["enum"]
    assert link_types == sorted(LINK_TYPES) and all(t in ANALYSIS_SYSTEM for t in LINK_TYPES)


def test_tier_and_qa_prompts() -> None:
    first = turn_messages(("I got a dog.", "Nice!"), None, "")[1]["content"]
    assert first == "PREVIOUS: none\nNEW: user: I got a dog. | assistant: Nice!"
    later = turn_messages(("He is a beagle.", ""), ("I got a dog.", "Nice!"), "About a dog")[1]["content"]
    assert later.splitlines() == ["PREVIOUS: user: I got a dog. | assistant: Nice!", "THREAD SO FAR: About a dog",
                                  "NEW: user: He is a beagle."]
    pages = persona_messages([("I live in Boston.", ""), ("", "I will remind you.")])[1]["content"]
    assert pages.splitlines() == ["PAGES:", "p1: user: I live in Boston.", "p2: assistant: I will remind you."]
    assert qa_messages("Where?", "memories")[1]["content"] == "memories\n\nQuestion: Where?"


def test_the_parser_takes_the_first_json_object_it_can_read() -> None:
    assert parse_answer('  {"keywords": ["a"], "context": "c"}  ') == {"keywords": ["a"], "context": "c"}
    fenced = 'Here:\n```\n{"keywords": [], "context": "in a fence"}\n```'
    assert parse_answer(fenced)["context"] == "in a fence"
    assert parse_answer('Note {"a": {"b": 1}} done')["a"] == {"b": 1}  # the outermost braces


def test_the_parser_reads_plain_sections() -> None:
    answer = parse_answer(
        "**Keywords**: beagle; Max, 'vet'.\n"
        "Context: Max went to the vet\n"
        "  with Alice.\n"
        "Links:\n"
        "- c2 ELABORATES (0.7): same dog\n"
        "- c3 SAME_ENTITY, 0.9 - Max again\n"
        "- c4 SUPPORTS\n"
    )
    assert answer["keywords"] == ["beagle", "Max", "vet"]
    assert answer["context"] == "Max went to the vet with Alice."  # continued on the next line
    assert answer["links"] == [
        {"target_id": "c2", "type": "ELABORATES", "confidence": 0.7, "reason": "same dog"},
        {"target_id": "c3", "type": "SAME_ENTITY", "confidence": 0.9, "reason": "Max again"},
        {"target_id": "c4", "type": "SUPPORTS", "confidence": None, "reason": ""},
    ]


@pytest.mark.parametrize("text", ["   ", "Keywords: a, b", "[1, 2, 3]", "Context: only a context"])
def test_the_parser_refuses_answers_without_keywords_and_context(text: str) -> None:
    with pytest.raises(LLMError) as caught:
        parse_answer(text)
    assert caught.value.kind == "malformed"
