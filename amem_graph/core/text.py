"""Reading the shape of a note's text: a leading time stamp, a speaker, word stems."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import Stemmer

from .words import readings

# Function words and chat filler: RAKE's phrase boundaries, and words a search query is better without.
STOP_WORDS = frozenset(
    """a about above after again against all almost also am an and any anyone anything are aren't around as at
    away back be because been before being below between both but by can can't cannot could couldn't did didn't
    do does doesn't doing don't done down during each else even ever every few for from further get gets getting
    go goes going gonna got great had hadn't has hasn't have haven't having he he'd he'll he's her here here's
    hers herself hey hi him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just know let let's like lot lots made make makes many may me might more most much must mustn't my myself
    need new nice no nor not now of off oh ok okay on once one only or other ought our ours ourselves out over
    own pretty quite really right said same say says see shan't she she'd she'll she's should shouldn't since so
    some something still such sure than thank thanks that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've thing things think this those though through to too
    totally under until up us very want was wasn't way we we'd we'll we're we've well were weren't what what's
    when when's where where's which while who who's whom why why's will with won't would wouldn't wow yeah yes
    yet you you'd you'll you're you've your yours yourself yourselves amazing awesome cool glad good great
    definitely especially actually went came come took take told tell feel felt feeling lately recently
    yesterday today tonight tomorrow ago last next time times day days week weeks month months year years
    found find finding tried try trying keep kept start started put gave give getting""".split()
)

_PREFIX = re.compile(r"^\s*\[[^\]]{0,80}\]\s*")  # "[1:56 pm on 8 May, 2023] " and similar stamps
# A name of at most three words of 60 characters: within the speaker's limit (MAX_LABEL_CHARS); a longer run
# before a colon is text, not a name.
_SPEAKER = re.compile(r"^\s*([A-Z][\w.'-]{0,59}(?: [A-Z][\w.'-]{0,59}){0,2}):\s+")


def split_speaker(content: str) -> tuple[str | None, str]:
    """("Caroline", "I went ...") from "[date] Caroline: I went ..."; (None, text) without a speaker."""
    body = _PREFIX.sub("", content, count=1)
    if match := _SPEAKER.match(body):
        return match.group(1), body[match.end() :]
    return None, body


def without_stamp(content: str) -> str:
    """The content without a leading "[...]" time stamp (the speaker stays)."""
    return _PREFIX.sub("", content, count=1)


_PORTER = Stemmer.Stemmer("porter")


@lru_cache(maxsize=1 << 16)
def word_key(word: str) -> str:
    """What two forms of one word share (Porter's stem of the lower-case word without a possessive): "look",
    "looks" and "looking", "alice's" and "alice" are one word."""
    word = word.lower().replace("’", "'").removesuffix("'s").strip("'")
    return " ".join(_PORTER.stemWords(word.split()))


@lru_cache(maxsize=1 << 16)
def word_form(word: str) -> str:
    """One form per word, for tags and keywords: lower case, without a possessive, each word as its dictionary
    form, a noun's before a verb's ("looks", "looking" → "look"; "paintings" → "painting"; "alice's" → "alice")."""
    words = word.lower().replace("’", "'").split()
    out = []
    for w in words:
        w = w.removesuffix("'s").strip("'")
        lemmas = readings(w) if w.isalpha() else {}
        for part in ("NOUN", "VERB", "ADJ"):
            if lemmas.get(part):
                w = lemmas[part][0]
                break
        out.append(w)
    return " ".join(out)


def distinct_forms(values: Iterable[str]) -> tuple[str, ...]:
    """Tags or keywords in one form each (`word_form`), without two forms of one word (`word_key`), in order."""
    out: dict[str, str] = {}
    for value in values:
        form = word_form(value)
        if form:
            out.setdefault(word_key(form), form)
    return tuple(out.values())


EXCERPT_WORDS = 8


def excerpt(content: str, words: int = EXCERPT_WORDS) -> str:
    """A note named by its words, in quotes: the first `words` of what it says, without its stamp or speaker."""
    said = (split_speaker(content)[1] or content).split()
    return "“" + " ".join(said[:words]) + ("..." if len(said) > words else "") + "”"


def stem(word: str) -> str:
    """A light English stemmer, enough to match plurals and tenses of shared terms."""
    word = word.lower().replace("’", "'").removesuffix("'s")
    for suffix, keep, replacement in (("ies", 4, "y"), ("ing", 5, ""), ("ed", 4, ""), ("es", 4, ""), ("s", 3, "")):
        if word.endswith(suffix) and len(word) > keep and not word.endswith("ss"):
            return word[: -len(suffix)] + replacement
    return word


# Words that open a chat message addressed to someone ("Hey Kate!", "Thanks, Kate"), and words that look like
# a name after a comma but are not one ("..., absolutely!").
_GREETINGS = (r"(?:hey|hi|hiya|hello|heya|yo|thanks|thank you|thx|morning|good morning|good night|goodnight|night|"
              r"bye|congrats|congratulations|sorry|welcome|love you|miss you|dear)")
_VOCATIVES = (
    re.compile(rf"(?:^|[.!?]\s+){_GREETINGS}[\s,!]+([A-Z][a-z]{{1,14}})\b(?!['’]s)", re.IGNORECASE),
    re.compile(r",\s*([A-Z][a-z]{1,14})\s*(?:[.!?]|$)"),
    re.compile(r"^([A-Z][a-z]{1,14}),\s"),
)
_INTERJECTIONS = frozenset(
    "yes yeah yep yup no nope wow woah oh ah aww absolutely indeed haha lol okay ok sure omg well hmm right agreed "
    "exactly totally alright woohoo oof ouch please true".split()
)


def vocatives(text: str, speaker: str | None = None) -> list[str]:
    """The names a chat message calls the one it speaks to ("Hey Kate!", "Sounds great, Kate."), capitalised as
    names are; the speaker's own name before a colon (`speaker`, in any case, or a capitalised one) is not one."""
    body = without_stamp(text)
    if speaker and body[: len(speaker) + 1].casefold() == f"{speaker}:".casefold():
        body = body[len(speaker) + 1 :].lstrip()
    else:
        body = split_speaker(text)[1]
    found = dict.fromkeys(m.group(1) for pattern in _VOCATIVES for m in pattern.finditer(body))
    return [name for name in found if name[0].isupper() and name.lower() not in STOP_WORDS | _INTERJECTIONS]
