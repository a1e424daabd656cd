"""One entity per thing per tenant: the key a mention resolves by. Case, curly quotes, possessives, leading
articles and titles, and plurals (of things) do not make another entity."""

from __future__ import annotations

import re
import unicodedata

_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "mx"})
_ARTICLES = frozenset({"the", "a", "an", "my", "your", "his", "her", "our", "their", "its", "this", "that", "these", "those"})
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
# A plural's last letters and what the singular ends with, tried in order.
_PLURALS = (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"), ("xes", "x"), ("zes", "z"))
_NOT_PLURAL = ("ss", "us", "is", "os")


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


def entity_key(name: str, *, kind: str = "thing", lemma: str | None = None) -> str:
    """The resolution key of a mention: lower case, NFKC, without a possessive, leading articles or titles;
    a thing's last word singular (its `lemma` when the extractor gave one). '' when nothing is left."""
    text = unicodedata.normalize("NFKC", name).replace("’", "'").lower()
    words = [w[:-2] if w.endswith("'s") else w.rstrip("'") for w in _WORD.findall(text)]
    while words and (words[0] in _ARTICLES or words[0] in _TITLES):
        words = words[1:]
    if not words:
        return ""
    if kind == "thing":
        words[-1] = lemma.lower() if lemma else singular(words[-1])
    return " ".join(words)


__all__ = ["entity_key", "singular"]
