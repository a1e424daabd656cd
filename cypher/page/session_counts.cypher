// How many pages each session of a tenant holds: where a resumed ingest of turns picks up.
MATCH (page:Page {tenant: $tenant})
RETURN page.session_id AS session_id, count(*) AS pages
