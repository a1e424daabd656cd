"""What the tiers derive from dialogue: whether a turn continues its chain, the chain's summary, topic
keywords, segment summaries and persona facts. Every step has an offline heuristic; the LLM analyser
uses it whenever a call fails or its answer does not fit, so nothing derived is ever an error message
and no turn waits on a model."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.log import event
from ..core.text import STOP_WORDS, split_speaker, stem
from ..errors import LLMError
from ..llm.client import LLMClient
from ..llm.heuristic import rake
from ..llm.prompts import (
    PERSONA_SCHEMA,
    SEGMENT_SCHEMA,
    TURN_SCHEMA,
    page_handle,
    persona_messages,
    segment_messages,
    turn_messages,
)
from ..models import FACT_KINDS, Page, ProposedFact

VERSION = "heuristic-tiers-v1"
PAGE_KEYWORDS = 8
SEGMENT_KEYWORDS = 12
CHAIN_KEYWORDS = 6
MAX_SUMMARY_CHARS = 600
MAX_FACT_CHARS = 300
MAX_FACTS_PER_PAGE = 3
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z0-9][a-z0-9'’-]*")
_SELF = re.compile(
    r"^(i am|i'm|i have|i've|i had|i like|i love|i enjoy|i hate|i prefer|i work|i live|i lived|i moved|i was born|"
    r"i grew up|i usually|i always|i never|i play|i plan|i want|i'd love|i'm planning|i joined|i started|"
    r"my [\w' -]{1,30}? (is|are|was|were)|my favou?rite)\b", re.IGNORECASE,
)
_ASSISTANT_SELF = re.compile(r"^(i will|i'll|i can|i have|i've|i recommend|i suggested|i remember|i noted)\b", re.IGNORECASE)
_COPULA = re.compile(r"\b(is|are|was|were|has|have|had)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(i|i'm|i've|i'd|i'll|my|me|we|our)\b", re.IGNORECASE)


@dataclass(frozen=True)
class TurnAnalysis:
    continues: bool  # the turn continues the previous page's dialogue chain
    chain_summary: str
    chain_keywords: tuple[str, ...]
    keywords: tuple[str, ...]  # the page's topic keywords
    analysis: str
    model: str | None


@dataclass(frozen=True)
class SegmentSummary:
    summary: str
    keywords: tuple[str, ...]  # terms the analysis adds to the segment's counted keywords
    analysis: str
    model: str | None


@dataclass(frozen=True)
class PersonaExtraction:
    facts: tuple[ProposedFact, ...]
    analysis: str
    model: str | None


class TierAnalyser(Protocol):
    kind: str

    def turn(self, page: Page, previous: Page | None, cosine: float | None, chain_keywords: Sequence[str]) -> TurnAnalysis: ...

    def segment(self, summary: str | None, keywords: Sequence[str], page: Page, pages: int) -> SegmentSummary: ...

    def persona(self, pages: Sequence[Page]) -> PersonaExtraction: ...


def bare(text: str) -> str:
    """A side of a turn without its time stamp and speaker: what similarity and keywords are computed on."""
    return split_speaker(text)[1] or text


def embedded_text(user_text: str, assistant_text: str) -> str:
    """What a page is embedded as: both sides without time stamp or speaker."""
    return "\n".join(bare(t) for t in (user_text, assistant_text) if t.strip())


def keywords(text: str, limit: int = PAGE_KEYWORDS) -> tuple[str, ...]:
    """Single content words, best RAKE score first, one per stem."""
    _, scores = rake(text, limit)
    ranked = sorted((w for w in scores if len(w) > 2 and not w.isdigit()), key=lambda w: (-scores[w], w))
    out: dict[str, str] = {}
    for word in ranked:
        out.setdefault(stem(word), word)
    return tuple(out.values())[:limit]


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    """Jaccard similarity of two keyword sets, compared by stem."""
    left, right = {stem(w) for w in a}, {stem(w) for w in b}
    return len(left & right) / len(left | right) if left and right else 0.0


def merged_keywords(
    keywords_: Sequence[str], counts: Sequence[int], new: Sequence[str], limit: int = SEGMENT_KEYWORDS
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A segment's keywords with how many of its pages named each, after `new` joins; the most named first."""
    tally = dict(zip(keywords_, counts, strict=False))
    by_stem = {stem(w): w for w in tally}
    for word in new:
        known = by_stem.setdefault(stem(word), word)
        tally[known] = tally.get(known, 0) + 1
    ranked = sorted(tally.items(), key=lambda item: -item[1])[:limit]
    return tuple(w for w, _ in ranked), tuple(c for _, c in ranked)


