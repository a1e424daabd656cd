// Sessions that still hold short-term pages (what `flush` without a session empties).
MATCH (page:Page {tenant: $tenant})
WHERE page.tier = 'stm'
RETURN DISTINCT page.session_id AS session_id
