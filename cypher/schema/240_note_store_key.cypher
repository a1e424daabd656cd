// LangGraph store items are notes with a key; listing a namespace and finding namespaces read this index.
CREATE INDEX note_store_key IF NOT EXISTS FOR (n:Note) ON (n.store_key)
