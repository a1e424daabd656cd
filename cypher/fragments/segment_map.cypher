// A segment as returned to callers (never the embedding); the statement binds `s`.
s {.id, .tenant, .summary, .keywords, .keyword_counts, .pages, .visits, .interaction_len, .promotions, .analysis,
   last_access: s.last_access.epochMillis, created_at: s.created_at.epochMillis,
   archived_at: s.archived_at.epochMillis, promoted_at: s.promoted_at.epochMillis}
