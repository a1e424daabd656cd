"""Hostile input, generated (hypothesis), on both stores: arbitrary Unicode (lone surrogates, NUL, RTL marks,
combining marks), huge and empty values (a 100,000-character word, only whitespace, mixed scripts), deeply
nested metadata, tenants, ids and filters made of Cypher and Lucene syntax; times to read at in every form
(naive, aware in any offset, far past and future, not ISO, before the tenant existed); retention policies of any
value; embedding models that do not exist; every MCP tool, reached with its real arguments (half the calls
well-formed by its schema); files to `ingest` and `import` of any shape (LoCoMo conversations, JSON Lines of notes
or turns, exports: keys dropped, values of any type, odd dates, long files, lines of millions of characters).
Every call returns a correct answer or raises a typed error that refuses the input: a store's failure
(`StoreError`, directly or passed on by MCP) fails the test, as does a CLI exit other than 0, 2 or 3. None writes
outside its tenant (a bystander tenant keeps its graph and its ranking statistics), and one refused changes nothing.

Cases per test come from the hypothesis profile (tests/conftest.py): `ci` (the default) keeps the suite short;
the long run is `AMEM_HYPOTHESIS_PROFILE=long python -m pytest tests/test_hostile.py` (10,000 per test)."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import event, given
from hypothesis import strategies as st
from langchain_core.documents import Document
from langgraph.store.base import InvalidNamespaceError

from amem_graph import AgenticMemory, AmemError, RetentionPolicy, Settings
from amem_graph.core import validation
from amem_graph.embedding import Embedder
from amem_graph.errors import StoreError
from amem_graph.integrations.langchain import AmemStore, AmemVectorStore
from amem_graph.integrations.mcp.tools import memory_server

STORES = ("neo4j", "embedded")

SYNTAX = ["'", '"', "`", "\\", "}", "{", ")", "(", "]", "[", "//", "/*", "*/", "$", ":", "-[:X]->", "MATCH (n)",
          "DETACH DELETE n", "tenant:", "AND", "OR", "NOT", "*", "?", "~", "^2", "+", "-", "!", "&&", "||",
          "content:x", "\x00", "\u202e", "\u0301", "\ud800", "\udfff", "\ufeff", "😀", "我", ""]
# Texts for passages: one word of the most a note may hold, and past it; only whitespace; scripts mixed within
# words; control characters; a surrogate half inside a long text.
LONG = ["x" * 100_000, "x" * 100_001, " \t\n\u00a0\u2003" * 20_000, "Ωmega漢字عربيहिन्दी😀‮rtl‬ " * 3_000,
        "\x01\x02\x1b[31mred\x7f " * 5_000, "a" * 50_000 + "\ud800" + "b" * 49_999]
CLEAN = [t for t in SYNTAX if t.isprintable() and not any(0xD800 <= ord(c) <= 0xDFFF for c in t)]
# Any code point (lone surrogates and controls included, which are refused), and as often text that is valid
# but hostile (RTL marks, combining marks, Cypher and Lucene syntax), which must be stored and found as written.
hostile_text = st.one_of(
    st.text(st.characters(codec=None, categories=None), max_size=300),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=300),
    st.lists(st.sampled_from(SYNTAX) | st.text(max_size=5), max_size=30).map("".join),
    st.lists(st.sampled_from(CLEAN) | st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=5),
             min_size=1, max_size=30).map("".join),
    st.sampled_from(["", " ", "\n" * 50, "a" * 25_000, "我" * 3_000]),
    st.sampled_from(LONG),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | hostile_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=20,
)


def fingerprint(memory: AgenticMemory, tenant: str) -> str:
    """Every node and relationship of a tenant, as a hash: what another tenant's calls must never change (the
    bystanders check, beside it, that the ranking statistics are still those of its texts: `check`)."""
    _, records = memory.admin.export(tenant)
    rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in records)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def bystander_of(tenant: str) -> str:
    """The tenant beside `tenant` whose data no case may change."""
    return f"{tenant}-bystander"


@pytest.fixture
def bystander(memory: AgenticMemory, open_memory) -> Any:
    """A tenant with a note, beside the one under attack; yields its fingerprint check."""
    name = bystander_of(memory.tenant)
    with open_memory(name) as other:
        other.add("Bystander: my notes must stay as they are.")
        before = fingerprint(other, name)
        yield lambda: fingerprint(other, name) == before and other.admin.check(name).sound
        other.admin.delete_tenant(name)


def typed(call: Any, *also: type[Exception]) -> Any:
    """The call's result, or None when it raised a typed error that refuses the input; anything else fails the
    test, a store's failure too: a statement that crashes on some input is a defect, not a refusal (the store is
    up, so it is never unavailable either)."""
    try:
        return call()
    except StoreError as err:
        raise AssertionError(f"the store failed instead of refusing: {type(err).__name__}: {err}") from err
    except (AmemError, *also):
        return None


@given(content=hostile_text, tags=st.lists(hostile_text, max_size=4), source=st.none() | hostile_text,
       speaker=st.none() | hostile_text, session=st.none() | hostile_text)
def test_add_and_search_take_anything(memory: AgenticMemory, bystander: Any, content: str, tags: list[str],
                                      source: str | None, speaker: str | None, session: str | None) -> None:
    note = typed(lambda: memory.add(content, tags=tags, source=source, speaker=speaker, session=session))
    event("stored" if note is not None else "refused")
    if note is not None:
        assert note.content == content and note.tenant == memory.tenant
        assert memory.get(note.id).content == content
    hits = typed(lambda: memory.search(content, k=3, tags=tags, speakers=[speaker] if speaker else ()))
    assert hits is None or all(hit.note.tenant == memory.tenant for hit in hits)
    assert bystander()


@given(tenant=hostile_text, note_id=hostile_text)
def test_tenants_and_ids_of_any_text_are_typed_errors_or_scoped(memory: AgenticMemory, bystander: Any, tenant: str,
                                                                 note_id: str) -> None:
    typed(lambda: memory.add("A note in a strange tenant.", tenant=tenant))
    typed(lambda: memory.get(note_id))
    typed(lambda: memory.delete(note_id))
    typed(lambda: memory.search("note", k=2, tenant=tenant))
    typed(lambda: memory.add_many([note_id, tenant], tenant=tenant))
    if tenant not in (memory.tenant, bystander_of(memory.tenant)):  # the database keeps nothing of the case
        typed(lambda: memory.admin.delete_tenant(tenant))
        assert typed(lambda: memory.search("note", k=2, tenant=tenant)) in (None, [])
    assert bystander()


@given(text=hostile_text, metadata=st.dictionaries(hostile_text, json_values, max_size=4),
       doc_id=st.none() | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,40}", fullmatch=True) | hostile_text,
       condition=st.dictionaries(hostile_text, json_values, max_size=3))
def test_the_vector_store_takes_anything(memory: AgenticMemory, bystander: Any, text: str, metadata: dict, doc_id: Any,
                                         condition: dict) -> None:
    store = AmemVectorStore(memory)
    ids = typed(lambda: store.add_documents([Document(page_content=text, metadata=metadata)], ids=[doc_id]))
    event("stored" if ids is not None else "refused")
    if ids is not None:
        assert store.get_by_ids(ids)[0].page_content == text
    typed(lambda: store.similarity_search(text, k=2, filter=condition))
    typed(lambda: store.get_by_ids([doc_id, text]))
    typed(lambda: store.delete([text]))
    if ids is not None:
        # Each case leaves nothing behind: a filtered search reads every document of the tenant.
        store.delete(ids)
        assert store.get_by_ids(ids) == []
    assert bystander()


@given(label=hostile_text, key=hostile_text, value=st.dictionaries(hostile_text, json_values, max_size=4),
       condition=st.dictionaries(hostile_text, json_values, max_size=3))
def test_the_langgraph_store_takes_anything(memory: AgenticMemory, bystander: Any, label: str, key: str, value: dict,
                                            condition: dict) -> None:
    store = AmemStore(memory)
    for namespace in ((memory.tenant,), (memory.tenant, label)):
        put = typed(lambda: store.put(namespace, key, value) or True, InvalidNamespaceError)
        event("stored" if put else "refused")
        typed(lambda: store.get(namespace, key), InvalidNamespaceError)
        typed(lambda: store.search(namespace, query=key or None, filter=condition, limit=3), InvalidNamespaceError)
    for namespace in ((memory.tenant,), (memory.tenant, label)):
        # Each case leaves nothing behind: a search of (tenant,) reads every namespace below it, one by one.
        typed(lambda: store.delete(namespace, key), InvalidNamespaceError)
        assert typed(lambda: store.get(namespace, key), InvalidNamespaceError) is None
    assert bystander()


@functools.cache
def cli_command() -> Any:
    """The CLI's command tree, built once: typer's test runner builds it at every call, which costs more than
    most of the calls; click's runner takes the built command (only its exit code is checked)."""
    from typer.main import get_command

    from amem_graph.cli import app

    return get_command(app)


