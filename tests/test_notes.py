"""Notes on each store (the contract suite: the real Neo4j and the embedded store): add, get, update,
delete, list, link; bad input changes nothing."""

from collections.abc import Callable
from datetime import datetime, timezone

import numpy as np
import pytest

from amem_graph import AgenticMemory, InvalidInput, NoteInput, NoteNotFound
from amem_graph.read.retrieval import seeds
from amem_graph.store.records import note_row

STORES = ("neo4j", "embedded")


def test_add_get_roundtrip_keeps_every_field(memory: AgenticMemory) -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    note = memory.add(
        "Caroline went to the LGBTQ support group yesterday.", source="D1:3", keywords=["support group"],
        tags=["identity"], context="Caroline talks about her week.", category="event", importance=0.8,
        event_time=when,
    )
    got = memory.get(note.id)
    assert got == note
    assert (got.content, got.source, got.keywords, got.tags, got.category) == (
        "Caroline went to the LGBTQ support group yesterday.", "D1:3", ("support group",), ("identity",), "event")
    assert got.event_time == when and got.valid_from == when
    assert got.created_at is not None and got.created_at.tzinfo is not None
    assert got.tenant == memory.tenant and got.version == 1 and got.retrieval_count == 0
    assert len(got.content_hash) == 64 and got.embedding is None


def test_embedding_only_when_asked(memory: AgenticMemory) -> None:
    note = memory.add("Melanie painted a lake sunrise.")
    with_vector = memory.get(note.id, with_embedding=True)
    assert with_vector.embedding is not None and len(with_vector.embedding) == 384
    assert abs(float(np.linalg.norm(with_vector.embedding)) - 1.0) < 1e-3
    assert "embedding" not in note.to_dict()


def test_re_adding_same_content_and_source_is_idempotent(memory: AgenticMemory, count_nodes: Callable) -> None:
    first = memory.add("I love hiking.", source="msg-1")
    assert memory.add("I love hiking.", source="msg-1").id == first.id
    assert memory.add("I love hiking.", source="msg-2").id != first.id  # another source is another note
    labels = memory.stats(tenant=memory.tenant).labels
    labels.pop("Entity", None)  # what the notes mention (tests/test_entities.py)
    assert labels == {"Note": 2, "Evolution": 2, "TenantLock": 1}  # repeats write nothing


def test_bulk_add_keeps_order_and_skips_repeats(memory: AgenticMemory) -> None:
    items = [NoteInput(content=f"turn number {i} about gardening", source=f"D1:{i}") for i in range(23)]
    ids = memory.add_many(items, batch_size=5)
    assert len(ids) == len(set(ids)) == 23
    assert [memory.get(i).source for i in ids[:3]] == ["D1:0", "D1:1", "D1:2"]
    assert memory.add_many(items + ["a plain string note"], batch_size=7)[:23] == ids  # resumable
    assert len(memory.list(limit=100)) == 24


def test_bulk_add_stops_at_a_batch_whose_extraction_fails(memory: AgenticMemory) -> None:
    """The entities of batch i are found beside its embedding while batch i-1 is written: a failure there
    leaves the batches before it committed and reported, and writes nothing of it or after it."""
    from amem_graph.entities.extract import RuleExtractor

    class Failing(RuleExtractor):
        def mentions(self, texts):  # type: ignore[no-untyped-def]
            if any("tulips" in t for t in texts):
                raise RuntimeError("extractor broke")
            return super().mentions(texts)

    memory._extractor = Failing()
    topics = ["kombucha"] * 5 + ["tulips"] * 5 + ["roses"] * 5
    items = [NoteInput(content=f"turn {i} about {topic}", source=f"D2:{i}") for i, topic in enumerate(topics)]
    reported: list[int] = []
    with pytest.raises(RuntimeError, match="extractor broke"):
        memory.add_many(items, batch_size=5, on_batch=reported.append)
    assert reported == [5]
    assert sorted(n.source for n in memory.list(limit=100)) == [f"D2:{i}" for i in range(5)]
    assert memory.entities.get("kombucha").mentions == 5  # the committed batch has its entities


