"""What `context_for` gathers from every tier, as structured data and as one prompt block with sections."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.text import split_speaker
from ..models import Fact, Page, SearchHit, Segment, _jsonable
from ..read.retrieval import format_context

PAGE_SOURCE = "page:"  # the source of a note promoted from a page: "page:<page id>"
# How each tier's scores count in `ranked_pages`: min-max scaled, then weighted and added. The pages' own
# BM25 (with their neighbourhood) carries most; the dense cosine, the notes' search, the segments and the
# facts move pages up. Tuned on LoCoMo dev (BENCHMARKS.md); dense above 0.3 lost recall there.
WEIGHTS = {"matched": 0.8, "similar": 0.2, "notes": 0.5, "segments": 0.1, "facts": 0.1}
SPEAKER_PRIOR = 0.2  # added to a page said by a speaker the query names, as note search does
SESSION_WEIGHT = 0.3  # times its session's share of the best scores: answers cluster in a session
SESSION_WINDOW = 40  # the best pages whose scores make up the session shares


@dataclass(frozen=True)
class PageHit:
    page: Page
    score: float  # cosine to the query (a segment's page) or BM25 (a matched page)


@dataclass(frozen=True)
class SegmentHit:
    segment: Segment
    score: float  # F_score to the query: cosine + keyword Jaccard
    pages: tuple[PageHit, ...] = ()


@dataclass(frozen=True)
class FactHit:
    fact: Fact
    score: float  # cosine to the query


@dataclass(frozen=True)
class TierContext:
    """Short-term pages of the session, the best segments with their best pages, persona facts and the notes
    search found (with their graph provenance)."""

    query: str
    session_id: str | None
    stm: tuple[Page, ...] = ()
    segments: tuple[SegmentHit, ...] = ()
    facts: tuple[FactHit, ...] = ()
    notes: tuple[SearchHit, ...] = field(default_factory=tuple)
    matched: tuple[PageHit, ...] = ()  # pages whose words match the query (BM25), in any segment
    similar: tuple[PageHit, ...] = ()  # pages closest in meaning (cosine), in any segment
    names: tuple[str, ...] = ()  # the speakers the query names

    def ranked_pages(self, weights: Mapping[str, float] = WEIGHTS) -> list[str]:
        """Page ids by relevance across the tiers: each tier's scores min-max scaled and added with
        `weights` (matched and similar pages, the pages the notes were promoted from, the segments' best
        pages, the pages behind the facts), plus the speaker prior and the session score; then the
        short-term pages not among them, newest first."""
        tiers: dict[str, list[tuple[str, float]]] = {
            "matched": [(hit.page.id, hit.score) for hit in self.matched],
            "similar": [(hit.page.id, hit.score) for hit in self.similar],
            "notes": [(n.note.source.removeprefix(PAGE_SOURCE), n.score) for n in self.notes
                      if (n.note.source or "").startswith(PAGE_SOURCE)],
            "segments": [(hit.page.id, hit.score) for hit in self._segment_pages()],
            "facts": [(page_id, hit.score) for hit in self.facts for page_id in hit.fact.page_ids],
        }
        score: dict[str, float] = {}
        for tier, scored in tiers.items():
            for page_id, scaled in _minmax(scored).items():
                score[page_id] = score.get(page_id, 0.0) + weights.get(tier, 0.0) * scaled
        known = self._known()
        score = self._by_session(self._by_speaker(score, known), known)
        ranked = sorted(score, key=lambda page_id: (-score[page_id], page_id))
        return ranked + [p.id for p in reversed(self.stm) if p.id not in score]

    def _known(self) -> dict[str, Page]:
        """The pages this context holds, by id (a note's or a fact's page may be known by its id only)."""
        hits = (*self.matched, *self.similar, *self._segment_pages())
        return {page.id: page for page in (*self.stm, *(hit.page for hit in hits))}

    def _by_speaker(self, score: dict[str, float], known: dict[str, Page]) -> dict[str, float]:
        if not self.names:
            return score
        speakers = {page_id: split_speaker(page.user_text)[0] for page_id, page in known.items()}
        speakers |= {n.note.source.removeprefix(PAGE_SOURCE): n.note.speaker for n in self.notes if n.note.source}
        return {i: s + (SPEAKER_PRIOR if speakers.get(i) in self.names else 0.0) for i, s in score.items()}

    def _by_session(self, score: dict[str, float], known: dict[str, Page]) -> dict[str, float]:
        shares: dict[str, float] = {}
        for page_id in sorted(score, key=lambda i: -score[i])[:SESSION_WINDOW]:
            if page := known.get(page_id):
                shares[page.session_id] = shares.get(page.session_id, 0.0) + score[page_id]
        top = max(shares.values(), default=0.0)
        if top <= 0:
            return score
        return {
            i: s + SESSION_WEIGHT * shares.get(known[i].session_id, 0.0) / top if i in known else s
            for i, s in score.items()
        }

    def _segment_pages(self) -> list[PageHit]:
        return [page for hit in self.segments for page in hit.pages]

    def prompt(self) -> str:
        """One block with a section per tier; empty tiers say so, so a model knows what it does not know."""
        sections = ["## Recent dialogue (short-term memory)"]
        sections += [_page_line(page) for page in self.stm] or ["(none)"]
        sections.append("\n## Related topics (mid-term memory)")
        for hit in self.segments:
            sections.append(f"- {hit.segment.summary}")
            sections += [f"    {_page_line(p.page)}" for p in hit.pages]
        if not self.segments:
            sections.append("(none)")
        shown = {p.page.id for p in self._segment_pages()} | {p.id for p in self.stm}
        pages = {hit.page.id: hit.page for hit in (*self.matched, *self.similar)}
        limit = max(len(self.matched), len(self.similar))
        if others := [pages[i] for i in self.ranked_pages() if i in pages and i not in shown][:limit]:
            sections.append("\n## Other turns that match (any topic)")
            sections += [_page_line(page) for page in others]
        sections.append("\n## What is known about the user (persona)")
        for kind, title in (("profile", "Profile"), ("user_knowledge", "User knowledge"), ("assistant_knowledge", "Assistant knowledge")):
            facts = [hit.fact.text for hit in self.facts if hit.fact.kind == kind]
            if facts:
                sections.append(f"{title}:")
                sections += [f"- {text}" for text in facts]
        if not self.facts:
            sections.append("(none)")
        sections.append("\n## Long-term memories (notes)")
        sections.append(format_context(self.notes))
        return "\n".join(sections)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "session_id": self.session_id,
            "stm": [page.to_dict() for page in self.stm],
            "segments": [
                {"score": hit.score, "segment": hit.segment.to_dict(),
                 "pages": [{"score": p.score, "page": p.page.to_dict()} for p in hit.pages]}
                for hit in self.segments
            ],
            "facts": [{"score": hit.score, "fact": hit.fact.to_dict()} for hit in self.facts],
            "matched": [{"score": hit.score, "page": hit.page.to_dict()} for hit in self.matched],
            "similar": [{"score": hit.score, "page": hit.page.to_dict()} for hit in self.similar],
            "notes": [hit.to_dict() for hit in self.notes],
            "names": list(self.names),
            "ranked_pages": _jsonable(self.ranked_pages()),
        }


def _minmax(scored: list[tuple[str, float]]) -> dict[str, float]:
    """Scores scaled to 0..1 within one tier (all 1 when they are equal); a page keeps its best."""
    if not scored:
        return {}
    low, high = min(s for _, s in scored), max(s for _, s in scored)
    out: dict[str, float] = {}
    for page_id, value in scored:
        scaled = 1.0 if high - low < 1e-12 else (value - low) / (high - low)
        out[page_id] = max(out.get(page_id, 0.0), scaled)
    return out


def _page_line(page: Page) -> str:
    when = f"[{page.at:%Y-%m-%d %H:%M}] " if page.at else ""
    return f"{when}{page.text}".replace("\n", " / ")
