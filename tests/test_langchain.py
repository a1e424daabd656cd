"""The LangChain adapter's own behaviour against the real Neo4j: chat messages round-trip exactly and
become linked notes (and pages); the retriever's metadata carries provenance; the vector store goes through
the analysed write path; the LangGraph store maps namespaces to tenants; bad input writes nothing."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.store.base import InvalidNamespaceError

from amem_graph import AgenticMemory, Settings
from amem_graph.errors import InvalidInput
from amem_graph.integrations.langchain import (
    AmemChatMessageHistory,
    AmemRetriever,
    AmemStore,
    AmemVectorStore,
    memory_tools,
)


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


def test_chat_history_refuses_bad_messages_before_writing(memory: AgenticMemory, count_nodes, tenant: str) -> None:
    history = AmemChatMessageHistory(memory, "s")
    too_long = HumanMessage("x" * (memory.settings.max_content_chars + 1))
    with pytest.raises(InvalidInput):
        history.add_messages([HumanMessage("fine"), too_long])
    assert count_nodes(tenant) == 0
    with pytest.raises(InvalidInput):
        AmemChatMessageHistory(memory, "")


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
    linked = memory.get(first.id).links
    assert linked  # the graph path exists; a hit reached through it names the step
    assert all(step["type"] and step["from"] for d in docs for step in d.metadata["path"])
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


def test_vector_store_id_of_another_tenant_is_refused(settings: Settings, memory: AgenticMemory) -> None:
    memory.add("A note with a chosen id.", id=f"taken-{memory.tenant}")
    other = f"{memory.tenant}-other"
    try:
        with pytest.raises(InvalidInput, match="already taken"):
            AmemVectorStore(memory, tenant=other).add_texts(["Another text."], ids=[f"taken-{memory.tenant}"])
        assert memory.stats(tenant=other).labels == {}
    finally:
        memory.store.delete_tenant(other)


def test_langgraph_store_namespaces_are_tenants(memory: AgenticMemory) -> None:
    root = f"lg{uuid.uuid4().hex[:8]}"
    store = AmemStore(memory)
    alice, bob = (root, "users", "alice"), (root, "users", "bob")
    try:
        store.put(alice, "food", {"text": "Alice is vegetarian and loves spicy ramen.", "kind": "preference"})
        store.put(alice, "pet", {"text": "Alice has a parrot called Kiwi.", "kind": "fact", "age": 3})
        store.put(alice, "job", {"text": "Alice works night shifts as a nurse.", "kind": "fact", "age": 7})
        store.put(bob, "food", {"text": "Bob is allergic to peanuts.", "kind": "preference"})
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
        assert len(store.search(alice, limit=1, offset=1)) == 1
        assert store.list_namespaces(prefix=(root,)) == [alice, bob]
        assert store.list_namespaces(prefix=(root,), max_depth=2) == [(root, "users")]
        assert store.list_namespaces(suffix=("bob",)) == [bob]
        store.put(alice, "pet", {"text": "Alice has two parrots now, Kiwi and Mango.", "kind": "fact", "age": 3})
        assert store.get(alice, "pet").value["text"].startswith("Alice has two parrots")
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
        for tenant in memory.store.keyed_tenants():
            if tenant.startswith(root):
                memory.store.delete_tenant(tenant)


def test_memory_tools_save_and_search(memory: AgenticMemory) -> None:
    save, search = memory_tools(memory)
    assert save.invoke({"content": "Priya's favourite board game is Azul."}).startswith("Saved memory")
    message = search.invoke({"type": "tool_call", "id": "1", "name": search.name,
                             "args": {"query": "Which board game does Priya like?", "k": 1}})
    assert "Azul" in message.content and message.artifact[0]["note_id"]
    refused = save.invoke({"type": "tool_call", "id": "2", "name": save.name, "args": {"content": "   "}})
    assert refused.status == "error" and memory.list()[0].content.startswith("Priya")
