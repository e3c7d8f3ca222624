"""Runs of a figure: a cell of its sweep and a repetition, with the overrides that make it.

A run's scenario is its figure's scenario file with typed overrides applied, each
a ``(key path, value)`` pair (:data:`tcprepro.scenario_io.Override`): the
figure's ``set``, its tier's ``set``, the repetitions and the cell's values. The
run's output path and cache key are computed here, and only here.

A sweep value that names a variant or queue discipline whose model is not built
yet makes its cell *pending*: no run is planned for it, and figures and claims
show it as pending.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from tcprepro import provenance
from tcprepro.errors import ConfigError
from tcprepro.scenario import Scenario
from tcprepro.scenario_io import Override, load_scenario
from tcprepro.variants import QDISCS, VARIANTS, canonical_variant

__all__ = ["Override", "Run", "cell_name", "pending_reason"]

_CELL_VALUE = re.compile(r"^[A-Za-z0-9.+]+$")


def _paths(dimension: Mapping[str, Any]) -> list[str]:
    """Scenario key paths a swept dimension sets (one path, or several set to one value)."""
    path = dimension["path"]
    return [path] if isinstance(path, str) else list(path)


def _cell_text(value: Any) -> str:
    """A sweep value as written in cell names: floats without exponents (1e-07 -> 0.0000001)."""
    if isinstance(value, float) and "e" in repr(value):
        return np.format_float_positional(value, trim="-")
    return str(value)


def pending_reason(value: Any) -> str | None:
    """Why a sweep value cannot run yet (a variant/qdisc whose model is pending), else None."""
    if not isinstance(value, str):
        return None
    try:
        variant = VARIANTS[canonical_variant(value)]
    except ValueError:
        variant = None
    if variant is not None and not variant.available:
        return f"{variant.name}: {variant.status}"
    qdisc = QDISCS.get(value)
    if qdisc is not None and not qdisc.available:
        return f"{qdisc.name}: {qdisc.status}"
    return None


def cell_name(sweep: Mapping[str, Any]) -> str:
    """File-system name of a cell: ``up-Cubic_down-NewReno``."""
    parts = []
    for dim, value in sweep.items():
        text = _cell_text(value)
        if not _CELL_VALUE.match(text):
            raise ConfigError(
                f"sweep value {text!r} of {dim!r} must be letters, digits, '.' or '+'"
            )
        parts.append(f"{dim}-{text}")
    return "_".join(parts) if parts else "base"


@dataclass(frozen=True)
class Run:
    """One simulation of a figure: a cell of its sweep and a repetition."""

    figure: str
    cell: str
    sweep: tuple[tuple[str, Any], ...]
    rep: int
    scenario_path: str
    overrides: tuple[Override, ...]  # (key path, value) pairs, in the order they apply
    sweep_values: str  # JSON of every dimension's values (for the combined dataset)
    backend: str = "ns3"  # or "mininet" (emulated runs, tcprepro.emulation)

    @property
    def path(self) -> str:
        """Output dataset, relative to the workflow's working directory."""
        if self.backend != "ns3":
            return f"data/emulated/{self.figure}/{self.cell}/rep{self.rep}.nc"
        return f"data/runs/{self.figure}/{self.cell}/rep{self.rep}.nc"

    def __hash__(self) -> int:
        return hash((self.figure, self.cell, self.rep, self.backend))

    def scenario(self) -> Scenario:
        """The validated scenario of this run."""
        return _scenario(self.scenario_path, _frozen(self.overrides))

    def cache_key(self, backend: str = "ns3") -> str:
        """Hash of everything that determines this run's (ns-3) dataset.

        Emulated runs have their own key (the kernel, not ns-3, makes the result):
        :func:`tcprepro.campaign.emulated.run_cache_key`.
        """
        scenario = self.scenario()
        versions = provenance.software_versions(scenario.cpp_models())
        return scenario.cache_key(self.rep, backend, versions)

    def attrs(self) -> dict[str, Any]:
        """Dataset attributes that place the run in its figure's sweep."""
        return {
            "figure": self.figure,
            "sweep": json.dumps(dict(self.sweep)),
            "sweep_values": self.sweep_values,
        }


def cached_run_attrs(run: Run, workdir: Path, key: str | None = None) -> Mapping[str, Any] | None:
    """The attributes of the run's dataset when it exists with the run's cache key, else None."""
    from tcprepro.store import open_dataset

    path = workdir / run.path
    if not path.exists():
        return None
    try:
        attrs = open_dataset(path).attrs
    except (OSError, ValueError):
        return None
    return attrs if attrs.get("cache_key") == (key or run.cache_key()) else None


def is_cached(run: Run, workdir: Path = Path("."), key: str | None = None) -> bool:
    """True when the run's dataset exists and was made with the same cache key.

    ``key``: the run's cache key when the caller has it already (else computed here).
    """
    return cached_run_attrs(run, workdir, key) is not None


def _frozen(overrides: tuple[Override, ...]) -> str:
    """A hashable, exact form of a run's overrides (the scenario cache's key)."""
    return json.dumps(overrides, sort_keys=True)


@cache
def _scenario(path: str, overrides_json: str) -> Scenario:
    return load_scenario(path, [(path_, value) for path_, value in json.loads(overrides_json)])
