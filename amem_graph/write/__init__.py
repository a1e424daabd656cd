"""The write path above the store: a note's links and the evolution of its neighbours, and what the adapters
attach to notes."""
