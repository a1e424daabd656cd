"""`bench scale`: the store at 10k, 100k, 1M notes with precomputed vectors (no model time in the ingest):
ingest rate, the vector index coming online, k-NN p50/p95 and recall@10 against an exact scan, search with
expansion, and the server's memory; with one tenant, or the notes spread over many (the over-fetch path).

The vectors are near real ones: MiniLM vectors of synthetic turns as centres, each note one of them plus
noise, so neighbourhoods are as crowded as in a conversation's memory and the exact answer is known."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..api import AgenticMemory
from ..embedding import Embedder
from ..models import NO_FILTER, NoteInput
from ..settings import Settings
from .private import private_memory
from .texts import sentences
from .timing import ms, percentiles

CENTRES = 2_000  # distinct real vectors the notes are drawn around
NOISE = 0.06  # per dimension: a note keeps a cosine of about 0.6 to its centre
_ID = re.compile(r"^Scale (note|query) (\d+):")


class Precomputed(Embedder):
    """The vector of "Scale note i: ..." is row i of `notes`, and of "Scale query j: ..." row j of `queries`;
    any other text is embedded by the real model (the engine's own writes, such as tier summaries)."""

    def __init__(self, inner: Embedder, notes: np.ndarray, queries: np.ndarray) -> None:
        super().__init__(inner.model_name, inner.batch_size, backend=inner.requested, home=inner.home)
        self.notes, self.queries = notes, queries

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            match = _ID.match(text)
            if match is None:
                rows.append(super().embed([text])[0])
            else:
                rows.append((self.notes if match.group(1) == "note" else self.queries)[int(match.group(2))])
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)


