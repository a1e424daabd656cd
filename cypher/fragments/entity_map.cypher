// An entity as returned to callers; the statement binds `e`. Times as epoch milliseconds (see note_map).
e {.tenant, .key, .name, .kind, .aliases, .mentions, first_seen: e.first_seen.epochMillis,
   last_seen: e.last_seen.epochMillis}