def test_bulk_add_with_one_bad_item_writes_nothing(memory: AgenticMemory, count_nodes: Callable) -> None:
    items = [NoteInput(content="fine"), NoteInput(content="also fine"), NoteInput(content="\x00bad")]
    with pytest.raises(InvalidInput, match="item 2: content contains control character"):
        memory.add_many(items)
    assert count_nodes(memory.tenant) == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": ""}, "content is empty"),
        ({"content": "   "}, "content is empty"),
        ({"content": 12}, "content must be text"),
        ({"content": None}, "content must be text"),
        ({"content": "x" * 100_001}, "limit is 100000"),
        ({"content": "tab\tok but bell \x07"}, "control character"),
        ({"content": b"\xc3\x28"}, "not valid UTF-8"),
        ({"content": "half \udc80 pair"}, "lone surrogate"),
        ({"content": "ok", "tenant": "bad tenant"}, "tenant"),
        ({"content": "ok", "tags": "not-a-list"}, "list of strings"),
        ({"content": "ok", "importance": 3}, "importance"),
        ({"content": "ok", "event_time": "yesterday"}, "ISO-8601"),
        ({"content": "ok", "id": "has space"}, "note id"),
    ],
)
def test_bad_input_is_rejected_and_writes_nothing(
    memory: AgenticMemory, count_nodes: Callable, kwargs: dict, message: str
) -> None:
    kwargs = dict(kwargs)  # the parameters are shared by both stores' runs
    content = kwargs.pop("content")
    with pytest.raises(InvalidInput, match=message):
        memory.add(content, **kwargs)
    assert count_nodes(memory.tenant) == 0


def test_wrong_dimension_vector_never_reaches_the_store(memory: AgenticMemory, count_nodes: Callable) -> None:
    note = NoteInput(content="vector of the wrong size", id="wrong-dim-1")
    with pytest.raises(InvalidInput, match="128 dimensions; the vector index has 384"):
        note_row(note, np.zeros(128, dtype=np.float32), "none", None, memory.embedder.dimension)
    with pytest.raises(InvalidInput, match="query vector has 10 dimensions"):
        seeds(memory._store, memory.tenant, "anything", np.zeros(10), 5)
    assert count_nodes(memory.tenant) == 0


def test_caller_ids_are_kept_and_a_taken_id_is_refused(memory: AgenticMemory, open_memory, count_nodes) -> None:
    memory.add("mine", id="note-fixed-1")
    assert memory.get("note-fixed-1").content == "mine"
    other = f"{memory.tenant}-other"
    with open_memory(other) as mem2:
        with pytest.raises(InvalidInput, match="already taken"):
            mem2.add_many([NoteInput(content="first is fine"), NoteInput(content="theirs", id="note-fixed-1")])
        assert count_nodes(other) == 0  # the whole batch rolled back


def test_update_versions_the_old_values_and_re_embeds(memory: AgenticMemory) -> None:
    note = memory.add("Jon opened a dance studio.", tags=["work"])
    before = memory.get(note.id, with_embedding=True).embedding
    updated = memory.update(note.id, context="Jon's new business", tags=["work", "dance"], reason="user edit")
    assert (updated.version, updated.context, updated.tags) == (2, "Jon's new business", ("work", "dance"))
    assert updated.content == note.content and updated.content_hash == note.content_hash
    after = memory.get(note.id, with_embedding=True).embedding
    assert before is not None and after is not None and not np.allclose(before, after)
    labels = memory.stats(tenant=memory.tenant)
    assert labels.labels.get("NoteVersion") == 1 and labels.relationships.get("HAS_VERSION") == 1
    importance_only = memory.update(note.id, importance=0.9)
    assert importance_only.version == 3 and importance_only.importance == 0.9
    assert memory.get(note.id, with_embedding=True).embedding == after  # no text change, no re-embedding


def test_update_content_changes_hash_and_refuses_a_duplicate(memory: AgenticMemory) -> None:
    a = memory.add("first text")
    memory.add("second text")
    changed = memory.update(a.id, content="corrected first text")
    assert changed.content_hash != a.content_hash
    with pytest.raises(InvalidInput, match="already has this content"):
        memory.update(a.id, content="second text")
    assert memory.get(a.id).content == "corrected first text"  # the failed update left it alone


def test_update_needs_a_change_and_a_known_note(memory: AgenticMemory) -> None:
    note = memory.add("something")
    with pytest.raises(InvalidInput, match="nothing to update"):
        memory.update(note.id)
    with pytest.raises(NoteNotFound):
        memory.update("no-such-note", context="x")


def test_delete_takes_links_and_versions_along(memory: AgenticMemory, count_nodes: Callable) -> None:
    a = memory.add("Gina lost her job at Door Dash.")
    b = memory.add("Gina started her own clothing store.")
    link = memory.link(a.id, b.id, "FOLLOWS", reason="the store came after the job loss", confidence=0.8)
    assert (link.type, link.reason, link.confidence) == ("FOLLOWS", "the store came after the job loss", 0.8)
    assert memory.get(b.id).links[0].other(b.id) == a.id  # one relationship, seen from both ends
    memory.update(a.id, context="job loss")
    memory.delete(a.id)
    with pytest.raises(NoteNotFound):
        memory.get(a.id)
    assert memory.get(b.id).links == ()
    labels = memory.stats(tenant=memory.tenant).labels
    assert labels["Note"] == 1 and "NoteVersion" not in labels  # the versions went too
    assert labels["Evolution"] == 1  # a's own evolution went with it; b's stays
    with pytest.raises(NoteNotFound):
        memory.delete(a.id)


