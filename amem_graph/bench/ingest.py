"""`bench ingest`: bulk-ingest throughput against pure embedding, side by side, and k-NN latency."""

from __future__ import annotations

import time
import uuid
from typing import Any

import numpy as np

from ..api import AgenticMemory
from ..embedding import Embedder, composite_text
from ..entities.extract import default_extractor, extract
from ..models import NO_FILTER, NoteInput
from .texts import sentences
from .timing import TimedEmbedder, ms, percentiles


def run(memory: AgenticMemory, n: int, *, chunk: int = 1000, queries: int = 200, k: int = 10,
        keep: bool = False, seed: int = 7) -> dict[str, Any]:
    """Alternate chunks of the stages alone (embedding, entity extraction) and full ingest, so all see the same
    machine state; the stages' seconds alone, as shares of the ingest's, show where ingest time goes (the
    extraction and the writes run beside the embedding, so the shares may add up to more than one)."""
    tenant = f"bench-{uuid.uuid4().hex[:12]}"
    texts = sentences(n, seed)
    original = memory.embedder
    timed = TimedEmbedder(original)
    memory.embedder = timed
    timed.embed(texts[:64])  # load the model and warm up before any clock runs
    extractor = default_extractor(memory.settings.entities)  # the instance the memory holds (cached)
    embed_only_s = extract_only_s = ingest_s = 0.0
    timed.seconds = 0.0
    try:
        for start in range(0, n, chunk):
            part = texts[start : start + chunk]
            began = time.perf_counter()
            Embedder.embed(timed, [composite_text(t) for t in part])  # untimed by `timed`: the reference
            embed_only_s += time.perf_counter() - began
            inputs = [NoteInput(content=t) for t in part]
            began = time.perf_counter()
            extract(extractor, inputs)
            extract_only_s += time.perf_counter() - began
            began = time.perf_counter()
            memory.add_many([NoteInput(content=t, source=f"bench:{start + i}") for i, t in enumerate(part)],
                            tenant=tenant)
            ingest_s += time.perf_counter() - began
        ingest_embed_s = timed.seconds
        held = memory.stats(tenant=tenant)  # the import ends with every note and what it mentions
        rng = np.random.default_rng(seed)
        picks = rng.choice(n, size=min(queries, n), replace=False)
        vectors = [original.embed_query(texts[i].split(": ", 1)[1][:60]) for i in picks]  # query embedding excluded
        for vector in vectors[:20]:  # warm-up: plan cache and JIT, as in a long-running service
            memory.attachments.notes_near(tenant, vector, k, NO_FILTER)
        knn_ms = [ms(memory.attachments.notes_near, tenant, vector, k, NO_FILTER) for vector in vectors]
        asked = [texts[i].split(": ", 1)[1][:60] for i in picks[:100]]
        # The floor under a search: its query embedded, one index probe, one round trip.
        floor_ms = [ms(lambda q: memory.attachments.notes_near(tenant, original.embed_query(q), k, NO_FILTER), q)
                    for q in asked]
        search_ms = [ms(memory.search, q, k=k, tenant=tenant) for q in asked]
    finally:
        memory.embedder = original
        if not keep:
            memory.admin.delete_tenant(tenant)
    notes_per_s = n / ingest_s
    embed_only_per_s = n / embed_only_s
    return {
        "benchmark": "ingest",
        "store": memory.admin.kind,
        "n": n,
        "chunk": chunk,
        "write_batch_size": memory.settings.write_batch_size,
        "model": original.model_name, "embedding_backend": original.backend,
        "notes_per_s": round(notes_per_s, 2),
        "embed_only_per_s": round(embed_only_per_s, 2),
        "overhead": round(embed_only_per_s / notes_per_s - 1, 4),
        "embed_share": round(ingest_embed_s / ingest_s, 4),
        "notes_held": held.labels.get("Note", 0),
        "mentions_held": held.relationships.get("MENTIONS", 0),
        "entity_extractor": memory.entities.extractor,
        "extract_only_per_s": round(n / extract_only_s, 2),
        "stage_share_alone": {"embed": round(embed_only_s / ingest_s, 4), "extract": round(extract_only_s / ingest_s, 4)},
        "knn_ms": percentiles(knn_ms),
        "hybrid_search_ms": percentiles(search_ms),
        "search_floor_ms": percentiles(floor_ms),  # query embedding + k-NN: the least a search can cost
        "k": k,
        "tenant": tenant if keep else None,
    }
