"""The LLM client and the tolerant parser, over real HTTP to the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import threading

import pytest

from amem_graph.bench.scripted_llm import Answer, Delay, Fault, Raw, ScriptedLLM
from amem_graph.errors import LLMError
from amem_graph.llm import LLMAnalyser, LLMClient
from amem_graph.llm.parsing import parse_answer
from amem_graph.llm.prompts import ANALYSIS_SCHEMA
from amem_graph.llm.tokens import count_prompt_tokens, count_tokens
from amem_graph.models import NoteInput
from amem_graph.settings import LLMSettings

pytestmark = pytest.mark.embedded  # no store: the LLM client over loopback HTTP
MESSAGES = [{"role": "user", "content": "Say something as JSON."}]
GOOD = json.dumps({"keywords": ["max"], "context": "About Max.", "tags": ["pets"], "links": [], "neighbour_updates": []})



def client(llm: ScriptedLLM, **overrides: object) -> LLMClient:
    settings = LLMSettings(base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0)
    return LLMClient(LLMSettings(**{**vars(settings), **overrides}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        '{"keywords": ["a"], "context": "c"}',
        'Sure! Here it is:\n```json\n{"keywords": ["a"], "context": "c"}\n```\nAnything else?',
        'The analysis is {"keywords": ["a"], "context": "c"} as requested.',
        "Keywords: a\nContext: c\nTags: x, y\nLinks:\n- c1 RELATES_TO (0.8): both about a",
    ],
)
def test_parser_reads_json_fences_prose_and_sections(text: str) -> None:
    answer = parse_answer(text)
    assert answer["keywords"] == ["a"] and answer["context"] == "c"


def test_parser_reads_links_from_plain_sections() -> None:
    answer = parse_answer("Keywords: max, dog\nContext: Max is a dog.\nTags: pets\nLinks:\n- c2 SUPPORTS (0.7): same dog")
    assert answer["tags"] == ["pets"]
    assert answer["links"] == [{"target_id": "c2", "type": "SUPPORTS", "confidence": 0.7, "reason": "same dog"}]


@pytest.mark.parametrize("text", ["", "I cannot help with that.", '{"keywords": ["a"], "context": "trunc'])
def test_parser_refuses_what_holds_no_answer(text: str) -> None:
    with pytest.raises(LLMError) as caught:
        parse_answer(text)
    assert caught.value.kind == "malformed"


def test_client_sends_the_json_schema_and_counts_tokens(llm: ScriptedLLM) -> None:
    llm.script(Answer(GOOD))
    reply = client(llm).complete_json("analyse_note", MESSAGES, ANALYSIS_SCHEMA, max_tokens=100)
    assert reply.data["keywords"] == ["max"]
    sent = llm.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"] == ANALYSIS_SCHEMA
    assert sent["temperature"] == 0 and sent["max_tokens"] == 100
    assert reply.completion_tokens == count_tokens(GOOD)
    assert reply.prompt_tokens == count_prompt_tokens(MESSAGES) + count_tokens(
        json.dumps(ANALYSIS_SCHEMA, separators=(",", ":"))
    )


def test_client_counts_tokens_itself_when_the_server_reports_none(llm: ScriptedLLM) -> None:
    llm.script(Answer(GOOD, report_usage=False))
    the_client = client(llm)
    reply = the_client.complete_json("op", MESSAGES, ANALYSIS_SCHEMA, max_tokens=100)
    assert (reply.prompt_tokens, reply.completion_tokens) == (count_prompt_tokens(MESSAGES), count_tokens(GOOD))
    assert count_prompt_tokens(MESSAGES) == count_tokens(MESSAGES[0]["content"]) + 3 + 3
    assert the_client.usage()["op"]["completion_tokens"] == count_tokens(GOOD)


def test_client_retries_429_and_5xx_then_succeeds(llm: ScriptedLLM) -> None:
    llm.script(Fault(429, retry_after=0), Fault(503), Answer(GOOD))
    the_client = client(llm, max_retries=3)
    assert the_client.complete_json("op", MESSAGES, ANALYSIS_SCHEMA, max_tokens=100).data["context"] == "About Max."
    usage = the_client.usage()["op"]
    assert (usage["calls"], usage["retries"], usage["failures"]) == (3, 2, 0)


@pytest.mark.parametrize(
    ("replies", "kind"),
    [
        ((Fault(500), Fault(500)), "server"),
        ((Fault(429), Fault(429)), "rate_limited"),
        ((Delay(2.0), Delay(2.0)), "timeout"),
        ((Fault(400),), "rejected"),
        ((Answer(None, refusal="I can't help with that."),), "refusal"),
        ((Answer('{"keywords": ["a"], "cont', finish_reason="length"),), "truncated"),
        ((Answer("no json here at all"),), "malformed"),
        ((Raw(b'{"id": "x", "choices": [{"message": {"content'),), "malformed"),  # cut-off body
        ((Raw(b'{"choices": "not a list"}'),), "malformed"),  # wrong shape
    ],
)
def test_client_failures_are_typed(llm: ScriptedLLM, replies: tuple, kind: str) -> None:
    llm.script(*replies)
    the_client = client(llm, max_retries=1, timeout_s=0.5)
    with pytest.raises(LLMError) as caught:
        the_client.complete_json("op", MESSAGES, ANALYSIS_SCHEMA, max_tokens=100)
    assert caught.value.kind == kind
    assert the_client.usage()["op"]["failures"] == 1
    assert the_client.usage()["op"]["calls"] == len(replies)  # 400 and bad answers are not retried
    if kind in ("refusal", "truncated"):  # an answer came back: what it cost is known and kept
        assert caught.value.completion_tokens > 0 or caught.value.prompt_tokens > 0


def test_client_limits_requests_in_flight(llm: ScriptedLLM) -> None:
    llm.script(*[Delay(0.2, Answer(GOOD)) for _ in range(6)])
    the_client = client(llm, concurrency=2)
    threads = [
        threading.Thread(target=the_client.complete_json, args=("op", MESSAGES, ANALYSIS_SCHEMA), kwargs={"max_tokens": 50})
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert llm.max_in_flight == 2 and the_client.usage()["op"]["calls"] == 6


def test_analyser_drops_what_does_not_fit_and_says_why(llm: ScriptedLLM, caplog: pytest.LogCaptureFixture) -> None:
    answer = {
        "keywords": ["beagle", 7, "  "], "context": "Max is Alice's beagle.", "tags": "pets",
        "links": [
            {"target_id": "c9", "type": "RELATES_TO", "reason": "not offered", "confidence": 0.5},
            {"target_id": "c1", "type": "LOVES", "reason": "unknown type", "confidence": 0.5},
            {"target_id": "c1", "type": "supports", "reason": "same dog", "confidence": 3},
            {"target_id": "c1", "type": "same entity", "reason": "Max", "confidence": 0.9},
        ],
        "neighbour_updates": [{"id": "n-unknown", "context": "x", "add_tags": [], "remove_tags": [], "reason": "?"}],
    }
    llm.script(Answer(json.dumps(answer)))
    from amem_graph.models import Note, SearchHit

    candidate = SearchHit(Note(id="n1", tenant="t", content="Alice has a dog.", content_hash="h"), 0.9, 0.9, None)
    with caplog.at_level("INFO", logger="amem_graph"):
        result = LLMAnalyser(client(llm)).analyse(NoteInput(content="Max is a beagle.", id="new"), [candidate])
    assert result.analysis == "llm" and result.keywords == ("beagle",)
    assert result.tags  # "pets" was not a list: the heuristic analyser filled the tags
    assert [(link.target_id, link.type) for link in result.links] == [("n1", "SAME_ENTITY")]
    assert result.updates == ()
    reasons = " | ".join(result.dropped)
    for expected in ("'c9': not an offered candidate", "unknown type 'LOVES'", "confidence '3'", "tags: not a list",
                     "'n-unknown': not an offered candidate"):
        assert expected in reasons
    logged = [json.loads(r.getMessage()) for r in caplog.records]
    assert sum(1 for line in logged if line["event"] == "analysis_dropped") == len(result.dropped)


@pytest.mark.parametrize(
    "body",
    ['{"error": "cannot comply"}', "{}", '{"tags": ["x"]}', '{"keywords": null, "context": null}',
     '{"keywords": "x", "context": 3}', '{"keywords": [], "context": ""}', '{"keywords": ["x"], "context": "  "}'],
)
def test_an_answer_without_analysis_degrades(llm: ScriptedLLM, body: str) -> None:
    llm.script(Answer(body))
    the_client = client(llm)
    result = LLMAnalyser(the_client).analyse(NoteInput(content="Max is a beagle.", id="new"), [])
    assert result.analysis == "degraded" and "no usable keywords or context" in (result.degraded_reason or "")
    assert result.keywords and result.prompt_tokens > 0  # heuristic fields; the call's cost is kept
    assert the_client.usage()["analyse_note"]["failures"] == 1


def test_the_model_list_is_read_and_failures_are_typed(llm: ScriptedLLM) -> None:
    assert client(llm).models() == ["scripted"]
    gone = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", timeout_s=1.0))
    with pytest.raises(LLMError) as caught:
        gone.models()
    assert caught.value.kind == "connection"


def test_client_switches_to_reasoning_model_parameters_once_refused(llm: ScriptedLLM) -> None:
    refusal = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
    llm.script(Fault(400, message=refusal), Answer(GOOD), Answer(GOOD))
    the_client = client(llm, max_retries=0)
    for _ in range(2):
        assert the_client.complete_json("op", MESSAGES, ANALYSIS_SCHEMA, max_tokens=77).data["context"] == "About Max."
    first, second, third = llm.requests
    assert first["max_tokens"] == 77 and first["temperature"] == 0
    for later in (second, third):  # switched once, then kept
        assert later["max_completion_tokens"] == 77 and "max_tokens" not in later and "temperature" not in later
    assert the_client.usage()["op"]["calls"] == 3 and the_client.usage()["op"]["failures"] == 0


def test_the_analysis_names_entities_in_the_same_call(llm: ScriptedLLM) -> None:
    answer = {
        "keywords": ["beagle"], "context": "Max is Alice's beagle.", "tags": ["pets"], "links": [],
        "neighbour_updates": [], "entities": ["Max", "the Beagles", "James", 7, "max", "  "],
    }
    llm.script(Answer(json.dumps(answer)))
    the_client = client(llm)
    result = LLMAnalyser(the_client).analyse(NoteInput(content="Max is a beagle.", id="new"), [])
    assert [m.key for m in result.entities or ()] == ["max", "beagle", "james"]  # a name ("James") is not made singular
    assert "entities: unusable item '7'" in " | ".join(result.dropped)
    assert the_client.usage()["analyse_note"]["calls"] == 1  # one call for the analysis and the entities
    assert "entities" in llm.requests[-1]["response_format"]["json_schema"]["schema"]["required"]


def test_an_answer_without_entities_leaves_them_to_the_extractor(llm: ScriptedLLM) -> None:
    llm.script(Answer(json.dumps({"keywords": ["beagle"], "context": "A beagle.", "tags": ["pets"]})))
    assert LLMAnalyser(client(llm)).analyse(NoteInput(content="Max is a beagle.", id="new"), []).entities is None


def _bounded_schema() -> dict:
    """ANALYSIS_SCHEMA as llama.cpp's dialect sends it, written out where it differs."""
    import copy

    schema = copy.deepcopy(ANALYSIS_SCHEMA)
    props = schema["properties"]
    for name in ("keywords", "tags", "entities"):
        props[name].update(maxItems=8)
        props[name]["items"].update(maxLength=500)
    props["context"].update(maxLength=500)
    for name in ("links", "neighbour_updates"):
        props[name].update(maxItems=8)
    link = props["links"]["items"]["properties"]
    link["target_id"].update(maxLength=500)
    link["reason"].update(maxLength=500)  # the type is an enum: not bounded
    update = props["neighbour_updates"]["items"]["properties"]
    for name in ("id", "context", "reason"):
        update[name].update(maxLength=500)  # context is a string or null
    for name in ("add_tags", "remove_tags"):
        update[name].update(maxItems=8)
        update[name]["items"].update(maxLength=500)
    return schema


