"""Analysers turn a new note and its candidate neighbours into derived fields, links and evolutions."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any, Protocol

from ..core.entity_keys import entity_key
from ..core.log import event
from ..errors import LLMError
from ..models import (
    LINK_TYPES,
    Mention,
    NeighbourUpdate,
    NoteAnalysis,
    NoteInput,
    ProposedLink,
    SearchHit,
)
from .client import LLMClient
from .heuristic import HeuristicAnalyser, content_terms
from .prompts import (
    ANALYSIS_EXAMPLE_ANSWER,
    ANALYSIS_EXAMPLE_USER,
    ANALYSIS_SCHEMA,
    ANALYSIS_SYSTEM,
    MAX_ANSWER_TOKENS,
    analysis_messages,
    handle,
)

MAX_LABELS = 10
MAX_LABEL_CHARS = 100
MAX_CONTEXT_CHARS = 1_000
MAX_REASON_CHARS = 500
DEFAULT_CONFIDENCE = 0.5
# What a model must show before the graph trusts it to change what is there: a weak or hostile model names
# links it cannot justify, and contradictions and neighbour updates rewrite or supersede the user's memories.
MIN_LINK_CONFIDENCE = 0.2
MIN_CONTRADICTION_CONFIDENCE = 0.8  # and the reason names a term of both notes
MAX_UPDATES = 3  # neighbour updates per note; each reason names a term of the new note
_HANDLE = re.compile(r"^[cp]\d{1,3}$", re.IGNORECASE)  # a candidate's handle is not a key term
_INSTRUCTION_TERMS = content_terms([ANALYSIS_SYSTEM]).keys()
_EXAMPLE_TERMS = _INSTRUCTION_TERMS | content_terms([ANALYSIS_EXAMPLE_USER, ANALYSIS_EXAMPLE_ANSWER]).keys()
LLM_ENTITY_CONFIDENCE = 0.8  # an entity the model named


class Analyser(Protocol):
    kind: str  # what notes record in `analysis`
    model: str | None

    def analyse(self, note: NoteInput, candidates: Sequence[SearchHit]) -> NoteAnalysis: ...


class LLMAnalyser:
    """One LLM call per note. A failed call falls back to the heuristic analyser (analysis='degraded');
    parts of an answer that do not fit (ids not offered, unknown link types, malformed fields) are
    dropped and logged, and a malformed own field is filled by the heuristic analyser."""

    kind = "llm"

    def __init__(self, client: LLMClient, fallback: HeuristicAnalyser | None = None) -> None:
        self.client = client
        self.model: str | None = client.model
        self.fallback = fallback or HeuristicAnalyser()

    def analyse(self, note: NoteInput, candidates: Sequence[SearchHit]) -> NoteAnalysis:
        try:
            reply = self.client.complete_json(
                "analyse_note", analysis_messages(note, candidates, example=self.client.settings.examples),
                ANALYSIS_SCHEMA, max_tokens=MAX_ANSWER_TOKENS,
            )
        except LLMError as err:
            return self._degraded(note, candidates, err)
        offered = {handle(i): hit.note.id for i, hit in enumerate(candidates)}
        offered.update({hit.note.id: hit.note.id for hit in candidates})
        shown = _EXAMPLE_TERMS if self.client.settings.examples else _INSTRUCTION_TERMS
        answer = _Answer(reply.data, offered, note, candidates, shown)
        keywords = answer.keywords()
        context = answer.context()
        if not keywords or context is None:  # the answer did not analyse the note: it is not an LLM analysis
            self.client.count_failure("analyse_note")
            cost = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
            return self._degraded(note, candidates, LLMError("malformed", "no usable keywords or context", **cost))
        tags = answer.labels("tags", reply.data.get("tags"))
        if tags is None:
            tags = self.fallback.analyse(note, ()).tags
        analysis = NoteAnalysis(
            keywords=keywords, context=context, tags=tags, links=answer.links(), updates=answer.updates(),
            entities=answer.entities(), analysis="llm", model=reply.model, prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens, dropped=tuple(answer.dropped),
        )
        for reason in analysis.dropped:  # INFO: a reason may quote the model, and the Evolution records it anyway
            event("analysis_dropped", logging.INFO, note_id=note.id, model=reply.model, reason=reason)
        return analysis

    def _degraded(self, note: NoteInput, candidates: Sequence[SearchHit], err: LLMError) -> NoteAnalysis:
        """The heuristic analysis, marked degraded, with the reason and what the failed call cost."""
        event("analysis_degraded", note_id=note.id, kind=err.kind, error=str(err), model=self.model)
        return replace(
            self.fallback.analyse(note, candidates), analysis="degraded", degraded_reason=str(err),
            prompt_tokens=err.prompt_tokens, completion_tokens=err.completion_tokens,
        )


class _Answer:
    """Reads an LLM answer field by field, keeping what fits and saying why the rest was dropped."""

    def __init__(
        self, data: dict[str, Any], offered: dict[str, str], note: NoteInput, candidates: Sequence[SearchHit],
        instructions: AbstractSet[str],
    ) -> None:
        self.data = data
        self._instructions = instructions  # the words of what the model was told (and shown, as an example)
        self.offered = offered
        self.dropped: list[str] = []
        self._terms = content_terms([note.content]).keys()
        self._their_terms = {hit.note.id: content_terms([hit.note.content]).keys() for hit in candidates}

    def _names(self, text: str, terms: Any) -> bool:
        """Whether `text` names one of `terms` (content-word stems)."""
        return not terms.isdisjoint(content_terms([text]).keys())

    def _copied(self, text: str) -> bool:
        """Whether `text` was taken from what the model was shown rather than from the note (small models copy
        the instructions, the example or a candidate): it names nothing of the note, and something of those."""
        terms = content_terms([text]).keys()
        if not terms or not terms.isdisjoint(self._terms):
            return False
        return not terms.isdisjoint(self._instructions) or any(not terms.isdisjoint(t) for t in self._their_terms.values())

    def keywords(self) -> tuple[str, ...] | None:
        """Key terms of the note: a candidate's handle, or words taken from the instructions or a candidate, are not."""
        labels = self.labels("keywords", self.data.get("keywords"))
        if labels is None:
            return None
        kept = tuple(k for k in labels if not _HANDLE.match(k) and not self._copied(k))
        if len(kept) < len(labels):
            self.dropped.append(f"keywords: {len(labels) - len(kept)} are handles or taken from the instructions or a candidate")
        return kept

    def labels(self, what: str, value: Any, *, optional: bool = False) -> tuple[str, ...] | None:
        """Distinct short strings; None (and a drop) when `value` is not a list, () when optional and absent."""
        if value is None and optional:
            return ()
        if not isinstance(value, list):
            self.dropped.append(f"{what}: not a list of strings")
            return None
        out: list[str] = []
        for item in value:
            text = item.strip() if isinstance(item, str) else None
            if not text or len(text) > MAX_LABEL_CHARS or "\n" in text:
                self.dropped.append(f"{what}: unusable item {str(item)[:40]!r}")
            elif text.lower() not in {o.lower() for o in out}:
                out.append(text)
        if len(out) > MAX_LABELS:
            self.dropped.append(f"{what}: kept the first {MAX_LABELS} of {len(out)}")
        return tuple(out[:MAX_LABELS])

    def context(self) -> str | None:
        value = self.data.get("context")
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_CONTEXT_CHARS:
            self.dropped.append("context: not a sentence of at most 1000 characters")
            return None
        if self._copied(value):
            self.dropped.append("context: repeats the instructions or a candidate")
            return None
        return " ".join(value.split())

    def links(self) -> tuple[ProposedLink, ...]:
        links: dict[tuple[str, str], ProposedLink] = {}
        for item in self._items("links"):
            target = self.offered.get(str(item.get("target_id", "")))
            kind = str(item.get("type", "")).strip().upper().replace(" ", "_").replace("-", "_")
            confidence = item.get("confidence", DEFAULT_CONFIDENCE)
            confidence = DEFAULT_CONFIDENCE if confidence is None else confidence
            reason = item.get("reason", "")
            if target is None:
                self.dropped.append(f"link to {str(item.get('target_id'))[:40]!r}: not an offered candidate")
            elif kind not in LINK_TYPES:
                self.dropped.append(f"link to {target}: unknown type {kind[:40]!r}")
            elif isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
                self.dropped.append(f"link to {target}: confidence {str(confidence)[:20]!r} is not in [0, 1]")
            elif not isinstance(reason, str):
                self.dropped.append(f"link to {target}: reason is not text")
            elif confidence < MIN_LINK_CONFIDENCE:
                self.dropped.append(f"link to {target}: confidence {confidence} is below {MIN_LINK_CONFIDENCE}")
            elif kind == "CONTRADICTS" and not self._contradiction_shown(target, confidence, reason):
                self.dropped.append(
                    f"link to {target}: a contradiction needs confidence {MIN_CONTRADICTION_CONFIDENCE} and a reason "
                    "naming what both notes say"
                )
            else:
                links[(target, kind)] = ProposedLink(target, kind, reason.strip()[:MAX_REASON_CHARS], float(confidence))
        return tuple(links.values())

    def updates(self) -> tuple[NeighbourUpdate, ...]:
        updates: dict[str, NeighbourUpdate] = {}
        for item in self._items("neighbour_updates"):
            target = self.offered.get(str(item.get("id", "")))
            where = f"update of {target}: "
            context = item.get("context")
            add = self.labels(f"{where}add_tags", item.get("add_tags"), optional=True)
            remove = self.labels(f"{where}remove_tags", item.get("remove_tags"), optional=True)
            reason = item.get("reason", "")
            if target is None:
                self.dropped.append(f"update of {str(item.get('id'))[:40]!r}: not an offered candidate")
            elif context is not None and (not isinstance(context, str) or len(context) > MAX_CONTEXT_CHARS):
                self.dropped.append(f"{where}context is not a sentence of at most 1000 characters")
            elif add is None or remove is None or not isinstance(reason, str):
                self.dropped.append(f"{where}malformed tags or reason")
            elif not (context and context.strip()) and not add and not remove:
                self.dropped.append(f"{where}changes nothing")
            elif not self._names(reason, self._terms):
                self.dropped.append(f"{where}its reason names nothing of the new note")
            elif context and context.strip() and not self._names(context, self._their_terms.get(target, set())):
                self.dropped.append(f"{where}its context names nothing of the note it rewrites")
            elif len(updates) == MAX_UPDATES and target not in updates:
                self.dropped.append(f"{where}past {MAX_UPDATES} updates for one note")
            else:
                updates[target] = NeighbourUpdate(
                    id=target, reason=reason.strip()[:MAX_REASON_CHARS],
                    context=" ".join(context.split()) if context and context.strip() else None,
                    add_tags=add, remove_tags=remove,
                )
        return tuple(updates.values())

    def _contradiction_shown(self, target: str, confidence: float, reason: str) -> bool:
        return (
            confidence >= MIN_CONTRADICTION_CONFIDENCE and self._names(reason, self._terms)
            and self._names(reason, self._their_terms.get(target, set()))
        )

    def entities(self) -> tuple[Mention, ...] | None:
        """The entities the answer names, as things (the extractor's kinds win: entities.extract.note_mentions;
        a capitalised name is not made singular); None when it has no `entities` field."""
        if self.data.get("entities") is None:
            return None
        names = self.labels("entities", self.data.get("entities")) or ()
        found: dict[str, Mention] = {}
        for name in names:
            if key := entity_key(name, kind="person" if name[:1].isupper() else "thing"):
                found.setdefault(key, Mention(key, " ".join(name.split()), "thing", LLM_ENTITY_CONFIDENCE))
        return tuple(found.values())

    def _items(self, name: str) -> list[dict[str, Any]]:
        value = self.data.get(name) or []
        if not isinstance(value, list):
            self.dropped.append(f"{name}: not a list")
            return []
        items = [item for item in value if isinstance(item, dict)]
        if len(items) < len(value):
            self.dropped.append(f"{name}: {len(value) - len(items)} item(s) not objects")
        return items