@given(content=hostile_text, tag=hostile_text, tenant=hostile_text)
def test_the_cli_answers_with_a_documented_exit_code(store_kind: str, cli_env: dict[str, str], cli_tenant: str,
                                                     content: str, tag: str, tenant: str) -> None:
    """A command line of any text: 0, or a user error (2 bad command line, 3 invalid input); never 1, an
    unexpected error with a traceback. Writes go to the test's own tenant; any other tenant is only read.
    (`store_kind` runs it on each store: `cli_env` points the CLI at the test's store.)"""
    runner = CliRunner()
    for args in (["add", content, "-t", cli_tenant, "--tag", tag], ["search", content, "-t", tenant, "-k", "2"],
                 ["get", content, "-t", tenant], ["list", "-t", tenant]):
        if any("\x00" in a or any(0xD800 <= ord(c) <= 0xDFFF for c in a) for a in args):
            continue  # no process can receive these in its argv: the OS refuses them before the CLI runs
        result = runner.invoke(cli_command(), args, env=cli_env)
        assert result.exit_code in (0, 2, 3), (args, result.exit_code, result.output[-500:])


def _offset(minutes: int) -> timezone:
    return timezone(timedelta(minutes=minutes))


# Times to read at: naive and aware (any offset a datetime allows), from year 1 to 9999, as datetimes or ISO
# strings, edge values, strings that are not ISO-8601, and values of other types.
moments = st.one_of(
    st.none(),
    st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31), timezones=st.just(timezone.utc)),
    st.datetimes(),
    st.datetimes(timezones=st.integers(-1439, 1439).map(_offset)),
    st.datetimes(timezones=st.integers(-1439, 1439).map(_offset)).map(datetime.isoformat),
    st.datetimes().map(datetime.isoformat),
    st.sampled_from([datetime.min, datetime.max, datetime.min.replace(tzinfo=_offset(1439)),
                     datetime.max.replace(tzinfo=_offset(-1439)), datetime.max.replace(tzinfo=timezone.utc),
                     "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59.999999-23:59", "1970-01-01T00:00:00Z",
                     "2023-05-08", "2023-02-30T00:00:00Z", "2023-05-08T25:00:00Z", "2023-W19-1", "1683554160",
                     "yesterday", "now", "", " ", "2023-05-08T13:56:00.123456789Z", "+002023-05-08"]),
    hostile_text,
    st.integers() | st.floats(allow_nan=True) | st.booleans() | st.dates(),
)


