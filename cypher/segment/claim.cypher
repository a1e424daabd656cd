// A promotion claims its segment before it writes anything: under the tenant lock, and only if no other
// promotion claimed it since it was read (the same `promotions` count). The counters it read are taken off,
// as the paper resets them; visits and pages that arrive while it works keep counting.
@tenant_lock
MATCH (s:Segment {tenant: $tenant, id: $id})
WHERE s.promotions = $promotions AND s.archived_at IS NULL
SET s.promotions = s.promotions + 1, s.promoted_at = $now,
    s.visits = CASE WHEN s.visits > $visits THEN s.visits - $visits ELSE 0 END,
    s.interaction_len = CASE WHEN s.interaction_len > $interaction_len THEN s.interaction_len - $interaction_len
                             ELSE 0 END
RETURN s.id AS id
