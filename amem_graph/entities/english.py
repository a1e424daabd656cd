"""How common a word is in English, from the background the package ships for BM25 (store/english_terms.tsv.gz):
what tells a common word from a name or a topic distinctive to one memory."""

from __future__ import annotations

from functools import cache

from ..core.text import word_key
from ..store.bm25 import english

COMMON_RANK = 3_000  # a common word: among the English terms used most (about the vocabulary of everyday talk)


@cache
def _ranks() -> dict[str, int]:
    shares = english()
    return {term: rank for rank, term in enumerate(sorted(shares, key=lambda t: (-shares[t], t)))}


def rank(word: str) -> int | None:
    """The word's place among English terms by use (0 the most used); None if English text barely uses it."""
    return _ranks().get(word_key(word))


def common_word(name: str) -> bool:
    """Whether an entity's name is one common English word written in lower case ("photo", "support"): what a
    network should not show as a thing it is about (a name such as "Gina", or "Python", is not one)."""
    words = name.split()
    if len(words) != 1 or not name.islower():
        return False
    found = rank(name)
    return found is not None and found < COMMON_RANK
