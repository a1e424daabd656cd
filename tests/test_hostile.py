"""Hostile input, generated (hypothesis), on both stores: arbitrary Unicode (lone surrogates, NUL, RTL marks,
combining marks), huge and empty values, deeply nested metadata, tenants, ids and filters made of Cypher and
Lucene syntax. Every call returns or raises a typed error; none writes outside its tenant.

Cases per test come from the hypothesis profile: `ci` (the default) keeps the suite short; the long run is
`AMEM_HYPOTHESIS_PROFILE=long python -m pytest tests/test_hostile.py` (10,000 per test)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langgraph.store.base import InvalidNamespaceError

from amem_graph import AgenticMemory, AmemError
from amem_graph.integrations.langchain import AmemStore, AmemVectorStore

STORES = ("neo4j", "embedded")

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.register_profile("long", max_examples=10_000, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.load_profile(os.environ.get("AMEM_HYPOTHESIS_PROFILE", "ci"))

SYNTAX = ["'", '"', "`", "\\", "}", "{", ")", "(", "]", "[", "//", "/*", "*/", "$", ":", "-[:X]->", "MATCH (n)",
          "DETACH DELETE n", "tenant:", "AND", "OR", "NOT", "*", "?", "~", "^2", "+", "-", "!", "&&", "||",
          "content:x", "\x00", "\u202e", "\u0301", "\ud800", "\udfff", "\ufeff", "😀", "我", ""]
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
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | hostile_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=20,
)


def fingerprint(memory: AgenticMemory, tenant: str) -> str:
    """Every node and relationship of a tenant, as a hash: what another tenant's calls must never change."""
    _, records = memory.admin.export(tenant)
    rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in records)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


@pytest.fixture
def bystander(memory: AgenticMemory, open_memory) -> Any:
    """A tenant with a note, beside the one under attack; yields its fingerprint check."""
    name = f"{memory.tenant}-bystander"
    with open_memory(name) as other:
        other.add("Bystander: my notes must stay as they are.")
        before = fingerprint(other, name)
        yield lambda: fingerprint(other, name) == before
        other.admin.delete_tenant(name)


def typed(call: Any, *also: type[Exception]) -> Any:
    """The call's result, or None when it raised a typed error; anything else fails the test."""
    try:
        return call()
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
    assert bystander()


@given(content=hostile_text, tag=hostile_text, tenant=hostile_text)
def test_the_cli_answers_with_a_documented_exit_code(cli_env: dict[str, str], cli_tenant: str, content: str, tag: str,
                                                     tenant: str) -> None:
    """A command line of any text: 0, or a user error (2 bad command line, 3 invalid input); never 1, an
    unexpected error with a traceback. Writes go to the test's own tenant; any other tenant is only read."""
    from typer.testing import CliRunner

    from amem_graph.cli import app

    runner = CliRunner()
    for args in (["add", content, "-t", cli_tenant, "--tag", tag], ["search", content, "-t", tenant, "-k", "2"],
                 ["get", content, "-t", tenant], ["list", "-t", tenant]):
        if any("\x00" in a or any(0xD800 <= ord(c) <= 0xDFFF for c in a) for a in args):
            continue  # no process can receive these in its argv: the OS refuses them before the CLI runs
        result = runner.invoke(app, args, env=cli_env)
        assert result.exit_code in (0, 2, 3), (args, result.exit_code, result.output[-500:])
