// Lucene matches the query's words ($query is built by the store from the user's words only: store/lucene.py,
// never raw user syntax) and hands over the tenant's first $fetch notes by its database-wide BM25; the store
// scores them again with the tenant's own statistics (store/neo4j_text.py), which this reads too: the tenant's
// Corpus and the Term of each query term. $fields are the searched fields, whose texts are rescored. Candidates
// come brief ($brief) or whole.
OPTIONAL MATCH (corpus:Corpus {tenant: $tenant, index: 'note_text'})
CALL (corpus) {
  UNWIND $terms AS term
  OPTIONAL MATCH (t:Term {tenant: $tenant, index: 'note_text', term: term})
  RETURN collect([term, t.df]) AS df
}
CALL db.index.fulltext.queryNodes('note_text', $query) YIELD node, score
WHERE @note_filter
WITH corpus, df, node, score
LIMIT $fetch
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score, [field IN $fields | node[field]] AS texts, corpus.docs AS docs,
       corpus.tokens AS tokens, df
