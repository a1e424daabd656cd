"""What `context_for` gathers from every tier, as structured data and as one prompt block with sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..models import Fact, Page, SearchHit, Segment, _jsonable
from ..retrieval import format_context

PAGE_SOURCE = "page:"  # the source of a note promoted from a page: "page:<page id>"
RRF_K = 60
FACT_WEIGHT = 0.5  # a fact points at its page less precisely than the page or the note itself does


@dataclass(frozen=True)
class PageHit:
    page: Page
    score: float  # cosine to the query


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

    def ranked_pages(self) -> list[str]:
        """Page ids by relevance across the tiers: reciprocal-rank fusion of the segment pages (by cosine),
        the pages the notes were promoted from (in search order) and the pages behind the facts; then the
        short-term pages, newest first."""
        lists: list[tuple[float, list[str]]] = [
            (1.0, [hit.page.id for hit in sorted(self._segment_pages(), key=lambda h: -h.score)]),
            (1.0, [n.note.source.removeprefix(PAGE_SOURCE) for n in self.notes if (n.note.source or "").startswith(PAGE_SOURCE)]),
            (FACT_WEIGHT, [page_id for hit in self.facts for page_id in hit.fact.page_ids]),
        ]
        score: dict[str, float] = {}
        for weight, ids in lists:
            for rank, page_id in enumerate(dict.fromkeys(ids)):
                score[page_id] = score.get(page_id, 0.0) + weight / (RRF_K + rank + 1)
        ranked = sorted(score, key=lambda page_id: -score[page_id])
        return ranked + [p.id for p in reversed(self.stm) if p.id not in score]

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
            "notes": [hit.to_dict() for hit in self.notes],
            "ranked_pages": _jsonable(self.ranked_pages()),
        }


def _page_line(page: Page) -> str:
    when = f"[{page.at:%Y-%m-%d %H:%M}] " if page.at else ""
    return f"{when}{page.text}".replace("\n", " / ")