BOUNDED = _bounded_schema()


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        ("json_schema", {"type": "json_schema", "json_schema": {"name": "analyse_note", "schema": ANALYSIS_SCHEMA, "strict": True}}),
        ("json_object_schema", {"type": "json_object", "schema": BOUNDED}),  # llama.cpp's servers
        ("json_object", {"type": "json_object"}),
        ("none", None),
    ],
)
def test_client_asks_for_json_in_the_servers_dialect(llm: ScriptedLLM, dialect: str, expected: dict | None) -> None:
    llm.script(Answer(GOOD))
    client(llm, response_format=dialect).complete_json("analyse_note", MESSAGES, ANALYSIS_SCHEMA, max_tokens=50)
    assert llm.requests[0].get("response_format") == expected


def test_response_format_setting_is_checked() -> None:
    from amem_graph.errors import InvalidInput

    assert LLMSettings.from_env({}).response_format == "json_schema"
    assert LLMSettings.from_env({"AMEM_LLM_STRUCTURED": "0"}).response_format == "none"
    assert LLMSettings.from_env({"AMEM_LLM_RESPONSE_FORMAT": "JSON_OBJECT_SCHEMA"}).response_format == "json_object_schema"
    with pytest.raises(InvalidInput, match="AMEM_LLM_RESPONSE_FORMAT"):
        LLMSettings.from_env({"AMEM_LLM_RESPONSE_FORMAT": "grammar"})