@pytest.fixture
def recorded(memory: AgenticMemory) -> Any:
    """A note with a history (created, updated), and when it was created: what a read at any time is checked
    against."""
    note = memory.add("Gina opened a bakery on Main Street.", tags=["work"])
    memory.update(note.id, content="Gina opened a bakery and a cafe on Main Street.", reason="she grew")
    return memory.get(note.id)


@given(as_of=moments, valid_at=moments, query=st.sampled_from(["bakery", "Gina", "cafe"]) | hostile_text)
def test_reads_at_any_time_answer_as_of_then_or_are_typed_errors(memory: AgenticMemory, bystander: Any, recorded: Any,
                                                                 as_of: Any, valid_at: Any, query: str) -> None:
    try:
        at = validation.event_time(as_of, "as_of")
    except AmemError:
        at = "refused"
    hits = typed(lambda: memory.search(query, k=3, as_of=as_of, valid_at=valid_at))
    got = typed(lambda: memory.get(recorded.id, as_of=as_of))
    history = typed(lambda: memory.history(recorded.id, as_of=as_of))
    typed(lambda: memory.context_for(query, as_of=as_of))
    event("answered" if got is not None else "refused")
    if at == "refused":
        assert hits is None and got is None and history is None
    elif at is not None and at < recorded.created_at:  # before the note existed: it is not there
        assert got is None and not any(h.note.id == recorded.id for h in hits or ())
    elif at is not None and at >= recorded.updated_at:  # since its last version: as it is now
        assert got is not None and got.content == recorded.content
    assert hits is None or all(hit.note.tenant == memory.tenant for hit in hits)
    assert bystander()


