"""The schema on a real server: idempotent, the right indexes, and a clear refusal on a model mismatch."""

from collections.abc import Iterator

import pytest

from amem_graph import AgenticMemory, SchemaMismatch, Settings
from amem_graph.maintenance import schema
from amem_graph.store import cypher
from amem_graph.store.base import SCHEMA_VERSION
from amem_graph.store.neo4j import Neo4jStore


def _store(settings: Settings) -> Neo4jStore:
    assert settings.neo4j_uri and settings.neo4j_password
    return Neo4jStore(settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password)


def test_init_is_idempotent_and_creates_every_index(memory: AgenticMemory) -> None:
    memory.admin.init_schema()  # DDL again: no error, no change
    indexes = {row["name"]: row for row in memory._store.indexes()}
    for name in ("note_id_unique", "note_identity_unique", "note_tenant_created", "note_tenant_event_time",
                 "note_embedding", "note_text", "schema_marker_unique", "note_tenant_session", "note_tenant_speaker"):
        assert indexes[name]["state"] == "ONLINE", name
    assert indexes["note_embedding"]["type"] == "VECTOR"
    assert indexes["note_text"]["type"] == "FULLTEXT"
    assert set(indexes["note_text"]["properties"]) == {"content", "context", "keywords", "tags", "neighbourhood"}
    vector = memory._store.vector_index()
    filtered = ["embedding", "tenant"] if memory._store.dialect else ["embedding"]  # 2026.01+ filters by tenant
    assert vector == {"state": "ONLINE", "dimension": 384, "similarity": "COSINE", "properties": filtered,
                      "hnsw_m": 16, "hnsw_ef_construction": 100, "quantized": True}
    assert memory.stats().server["vector_index"] == {"hnsw_m": 16, "hnsw_ef_construction": 100, "quantized": True}
    marker = memory.stats().schema
    assert marker == {"version": SCHEMA_VERSION, "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
                      "embedding_dimension": 384, "consolidating": None}  # no consolidation under way


def test_other_dimension_is_refused_and_changes_nothing(settings: Settings, memory: AgenticMemory) -> None:
    store = _store(settings)
    try:
        with pytest.raises(SchemaMismatch, match="384-dimension embeddings .* but the embedding model gives 768"):
            schema.ensure(store, "some/other-model", 768)
        with pytest.raises(SchemaMismatch, match="768"):
            schema.check(store, "some/other-model", 768)
        assert store.vector_index()["dimension"] == 384
    finally:
        store.close()


def test_other_model_of_same_dimension_is_refused(settings: Settings, memory: AgenticMemory) -> None:
    store = _store(settings)
    try:
        with pytest.raises(SchemaMismatch, match="AMEM_EMBEDDING_MODEL=sentence-transformers/all-MiniLM-L6-v2"):
            schema.check(store, "sentence-transformers/paraphrase-MiniLM-L3-v2", 384)
        schema.check(store, "all-MiniLM-L6-v2", 384)  # the short name of the same model is fine
    finally:
        store.close()


def test_a_version_2_database_gets_the_version_3_fulltext_index(settings: Settings, memory: AgenticMemory) -> None:
    """Schema 3 indexes `neighbourhood`: opening an older database replaces the fulltext index."""
    with memory._store._driver.session() as session:  # the database as schema version 2 left it
        session.run("DROP INDEX note_text").consume()
        session.run(
            "CREATE FULLTEXT INDEX note_text FOR (n:Note) ON EACH [n.content, n.context, n.keywords, n.tags] "
            "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}"
        ).consume()
        session.run("MATCH (s:AmemSchema {name: 'amem-graph'}) SET s.version = 2").consume()
    memory.add_many(["Alice: the lighthouse keeper retired."])
    with AgenticMemory(settings, tenant=memory.tenant) as reopened:
        indexes = {row["name"]: row for row in reopened._store.indexes()}
        assert set(indexes["note_text"]["properties"]) >= {"content", "neighbourhood"}
        assert indexes["note_text"]["state"] == "ONLINE"
        assert reopened.stats().schema["version"] == SCHEMA_VERSION
        assert [h.note.content for h in reopened.search("lighthouse", mode="fulltext")] == [
            "Alice: the lighthouse keeper retired."
        ]


