"""Persona facts are de-duplicated and updated, never appended blindly: a fact said again reinforces the
one the persona has; a new value for the same subject ("I live in Paris" after "I live in Lyon") replaces
the old fact, which is kept, invalidated, as history."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..models import Fact, ProposedFact
from ..store.base import FactWrite
from ..text import split_speaker

SAME = 0.92  # cosine from which two facts say the same thing
UPDATE = 0.50  # cosine from which a fact with the same subject is a new value of it ("I live in Boston" /
# "I live in Seattle now" are 0.55 with all-MiniLM-L6-v2; "I love to paint" / "I love to hike" 0.41)
SUBJECT_WORDS = 3
_WORD = re.compile(r"[a-z0-9']+")


def normalised(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def subject(text: str) -> str:
    """Who says it and the first words ("caroline|i live in"): what a new value must share to replace it."""
    speaker, body = split_speaker(text)
    return f"{(speaker or '').lower()}|{' '.join(normalised(body).split()[:SUBJECT_WORDS])}"


def decide(
    proposed: Sequence[ProposedFact], vectors: np.ndarray, existing: Sequence[tuple[Fact, np.ndarray]], *,
    assistant: str, analysis: str, model: str | None,
) -> list[FactWrite]:
    """For each proposed fact: reinforce the fact it repeats, replace the fact it updates, or add it.
    Facts proposed together are compared with each other too (the first one wins)."""
    known: list[tuple[str, str, str, np.ndarray]] = [
        (fact.id, fact.kind, fact.text, _unit(vector)) for fact, vector in existing
    ]
    writes: list[FactWrite] = []
    batch: list[tuple[str, str, np.ndarray]] = []  # (kind, text, vector) of facts this call adds
    for fact, vector in zip(proposed, vectors, strict=True):
        vector = _unit(vector)
        if any(k == fact.kind and (normalised(t) == normalised(fact.text) or float(v @ vector) >= SAME) for k, t, v in batch):
            continue
        same = [(fid, text, float(v @ vector)) for fid, kind, text, v in known if kind == fact.kind]
        repeat = max(
            ((fid, cos) for fid, text, cos in same if cos >= SAME or normalised(text) == normalised(fact.text)),
            key=lambda item: item[1], default=None,
        )
        common = {"kind": fact.kind, "text": fact.text, "page_id": fact.page_id, "confidence": fact.confidence,
                  "assistant": assistant if fact.kind == "assistant_knowledge" else None,
                  "analysis": analysis, "model": model}
        if repeat is not None:
            writes.append(FactWrite(embedding=None, existing_id=repeat[0], **common))
            continue
        updated = max(
            ((fid, text, cos) for fid, text, cos in same if cos >= UPDATE and subject(text) == subject(fact.text)),
            key=lambda item: item[2], default=None,
        )
        if updated is not None:
            writes.append(FactWrite(
                embedding=vector, supersedes=updated[0], reason=f"updates {updated[1]!r} (cosine {updated[2]:.2f})", **common
            ))
        else:
            writes.append(FactWrite(embedding=vector, **common))
        batch.append((fact.kind, fact.text, vector))
    return writes


def _unit(vector: np.ndarray) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector
