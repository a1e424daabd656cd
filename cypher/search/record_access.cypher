// Search results count as retrievals (MemoryOS-style heat reads these). Written after the answer, off
// the hot path; it changes no version: what a note says is untouched.
UNWIND $ids AS id
MATCH (n:Note {tenant: $tenant, id: id})
SET n.retrieval_count = coalesce(n.retrieval_count, 0) + 1, n.last_accessed = $now
