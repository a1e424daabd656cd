// The persona facts of `f` a context may use: the tenant's, active, and assistant knowledge only of
// $assistant (knowledge one assistant gained with this user is not another assistant's); every active fact
// when $assistant is null.
f.tenant = $tenant AND f.archived_at IS NULL AND f.invalid_at IS NULL
AND ($assistant IS NULL OR f.kind <> 'assistant_knowledge' OR f.assistant = $assistant)
