"""Topics: the noun phrases a memory keeps coming back to ("dance studio", "adoption agency", "kombucha").

A phrase is a candidate when it is a run of modifiers that ends in a noun, its head is no generic noun, and a
one-word phrase is no common English word (english.py); an extractor marks each word's part in its sentence
(`Role`), by spaCy's tags or by the dictionary and the words around it. A candidate becomes a topic of the
memory once MIN_TOPIC_NOTES notes mention it: until then readers do not show it (`shown`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum

from ..core.english import COMMON_RANK, rank
from ..core.entity_keys import entity_key
from ..models import Entity, Mention
from .lexicon import noun_lemma, readings

MIN_TOPIC_NOTES = 3  # a topic recurs: this many notes of the memory mention it
MAX_TOPIC_WORDS = 3
TOPIC_CONFIDENCE = 0.6
# Nouns every conversation has: as a phrase's head they name no subject of this memory ("good time", "big day").
GENERIC_NOUNS = frozenset(
    "time times thing things way ways lot lots day days week weeks year years month months today tonight yesterday "
    "tomorrow bit kind sort stuff idea ideas people person one ones something anything everything nothing morning "
    "evening night weekend moment moments while part place end fun hey thanks thank congrats congratulations wow "
    "yeah lol job work life love support help advice experience experiences journey photo photos picture pictures "
    "pic pics friend friends family kids kid guy guys everyone someone anyone question questions answer answers "
    "point example examples case cases step steps option options tip tips sense reason reasons chance goal goals "
    "plan plans problem problems issue issues thought thoughts feeling feelings mind heart world home way area "
    "number level type types side list start hour hours minute minutes second seconds feedback update updates "
    "version detail details info information process approach result results use need needs".split()
)


# Modifiers that say nothing of what a phrase is about ("following command", "additional considerations").
VAGUE_MODIFIERS = frozenset(
    "following additional necessary specific different actual sample example various several certain main basic "
    "simple common general overall whole entire final initial current previous similar particular potential possible "
    "proper relevant related important useful helpful key major minor real true full quick easy hard small big large "
    "huge little long short high low other same such own next last first second third new old best better worst "
    "good great nice perfect amazing awesome wonderful fantastic beautiful lovely fun happy sad positive negative "
    "people person step-by-step".split()
)


class Role(Enum):
    """A word's part in its sentence, as far as topics care."""

    NOUN = "noun"  # may head a phrase
    MODIFIER = "modifier"  # may stand before a noun in a phrase (an adjective, or a noun used as one)
    OTHER = "other"  # a verb, a function word, punctuation, a name: ends a phrase


def candidates(sentences: Iterable[Sequence[tuple[str, Role]]]) -> list[Mention]:
    """The topic candidates of a text's sentences of (word, role): each phrase once, its longest form."""
    found: dict[str, Mention] = {}
    for sentence in sentences:
        for phrase in _phrases(sentence):
            name = " ".join(phrase)
            key = _key(phrase)
            if key and key not in found and _distinctive(phrase):
                found[key] = Mention(key, name, "topic", TOPIC_CONFIDENCE)
    return list(found.values())


def _phrases(sentence: Sequence[tuple[str, Role]]) -> Iterable[list[str]]:
    run: list[tuple[str, Role]] = []
    for token in [*sentence, ("", Role.OTHER)]:
        if token[1] is not Role.OTHER:
            run.append(token)
            continue
        if len(run) > 1 and token[0] in _OBJECTS and _third_person(run[-1][0]):
            run.pop()  # "help means a lot", "the store looks great": a noun, then the verb it does
        while run and run[-1][1] is not Role.NOUN:  # a phrase ends in its noun
            run.pop()
        run = run[-MAX_TOPIC_WORDS:]
        while run and run[0][0] in VAGUE_MODIFIERS:
            run.pop(0)
        if run:
            yield [word for word, _ in run]
        run = []


def _key(phrase: Sequence[str]) -> str:
    return entity_key(" ".join(phrase), kind="topic", lemma=noun_lemma(phrase[-1]))


def _distinctive(phrase: Sequence[str]) -> bool:
    head = phrase[-1].lower()
    if head in GENERIC_NOUNS or noun_lemma(head) in GENERIC_NOUNS or len(head) < 3:
        return False
    if len(phrase) > 1:
        return True
    found = rank(head)
    return found is None or found >= COMMON_RANK


# Words that follow a verb rather than a noun ending its phrase: an object, an adverb, a complement.
_OBJECTS = frozenset("a an the my your his her our their this that these those so very really too me you him us "
                     "them it to like great good nice amazing awesome fun lot".split())


def _third_person(word: str) -> bool:
    """A common verb's third person ("means", "looks"), which after a noun is what the noun does."""
    verbs = readings(word).get("VERB", ())
    return word.endswith("s") and any(v != word and (r := rank(v)) is not None and r < COMMON_RANK for v in verbs)


def shown(entity: Entity) -> bool:
    """Whether readers show an entity: a named one always, a topic once it recurs."""
    return entity.kind != "topic" or entity.mentions >= MIN_TOPIC_NOTES
