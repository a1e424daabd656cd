"""The offline analyser: RAKE keywords, topic tags, a one-sentence context, evidence-named links.

Deterministic and network-free, so memory works without an LLM and stands in when the LLM fails.
RAKE (Rose et al., 2010, "Automatic keyword extraction from individual documents"): candidate phrases
are the runs of words between stop words and punctuation; a word scores degree/frequency; a phrase
scores the sum of its words.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

from ..core.english import COMMON_RANK, rank
from ..core.text import STOP_WORDS, excerpt, split_speaker, stem, word_form, word_key
from ..models import NeighbourUpdate, NoteAnalysis, NoteInput, ProposedLink, SearchHit

VERSION = "heuristic-v1"
MAX_KEYWORDS = 5
MAX_TAGS = 3
MAX_PHRASE_WORDS = 3
LINK_COSINE = 0.55  # link on similarity alone from here (MiniLM cosine of related sentences)
SHARED_COSINE = 0.30  # with a shared term, link from here
EVOLVE_CONFIDENCE = 0.5  # a link this confident lets the new note's tags evolve its neighbour

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*|[.,!?;:()\[\]\"“”…]")


def _phrases(text: str) -> list[list[str]]:
    phrases: list[list[str]] = []
    current: list[str] = []
    for token in _TOKEN.findall(text):
        word = token.lower().replace("’", "'")
        boundary = not word[0].isalnum() or word in STOP_WORDS or word.isdigit() or len(word) < 2
        if boundary:
            if current:
                phrases.append(current)
            current = []
            continue
        current.append(word)
        if len(current) == MAX_PHRASE_WORDS:
            phrases.append(current)
            current = []
    if current:
        phrases.append(current)
    return phrases


def rake(text: str, limit: int = MAX_KEYWORDS) -> tuple[list[str], dict[str, float]]:
    """Top `limit` key phrases of `text` (best first) and every content word's RAKE score."""
    phrases = _phrases(text)
    frequency: dict[str, int] = defaultdict(int)
    degree: dict[str, int] = defaultdict(int)
    for phrase in phrases:
        for word in phrase:
            frequency[word] += 1
            degree[word] += len(phrase)
    word_score = {word: degree[word] / frequency[word] for word in frequency}
    scored: dict[str, tuple[float, int]] = {}
    for position, phrase in enumerate(phrases):
        key = " ".join(phrase)
        if key not in scored:
            scored[key] = (sum(word_score[w] for w in phrase), position)
    ranked = sorted(scored, key=lambda k: (-scored[k][0], scored[k][1]))
    return ranked[:limit], word_score


def _distinctive(word: str) -> bool:
    """A word that says what notes are about: no common English word ("use", "bit", "love")."""
    found = rank(word)
    return found is None or found >= COMMON_RANK


def content_terms(texts: Iterable[str]) -> dict[str, str]:
    """Stem → first surface form, for the content words of `texts` (also what an LLM's answer is checked
    against: llm.analyser)."""
    terms: dict[str, str] = {}
    for text in texts:
        for phrase in _phrases(text):
            for word in phrase:
                terms.setdefault(stem(word), word)
    return terms


class HeuristicAnalyser:
    """Fills keywords, tags, context, links and modest neighbour updates without any network call."""

    kind = "heuristic"
    model: str | None = VERSION

    def analyse(self, note: NoteInput, candidates: Sequence[SearchHit]) -> NoteAnalysis:
        speaker, body = split_speaker(note.content)
        keywords, word_score = rake(body)
        words = self._tags(keywords, word_score)  # as written; stored in one form each (word_form)
        tags = [word_form(w) for w in words]
        mine = content_terms([*keywords, *words])
        links: list[ProposedLink] = []
        updates: list[NeighbourUpdate] = []
        for hit in candidates:
            link = self._link(hit, mine)
            if link is None:
                continue
            links.append(link)
            if link.confidence < EVOLVE_CONFIDENCE or (note.session and hit.note.session == note.session):
                # A neighbour evolves for a close relation only (a loose one is a link, not a new tag), and from
                # another session: within one, the turns' neighbourhood text already joins them.
                continue
            theirs = content_terms([split_speaker(hit.note.content)[1], *hit.note.keywords])
            held = {word_key(t) for t in hit.note.tags}
            new_tags = [t for w, t in zip(words, tags, strict=True)
                        if stem(w) in theirs and word_key(t) not in held and _distinctive(t)][:2]
            if new_tags:
                updates.append(
                    NeighbourUpdate(
                        id=hit.note.id, add_tags=tuple(new_tags),
                        reason=f"tags {', '.join(new_tags)} shared with the related {excerpt(note.content)}",
                    )
                )
        if updates:  # one add evolves one note: the one it relates to most closely
            confidence = {link.target_id: link.confidence for link in links}
            updates = [max(updates, key=lambda u: confidence[u.id])]
        return NoteAnalysis(
            keywords=tuple(keywords), context=self._context(speaker, keywords, note), tags=tuple(tags),
            links=tuple(links), updates=tuple(updates), analysis="heuristic", model=VERSION,
        )

    @staticmethod
    def _tags(keywords: Sequence[str], word_score: dict[str, float]) -> list[str]:
        words = {w for k in keywords for w in k.split() if len(w) >= 3 and not w.isdigit()}
        ranked = sorted(words, key=lambda w: (-word_score.get(w, 0.0), w))
        tags: list[str] = []
        for word in ranked:
            if word_key(word_form(word)) not in {word_key(word_form(t)) for t in tags}:
                tags.append(word)
        return tags[:MAX_TAGS]

    @staticmethod
    def _context(speaker: str | None, keywords: Sequence[str], note: NoteInput) -> str:
        topics = ", ".join(keywords[:3]) if keywords else "a short remark"
        who = f"{speaker} talks about" if speaker else "About"
        when = f" ({note.event_time:%d %B %Y})" if note.event_time else ""
        return f"{who} {topics}{when}."

    @staticmethod
    def _link(hit: SearchHit, mine: dict[str, str]) -> ProposedLink | None:
        cosine = None if hit.vector_score is None else 2 * hit.vector_score - 1
        other = hit.note
        theirs = content_terms([split_speaker(other.content)[1], *other.keywords, *other.tags])
        # What two notes share says why they belong together only if it is no common word ("time", "love").
        shared = sorted(word for s in mine.keys() & theirs.keys() if _distinctive(word := mine[s]))
        if cosine is None:
            qualifies = len(shared) >= 2  # found by words alone: ask for two of them
        else:
            qualifies = cosine >= LINK_COSINE or (bool(shared) and cosine >= SHARED_COSINE)
        if not qualifies:
            return None
        said = excerpt(other.content)
        reason = f"both mention {', '.join(shared[:3])}: {said}" if shared else f"says something alike: {said}"
        confidence = min(1.0, 0.6 * max(cosine or 0.0, 0.0) + 0.15 * len(shared))
        return ProposedLink(other.id, "RELATES_TO", reason, round(max(confidence, 0.05), 3))
