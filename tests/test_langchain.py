"""The LangChain adapter's own behaviour against the real Neo4j: chat messages round-trip exactly and
become linked notes (and pages); the retriever's metadata carries provenance; the vector store goes through
the analysed write path; the LangGraph store maps namespaces to tenants; bad input writes nothing."""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.store.base import InvalidNamespaceError

from amem_graph import AgenticMemory
from amem_graph.errors import InvalidInput
from amem_graph.integrations.langchain import (
    AmemChatMessageHistory,
    AmemRetriever,
    AmemStore,
    AmemVectorStore,
    memory_tools,
)

STORES = ("neo4j", "embedded")


def conversation() -> list:
    return [
        SystemMessage("You are a helpful assistant.", id="m0"),
        HumanMessage("My sister Ana just moved to Porto for a job at a winery.", id="m1", name="Rui"),
        AIMessage(
            "", id="m2", tool_calls=[{"name": "save_memory", "args": {"content": "Ana moved to Porto"}, "id": "c1"}],
            additional_kwargs={"refusal": None, "trace": {"step": 2}},
        ),
        ToolMessage("Saved memory 42.", tool_call_id="c1", id="m3"),
        AIMessage("Porto is lovely; the winery work must be exciting for Ana.", id="m4"),
    ]


def test_chat_history_round_trips_messages_as_linked_notes(memory: AgenticMemory, tenant: str) -> None:
    history = AmemChatMessageHistory(memory, "chat-1")
    history.add_messages(conversation())
    assert history.messages == conversation()  # ids, types, names, tool calls and kwargs as given
    notes = {n.content: n for n in memory.list(limit=50)}
    assert len(notes) == 5 and all(n.session == "chat-1" for n in notes.values())
    assert 'called save_memory({"content": "Ana moved to Porto"})' in notes
    said = notes["My sister Ana just moved to Porto for a job at a winery."]
    assert said.speaker == "Rui" and said.analysis == "heuristic" and said.keywords
    assert memory.get(notes["Porto is lovely; the winery work must be exciting for Ana."].id).links  # linked
    history.add_messages(conversation()[1:2])  # the same message (same id) again: nothing new
    assert len(history.messages) == 5
    history.add_messages([HumanMessage("ok"), HumanMessage("ok")])  # no ids: two messages
    assert [m.content for m in history.messages[-2:]] == ["ok", "ok"]
    other = AmemChatMessageHistory(memory, "chat-2")
    assert other.messages == []  # sessions are apart
    history.clear()
    assert history.messages == [] and memory.list(limit=50) == []


def test_chat_history_async_bulk_and_turns(memory: AgenticMemory) -> None:
    history = AmemChatMessageHistory(memory, "s", analyse=False, turns=True)
    turns = [HumanMessage("I started running every morning."), AIMessage("Great habit! How far do you run?"),
             HumanMessage("About five kilometres along the river."), AIMessage("Nice, keep it up.")]

    async def run() -> list:
        await history.aadd_messages(turns)
        return await history.aget_messages()

    assert asyncio.run(run()) == turns
    assert {n.analysis for n in memory.list(limit=50)} == {"none"}  # bulk: one transaction, no analysis
    pages = memory.tiers.pages()
    assert [(p.user_text, p.assistant_text) for p in pages] == [
        ("I started running every morning.", "Great habit! How far do you run?"),
        ("About five kilometres along the river.", "Nice, keep it up."),
    ]


