// Past the capacity, the coldest active segments are archived: kept with their pages, out of the active set.
MATCH (s:Segment {tenant: $tenant})
WHERE s.archived_at IS NULL
WITH s, @segment_heat AS heat
ORDER BY heat DESC, s.last_access DESC, s.created_at DESC
WITH collect(s) AS ranked
UNWIND ranked[$capacity..] AS s
SET s.archived_at = $now
RETURN s.id AS id
