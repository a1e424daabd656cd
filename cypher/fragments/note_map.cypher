// A note as returned to callers: never the embedding; times as epoch milliseconds (UTC), which the
// Python driver decodes far faster than temporal values. Statements write @note_map for it; the
// variable must be called `node`. What adapters attached (cypher/attached/) is read by their own statements.
node {.*, embedding: null, external_vector: null, claimed_by: null, claim_until: null, attached: null, attached_before: null, attached_before_at: null,
      event_time: node.event_time.epochMillis, created_at: node.created_at.epochMillis,
      updated_at: node.updated_at.epochMillis, last_accessed: node.last_accessed.epochMillis,
      valid_from: node.valid_from.epochMillis, valid_to: node.valid_to.epochMillis,
      invalid_at: node.invalid_at.epochMillis, archived_at: node.archived_at.epochMillis,
      archived_periods: [bound IN coalesce(node.archived_periods, []) | bound.epochMillis],
      neighbourhood_after: [bound IN coalesce(node.neighbourhood_after, []) | bound.epochMillis]}
