"""YAML text to Python data, with libyaml's C parser when PyYAML was built with it.

The workflow config, the claims registry, the scenario files and the testbed profiles are
parsed by every process the workflow starts; PyYAML's pure-Python parser spends about a
second a process on them, its C parser (``CSafeLoader``: the same safe constructor and
resolver, only the parser in C) a tenth of that. Without libyaml the pure-Python one is used.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["load_yaml"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """Parse YAML text like ``yaml.safe_load`` (raises ``yaml.YAMLError`` likewise)."""
    return yaml.load(text, Loader=_LOADER)
