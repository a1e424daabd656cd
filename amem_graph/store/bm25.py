"""BM25 with one tenant's statistics, one rule for both stores.

Text is analysed as Lucene's English analyzer does (the Neo4j store's `note_text` and `page_text` indexes), and
scored with BM25 (k1 1.2, b 0.75, field lengths as Lucene's one-byte norm keeps them) over the statistics of the
tenant's own notes or pages: how many hold each field, how many words each field holds in all, and in how many a
word occurs. Another tenant's writes never move a tenant's scores. The embedded store keeps the statistics in
memory with its postings; the Neo4j store keeps them in the graph (`Term` and `Corpus` nodes, text_stats.py) and
rescores the tenant's candidates that Lucene hands over."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import Stemmer

from ..core.english import english
from .lucene import IDEOGRAPHS

K1, B = 1.2, 0.75
# A tenant's statistics are smoothed with this many documents of English (core/english_terms.tsv.gz: how often each
# term occurs in English text), so that a tenant of a few notes still knows which words are common. Fixed, and
# the same for every tenant: nothing of another tenant's enters a tenant's scores.
BACKGROUND_DOCS = 30.0
# Lucene's EnglishAnalyzer stop set.
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)
_LETTERS = rf"[^\W{IDEOGRAPHS}]+"
# StandardTokenizer keeps "o'neil", "u.s", "3.5" together, and splits ideographs one by one.
_TOKEN = re.compile(rf"[{IDEOGRAPHS}]|{_LETTERS}(?:['’.]{_LETTERS})*")
_STEMMER = Stemmer.Stemmer("porter")
MAX_TOKEN = 255  # StandardTokenizer's longest token


def analyse(text: str) -> list[str]:
    """Lucene's English analyzer, closely: tokens, possessive 's dropped, lower case, stop words, Porter."""
    words = []
    for whole in _TOKEN.findall(text):
        for start in range(0, len(whole), MAX_TOKEN):  # StandardTokenizer cuts a longer token into pieces
            words += _filtered(whole[start : start + MAX_TOKEN])
    return _STEMMER.stemWords(words)


def _filtered(token: str) -> list[str]:
    """One token through the English analyzer's filters: possessive, lower case, stop words."""
    token = token.lower()
    if token.endswith(("'s", "’s")):
        token = token[:-2]
    return [token] if token and token not in STOP_WORDS else []


@lru_cache(maxsize=1 << 17)
def _analysed(text: str) -> tuple[str, ...]:
    # Search rescores the same notes' texts again and again; their analysis is kept, not redone.
    return tuple(analyse(text))


def field_terms(value: Any) -> list[str]:
    """The terms of one field's value: a string, or a list of strings indexed item by item (keywords, tags)."""
    values = value if isinstance(value, list | tuple) else [value] if value else []
    return [term for v in values if isinstance(v, str) for term in _analysed(v)]


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


@dataclass(frozen=True)
class Document:
    """One note's or page's analysed fields: term frequencies and norm lengths of the fields that hold a term."""

    tf: Mapping[str, Counter[str]]
    norms: Mapping[str, int]
    lengths: Mapping[str, int]

    @classmethod
    def of(cls, fields: Sequence[str], values: Sequence[Any]) -> Document:
        tf, norms, lengths = {}, {}, {}
        for name, value in zip(fields, values, strict=True):
            if counted := _counted(tuple(value) if isinstance(value, list) else value):
                tf[name], lengths[name] = counted
                norms[name] = norm_length(counted[1])
        return cls(tf, norms, lengths)


@lru_cache(maxsize=1 << 15)
def _counted(value: Any) -> tuple[Counter[str], int] | None:
    # Search rescores the same notes again and again: one field value's counts are made once, and shared by the
    # documents that hold that value (read, never changed).
    terms = field_terms(value)
    return (Counter(terms), len(terms)) if terms else None


@dataclass(frozen=True)
class Statistics:
    """A tenant's statistics of one index, as far as a query needs them: per field, how many documents hold it
    (`docs`) and how many terms they hold in all (`tokens`); per (field, term), how many documents hold the term."""

    docs: Mapping[str, int]
    tokens: Mapping[str, int]
    df: Mapping[tuple[str, str], int]


def background_df(term: str, length: float) -> float:
    """In how many of BACKGROUND_DOCS English documents of `length` terms `term` would occur."""
    share = english().get(term, 0.0) if BACKGROUND_DOCS else 0.0
    return BACKGROUND_DOCS * -math.expm1(-length * share)


Clause = tuple[str, str, float, float, float]  # field, term, weight (boost × idf), k1 (1 - b), k1 b / average


def query_terms(words: Iterable[str]) -> list[str]:
    """The analysed terms of a query's words, repeats kept (each is a clause of its own, as Lucene parses it)."""
    return analyse(" ".join(words))


def clauses(terms: Sequence[str], boosts: Mapping[str, float], stats: Statistics) -> list[Clause]:
    """What each (field, term) of a query adds to a document that holds it, under `stats`; a term no document
    holds adds nothing. Fields first, then terms in query order: both stores sum a score in this order."""
    found = []
    for name, boost in boosts.items():
        docs = stats.docs.get(name, 0)
        if not docs:
            continue
        average = stats.tokens[name] / docs
        fixed, per_length = K1 * (1 - B), K1 * B / average
        for term in terms:
            if held := stats.df.get((name, term), 0):
                n, df = docs + BACKGROUND_DOCS, held + background_df(term, average)
                found.append((name, term, boost * math.log(1 + (n - df + 0.5) / (df + 0.5)), fixed, per_length))
    return found


def score(document: Document, query: Sequence[Clause]) -> float:
    """A document's BM25 under a query's clauses (0 when it holds none of the terms)."""
    total = 0.0
    for name, term, weight, fixed, per_length in query:
        tf = document.tf.get(name)
        if tf and (count := tf.get(term)):
            total += weight * count / (count + fixed + per_length * document.norms[name])
    return total


def boosts_of(fields: Mapping[str, float] | None, indexed: Sequence[str]) -> dict[str, float]:
    """Each searched field's boost: every field of the index, boost 1, when `fields` is None."""
    return {f: 1.0 for f in indexed} if fields is None else {f: float(w) for f, w in fields.items() if w > 0}


def counts_of(documents: Iterable[Document], sign: int = 1) -> tuple[Counter[str], Counter[str], Counter[tuple[str, str]]]:
    """What `documents` add to (or with `sign` -1, take from) a tenant's statistics: docs, tokens and df."""
    docs: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    df: Counter[tuple[str, str]] = Counter()
    for document in documents:
        for name, tf in document.tf.items():
            docs[name] += sign
            tokens[name] += sign * document.lengths[name]
            for term in tf:
                df[(name, term)] += sign
    return docs, tokens, df


__all__ = [
    "K1",
    "STOP_WORDS",
    "B",
    "Document",
    "Statistics",
    "analyse",
    "boosts_of",
    "clauses",
    "counts_of",
    "field_terms",
    "norm_length",
    "query_terms",
    "score",
]
