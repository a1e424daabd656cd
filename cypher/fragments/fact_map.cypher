// A persona fact as returned to callers (never the embedding); the statement binds `f`.
f {.id, .tenant, .kind, .text, .confidence, .mentions, .uses, .assistant, .analysis,
   created_at: f.created_at.epochMillis, updated_at: f.updated_at.epochMillis}
