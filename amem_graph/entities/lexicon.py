"""What the extractors know of English words: which parts of speech a word can be (core/words.py), chat words no
dictionary holds, and the names whose kind is known (data/names.txt, data/given_names.txt)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..core.text import STOP_WORDS
from ..core.words import readings as _readings
from ..models import EntityKind

# Words that open or fill a chat message and are never a name, whatever their capitals.
INTERJECTIONS = frozenset(
    "hey hi hiya hello heya yo bye thanks thank thx ty congrats congratulations wow woah whoa oh ah aww awww ooh "
    "omg lol lmao haha hahaha hehe yay woohoo yikes ugh hmm gosh geez dang ok okay yes yeah yep yup nope no sure "
    "please sorry cheers dear btw tbh imo fyi ps xoxo xo np idk rn ikr smh anyways aw bummer oops whew phew meh "
    "welp".split()
)
MONTHS_AND_DAYS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr jun "
    "jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu "
    "thur thurs fri sat sun".split()
)
KINSHIP = frozenset(
    "mom mum mommy mama momma dad daddy papa pa ma grandma grandpa granny gran nana grandmother grandfather "
    "auntie aunt uncle sis bro babe baby honey sweetie buddy dude man guys girl sir madam ma'am god lord".split()
)
# Nationalities, languages and religions: adjectives or groups, not named things (Italian food, learning Spanish).
DEMONYMS = frozenset(
    "american canadian mexican brazilian argentinian chilean peruvian colombian cuban british english scottish "
    "irish welsh french german dutch belgian swiss austrian italian spanish portuguese greek turkish russian "
    "ukrainian polish czech swedish norwegian danish finnish icelandic hungarian romanian bulgarian serbian "
    "croatian chinese japanese korean vietnamese thai filipino indonesian malaysian indian pakistani bangladeshi "
    "nepali persian iranian iraqi arab arabic israeli egyptian moroccan nigerian kenyan ethiopian ghanaian "
    "african asian european australian hawaiian caribbean jamaican latino latina latinx hispanic mediterranean "
    "nordic scandinavian celtic christian catholic protestant jewish muslim islamic hindu buddhist sikh mormon "
    "lgbt lgbtq lgbtqia lgbtq+ queer trans transgender black white native indigenous hebrew latin mandarin "
    "cantonese hindi urdu swahili".split()
)
TITLES = frozenset("dr dr. mr mr. mrs mrs. ms ms. mx prof prof. st st. sir dame".split())
# Chat spellings and abbreviations a dictionary does not hold; never a topic.
SLANG = frozenset(
    "gonna wanna gotta kinda sorta lemme dunno ya yall y'all u ur r thx pls plz cuz coz tho thru nah yea yeah "
    "yep lol haha hahaha hehe omg tbh idk btw imo lmao rn ok okay pic pics selfie vibe vibes".split()
)


def readings(word: str) -> dict[str, tuple[str, ...]]:
    """The parts of speech a lower-case word can be, each with its lemmas ({} for a word the dictionary does not
    hold: a name, a brand, slang or a typo)."""
    return _readings(word) if word.isalpha() else {}


def known(word: str) -> bool:
    """Whether a word is ordinary English: a dictionary word, a function word, a chat interjection, a contraction
    of one ("it'll") or a hyphenated run of them ("step-by-step")."""
    low = word.lower().replace("’", "'").rstrip(".")
    if "-" in low:
        return all(known(part) for part in low.split("-") if part)
    if "'" in low:
        low = low.split("'")[0]
    return bool(readings(low)) or low in STOP_WORDS or low in INTERJECTIONS or low in SLANG


def noun_lemma(word: str) -> str:
    """The word's singular as a noun where it has one ("studios" → "studio"), else the word."""
    low = word.lower()
    lemmas = readings(low).get("NOUN")
    return lemmas[0] if lemmas else low


@dataclass(frozen=True)
class Gazetteer:
    """Known names: each as a tuple of words, with its kind; `folded` holds those matched in any case (their words
    are no dictionary words, so "miami" is Miami)."""

    exact: dict[tuple[str, ...], EntityKind]
    folded: dict[tuple[str, ...], EntityKind]
    longest: int

    def find(self, words: list[str], start: int) -> tuple[int, EntityKind] | None:
        """The longest known name at `start` (its length in words and its kind), or None."""
        for size in range(min(self.longest, len(words) - start), 0, -1):
            run = tuple(words[start : start + size])
            kind = self.exact.get(run) or self.folded.get(tuple(w.lower() for w in run))
            if kind:
                return size, kind
        return None


_SPLIT = re.compile(r"[^\s]+")


@cache
def gazetteer() -> Gazetteer:
    text = resources.files(__package__).joinpath("data/names.txt").read_text(encoding="utf-8")
    exact: dict[tuple[str, ...], EntityKind] = {}
    folded: dict[tuple[str, ...], EntityKind] = {}
    kind: EntityKind | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            kind = line.strip("[]")  # type: ignore[assignment]
            continue
        assert kind is not None
        words = tuple(_SPLIT.findall(line))
        exact.setdefault(words, kind)
        if not any(known(w) for w in words):
            folded.setdefault(tuple(w.lower() for w in words), kind)
    return Gazetteer(exact, folded, max(len(w) for w in exact))




@cache
def given_names() -> frozenset[str]:
    """Given names (data/given_names.txt), lower case."""
    text = resources.files(__package__).joinpath("data/given_names.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
