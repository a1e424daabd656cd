"""What every layer uses and which uses nothing of the engine: input checks, text shapes, entity keys, log
events, secrets on disk, the ranking weights, and the rule for reading the memory as of a moment."""
