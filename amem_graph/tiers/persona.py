"""Persona facts are de-duplicated and updated, never appended blindly: a fact said again reinforces the
one the persona has; a new value of a single-valued attribute ("I live in Seattle now" after "I live in
Boston") replaces the old fact, which is kept, invalidated, as history. Facts that merely start alike
("I have a dog" / "I have a cat") are both kept: most things a person has or does are not exclusive."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..core.text import split_speaker
from ..models import Fact, ProposedFact
from ..store.base import FactWrite

SAME = 0.92  # cosine from which two facts say the same thing
UPDATE = 0.50  # cosine from which a fact of the same single-valued attribute is a new value of it
# ("I live in Boston" / "I live in Seattle now" are 0.55 with all-MiniLM-L6-v2)
_WORD = re.compile(r"[a-z0-9']+")
_NUMBER = re.compile(r"\d+")
# Attributes a person has one value of at a time: where they live, what they work as, their name, age,
# origin, and "my favourite <thing> is".
_SINGLE_VALUED = re.compile(
    r"^(?:i live in|i live at|i'm living in|i am living in|i work as|i'm working as|i am working as|"
    r"i work at|i work for|my name is|i am \d+ years|i'm \d+ years|i am from|i'm from|my job is|"
    r"my (?:favou?rite [a-z]+) is|my (?:address|birthday|email|phone number) is)"
)


def normalised(text: str) -> str:
    return " ".join(_WORD.findall(text.lower().replace("’", "'")))


def attribute(text: str) -> str | None:
    """Who and which single-valued attribute ("caroline|i live in"), or None for any other fact."""
    speaker, body = split_speaker(text)
    match = _SINGLE_VALUED.match(normalised(body))
    if match is None:
        return None
    return f"{(speaker or '').lower()}|{_NUMBER.sub('#', match.group(0))}"


def decide(
    proposed: Sequence[ProposedFact], vectors: np.ndarray, existing: Sequence[tuple[Fact, np.ndarray]], *,
    assistant: str, analysis: str, model: str | None, similarity: Callable[[float], float] = float,
) -> list[FactWrite]:
    """For each proposed fact: reinforce the active fact it repeats, replace the one whose attribute it
    gives a new value, or add it. Of facts proposed together, a repeat is dropped and, of two values of one
    attribute, the later (pages come in dialogue order) is kept. `similarity` puts the embedding model's
    cosines on the scale SAME and UPDATE are set on (Embedder.similarity)."""
    known = [(fact.id, fact.kind, fact.text, _unit(vector)) for fact, vector in existing]
    chosen = _latest_per_attribute(list(zip(proposed, (_unit(v) for v in vectors), strict=True)))
    writes: list[FactWrite] = []
    batch: list[tuple[str, str, np.ndarray]] = []  # (kind, text, vector) of facts this call adds
    for fact, vector in chosen:
        if any(k == fact.kind and _same(t, fact.text, similarity(float(v @ vector))) for k, t, v in batch):
            continue
        same_kind = [(fid, text, similarity(float(v @ vector))) for fid, kind, text, v in known if kind == fact.kind]
        common = {"kind": fact.kind, "text": fact.text, "page_id": fact.page_id, "confidence": fact.confidence,
                  "assistant": assistant if fact.kind == "assistant_knowledge" else None,
                  "analysis": analysis, "model": model}
        slot = attribute(fact.text)
        # A value of a single-valued attribute only repeats the very same words ("I'm 30" / "I'm 31" are
        # close in meaning but not the same fact).
        repeat = max(((fid, cos) for fid, text, cos in same_kind
                      if normalised(text) == normalised(fact.text) or (slot is None and cos >= SAME)),
                     key=lambda item: item[1], default=None)
        if repeat is not None:
            writes.append(FactWrite(embedding=None, existing_id=repeat[0], **common))
            continue
        updated = max(((fid, text, cos) for fid, text, cos in same_kind
                       if slot is not None and cos >= UPDATE and attribute(text) == slot),
                      key=lambda item: item[2], default=None)
        if updated is not None:
            reason = f"updates {updated[1]!r} (cosine {updated[2]:.2f})"
            writes.append(FactWrite(embedding=vector, supersedes=updated[0], reason=reason, **common))
        else:
            writes.append(FactWrite(embedding=vector, **common))
        batch.append((fact.kind, fact.text, vector))
    return writes


def still_applying(writes: Sequence[FactWrite], active: Mapping[str, Fact]) -> list[FactWrite]:
    """`decide`'s writes against the facts active when they are written (another promotion may have run
    between): a repeat of a fact replaced or archived meanwhile is dropped, a reinforced fact keeps the higher
    confidence, and a fact already replaced keeps its first successor (a new fact then replaces nothing)."""
    confidence = {fact_id: fact.confidence for fact_id, fact in active.items()}
    replaced: set[str] = set()
    applied = []
    for write in writes:
        if write.existing_id is not None:
            if write.existing_id in active:
                confidence[write.existing_id] = max(confidence[write.existing_id], write.confidence)
                applied.append(replace(write, confidence=confidence[write.existing_id]))
        elif write.supersedes is not None and (write.supersedes not in active or write.supersedes in replaced):
            applied.append(replace(write, supersedes=None, reason=""))
        else:
            replaced |= {write.supersedes} if write.supersedes else set()
            applied.append(write)
    return applied


def _same(a: str, b: str, cosine: float) -> bool:
    return cosine >= SAME or normalised(a) == normalised(b)


def _latest_per_attribute(facts: list[tuple[ProposedFact, np.ndarray]]) -> list[tuple[ProposedFact, np.ndarray]]:
    """Facts in order, without those whose single-valued attribute a later fact of the same kind sets again."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for fact, vector in reversed(facts):
        slot = attribute(fact.text)
        if slot is not None and (fact.kind, slot) in seen:
            continue
        if slot is not None:
            seen.add((fact.kind, slot))
        kept.append((fact, vector))
    return kept[::-1]


def _unit(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def past_capacity(facts: Sequence[Fact], capacity: int) -> list[str]:
    """Past the capacity of a kind (of each assistant, for assistant knowledge), the least used facts (then the
    oldest) are archived: kept, out of use. Returns their ids."""
    groups: dict[tuple[str, str | None], list[Fact]] = {}
    for fact in facts:
        groups.setdefault((fact.kind, fact.assistant if fact.kind == "assistant_knowledge" else None), []).append(fact)
    archived = []
    for ranked in groups.values():
        ranked.sort(key=lambda f: (f.uses + f.mentions, f.updated_at.timestamp() if f.updated_at else 0.0), reverse=True)
        archived += [f.id for f in ranked[capacity:]]
    return archived
