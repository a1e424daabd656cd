"""Admin commands against the real server: Neo4j Browser's saved queries run, scoped to their tenant;
`delete --tenant` removes one tenant and nothing else; export → import gives the same graph; `consolidate`
re-embeds the database after a model change."""

import json

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory, Settings
from amem_graph.cli import app
from amem_graph.server import LocalNeo4j
from amem_graph.store.base import SCHEMA_VERSION, SchemaWrite
from amem_graph.viewer import browser as neo4j_browser

from .conftest import free_port

runner = CliRunner()


@pytest.fixture
def two_tenants(browse_memory: AgenticMemory, make_browse_tenant):
    """Two tenants with notes, links, versions, pages, segments and persona facts."""
    return browse_memory, [make_browse_tenant(), make_browse_tenant()]


def test_every_saved_query_runs_and_stays_in_its_tenant(two_tenants) -> None:
    memory, (tenant, other) = two_tenants
    note_id = memory.list(tenant=tenant, limit=50)[-1].id  # the first note: linked and evolved
    entity = memory.entities.list(tenant=tenant, limit=1)[0].key
    saved = neo4j_browser.saved_queries()
    assert len(saved) == 6 and neo4j_browser.browser_style().read_text().count("relationship.") >= 6
    assert "node.Entity" in neo4j_browser.browser_style().read_text()
    for name, query in saved:
        params = {"tenant": tenant, "note_id": note_id, "entity": entity}
        records = memory._store._driver.execute_query(query, params).records
        assert records, f"{name!r} found nothing"
        for record in records:
            for value in record.values():
                if hasattr(value, "get") and value.get("tenant") is not None:
                    assert value.get("tenant") == tenant, name  # nodes only of the tenant asked for


