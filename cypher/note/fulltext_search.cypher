// Lucene BM25 over content, context, keywords and tags; $query is escaped Lucene syntax.
CALL db.index.fulltext.queryNodes('note_text', $query) YIELD node, score
WHERE node.tenant = $tenant AND ($include_invalid OR node.invalid_at IS NULL)
WITH node, score
LIMIT $k
RETURN @note_map AS note, score
