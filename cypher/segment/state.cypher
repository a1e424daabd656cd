// One segment as a join (centroid, keyword counts, summary, page count) or a promotion (counters) reads it.
MATCH (s:Segment {tenant: $tenant, id: $id})
RETURN s.embedding AS embedding, s.keywords AS keywords, s.keyword_counts AS keyword_counts,
       s.summary AS summary, s.pages AS pages, s.archived_at IS NOT NULL AS archived, s.promotions AS promotions,
       s.visits AS visits, s.interaction_len AS interaction_len
