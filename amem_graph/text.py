"""Reading the shape of a note's text: a leading time stamp, a speaker, word stems."""

from __future__ import annotations

import re

_PREFIX = re.compile(r"^\s*\[[^\]]{0,80}\]\s*")  # "[1:56 pm on 8 May, 2023] " and similar stamps
_SPEAKER = re.compile(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}):\s+")


def split_speaker(content: str) -> tuple[str | None, str]:
    """("Caroline", "I went ...") from "[date] Caroline: I went ..."; (None, text) without a speaker."""
    body = _PREFIX.sub("", content, count=1)
    if match := _SPEAKER.match(body):
        return match.group(1), body[match.end() :]
    return None, body


def without_stamp(content: str) -> str:
    """The content without a leading "[...]" time stamp (the speaker stays)."""
    return _PREFIX.sub("", content, count=1)


def stem(word: str) -> str:
    """A light English stemmer, enough to match plurals and tenses of shared terms."""
    word = word.lower().replace("’", "'").removesuffix("'s")
    for suffix, keep, replacement in (("ies", 4, "y"), ("ing", 5, ""), ("ed", 4, ""), ("es", 4, ""), ("s", 3, "")):
        if word.endswith(suffix) and len(word) > keep and not word.endswith("ss"):
            return word[: -len(suffix)] + replacement
    return word
