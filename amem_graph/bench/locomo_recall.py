"""`bench locomo`: evidence recall@k on LoCoMo for this engine's search beside flat dense, BM25 and hybrid
retrieval over the same turns, in one run; ablations of each retrieval ingredient; optional end-to-end QA."""

from __future__ import annotations

import math
import re
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..api import AgenticMemory
from ..core.text import stem
from ..embedding import Embedder
from ..errors import InvalidInput, LLMNotConfigured
from ..ingest import locomo
from ..llm.client import LLMClient
from ..models import Note, NoteInput, SearchHit
from ..read.retrieval import Retriever, Tuning
from . import locomo_qa, locomo_tiers
from .timing import percentiles

Ranker = Callable[[str, locomo.Question], list[str]]  # a question's turns (dia_ids), best first
MODES = ("notes", "tiers", "both")

# Each changes one ingredient of the default search (retrieval.Tuning), to show what it is worth;
# "+ ..." switches on one that is off by default.
ABLATIONS: dict[str, tuple[dict[str, Any], int | None]] = {
    "no expansion (hops 0)": ({}, 0),
    "hops 1": ({}, 1),
    "no session adjacency": ({"weights": {**Tuning().weights, "NEXT": 0.0}}, None),
    "no typed links": ({"weights": {"NEXT": Tuning().weights["NEXT"]}}, None),
    "no neighbourhood text": ({"fields": {"content": 1.0}}, None),
    "derived fields in BM25 too": ({"fields": None}, None),
    "no query stop words": ({"lexical_stop_words": False}, None),
    "no speaker prior": ({"speaker_prior": 0.0}, None),
    "no first-person prior": ({"first_person": False}, None),
    "no vocative aliases": ({"vocatives": False}, None),
    "no passages": ({"passages": False}, None),
    "passage margin 0": ({"passage_margin": 0.0}, None),
    "passage margin 0.2": ({"passage_margin": 0.2}, None),
    "no name-free dense query": ({"strip_names": False}, None),
    "no session score": ({"session_weight": 0.0}, None),
    "no when boost": ({"when_boost": 0.0}, None),
    "no date boost": ({"date_boost": 0.0}, None),
    "rrf fusion": ({"fusion": "rrf"}, None),
    "dense weight 0.6": ({"dense_weight": 0.6}, None),
    "dense weight 0.7": ({"dense_weight": 0.7}, None),
    "+ mmr 0.7": ({"mmr": 0.7}, None),
    "+ entity anchors 0.1": ({"entity_weight": 0.1}, None),
    "+ entity anchors 0.1, hops 0": ({"entity_weight": 0.1}, 0),
}
# What the tiers' context gains from the graph: its notes come from the same search.
TIERS_ABLATIONS = {name: ABLATIONS[name] for name in ("no expansion (hops 0)", "+ entity anchors 0.1")}


def tenant_of(prefix: str, conversation: dict[str, Any]) -> str:
    return f"{prefix}{conversation['sample_id']}"


