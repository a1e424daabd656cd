// Segments a context used: one visit each (N_visit), and they are touched now.
UNWIND $ids AS id
MATCH (s:Segment {tenant: $tenant, id: id})
SET s.visits = s.visits + 1, s.last_access = $now
