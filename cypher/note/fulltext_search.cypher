// Lucene BM25 over content, context, keywords, tags and neighbourhood; $query is built by the store
// from the user's words only (store/neo4j.py lucene_query), never raw user syntax.
CALL db.index.fulltext.queryNodes('note_text', $query) YIELD node, score
WHERE @note_filter
WITH node, score
LIMIT $k
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score