def turn_id(tenant: str, source: str) -> str:
    """A turn's note id, the same in every ingest of it: ties between notes go by id, so two ingests of a set
    rank alike only if their ids do."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"amem-graph-bench:{tenant}/{source}"))


def ingest(memory: AgenticMemory, tenant: str, notes: Sequence[NoteInput]) -> dict[str, Any]:
    """Every turn through the analysed write path (an add per note); a tenant that already holds them all
    is reused, and a partial one is completed (repeats are not written again)."""
    held = memory.stats(tenant=tenant).labels.get("Note", 0)
    if held == len(notes):
        return {"notes": held, "seconds": None, "reused": True}
    began = time.perf_counter()
    for note in notes:
        memory.add(
            note.content, tenant=tenant, source=note.source, event_time=note.event_time, session=note.session,
            speaker=note.speaker, id=turn_id(tenant, str(note.source)),
        )
    memory.wait(tenant=tenant)  # with an LLM, the analyses the adds queued: search reads what they link
    return {"notes": len(notes), "seconds": round(time.perf_counter() - began, 2), "reused": False}


def _scores(sources: Sequence[str], question: locomo.Question, ks: Sequence[int]) -> dict[str, float]:
    """recall@k: share of the evidence among the first k turns; hit@k: all of it there. A hit that
    stands for several turns would fill that many places; here every note (and page) is one turn."""
    evidence = set(question.evidence)
    out: dict[str, float] = {}
    for k in ks:
        found = evidence & set(sources[:k])
        out[f"recall@{k}"] = len(found) / len(evidence)
        out[f"hit@{k}"] = float(found == evidence)
    return out


def _table(rows: Sequence[tuple[locomo.Question, dict[str, float]]]) -> dict[str, Any]:
    """Means in percent: overall over categories 1-4, and per category (5 apart)."""

    def mean(selected: list[dict[str, float]]) -> dict[str, float]:
        if not selected:
            return {}
        return {name: round(100 * sum(s[name] for s in selected) / len(selected), 1) for name in selected[0]} | {
            "questions": len(selected)
        }

    by_category: dict[int, list[dict[str, float]]] = defaultdict(list)
    by_kind: dict[str, list[dict[str, float]]] = defaultdict(list)
    for question, scores in rows:
        by_category[question.category].append(scores)
        if question.kind:
            by_kind[question.kind].append(scores)
    table: dict[str, Any] = {
        "overall": mean([s for q, s in rows if q.category in (1, 2, 3, 4)]),
        "by_category": {
            f"{c} {locomo.CATEGORIES[c]}": mean(by_category[c]) for c in sorted(by_category)
        },
    }
    if by_kind:
        table["by_type"] = {kind: mean(by_kind[kind]) for kind in sorted(by_kind)}
    return table


def evaluate(
    rank: Ranker, questions: Sequence[tuple[str, locomo.Question]], ks: Sequence[int], *, timed: bool = False
) -> dict[str, Any]:
    rows = []
    latencies: list[float] = []
    ranked: list[list[Any]] = []  # per question: conversation, question, the turns found (to compare runs one by one)
    for tenant, question in questions:
        began = time.perf_counter()
        sources = rank(tenant, question)
        latencies.append((time.perf_counter() - began) * 1000)
        rows.append((question, _scores(sources, question, ks)))
        ranked.append([question.conversation, question.question, sources])
    result = _table(rows)
    if timed:
        result["latency_ms"] = percentiles(latencies)
        result["ranked"] = ranked
    return result


def run(
    memory: AgenticMemory, data: Path, *, conversations: Sequence[str] | None = None, ks: Sequence[int] = (5, 10, 25),
    hops: int = 2, prefix: str = "locomo-", ablations: bool = True, limit: int | None = None, qa: bool = False,
    qa_k: int = 10, turns: int | None = None, mode: str = "notes",
) -> dict[str, Any]:
    """`limit`: questions per conversation; `turns`: only the first turns of each conversation, and the
    questions whose evidence lies among them (a quick run; the rest are counted as dropped). With `qa`,
    each question is also answered by the configured LLM from the `qa_k` memories `context` gives
    (LLMNotConfigured without one). `mode`: notes (each turn a note, `search`), tiers (each turn a page,
    `context_for`, under "tiers" in the result), or both side by side."""
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if qa and memory.llm is None:
        raise LLMNotConfigured("--qa answers with the configured LLM: set AMEM_LLM_BASE_URL (and AMEM_LLM_API_KEY)")
    if not ks or any(k < 1 or k > 1000 for k in ks):
        raise InvalidInput(f"k must be 1-1000, got {list(ks)}")
    every = locomo.load(data)
    chosen = [locomo.pick(every, name) for name in conversations] if conversations else every
    dropped: Counter[str] = Counter()
    questions: list[tuple[str, locomo.Question]] = []
    flat: dict[str, Sequence[NoteInput]] = {}
    ingest_report = {}
    tiers: dict[str, Any] = {"conversations": {}}
    mappings: dict[str, dict[str, str]] = {}
    for conversation in chosen:
        tenant = tenant_of(prefix, conversation)
        notes = locomo.turns(conversation)[:turns]
        if mode != "tiers":
            ingest_report[conversation["sample_id"]] = ingest(memory, tenant, notes)
        if mode != "notes":
            pages_tenant = f"{prefix}tiers-{conversation['sample_id']}"
            report, mappings[tenant] = locomo_tiers.ingest(memory, pages_tenant, notes)
            report["tenant"] = pages_tenant
            tiers["conversations"][conversation["sample_id"]] = report
        documents = locomo.documents(conversation)
        flat[tenant] = [replace(note, content=documents[str(note.source)]) for note in notes]
        known = {str(note.source) for note in notes}
        questions += [(tenant, q) for q in locomo.questions(conversation, dropped, known)][:limit]
    depth = max(ks)

    def search(tenant: str, q: locomo.Question) -> list[str]:
        return [str(hit.note.source) for hit in memory.search(q.question, k=depth, hops=hops, tenant=tenant)]

    result: dict[str, Any] = {}
    if mode != "tiers":
        for tenant, question in questions[:5]:  # warm-up: planned statements, JIT; not counted
            search(tenant, question)
        result = evaluate(search, questions, ks, timed=True)
    if mode != "notes":
        pages_tenants = {t: r["tenant"] for t, r in zip(mappings, tiers["conversations"].values(), strict=True)}
        result["tiers"] = evaluate(locomo_tiers.ranker(memory, mappings, pages_tenants, depth, hops), questions, ks, timed=True)
        result["tiers"]["ingest"] = tiers
        if ablations:
            result["tiers"]["ablations"] = _tiers_ablations(memory, mappings, pages_tenants, questions, ks, depth, hops)
    result["baselines"] = _baselines(memory, questions, flat, ks, depth)
    if ablations and mode != "tiers":
        result["ablations"] = {}
        for name, (change, ablated_hops) in ABLATIONS.items():
            # A retriever beside the memory's own, closed after its run.
            with closing(Retriever(memory._store, memory.embedder, replace(Tuning(), **change),
                                   assistant=memory.settings.tiers.assistant)) as retriever:
                result["ablations"][name] = evaluate(
                    lambda tenant, q, r=retriever, h=hops if ablated_hops is None else ablated_hops: [
                        str(hit.note.source) for hit in r.search(tenant, q.question, k=depth, hops=h)
                    ],
                    questions, ks,
                )
    if qa and memory.llm is not None and mode != "tiers":
        result["qa"] = _qa(memory, memory.llm, questions, qa_k)
    seconds = [r["seconds"] for r in ingest_report.values() if r["seconds"] is not None]
    notes = sum(r["notes"] for r in ingest_report.values() if r["seconds"] is not None)
    result["ingest"] = {
        "conversations": ingest_report,
        "seconds": round(sum(seconds), 2) if seconds else None,
        "notes_per_s": round(notes / sum(seconds), 1) if seconds and sum(seconds) else None,
        "analyser": memory.analyser.kind, "entities": memory.entities.extractor,
        "embedding_backend": memory.embedder.backend,
    }
    result["data"] = {
        "file": str(data), "conversations": [c["sample_id"] for c in chosen], "questions": len(questions),
        "dropped": dict(dropped), "k": list(ks), "hops": hops, "turns_per_conversation": turns, "mode": mode,
    }
    result["store"] = {"kind": memory.admin.kind, "location": memory.admin.location}
    return result


def run_sets(
    memory: AgenticMemory, data: Sequence[Path], *, conversations: Sequence[str] | None = None, **options: Any
) -> dict[str, Any]:
    """`run` over several data files in one run, so that a change is judged on all of them at once: each
    file's whole result under its name (the file's stem), and a summary that sets them side by side. One file
    gives `run`'s result as it is. `conversations` names sample_ids of any of the files; a file that holds
    none of them is left out, and a name that no file holds is an error."""
    if len(data) == 1:
        return run(memory, data[0], conversations=conversations, **options)
    names = _set_names(data)
    chosen: dict[str, list[str] | None] = {}
    for name, path in zip(names, data, strict=True):
        held = {str(c.get("sample_id")) for c in locomo.load(path)}
        chosen[name] = None if conversations is None else [c for c in conversations if c in held]
    if conversations is not None:
        if unknown := set(conversations) - {c for picked in chosen.values() for c in picked or ()}:
            raise InvalidInput(f"no data file holds the conversations {sorted(unknown)}")
    results = {
        name: run(memory, path, conversations=chosen[name], **options)
        for name, path in zip(names, data, strict=True) if chosen[name] is None or chosen[name]
    }
    ks = options.get("ks", (5, 10, 25))
    return {"summary": summarise(results, 10 if 10 in ks else max(ks)), "sets": results}


def _set_names(data: Sequence[Path]) -> list[str]:
    """A name per data file, its stem; the same stem twice gets its position added."""
    stems = [Path(path).stem for path in data]
    return [f"{stem}-{i + 1}" if stems.count(stem) > 1 else stem for i, stem in enumerate(stems)]


def summarise(results: dict[str, dict[str, Any]], k: int) -> dict[str, Any]:
    """One table for several sets at recall@k: per set, the engine beside flat dense, BM25 and hybrid overall
    and per category (and per finer type where the data has one), the engine's lead over hybrid, search
    latency, and how far each ablation moves the engine's overall figure."""
    metric = f"recall@{k}"
    table: dict[str, Any] = {"metric": metric}
    for name, result in results.items():
        if "overall" not in result:  # tiers only: the notes' figures are not there
            continue
        methods = {"engine": result, **result["baselines"]}
        engine = result["overall"].get(metric, 0.0)
        row: dict[str, Any] = {
            "questions": result["overall"].get("questions", 0),
            "overall": {m: r["overall"].get(metric) for m, r in methods.items()},
            "lead_over_hybrid": round(engine - result["baselines"]["hybrid"]["overall"].get(metric, 0.0), 1),
            "lead_over_dense": round(engine - result["baselines"]["dense"]["overall"].get(metric, 0.0), 1),
        }
        for part in ("by_category", "by_type"):
            if part in result:
                row[part] = {
                    label: {m: r[part].get(label, {}).get(metric) for m, r in methods.items()} for label in result[part]
                }
        row["latency_ms"] = {m: {p: r["latency_ms"][p] for p in ("p50", "p95")} for m, r in methods.items()}
        if "ablations" in result:
            row["ablations"] = {
                ablation: round(r["overall"].get(metric, 0.0) - engine, 1) for ablation, r in result["ablations"].items()
            }
        table[name] = row
    if sum("ablations" in row for row in table.values() if isinstance(row, dict)) >= 3:
        table["leave_one_set_out"] = leave_one_set_out({n: r["ablations"] for n, r in table.items()
                                                         if isinstance(r, dict) and "ablations" in r})
    return table


