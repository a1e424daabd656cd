// Lucene matches the query's words ($query: built by the store from the user's words only) among the tenant's
// pages, the first $fetch by its database-wide BM25, which the store scores again with the tenant's own
// statistics (store/neo4j_text.py), read here too. With $as_of, the pages recorded by then.
OPTIONAL MATCH (corpus:Corpus {tenant: $tenant, index: 'page_text'})
CALL (corpus) {
  UNWIND $terms AS term
  OPTIONAL MATCH (t:Term {tenant: $tenant, index: 'page_text', term: term})
  RETURN collect([term, t.df]) AS df
}
CALL db.index.fulltext.queryNodes('page_text', $query) YIELD node AS page, score
WHERE page.tenant = $tenant AND ($as_of IS NULL OR page.created_at <= $as_of)
WITH corpus, df, page, score
LIMIT $fetch
OPTIONAL MATCH (chain:Chain)-[:HAS_PAGE]->(page)
OPTIONAL MATCH (seg:Segment)-[:HAS_PAGE]->(page)
RETURN @page_map AS page, score, [field IN $fields | page[field]] AS texts, corpus.docs AS docs,
       corpus.tokens AS tokens, df
