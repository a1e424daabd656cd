"""Store-free unit tests of lexical search: the embedded store's BM25 (Lucene's English analyzer, BM25 with
k1 1.2 and b 0.75, one-byte length norms) against the formula worked out by hand on a tiny corpus, and the
Lucene query builders the Neo4j store sends."""

from __future__ import annotations

import math
import re

import pytest

from amem_graph.errors import InvalidInput
from amem_graph.store import bm25 as rule
from amem_graph.store.bm25 import Document, analyse, clauses, norm_length, query_terms, score
from amem_graph.store.embedded.fulltext import FulltextIndex
from amem_graph.store.lucene import MAX_QUERY_TERMS, PAGE_FIELDS, lucene_query, query_words

pytestmark = pytest.mark.embedded


def test_the_analyzer_drops_stop_words_and_possessives_and_stems() -> None:
    assert analyse("The dogs are running") == ["dog", "run"]  # "the", "are": Lucene's English stop set
    assert analyse("Caroline's") == analyse("Caroline")
    assert analyse("cat cat dog") == ["cat", "cat", "dog"]  # repeats count
    words = analyse("O'Neil scored 3.5 points")
    assert "o'neil" in words and "3.5" in words  # the standard tokenizer keeps them whole
    assert [len(t) for t in analyse("x" * 600)] == [255, 255, 90]  # and cuts a token past 255 characters


def test_lengths_are_read_back_as_lucenes_one_byte_norm() -> None:
    assert [norm_length(n) for n in (0, 1, 23, 24, 40)] == [0, 1, 23, 24, 40]  # exact while small
    # past 24 + 16 the byte keeps 4 significant bits: 41 = 24 + 17 → 24 + 16; 100 = 24 + 76 → 24 + 72
    assert (norm_length(41), norm_length(42), norm_length(43), norm_length(100)) == (40, 42, 42, 96)


class Corpus(FulltextIndex):
    """One tenant's index, as the tests read it: `scores` without the tenant."""

    def update(self, key: int, props: dict | None) -> None:  # type: ignore[override]
        super().update(key, None if props is None else {"tenant": "t", **props})

    def scores(self, words, fields, tenant: str = "t"):  # type: ignore[override]
        return super().scores(tenant, words, fields)


