"""One entity per thing per tenant: the key a mention resolves by. Case, curly quotes, possessives, leading
articles and titles, and plurals (of things) do not make another entity."""

from __future__ import annotations

import re
import unicodedata

from .text import STOP_WORDS

_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "mx"})
_ARTICLES = frozenset({"the", "a", "an", "my", "your", "his", "her", "our", "their", "its", "this", "that", "these", "those"})
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
# A plural's last letters and what the singular ends with, tried in order.
_PLURALS = (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"), ("xes", "x"), ("zes", "z"))
_NOT_PLURAL = ("ss", "us", "is", "os")
MAX_KEY_CHARS = 100  # a longer "name" is not a name (and Neo4j's index has a size limit)


def singular(word: str) -> str:
    """A plural noun's singular by the regular English rules (the lemmatizer, when there is one, knows better)."""
    if len(word) <= 3:
        return word
    for plural, single in _PLURALS:
        if word.endswith(plural) and len(word) > len(plural) + 1:
            return word[: -len(plural)] + single
    if word.endswith("s") and not word.endswith(_NOT_PLURAL):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    """Lower-case words (NFKC, curly apostrophes straightened) without a possessive."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'").lower()
    return [w[:-2] if w.endswith("'s") else w.rstrip("'") for w in _WORD.findall(text)]


def entity_key(name: str, *, kind: str = "thing", lemma: str | None = None) -> str:
    """The resolution key of a mention: lower case, NFKC, without a possessive, leading articles or titles;
    a thing's last word singular (its `lemma` when the extractor gave one). '' when nothing is left, or when it
    is longer than MAX_KEY_CHARS."""
    words = _words(name)
    while words and (words[0] in _ARTICLES or words[0] in _TITLES):
        words = words[1:]
    if not words:
        return ""
    if kind in ("thing", "topic"):
        words[-1] = lemma.lower() if lemma else singular(words[-1])
    key = " ".join(words)
    return key if len(key) <= MAX_KEY_CHARS else ""


def query_keys(query: str, *, max_words: int = 3, skip: frozenset[str] = frozenset()) -> list[str]:
    """The keys an entity a question names could have: each run of up to `max_words` words, as a person's
    name and as a thing's, without runs that start or end with a stop word. The store says which exist, so
    no extractor runs on the search path."""
    words = _words(query)
    keys: dict[str, None] = {}
    for size in range(1, max_words + 1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if run[0] in STOP_WORDS or run[-1] in STOP_WORDS or len(run[-1]) < 3:
                continue
            for kind in ("person", "thing"):
                if (key := entity_key(" ".join(run), kind=kind)) and key not in skip:
                    keys[key] = None
    return list(keys)


__all__ = ["entity_key", "query_keys", "singular"]