policy_values = st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                          st.sampled_from([0, -1, 10**30, -0.0, 1e-300, 2**63]), hostile_text, st.lists(st.integers()))


def mostly(sane: Any) -> Any:
    """Nine in ten values a rule may hold (so that a fair share of the policies run), the rest anything."""
    return st.integers(0, 9).flatmap(lambda roll: sane if roll else policy_values)  # one_of would flatten the odds


@given(max_notes=mostly(st.none() | st.integers(0, 50)), unused_days=mostly(st.none() | st.floats(0, 400)),
       min_heat=mostly(st.none() | st.floats(0, 5)), batch=mostly(st.integers(1, 10)))
def test_retention_policies_of_any_value_archive_what_they_say_or_change_nothing(
    memory: AgenticMemory, bystander: Any, max_notes: Any, unused_days: Any, min_heat: Any, batch: Any,
) -> None:
    # Each case has notes of its own and erases them: an archive and a restore each add a period to a note,
    # so notes kept across cases would make every case read the periods of all the cases before it.
    notes = memory.add_many([f"Note {i}: Gina talked about the bakery." for i in range(3)])
    try:
        _retention_case(memory, RetentionPolicy(max_notes=max_notes, unused_days=unused_days, min_heat=min_heat),
                        batch)
    finally:
        for note_id in notes:
            memory.delete(note_id)
    assert bystander()


def _retention_case(memory: AgenticMemory, policy: RetentionPolicy, batch: Any) -> None:
    """The policy's plan is what its run archives, and a refused run archives nothing. Both are at one moment:
    a note a few milliseconds old may be past `unused_days` by the time a run starts."""
    now = datetime.now(timezone.utc)
    plan = typed(lambda: memory.retention.plan(policy, now=now))
    before = fingerprint(memory, memory.tenant)
    ran = typed(lambda: memory.retention.run(policy, now=now, batch=batch))
    event("ran" if ran is not None else "refused")
    if ran is None:
        assert fingerprint(memory, memory.tenant) == before  # refused: nothing archived
    else:
        assert plan is not None and {a.note_id for a in ran} == {a.note_id for a in plan}
        archived = {n.id for n in memory.list(limit=100, include_archived=True) if n.archived_at}
        assert {a.note_id for a in ran} <= archived
        memory.retention.restore(sorted(archived))
    stored = typed(lambda: memory.retention.set_policy(policy))
    assert stored is None or memory.retention.policy() == stored  # as kept: days and heat as floats


