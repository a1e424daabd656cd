"""The extractor of the core install: named things by their capitals, the names it knows (data/names.txt) and the
words around them; topics by the dictionary's parts of speech (topics.py). No model, no network."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.english import COMMON_RANK, rank
from ..core.entity_keys import entity_key
from ..core.text import STOP_WORDS
from ..models import EntityKind, Mention
from . import topics
from .lexicon import (
    DEMONYMS,
    INTERJECTIONS,
    KINSHIP,
    MONTHS_AND_DAYS,
    SLANG,
    TITLES,
    gazetteer,
    given_names,
    known,
    readings,
)
from .topics import Role

RULE_CONFIDENCE = 0.8  # a name found by its capitals and the words around it
KNOWN_CONFIDENCE = 0.9  # a name of data/names.txt
ORDINARY_RANK = 20_000  # within English's this many commonest terms, a word is more likely a word than a name

# Code, addresses and markup are not talk: identifiers in them are no names.
_NOT_PROSE = re.compile(
    r"```.*?(?:```|\Z)|`[^`\n]*`|https?://\S+|www\.\S+|\S+@\S+\.\w+|<[^>\n]{1,200}>"  # code, addresses, markup
    r"|\$\$.*?\$\$|\\\[.*?\\\]|\\\(.*?\\\)|\\[A-Za-z]+",  # mathematics: $$...$$, \[...\], \(...\), \frac
    re.DOTALL,
)
_TOKEN = re.compile(
    r"[^\W\d_](?:[\w'’+#&]|[.-](?=\w))*[+#]*|\d+(?:[.,:]\d+)*|[.!?;:,()\[\]{}\"“”…\n*•|=/]|'(?!\w)"
)
_ENDS = frozenset(".!?;:…\n*•|()[]{}\"“”")
CONNECTORS = frozenset({"of", "the", "de", "la", "del", "van", "von", "da", "&"})
# A word before a name that says its kind.
_PET_WORDS = frozenset(
    "dog dogs pup puppy puppies cat cats kitten kitty pet pets bunny rabbit hamster horse pony parrot bird fish "
    "turtle tortoise snake lizard guinea pig ferret goldfish beagle labrador lab poodle terrier retriever husky "
    "corgi pug bulldog chihuahua dachshund shepherd collie spaniel".split()
)
_PLACE_BEFORE = frozenset("in from visit visited visiting visits near across around toward towards outside".split())
_TRAVEL = frozenset(
    "go goes going gone went travel traveled travelled traveling travelling move moved moving fly flew flying "
    "trip drive drove driving headed heading back return returned returning vacation holiday honeymoon".split()
)
_ORG_BEFORE = frozenset("at for joined join joining hired interning intern".split())
_WORK_WORDS = frozenset(
    "book books novel novels movie movies film films show shows series song songs album albums podcast podcasts "
    "game games play musical painting poem documentary".split()
)
_PLACE_HEADS = frozenset(
    "park lake beach mountain mountains river island islands falls canyon valley bay street avenue road city county "
    "state hills springs coast trail square forest desert sea ocean national peak village town harbor harbour "
    "bridge castle cathedral temple museum gardens garden zoo aquarium pier boardwalk resort library".split()
)
_ORG_HEADS = frozenset(
    "inc inc. corp corp. company co co. llc ltd university college school academy institute church club team "
    "foundation agency association society bank hospital clinic center centre studio studios store shop cafe café "
    "restaurant bakery bar pub gym media labs lab group records press network council department ministry rescue "
    "shelter hub brewery kitchen market theater theatre cinema salon boutique gallery charity organization "
    "organisation union league orchestra band choir".split()
)
_EVENT_HEADS = frozenset(
    "festival fest conference con summit expo fair parade marathon championship championships cup games olympics "
    "gala awards award ceremony tournament convention hackathon week day eve".split()
)


@dataclass(frozen=True)
class _Token:
    text: str
    first: bool  # opens a sentence
    heading: bool = False  # in a heading or a bold label, where ordinary words are capitalised too


def prose(text: str) -> str:
    """The text without code, addresses and markup."""
    return _NOT_PROSE.sub(" . ", text)


HEADING = re.compile(r"^[ \t]*#{1,6}[ \t].*$|\*\*[^*\n]{1,120}\*\*|__[^_\n]{1,120}__", re.MULTILINE)
_QUOTED = re.compile(r"[\"“]([^\"“”\n]{2,60})[\"”]")
MAX_TITLE_WORDS = 6


def sentences(text: str) -> list[list[_Token]]:
    text = prose(text)
    headings = [m.span() for m in HEADING.finditer(text)]
    out: list[list[_Token]] = []
    current: list[_Token] = []
    for match in _TOKEN.finditer(text):
        word = match.group()
        heading = any(a <= match.start() < b for a, b in headings)
        if word == "." and current and _initial(current[-1].text):
            continue  # "J.K. Rowling", "Dr. Patel": the name goes on
        if word in _ENDS:
            if current:
                out.append(current)
            current = []
            continue
        current.append(_Token(word, not current, heading))
    if current:
        out.append(current)
    return out


def _initial(word: str) -> bool:
    """A capital initial or a title, after which a full stop does not end the sentence ("J." "Dr.")."""
    return (len(word) == 1 and word.isupper()) or word.lower() in TITLES or bool(re.fullmatch(r"(?:[A-Z]\.)+[A-Z]", word))


def _capitalised(word: str) -> bool:
    return word[:1].isupper() or (len(word) > 1 and word[0].islower() and any(c.isupper() for c in word[1:]))


class RuleExtractor:
    """Named things and topic candidates by rule: a capitalised run of words is a name unless it is ordinary
    English opening a sentence, an interjection, a month, a kinship word or a nationality; its kind comes from
    the names it knows, its first or last word ("Lake Tahoe", "University of Utah"), a given name opening it or
    the words around it ("my dog Max", "moved to Denver", "Thanks, Kate"); with none of these, it names nothing."""

    name = "rules"
    version = "rules-2"  # 2: named kinds and topics (schema 10); 1 (unrecorded): names, titles and every content word

    def mentions(self, texts: Sequence[str]) -> list[tuple[Mention, ...]]:
        return [tuple(self._one(text)) for text in texts]

    def _one(self, text: str) -> Iterable[Mention]:
        titles, text = quoted_titles(text)
        found: dict[str, Mention] = {m.key: m for m in titles}
        tagged: list[list[tuple[str, Role]]] = []
        for sentence in sentences(text):
            named = _named(sentence)
            for mention, _ in named.values():
                found.setdefault(mention.key, mention)
            tagged.append(_roles(sentence, {i for _, span in named.values() for i in span}))
        for mention in topics.candidates(tagged):
            if mention.key not in found:
                found[mention.key] = mention
        return found.values()


def quoted_titles(text: str) -> tuple[list[Mention], str]:
    """Titles in quotes ("Get Out", “The Conjuring”: a short quote whose longer words are capitalised), and the
    text without them (a title's words name nothing else)."""
    out = []

    def title(match: re.Match[str]) -> str:
        name = match.group(1).strip(" ,.!?")
        words = name.split()
        longer = [w for w in words if len(w) > 3 and w.isalpha()] or words[:1]
        if 0 < len(words) <= MAX_TITLE_WORDS and name[:1].isupper() and all(w[:1].isupper() for w in longer) \
                and (key := entity_key(name, kind="work")):
            out.append(Mention(key, name, "work", RULE_CONFIDENCE))
            return " , "
        return match.group(0)

    return out, _QUOTED.sub(title, prose(text))


def _named(sentence: Sequence[_Token]) -> dict[str, tuple[Mention, range]]:
    words = [t.text for t in sentence]
    out: dict[str, tuple[Mention, range]] = {}
    places = gazetteer()
    i = 0
    while i < len(words):
        hit = places.find(words, i)
        if hit and not (sentence[i].first and known(words[i]) and hit[0] == 1) and _capitalised_or_folded(words[i]):
            size, kind = hit
            _add(out, " ".join(words[i : i + size]), kind, KNOWN_CONFIDENCE, range(i, i + size))
            i += size
            continue
        if "-" in words[i] and (hit := places.find(words[i].split("-", 1)[:1], 0)) and hit[1] == "product":
            _add(out, words[i], "product", KNOWN_CONFIDENCE, range(i, i + 1))  # a product's plug-in: Flask-Migrate
            i += 1
            continue
        if not _capitalised(words[i]) or not words[i][0].isalpha() or sentence[i].heading:
            i += 1
            continue
        j = i + 1
        while j < len(words) and not words[j - 1].endswith(("'s", "’s")):  # "Robert's Background" is Robert's
            if _capitalised(words[j]) and words[j][0].isalpha() and words[j] != "I" and not places.find(words, j):
                j += 1
            elif words[j].lower() in CONNECTORS and j + 1 < len(words) and _capitalised(words[j + 1]) and j > i:
                j += 2
            else:
                break
        start = _trimmed(sentence, i, j)
        if start < j:
            name = " ".join(words[start:j])
            kind = _kind(words, start, j)
            if kind is not None:
                _add(out, name, kind, RULE_CONFIDENCE, range(start, j))
        i = j
    return out


def _capitalised_or_folded(word: str) -> bool:
    return _capitalised(word) or word.islower()  # a lower-case hit is a name the gazetteer folds ("miami")


def _trimmed(sentence: Sequence[_Token], i: int, j: int) -> int:
    """Where the name in the capitalised run sentence[i:j] begins: past the words that cannot start one. A "The"
    inside a sentence stays: it opens a title ("we watched The Conjuring")."""
    while i < j:
        word = sentence[i].text
        low = word.lower().replace("’", "'")
        if word == "The" and not sentence[i].first and j - i > 1:
            break
        if word == "I" or low in INTERJECTIONS or low in MONTHS_AND_DAYS or low in KINSHIP or low in DEMONYMS:
            i += 1
        elif low in STOP_WORDS or low in SLANG or (sentence[i].first and _opens_as_word(sentence, i, j)):
            i += 1
        elif word.isupper() and j - i == 1:  # an acronym or a letter it does not know: emphasis, jargon, algebra
            i += 1
        else:
            break
    return i


def _opens_as_word(sentence: Sequence[_Token], i: int, j: int) -> bool:
    """Whether a capitalised word that opens a sentence is an ordinary word there: a dictionary word, or an English
    word that is no given name and neither calls someone (a comma after it) nor starts a longer name."""
    word = sentence[i].text
    if known(word):
        return True
    if _given(word) or j - i > 1 or (i + 1 < len(sentence) and sentence[i + 1].text == ","):
        return False
    return _ordinary(word)


def _given(word: str) -> bool:
    return word.lower().removesuffix("'s").removesuffix("’s") in given_names()


def _ordinary(word: str) -> bool:
    """A word of English's common vocabulary (data of english.py): more likely a word than a name."""
    found = rank(word.removesuffix("'s").removesuffix("’s"))
    return found is not None and found < ORDINARY_RANK


def _kind(words: Sequence[str], start: int, end: int) -> EntityKind | None:
    """The kind of the name words[start:end]: by its first or last word ("Lake Tahoe", "University of Utah"), a given
    name opening it, the words around it ("my dog Max", "moved to Denver", "Thanks, Kate"); None when nothing marks
    it as a name (a heading's "Async Route", "a fellow Chef"), which costs a rare name to spare many words."""
    run = words[start:end]
    first = run[0].lower()
    head = run[-1].lower().rstrip(".").removesuffix("'s").removesuffix("’s")
    before = [w.lower() for w in words[max(0, start - 3) : start]]
    if len(run) == 2 and _given(run[0]) and not known(run[0]):
        return "person"  # "Jon Park", "Sam Bridges"
    if len(run) > 1:
        for heads, kind in ((_PLACE_HEADS, "place"), (_ORG_HEADS, "org"), (_EVENT_HEADS, "event")):
            if head in heads or (first in heads and run[1].lower() == "of"):
                return kind  # type: ignore[return-value]
    if run[0] == "The":
        return "work"
    after = [w.lower() for w in words[end : end + 2]]
    if (before and (before[-1] in _PET_WORDS or (len(before) > 1 and before[-1] in ("named", "called")
                                                 and before[-2] in _PET_WORDS))) \
            or (len(after) == 2 and after[0] == "the" and after[1] in _PET_WORDS):
        return "pet"  # "my dog Max", "a puppy named Max", "Biscuit the beagle"
    if _calls(words, start, end) or (_given(run[0]) and (len(run) > 1 or not known(run[0]))):
        return "person"
    if len(run) == 1 and known(run[0]) and _uncommon(run[0]) and before and before[-1].isalpha() \
            and before[-1] not in _DETERMINERS and "ADJ" not in readings(before[-1]) and not first_heads(run[0]):
        return "person"  # an uncommon word capitalised inside a sentence, no article before it: "Does Biscuit bark?"
    if any(known(w) for w in run) or "-" in run[0] and run[0].split("-")[0].lower() in DEMONYMS:
        return None
    if before and before[-1] in _WORK_WORDS | {"titled", "watching", "watched", "reading", "read"}:
        return "work"
    if before and (before[-1] in _PLACE_BEFORE or (before[-1] == "to" and len(before) > 1 and before[-2] in _TRAVEL)):
        return "place"
    if before and before[-1] in _ORG_BEFORE and len(run) > 1:
        return "org"
    if before and before[-1] in _PERSON_BEFORE or (end < len(words) and words[end].lower() in _PERSON_AFTER):
        return "person"
    return None


_DETERMINERS = frozenset("a an the my your his her our their its this that these those some any every each no "
                         "another which what".split())


def _uncommon(word: str) -> bool:
    found = rank(word)
    return found is None or found >= COMMON_RANK


def first_heads(word: str) -> bool:
    """A word that heads a named place, organisation or event: capitalised alone, it is no name ("the Park")."""
    low = word.lower()
    return low in _PLACE_HEADS or low in _ORG_HEADS or low in _EVENT_HEADS


_PERSON_BEFORE = frozenset("with met meet meeting friend friends sister brother cousin mom dad wife husband son "
                           "daughter boyfriend girlfriend partner coworker colleague boss named called by and".split())
_PERSON_AFTER = frozenset("said says told asked and".split())


def _calls(words: Sequence[str], start: int, end: int) -> bool:
    """Whether a one-word name is said to someone: after a greeting ("Hey Kate", "Thanks, Kate") or between a
    comma and the sentence's end or another comma ("Got it, Nate, see you")."""
    if end - start != 1 or known(words[start]):
        return False
    before = [w.lower() for w in words[max(0, start - 2) : start] if w != ","]
    after = words[end] if end < len(words) else ""
    return bool(before and before[-1] in INTERJECTIONS) or (start > 0 and words[start - 1] == "," and after in ("", ","))


def _add(out: dict[str, tuple[Mention, range]], name: str, kind: EntityKind, confidence: float, span: range) -> None:
    name = name.removesuffix("'s").removesuffix("’s")
    if key := entity_key(name, kind=kind):
        out.setdefault(key, (Mention(key, name, kind, confidence), span))


# Before a gerund that is a noun ("went camping", "my cooking", "love baking"); after a noun it is a participle
# ("two dogs running").
_ARTICLES_AND_VERBS = frozenset("a an the my your his her our their this that some any no go goes going went gone "
                                "love loves loved like likes liked enjoy enjoys enjoyed into about of for from at "
                                "started start try tried doing did done".split() + [""])
_SUBJECTS = frozenset("i you we they he she it who i'm you're we're they're he's she's it's am is are was were "
                      "be been being to can could will would should might must may did do does don't didn't "
                      "can't won't i'll we'll i've we've".split())


def _roles(sentence: Sequence[_Token], named: set[int]) -> list[tuple[str, Role]]:
    """Each word's part for topics, from the dictionary and the word before it: after a subject, "to" or a modal
    a word is a verb; a known name ends a phrase, a nationality or an unknown acronym may modify one."""
    out = []
    previous = ""
    for i, token in enumerate(sentence):
        word = token.text
        low = word.lower().replace("’", "'")
        out.append((low, _role(word, low, previous, i in named, token.first)))
        previous = low
    return out


def _role(word: str, low: str, previous: str, named: bool, first: bool) -> Role:
    if low in DEMONYMS or (word.isupper() and len(word) > 1 and not named):
        return Role.MODIFIER
    if named or not word[0].isalpha() or low in STOP_WORDS or low in SLANG or low in INTERJECTIONS or len(low) < 2:
        return Role.OTHER
    if word[0].isupper() and not (first and known(word)):
        return Role.OTHER  # capitalised, and no ordinary word opening a sentence: a name it could not place
    parts = readings(low) if low.isalpha() else {}
    if low in given_names():
        return Role.OTHER  # a name written in lower case ("elise") is no topic
    if not parts:
        pieces = low.split("-")
        if len(pieces) > 1 and all(p.isalpha() for p in pieces):  # "dairy-free", "self-care"
            return Role.NOUN if "NOUN" in readings(pieces[-1]) else Role.MODIFIER
        return Role.NOUN if low.isalpha() and len(low) >= 4 else Role.OTHER
    if "VERB" in parts and (previous in _SUBJECTS or any(lemma in STOP_WORDS for lemma in parts["VERB"])):
        return Role.OTHER  # after a subject, "to" or a modal, or a form of a verb like "keep": a verb
    if "NOUN" in parts or (low.endswith("ing") and "VERB" in parts and previous in _ARTICLES_AND_VERBS):
        return Role.NOUN
    if "ADJ" in parts:
        return Role.MODIFIER
    return Role.OTHER
