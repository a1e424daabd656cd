"""The embedded store's fulltext indexes (`note_text`, `page_text`): postings per tenant, scored with that
tenant's own statistics (bm25.py), so both stores rank a tenant's notes and pages the same way, within ties, and
no tenant's writes move another's scores.

An index is derived state: the graph reports which nodes changed, and the index brings those up to date before
the next query."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..bm25 import Document, Statistics, boosts_of, clauses, query_terms


def best(scored: Iterable[tuple[int, float]], k: int, id_of: Callable[[int], str]) -> list[tuple[int, float]]:
    """The k best (key, score) pairs, ties by id (as on the Neo4j store): only the pairs that reach the k-th best
    score are sorted, not every match."""
    found = list(scored)
    if len(found) > k:
        cut = heapq.nlargest(k, (score for _, score in found))[-1]
        found = [pair for pair in found if pair[1] >= cut]
    found.sort(key=lambda pair: (-pair[1], id_of(pair[0])))
    return found[:k]


class TenantText:
    """One tenant's postings and statistics in one index."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.postings: dict[str, dict[str, dict[int, int]]] = {f: {} for f in fields}  # field → term → key → tf
        self.norms: dict[str, dict[int, int]] = {f: {} for f in fields}  # field → key → its length as the norm keeps it
        self.documents: dict[int, Document] = {}
        self.docs: Counter[str] = Counter()  # field → documents holding it
        self.tokens: Counter[str] = Counter()  # field → terms in it, all documents

    def add(self, key: int, document: Document) -> None:
        self.documents[key] = document
        for name, tf in document.tf.items():
            self.docs[name] += 1
            self.tokens[name] += document.lengths[name]
            self.norms[name][key] = document.norms[name]
            postings = self.postings[name]
            for term, count in tf.items():
                postings.setdefault(term, {})[key] = count

    def remove(self, key: int) -> None:
        document = self.documents.pop(key, None)
        if document is None:
            return
        for name, tf in document.tf.items():
            self.docs[name] -= 1
            self.tokens[name] -= document.lengths[name]
            del self.norms[name][key]
            postings = self.postings[name]
            for term in tf:
                held = postings[term]
                held.pop(key, None)
                if not held:
                    del postings[term]

    def statistics(self, terms: Sequence[str], boosts: Mapping[str, float]) -> Statistics:
        df = {(f, t): len(held) for f in boosts for t in terms if (held := self.postings[f].get(t))}
        return Statistics(dict(self.docs), dict(self.tokens), df)

    def scores(self, terms: Sequence[str], boosts: Mapping[str, float]) -> dict[int, float]:
        """Node key → BM25 of every document holding a query term: clause by clause, as bm25.score sums."""
        scores: dict[int, float] = {}
        for name, term, weight, fixed, per_length in clauses(terms, boosts, self.statistics(terms, boosts)):
            norms = self.norms[name]
            for key, tf in self.postings[name][term].items():
                scores[key] = scores.get(key, 0.0) + weight * tf / (tf + fixed + per_length * norms[key])
        return scores


class FulltextIndex:
    """One fulltext index: `note_text` (TEXT_FIELDS of notes) or `page_text` (PAGE_FIELDS of pages), a
    TenantText per tenant."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.tenants: dict[str, TenantText] = {}
        self._held: dict[int, tuple[str, tuple[Any, ...]]] = {}  # key → (tenant, the field values it was indexed from)

    def update(self, key: int, props: Mapping[str, Any] | None) -> None:
        """(Re)index one node: its `props`, or None when it is gone or not of the index's label. A node whose
        text fields did not change (an access count, a new version number) is left as it is."""
        texts = None if props is None else tuple(
            tuple(v) if isinstance(v := props.get(f), list) else v for f in self.fields
        )
        held = self._held.get(key)
        if held is not None and props is not None and held == (props.get("tenant"), texts):
            return
        if held is not None:
            self.tenants[held[0]].remove(key)
            del self._held[key]
        if props is None or texts is None:
            return
        tenant = props.get("tenant")
        self._held[key] = (tenant, texts)
        self.tenants.setdefault(tenant, TenantText(self.fields)).add(key, Document.of(self.fields, texts))

    def scores(self, tenant: str, words: Sequence[str], fields: Mapping[str, float] | None) -> dict[int, float]:
        """Node key → score of the tenant's documents for a query of `words` over `fields` with their boosts
        (every field, boost 1, when None), with the tenant's own statistics."""
        text = self.tenants.get(tenant)
        return text.scores(query_terms(words), boosts_of(fields, self.fields)) if text else {}
