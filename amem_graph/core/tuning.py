"""How search ranks: the ingredients of retrieval and their weights, as data (`Settings.tuning`,
`AgenticMemory(tuning=...)`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..models import LINK_TYPES

Fusion = Literal["minmax", "rrf"]
DENSE_WEIGHT = 0.5  # weighted min-max fusion (A-Mem's); with the neighbourhood in BM25, 0.5 beat 0.6 on LoCoMo
EXPANSION_TYPES: frozenset[str] = LINK_TYPES | {"NEXT"}  # NEXT: session order, walked both ways


@dataclass(frozen=True)
class Tuning:
    """How search ranks. The defaults are the settings measured best on the LoCoMo, REALTALK and BEAM dev sets
    together (BENCHMARKS.md); a weight of 0 turns its ingredient off."""

    fusion: Fusion = "minmax"
    dense_weight: float = DENSE_WEIGHT  # min-max fusion: α·dense + (1−α)·lexical
    rrf_k: int = 60
    pool: int = 50  # notes taken from each index before fusion
    seeds: int = 20  # best fused notes that expansion starts from
    deep_seeds: int = 5  # of those, the ones it follows past the first hop (paths multiply per hop)
    decay: float = 0.5  # per hop
    weights: Mapping[str, float] = field(
        default_factory=lambda: {
            "NEXT": 0.6, "RELATES_TO": 0.5, "ELABORATES": 0.7, "SUPPORTS": 0.7, "CONTRADICTS": 0.5,
            "FOLLOWS": 0.6, "SAME_ENTITY": 0.7,
        }
    )
    speaker_prior: float = 0.3  # added to notes by a speaker the query names
    first_person: bool = True  # a question in the first person names the user: every speaker but the assistant
    vocatives: bool = True  # a speaker is also named by what the others call them in the chat ("Hey Kate!")
    passages: bool = True  # a long note's dense score is its best passage's when that beats its own vector's
    # A passage counts at its cosine less this (on the reference model's scale: Embedder.cosine_unit): a long note
    # has many windows, each a chance to look like the query, and at par its windows crowd out short notes.
    passage_margin: float = 0.1
    # Entity anchors: the notes that mention an entity the query names gain entity_weight × their share of
    # the best anchor score; an entity weighs 1 / log2(2 + the notes mentioning it), so a rare name says more.
    entity_weight: float = 0.0
    entity_notes: int = 30  # the newest notes read per named entity
    strip_names: bool = True  # embed the query without the speakers it names
    # × the best score in the note's session: a day of chat or a long session says less than LoCoMo's short ones
    session_weight: float = 0.15
    when_boost: float = 0.1  # added to time-bearing notes on "when" questions
    date_boost: float = 0.3  # added to notes whose event time falls on a day the question names ("on 19.01.2024")
    mmr: float | None = None  # λ of maximal marginal relevance (lexical similarity); None: off
    lexical_stop_words: bool = True  # drop question and filler words from the BM25 query
    lexical_names: bool = True  # keep the speakers a query names in the BM25 query
    # Lexical fields and boosts (None: every field of the index). The context counts a little, so what
    # evolution writes there is found; keywords and tags repeat the content's words, and at full weight
    # the derived fields cost 5 points of recall@10 on LoCoMo.
    fields: Mapping[str, float] | None = field(
        default_factory=lambda: {"content": 0.5, "neighbourhood": 1.0, "context": 0.2}
    )

    def __post_init__(self) -> None:
        if unknown := set(self.weights) - EXPANSION_TYPES:
            raise ValueError(f"no such link types to expand over: {sorted(unknown)}")