def _first_sentence(text: str, limit: int = 160) -> str:
    sentence = _SENTENCE.split(bare(text).strip(), maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


class HeuristicTierAnalyser:
    """Deterministic and offline: cosine and shared terms for continuity, keyword summaries, first-person
    patterns for persona facts."""

    kind = "heuristic"
    model: str | None = VERSION

    def __init__(self, continuity: float = 0.35) -> None:
        self.continuity = continuity

    def turn(self, page: Page, previous: Page | None, cosine: float | None, chain_keywords: Sequence[str]) -> TurnAnalysis:
        words = keywords(" ".join(bare(t) for t in (page.user_text, page.assistant_text) if t))
        continues = previous is not None and (
            (cosine is not None and cosine >= self.continuity) or jaccard(words, chain_keywords or previous.keywords) > 0
        )
        chain = merged_keywords(chain_keywords, [1] * len(chain_keywords), words, CHAIN_KEYWORDS)[0] if continues else words[:CHAIN_KEYWORDS]
        summary = f"About {', '.join(chain)}" if chain else "Small talk"
        return TurnAnalysis(continues, summary, chain, words, "heuristic", VERSION)

    def segment(self, summary: str | None, keywords_: Sequence[str], page: Page, pages: int) -> SegmentSummary:
        topic = ", ".join(keywords_[:5]) or "small talk"
        first = summary.split(" First: ", 1)[1] if summary and " First: " in summary else _first_sentence(page.text)
        text = f"Topic: {topic} ({pages} turns). First: {first}"
        if pages > 1:
            text = f"Topic: {topic} ({pages} turns). Latest: {_first_sentence(page.text)} First: {first}"
        return SegmentSummary(text[:MAX_SUMMARY_CHARS], (), "heuristic", VERSION)

    def persona(self, pages: Sequence[Page]) -> PersonaExtraction:
        facts: list[ProposedFact] = []
        for page in pages:
            found: list[ProposedFact] = []
            speaker, user = split_speaker(page.user_text)
            for sentence in _sentences(user):
                kind, confidence = _user_fact(sentence)
                if kind:
                    text = f"{speaker}: {sentence}" if speaker else sentence
                    found.append(ProposedFact(kind, text[:MAX_FACT_CHARS], page.id, confidence))
            for sentence in _sentences(bare(page.assistant_text)):
                if _ASSISTANT_SELF.match(sentence):
                    found.append(ProposedFact("assistant_knowledge", sentence[:MAX_FACT_CHARS], page.id, 0.5))
            facts.extend(found[:MAX_FACTS_PER_PAGE])
        return PersonaExtraction(tuple(facts), "heuristic", VERSION)


def _sentences(text: str) -> list[str]:
    """Statements of a text: questions and fragments under four words left out."""
    out = []
    for sentence in _SENTENCE.split(text.strip()):
        sentence = sentence.strip()
        if sentence and not sentence.endswith("?") and len(_WORD.findall(sentence.lower())) >= 4:
            out.append(sentence)
    return out


def _user_fact(sentence: str) -> tuple[str | None, float]:
    """(kind, confidence) of a user's statement: about themself (first person, surest with a verb of being,
    having or liking), about the world (a verb of being or having), or neither (too few content words)."""
    words = _WORD.findall(sentence.lower())
    content = [w for w in words if w not in STOP_WORDS]
    if _FIRST_PERSON.match(sentence):
        if _SELF.match(sentence):
            return "profile", 0.6
        return ("profile", 0.4) if len(content) >= 2 else (None, 0.0)
    if _COPULA.search(sentence) and len(words) >= 6 and len(content) >= 3:
        return "user_knowledge", 0.4
    return None, 0.0


class LLMTierAnalyser:
    """The same steps through the shared LLM client; on any failure or unusable answer the heuristic result,
    marked degraded. Answers are read field by field: only the expected strings, within length limits."""

    kind = "llm"

    def __init__(self, client: LLMClient, fallback: HeuristicTierAnalyser | None = None) -> None:
        self.client = client
        self.model: str | None = client.model
        self.fallback = fallback or HeuristicTierAnalyser()

    def turn(self, page: Page, previous: Page | None, cosine: float | None, chain_keywords: Sequence[str]) -> TurnAnalysis:
        heuristic = self.fallback.turn(page, previous, cosine, chain_keywords)
        previous_turn = (previous.user_text, previous.assistant_text) if previous else None
        messages = turn_messages((page.user_text, page.assistant_text), previous_turn, previous.chain_summary if previous else "")
        data, model = self._ask("tier_turn", messages, TURN_SCHEMA, 200)
        summary = _clean(data.get("chain_summary"), MAX_SUMMARY_CHARS) if data else None
        words = _labels(data.get("keywords")) if data else None
        if data is None or summary is None or not words or not isinstance(data.get("continues"), bool):
            return self._degraded(heuristic, "tier_turn", data)
        continues = bool(data["continues"]) and previous is not None
        chain = merged_keywords(chain_keywords, [1] * len(chain_keywords), words, CHAIN_KEYWORDS)[0] if continues else words[:CHAIN_KEYWORDS]
        return TurnAnalysis(continues, summary, chain, words[:PAGE_KEYWORDS], "llm", model)

    def segment(self, summary: str | None, keywords_: Sequence[str], page: Page, pages: int) -> SegmentSummary:
        data, model = self._ask("tier_segment", segment_messages(summary, (page.user_text, page.assistant_text)), SEGMENT_SCHEMA, 300)
        text = _clean(data.get("summary"), MAX_SUMMARY_CHARS) if data else None
        words = _labels(data.get("keywords")) if data else None
        if text is None or words is None:
            return self._degraded(self.fallback.segment(summary, keywords_, page, pages), "tier_segment", data)
        return SegmentSummary(text, words, "llm", model)

    def persona(self, pages: Sequence[Page]) -> PersonaExtraction:
        data, model = self._ask("tier_persona", persona_messages([(p.user_text, p.assistant_text) for p in pages]), PERSONA_SCHEMA, 800)
        items = data.get("facts") if data else None
        if not isinstance(items, list):
            return self._degraded(self.fallback.persona(pages), "tier_persona", data)
        handles = {page_handle(i): page.id for i, page in enumerate(pages)}
        facts = []
        for item in items:
            if not isinstance(item, dict):
                continue
            text = _clean(item.get("text"), MAX_FACT_CHARS)
            page_id = handles.get(str(item.get("page")))
            confidence = item.get("confidence")
            if text is None or page_id is None or item.get("kind") not in FACT_KINDS:
                event("fact_dropped", reason="unknown kind or page, or no text", model=model)
                continue
            if isinstance(confidence, bool) or not isinstance(confidence, int | float):
                confidence = 0.5
            facts.append(ProposedFact(item["kind"], text, page_id, min(1.0, max(0.0, float(confidence)))))
        return PersonaExtraction(tuple(facts), "llm", model)

    def _ask(self, operation: str, messages: list[dict[str, str]], schema: dict[str, Any], max_tokens: int) -> tuple[dict[str, Any] | None, str | None]:
        try:
            reply = self.client.complete_json(operation, messages, schema, max_tokens=max_tokens)
        except LLMError as err:
            event("tier_analysis_degraded", operation=operation, kind=err.kind, error=str(err), model=self.model)
            return None, None
        return reply.data, reply.model

    def _degraded(self, result: Any, operation: str, data: dict[str, Any] | None) -> Any:
        if data is not None:  # an answer came but did not fit: count it as the failure it is
            self.client.count_failure(operation)
            event("tier_analysis_degraded", operation=operation, kind="malformed", model=self.model)
        return type(result)(**{**vars(result), "analysis": "degraded"})


def _clean(value: Any, limit: int) -> str | None:
    """A usable string from an answer, or None: no empty or non-string values; long ones are cut."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:limit]


def _labels(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    out: dict[str, None] = {}
    for item in value:
        if isinstance(item, str) and item.strip() and len(item) <= 100:
            out[item.strip().lower()] = None
    return tuple(out)[:SEGMENT_KEYWORDS]
