"""How common a word is in English: the background the package ships (english_terms.tsv.gz, how often each term
occurs in English text), which smooths each tenant's BM25 statistics and tells a common word from a name or a
topic distinctive to one memory."""

from __future__ import annotations

import gzip
from functools import cache
from importlib import resources

from .text import word_key

COMMON_RANK = 3_000  # a common word: among the English terms used most (about the vocabulary of everyday talk)


@cache
def english() -> dict[str, float]:
    """Term (a Porter stem, as Lucene's English analyzer makes it) → its share of the tokens of English text."""
    with resources.files(__package__).joinpath("english_terms.tsv.gz").open("rb") as raw:
        lines = gzip.decompress(raw.read()).decode("utf-8").splitlines()
    return {term: float(share) for term, share in (line.split("\t") for line in lines if not line.startswith("#"))}


@cache
def _ranks() -> dict[str, int]:
    shares = english()
    return {term: rank for rank, term in enumerate(sorted(shares, key=lambda t: (-shares[t], t)))}


def rank(word: str) -> int | None:
    """The word's place among English terms by use (0 the most used); None if English text barely uses it."""
    return _ranks().get(word_key(word))


def common_word(name: str) -> bool:
    """Whether a name is one common English word written in lower case ("photo", "support"): what a network should
    not show as a thing it is about (a name such as "Gina", or "Python", is not one)."""
    words = name.split()
    if len(words) != 1 or not name.islower():
        return False
    found = rank(name)
    return found is not None and found < COMMON_RANK
