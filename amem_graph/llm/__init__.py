"""LLM analysis: the OpenAI-compatible client, the prompts, and the analysers (LLM and heuristic)."""

from .analyser import Analyser, LLMAnalyser
from .client import LLMClient, Usage
from .heuristic import HeuristicAnalyser

__all__ = ["Analyser", "HeuristicAnalyser", "LLMAnalyser", "LLMClient", "Usage"]
