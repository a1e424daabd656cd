"""The viewer (`amem-graph view`): a local web page on the memory of one tenant, on either store — the network of
notes, links, sessions and entities; why each search hit was found; a note's versions and evolutions; the memory as
of any moment; entities and the MemoryOS tiers. Loopback only, read-only, guarded by a token."""

from .server import Viewer

VENDORED = {  # third-party files the page loads, pinned by hash (static/vendor/README.md)
    "cytoscape.min.js": "71fa9ebec21a7ca2c40cff6aacc30d1f6464e363662ad4b2c197e1adc770cd94",
}

__all__ = ["VENDORED", "Viewer"]
