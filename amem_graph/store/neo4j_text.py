"""A tenant's BM25 statistics on Neo4j, kept in the graph, and search scored with them (bm25.py's rule).

One Lucene index serves every tenant, and Lucene scores with statistics of the whole database. So the store keeps
each tenant's own in the graph: a `Corpus` per tenant and index (per field, how many documents hold it and how
many terms they hold) and a `Term` per word (per field, how many documents hold it). Every write that changes a
note's or a page's text moves them in its own transaction, under the tenant's lock: the transaction gathers what
its writes changed and counts it in one statement, at its end or before a search in it reads the statistics.
A search asks Lucene for the tenant's candidates (the first `RESCORED` by Lucene's own scores), then scores them
again with the tenant's statistics: the scores are exact; which candidates Lucene hands over, when more of the
tenant's notes match than that, is the approximate part."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from neo4j import Record

from .bm25 import Document, Statistics, boosts_of, clauses, counts_of, query_terms, score
from .lucene import PAGE_FIELDS, TEXT_FIELDS

# Candidates Lucene hands over per search, at least: a tenant whose notes matching a query are no more than this
# gets exactly the ranking the embedded store gives, whatever its neighbours write. Past it, Lucene's database-wide
# scores choose which of them are rescored. Reading more costs each search that matches many notes
# (BENCHMARKS.md, "Neo4j keyword candidates").
RESCORED = 500
INDEXES = {"note_text": TEXT_FIELDS, "page_text": PAGE_FIELDS}
_COUNT_BATCH = 5_000  # Term rows per statement when a tenant is counted whole


def documents(index: str, texts: Mapping[str, Sequence[Any]]) -> dict[str, Document]:
    """Each id's document from its texts, in the order of the index's fields."""
    return {i: Document.of(INDEXES[index], values) for i, values in texts.items()}


def _documents(index: str, rows: Sequence[Record]) -> dict[str, Document]:
    return documents(index, {r["id"]: r["texts"] for r in rows})


def rescored(
    rows: Sequence[Record], words: Sequence[str], fields: Mapping[str, float] | None, index: str, k: int,
    id_of: Callable[[Record], str],
) -> list[tuple[Record, float]]:
    """The best k of Lucene's candidate `rows` (each with its `texts` in the searched fields, and the tenant's
    statistics: `docs`, `tokens`, `df`) by BM25 with those statistics; ties by id, as on the embedded store.
    Rows of a tenant never counted (a database the upgrade has not reached) keep Lucene's scores."""
    if not rows:
        return []
    indexed = INDEXES[index]
    boosts = boosts_of(fields, indexed)
    first = rows[0]
    if first["docs"] is None:
        return [(r, float(r["score"])) for r in rows[:k]]
    df = {}
    for term, held in first["df"]:
        for name, count in zip(indexed, held or (), strict=False):
            if count:
                df[(name, term)] = count
    stats = Statistics(dict(zip(indexed, first["docs"], strict=True)), dict(zip(indexed, first["tokens"], strict=True)), df)
    query = clauses(query_terms(words), boosts, stats)
    scored = [(r, score(Document.of(tuple(boosts), r["texts"]), query)) for r in rows]
    ranked = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: (-pair[1], id_of(pair[0])))
    return ranked[:k]


class Neo4jText:
    """The statistics' upkeep over `run` (a mixin of the store's transaction, `Neo4jTx`)."""

    run: Callable[..., list[Record]]
    tenant: str
    _pending: dict[str, tuple[Counter[str], Counter[str], Counter[tuple[str, str]]]]  # index → uncounted deltas

    def note_texts(self, ids: Sequence[str]) -> dict[str, Document]:
        """The documents of these notes as they are now (those that exist)."""
        return _documents("note_text", self.run("terms/note_texts", ids=list(ids), fields=list(TEXT_FIELDS))) if ids else {}

    def count_texts(self, index: str, before: Mapping[str, Document], after: Mapping[str, Document]) -> None:
        """Move the tenant's statistics from the `before` documents to the `after` ones (by id; a document
        missing on one side is new or gone), when the transaction counts (`flush_counts`)."""
        changed = {i for i in before.keys() | after.keys() if before.get(i) != after.get(i)}
        if not changed:
            return
        pending = self._pending.setdefault(index, (Counter(), Counter(), Counter()))
        for total, part in zip(pending, counts_of(after[i] for i in changed if i in after), strict=True):
            total.update(part)
        for total, part in zip(pending, counts_of((before[i] for i in changed if i in before), sign=-1), strict=True):
            total.update(part)

    def flush_counts(self) -> None:
        """Write the statistics' changes gathered so far: before the transaction commits, and before a search in
        it reads them."""
        for index in sorted(self._pending):
            self._count(index, *self._pending[index])
        self._pending.clear()

    def _count(self, index: str, docs: Counter[str], tokens: Counter[str], df: Counter[tuple[str, str]]) -> None:
        fields = INDEXES[index]
        per_term: dict[str, list[int]] = {}
        for (name, term), delta in df.items():
            if delta:
                per_term.setdefault(term, [0] * len(fields))[fields.index(name)] += delta
        terms = [{"term": t, "df": per_term[t]} for t in sorted(per_term)]  # one order: no two writers deadlock
        for start in range(0, max(len(terms), 1), _COUNT_BATCH):
            self.run("terms/count", index=index, fields=list(fields), terms=terms[start : start + _COUNT_BATCH],
                     docs=[docs[f] if start == 0 else 0 for f in fields],
                     tokens=[tokens[f] if start == 0 else 0 for f in fields])

    def count_tenant(self, page: int = 2_000) -> bool:
        """Count the tenant's statistics whole, once (the upgrade of a database written before them): False
        if they were counted already."""
        if self.run("terms/counted")[0]["counted"]:
            return False
        for index, name in (("note_text", "terms/tenant_notes"), ("page_text", "terms/tenant_pages")):
            after, totals = "", (Counter[str](), Counter[str](), Counter[tuple[str, str]]())
            while rows := self.run(name, after=after, limit=page, fields=list(INDEXES[index])):
                for total, part in zip(totals, counts_of(_documents(index, rows).values()), strict=True):
                    total.update(part)
                after = rows[-1]["id"]
            self._count(index, *totals)
        return True


__all__ = ["INDEXES", "RESCORED", "Neo4jText", "documents", "rescored"]
