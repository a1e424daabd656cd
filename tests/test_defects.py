"""Regression tests for what an outside probe broke (issue 17): each failed before its fix, on the store
named. Text in any script, values of any shape and a lost server get a typed error or work; nothing is
half-written."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from langchain_core.documents import Document

from amem_graph import AgenticMemory, InvalidInput, RetentionPolicy, Settings, StoreUnavailable
from amem_graph.integrations.langchain import AmemStore, AmemVectorStore
from amem_graph.store.embedded.persist import CorruptStore, Folder
from amem_graph.store.lucene import MAX_QUERY_TERMS, query_words

from .sockets import Cuttable

STORES = ("neo4j", "embedded")

# A Chinese paragraph of over 400 characters, over 256 of them distinct: over Lucene's 1024 clauses as terms
# of four fields when each ideograph is counted as one word of the query.
CHINESE = (
    "今年春天我们一家人去了云南旅行。第一站是昆明，那里四季如春，花市里的鲜花五颜六色，价格也很便宜。"
    "接着我们坐火车到了大理，在洱海边骑自行车，看苍山上的白云慢慢飘过。古城里有很多小店，卖扎染的布、"
    "银器和手工茶叶。我女儿特别喜欢一家做鲜花饼的老店，每天早上都要去买两个。后来我们又去了丽江，住在"
    "一个纳西族老奶奶开的客栈里，她给我们讲了许多东巴文字的故事，还教孩子写自己的名字。玉龙雪山海拔很高，"
    "我先生有点高原反应，只好在半山腰休息，我和女儿坐缆车上到了冰川公园，风很大，但是景色壮观极了。"
    "最后一站是香格里拉，草原上有成群的牦牛，寺庙里传来诵经的声音，让人心里很平静。这次旅行让我明白，"
    "慢下来才能看见生活里真正美好的东西。回到家以后，女儿把照片贴满了她房间的墙，说明年还想去西藏。"
    "我答应她，只要她好好学习，暑假我们就出发。她的老师听说以后，也让她在班上讲讲云南的见闻，她准备了"
    "好几天，还画了一张地图，标出我们走过的每一个城市。秋季开学典礼上，校长表扬她勇敢、细致，奖励一本"
    "精装的植物图鉴和钢笔。邻居赵叔叔是摄影爱好者，借给她旧相机，约定周末带她去湿地观察候鸟与蜻蜓。"
)


def test_text_in_chinese_is_added_and_found(memory: AgenticMemory) -> None:
    assert len(CHINESE) >= 400 and len(set(CHINESE)) > 256
    note = memory.add(CHINESE)
    assert memory.get(note.id).content == CHINESE
    other = memory.add("我们在洱海边骑自行车。")
    query = CHINESE[:380]  # more than 342 ideographs: past the clause limit as a query of three fields
    assert {hit.note.id for hit in memory.search(query, k=5, mode="fulltext")} >= {note.id}
    assert memory.search("洱海 自行车", k=2, mode="fulltext")[0].note.id in (other.id, note.id)


def test_ideographs_are_query_terms_of_their_own() -> None:
    assert query_words("我们在洱海 Bike ride") == ["我", "们", "在", "洱", "海", "bike", "ride"]
    assert len(query_words(CHINESE)) == MAX_QUERY_TERMS


def test_a_long_speaker_prefix_is_text_not_a_speaker(memory: AgenticMemory) -> None:
    content = "A" + "b" * 9_000 + ": went home early."
    note = memory.add(content)
    assert note.speaker is None and note.content == content
    named = memory.add("Caroline: I went to the pottery class.")
    assert named.speaker == "Caroline"
    assert [h.note.id for h in memory.search("pottery", k=3, speakers=["Caroline"])] == [named.id]


def test_add_many_refuses_a_bare_string(memory: AgenticMemory) -> None:
    with pytest.raises(InvalidInput, match="list of notes"):
        memory.add_many("abc")  # type: ignore[arg-type]
    assert len(memory.list()) == 0


def _deep(levels: int) -> dict:
    value: dict = {}
    inner = value
    for _ in range(levels):
        inner["a"] = {}
        inner = inner["a"]
    return value


def test_adapters_refuse_bad_values_before_writing(memory: AgenticMemory) -> None:
    store = AmemVectorStore(memory)
    bad = [{"k": "\ud800"}, {"\udfff": 1}, _deep(1_000)]
    for metadata in bad:
        with pytest.raises(InvalidInput):
            store.add_documents([Document(page_content="Tea at five.", metadata=metadata)], ids=["doc-1"])
    assert len(memory.list()) == 0  # nothing half-written: a retry can complete
    store.add_documents([Document(page_content="Tea at five.", metadata={"k": "fine"})], ids=["doc-1"])
    assert store.get_by_ids(["doc-1"])[0].metadata == {"k": "fine"}
    with pytest.raises(InvalidInput):
        store.similarity_search("tea", k=1, filter=_deep(1_000))
    with pytest.raises(InvalidInput, match="strings"):
        store.get_by_ids([None])  # type: ignore[list-item]
    kv = AmemStore(memory)
    with pytest.raises(InvalidInput):
        kv.put((memory.tenant,), "key", _deep(1_000))
    with pytest.raises(InvalidInput):
        kv.put((memory.tenant,), "\ud800", {"text": "x"})
    with pytest.raises(InvalidInput):
        kv.search((memory.tenant,), filter=_deep(1_000))
    assert len(memory.list()) == 1


@pytest.mark.embedded
def test_a_journal_with_a_line_missing_does_not_open(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    graph = folder.open()
    for i in range(3):
        with graph.transaction():
            graph.create_node(["Note"], {"id": f"n{i}", "tenant": "t", "source": "", "content_hash": str(i)})
    folder.close()
    journal = tmp_path / "journal.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text(lines[0] + lines[2])
    with pytest.raises(CorruptStore, match="transaction 3 follows transaction 1"):
        Folder(tmp_path).open()
    journal.write_text(lines[0] + lines[1] + lines[1] + lines[2])  # a line repeated
    with pytest.raises(CorruptStore, match="follows"):
        Folder(tmp_path).open()
    journal.write_text("".join(lines))
    whole = Folder(tmp_path)
    assert len(whole.open().nodes) == 3
    whole.close()


@pytest.fixture
def cuttable(neo4j_settings: Settings) -> Iterator[Cuttable]:
    parts = urlsplit(neo4j_settings.neo4j_uri or "")
    proxy = Cuttable((parts.hostname or "127.0.0.1", parts.port or 7687))
    yield proxy
    proxy.close()


def test_a_lost_server_fails_fast_and_the_engine_recovers(neo4j_settings: Settings, cuttable: Cuttable,
                                                          tenant: str) -> None:
    """AMEM_NEO4J_TIMEOUT's contract: a call against a lost server raises within a small multiple of it (the
    driver's retries of a lost connection used to run 16-32 s per call); not a speed figure."""
    settings = replace(neo4j_settings, neo4j_uri=f"bolt://127.0.0.1:{cuttable.port}", neo4j_timeout_s=1.0)
    with AgenticMemory(settings, tenant=tenant) as memory:
        try:
            kept = memory.add("Alice keeps bees on the roof.")
            cuttable.cut()
            for call in (lambda: memory.add("Bob paints boats."), lambda: memory.get(kept.id),
                         lambda: memory.search("bees", k=3), lambda: memory.add_many(["One.", "Two."])):
                began = time.monotonic()
                with pytest.raises(StoreUnavailable):
                    call()
                assert time.monotonic() - began < 10
            cuttable.restore()
            assert memory.get(kept.id).content == kept.content  # the same engine, no restart
            assert [n.content for n in memory.list()] == [kept.content]  # nothing of the failed calls
            memory.add("Bob paints boats.")
        finally:
            memory.admin.delete_tenant(tenant)