def test_browser_command_says_where_and_what_to_load(cli_env: dict[str, str]) -> None:
    result = runner.invoke(app, ["browser", "-t", "demo", "--json"], env=cli_env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["browser"].endswith("/browser/") and data["style_file"].endswith("style.grass")
    assert [q["name"] for q in data["queries"]] == [name for name, _ in neo4j_browser.saved_queries()]
    style = runner.invoke(app, ["browser", "--style"], env=cli_env, catch_exceptions=False)
    assert "node.Note" in style.stdout and "relationship.CONTRADICTS" in style.stdout


def test_delete_tenant_removes_one_tenant_and_nothing_else(two_tenants, cli_env: dict[str, str]) -> None:
    memory, (tenant, other) = two_tenants
    before = memory.stats(tenant=other)
    refused = runner.invoke(app, ["delete"], env={**cli_env, "AMEM_TENANT": ""}, catch_exceptions=False)
    assert refused.exit_code == 3 and "--tenant" in refused.stderr
    declined = runner.invoke(app, ["delete", "-t", tenant], env=cli_env, input="n\n", catch_exceptions=False)
    assert declined.exit_code == 1 and memory.stats(tenant=tenant).labels  # asked, and nothing deleted
    result = runner.invoke(app, ["delete", "-t", tenant, "--yes"], env=cli_env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert memory.stats(tenant=tenant).labels == {}
    after = memory.stats(tenant=other)
    assert after.labels == before.labels and after.relationships == before.relationships
    assert {"Note", "Page", "Segment", "Fact", "Persona"} <= set(after.labels)


def test_export_then_import_reproduces_the_tenant(two_tenants, cli_env: dict[str, str], tmp_path) -> None:
    memory, (tenant, other) = two_tenants
    before, untouched = memory.stats(tenant=tenant), memory.stats(tenant=other)
    note = memory.list(tenant=tenant, limit=50)[-1]
    out = tmp_path / "tenant.jsonl"
    exported = runner.invoke(app, ["export", "-t", tenant, "--out", str(out)], env=cli_env, catch_exceptions=False)
    assert exported.exit_code == 0, exported.output
    again = runner.invoke(app, ["import", str(out)], env=cli_env, catch_exceptions=False)
    assert again.exit_code == 3 and "empty tenant" in again.stderr  # never merged into what is there
    memory.admin.delete_tenant(tenant)
    imported = runner.invoke(app, ["import", str(out)], env=cli_env, catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    after = memory.stats(tenant=tenant)
    assert after.labels == before.labels and after.relationships == before.relationships
    assert {"Note", "NoteVersion", "Evolution", "Page", "Segment", "Fact", "Persona"} <= set(after.labels)
    restored = memory.get(note.id, tenant=tenant, with_embedding=True)
    assert restored.content == note.content and restored.links == memory.get(note.id, tenant=tenant).links
    assert restored.embedding is not None and restored.created_at == note.created_at
    assert memory.search("What does the turtle eat?", tenant=tenant, k=2)  # the vector and fulltext indexes see it
    assert memory.stats(tenant=other).labels == untouched.labels
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text().replace('"labels":["Note"]', '"labels":["Admin"]', 1))
    memory.admin.delete_tenant(tenant)
    refused = runner.invoke(app, ["import", str(bad)], env=cli_env, catch_exceptions=False)
    assert refused.exit_code == 3 and "not the engine's" in refused.stderr and memory.stats(tenant=tenant).labels == {}


def _canonical(path) -> tuple[list[str], list[str]]:
    """An export's nodes and relationships without the store's own keys: equal lists mean equal graphs."""
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    nodes = {r["key"]: json.dumps([r["labels"], r["props"]], sort_keys=True) for r in records if r["kind"] == "node"}
    rels = [json.dumps([nodes[r["start"]], r["type"], nodes[r["end"]], r["props"]], sort_keys=True)
            for r in records if r["kind"] == "relationship"]
    return sorted(nodes.values()), sorted(rels)


def test_export_import_moves_a_tenant_between_the_stores_exactly(two_tenants, cli_env: dict[str, str], tmp_path) -> None:
    """Neo4j → embedded → Neo4j: every node and relationship, with every property, as it was."""
    memory, (tenant, _) = two_tenants
    before = memory.stats(tenant=tenant)
    found = [(h.note.id, h.fulltext_score) for h in memory.search(
        "What does the turtle eat?", tenant=tenant, mode="fulltext", count_use=False)]
    from_neo4j, from_embedded = tmp_path / "neo4j.jsonl", tmp_path / "embedded.jsonl"
    embedded = {**cli_env, "NEO4J_URI": "", "AMEM_HOME": str(tmp_path / "home")}
    for env, args in ((cli_env, ["export", "-t", tenant, "--out", str(from_neo4j)]), (embedded, ["import", str(from_neo4j)]),
                      (embedded, ["export", "-t", tenant, "--out", str(from_embedded)])):
        result = runner.invoke(app, args, env=env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    assert _canonical(from_embedded) == _canonical(from_neo4j)
    stats = json.loads(runner.invoke(app, ["stats", "-t", tenant, "--json"], env=embedded).stdout)
    assert stats["store"] == "embedded" and stats["labels"] == before.labels and stats["relationships"] == before.relationships
    memory.admin.delete_tenant(tenant)
    back = runner.invoke(app, ["import", str(from_embedded)], env=cli_env, catch_exceptions=False)
    assert back.exit_code == 0, back.output
    again = tmp_path / "again.jsonl"
    runner.invoke(app, ["export", "-t", tenant, "--out", str(again)], env=cli_env, catch_exceptions=False)
    assert _canonical(again) == _canonical(from_neo4j)
    # The tenant's BM25 statistics are not exported; the import counted them again.
    assert found and [(h.note.id, h.fulltext_score) for h in memory.search(
        "What does the turtle eat?", tenant=tenant, mode="fulltext", count_use=False)] == found


@pytest.mark.slow
def test_export_imports_into_an_empty_database(two_tenants, cli_env: dict[str, str], settings: Settings, tmp_path) -> None:
    """Export from the test database, import into a second, fresh server: the same counts per label and
    relationship type, and nothing else in it but the engine's schema marker."""
    memory, (tenant, _) = two_tenants
    before = memory.stats(tenant=tenant)
    out = tmp_path / "tenant.jsonl"
    exported = runner.invoke(app, ["export", "-t", tenant, "--out", str(out)], env=cli_env, catch_exceptions=False)
    assert exported.exit_code == 0, exported.output
    server = LocalNeo4j(tmp_path / "empty-neo4j", home=settings.home)
    info = server.start(bolt_port=free_port(), http_port=free_port())
    try:
        fresh = {**cli_env, "NEO4J_URI": info.uri, "NEO4J_USER": info.user, "NEO4J_PASSWORD": info.password}
        imported = runner.invoke(app, ["import", str(out)], env=fresh, catch_exceptions=False)
        assert imported.exit_code == 0, imported.output
        with AgenticMemory(Settings.from_env(fresh), tenant=tenant) as copy:
            after = copy.stats(tenant=tenant)
            assert after.labels == before.labels and after.relationships == before.relationships
            everything = copy.stats()
            assert {k: v for k, v in everything.labels.items() if k != "AmemSchema"} == before.labels
            assert copy.search("What does the turtle eat?", k=1)  # the indexes were built there too
    finally:
        server.stop()


@pytest.mark.slow
def test_consolidate_reembeds_the_database_after_a_model_change(two_tenants, cli_env: dict[str, str]) -> None:
    memory, (tenant, _) = two_tenants
    note = memory.list(tenant=tenant, limit=50)[-1]
    vector = memory.get(note.id, tenant=tenant, with_embedding=True).embedding
    store = memory._store
    try:
        # The database as another model left it: marked for it, with its (smaller) index.
        store.schema(create=SchemaWrite("another/model", 8, SCHEMA_VERSION))
        with pytest.raises(Exception) as refused:
            AgenticMemory(Settings.from_env(cli_env), tenant=tenant, init_schema=False)
        assert type(refused.value).__name__ == "SchemaMismatch"
        result = runner.invoke(app, ["consolidate", "--yes"], env=cli_env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert "rebuilt with 384 dimensions" in result.stdout
    finally:  # whatever happened, the shared test database is this model's again, with its index
        store.schema(create=SchemaWrite(memory.embedder.model_name, memory.embedder.dimension, SCHEMA_VERSION))
    assert store.vector_index()["dimension"] == 384
    with AgenticMemory(Settings.from_env(cli_env), tenant=tenant) as reopened:
        again = reopened.get(note.id, with_embedding=True).embedding
        assert again is not None and sum(a * b for a, b in zip(again, vector)) > 0.999  # same model, same vector
        assert reopened.search("What does the turtle eat?", k=1)
        assert reopened.context_for("turtle", notes=1).similar  # pages re-embedded too
