"""What the LangChain / LangGraph adapters cost over the engine's own calls, timed side by side in one run.

Writes: each round adds one text through `AgenticMemory.add` and one through each adapter (vector store,
LangGraph store, chat history), each into its own tenant, in turn, so that every path sees the same
machine state and tenants of the same size. Reads: `search` and the retriever over one tenant, then the
vector store's and the LangGraph store's searches, query by query in turn."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..api import AgenticMemory
from .texts import sentences
from .timing import ms, percentiles

# Each adapter's path beside the engine call it wraps.
RATIOS = (("vectorstore_add", "add"), ("store_put", "add"), ("history_add", "add"), ("retriever", "search"),
          ("vectorstore_search", "search"), ("store_search", "search"))


def run(memory: AgenticMemory, n: int = 100, *, queries: int = 50, keep: bool = False, seed: int = 7) -> dict[str, Any]:
    from langchain_core.messages import HumanMessage

    from ..integrations.langchain import AmemChatMessageHistory, AmemRetriever, AmemStore, AmemVectorStore

    run_id = uuid.uuid4().hex[:10]
    tenants = {name: f"bench-lc-{name}-{run_id}" for name in ("add", "documents", "items", "chat")}
    documents = AmemVectorStore(memory, tenant=tenants["documents"])
    items = AmemStore(memory)
    history = AmemChatMessageHistory(memory, "bench", tenant=tenants["chat"])
    retriever = AmemRetriever(memory=memory, tenant=tenants["add"], k=5)
    texts = sentences(n, seed)
    writes: dict[str, Callable[[int, str], Any]] = {
        "add": lambda i, t: memory.add(t, tenant=tenants["add"], source=f"bench:{i}"),
        "vectorstore_add": lambda i, t: documents.add_texts([t], ids=[f"doc-{run_id}-{i}"]),
        "store_put": lambda i, t: items.put((tenants["items"],), f"k{i}", {"text": t}),
        "history_add": lambda i, t: history.add_message(HumanMessage(t)),
    }
    write_ms = _alternate(writes, list(enumerate(texts)))
    asked = [t.split(": ", 1)[1][:60] for t in texts[: min(queries, n)]]
    reads: dict[str, Callable[[int, str], Any]] = {
        "search": lambda _, q: memory.search(q, k=5, tenant=tenants["add"]),
        "retriever": lambda _, q: retriever.invoke(q),
        "vectorstore_search": lambda _, q: documents.similarity_search(q, k=5),
        "store_search": lambda _, q: items.search((tenants["items"],), query=q, limit=5),
    }
    for read in reads.values():  # warm-up: plan caches, as in a long-running service
        read(0, asked[0])
    read_ms = _alternate(reads, list(enumerate(asked)))
    if not keep:
        for tenant in tenants.values():
            memory.admin.delete_tenant(tenant)
    timings = {name: percentiles(samples) for name, samples in {**write_ms, **read_ms}.items()}
    return {
        "benchmark": "langchain",
        "store": memory.admin.kind,
        "n": n,
        "queries": len(asked),
        "analysis": memory.analyser.__class__.__name__,
        "ms": timings,
        "ratio_p50": {f"{adapter} / {engine}": _ratio(timings, adapter, engine) for adapter, engine in RATIOS},
        "tenants": tenants if keep else None,
    }


def _alternate(calls: dict[str, Callable[[int, str], Any]], inputs: list[tuple[int, str]]) -> dict[str, list[float]]:
    """Milliseconds per call of each path, the paths taking turns on every input."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for i, text in inputs:
        for name, call in calls.items():
            samples[name].append(ms(call, i, text))
    return samples


def _ratio(timings: dict[str, dict[str, float]], adapter: str, engine: str) -> float:
    return round(timings[adapter]["p50"] / timings[engine]["p50"], 3)
