"""Interactive exploration in JupyterLab: live explorers, and a figure's reduced sweep.

- :mod:`~tcprepro.explore.cell`: the explored cell of a figure (its knobs, validation,
  runs, cache, the scenario file that reproduces it);
- :mod:`~tcprepro.explore.runner`: its runs in the background (progress, cancel);
- :mod:`~tcprepro.explore.panel`: the ipywidgets explorer (:class:`Explorer`), which
  ``notebooks/explore.ipynb`` shows.

:func:`run_figure` runs a reduced sweep of a figure in the notebook's own process, for
the figure notebooks opened without a combined dataset; its runs are not cached.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from tcprepro.campaign import WorkflowConfig, load_workflow_config
from tcprepro.store import combine_runs

__all__ = [
    "Explorer",
    "figure_block",
    "figure_source",
    "find_root",
    "run_figure",
    "workflow_config",
]


def find_root(start: str | Path | None = None) -> Path:
    """The repository folder holding ``workflow/config.yaml`` (searched upwards)."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "workflow" / "config.yaml").is_file():
            return folder
    raise FileNotFoundError(f"no workflow/config.yaml in {here} or its parents")


def workflow_config(root: Path) -> WorkflowConfig:
    """The workflow config of the repository ``root``, its scenario paths made absolute.

    Its runs load their scenarios from any working directory (a notebook's is
    ``notebooks/``); the cache keys do not depend on how a path is written.
    """
    config = load_workflow_config(root / "workflow" / "config.yaml")
    data = copy.deepcopy(dict(config.data))
    for block in data["figures"].values():
        if "scenario" in block:
            block["scenario"] = str(root / block["scenario"])
    return WorkflowConfig(data)


def run_figure(
    figure_id: str,
    *,
    values: Mapping[str, Sequence[Any]] | None = None,
    overrides: Mapping[str, Any] | None = None,
    repetitions: int = 1,
    tier: str = "smoke",
    root: str | Path | None = None,
    progress: bool = True,
) -> xr.Dataset:
    """Run a reduced sweep of ``figure_id`` here and return its combined dataset.

    A figure drawn from another figure's runs (``data:`` in the config, e.g. D2)
    runs that figure's sweep.

    Parameters
    ----------
    values
        Sweep values per dimension (default: the tier's).
    overrides
        Scenario overrides (key path -> value), e.g. ``{"duration": "60s"}``.
    repetitions
        Repetitions per cell.
    tier
        Tier whose settings are the starting point.
    """
    from tqdm.auto import tqdm

    from tcprepro.ns3.backend import run_scenario

    base = workflow_config(find_root(root))
    figure_id = base.source(figure_id)  # a data view (e.g. D2) runs the figure it draws
    data = copy.deepcopy(dict(base.data))
    figure = data["figures"][figure_id]
    tiers = figure["tiers"] if "tiers" in figure else data["studies"][figure["study"]]["tiers"]
    block = tiers[tier]
    block["repetitions"] = repetitions
    if values is not None:
        block["values"] = {dim: list(v) for dim, v in values.items()}
    if overrides:
        block["set"] = {**block.get("set", {}), **overrides}
    config = WorkflowConfig(data)
    config.check(tier, [figure_id])
    runs = config.runs(figure_id, tier)
    datasets = [
        run_scenario(run.scenario(), run.rep, extra_attrs=run.attrs())
        for run in tqdm(runs, desc=f"{figure_id}: {len(runs)} runs", disable=not progress)
    ]
    return combine_runs(datasets)


def figure_block(figure_id: str, root: str | Path | None = None) -> Mapping[str, Any]:
    """A figure's block of the workflow config (its caption, cross-check tolerances, ...)."""
    return load_workflow_config(find_root(root) / "workflow" / "config.yaml").figure(figure_id)


def figure_source(figure_id: str, root: str | Path | None = None) -> str:
    """The figure whose runs ``figure_id`` draws: its ``data:`` view target, or itself."""
    return load_workflow_config(find_root(root) / "workflow" / "config.yaml").source(figure_id)


def __getattr__(name: str) -> Any:
    """:class:`Explorer`, imported on first use (it brings ipywidgets)."""
    if name == "Explorer":
        from tcprepro.explore.panel import Explorer

        return Explorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
