// A NoteVersion's properties: note `n` as it is before a change (used inside a map literal).
note_id: n.id, tenant: n.tenant, version: n.version, content: n.content, context: n.context,
keywords: n.keywords, tags: n.tags, category: n.category, importance: n.importance,
event_time: n.event_time, analysis: n.analysis, model: n.model, neighbourhood: n.neighbourhood,
valid_from: n.updated_at, valid_to: $now
