"""Store-free unit tests of what the MemoryOS tiers derive offline: page keywords, keyword Jaccard and counted
segment keywords, the heuristic continuity, summaries and persona facts; and the tier settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from amem_graph import InvalidInput, Settings
from amem_graph.models import Page, ProposedFact
from amem_graph.settings import TierSettings
from amem_graph.tiers.analysis import (
    HeuristicTierAnalyser,
    bare,
    embedded_text,
    jaccard,
    keywords,
    merged_keywords,
)

pytestmark = pytest.mark.embedded


def page(user: str, assistant: str = "", *, keywords_: tuple[str, ...] = (), page_id: str = "p1") -> Page:
    return Page(id=page_id, tenant="t", session_id="s", seq=1, user_text=user, assistant_text=assistant, at=None,
                keywords=keywords_)


def test_page_keywords_are_single_words_best_first_one_per_stem() -> None:
    # RAKE word scores: max, chased, caught, red 2.0 (by name), ball 1.5
    assert keywords("Max chased the ball. Max caught the red ball.") == ("caught", "chased", "max", "red", "ball")
    assert keywords("Max chased the ball. Max caught the red ball.", limit=2) == ("caught", "chased")
    assert keywords("The dogs, the dog.") == ("dog",)  # one per stem: of equal scores, the first by name
    assert keywords("It is 2023, ok?") == ()  # no digits, no stop words


def test_jaccard_and_counted_keywords_compare_by_stem() -> None:
    assert jaccard(["dogs", "park"], ["dog", "beach"]) == pytest.approx(1 / 3)
    assert jaccard([], ["dog"]) == 0.0
    assert merged_keywords(["dog", "park"], [3, 1], ["dogs", "beach"]) == (("dog", "park", "beach"), (4, 1, 1))
    assert merged_keywords(["dog", "park"], [1, 2], ["beach"], limit=2) == (("park", "dog"), (2, 1))


def test_what_a_page_is_embedded_as() -> None:
    assert bare("[8 May] Caroline: I got a dog.") == "I got a dog."
    assert embedded_text("Caroline: I got a dog.", "Assistant: Nice!") == "I got a dog.\nNice!"
    assert embedded_text("I got a dog.", "  ") == "I got a dog."


def test_a_turn_continues_its_chain_by_a_shared_keyword_or_by_cosine() -> None:
    analyser = HeuristicTierAnalyser(continuity=0.35)
    previous = page("I adopted a dog named Max.", keywords_=("max", "dog"))
    turn = page("I took Max to the park.")  # keywords: max, park ("took" is a stop word)
    shared = analyser.turn(turn, previous, None, ())
    assert (shared.continues, shared.keywords, shared.chain_keywords) == (True, ("max", "park"), ("max", "park"))
    assert shared.chain_summary == "About max, park"
    grown = analyser.turn(turn, previous, None, ("dog", "max"))  # the chain's counted keywords: max twice
    assert (grown.chain_keywords, grown.chain_summary) == (("max", "dog", "park"), "About max, dog, park")
    other = page("Quarterly taxes are due soon.")
    assert not analyser.turn(other, previous, 0.1, ()).continues
    assert analyser.turn(other, previous, 0.35, ()).continues  # close enough in meaning
    first = analyser.turn(turn, None, 0.9, ())
    assert not first.continues and first.chain_keywords == ("max", "park")


def test_segment_summaries_keep_the_first_turn_and_add_the_latest() -> None:
    analyser = HeuristicTierAnalyser()
    one = analyser.segment(None, ["max", "park"], page("Caroline: I took Max to the park. It was sunny.", "Fun!"), 1)
    assert one.summary == "Topic: max, park (1 turns). First: I took Max to the park."
    two = analyser.segment(one.summary, ["max", "park", "vet"], page("Max saw the vet today. All good."), 2)
    assert two.summary == ("Topic: max, park, vet (2 turns). Latest: Max saw the vet today. "
                           "First: I took Max to the park.")
    assert analyser.segment(None, [], page("Hm."), 1).summary == "Topic: small talk (1 turns). First: Hm."


def test_persona_facts_from_first_person_and_world_statements() -> None:
    user = ("Caroline: I live in Boston with my sister. Do you like dogs? Boston is a lovely city by the sea. "
            "Ok. I walked home alone.")
    facts = HeuristicTierAnalyser().persona([page(user, "I will remind you about the vet. Sounds fun.")]).facts
    assert facts == (
        ProposedFact("profile", "Caroline: I live in Boston with my sister.", "p1", 0.6),  # a self pattern
        ProposedFact("user_knowledge", "Caroline: Boston is a lovely city by the sea.", "p1", 0.4),
        ProposedFact("profile", "Caroline: I walked home alone.", "p1", 0.4),  # first person, no pattern
    )  # questions and short fragments left out; at most three a page, so the assistant's promise is cut
    promise = HeuristicTierAnalyser().persona([page("", "I will remind you about the vet.", page_id="p2")]).facts
    assert promise == (ProposedFact("assistant_knowledge", "I will remind you about the vet.", "p2", 0.5),)


def test_tier_settings_from_the_environment_and_the_heat_parameters() -> None:
    tiers = TierSettings.from_env({"AMEM_HEAT_ALPHA": "2", "AMEM_HEAT_BETA": "0.5", "AMEM_HEAT_MU": "3600",
                                   "AMEM_STM_CAPACITY": "3"})
    assert tiers.heat_params() == {"alpha": 2.0, "beta": 0.5, "gamma": 1.0, "mu": 3600.0}
    assert tiers.stm_capacity == 3 and TierSettings.from_env({}) == TierSettings()
    for name, value in (("AMEM_HEAT_MU", "0"), ("AMEM_STM_CAPACITY", "2.5"), ("AMEM_MERGE_THRESHOLD", "3")):
        with pytest.raises(InvalidInput, match=name):
            TierSettings.from_env({name: value})


def test_the_store_the_settings_open() -> None:
    assert Settings.from_env({}).store_kind == "embedded"  # no NEO4J_URI
    assert Settings.from_env({"NEO4J_URI": "bolt://h:7687"}).store_kind == "neo4j"
    assert Settings.from_env({"NEO4J_URI": "bolt://h:7687", "AMEM_STORE": "Embedded"}).store_kind == "embedded"
    assert Settings.from_env({"AMEM_STORE": "neo4j"}).store_kind == "neo4j"
    assert Settings.from_env({"AMEM_HOME": "/h"}).embedded_dir == Path("/h/embedded")
    assert Settings.from_env({"AMEM_HOME": "/h", "AMEM_DATA_DIR": "/d"}).embedded_dir == Path("/d")
    with pytest.raises(InvalidInput, match="AMEM_STORE"):
        Settings.from_env({"AMEM_STORE": "sqlite"})


def test_fact_writes_apply_only_to_facts_still_active() -> None:
    from amem_graph.models import Fact
    from amem_graph.store.base import FactWrite
    from amem_graph.tiers.persona import still_applying

    active = {"a": Fact(id="a", tenant="t", kind="user_profile", text="I am 30", confidence=0.9)}

    def write(**kw: object) -> FactWrite:
        return FactWrite(kind="user_profile", text="x", page_id="p", confidence=0.6, embedding=None, **kw)  # type: ignore[arg-type]

    applied = still_applying([
        write(existing_id="a"),  # a repeat: keeps the higher confidence
        write(existing_id="gone"),  # replaced or archived meanwhile: dropped
        write(supersedes="a", reason="new age"),
        write(supersedes="a", reason="another"),  # "a" is replaced already: this one replaces nothing
        write(supersedes="gone", reason="old"),
    ], active)
    assert [(w.existing_id, w.supersedes, w.confidence) for w in applied] == [
        ("a", None, 0.9), (None, "a", 0.6), (None, None, 0.6), (None, None, 0.6),
    ]