def test_a_weak_models_contradictions_and_updates_need_evidence(llm: ScriptedLLM) -> None:
    """What small models were seen to answer: handles as keywords, everything CONTRADICTS at confidence 0,
    neighbour updates with no evidence. None of it may supersede or rewrite a memory."""
    from amem_graph.models import Note, SearchHit

    hits = [
        SearchHit(Note(id=f"n{i}", tenant="t", content=text, content_hash=f"h{i}"), 0.9, 0.9, None)
        for i, text in enumerate(["Alice adopted a beagle named Max in 2020.", "Alice moved to Lisbon for work.",
                                  "Bob bakes sourdough bread.", "Alice likes jazz.", "Alice runs marathons."], start=1)
    ]
    answer = {
        "keywords": ["c1", "beagle", "key terms"], "context": "Max the beagle now lives with Bob.", "tags": ["pets"],
        "links": [
            {"target_id": "c1", "type": "CONTRADICTS", "reason": "", "confidence": 0},
            {"target_id": "c2", "type": "CONTRADICTS", "reason": "they differ", "confidence": 0.95},
            {"target_id": "c3", "type": "CONTRADICTS", "reason": "Bob owns Max now, not sourdough", "confidence": 0.5},
            {"target_id": "c3", "type": "RELATES_TO", "reason": "Bob", "confidence": 0.7},
            {"target_id": "c1", "type": "CONTRADICTS", "reason": "Max the beagle lives with Bob now", "confidence": 0.9},
        ],
        "neighbour_updates": [
            {"id": "c2", "context": "Alice lives in Lisbon.", "add_tags": [], "remove_tags": [], "reason": "2024-01-01"},
            {"id": "c3", "context": "A note about the analysis format.", "add_tags": [], "remove_tags": [],
             "reason": "Bob has Max"},
            {"id": "c1", "context": None, "add_tags": ["bob"], "remove_tags": [], "reason": "Max moved to Bob"},
            {"id": "c3", "context": None, "add_tags": ["dogs"], "remove_tags": [], "reason": "Bob has Max"},
            {"id": "c4", "context": None, "add_tags": ["dogs"], "remove_tags": [], "reason": "Bob has Max"},
            {"id": "c5", "context": None, "add_tags": ["dogs"], "remove_tags": [], "reason": "Bob has Max"},
        ],
    }
    llm.script(Answer(json.dumps(answer)))
    note = NoteInput(content="Bob: Max the beagle lives with me now.", id="new")
    result = LLMAnalyser(client(llm)).analyse(note, hits)
    assert result.analysis == "llm" and result.keywords == ("beagle",)
    # only the contradiction with confidence and a reason naming what both notes say stands
    assert sorted((link.target_id, link.type) for link in result.links) == [("n1", "CONTRADICTS"), ("n3", "RELATES_TO")]
    assert [update.id for update in result.updates] == ["n1", "n3", "n4"]  # three at most, each with evidence
    reasons = " | ".join(result.dropped)
    for expected in ("confidence 0 is below", "a contradiction needs confidence", "names nothing of the new note",
                     "names nothing of the note it rewrites", "past 3 updates", "keywords: 2 are handles"):
        assert expected in reasons