MODELS = st.one_of(hostile_text, st.sampled_from([
    "sentence-transformers/not-a-model", "intfloat/e5-small-v2-typo", "../../../etc", "/", ".", "/dev/null",
    "http://127.0.0.1:9/model", "all-MiniLM-L6-v2 ", "ALL-MINILM-L6-V2", "onnx-int8", "x" * 5_000]))


@given(model=MODELS)
def test_a_model_that_does_not_exist_is_a_typed_error_and_changes_nothing(memory: AgenticMemory, bystander: Any,
                                                                          model: str) -> None:
    """Opening a memory, or moving the database, with a model that cannot load: a typed error, the database as
    it was (its marker names the model it had)."""
    marker = memory.stats().schema
    settings = replace(memory.settings, embedding_model=model)
    embedder = typed(lambda: Embedder.of(settings))
    event("loaded" if embedder is not None else "refused")
    if embedder is not None:  # a name of the model in use, or one the table knows: opening checks the marker
        shared = memory._store if memory.admin.kind == "embedded" else None
        opened = typed(lambda: AgenticMemory(settings, tenant=memory.tenant, store=shared, embedder=embedder))
        if opened is not None:
            assert embedder.model_name == memory.embedder.model_name or not marker.get("embedding_model")
            if shared is None:
                opened.close()
    assert memory.stats().schema == marker
    assert bystander()


@functools.cache
def tool_schemas() -> dict[str, dict[str, Any]]:
    """Every MCP tool's name and argument schema, as the server lists them to a client (no memory is touched)."""
    return {tool.name: tool.input_schema for tool in asyncio.run(memory_server(None).list_tools())}  # type: ignore[arg-type]


NOTE = "<a note of the tenant>"  # a sane id: the test puts a real note's id in its place
TIMES = {"as_of", "valid_at", "after", "before", "event_time", "at"}
SANE_TEXT = st.sampled_from(["bakery", "Gina opened a bakery.", "Gina", "cafe on Main Street", "s1", "work"])
SANE_TIME = st.sampled_from(["2026-01-01T00:00:00Z", "2023-05-08T13:56:00+02:00", "2999-01-01T00:00:00Z"]) | st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)).map(datetime.isoformat)


def argument(schema: dict[str, Any], defs: dict[str, Any], name: str, sane: bool) -> Any:
    """A value for one argument of a tool, from its JSON schema: one it accepts (`sane`), or half the time
    anything at all."""
    if not sane:
        return st.one_of(argument(schema, defs, name, True), json_values, moments.map(str), policy_values)
    if "$ref" in schema:
        return argument(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, name, sane)
    if "anyOf" in schema:
        return st.one_of([argument(option, defs, name, sane) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "string":
        return SANE_TIME if name in TIMES else st.just(NOTE) if name in ("id", "ids") else SANE_TEXT
    if kind == "integer":
        low = schema.get("minimum", 0)
        return st.integers(low, schema.get("maximum", low + 60))
    if kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1.0) + 1e-6)
        return st.floats(low, 1000.0)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(argument(schema.get("items", {}), defs, name, sane), max_size=3)
    if kind == "object":
        return arguments(schema, defs, sane)
    return json_values


def arguments(schema: dict[str, Any], defs: dict[str, Any], sane: bool) -> Any:
    """An object of a schema: its required properties and any of the others, each as `argument` draws it."""
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    return st.fixed_dictionaries(
        {key: argument(properties[key], defs, key, sane) for key in required},
        optional={key: argument(value, defs, key, sane) for key, value in properties.items() if key not in required})


@st.composite
def tool_calls(draw: Any) -> tuple[str, str, dict[str, Any]]:
    """A call of an MCP tool: half with arguments its schema accepts (`well-formed`), a quarter with its own argument
    names holding anything (`its names`), a quarter with any name and any arguments (`anything`)."""
    schemas = tool_schemas()
    roll = draw(st.sampled_from([0, 0, 1, 2]))  # hypothesis draws integers unevenly: the shares, as sampled
    if roll == 2:
        name = draw(st.sampled_from(sorted(schemas)) | hostile_text)
        names = st.sampled_from(sorted({key for schema in schemas.values() for key in schema["properties"]}))
        return "anything", name, draw(st.dictionaries(names | hostile_text, json_values | moments.map(str), max_size=6))
    name = draw(st.sampled_from(sorted(schemas)))
    schema = schemas[name]
    return ("well-formed" if roll == 0 else "its names"), name, draw(
        arguments(schema, schema.get("$defs", {}), sane=roll == 0))


