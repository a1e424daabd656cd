// What a page joining segment `s` updates: its centroid, keyword counts and summary, and its page count
// (the version a join must still find).
MATCH (s:Segment {tenant: $tenant, id: $id})
WHERE s.archived_at IS NULL
RETURN s.embedding AS embedding, s.keywords AS keywords, s.keyword_counts AS keyword_counts,
       s.summary AS summary, s.pages AS pages