def test_init_builds_a_vector_index_with_other_hnsw_settings_again(settings: Settings, memory: AgenticMemory) -> None:
    """The vector indexes have the store's HNSW settings (VECTOR_INDEX): `init` drops an index built with others
    and builds it again from the vectors the notes hold, and k-NN finds them after."""
    memory.add_many(["Alice: the lighthouse keeper retired.", "Bob: my sister caught three trout."])
    with memory._store._driver.session() as session:  # as another release or a hand-made index left it
        session.run("DROP INDEX note_embedding").consume()
        session.run(
            "CREATE VECTOR INDEX note_embedding FOR (n:Note) ON n.embedding OPTIONS {indexConfig: "
            "{`vector.dimensions`: 384, `vector.similarity_function`: 'cosine', `vector.hnsw.m`: 32}}"
        ).consume()
    assert memory._store.vector_index()["hnsw_m"] == 32
    memory.admin.init_schema()
    index = memory._store.vector_index()
    assert (index["state"], index["hnsw_m"], index["quantized"]) == ("ONLINE", 16, True)
    hits = memory.search("lighthouse keeper", mode="vector", k=1)
    assert hits[0].note.content == "Alice: the lighthouse keeper retired."


def _statistics(memory: AgenticMemory, tenant: str) -> dict:
    """A tenant's BM25 statistics as the graph keeps them (store/neo4j_text.py)."""
    with memory._store._driver.session() as session:
        rows = session.run("MATCH (s:Term|Corpus {tenant: $tenant}) RETURN labels(s)[0] AS label, s.index AS index, "
                           "s.term AS term, s.df AS df, s.docs AS docs, s.tokens AS tokens", tenant=tenant).data()
    return {(r["label"], r["index"], r["term"]): (r["df"], r["docs"], r["tokens"]) for r in rows}


def _as_schema_8(memory: AgenticMemory, tenants: list[str]) -> None:
    """The database as schema 8 left it: these tenants' notes and pages, no statistics."""
    with memory._store._driver.session() as session:
        session.run("MATCH (s:Term|Corpus) WHERE s.tenant IN $tenants DETACH DELETE s", tenants=tenants).consume()
        session.run("MATCH (s:AmemSchema {name: 'amem-graph'}) SET s.version = 8").consume()