def test_chat_history_keeps_long_messages_whole_and_refuses_bad_ones(memory: AgenticMemory, count_nodes, tenant: str) -> None:
    history = AmemChatMessageHistory(memory, "s")
    long = AIMessage("word " * (memory.settings.max_content_chars // 4), id="long")
    history.add_messages([long])
    assert history.messages == [long]  # kept whole; its note holds the beginning
    assert len(memory.list()[0].content) == memory.settings.max_content_chars
    before = count_nodes(tenant)
    with pytest.raises(InvalidInput, match="JSON"):
        history.add_messages([HumanMessage("fine"), HumanMessage("bad", additional_kwargs={"at": object()})])
    assert count_nodes(tenant) == before  # checked before anything was written
    with pytest.raises(InvalidInput):
        AmemChatMessageHistory(memory, "")


def test_chat_history_pairs_turns_across_instances(memory: AgenticMemory) -> None:
    AmemChatMessageHistory(memory, "web", turns=True).add_user_message("Can you recommend a hiking trail near Bergen?")
    AmemChatMessageHistory(memory, "web", turns=True).add_ai_message("Try the Vidden trail over the mountains.")
    assert [(p.user_text, p.assistant_text) for p in memory.tiers.pages()] == [
        ("Can you recommend a hiking trail near Bergen?", "Try the Vidden trail over the mountains.")
    ]


def test_adapters_never_take_over_each_others_notes(memory: AgenticMemory) -> None:
    history = AmemChatMessageHistory(memory, "s")
    history.add_messages([HumanMessage("I like jasmine tea.", id="h1")])
    retrieved = AmemRetriever(memory=memory, k=1).invoke("tea")
    with pytest.raises(InvalidInput, match="chat message"):
        AmemVectorStore(memory).add_documents(retrieved)  # the retrieved note is a chat message's
    assert history.messages == [HumanMessage("I like jasmine tea.", id="h1")]
    assert AmemVectorStore(memory).similarity_search("tea", k=5) == []  # chat notes are not documents
    store = AmemStore(memory)
    assert store.search((memory.tenant,), query="tea") == []


def test_retriever_documents_carry_note_ids_scores_and_paths(memory: AgenticMemory, tenant: str) -> None:
    first = memory.add("Lena keeps bees on the roof of her flat in Vienna.")
    memory.add("The bees on Lena's roof made twelve jars of honey this year.")
    memory.add("Trains from Vienna to Graz take about two and a half hours.")
    retriever = AmemRetriever(memory=memory, k=3)
    docs = retriever.invoke("How much honey did the bees make?")
    assert len(docs) == 3 and docs[0].page_content.startswith("The bees on Lena's roof")
    for doc in docs:
        meta = doc.metadata
        assert doc.id == meta["note_id"] and meta["tenant"] == tenant and meta["score"] >= 0
        assert meta["found"] in ("seed", "graph") and isinstance(meta["path"], list)
    assert memory.get(first.id).links
    by_words = retriever.invoke("honey jars", mode="fulltext")  # one note has these words; links find more
    graph = [d for d in by_words if d.metadata["found"] == "graph"]
    assert graph and all(d.metadata["path"] and d.metadata["path"][0]["type"] for d in graph)
    assert graph[0].metadata["path"][0]["from"] in {d.id for d in by_words}
    assert asyncio.run(retriever.ainvoke("honey", k=1))[0].metadata["note_id"]
    assert AmemRetriever(memory=memory, tenant="someone-else", k=3).invoke("honey") == []


def test_vector_store_uses_the_write_path_and_keeps_ids(memory: AgenticMemory, tenant: str, count_nodes) -> None:
    store = AmemVectorStore(memory)  # the engine's own embeddings and vector index
    ids = store.add_texts(
        ["Kenji grows chillies on his balcony in Osaka.", "Kenji's chillies went into a very hot curry."],
        metadatas=[{"page": 1, "tags": ["garden"]}, {"page": 2}], ids=["doc-1", "doc-2"],
    )
    assert ids == ["doc-1", "doc-2"]
    note = memory.get("doc-2")
    assert note.analysis == "heuristic" and note.keywords and note.links  # analysed and linked
    hits = store.similarity_search_with_relevance_scores("What did Kenji cook?", k=2)
    assert hits[0][0].id == "doc-2" and hits[0][0].metadata == {"page": 2} and 0 < hits[1][1] <= hits[0][1] <= 1
    store.add_texts(["Kenji's chillies went into a mild curry after all."], metadatas=[{"page": 3}], ids=["doc-2"])
    assert store.get_by_ids(["doc-2"])[0].metadata == {"page": 3}
    assert [v.content for v in memory.history("doc-2").versions][0].startswith("Kenji's chillies went into a very")
    before = count_nodes(tenant)
    with pytest.raises(InvalidInput, match="JSON"):
        store.add_texts(["fine", "bad"], metadatas=[{}, {"when": object()}])
    with pytest.raises(InvalidInput):
        store.add_texts(["an id with spaces"], ids=["not an id"])
    assert count_nodes(tenant) == before  # refused batches wrote nothing
    store.delete(["doc-1", "missing"])
    assert [d.id for d in store.get_by_ids(["doc-1", "doc-2"])] == ["doc-2"]


def test_vector_store_batch_with_an_id_of_another_tenant_writes_nothing(memory: AgenticMemory) -> None:
    memory.add("A note with a chosen id.", id=f"taken-{memory.tenant}")
    other = f"{memory.tenant}-other"
    try:
        with pytest.raises(InvalidInput, match="another tenant"):
            AmemVectorStore(memory, tenant=other).add_texts(["Fine.", "Another text."], ids=["ok-1", f"taken-{memory.tenant}"])
        assert memory.stats(tenant=other).labels == {}
    finally:
        memory.admin.delete_tenant(other)


def test_vector_store_with_its_own_embeddings_scores_and_filters(memory: AgenticMemory) -> None:
    store = AmemVectorStore(memory, embedding=DeterministicFakeEmbedding(size=6))
    store.add_texts(["alpha beta", "gamma delta", "epsilon"], metadatas=[{"n": 1, "g": "a"}, {"n": 2, "g": "b"}, {"n": 3, "g": "b"}])
    scored = store.similarity_search_with_relevance_scores("alpha beta", k=3)
    assert scored[0][0].page_content == "alpha beta" and scored[0][1] == pytest.approx(1.0, abs=1e-6)
    assert all(0.0 <= score <= 1.0 for _, score in scored)
    assert [d.metadata["n"] for d in store.similarity_search("alpha beta", k=5, filter={"g": "b", "n": {"$gte": 3}})] == [3]
    with pytest.raises(InvalidInput, match="operator"):
        store.similarity_search("x", filter={"n": {"$in": [1]}})
    with pytest.raises(InvalidInput, match="unknown search option"):
        store.similarity_search("x", where="n = 1")


def test_langgraph_store_namespaces_are_tenants(memory: AgenticMemory) -> None:
    root = f"lg{uuid.uuid4().hex[:8]}"
    store = AmemStore(memory)
    alice, bob = (root, "users", "alice"), (root, "users", "bob")
    beside = (root, "users2", "carol")  # its tenant's name starts with the users' one, but it is not below it
    try:
        store.put(alice, "food", {"text": "Alice is vegetarian and loves spicy ramen.", "kind": "preference"})
        store.put(alice, "pet", {"text": "Alice has a parrot called Kiwi.", "kind": "fact", "age": 3})
        store.put(alice, "job", {"text": "Alice works night shifts as a nurse.", "kind": "fact", "age": 7})
        store.put(bob, "food", {"text": "Bob is allergic to peanuts.", "kind": "preference"})
        store.put(beside, "food", {"text": "Carol is allergic to shellfish.", "kind": "preference"})
        assert memory.stats(tenant=f"{root}.users.alice").labels["Note"] == 3  # a namespace is a tenant
        item = store.get(alice, "pet")
        assert item is not None and item.value["text"] == "Alice has a parrot called Kiwi." and item.key == "pet"
        assert item.namespace == alice and item.created_at is not None
        assert store.get(alice, "nothing") is None and store.get(bob, "pet") is None
        found = store.search(alice, query="What does Alice like to eat?", limit=2)
        assert found[0].key == "food" and found[0].score is not None and len(found) == 2
        allergies = store.search((root, "users"), query="Who has a food allergy?", limit=10)
        assert allergies[0].namespace == bob and len(allergies) == 4  # the prefix reaches both users
        assert {i.namespace for i in store.search((root, "users"), limit=10)} == {alice, bob}
        assert [i.key for i in store.search(alice, filter={"kind": "fact", "age": {"$gt": 5}})] == ["job"]
        assert [i.key for i in store.search(alice, limit=2, offset=1)] == ["pet", "food"]  # last put first
        assert store.list_namespaces(prefix=(root,)) == [alice, bob, beside]
        assert store.list_namespaces(prefix=(root,), max_depth=2) == [(root, "users"), (root, "users2")]
        assert store.list_namespaces(prefix=(root,), suffix=("bob",)) == [bob]
        put_before = store.get(alice, "pet").updated_at
        store.put(alice, "pet", {"text": "Alice has two parrots now, Kiwi and Mango.", "kind": "fact", "age": 3})
        replaced = store.get(alice, "pet")
        assert replaced.value["text"].startswith("Alice has two parrots") and replaced.updated_at > put_before
        with pytest.raises(InvalidInput, match="operator"):
            store.search(alice, filter={"kind": {"$in": ["fact"]}})
        store.delete(alice, "pet")
        assert store.get(alice, "pet") is None and memory.stats(tenant=f"{root}.users.alice").labels["Note"] == 2

        async def run() -> list:
            await store.aput(bob, "city", {"text": "Bob lives in Oslo."})
            return [i.key for i in await store.asearch(bob, query="Where does Bob live?", limit=1)]

        assert asyncio.run(run()) == ["city"]
        with pytest.raises(InvalidNamespaceError):
            store.put((root, "has space"), "k", {"text": "x"})
        with pytest.raises(InvalidInput):
            store.put(alice, "k", {"when": object()})
        assert store.get(alice, "k") is None
    finally:
        for tenant in memory.attachments.keyed_tenants():
            if tenant.startswith(root):
                memory.admin.delete_tenant(tenant)


def test_memory_tools_save_and_search(memory: AgenticMemory) -> None:
    save, search = memory_tools(memory)
    assert save.invoke({"content": "Priya's favourite board game is Azul."}).startswith("Saved memory")
    message = search.invoke({"type": "tool_call", "id": "1", "name": search.name,
                             "args": {"query": "Which board game does Priya like?", "k": 1}})
    assert "Azul" in message.content and message.artifact[0]["note_id"]
    refused = save.invoke({"type": "tool_call", "id": "2", "name": save.name, "args": {"content": "   "}})
    assert refused.status == "error" and memory.list()[0].content.startswith("Priya")


def test_langgraph_store_finds_items_among_many_other_notes(memory: AgenticMemory) -> None:
    namespace = (memory.tenant,)
    for n in range(40):  # ordinary notes about tea, nearer to the query than the item is
        memory.add(f"Tea tasting note {n}: a green tea from Shizuoka, grassy and sweet, brewed at {60 + n} degrees.")
    store = AmemStore(memory)
    store.put(namespace, "pref", {"text": "Alice prefers oolong tea without sugar."})
    found = store.search(namespace, query="Which tea does Alice prefer?", limit=1)
    assert [item.key for item in found] == ["pref"]


def test_langgraph_store_concurrent_puts_of_one_key(memory: AgenticMemory) -> None:
    namespace = (memory.tenant,)
    store = AmemStore(memory)

    def put(n: int) -> None:
        store.put(namespace, "mood", {"text": f"Alice feels calm today (writer {n})."})

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(put, range(4)))  # every writer succeeds; the last write wins
    assert len(store.search(namespace, limit=10)) == 1
    assert store.get(namespace, "mood").value["text"].startswith("Alice feels calm today")


def test_an_attachment_to_a_missing_note_sets_none_of_its_batch(memory: AgenticMemory) -> None:
    from amem_graph.models import Attachment

    held = memory.add("Melanie ran a charity race for mental health.")
    batch = [Attachment(held.id, '{"page_content": "race"}'), Attachment("no-such-note", '{"page_content": "x"}')]
    with pytest.raises(InvalidInput, match="no-such-note"):
        memory.attachments.attach(memory.tenant, "document", batch)
    assert memory.attachments.attached(memory.tenant, [held.id]) == []  # all or nothing
    memory.attachments.attach(memory.tenant, "document", batch[:1])
    assert [a.kind for a in memory.attachments.attached(memory.tenant, [held.id])] == ["document"]
