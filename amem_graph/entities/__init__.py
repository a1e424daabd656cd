"""The entity layer: who and what notes mention (extraction), one entity per thing per tenant (keys)."""

from ..core.entity_keys import entity_key
from .extract import Extractor, default_extractor

__all__ = ["Extractor", "default_extractor", "entity_key"]
