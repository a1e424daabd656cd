// How many notes wait for their analysis (of one tenant, or of every one), and when the oldest was stored.
MATCH (n:Note)
WHERE n.analysis = 'pending' AND ($tenant IS NULL OR n.tenant = $tenant)
RETURN count(n) AS pending, min(n.created_at).epochMillis AS oldest