@pytest.mark.parametrize(
    "context",
    ["one sentence: what NEW is about, who, when.",  # the instructions
     "Alice says her beagle Max learned to fetch a red ball.",  # the worked example
     "Melanie plans to paint a sunrise over the lake.",  # a candidate
     "Melanie has a counseling job."],  # a candidate's name, and nothing of the note
)
def test_a_context_copied_from_what_the_model_was_shown_degrades(llm: ScriptedLLM, context: str) -> None:
    from amem_graph.models import Note, SearchHit

    candidate = SearchHit(Note(id="n1", tenant="t", content="Melanie: I plan to paint a sunrise over the lake.",
                               content_hash="h"), 0.9, 0.9, None)
    llm.script(Answer(json.dumps({"keywords": ["keywords", "support group"], "context": context, "tags": [],
                                  "links": [], "neighbour_updates": []})))
    note = NoteInput(content="Caroline: The support group made me want to be a counselor.", id="new")
    result = LLMAnalyser(client(llm, examples=True)).analyse(note, [candidate])
    assert result.analysis == "degraded" and "no usable keywords or context" in (result.degraded_reason or "")


def test_the_worked_example_is_sent_when_asked_for(llm: ScriptedLLM) -> None:
    from amem_graph.llm.prompts import ANALYSIS_EXAMPLE_ANSWER

    llm.script(Answer(GOOD), Answer(GOOD))
    note = NoteInput(content="Max is a beagle.", id="new")
    LLMAnalyser(client(llm)).analyse(note, [])
    LLMAnalyser(client(llm, examples=True)).analyse(note, [])
    plain, shown = (request["messages"] for request in llm.requests)
    assert [m["role"] for m in plain] == ["system", "user"]
    assert [m["role"] for m in shown] == ["system", "user", "assistant", "user"]
    assert shown[2]["content"] == ANALYSIS_EXAMPLE_ANSWER and shown[3] == plain[1]
    assert LLMSettings.from_env({"AMEM_LLM_EXAMPLES": "on"}).examples and not LLMSettings.from_env({}).examples


@pytest.mark.parametrize("status", [500, 400])  # llama-cpp-python answers 500; others 400
def test_client_learns_the_json_object_form_from_a_server_that_refuses_json_schema(llm: ScriptedLLM, status: int) -> None:
    refusal = ("1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
               "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")
    llm.script(Fault(status, message=refusal), Answer(GOOD), Answer(GOOD))
    the_client = client(llm)
    for _ in range(2):
        assert the_client.complete_json("op", MESSAGES, ANALYSIS_SCHEMA, max_tokens=50).data["context"] == "About Max."
    formats = [request["response_format"] for request in llm.requests]
    assert formats[0]["type"] == "json_schema"
    assert formats[1:] == [{"type": "json_object", "schema": BOUNDED}] * 2  # learnt once, then kept
    assert the_client.usage()["op"]["failures"] == 0


def test_a_configured_llm_without_its_client_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core install has no `openai`: the engine runs on the heuristic analyser, and naming an endpoint
    says which extra to install instead of failing on an import."""
    from amem_graph.errors import AmemError
    from amem_graph.llm import client as client_module

    monkeypatch.setattr(client_module, "openai", None)
    with pytest.raises(AmemError, match=r"pip install 'amem-graph\[llm\]'"):
        LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m"))
