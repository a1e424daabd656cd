// The tenant and a SearchFilter's conditions on `node` (models.SearchFilter.params); empty lists and
// nulls do not filter.
node.tenant = $tenant AND ($include_invalid OR node.invalid_at IS NULL)
AND ($after IS NULL OR node.event_time >= $after) AND ($before IS NULL OR node.event_time < $before)
AND (size($tags) = 0 OR any(tag IN node.tags WHERE tag IN $tags))
AND (size($speakers) = 0 OR node.speaker IN $speakers)
AND (size($sessions) = 0 OR node.session IN $sessions)
