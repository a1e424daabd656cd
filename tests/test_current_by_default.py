"""Every public read path that finds or lists notes answers with the current ones: a note a later note contradicted
(superseded, `invalid_at` set) comes back only when the caller asks for it. `get` and `history` by id still
return it, marked, since the caller named it."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client
from typer.testing import CliRunner

from amem_graph import AgenticMemory
from amem_graph.bench.scripted_llm import Answer, ScriptedLLM
from amem_graph.cli import app
from amem_graph.integrations.langchain import AmemRetriever, AmemStore, AmemVectorStore, SearchMemoriesTool
from amem_graph.integrations.mcp import memory_server
from amem_graph.viewer import browser as neo4j_browser

STORES = ("neo4j", "embedded")
OLD, NEW = "Gina works at Door Dash as a driver.", "Gina lost her driver job at Door Dash."
QUERY = "Where does Gina work? Door Dash driver job"


def analysis(*links: dict[str, Any]) -> Answer:
    body = {"keywords": ["gina", "door dash"], "context": "Gina's job.", "tags": ["work"], "links": list(links),
            "neighbour_updates": []}
    return Answer(json.dumps(body))


CONTRADICTS = {"target_id": "c1", "type": "CONTRADICTS", "reason": "Gina lost that job", "confidence": 0.95}


def supersede(llm: ScriptedLLM, write: Callable[[str], None]) -> None:
    """OLD, then NEW with the scripted model saying it contradicts OLD (the only candidate, "c1")."""
    llm.script(analysis())
    write(OLD)
    llm.script(analysis(CONTRADICTS))
    write(NEW)


def texts(items: Any) -> set[str]:
    return {text for text in (OLD, NEW) if text in str(items)}


def test_every_read_path_of_the_engine_answers_with_current_notes(llm: ScriptedLLM, llm_memory: AgenticMemory) -> None:
    mem = llm_memory
    supersede(llm, lambda text: mem.add(text, session="s1", speaker="Gina"))
    old = next(note for note in mem.list(include_superseded=True) if note.content == OLD)
    assert old.invalid_at is not None
    assert texts([hit.note.content for hit in mem.search(QUERY, k=5)]) == {NEW}
    assert texts([hit.note.content for hit in mem.search(QUERY, k=5, include_superseded=True)]) == {OLD, NEW}
    assert texts(mem.context(QUERY, k=5)) == {NEW}
    assert texts(mem.context_for(QUERY).prompt()) == {NEW}
    assert texts([note.content for note in mem.list()]) == {NEW}
    assert texts([note.content for note in mem.list(include_superseded=True)]) == {OLD, NEW}
    # By id, the caller named it: returned, marked, with what superseded it.
    assert mem.get(old.id).invalid_at is not None and mem.history(old.id).superseded_by

    assert texts([d.page_content for d in AmemRetriever(memory=mem, k=5).invoke(QUERY)]) == {NEW}
    assert texts(SearchMemoriesTool(memory=mem).invoke({"query": QUERY, "k": 5})) == {NEW}

    async def mcp() -> None:
        async with Client(memory_server(mem)) as client:
            async def found(tool: str, **arguments: Any) -> set[str]:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, result.content)
                out = result.structured_content or {}
                if tool == "search_memory":  # a hit's note carries its session's turns too: its content decides
                    return texts([hit["note"]["content"] for hit in out["hits"]])
                return texts(out["context"] if "context" in out else out["prompt"])

            assert await found("search_memory", query=QUERY, k=5) == {NEW}
            assert await found("search_memory", query=QUERY, k=5, include_superseded=True) == {OLD, NEW}
            assert await found("memory_context", query=QUERY) == {NEW}
            assert await found("dialogue_context", query=QUERY) == {NEW}

    asyncio.run(mcp())


def test_the_vector_store_and_the_langgraph_store_answer_with_current_notes(
    llm: ScriptedLLM, llm_memory: AgenticMemory,
) -> None:
    tenants = [f"docs-{uuid.uuid4().hex[:8]}", f"items-{uuid.uuid4().hex[:8]}"]
    try:
        documents = AmemVectorStore(llm_memory, tenant=tenants[0])
        supersede(llm, lambda text: documents.add_texts([text]) and None)
        assert texts([d.page_content for d in documents.similarity_search(QUERY, k=5)]) == {NEW}
        assert texts([d.page_content for d in documents.similarity_search(QUERY, k=5, filter={"x": {"$ne": 1}})]) == {NEW}
        every = AmemVectorStore(llm_memory, tenant=tenants[0], include_superseded=True)
        assert texts([d.page_content for d in every.similarity_search(QUERY, k=5)]) == {OLD, NEW}

        store = AmemStore(llm_memory)
        keys = iter(("old", "new"))
        supersede(llm, lambda text: store.put((tenants[1],), next(keys), {"text": text}))
        assert texts([item.value for item in store.search((tenants[1],), query=QUERY, limit=5)]) == {NEW}
        assert texts([item.value for item in store.search((tenants[1],), limit=5)]) == {NEW}
        assert texts(store.get((tenants[1],), "old").value) == {OLD}  # by key: named, so returned
        every_item = AmemStore(llm_memory, include_superseded=True)
        assert texts([item.value for item in every_item.search((tenants[1],), query=QUERY, limit=5)]) == {OLD, NEW}
        assert texts([item.value for item in every_item.search((tenants[1],), limit=5)]) == {OLD, NEW}
    finally:
        for tenant in tenants:
            llm_memory.admin.delete_tenant(tenant)


@pytest.mark.neo4j_only  # Browser's saved queries are Cypher for the server
def test_browsers_saved_queries_leave_superseded_and_archived_notes_out(
    llm: ScriptedLLM, llm_memory: AgenticMemory,
) -> None:
    supersede(llm, lambda text: llm_memory.add(text, session="s1", speaker="Gina"))
    llm.script(analysis())
    archived = llm_memory.add("Gina starts at a bakery next week.", session="s1", speaker="Gina")  # the next turn
    llm_memory.retention.archive([archived.id])
    new = next(note for note in llm_memory.list() if note.content == NEW)
    llm.script(analysis())
    current = llm_memory.add("Gina starts at a cafe next week.")
    llm_memory.link(new.id, current.id, reason="her next job")  # a current neighbour
    shown: dict[str, list[Any]] = {}
    for name, query in neo4j_browser.saved_queries():
        params = {"tenant": llm_memory.tenant, "note_id": new.id, "entity": "gina"}
        records = llm_memory._store._driver.execute_query(query, params).records
        shown[name] = [value.get("content") for record in records for value in record.values()
                       if hasattr(value, "get")] + [record.get("content") for record in records if "content" in record]
    neighbourhood = next(name for name in shown if "neighbourhood" in name)
    assert texts(shown[neighbourhood]) == {NEW}  # its NEXT and CONTRADICTS links to OLD show no OLD
    assert all(OLD not in texts(found) for found in shown.values()), shown
    assert not any(archived.content in str(found) for found in shown.values()), shown


def test_the_clis_list_and_search_answer_with_current_notes(cli_env: dict[str, str], cli_tenant: str,
                                                             llm: ScriptedLLM) -> None:
    env = {**cli_env, "AMEM_LLM_BASE_URL": llm.base_url, "AMEM_LLM_API_KEY": "scripted", "AMEM_LLM_MODEL": "scripted",
           "AMEM_LLM_MAX_RETRIES": "1", "AMEM_LLM_BACKOFF": "0"}

    def cli(*args: str) -> Any:
        result = CliRunner().invoke(app, [*args, "-t", cli_tenant], env=env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result

    supersede(llm, lambda text: cli("add", text))
    listed = json.loads(cli("list", "--json").stdout)
    assert texts([note["content"] for note in listed]) == {NEW}
    assert texts([note["content"] for note in json.loads(cli("list", "--superseded", "--json").stdout)]) == {OLD, NEW}
    found = json.loads(cli("search", QUERY, "--json").stdout)
    assert texts([hit["note"]["content"] for hit in found]) == {NEW}
    asked = json.loads(cli("search", QUERY, "--superseded", "--json").stdout)
    assert texts([hit["note"]["content"] for hit in asked]) == {OLD, NEW}
