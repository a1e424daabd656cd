"""Why a search hit was found, told to a person: which of the query's words it holds and where, whether they are in
the turns around it rather than in the note itself, the part of a long note to show, and a short label for it.
What the CLI's "found" column and the viewer's hits show."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.text import stem
from ..models import SearchHit
from .retrieval import without_stop_words

EXCERPT_CHARS = 240  # what a hit shows of a long note: the part around its first matched word (or its passage)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’]*")


@dataclass(frozen=True)
class Match:
    """The query's words a hit holds (as written in the note), where they are in its content, the words found only
    in the turns around it (its neighbourhood), and the span of the content worth showing."""

    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    around: tuple[str, ...]
    around_spans: tuple[tuple[int, int], ...]  # where `around`'s words are in the neighbourhood
    excerpt: tuple[int, int]

    def to_dict(self) -> dict[str, object]:
        return {"words": list(self.words), "spans": [list(s) for s in self.spans], "around": list(self.around),
                "around_spans": [list(s) for s in self.around_spans], "excerpt": list(self.excerpt)}


def query_stems(query: str) -> frozenset[str]:
    """The stems of the query's words that a keyword search weighs (no stop words, none shorter than 3)."""
    return frozenset(stem(w) for w in _WORD.findall(without_stop_words(query)) if len(w) > 2)


def match(query: str, hit: SearchHit, limit: int = EXCERPT_CHARS) -> Match:
    """Where the query's words are in the hit's content and, for those it lacks, in the turns around it."""
    wanted = query_stems(query)
    content = hit.note.content
    spans, words = [], {}
    for found in _WORD.finditer(content):
        key = stem(found.group())
        if key in wanted:
            spans.append(found.span())
            words.setdefault(key, found.group())
    around, around_spans = {}, []
    for found in _WORD.finditer(hit.note.neighbourhood or ""):
        key = stem(found.group())
        if key in wanted and key not in words:
            around.setdefault(key, found.group())
            around_spans.append(found.span())
    return Match(tuple(words.values()), tuple(spans), tuple(around.values()), tuple(around_spans),
                 _excerpt(content, spans, hit, limit))


def _excerpt(content: str, spans: list[tuple[int, int]], hit: SearchHit, limit: int) -> tuple[int, int]:
    """The whole of a short note; of a long one, `limit` characters around its first matched word, else around
    the passage whose vector matched, else its start."""
    if len(content) <= limit:
        return (0, len(content))
    centre = spans[0][0] if spans else (hit.passage[0] if hit.passage else 0)
    start = max(0, min(centre - limit // 3, len(content) - limit))
    return (start, start + limit)


def label(hit: SearchHit, found: Match) -> str:
    """How a hit was found, in a few words: the path from a seed; else the query's words it holds, or those in the
    turns around it, or its meaning alone."""
    if hit.path:
        return " → ".join(f"{step.type} from {step.from_id[:8]}" for step in hit.path)
    if found.words:
        return "words: " + ", ".join(found.words)
    if found.around:
        return "turns around: " + ", ".join(found.around)
    return "meaning"