def test_a_server_lost_during_a_retention_run_leaves_whole_batches_and_the_run_resumes(
    neo4j_settings: Settings, cuttable: Cuttable, tenant: str,
) -> None:
    """Retention archives a batch per transaction: the server lost after the third batch, the run raises
    StoreUnavailable within a small multiple of the timeout, the three batches stay archived and nothing else;
    run again once the server is back, it archives exactly the rest."""
    settings = replace(neo4j_settings, neo4j_uri=f"bolt://127.0.0.1:{cuttable.port}", neo4j_timeout_s=1.0)
    with AgenticMemory(settings, tenant=tenant) as memory:
        try:
            memory.add_many([f"Note {i}: Gina talked about the bakery." for i in range(12)])
            policy = RetentionPolicy(max_notes=2)
            planned = {a.note_id for a in memory.retention.plan(policy)}
            committed: list[int] = []

            def lose_the_server(archived: int) -> None:
                committed.append(archived)
                if len(committed) == 3:
                    cuttable.cut()

            began = time.monotonic()
            with pytest.raises(StoreUnavailable):
                memory.retention.run(policy, batch=1, on_batch=lose_the_server)
            assert time.monotonic() - began < 10 and committed == [1, 1, 1]
            cuttable.restore()
            held = memory.list(limit=100, include_archived=True)
            assert len(held) == 12 and sum(1 for n in held if n.archived_at) == 3
            rest = memory.retention.run(policy)
            assert len(rest) == 7 and {a.note_id for a in rest} | {n.id for n in held if n.archived_at} == planned
            assert memory.admin.check().sound
        finally:
            memory.admin.delete_tenant(tenant)


def test_a_server_lost_during_a_consolidation_leaves_whole_batches_and_it_resumes(
    neo4j_settings: Settings, cuttable: Cuttable, tenant: str,
) -> None:
    """A consolidation writes each batch of vectors with how far it got: the server lost after the first batch,
    it raises StoreUnavailable within a small multiple of the timeout, the database refuses to open (the marker
    says where it stopped), and run again once the server is back it embeds exactly the rest. The model is
    kept: the test database is shared."""
    from amem_graph.embedding import Embedder
    from amem_graph.errors import SchemaMismatch
    from amem_graph.maintenance.consolidate import BATCH, consolidate
    from amem_graph.store import open_store

    settings = replace(neo4j_settings, neo4j_uri=f"bolt://127.0.0.1:{cuttable.port}", neo4j_timeout_s=1.0)
    with AgenticMemory(settings, tenant=tenant) as memory:
        memory.add_many([f"Note {i}: Gina talked about the bakery." for i in range(BATCH + 10)])
        held = memory.stats().labels.get("Note", 0)
    embedder = Embedder.of(settings)
    store = open_store(settings)
    try:
        began = time.monotonic()
        with pytest.raises(StoreUnavailable):
            consolidate(store, embedder, on_batch=lambda kind, n: cuttable.cut())
        assert time.monotonic() - began < 30
        cuttable.restore()
        assert (store.schema().consolidating or "").startswith("notes:")
        with pytest.raises(SchemaMismatch, match="under way"):
            AgenticMemory(settings, tenant=tenant, store=store)
        assert consolidate(store, embedder)["notes"] == held - BATCH
        with AgenticMemory(settings, tenant=tenant, store=store) as memory:
            assert memory.admin.check().sound and len(memory.list(limit=1_000)) == BATCH + 10
    finally:
        if store.schema().consolidating:  # the shared database opens for the other tests
            consolidate(store, embedder)
        store.close()
        with AgenticMemory(neo4j_settings, tenant=tenant) as memory:
            memory.admin.delete_tenant(tenant)