def vectors(centres: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = centres[rng.integers(0, len(centres), n)] + rng.normal(0, NOISE, (n, centres.shape[1])).astype(np.float32)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def run(settings: Settings, store: str, *, sizes: Sequence[int], tenants: int, queries: int, k: int, workdir: Path,
        heap: str = "4g", pagecache: str = "4g", seed: int = 7) -> dict[str, Any]:
    sizes = sorted(sizes)
    real = Embedder.of(settings)
    turns = sentences(CENTRES, seed)
    centres = real.embed(turns)
    notes = vectors(centres, sizes[-1], seed)
    asked = vectors(centres, queries, seed + 1)
    with private_memory(settings, store, workdir, tenant="scale-0", embedder=Precomputed(real, notes, asked), heap=heap,
                        pagecache=pagecache, entities="off") as (memory, pid):
        server = memory.stats(tenant=memory.tenant).server  # Neo4j's release and k-NN path; empty when embedded
        names = [f"scale-{t}" for t in range(tenants)]
        owner = np.arange(sizes[-1]) % tenants
        rows: list[dict[str, Any]] = []
        held, ingest_s = 0, 0.0
        for size in sizes:
            began = time.perf_counter()
            for start in range(held, size, 5_000):
                stop = min(size, start + 5_000)
                for t, name in enumerate(names):
                    picked = [i for i in range(start, stop) if owner[i] == t]
                    memory.add_many([NoteInput(content=f"Scale note {i}: {turns[i % CENTRES]}", source=f"scale:{i}")
                                     for i in picked], tenant=name)
            ingest_s += time.perf_counter() - began
            added, held = size - held, size
            online_s = _await_index(memory)
            settle_s = _await_quiet(pid)
            writing_s = time.perf_counter() - began - online_s - settle_s
            rows.append({"notes": size, "ingest_notes_per_s": round(added / writing_s, 1),
                         "index_online_s": round(online_s, 1), "server_settle_s": round(settle_s, 1),
                         **_measure(memory, names, notes[:size], owner[:size], asked, k),
                         **_keywords(memory, names, turns, k, seed), **_footprint(pid, workdir)})
        for name in names:
            memory.admin.delete_tenant(name)
    return {"benchmark": "scale", "store": store, "server": server, "tenants": tenants,
            "queries": queries, "k": k,
            "heap": heap if store == "neo4j" else None, "pagecache": pagecache if store == "neo4j" else None,
            "vectors": f"{CENTRES} MiniLM centres + N(0, {NOISE}) per dimension, normalised",
            "ingest_s": round(ingest_s, 1), "sizes": rows}


def _await_index(memory: AgenticMemory) -> float:
    """Seconds until every index is online and fully populated (0 for the embedded store's exact scan)."""
    began = time.perf_counter()
    while any(i.get("state") != "ONLINE" or float(i.get("populationPercent", 100)) < 100
              for i in memory.stats(tenant=memory.tenant).indexes):
        time.sleep(0.5)
    return time.perf_counter() - began


def _await_quiet(pid: int | None, *, window: float = 2.0, busy: float = 0.05, limit: float = 300.0) -> float:
    """Seconds until the server's process is idle (under `busy` of a core over `window`), at most `limit`: after
    a bulk insert the server goes on merging the vector index's segments, and a query measured meanwhile
    shares the cores with those merges. 0 without a server process (the embedded store)."""
    if pid is None:
        return 0.0
    began = time.perf_counter()
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu_s() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    try:
        while time.perf_counter() - began < limit:
            before = cpu_s()
            time.sleep(window)
            if cpu_s() - before < busy * window:
                break
    except FileNotFoundError:  # the process is gone: nothing to wait for
        pass
    return time.perf_counter() - began


def _measure(memory: AgenticMemory, names: list[str], notes: np.ndarray, owner: np.ndarray, asked: np.ndarray,
             k: int) -> dict[str, Any]:
    """k-NN latency and recall@k against the exact answer, per query a tenant in turn; then hybrid search with
    two hops of expansion on the same queries."""
    knn, recalls, search = [], [], []
    for j, query in enumerate(asked):
        t = j % len(names)
        mine = np.flatnonzero(owner == t)
        exact = {f"scale:{i}" for i in mine[np.argsort(-(notes[mine] @ query))[:k]]}
        if j < 10:  # warm-up: plan cache and JIT, as in a long-running service
            memory.attachments.notes_near(names[t], query, k, NO_FILTER)
        began = time.perf_counter()
        found = memory.attachments.notes_near(names[t], query, k, NO_FILTER)
        knn.append((time.perf_counter() - began) * 1000)
        recalls.append(len(exact & {note.source for note, _ in found}) / k)
        if j < 100:
            search.append(ms(memory.search, f"Scale query {j}: what happened", k=k, tenant=names[t], hops=2))
    return {"knn_ms": percentiles(knn), "recall_at_k": round(float(np.mean(recalls)), 4),
            "search_ms": percentiles(search)}


def _keywords(memory: AgenticMemory, names: list[str], turns: list[str], k: int, seed: int) -> dict[str, Any]:
    """Keyword search (BM25 alone, no expansion) per query a tenant in turn: p50/p95, and each query's top k by
    source with their scores, to compare the stores' rankings (the embedded store's is exact for the tenant; notes
    of one text tie, and ties go by note id, which differs between runs)."""
    rng = np.random.default_rng(seed + 2)
    timings, tops = [], []
    for j in range(100):
        words = re.findall(r"[A-Za-z]{4,}", turns[int(rng.integers(len(turns)))])
        query = " ".join([words[0], *rng.choice(words[1:], size=min(3, len(words) - 1), replace=False)])
        began = time.perf_counter()
        hits = memory.search(query, k=k, tenant=names[j % len(names)], mode="fulltext", hops=0)
        timings.append((time.perf_counter() - began) * 1000)
        tops.append([query, [str(hit.note.source) for hit in hits], [round(hit.score, 6) for hit in hits]])
    return {"fulltext_ms": percentiles(timings), "fulltext_top": tops}


def _footprint(pid: int | None, workdir: Path) -> dict[str, Any]:
    """What the store holds in memory (the server's resident set, or this process's for the embedded store)
    and on disk."""
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    rss_kib = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
    disk = sum(f.stat().st_size for f in workdir.rglob("*") if f.is_file())
    return {"resident_mib": round(rss_kib / 1024), "disk_mib": round(disk / 2**20)}
