"""Input rules, checked without a database."""

from datetime import datetime, timezone

import pytest

from amem_graph import InvalidInput, NoteInput
from amem_graph.core import validation as v

STORES = ("neo4j", "embedded")
pytestmark = pytest.mark.embedded  # no store at all


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        (None, "must be text"),
        (42, "must be text"),
        (["a"], "must be text"),
        ("x" * 101, "limit is 100"),
        ("bell\x07", r"control character U\+0007"),
        ("nul\x00byte", r"control character U\+0000"),
        ("c1 \x85 control", r"control character U\+0085"),
        (b"\xff\xfe bad", "not valid UTF-8"),
        ("lone \ud800 surrogate", "lone surrogate"),
    ],
)
def test_text_rejects(value: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        v.text(value, "content", 100)


def test_text_accepts_unicode_tabs_newlines_and_utf8_bytes() -> None:
    assert v.text("Zoë went to 東京 🎌\n\tagain\r\n", "content", 100).startswith("Zoë")
    assert v.text("café".encode(), "content", 100) == "café"


@pytest.mark.parametrize("tenant", ["", "a b", "-lead", "x" * 129, "semi;colon", "quote'", None, 5])
def test_bad_tenants(tenant: object) -> None:
    with pytest.raises(InvalidInput, match="tenant"):
        v.tenant(tenant)


def test_good_tenants() -> None:
    for tenant in ("alice", "user:42", "agent.x@team-1", "A" * 128):
        assert v.tenant(tenant) == tenant


def test_labels_are_deduplicated_and_must_be_a_list() -> None:
    assert v.labels(["a", " b ", "a"], "tags") == ("a", "b")
    with pytest.raises(InvalidInput, match="list of strings"):
        v.labels("tag", "tags")
    with pytest.raises(InvalidInput):
        v.labels(["ok", ""], "tags")


def test_vector_dimension_and_finiteness() -> None:
    assert v.vector([0.0] * 4, 4) == [0.0] * 4
    with pytest.raises(InvalidInput, match="3 dimensions; the vector index has 4"):
        v.vector([0.0] * 3, 4)
    with pytest.raises(InvalidInput, match="NaN"):
        v.vector([0.0, float("nan"), 0.0, 0.0], 4)
    with pytest.raises(InvalidInput, match="numbers"):
        v.vector(["a"] * 4, 4)


def test_event_time_forms() -> None:
    assert v.event_time("2023-05-08T13:56:00+00:00") == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert v.event_time(datetime(2023, 5, 8)).tzinfo is timezone.utc  # naive is taken as UTC
    with pytest.raises(InvalidInput, match="ISO-8601"):
        v.event_time("8 May")


@pytest.mark.parametrize("value", [-0.1, 1.5, "high", True, None])
def test_importance_range(value: object) -> None:
    with pytest.raises(InvalidInput, match="importance"):
        v.unit_interval(value, "importance")


def test_note_input_gets_an_id_and_keeps_content_verbatim() -> None:
    note = v.note_input(NoteInput(content="  spaced  ", tags=("t",)), 100)
    assert note.content == "  spaced  " and note.id and note.tags == ("t",)


def test_link_type_is_whitelisted() -> None:
    assert v.link_type("SUPPORTS") == "SUPPORTS"
    for bad in ("supports", "RELATES_TO]->(x) DETACH DELETE x //", "KNOWS", None):
        with pytest.raises(InvalidInput, match="link type"):
            v.link_type(bad)


def test_llm_settings_from_the_environment() -> None:
    from amem_graph.settings import Settings

    assert not Settings.from_env({}).llm.configured  # no key, no base URL: the heuristic analyser
    ollama = Settings.from_env({"AMEM_LLM_BASE_URL": "http://localhost:11434/v1", "AMEM_LLM_MODEL": "llama3",
                                "AMEM_LLM_TIMEOUT": "2.5", "AMEM_LLM_STRUCTURED": "off", "AMEM_LINK_BUDGET": "7"})
    assert ollama.llm.configured and ollama.llm.model == "llama3" and ollama.llm.timeout_s == 2.5
    assert not ollama.llm.structured and ollama.link_budget == 7
    assert Settings.from_env({"AMEM_LLM_API_KEY": "sk-x"}).llm.configured
    assert not Settings.from_env({"OPENAI_API_KEY": "sk-x"}).llm.configured  # no silent opt-in
    assert Settings.from_env({"OPENAI_API_KEY": "sk-x", "AMEM_LLM_BASE_URL": "http://h/v1"}).llm.api_key is None
    for name, value in (("AMEM_LLM_TIMEOUT", "soon"), ("AMEM_LLM_TIMEOUT", "0"), ("AMEM_LINK_BUDGET", "0"),
                        ("AMEM_LLM_CONCURRENCY", "-1")):
        with pytest.raises(InvalidInput, match=name):
            Settings.from_env({name: value})


def test_heuristic_keywords_context_and_tags() -> None:
    from amem_graph.core.text import split_speaker
    from amem_graph.llm.heuristic import HeuristicAnalyser, rake
    from amem_graph.models import NoteInput

    assert split_speaker("[1:56 pm on 8 May, 2023] Caroline: I went to a support group.") == (
        "Caroline", "I went to a support group.")
    assert split_speaker("No speaker here: just text.") == (None, "No speaker here: just text.")
    keywords, _ = rake("Melanie painted a sunrise over the lake, and she ran a charity race for mental health.")
    assert keywords[0] in {"charity race", "mental health", "melanie painted", "sunrise"}
    assert "she" not in " ".join(keywords).split()
    result = HeuristicAnalyser().analyse(NoteInput(content="Caroline: I adopted a beagle puppy named Max.", id="n"), [])
    assert result.analysis == "heuristic" and result.context.startswith("Caroline talks about")
    assert "beagle puppy" in " ".join(result.keywords) and result.tags and result.links == ()
