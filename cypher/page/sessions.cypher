// Each session of a tenant: its pages, how many are still short-term, and when its newest was stored.
MATCH (page:Page {tenant: $tenant})
RETURN page.session_id AS session_id, count(*) AS pages,
       sum(CASE WHEN page.tier = 'stm' THEN 1 ELSE 0 END) AS stm, max(page.created_at).epochMillis AS latest
