// Exact cosine over the tenant's notes that pass the filter: the fallback of an index search that found fewer
// than k of them.
@note_scan
RETURN CASE WHEN $brief THEN @note_brief ELSE @note_map END AS note, score
