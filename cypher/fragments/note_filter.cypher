// The tenant and a SearchFilter's conditions on `node` (models.SearchFilter.params and .admits); empty lists
// and nulls do not filter. With $as_of (recorded time), notes recorded after it are left out, and a supersession
// or an archiving recorded after it is not counted; with $valid_at (valid time), the notes that held then are
// kept, superseded since or not.
node.tenant = $tenant AND ($as_of IS NULL OR node.created_at <= $as_of)
AND ($include_archived OR CASE WHEN $as_of IS NULL THEN node.archived_at IS NULL
     ELSE size([bound IN coalesce(node.archived_periods, []) WHERE bound <= $as_of]) % 2 = 0 END)
AND CASE WHEN $valid_at IS NULL
  THEN $include_invalid OR node.invalid_at IS NULL OR node.invalid_at > $as_of
  ELSE node.valid_from <= $valid_at
       AND (node.invalid_at IS NULL OR node.invalid_at > $as_of OR coalesce(node.valid_to, node.invalid_at) > $valid_at)
  END
AND ($after IS NULL OR node.event_time >= $after) AND ($before IS NULL OR node.event_time < $before)
AND (size($tags) = 0 OR any(tag IN node.tags WHERE tag IN $tags))
AND (size($speakers) = 0 OR node.speaker IN $speakers)
AND (size($sessions) = 0 OR node.session IN $sessions)