def test_a_schema_8_database_counts_each_tenants_statistics_once_on_open(
    settings: Settings, memory: AgenticMemory, open_memory, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening a database written before the statistics were kept counts them, a tenant per transaction: an open
    that stops part way (killed) leaves whole tenants counted, and the next open counts the others once."""
    other = f"{memory.tenant}-b"
    with open_memory(other) as second:
        try:
            for mem, words in ((memory, "lighthouse keeper"), (second, "trout river")):
                mem.add(f"Alice: the {words} retired early.", session="s1")
                mem.add(f"Bob: my sister caught three {words} stories.", session="s1")
                mem.add_many([f"Carol: the {words} again, and again {words}."])
                for turn in ("tell me about the", "and again the", "once more the"):  # each joins the last two's text
                    mem.add_turn(f"{turn} {words}", "it retired", session_id="chat")
            expected = {t: _statistics(memory, t) for t in (memory.tenant, other)}
            hits = [(h.note.id, h.score) for h in memory.search("lighthouse keeper", mode="fulltext")]
            assert all(expected.values()) and hits
            _as_schema_8(memory, [memory.tenant, other])

            counted = []
            original = Neo4jStore.write

            def killed_after_one(self, tenant, work, **kw):  # the process dies after its first tenant's commit
                if counted:
                    raise KeyboardInterrupt
                result = original(self, tenant, work, **kw)
                if result is True:  # a tenant counted (False: one counted already)
                    counted.append(tenant)
                return result

            monkeypatch.setattr(Neo4jStore, "write", killed_after_one)
            with pytest.raises(KeyboardInterrupt):
                AgenticMemory(settings, tenant=memory.tenant)
            monkeypatch.undo()
            done = [t for t in (memory.tenant, other) if _statistics(memory, t)]
            assert memory._store.schema().version == 8 and done == counted
            with AgenticMemory(settings, tenant=memory.tenant) as reopened:
                assert reopened.stats().schema["version"] == SCHEMA_VERSION
                assert {t: _statistics(memory, t) for t in (memory.tenant, other)} == expected
                assert [(h.note.id, h.score) for h in reopened.search("lighthouse keeper", mode="fulltext")] == hits
        finally:
            memory.admin.delete_tenant(other)


# Statements that read every tenant's nodes on purpose: the administration of the database as a whole, or of one
# tenant's export and deletion, not a call a tenant's work makes.
WHOLE_DATABASE = {"admin/consolidation_reached", "admin/delete_tenant_batch", "admin/evolution_totals", "admin/export_nodes",
                  "admin/export_relationships", "admin/label_counts", "admin/relationship_counts", "admin/tenants",
                  "admin/await_indexes", "admin/components",
                  # The LangGraph store's namespaces of the whole database: every tenant that holds an item.
                  "attached/keyed_tenants"}


# Every operator that can read nodes or relationships past one tenant's own: scans of a label, of all nodes, of a
# relationship type or of all relationships, scans of a whole index (range, text, point, contains, ends-with), and
# procedure calls. Seeks are not among them: each statement seeks by its tenant, or by an id unique in the database.
SCANS = ("Scan", "ProcedureCall")
# Procedures that touch only the node they are given (the vector of a note, page, passage, segment or fact written).
ONE_NODE = {"db.create.setNodeVectorProperty"}
# The statements that call the shared Lucene and vector indexes on purpose: those read other tenants' hits and drop
# them (docs/stores.md, "What isolates tenants").
SHARED_INDEX = {"note/fulltext_search": {"db.index.fulltext.queryNodes"},
                "page/fulltext_search": {"db.index.fulltext.queryNodes"},
                "note/vector_search": {"db.index.vector.queryNodes"},
                "note/passage_search": {"db.index.vector.queryNodes"}}


def _operators(plan: dict) -> Iterator[str]:
    """Each operator of a plan that can read past the tenant: a scan with what it scans, or the procedure
    called."""
    operator = plan["operatorType"].split("@")[0]
    if operator == "ProcedureCall":
        procedure = plan.get("args", {}).get("Details", "").split("(")[0].strip()
        if procedure not in ONE_NODE:
            yield procedure
    elif operator.endswith(SCANS):
        # The details name the index or label scanned, so that a plan that changes with the data says which.
        yield f"{operator} {plan.get('args', {}).get('Details', '')}".strip()
    for child in plan.get("children", []):
        yield from _operators(child)


def test_no_statement_of_a_tenant_scans_other_tenants_nodes(memory: AgenticMemory) -> None:
    """A tenant's call reads its own nodes through an index seek: a scan of a label, of a relationship type or of a
    whole index (every tenant's entries), or a procedure that reads the database, would read other tenants' data and
    grow slower as they grow. The planner seeks a composite index only where the statement gives a predicate on
    each property it can seek (an equality on the tenant and a range on the next, not an existence check). Only the
    statements that search the shared Lucene and vector indexes read other tenants' hits, and they must."""
    for i in range(30):
        memory.add(f"Alice: note {i} about the lighthouse.", session=f"s{i % 3}")
        memory.add_turn(f"turn {i}", "I see.", session_id="chat")
    scans = {}
    with memory._store._driver.session() as session:
        # The planner estimates from index samples that Neo4j refreshes in the background: for a few seconds
        # after a test that emptied the database, an index sampled empty costs nothing to scan, and that plan
        # is cached. Resampling now (and clearing the plans) checks the plans the statements keep once the
        # samples are current.
        session.run("CALL db.prepareForReplanning()").consume()
        for path in sorted(cypher.root().rglob("*.cypher")):
            name = path.relative_to(cypher.root()).with_suffix("").as_posix()
            if name.split("/")[0] in {"schema", "browser", "fragments"} or "." in name or name in WHOLE_DATABASE:
                continue
            plan = session.run("EXPLAIN " + cypher.load(name, memory._store.dialect)).consume().plan
            found = set(_operators(plan))
            if found != SHARED_INDEX.get(name, set()):
                scans[name] = sorted(found)
    assert scans == {}, "\n".join(f"{k}: {v}" for k, v in sorted(scans.items()))
