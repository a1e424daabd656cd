"""Neo4j 2026.x (a calendar release, Java 21+) beside 5.26 LTS: the same engine, with the vector index holding
each note's tenant and k-NN filtering by it inside the index (Cypher 25's SEARCH). A private server of the
release the setup installed (AMEM_NEO4J_VERSION for `neo4j install`; 2026.08.1 in .ci/run)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.errors import ServerError
from amem_graph.models import NO_FILTER
from amem_graph.server import ConnectionInfo, LocalNeo4j
from amem_graph.store import neo4j_notes
from amem_graph.store.neo4j import VECTOR_INDEX

from .conftest import free_port

RELEASE = os.environ.get("AMEM_TEST_NEO4J_CALENDAR_VERSION", "2026.08.1")


@pytest.fixture(scope="module")
def calendar_server(base_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectionInfo]:
    server = LocalNeo4j(tmp_path_factory.mktemp("neo4j-calendar"), home=base_settings.home, version=RELEASE,
                        heap="512m", pagecache="256m")
    if not server.installed():
        pytest.skip(f"Neo4j {RELEASE} jars are not installed (scripts/setup.sh fetches them where Java 21 exists)")
    try:
        server.java()
    except ServerError as err:
        pytest.skip(str(err))
    info = server.start(bolt_port=free_port(), http_port=free_port())
    try:
        yield info
    finally:
        server.stop()


@pytest.mark.slow
def test_a_calendar_release_filters_by_tenant_inside_the_vector_index(
    base_settings: Settings, calendar_server: ConnectionInfo, monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = replace(base_settings, neo4j_uri=calendar_server.uri, neo4j_user=calendar_server.user,
                       neo4j_password=calendar_server.password, store="neo4j")
    with AgenticMemory(settings, tenant="cal-a") as a, AgenticMemory(settings, tenant="cal-b") as b:
        store = a._store
        assert store.server_version == RELEASE and store.dialect == "25"
        assert store.vector_index()["properties"] == ["embedding", "tenant"]
        mine = [a.add(f"Alice's note {i}: she went hiking near lake {i}.").id for i in range(8)]
        b.add_many([f"Bob's note {i}: he went hiking near lake {i}." for i in range(40)])
        query = a.embedder.embed_one("hiking near a lake")
        approximate = a.attachments.notes_near("cal-a", query, 5, NO_FILTER)
        assert len(approximate) == 5 and {n.id for n, _ in approximate} <= set(mine)  # no other tenant's note
        hits = a.search("Where did Alice go hiking?", k=3)
        assert hits and all(h.note.tenant == "cal-a" for h in hits)
        # A long note's passages: found through their own index, filtered by tenant inside it too.
        long = a.add("Alice wrote about the weather. " * 200 + "At the end: her kayak is bright orange.")
        b.add("Bob wrote about the weather. " * 200 + "At the end: his kayak is bright orange.")
        monkeypatch.setattr(neo4j_notes, "EXACT_PASSAGES", 0)  # the index, not the scan of a few passages
        found = a.search("What colour is the kayak?", k=1, mode="vector")
        assert found[0].note.id == long.id and found[0].passage is not None
        assert a.admin.check().sound and b.admin.check().sound
        a.admin.delete_tenant("cal-a")
        b.admin.delete_tenant("cal-b")


@pytest.mark.slow
def test_an_index_made_without_the_tenant_is_built_again(base_settings: Settings, calendar_server: ConnectionInfo,
                                                          tmp_path: Path) -> None:
    """A database that Neo4j 5 made, then upgraded: its vector index cannot filter; `init` builds it again."""
    settings = replace(base_settings, neo4j_uri=calendar_server.uri, neo4j_user=calendar_server.user,
                       neo4j_password=calendar_server.password, store="neo4j")
    with AgenticMemory(settings, tenant="cal-old") as memory:
        store = memory._store
        note = memory.add("Carol keeps a kayak in the garage.")
        store._run("admin/drop_vector_index", write=True)
        store._run("schema/050_note_embedding", write=True, dimension=memory.embedder.dimension,  # Neo4j 5's
                   **VECTOR_INDEX)
        store._run("admin/await_indexes", write=True, timeout_s=120)
        assert store.vector_index()["properties"] == ["embedding"] and not store._knn.tenant_in_index
        assert memory.search("kayak", k=1, mode="vector")[0].note.id == note.id  # the over-fetch path still works
        memory.admin.init_schema()
        assert store.vector_index()["properties"] == ["embedding", "tenant"] and store._knn.tenant_in_index
        assert memory.search("kayak", k=1, mode="vector")[0].note.id == note.id
        memory.admin.delete_tenant("cal-old")
