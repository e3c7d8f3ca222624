"""Numbers quoted in captions and titles, taken from a scenario, never typed.

A caption in ``workflow/config.yaml`` writes ``[[topology.uplink.buffer_pkts]]`` where
it quotes a parameter; :func:`fill` replaces it with the value of the figure's resolved
scenario, so changing the scenario changes the caption. A format may follow a bar:
``[[topology.downlink.rate|rate]]`` (10~Mb/s), ``|ms`` and ``|s`` (durations), ``|pct``
(a fraction as a percentage), ``|kB`` (bytes in kB). A list item is indexed by its
position or, for named items (dumbbell sender groups), by name:
``[[topology.senders.bg.rate|rate]]``.
"""

from __future__ import annotations

import re
from typing import Any

from tcprepro.errors import ConfigError
from tcprepro.scenario import Scenario
from tcprepro.units import format_rate

__all__ = ["fill", "quote", "value_at"]

_FIELD = re.compile(r"\[\[([A-Za-z0-9_.]+)(?:\|([A-Za-z]+))?\]\]")


def value_at(scenario: Scenario, path: str) -> Any:
    """The value at a dotted path of a validated scenario (SI units)."""
    node: Any = scenario
    for part in path.split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list):
            named = [item for item in node if getattr(item, "name", None) == part]
            node = named[0] if named else (node[int(part)] if part.isdigit() else None)
        else:
            node = getattr(node, part, None)
        if node is None:
            raise ConfigError(f"caption: the scenario {scenario.id} has no value at {path!r}")
    return node


def quote(value: Any, fmt: str | None = None) -> str:
    """A value as a caption prints it (LaTeX), in the given format."""
    if fmt == "rate":
        return format_rate(float(value)).replace(" ", "~")
    if fmt == "ms":
        return f"{float(value) * 1000:g}~ms"
    if fmt == "s":
        return f"{float(value):g}~s"
    if fmt == "pct":
        return f"{float(value) * 100:g}\\%"
    if fmt == "kB":
        return f"{float(value) / 1000:g}~kB"
    if fmt is not None:
        raise ConfigError(f"caption: unknown format {fmt!r} (rate, ms, s, pct, kB)")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def fill(template: str, scenario: Scenario) -> str:
    """``template`` with every ``[[path|format]]`` replaced by the scenario's value."""
    return _FIELD.sub(lambda m: quote(value_at(scenario, m[1]), m[2]), template)
