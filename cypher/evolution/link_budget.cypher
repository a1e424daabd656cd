// Past the budget, a note's weakest valid links (lowest confidence, then oldest) are invalidated,
// not deleted: they keep their reason and say which evolution dropped them.
UNWIND $ids AS id
MATCH (n:Note {id: id, tenant: $tenant})
CALL (n) {
  MATCH (n)-[r]-(:Note)
  WHERE type(r) IN $link_types AND r.invalid_at IS NULL
  WITH r ORDER BY r.confidence ASC, r.created_at ASC
  WITH collect(r) AS links
  UNWIND CASE WHEN size(links) > $budget THEN links[0..size(links) - $budget] ELSE [] END AS weakest
  SET weakest.invalid_at = $now, weakest.invalid_reason = 'link budget', weakest.invalidated_by = $evolution_id
  RETURN collect({source_id: startNode(weakest).id, target_id: endNode(weakest).id, type: type(weakest)}) AS dropped
}
RETURN n.id AS id, dropped
