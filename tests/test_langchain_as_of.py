"""The LangGraph store and the LangChain vector store read as of a recorded time: an item's value and a
document's metadata as they were set then (an attachment set again keeps the one it replaces), membership as
the memory held it then (recorded, superseded, archived), views as of a time refuse writes, and the kept
values survive a tenant's export and import and the embedded store's reopening; a chat history as of a time
holds the messages added by then."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage

from amem_graph import AgenticMemory, Settings
from amem_graph.errors import InvalidInput
from amem_graph.integrations.langchain import AmemChatMessageHistory, AmemStore, AmemVectorStore
from amem_graph.integrations.langchain.store import item_id

STORES = ("neo4j", "embedded")
PAUSE_S = 0.01  # writes are stamped to the millisecond: a moment recorded between two writes is strictly between


def moment() -> datetime:
    """A recorded time strictly after what was written before and strictly before what is written next."""
    time.sleep(PAUSE_S)
    at = datetime.now(UTC)
    time.sleep(PAUSE_S)
    return at


def keys(items: list) -> list[str]:
    return [item.key for item in items]


def test_the_langgraph_store_as_of_a_time(memory: AgenticMemory) -> None:
    ns = (memory.tenant,)
    store = AmemStore(memory)
    before_any = moment()
    store.put(ns, "pet", {"text": "Alice has a parrot called Kiwi.", "n": 1})
    first = store.get(ns, "pet")
    after_first = moment()
    store.put(ns, "pet", {"text": "Alice has two parrots, Kiwi and Mango.", "n": 2})
    second = store.get(ns, "pet")
    store.put(ns, "food", {"text": "Alice is vegetarian."})
    store.put(ns, "job", {"text": "Alice works night shifts as a nurse."})
    after_second = moment()
    store.put(ns, "pet", {"text": "Alice has two parrots, Kiwi and Mango.", "n": 2})  # the same value again
    third = store.get(ns, "pet")
    after_third = moment()
    fish = memory.add("Alice eats fish now; she is no longer vegetarian.")
    memory.supersede(item_id(memory.tenant, "food"), fish.id, reason="Alice eats fish now")
    memory.retention.archive([item_id(memory.tenant, "job")])
    now = moment()
    assert first and second and third and first.updated_at < second.updated_at < third.updated_at

    empty = AmemStore(memory, as_of=before_any)
    assert empty.get(ns, "pet") is None and empty.search(ns) == [] and empty.search(ns, query="parrot") == []
    assert memory.tenant not in [space[0] for space in empty.list_namespaces()]

    then = AmemStore(memory, as_of=after_first)
    pet = then.get(ns, "pet")
    assert pet is not None and pet.value == first.value and pet.updated_at == first.updated_at
    assert pet.created_at == first.created_at
    assert keys(then.search(ns)) == ["pet"] and then.search(ns)[0].value["n"] == 1
    found = then.search(ns, query="Which birds does Alice have?", limit=5)
    assert keys(found) == ["pet"] and found[0].value["n"] == 1 and found[0].score is not None
    assert keys(then.search(ns, filter={"n": 1})) == ["pet"] and then.search(ns, filter={"n": 2}) == []
    assert then.get(ns, "food") is None
    assert then.list_namespaces(prefix=ns) == [ns]

    later = AmemStore(memory, as_of=after_second)
    assert later.get(ns, "pet").value["n"] == 2 and later.get(ns, "pet").updated_at == second.updated_at
    assert keys(later.search(ns)) == ["job", "food", "pet"]  # the last put by then first
    assert keys(later.search(ns, filter={"n": 2})) == ["pet"]
    assert set(keys(later.search(ns, query="What does Alice eat?", limit=3))) == {"food", "pet", "job"}

    # put again unchanged: the value of then, set at the third put
    assert AmemStore(memory, as_of=after_third).get(ns, "pet").updated_at == third.updated_at
    assert keys(AmemStore(memory, as_of=after_third).search(ns)) == ["pet", "job", "food"]

    # superseded and archived as of then: left out of searches, still there by key
    for view in (AmemStore(memory, as_of=now), store):
        assert keys(view.search(ns)) == ["pet"]
        assert "food" not in keys(view.search(ns, query="What does Alice eat?", limit=5))
        assert view.get(ns, "food") is not None and view.get(ns, "job") is not None
    assert keys(AmemStore(memory, as_of=now, include_superseded=True).search(ns)) == ["pet", "food"]
    assert keys(AmemStore(memory, as_of=after_third).search(ns, query="What does Alice eat?", limit=5))[0] == "food"

    with pytest.raises(InvalidInput, match="read-only"):
        then.put(ns, "pet", {"text": "Alice has no parrot."})
    with pytest.raises(InvalidInput, match="read-only"):
        then.delete(ns, "pet")
    assert store.get(ns, "pet").value == third.value and store.get(ns, "pet").updated_at == third.updated_at
    with pytest.raises(InvalidInput, match="as_of"):
        AmemStore(memory, as_of="last Tuesday")


def test_the_vector_store_as_of_a_time(memory: AgenticMemory) -> None:
    docs = AmemVectorStore(memory)
    gina = Document("Gina drives for Door Dash.", metadata={"job": "driver", "v": 1}, id="doc-gina")
    docs.add_documents([gina])
    after_first = moment()
    docs.add_documents([Document("Gina opened a clothing store downtown.", metadata={"job": "owner", "v": 2},
                                 id="doc-gina")])
    docs.add_documents([Document("Jon opened a dance studio.", metadata={"v": 1}, id="doc-jon")])
    after_second = moment()
    newer = memory.add("Jon closed his dance studio.")
    memory.supersede("doc-jon", newer.id, reason="the studio closed")
    now = moment()

    then = AmemVectorStore(memory, as_of=after_first)
    assert then.get_by_ids(["doc-gina", "doc-jon"]) == [gina]  # the text and metadata of then
    assert [d.metadata["v"] for d in docs.get_by_ids(["doc-gina"])] == [2]
    for view, options in ((then, {}), (docs, {"as_of": after_first}), (docs, {"as_of": after_first.isoformat()})):
        found = view.similarity_search("Where does Gina work?", k=2, **options)
        assert found == [gina]
        assert view.similarity_search("Where does Gina work?", k=2, filter={"v": 1}, **options) == [gina]
        assert view.similarity_search("Where does Gina work?", k=2, filter={"v": 2}, **options) == []
    assert [d.page_content for d in docs.as_retriever(search_kwargs={"as_of": after_first, "k": 2}).invoke("Gina")] \
        == [gina.page_content]

    later = docs.similarity_search("Who opened something?", k=2, as_of=after_second)
    assert {d.id: d.metadata["v"] for d in later} == {"doc-gina": 2, "doc-jon": 1}
    assert [d.id for d in docs.similarity_search("dance studio", k=5, filter={"v": 1}, as_of=after_second)] == ["doc-jon"]
    assert docs.similarity_search("dance studio", k=5, filter={"v": 1}, as_of=now) == []  # superseded then
    every = AmemVectorStore(memory, include_superseded=True, as_of=now)
    assert [d.id for d in every.similarity_search("dance studio", k=5, filter={"v": 1})] == ["doc-jon"]

    with pytest.raises(InvalidInput, match="read-only"):
        then.add_documents([Document("Gina quit.", id="doc-gina")])
    with pytest.raises(InvalidInput, match="read-only"):
        then.delete(["doc-gina"])
    with pytest.raises(InvalidInput, match="later than this view"):
        then.similarity_search("Gina", as_of=now)
    with pytest.raises(InvalidInput, match="unknown search option"):
        docs.similarity_search("Gina", when=now)
    assert docs.get_by_ids(["doc-gina"])[0].metadata["v"] == 2  # the refused writes changed nothing


def test_the_vector_store_with_its_own_embeddings_as_of_a_time(memory: AgenticMemory) -> None:
    docs = AmemVectorStore(memory, embedding=DeterministicFakeEmbedding(size=32))
    docs.add_texts(["Tom lives in Lisbon."], [{"city": "Lisbon"}], ids=["doc-tom"])
    after_first = moment()
    docs.add_texts(["Tom moved to Porto."], [{"city": "Porto"}], ids=["doc-tom"])
    found = docs.similarity_search("Tom", k=1, as_of=after_first)
    assert [(d.page_content, d.metadata) for d in found] == [("Tom lives in Lisbon.", {"city": "Lisbon"})]
    assert docs.similarity_search("Tom", k=1, filter={"city": "Porto"}, as_of=after_first) == []
    assert [d.metadata for d in docs.similarity_search("Tom", k=1)] == [{"city": "Porto"}]


def test_kept_values_survive_export_and_import(memory: AgenticMemory) -> None:
    ns = (memory.tenant,)
    store = AmemStore(memory)
    store.put(ns, "pet", {"text": "Alice has a parrot called Kiwi."})
    first = store.get(ns, "pet")
    after_first = moment()
    store.put(ns, "pet", {"text": "Alice has two parrots."})
    store.put(ns, "pet", {"text": "Alice has two parrots."})
    _, records = memory.admin.export()
    nodes, rels = [], []
    for record in records:
        (nodes if record["kind"] == "node" else rels).append(record)
    kept = next(n["props"] for n in nodes if n["props"].get("store_key") == "pet")
    assert [json.loads(v) if v else v for v in kept["attached_before"]] == [first.value, ""]  # '': put again unchanged
    assert len(kept["attached_before_at"]) == 2
    memory.admin.delete_tenant(memory.tenant)
    assert AmemStore(memory, as_of=after_first).get(ns, "pet") is None  # erased from every time
    memory.admin.import_(nodes, rels)
    then = AmemStore(memory, as_of=after_first).get(ns, "pet")
    assert then is not None and then.value == first.value and then.updated_at == first.updated_at
    assert store.get(ns, "pet").value == {"text": "Alice has two parrots."}
    assert memory.admin.check().sound


def test_deleting_an_item_erases_its_kept_values(memory: AgenticMemory) -> None:
    ns = (memory.tenant,)
    store = AmemStore(memory)
    store.put(ns, "secret", {"text": "Alice's locker code is 4711."})
    after_first = moment()
    store.put(ns, "secret", {"text": "Alice's locker code is 0815."})
    store.delete(ns, "secret")
    _, records = memory.admin.export()
    assert not [r for r in records if "4711" in str(r) or "0815" in str(r)]
    assert AmemStore(memory, as_of=after_first).get(ns, "secret") is None


@pytest.mark.embedded
def test_kept_values_survive_reopening_the_embedded_store(base_settings: Settings, tmp_path: Path) -> None:
    settings = replace(base_settings, store="embedded", data_dir=tmp_path, neo4j_uri=None, neo4j_password=None)
    ns = ("reopened",)
    with AgenticMemory(settings, tenant="reopened") as mem:
        store = AmemStore(mem)
        store.put(ns, "pet", {"text": "Alice has a parrot called Kiwi."})
        first = store.get(ns, "pet")
        after_first = moment()
        store.put(ns, "pet", {"text": "Alice has two parrots."})
    with AgenticMemory(settings, tenant="reopened") as mem:  # from the journal
        then = AmemStore(mem, as_of=after_first).get(ns, "pet")
        assert then is not None and then.value == first.value and then.updated_at == first.updated_at


def test_the_chat_history_as_of_a_time(memory: AgenticMemory) -> None:
    chat = AmemChatMessageHistory(memory, "as-of-chat")
    before_any = moment()
    chat.add_messages([HumanMessage("I moved to Lisbon.", id="m1"), AIMessage("Noted, Lisbon.", id="m2")])
    after_first = moment()
    chat.add_messages([HumanMessage("Now I live in Porto.", id="m3")])
    assert AmemChatMessageHistory(memory, "as-of-chat", as_of=before_any).messages == []
    then = AmemChatMessageHistory(memory, "as-of-chat", as_of=after_first)
    assert [m.id for m in then.messages] == ["m1", "m2"] and then.messages[0].content == "I moved to Lisbon."
    assert [m.id for m in AmemChatMessageHistory(memory, "as-of-chat", as_of=moment()).messages] == ["m1", "m2", "m3"]
    with pytest.raises(InvalidInput, match="read-only"):
        then.add_messages([HumanMessage("Then Faro.", id="m4")])
    with pytest.raises(InvalidInput, match="read-only"):
        then.clear()
    assert [m.id for m in chat.messages] == ["m1", "m2", "m3"]  # the refused writes changed nothing
    with pytest.raises(InvalidInput, match="as_of"):
        AmemChatMessageHistory(memory, "as-of-chat", as_of="yesterday-ish")
