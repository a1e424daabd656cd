// How far a consolidation got (written with each batch of vectors, in its transaction); null when it is over.
MATCH (s:AmemSchema {name: 'amem-graph'})
SET s.consolidating = $reached