@pytest.fixture
def tools(memory: AgenticMemory) -> Any:
    return memory_server(memory)


def note_of_tenant(memory: AgenticMemory) -> str:
    """A note with two versions for the tools to name: the same one each case, written again when a case deleted
    it (the same content from the same source is stored once)."""
    note = memory.add("Gina opened a bakery on Main Street.", tags=["work"], session="s1", source="hostile:tools")
    if note.version == 1:
        memory.update(note.id, context="Her bakery on Main Street.", reason="a second version to revert to")
    return note.id


def with_note(value: Any, note_id: str) -> Any:
    if value == NOTE:
        return note_id
    if isinstance(value, list):
        return [with_note(v, note_id) for v in value]
    if isinstance(value, dict):
        return {k: with_note(v, note_id) for k, v in value.items()}
    return value


@given(call=tool_calls())
def test_every_mcp_tool_takes_any_arguments_without_a_crash(memory: AgenticMemory, tools: Any, bystander: Any,
                                                            call: tuple[str, str, dict[str, Any]]) -> None:
    """An MCP tool answers or returns a tool error the model can read (isError) that refuses the input; a crash
    (the SDK's UnexpectedToolError: a traceback kept on the server, what HTTP would serve as an internal error)
    fails, and so does a store's failure passed on as a tool error. Every tool is reached with its real
    arguments: half the calls are well-formed."""
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    shape, name, arguments = call
    arguments = with_note(arguments, note_of_tenant(memory))
    try:
        asyncio.run(tools.call_tool(name, arguments))
        event(f"{shape}: answered")
        if shape != "anything":
            event(f"{name}: answered")
    except UnexpectedToolError as crash:
        raise AssertionError(f"{name}({arguments!r}) crashed: {crash.__cause__!r}") from crash
    except ToolError as refused:  # the SDK says "Error executing tool NAME: KIND: message"
        said = str(refused).removeprefix(f"Error executing tool {name}: ")
        assert not said.startswith(("StoreError", "StoreUnavailable")), f"{name}({arguments!r}): {refused}"
        event(f"{shape}: tool error")
    assert bystander()


# -- the file readers -------------------------------------------------------------------------------------------

ODD_DATES = ["", "tomorrow", "1:56 pm on 30 February, 2023", "25:00 pm on 8 May, 2023", "1:56 pm on 8 May, 0",
             "1:56 pm on 8 May, 99999", "2023-05-08T13:56:00Z", "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59",
             "1683554160", "2023-W19-1", "\u202e1:56 pm on 8 May, 2023", "[1:56 pm on 8 May, 2023]"]
LOCOMO_FILE = [{"sample_id": "conv-x", "conversation": {
    "speaker_a": "Gina", "speaker_b": "Jon",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "Gina", "dia_id": "D1:1", "text": "I opened a bakery on Main Street."},
                  {"speaker": "Jon", "dia_id": "D1:2", "text": "Congratulations!", "blip_caption": "a cake"}],
    "session_2_date_time": "9:00 am on 9 June, 2023",
    "session_2": [{"speaker": "Jon", "dia_id": "D2:1", "text": "How is the bakery?"}],
}, "qa": [{"question": "What did Gina open?", "answer": "a bakery", "evidence": ["D1:1"], "category": 4}]}]
NOTES_FILE = [{"content": "Gina opened a bakery.", "source": "f:1", "session": "s1", "speaker": "Gina",
               "event_time": "2023-05-08T13:56:00Z", "tags": ["work"]},
              {"content": "[1:56 pm on 8 May, 2023] Jon: Congratulations!", "session": "s1"}]
