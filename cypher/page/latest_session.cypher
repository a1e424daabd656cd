// The session of the tenant's newest page.
MATCH (page:Page {tenant: $tenant})
WHERE page.created_at IS NOT NULL
RETURN page.session_id AS session_id
ORDER BY page.created_at DESC, page.seq DESC, page.id DESC LIMIT 1
