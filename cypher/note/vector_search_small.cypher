// A tenant of no more than $most notes is searched by an exact scan, whose answer no other tenant's vectors can
// change: this counts its notes (up to $most + 1) and, when it is that small, scans them. `held` tells the store
// to use the vector index instead (note/vector_search) when the tenant is larger.
CALL () {
  MATCH (counted:Note {tenant: $tenant})
  WHERE counted.created_at IS NOT NULL
  WITH counted LIMIT $most + 1
  RETURN count(counted) AS held
}
CALL (held) {
  WITH held WHERE held <= $most
  @note_scan
  RETURN collect({note: CASE WHEN $brief THEN @note_brief ELSE @note_map END, score: score}) AS hits
}
RETURN held, hits