TURNS_FILE = [{"user": "I opened a bakery.", "assistant": "Congratulations!", "session_id": "s1",
               "at": "2023-05-08T13:56:00Z"}, {"user": "It is on Main Street.", "session_id": "s1"}]


def _places(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) of a JSON value: where a mutation can strike."""
    found: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += [(value, key), *_places(inner)]
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += [(value, index), *_places(inner)]
    return found


@st.composite
def mutated(draw: Any, base: Any) -> Any:
    """`base` with up to five blows: a key or item dropped, a value replaced by anything, by an odd date, by a
    value of another type, or an item repeated; a quarter of the time anything at all."""
    if draw(st.integers(0, 3)) == 0:
        return draw(json_values | st.sampled_from([[], {}, [[]], [{}], None, 0, "", [{"conversation": []}]]))
    value = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(0, 5))):
        places = _places(value)
        if not places:
            break
        container, key = draw(st.sampled_from(places))
        blow = draw(st.sampled_from(["drop", "anything", "date", "type", "repeat"]))
        if blow == "drop":
            del container[key]
        elif blow == "anything":
            container[key] = draw(json_values)
        elif blow == "date":
            container[key] = draw(st.sampled_from(ODD_DATES))
        elif blow == "type":
            container[key] = draw(st.sampled_from([[], {}, 0, -1, 2.5, None, True, "", "x" * 200_001]))
        elif isinstance(container, list):
            container.insert(key, json.loads(json.dumps(container[key])))
    return value


def huge(lines: list[str]) -> Any:
    """Sometimes the file many times over (a long file), or one line of millions of characters."""
    return st.integers(0, 31).map(
        lambda roll: lines * 50 if roll == 0 else [json.dumps({"content": "x" * 3_000_000})] if roll == 1 else lines)


def _ingest(cli_env: dict[str, str], path: Any, tenant: str, *options: str) -> Any:
    return CliRunner().invoke(cli_command(), ["ingest", str(path), "-t", tenant, *options], env=cli_env)


@pytest.fixture
def cli_bystander(cli_env: dict[str, str], cli_tenant: str) -> Any:
    """A tenant with a note beside the CLI's; yields its fingerprint check (opened for each look: the CLI opens
    the store itself)."""
    name = bystander_of(cli_tenant)
    settings = Settings.from_env(cli_env)
    with AgenticMemory(settings, tenant=name) as other:
        other.add("Bystander: my notes must stay as they are.")
        before = fingerprint(other, name)

    def same() -> bool:
        with AgenticMemory(settings, tenant=name) as other:
            return fingerprint(other, name) == before and other.admin.check(name).sound

    yield same
    with AgenticMemory(settings, tenant=name) as other:
        other.admin.delete_tenant(name)


def _cleared(cli_env: dict[str, str], tenant: str) -> None:
    """Each case starts from an empty tenant: what one ingest added would make the next skip it."""
    with AgenticMemory(Settings.from_env(cli_env), tenant=tenant) as mem:
        mem.admin.delete_tenant(tenant)


def _reads(read: Any) -> Any:
    """A reader's answer, or None when it refused with InvalidInput: nothing else may come out of it."""
    try:
        return read()
    except AmemError:
        return None


@given(data=mutated(LOCOMO_FILE), options=st.sampled_from([(), ("--bulk",), ("--tiers",), ("--skip-invalid", "--bulk")]))
def test_ingest_takes_any_locomo_file(store_kind: str, cli_env: dict[str, str], cli_tenant: str, cli_bystander: Any,
                                      tmp_path_factory: Any, data: Any, options: tuple[str, ...]) -> None:
    """A LoCoMo file of any shape: the reader gives turns or InvalidInput, `ingest` exits 0 or 3 (one line),
    never 1 with a traceback."""
    from amem_graph.ingest import locomo

    path = tmp_path_factory.mktemp("locomo") / "conversation.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    turns = _reads(lambda: locomo.turns(locomo.pick(locomo.load(path), None)))
    result = _ingest(cli_env, path, cli_tenant, *options)
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 3), (data, result.exit_code, result.output[-800:])
    assert result.exit_code != 0 or turns is not None
    _cleared(cli_env, cli_tenant)
    assert cli_bystander()


