"""BM25 over text fields, scored as the Neo4j store's Lucene indexes score (`note_text`, `page_text`: English
analyzer; BM25 with k1 1.2, b 0.75; field lengths kept in Lucene's one-byte norm), so that both stores
rank the same notes and pages the same way, within ties.

An index covers every node of its label in the graph (as Lucene's covers every tenant: document frequencies are
database-wide) and is derived state: the graph reports which nodes changed, and the index brings those
up to date before the next query."""

from __future__ import annotations

import math
import re
from collections.abc import Container, Iterable, Mapping
from typing import Any

import Stemmer

from ..lucene import IDEOGRAPHS, TEXT_FIELDS

K1, B = 1.2, 0.75
# Lucene's EnglishAnalyzer stop set.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)
_LETTERS = rf"[^\W{IDEOGRAPHS}]+"
# StandardTokenizer keeps "o'neil", "u.s", "3.5" together, and splits ideographs one by one.
_TOKEN = re.compile(rf"[{IDEOGRAPHS}]|{_LETTERS}(?:['’.]{_LETTERS})*")
_STEMMER = Stemmer.Stemmer("porter")


def analyse(text: str) -> list[str]:
    """Lucene's English analyzer, closely: tokens, possessive 's dropped, lower case, stop words, Porter."""
    words = []
    for token in _TOKEN.findall(text):
        token = token.lower()
        if token.endswith(("'s", "’s")):
            token = token[:-2]
        if token and token not in STOP_WORDS:
            words.append(token)
    return _STEMMER.stemWords(words)


def _int4(value: int) -> int:
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _from_int4(code: int) -> int:
    shift = (code >> 3) - 1
    return code & 0x07 if shift == -1 else ((code & 0x07) | 0x08) << shift


_FREE = 255 - _int4(2**31 - 1)  # lengths below this are kept exactly in the one-byte norm


def norm_length(length: int) -> int:
    """A field length as Lucene's BM25 reads it back from the norm byte (exact up to 23, then coarser)."""
    code = length if length < _FREE else _FREE + _int4(length - _FREE)
    return code if code < _FREE else _FREE + _from_int4(code - _FREE)


class FulltextIndex:
    """One fulltext index: `note_text` (TEXT_FIELDS of notes) or `page_text` (PAGE_FIELDS of pages)."""

    def __init__(self, fields: tuple[str, ...] = TEXT_FIELDS) -> None:
        self.fields = fields
        self.postings: dict[str, dict[str, dict[int, int]]] = {f: {} for f in fields}  # field → term → key → tf
        self.lengths: dict[str, dict[int, int]] = {f: {} for f in fields}  # field → key → token count
        self.norms: dict[str, dict[int, int]] = {f: {} for f in fields}  # field → key → the length as the norm keeps it
        self.totals: dict[str, int] = {f: 0 for f in fields}
        self._indexed: dict[int, dict[str, list[str]]] = {}  # key → field → its terms (to remove them exactly)
        self._texts: dict[int, tuple[Any, ...]] = {}  # key → the field values it was indexed from

    def update(self, key: int, props: Mapping[str, Any] | None) -> None:
        """(Re)index one node: its `props`, or None when it is gone or not of the index's label. A node whose
        text fields did not change (an access count, a new version number) is left as it is."""
        texts = None if props is None else tuple(
            tuple(v) if isinstance(v := props.get(f), list) else v for f in self.fields
        )
        if texts is not None and self._texts.get(key) == texts:
            return
        self._remove(key)
        self._texts.pop(key, None)
        if props is None or texts is None:
            return
        self._texts[key] = texts
        fields = {}
        for field in self.fields:
            value = props.get(field)
            values = value if isinstance(value, list | tuple) else [value] if value else []
            terms = [t for v in values if isinstance(v, str) for t in analyse(v)]
            if not terms:
                continue
            fields[field] = terms
            self.lengths[field][key] = len(terms)
            self.norms[field][key] = norm_length(len(terms))
            self.totals[field] += len(terms)
            postings = self.postings[field]
            for term in terms:
                docs = postings.setdefault(term, {})
                docs[key] = docs.get(key, 0) + 1
        self._indexed[key] = fields

    def _remove(self, key: int) -> None:
        for field, terms in self._indexed.pop(key, {}).items():
            self.totals[field] -= self.lengths[field].pop(key)
            self.norms[field].pop(key, None)
            postings = self.postings[field]
            for term in set(terms):
                docs = postings[term]
                docs.pop(key, None)
                if not docs:
                    del postings[term]

    def scores(
        self, words: Iterable[str], fields: Mapping[str, float] | None, only: Container[int] | None = None
    ) -> dict[int, float]:
        """Node key → score of a query of `words` (each a clause, repeats counted, as the query parser
        does) over `fields` with their boosts (every field, boost 1, when None); with `only`, of those nodes
        alone (the statistics stay the whole index's, as Lucene's)."""
        boosts = {f: 1.0 for f in self.fields} if fields is None else {f: float(w) for f, w in fields.items() if w > 0}
        terms = analyse(" ".join(words))
        scores: dict[int, float] = {}
        for field, boost in boosts.items():
            docs_in_field = len(self.lengths[field])
            if not docs_in_field:
                continue
            average = self.totals[field] / docs_in_field
            fixed, per_length = K1 * (1 - B), K1 * B / average
            norms = self.norms[field]
            for term in terms:
                docs = self.postings[field].get(term)
                if not docs:
                    continue
                weight = boost * math.log(1 + (docs_in_field - len(docs) + 0.5) / (len(docs) + 0.5))
                for key, tf in docs.items():
                    if only is not None and key not in only:
                        continue
                    scores[key] = scores.get(key, 0.0) + weight * tf / (tf + fixed + per_length * norms[key])
        return scores
