// The persona facts of `f` a context may use: the tenant's, active, and assistant knowledge only of
// $assistant (knowledge one assistant gained with this user is not another assistant's); every active fact
// when $assistant is null. With $as_of, active then (timeline.tier_held): recorded by then, and archived or
// superseded only later, if at all.
f.tenant = $tenant
AND CASE WHEN $as_of IS NULL THEN f.archived_at IS NULL AND f.invalid_at IS NULL
    ELSE f.created_at <= $as_of AND coalesce(f.archived_at > $as_of, true) AND coalesce(f.invalid_at > $as_of, true) END
AND ($assistant IS NULL OR f.kind <> 'assistant_knowledge' OR f.assistant = $assistant)
