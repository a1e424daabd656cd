"""Work on a whole tenant or database beside the agent: retention (archive, restore), consolidation to another
model, export and import, the schema check at open, `check`'s invariants and the warm-up."""
