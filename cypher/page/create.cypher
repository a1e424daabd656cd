// A new page at the end of its session (NEXT from the previous one) and in its dialogue chain: the chain
// of the previous page when the turn continues it, else a new one. It runs after the tenant lock, which orders concurrent turns.
// Its neighbourhood (the turns around it, which the page_text index reads) is the two turns before it and
// itself; the two pages before it gain its text, so each page's grows to two turns on either side.
OPTIONAL MATCH (last:Page {tenant: $tenant, session_id: $session_id})
WHERE last.seq IS NOT NULL
WITH last ORDER BY last.seq DESC LIMIT 1
CREATE (page:Page {id: $id, tenant: $tenant, session_id: $session_id, seq: coalesce(last.seq, 0) + 1,
                   user_text: $user_text, assistant_text: $assistant_text, at: $at, created_at: $now,
                   keywords: $keywords, tier: 'stm', analysis: $analysis, model: $model,
                   neighbourhood: $neighbourhood})
FOREACH (_ IN CASE WHEN last IS NULL THEN [] ELSE [1] END | CREATE (last)-[:NEXT]->(page))
MERGE (chain:Chain {id: $chain_id})
ON CREATE SET chain.tenant = $tenant, chain.session_id = $session_id, chain.created_at = $now, chain.pages = 0
SET chain.summary = $chain_summary, chain.keywords = $chain_keywords, chain.updated_at = $now, chain.pages = chain.pages + 1
CREATE (chain)-[:HAS_PAGE]->(page)
WITH page
CALL db.create.setNodeVectorProperty(page, 'embedding', $embedding)
WITH page
OPTIONAL MATCH (before:Page)-[:NEXT*1..2]->(page)
WITH page, before, [field IN $fields | before[field]] AS was
FOREACH (b IN CASE WHEN before IS NULL THEN [] ELSE [before] END |
  SET b.neighbourhood = coalesce(b.neighbourhood + '\n', '') + $turn)
// The text fields ($fields) the page_text index reads, of the new page and of the pages whose text changed,
// before and after: the tenant's BM25 statistics move by them (store/neo4j_text.py).
WITH page, collect(CASE WHEN before IS NOT NULL THEN {id: before.id, was: was, now: [field IN $fields | before[field]]} END) AS changed
RETURN page.seq AS seq, [field IN $fields | page[field]] AS texts, changed
