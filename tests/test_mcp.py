"""The MCP server, driven by the SDK's own client on both stores: over real stdio (`amem-graph mcp` as a
subprocess) and real streamable HTTP on loopback (behind its bearer token, with /metrics), and in process
for a database that goes away."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.mcp import served_http
from amem_graph.core import validation
from amem_graph.integrations.mcp import memory_server
from amem_graph.integrations.mcp.http import TOKEN_ENV, bearer_token

from .sockets import Cuttable, listening

STORES = ("neo4j", "embedded")
AMEM = str(Path(sys.executable).parent / "amem-graph")
TOOLS = {"add_memory", "search_memory", "memory_context", "get_memory", "memory_history", "revert_memory",
         "delete_memory", "add_turn", "dialogue_context", "persona", "entity", "import_memories", "retention_plan",
         "retention_run", "restore_memory"}
NOTES = ["Alice adopted a beagle named Max in May 2023.",
         "Max the beagle loves the park near Alice's house.",
         "Alice takes Max to the park every Sunday morning."]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result; a tool error fails the test with its message."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content)
    return result.structured_content or {}


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """The message of a tool error: the engine's words, never a traceback."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, result.structured_content)
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert "Traceback" not in text and text
    return text


async def session(client: Client) -> None:
    """What an agent does with its memory, and what it must be refused."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == TOOLS
    assert all("tenant" not in tool.input_schema.get("properties", {}) for tool in listed.values())
    assert listed["search_memory"].annotations.read_only_hint
    assert listed["delete_memory"].annotations.destructive_hint and listed["revert_memory"].annotations.destructive_hint
    assert not listed["add_memory"].annotations.read_only_hint
    assert "query" in listed["search_memory"].input_schema["required"]

    ids = [(await call(client, "add_memory", content=text, tags=["dog"]))["note"]["id"]
           for text in NOTES]
    hits = (await call(client, "search_memory", query="What is Alice's dog called?", k=3, hops=1))["hits"]
    assert hits and {hit["note"]["id"] for hit in hits} <= set(ids)
    top = hits[0]
    assert top["score"] > 0 and top["vector_score"] is not None and "path" in top and "hops" in top
    # Only the last note says "Sunday": the others are found through its links, each hit with the path.
    found = (await call(client, "search_memory", query="Sunday", k=3, hops=1, mode="fulltext"))["hits"]
    assert found[0]["note"]["id"] == ids[2] and found[0]["path"] == []
    reached = [hit for hit in found if hit["path"]]
    assert reached and all(step["reason"] and step["type"] for hit in reached for step in hit["path"])
    context = await call(client, "memory_context", query="Alice's dog", k=2)
    assert "beagle" in context["context"] and set(context["note_ids"]) <= set(ids)

    # The later notes evolved an earlier one: its history holds the version it had, and it can go back to it.
    evolved = [note for note in [(await call(client, "get_memory", id=i))["note"] for i in ids] if note["version"] > 1]
    assert evolved, "the heuristic analyser evolves a neighbour sharing the note's words"
    first = evolved[0]
    history = await call(client, "memory_history", id=first["id"])
    assert [v["version"] for v in history["versions"]][0] == 1 and history["evolutions"]
    reverted = (await call(client, "revert_memory", id=first["id"], version=1))["note"]
    assert reverted["version"] == first["version"] + 1 and reverted["tags"] == history["versions"][0]["tags"]

    before_turn = validation.now().isoformat()
    await asyncio.sleep(0.01)  # times are kept to the millisecond: the turn comes strictly after `before_turn`
    page = (await call(client, "add_turn", user_text="I am moving to Lisbon in June.",
                       assistant_text="Exciting! I will remember that.", session_id="chat"))["page"]
    dialogue = await call(client, "dialogue_context", query="Where is the user moving?", session_id="chat")
    assert page["id"] in {p["id"] for p in dialogue["stm"]} and "Lisbon" in dialogue["prompt"]
    earlier = await call(client, "dialogue_context", query="Where is the user moving?", session_id="chat",
                         as_of=before_turn)
    assert page["id"] not in {p["id"] for p in earlier["stm"]} and "Lisbon" not in earlier["prompt"]  # as they stood then
    assert "facts" in await call(client, "persona")

    # Bad arguments: tool errors with the reason, nothing written.
    before = json.loads((await client.read_resource("amem://stats")).contents[0].text)["labels"]["Note"]
    assert "greater than or equal to 1" in await refused(client, "search_memory", query="dog", k=0)
    assert "NoteNotFound" in await refused(client, "get_memory", id="no-such-note")
    assert "InvalidInput" in await refused(client, "add_memory", content="   ")
    assert "tenant" in await refused(client, "add_memory", content="Into another tenant?", tenant="someone-else")
    assert "ISO-8601" in await refused(client, "add_memory", content="Bad time.", event_time="yesterday-ish")
    assert "item 1: content is empty" in await refused(client, "import_memories", items=[{"content": "ok"}, {"content": " "}])
    after = json.loads((await client.read_resource("amem://stats")).contents[0].text)["labels"]["Note"]
    assert after == before == len(ids)
    imported = await call(client, "import_memories", skip_invalid=True,
                          items=[{"content": "Alice's cat is called Tom.", "tags": ["cat"]}, {"content": " "}])
    assert len(imported["ids"]) == 1 and [s["position"] for s in imported["skipped"]] == [1]
    assert "content is empty" in imported["skipped"][0]["error"]
    await call(client, "delete_memory", id=imported["ids"][0])

    note = json.loads((await client.read_resource(f"amem://note/{ids[0]}")).contents[0].text)
    assert note["content"] == NOTES[0]
    await call(client, "delete_memory", id=ids[2])
    assert "NoteNotFound" in await refused(client, "get_memory", id=ids[2])


@pytest.mark.slow
def test_an_agent_over_stdio(store_kind: str, cli_env: dict[str, str], cli_tenant: str) -> None:
    params = StdioServerParameters(command=AMEM, args=["mcp", "-t", cli_tenant], env={**os.environ, **cli_env})

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await session(client)

    run(main())


@dataclass
class HttpServer:
    url: str
    token: str

    def client(self) -> Client:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}"})
        return Client(streamable_http_client(self.url, http_client=http), read_timeout_seconds=120)

    def metrics(self) -> str:
        response = httpx.get(self.url.replace("/mcp", "/metrics"), headers={"Authorization": f"Bearer {self.token}"})
        response.raise_for_status()
        return response.text


@pytest.fixture
def http_server(store_kind: str, cli_env: dict[str, str], cli_tenant: str, tmp_path: Path) -> Iterator[HttpServer]:
    log_path = tmp_path / "mcp.log"
    with log_path.open("wb") as log, served_http(cli_tenant, {**os.environ, **cli_env}, log=log) as (url, token, _):
        yield HttpServer(url, token)
    assert "Traceback" not in log_path.read_text()


@pytest.mark.slow
def test_an_agent_over_http_with_its_token(http_server: HttpServer) -> None:
    addresses = listening(int(urlsplit(http_server.url).port or 0))
    assert addresses and all(str(a) == "127.0.0.1" for a in addresses), addresses  # loopback by default
    async def main() -> None:
        async with http_server.client() as client:
            await session(client)

    run(main())
    scraped = http_server.metrics()
    assert 'amem_operations_total{op="add",outcome="ok"} 3.0' in scraped
    assert 'amem_operations_total{op="history",outcome="NoteNotFound"}' in scraped
    assert 'amem_operation_duration_seconds_count{op="search"}' in scraped
    assert "amem_evolved_notes_total" in scraped and "amem_store_errors_total" in scraped
    assert "amem_analysis_queue 0.0" in scraped and "amem_analysis_queue_lag_seconds 0.0" in scraped


@pytest.mark.slow
def test_without_the_token_nothing_is_served_and_two_clients_with_it_lose_nothing(http_server: HttpServer) -> None:
    add = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "add_memory", "arguments": {"content": "Written without a token?"}}}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": http_server.token},
                    {"Authorization": f"Basic {http_server.token}"}):
        for method, url in (("POST", http_server.url), ("GET", http_server.url.replace("/mcp", "/metrics"))):
            response = httpx.request(method, url, json=add if method == "POST" else None,
                                     headers={**headers, "Accept": "application/json, text/event-stream"})
            assert response.status_code == 401, (headers, url, response.status_code)
            assert response.headers["www-authenticate"].startswith("Bearer")
    assert "amem_operations_total{" not in http_server.metrics()  # no operation ran

    async def writer(name: str) -> list[str]:
        async with http_server.client() as client:
            return [(await call(client, "add_memory", content=f"{name} wrote memory number {i} about {name}'s garden.",
                                source=f"{name}-{i}"))["note"]["id"] for i in range(8)]

    async def main() -> None:
        written = await asyncio.gather(writer("Ann"), writer("Ben"))
        ids = {i for batch in written for i in batch}
        assert len(ids) == 16
        async with http_server.client() as client:
            for note_id in ids:
                await call(client, "get_memory", id=note_id)
            stats = json.loads((await client.read_resource("amem://stats")).contents[0].text)
            assert stats["labels"]["Note"] == 16  # the 16 written, and nothing of the refused requests

    run(main())


def test_the_token_file_is_made_once_and_only_its_owner_reads_it(tmp_path: Path) -> None:
    settings = replace(Settings.from_env({}), home=tmp_path)
    token, where = bearer_token(settings, env={})
    assert Path(where) == tmp_path / "mcp-token" and len(token) >= 32
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o600
    assert bearer_token(settings, env={}) == (token, where)
    assert bearer_token(settings, env={TOKEN_ENV: "from-env"}) == ("from-env", TOKEN_ENV)


def test_a_database_that_goes_away_is_a_tool_error_and_the_server_keeps_serving(
        neo4j_settings: Settings, tenant: str) -> None:
    """Neo4j only: the embedded store lives in the server's own process, so it cannot go away alone."""
    parts = urlsplit(neo4j_settings.neo4j_uri or "")
    proxy = Cuttable((parts.hostname or "127.0.0.1", parts.port or 7687))
    settings = replace(neo4j_settings, neo4j_uri=f"bolt://127.0.0.1:{proxy.port}", neo4j_timeout_s=1.0)
    memory = AgenticMemory(settings, tenant=tenant)

    async def main() -> None:
        async with Client(memory_server(memory)) as client:
            kept = (await call(client, "add_memory", content="Alice keeps bees on the roof."))["note"]["id"]
            proxy.cut()
            assert "StoreUnavailable" in await refused(client, "add_memory", content="Bob paints boats.")
            assert "StoreUnavailable" in await refused(client, "search_memory", query="bees")
            proxy.restore()
            assert (await call(client, "get_memory", id=kept))["note"]["content"] == "Alice keeps bees on the roof."
            hits = (await call(client, "search_memory", query="boats", k=5))["hits"]
            assert [hit["note"]["id"] for hit in hits] == [kept]  # nothing of the failed add

    try:
        run(main())
    finally:
        memory.admin.delete_tenant(tenant)
        memory.close()
        proxy.close()


def test_an_operator_may_let_the_client_name_the_tenant(memory: AgenticMemory, open_memory: Any) -> None:
    other = f"{memory.tenant}-other"

    async def main() -> None:
        async with Client(memory_server(memory, allow_tenant_argument=True)) as client:
            tools = (await client.list_tools()).tools
            assert all("tenant" in tool.input_schema["properties"] for tool in tools)
            mine = (await call(client, "add_memory", content="Mine: the server's tenant."))["note"]
            theirs = (await call(client, "add_memory", content="Theirs: another tenant.", tenant=other))["note"]
            assert (mine["tenant"], theirs["tenant"]) == (memory.tenant, other)
            assert "InvalidInput" in await refused(client, "search_memory", query="x", tenant="bad tenant\x00")

    run(main())
    with open_memory(other) as them:
        assert [n.content for n in them.list()] == ["Theirs: another tenant."]
        them.admin.delete_tenant(other)
