// What ranking needs of a candidate before the final notes are read (store `brief=True`): no context,
// neighbourhood or history, so a pool of candidates costs little to send.
node {.id, .tenant, .content, .speaker, .session, event_time: node.event_time.epochMillis}