@given(records=st.sampled_from([NOTES_FILE, TURNS_FILE]).flatmap(mutated),
       broken=st.lists(st.sampled_from(["", "{", "not json", "\ufeff{}", "[]", "null", '{"content": "\\ud800"}']),
                       max_size=2),
       options=st.sampled_from([(), ("--bulk",), ("--skip-invalid",), ("--tiers",)]), times=st.data())
def test_ingest_takes_any_jsonl_file(store_kind: str, cli_env: dict[str, str], cli_tenant: str, cli_bystander: Any,
                                     tmp_path_factory: Any, records: Any, broken: list[str], options: tuple[str, ...],
                                     times: Any) -> None:
    """JSON Lines of notes or turns of any shape (lines that are not JSON, objects of the wrong fields or types,
    odd dates, a long file, a line of millions of characters): exit 0 or 3, never a traceback."""
    lines = [json.dumps(r) for r in records] if isinstance(records, list) else [json.dumps(records)]
    lines = times.draw(huge(lines + broken))
    path = tmp_path_factory.mktemp("jsonl") / "records.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    result = _ingest(cli_env, path, cli_tenant, *options)
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 3), (lines[:5], result.exit_code, result.output[-800:])
    _cleared(cli_env, cli_tenant)
    assert cli_bystander()


@pytest.fixture
def exported(cli_env: dict[str, str], cli_tenant: str) -> list[Any]:
    """An export of a small tenant (notes in a session, a link, a changed note), as JSON values by line."""
    source = f"{cli_tenant}-source"
    with AgenticMemory(Settings.from_env(cli_env), tenant=source) as mem:
        first = mem.add("Gina opened a bakery on Main Street.", session="s1", event_time="2023-05-08T13:56:00Z")
        second = mem.add("Jon: congratulations on the bakery!", session="s1")
        mem.link(second.id, first.id, "ELABORATES", reason="the bakery", confidence=0.9)
        mem.update(first.id, content="Gina opened a bakery and a cafe on Main Street.", reason="she grew")
        header, records = mem.admin.export()
        lines = [header, *records]
        mem.admin.delete_tenant(source)
    return json.loads(json.dumps(lines, default=str))


@given(blows=st.data())
def test_import_takes_any_export_file(store_kind: str, cli_env: dict[str, str], cli_tenant: str, cli_bystander: Any,
                                      tmp_path_factory: Any, exported: list[Any], blows: Any) -> None:
    """An export file of any shape (records dropped, fields of any value or type, odd dates, repeated records,
    another tenant named): `import` exits 0 or 3, and one that fails leaves nothing behind."""
    lines = blows.draw(mutated(exported))
    header_tenant = lines[0].get("tenant") if isinstance(lines, list) and lines and isinstance(lines[0], dict) else None
    text = "\n".join(json.dumps(line) for line in lines) if isinstance(lines, list) else json.dumps(lines)
    path = tmp_path_factory.mktemp("export") / "tenant.jsonl"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli_command(), ["import", str(path)], env=cli_env)
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 3), (text[:800], result.exit_code, result.output[-800:])
    if isinstance(header_tenant, str) and header_tenant:
        named = _reads(lambda: validation.tenant(header_tenant))
        if named is not None:
            with AgenticMemory(Settings.from_env(cli_env), tenant=named) as mem:
                if result.exit_code != 0:  # refused: the tenant it names holds nothing of it
                    assert not mem.list(limit=1, include_superseded=True, include_archived=True)
                mem.admin.delete_tenant(named)
    assert cli_bystander()
