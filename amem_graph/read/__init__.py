"""The read path: search (keyword, vector and passage channels fused, then the graph walk) and the network views
the viewer draws."""
