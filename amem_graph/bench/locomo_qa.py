"""End-to-end LoCoMo QA: the memories `context` gives, answered by the configured LLM, scored as the LoCoMo
code scores them: token F1 after normalisation (per comma-separated part for multi-hop, the first
';' part for open-domain; adversarial counts "not mentioned"), and BLEU-1."""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Sequence

from ..core.text import stem
from ..errors import LLMError
from ..ingest.locomo import Question
from ..llm.client import LLMClient
from ..llm.prompts import QA_SCHEMA, qa_messages

OPERATION = "answer_question"
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
UNANSWERABLE = ("not mentioned", "no information available")


def normalise(text: str) -> list[str]:
    """Lower case, no punctuation or articles, stemmed tokens (the LoCoMo code uses Porter's stemmer;
    this is the engine's light one)."""
    text = "".join(ch for ch in str(text).lower().replace(",", "") if ch not in string.punctuation)
    return [stem(token) for token in _ARTICLES.sub(" ", text).split()]


def f1(prediction: str, truth: str) -> float:
    predicted, gold = normalise(prediction), normalise(truth)
    common = sum((Counter(predicted) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, truth: str) -> float:
    """Unigram precision (clipped) with the brevity penalty."""
    predicted, gold = normalise(prediction), normalise(truth)
    if not predicted or not gold:
        return 0.0
    precision = sum((Counter(predicted) & Counter(gold)).values()) / len(predicted)
    penalty = 1.0 if len(predicted) > len(gold) else math.exp(1 - len(gold) / len(predicted))
    return precision * penalty


def score(question: Question, prediction: str) -> dict[str, float]:
    if question.category == 5:
        said = float(any(phrase in prediction.lower() for phrase in UNANSWERABLE))
        return {"f1": said, "bleu1": said}
    truth = question.answer or ""
    if question.category == 3:
        truth = truth.split(";")[0].strip()
    if question.category == 1:
        parts = [p.strip() for p in prediction.split(",") if p.strip()] or [prediction]
        golds = [g.strip() for g in truth.split(",") if g.strip()] or [truth]
        return {
            "f1": sum(max(f1(p, g) for p in parts) for g in golds) / len(golds),
            "bleu1": bleu1(prediction, truth),
        }
    return {"f1": f1(prediction, truth), "bleu1": bleu1(prediction, truth)}


def answer(client: LLMClient, question: str, memories: str) -> str:
    """The model's short answer; an LLM failure answers "" (scored 0) rather than ending the run."""
    try:
        reply = client.complete_json(OPERATION, qa_messages(question, memories), QA_SCHEMA, max_tokens=80)
    except LLMError:
        return ""
    return str(reply.data.get("answer", ""))


def table(rows: Sequence[tuple[Question, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean F1 and BLEU-1 in percent, overall (categories 1-4) and per category."""
    out: dict[str, dict[str, float]] = {}
    groups: dict[str, list[dict[str, float]]] = {"overall": [s for q, s in rows if q.category != 5]}
    for q, s in rows:
        groups.setdefault(str(q.category), []).append(s)
    for name, scores in sorted(groups.items()):
        if scores:
            out[name] = {m: round(100 * sum(s[m] for s in scores) / len(scores), 1) for m in ("f1", "bleu1")}
            out[name]["questions"] = len(scores)
    return out