def leave_one_set_out(ablations: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Whether each ablation's verdict carries to a set it was not chosen on. `ablations`: per set, each
    ablation's change of recall against the default. For each set held out, the choice is made on the others
    (the change if its mean there is a gain, else the default) and its gain over the other option is read on
    the held-out set. `verdict`: "default" or "change" when every fold chose it, it lost on no held-out set and
    gained on one at least (an ingredient a set gives no occasion to, such as speaker names in a user–assistant
    chat, changes nothing there); else "no carry-over" (it earns its place only on the sets it was tuned on)."""
    sets = list(ablations)
    out: dict[str, Any] = {}
    for name in ablations[sets[0]]:
        folds: dict[str, Any] = {}
        for held in sets:
            chosen_on = [ablations[s][name] for s in sets if s != held]
            mean = sum(chosen_on) / len(chosen_on)
            choice = "change" if mean > 0 else "default"
            gain = ablations[held][name] if choice == "change" else -ablations[held][name]
            folds[held] = {"choice": choice, "mean_change_on_others": round(mean, 2), "gain_held_out": round(gain, 1)}
        choices = {fold["choice"] for fold in folds.values()}
        gains = [fold["gain_held_out"] for fold in folds.values()]
        carried = len(choices) == 1 and min(gains) >= 0 and max(gains) > 0
        out[name] = {"folds": folds, "verdict": choices.pop() if carried else "no carry-over"}
    return out


def _tiers_ablations(
    memory: AgenticMemory, mappings: dict[str, dict[str, str]], tenants: dict[str, str],
    questions: Sequence[tuple[str, locomo.Question]], ks: Sequence[int], depth: int, hops: int,
) -> dict[str, Any]:
    """`context_for` with one search ingredient changed: a memory beside this one, on its store."""
    result = {}
    for name, (change, ablated_hops) in TIERS_ABLATIONS.items():
        with closing(AgenticMemory(
            memory.settings, store=memory._store, embedder=memory.embedder, analyser=memory.analyser,
            tuning=replace(Tuning(), **change), init_schema=False,
        )) as beside:
            rank = locomo_tiers.ranker(beside, mappings, tenants, depth, hops if ablated_hops is None else ablated_hops)
            result[name] = evaluate(rank, questions, ks)
    return result


def _baselines(
    memory: AgenticMemory, questions: Sequence[tuple[str, locomo.Question]],
    turns: dict[str, Sequence[NoteInput]], ks: Sequence[int], depth: int,
) -> dict[str, Any]:
    """Flat retrieval over the bare turns, in process as the data README measured it (one document per
    turn, `[<session date-time>] <speaker>: <text>`, locomo.documents): exact dense cosine, Okapi BM25, and 0.5·minmax(dense) + 0.5·minmax(BM25). In process, so
    that they neither share Neo4j's vector index with the engine's tenants nor pay its round trips."""
    flat = {tenant: FlatIndex(memory.embedder, notes) for tenant, notes in turns.items()}

    def ranker(method: str) -> Ranker:
        return lambda tenant, q: [str(hit.note.source) for hit in flat[tenant].search(q.question, depth, method)]

    return {name: evaluate(ranker(name), questions, ks, timed=True) for name in ("dense", "bm25", "hybrid")}


class FlatIndex:
    """One conversation's turns as flat documents: normalised embeddings and BM25 statistics."""

    K1, B = 1.5, 0.75

    def __init__(self, embedder: Embedder, notes: Sequence[NoteInput]) -> None:
        self.embedder = embedder
        self.notes = [Note(id=str(n.source), tenant="flat", content=n.content, content_hash="", source=n.source)
                      for n in notes]
        self.vectors = embedder.embed([n.content for n in self.notes])
        self.docs = [Counter(_tokens(n.content)) for n in self.notes]
        self.lengths = np.array([sum(d.values()) for d in self.docs], dtype=float)
        frequency: Counter[str] = Counter(t for d in self.docs for t in d)
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def search(self, query: str, k: int, method: str) -> list[SearchHit]:
        if method == "bm25":
            return self._top(self._bm25(query), k)
        dense = self.vectors @ self.embedder.embed_query(query)
        if method == "dense":
            return self._top(dense, k)
        return self._top(0.5 * _scaled(dense) + 0.5 * _scaled(self._bm25(query)), k)

    def _bm25(self, query: str) -> np.ndarray:
        scores = np.zeros(len(self.docs))
        norm = self.K1 * (1 - self.B + self.B * self.lengths / self.lengths.mean())
        for term in set(_tokens(query)):
            if term not in self.idf:
                continue
            tf = np.array([d.get(term, 0) for d in self.docs], dtype=float)
            scores += self.idf[term] * tf * (self.K1 + 1) / (tf + norm)
        return scores

    def _top(self, scores: np.ndarray, k: int) -> list[SearchHit]:
        order = np.argsort(-scores, kind="stable")[:k]
        return [SearchHit(self.notes[i], float(scores[i])) for i in order]


_TOKEN = re.compile(r"[a-z0-9]+")
LUCENE_STOP_WORDS = frozenset(  # Lucene's English stop set, which the engine's fulltext index uses too
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)


def _tokens(text: str) -> list[str]:
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in LUCENE_STOP_WORDS]


def _scaled(scores: np.ndarray) -> np.ndarray:
    low, high = float(scores.min()), float(scores.max())
    return np.ones_like(scores) if high - low < 1e-12 else (scores - low) / (high - low)


def _qa(
    memory: AgenticMemory, client: LLMClient, questions: Sequence[tuple[str, locomo.Question]], k: int
) -> dict[str, Any]:
    before = client.usage().get(locomo_qa.OPERATION, {})
    rows = []
    for tenant, question in questions:
        memories = memory.context(question.question, k=k, tenant=tenant)
        rows.append((question, locomo_qa.score(question, locomo_qa.answer(client, question.question, memories))))
    after = client.usage().get(locomo_qa.OPERATION, {})
    return {
        "by_category": locomo_qa.table(rows), "k": k, "model": client.settings.model,
        "usage": {name: after.get(name, 0) - before.get(name, 0) for name in after},
    }
