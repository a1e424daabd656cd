// The columns every cypher/attached/ reader returns for Attached (variable `node`).
@note_map AS note, node.attached AS attached, node.attached_by AS kind, node.store_key AS store_key,
node.attached_at.epochMillis AS attached_at
