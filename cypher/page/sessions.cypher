// Each session of a tenant: its pages, how many are still short-term, and when its newest was stored; with
// $as_of, among the pages recorded by then, as they were then.
MATCH (page:Page {tenant: $tenant})
WHERE page.created_at IS NOT NULL AND ($as_of IS NULL OR page.created_at <= $as_of)
RETURN page.session_id AS session_id, count(*) AS pages,
       sum(CASE WHEN CASE WHEN $as_of IS NULL THEN page.tier = 'stm'
                          ELSE page.joined_at IS NULL OR page.joined_at > $as_of END THEN 1 ELSE 0 END) AS stm,
       max(page.created_at).epochMillis AS latest