@pytest.fixture(autouse=True)
def unsmoothed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The formula as Lucene has it: no English background (its own test below sets it)."""
    monkeypatch.setattr(rule, "BACKGROUND_DOCS", 0.0)


def corpus() -> Corpus:
    index = Corpus(("content", "context"))
    index.update(1, {"content": "cat"})  # length 1
    index.update(2, {"content": "cat cat dog"})  # length 3, cat twice
    index.update(3, {"content": "bird", "context": "a cat"})  # "a" is a stop word
    return index


def bm25(tf: int, length: int, average: float, n_docs: int, n_with: int) -> float:
    idf = math.log(1 + (n_docs - n_with + 0.5) / (n_with + 0.5))
    return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * length / average))


def test_bm25_of_a_tiny_corpus_follows_the_formula() -> None:
    scores = corpus().scores(["cat"], {"content": 1.0})
    # content: 3 documents of lengths 1, 3, 1 (average 5/3); "cat" in 2 of them; idf = ln(1 + 1.5/2.5) = ln 1.6
    assert scores[1] == pytest.approx(math.log(1.6) / (1 + 1.2 * (0.25 + 0.75 * 1 / (5 / 3))))  # = ln 1.6 / 1.84
    assert scores[2] == pytest.approx(math.log(1.6) * 2 / (2 + 1.2 * (0.25 + 0.75 * 3 / (5 / 3))))  # 2 ln 1.6 / 3.92
    assert scores[1] > scores[2]  # the short note wins although the long one says "cat" twice
    assert set(scores) == {1, 2}  # note 3 has "cat" only in its context, which this query does not search


def test_another_tenants_documents_move_no_score() -> None:
    index = corpus()
    alone = index.scores(["cat dog"], {"content": 1.0, "context": 1.0})
    for key in range(10, 400):  # a neighbour that writes the query's words again and again
        FulltextIndex.update(index, key, {"tenant": "other", "content": "cat " * (key % 7) + "dog bird", "context": "cat"})
    assert index.scores(["cat dog"], {"content": 1.0, "context": 1.0}) == alone  # exactly, not approximately
    assert set(index.scores(["cat"], None, tenant="other")) == set(range(10, 400))
    assert index.scores(["cat"], None, tenant="nobody") == {}


def test_one_documents_score_is_what_the_postings_sum() -> None:
    """bm25.score (the Neo4j store's rescoring of Lucene's candidates) and the postings (the embedded store's)
    give the same floats, so both stores rank alike."""
    index = corpus()
    text = index.tenants["t"]
    boosts = {"content": 1.0, "context": 0.5}
    terms = query_terms(["cat", "dog", "cat"])
    query = clauses(terms, boosts, text.statistics(terms, boosts))
    sums = text.scores(terms, boosts)
    assert sums == {key: score(text.documents[key], query) for key in sums}
    assert score(Document.of(("content", "context"), ["fish", None]), query) == 0.0


def test_field_boosts_and_unsearched_fields() -> None:
    index = corpus()
    both = index.scores(["cat"], {"content": 1.0, "context": 0.2})
    # context: only note 3 has one (length 1, the average), and it holds "cat": idf = ln(1 + 0.5/1.5)
    assert both[3] == pytest.approx(0.2 * bm25(1, 1, 1.0, 1, 1))
    assert both[1] == pytest.approx(bm25(1, 1, 5 / 3, 3, 2))
    halved = index.scores(["cat"], {"content": 0.5, "context": 0})
    assert halved == pytest.approx({1: both[1] / 2, 2: both[2] / 2})  # a boost of 0 leaves the field out
    assert index.scores(["cat"], None) == pytest.approx({**both, 3: bm25(1, 1, 1.0, 1, 1)})  # None: every field, boost 1


def test_each_query_word_is_a_clause() -> None:
    index = corpus()
    once, twice = index.scores(["cat"], {"content": 1}), index.scores(["cat", "cat"], {"content": 1})
    assert twice == pytest.approx({key: 2 * score for key, score in once.items()})
    both = index.scores(["cat dog"], {"content": 1})
    assert both[2] == pytest.approx(once[2] + bm25(1, 3, 5 / 3, 3, 1))
    assert index.scores(["the of"], {"content": 1}) == {}  # stop words only: nothing matches


def test_reindexing_and_removing_keep_the_statistics_exact() -> None:
    index = corpus()
    index.update(2, {"content": "cat cat dog"})  # the same text: left as it is
    assert index.tenants["t"].tokens["content"] == 5
    index.update(2, None)  # gone
    assert index.tenants["t"].tokens["content"] == 2 and "dog" not in index.tenants["t"].postings["content"]
    # content now: notes 1 and 3, lengths 1 and 1; "cat" in 1 of 2
    assert index.scores(["cat"], {"content": 1}) == pytest.approx({1: bm25(1, 1, 1.0, 2, 1)})
    index.update(1, {"content": "dog"})
    assert index.scores(["cat"], {"content": 1}) == {}


def test_query_words_are_plain_lower_case_words_and_capped() -> None:
    assert query_words('What is "Caroline\'s" dog AND title:x* OR (cat)~2?') == [
        "what", "is", "caroline", "s", "dog", "and", "title", "x", "or", "cat", "2"]
    assert len(query_words("word " * (MAX_QUERY_TERMS + 50))) == MAX_QUERY_TERMS


def test_lucene_query_holds_no_syntax_from_the_user_and_boosts_named_fields() -> None:
    plain = lucene_query('title:x* AND "dog" OR (cat)~2 -bird +fish \\ ^3')
    assert re.fullmatch(r"[a-z0-9 ]+", plain) and " AND " not in plain  # lower-case and/or are words, not operators
    assert lucene_query("?!") == ""
    assert lucene_query("Dog park", {"content": 0.5, "neighbourhood": 1.0, "context": 0}) == (
        "content:(dog park)^0.5 neighbourhood:(dog park)^1")
    assert lucene_query("dog", {"user_text": 2}, PAGE_FIELDS) == "user_text:(dog)^2"
    with pytest.raises(InvalidInput, match="unknown text fields"):
        lucene_query("dog", {"user_text": 1})  # a page field, not a note field


def test_a_few_notes_learn_from_english_which_words_are_common(monkeypatch: pytest.MonkeyPatch) -> None:
    """With BACKGROUND_DOCS documents of English beside a tenant's own, a word common in English ("time") weighs
    less than a rare one ("pottery"), even where the tenant's notes hold each as often."""
    monkeypatch.setattr(rule, "BACKGROUND_DOCS", 30.0)
    english = rule.english()
    assert english["time"] > 100 * english["potteri"]  # by stem
    index = Corpus(("content",))
    index.update(1, {"content": "pottery time"})
    index.update(2, {"content": "garden"})
    found = index.scores(["pottery time"], None)
    stats = index.tenants["t"].statistics(query_terms(["pottery time"]), {"content": 1.0})
    weights = {term: weight for _, term, weight, _, _ in clauses(query_terms(["pottery time"]), {"content": 1.0}, stats)}
    assert weights["potteri"] > weights["time"]  # each held by one of the two notes
    length = 1.5  # the tenant's average content length, which the English documents take
    df = 1 + 30 * -math.expm1(-length * english["time"])
    assert weights["time"] == pytest.approx(math.log(1 + (2 + 30 - df + 0.5) / (df + 0.5)))
    assert set(found) == {1}
