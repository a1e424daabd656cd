"""The entity layer: who and what notes mention (extraction), one entity per thing per tenant (keys)."""

from .extract import Extractor, default_extractor
from .keys import entity_key

__all__ = ["Extractor", "default_extractor", "entity_key"]
