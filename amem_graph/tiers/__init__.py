"""MemoryOS tiers on the note graph: short-term pages, mid-term segments with heat, long-term persona."""

from .analysis import HeuristicTierAnalyser, LLMTierAnalyser, TierAnalyser
from .context import FactHit, PageHit, SegmentHit, TierContext
from .memory import MemoryTiers, Promotion

__all__ = [
    "FactHit", "HeuristicTierAnalyser", "LLMTierAnalyser", "MemoryTiers", "PageHit", "Promotion", "SegmentHit",
    "TierAnalyser", "TierContext",
]
