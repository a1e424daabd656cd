"""Lucene queries from user text: the one place the fulltext indexes' query syntax is written."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import InvalidInput

MAX_QUERY_TERMS = 200  # Lucene refuses queries of over 1024 clauses; each term is one per field (5)
TEXT_FIELDS = ("content", "context", "keywords", "tags", "neighbourhood")  # the note_text index's fields
PAGE_FIELDS = ("user_text", "assistant_text", "neighbourhood")  # the page_text index's fields
# Lucene's StandardTokenizer makes each Han ideograph and each Hiragana character a token of its own (UAX #29),
# so a run of them is as many terms as it has characters; Katakana and Hangul runs stay words.
IDEOGRAPHS = "\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_WORD = re.compile(rf"[{IDEOGRAPHS}]|[^\W{IDEOGRAPHS}]+")


def query_words(text: str) -> list[str]:
    """The terms of user text a query searches for, as Lucene splits them: lower case, at most
    MAX_QUERY_TERMS."""
    return _WORD.findall(text.lower())[:MAX_QUERY_TERMS]


def check_fields(fields: Mapping[str, float] | None, indexed: tuple[str, ...]) -> None:
    """Field names must be among an index's fields."""
    if fields is not None and (unknown := set(fields) - set(indexed)):
        raise InvalidInput(f"unknown text fields {sorted(unknown)}: the index has {', '.join(indexed)}")


def lucene_query(
    text: str, fields: Mapping[str, float] | None = None, indexed: tuple[str, ...] = TEXT_FIELDS
) -> str:
    """User text as a plain Lucene query: its words only (no operators, wildcards or user fields), at
    most MAX_QUERY_TERMS of them; '' when it has no word at all. With `fields`, only those fields of the
    index are searched, each with its boost (field names must be among the index's `indexed` fields)."""
    check_fields(fields, indexed)
    words = " ".join(query_words(text))
    if not words or fields is None:
        return words
    return " ".join(f"{field}:({words})^{weight:g}" for field, weight in fields.items() if weight > 0)
