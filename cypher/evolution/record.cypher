// The Evolution node ties the trigger, the decision (JSON) and the versions it wrote.
MATCH (t:Note {id: $trigger_id, tenant: $tenant})
CREATE (e:Evolution {
  id: $evolution_id, tenant: $tenant, at: $now, trigger_note_id: $trigger_id, analysis: $analysis, model: $model,
  prompt_version: $prompt_version, decision: $decision, prompt_tokens: $prompt_tokens,
  completion_tokens: $completion_tokens
})-[:TRIGGERED_BY]->(t)
WITH e
CALL (e) {
  UNWIND $revised AS rv
  MATCH (:Note {id: rv.note_id, tenant: $tenant})-[:HAS_VERSION]->(v:NoteVersion {version: rv.version})
  CREATE (e)-[:REVISED]->(v)
}
RETURN e.id AS id
