// Soundness of one tenant's graph (checked by the tests): links that leave the
// tenant, and notes whose versions are not exactly 1..version-1.
CALL () {
  MATCH (a:Note {tenant: $tenant})-[r]-(b)
  WHERE type(r) IN $link_types AND (NOT b:Note OR b.tenant <> $tenant)
  RETURN count(r) AS foreign_links
}
CALL () {
  MATCH (n:Note {tenant: $tenant})
  OPTIONAL MATCH (n)-[:HAS_VERSION]->(v:NoteVersion)
  WITH n, collect(v.version) AS versions
  WHERE size(versions) <> n.version - 1 OR any(i IN range(1, n.version - 1) WHERE NOT i IN versions)
  RETURN collect(n.id) AS broken_version_chains
}
RETURN foreign_links, broken_version_chains
