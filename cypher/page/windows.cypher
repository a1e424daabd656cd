// For each page, the pages up to two before and after it (evolution.NEIGHBOURHOOD_TURNS) in its session (itself included), in order:
// the dialogue neighbourhood a note promoted from the page carries, as notes of a session do.
UNWIND $ids AS id
MATCH (page:Page {tenant: $tenant, id: id})
CALL (page) {
  OPTIONAL MATCH (before:Page)-[:NEXT*1..2]->(page)
  WITH page, before ORDER BY before.seq
  WITH page, [p IN collect(before) WHERE p IS NOT NULL] AS earlier
  OPTIONAL MATCH (page)-[:NEXT*1..2]->(after:Page)
  WITH page, earlier, after ORDER BY after.seq
  WITH page, earlier, [p IN collect(after) WHERE p IS NOT NULL] AS later
  RETURN earlier + [page] + later AS window
}
RETURN id, [p IN window | {user_text: p.user_text, assistant_text: p.assistant_text}] AS window
