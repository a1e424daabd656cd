"""`bench mcp`: what the Model Context Protocol costs over the engine's own calls. The same adds and searches,
timed in process (`AgenticMemory.add` / `search`), through `amem-graph mcp` over stdio, and over streamable
HTTP on loopback, with the SDK's client; p50/p95 per path and the ratio of each to in process.

The paths run one after the other (the embedded store opens in one process at a time), each on a tenant of
its own and after a warm-up, and the whole sequence repeats `rounds` times, so that the machine's drift shows
as the spread between rounds rather than as a protocol cost."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from ..api import AgenticMemory
from ..server import free_port
from ..settings import Settings
from .texts import sentences
from .timing import percentiles

WARMUP = 5
PATHS = ("in_process", "stdio", "http")


def run(settings: Settings, *, n: int = 100, queries: int = 100, rounds: int = 2, seed: int = 7) -> dict[str, Any]:
    return asyncio.run(_run(settings, n=n, queries=queries, rounds=rounds, seed=seed))


async def _run(settings: Settings, *, n: int, queries: int, rounds: int, seed: int) -> dict[str, Any]:
    texts = sentences(n + WARMUP, seed)
    asked = [t.split(": ", 1)[1][:60] for t in texts[: queries + WARMUP]]
    samples: dict[str, dict[str, list[float]]] = {p: {"add": [], "search": []} for p in PATHS}
    per_round: list[dict[str, Any]] = []
    tenants: list[str] = []
    try:
        for _ in range(rounds):
            this_round: dict[str, Any] = {}
            for path in PATHS:
                tenant = f"bench-mcp-{path}-{uuid.uuid4().hex[:8]}"
                tenants.append(tenant)
                async with _caller(settings, path, tenant) as (add, search):
                    timed = await _timed(add, search, texts, asked)
                for op, values in timed.items():
                    samples[path][op] += values
                this_round[path] = {op: percentiles(values) for op, values in timed.items()}
            per_round.append(this_round)
    finally:
        with AgenticMemory(settings) as memory:
            for tenant in tenants:
                memory.admin.delete_tenant(tenant)
    summary = {path: {op: percentiles(values) for op, values in ops.items()} for path, ops in samples.items()}
    return {
        "benchmark": "mcp",
        "store": settings.store_kind,
        "notes_per_path": n, "searches_per_path": queries, "rounds": rounds,
        "latency_ms": summary,
        "ratio_to_in_process": {
            path: {op: {q: round(summary[path][op][q] / summary["in_process"][op][q], 3) for q in ("p50", "p95")}
                   for op in ("add", "search")}
            for path in ("stdio", "http")
        },
        "overhead_ms_p50": {path: {op: round(summary[path][op]["p50"] - summary["in_process"][op]["p50"], 2)
                                   for op in ("add", "search")} for path in ("stdio", "http")},
        "per_round": per_round,
    }


Call = Callable[[str], Awaitable[Any]]


async def _timed(add: Call, search: Call, texts: list[str], asked: list[str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"add": [], "search": []}
    for op, call, inputs in (("add", add, texts), ("search", search, asked)):
        for i, value in enumerate(inputs):
            began = time.perf_counter()
            await call(value)
            if i >= WARMUP:
                times[op].append((time.perf_counter() - began) * 1000)
    return times


@asynccontextmanager
async def _caller(settings: Settings, path: str, tenant: str) -> AsyncIterator[tuple[Call, Call]]:
    """add(text) and search(query) along `path`, for `tenant`."""
    if path == "in_process":
        with AgenticMemory(settings, tenant=tenant) as memory:
            async def add(text: str) -> Any:
                return memory.add(text)

            async def search(query: str) -> Any:
                return memory.search(query, k=5)

            yield add, search
        return
    async with _client(settings, path, tenant) as client:
        async def add_tool(text: str) -> Any:
            return _checked(await client.call_tool("add_memory", {"content": text}))

        async def search_tool(query: str) -> Any:
            return _checked(await client.call_tool("search_memory", {"query": query, "k": 5}))

        yield add_tool, search_tool


@asynccontextmanager
async def _client(settings: Settings, path: str, tenant: str) -> AsyncIterator[Any]:
    """The SDK's client, connected to `amem-graph mcp` on the same store (the SDK is the extra's: imported
    only when a protocol path runs)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    # No log line per call: writing it would be part of what is timed.
    env = {**os.environ, "AMEM_LOG_LEVEL": "WARNING", "AMEM_STORE": settings.store_kind}
    if path == "stdio":
        params = StdioServerParameters(command=str(Path(sys.executable).parent / "amem-graph"),
                                       args=["mcp", "-t", tenant], env=env)
        with open(os.devnull, "w") as quiet:  # the server's stderr: not the caller's, which may be no file
            async with Client(stdio_client(params, errlog=quiet), read_timeout_seconds=300) as client:
                yield client
        return
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    with served_http(tenant, env) as (url, token, _):
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300) as client:
            yield client


@contextmanager
def served_http(tenant: str, env: dict[str, str], *, log: Any = subprocess.DEVNULL, timeout: float = 300
                ) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    """`amem-graph mcp --transport http` for `tenant` on a free loopback port with a token of its own, once it
    answers: (its /mcp URL, the token, the process); stopped (SIGTERM, then SIGKILL) on the way out."""
    import httpx

    port, token = free_port(), secrets.token_hex(16)
    command = [str(Path(sys.executable).parent / "amem-graph"), "mcp", "--transport", "http", "--port", str(port),
               "-t", tenant]
    proc = subprocess.Popen(command, env={**env, "AMEM_MCP_TOKEN": token}, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"amem-graph mcp exited with {proc.returncode} before it served")
            try:
                if httpx.get(url.replace("/mcp", "/metrics"), headers={"Authorization": f"Bearer {token}"}
                             ).status_code == 200:
                    break
            except httpx.HTTPError:  # not listening yet
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"amem-graph mcp did not answer at {url} in {timeout:.0f} s")
            time.sleep(0.5)
        yield url, token, proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _checked(result: Any) -> Any:
    if result.is_error:
        raise RuntimeError(" ".join(getattr(block, "text", "") for block in result.content)[:300])
    return result