def test_links_are_checked(memory: AgenticMemory) -> None:
    a = memory.add("one")
    with pytest.raises(InvalidInput, match="link type"):
        memory.link(a.id, a.id, "KNOWS")
    with pytest.raises(InvalidInput, match="itself"):
        memory.link(a.id, a.id, "RELATES_TO")
    with pytest.raises(NoteNotFound, match="both must be notes"):
        memory.link(a.id, "missing-note", "RELATES_TO")
    with pytest.raises(InvalidInput, match="confidence"):
        memory.link(a.id, "missing-note", "RELATES_TO", confidence=2)


def test_tenants_are_isolated(memory: AgenticMemory, open_memory) -> None:
    mine = memory.add("a private fact about my cat")
    other = f"{memory.tenant}-b"
    with open_memory(other) as theirs:
        try:
            with pytest.raises(NoteNotFound):
                theirs.get(mine.id)
            with pytest.raises(NoteNotFound):
                theirs.delete(mine.id)
            theirs.add("their own cat fact")
            assert all(h.note.tenant == other for h in theirs.search("cat", k=10))
            with pytest.raises(NoteNotFound):
                theirs.link(mine.id, theirs.list()[0].id)
        finally:
            theirs.admin.delete_tenant(other)
    assert memory.get(mine.id).content == "a private fact about my cat"


def test_unknown_ids(memory: AgenticMemory) -> None:
    for call in (lambda: memory.get("nope"), lambda: memory.delete("nope")):
        with pytest.raises(NoteNotFound, match="no note 'nope'"):
            call()


def test_list_is_newest_first_and_paged(memory: AgenticMemory) -> None:
    ids = [memory.add(f"note {i}").id for i in range(5)]
    listed = [n.id for n in memory.list(limit=3)] + [n.id for n in memory.list(limit=3, offset=3)]
    assert listed == ids[::-1]
    with pytest.raises(InvalidInput):
        memory.list(limit=0)


def test_a_page_past_what_a_store_carries_is_a_typed_error(memory: AgenticMemory) -> None:
    """An offset or a limit past 2**63 - 1 once crashed Neo4j's driver: every listing refuses it first."""
    memory.add("note")
    for call in (lambda: memory.list(offset=2**63), lambda: memory.entities.list(limit=2**63),
                 lambda: memory.entities.list(offset=2**64), lambda: memory.tiers.pages(offset=2**63),
                 lambda: memory.list(limit=True)):
        with pytest.raises(InvalidInput):
            call()
    assert len(memory.list()) == 1


def test_routing_uri_works_unchanged(settings, tenant: str) -> None:
    """neo4j:// (routing, as for clusters and Aura) reaches the same server through the routing table."""
    from dataclasses import replace

    assert settings.neo4j_uri and settings.neo4j_uri.startswith("bolt://")
    routed = replace(settings, neo4j_uri="neo4j://" + settings.neo4j_uri.removeprefix("bolt://"))
    with AgenticMemory(routed, tenant=tenant) as mem:
        try:
            note = mem.add("Routed through the routing table.")
            assert mem.get(note.id).content == "Routed through the routing table."
            assert mem.search("routing table", k=1)[0].note.id == note.id
        finally:
            mem.admin.delete_tenant(tenant)


def test_concurrent_adds_of_the_same_notes_create_each_once(memory: AgenticMemory, open_memory) -> None:
    """MERGE on the identity constraint: threads racing to add the same notes make one note each."""
    from concurrent.futures import ThreadPoolExecutor

    items = [NoteInput(content=f"shared fact {i}", source="race") for i in range(20)]

    def add_all(_: int) -> list[str]:
        with open_memory(memory.tenant) as mem:
            return mem.add_many(items, batch_size=7)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(add_all, range(4)))
    assert all(ids == results[0] for ids in results)
    assert len(memory.list(limit=100)) == 20


def test_import_refuses_a_vector_of_another_dimension_and_writes_nothing(memory: AgenticMemory) -> None:
    memory.add("Caroline moved from Sweden four years ago.")
    memory.add("Melanie painted a sunrise over the lake.")
    _, records = memory.admin.export()
    exported = list(records)
    nodes = [r for r in exported if r["kind"] == "node"]
    relationships = [r for r in exported if r["kind"] == "relationship"]
    memory.admin.delete_tenant()
    bent = [
        {**n, "props": {**n["props"], "embedding": n["props"]["embedding"][:-1]}} if "embedding" in n["props"] else n
        for n in nodes
    ]
    with pytest.raises(InvalidInput, match="dimensions"):
        memory.admin.import_(bent, relationships)
    assert memory.stats(tenant=memory.tenant).labels == {}
    assert memory.admin.import_(nodes, relationships)[0] == len(nodes)
    assert {n.content for n in memory.list()} >= {"Caroline moved from Sweden four years ago."}
