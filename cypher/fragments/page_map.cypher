// A page as returned to callers: never the embedding; times as epoch milliseconds. The statement binds
// `page`, and `chain` and `seg` (its dialogue chain and segment, either may be null).
page {.id, .tenant, .session_id, .seq, .user_text, .assistant_text, .tier, .keywords, .analysis,
      at: page.at.epochMillis, promoted_at: page.promoted_at.epochMillis, created_at: page.created_at.epochMillis,
      joined_at: page.joined_at.epochMillis,
      chain_id: chain.id, chain_summary: chain.summary, chain_keywords: chain.keywords, segment_id: seg.id}
