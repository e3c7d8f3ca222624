"""What every study's analysis shares: the scenario a dataset was run with, offered loads."""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import xarray as xr

from tcprepro import traffic
from tcprepro.scenario import Scenario
from tcprepro.scenario_io import load_scenario_dict

__all__ = [
    "first_scenario",
    "generator_calibration",
    "run_configs",
    "run_scenario",
    "transfers_carried_load",
    "transfers_offered_load",
]


def first_scenario(ds: xr.Dataset) -> Scenario:
    """The resolved scenario of a run dataset, or of the first run of a combined one.

    A combined dataset keeps the resolved scenario as the ``config`` attribute when every
    run shares it, else as the ``run_config`` variable (one per run; the first is taken).
    """
    if "config" in ds.attrs:
        text = str(ds.attrs["config"])
    else:
        configs = [str(c) for c in np.ravel(ds["run_config"].values) if str(c)]
        if not configs:
            raise ValueError("the dataset has no resolved scenario (config or run_config)")
        text = configs[0]
    return load_scenario_dict(json.loads(text), "dataset config")


def run_configs(ds: xr.Dataset) -> xr.DataArray:
    """The resolved scenario (JSON text) of every run.

    Over the sweep and ``rep`` dimensions of a combined dataset, a scalar for a run
    dataset; ``""`` for a missing run.
    """
    if "run_config" in ds:
        configs = ds["run_config"].astype(object)
        return xr.where(configs.notnull(), configs, "").astype(str)
    if "config" in ds.attrs:
        return xr.DataArray(str(ds.attrs["config"]))
    raise ValueError("the dataset has no resolved scenario (config or run_config)")


@lru_cache(maxsize=256)
def run_scenario(config: str) -> Scenario:
    """The scenario of a run's resolved configuration (JSON text, as :func:`run_configs`)."""
    return load_scenario_dict(json.loads(config), "run config")


@lru_cache(maxsize=256)
def generator_calibration(config: str, name: str) -> traffic.Calibration:
    """How a run calibrated its generator ``name``.

    :func:`tcprepro.traffic.calibrate` on the run's resolved scenario (JSON text): the
    arrival rate, mean size, load, goodput capacity and solved Pareto/Zipf scale the run
    drew its transfers with.
    """
    return traffic.calibrate(run_scenario(config), name)


def _per_run(configs: xr.DataArray, value: object) -> xr.DataArray:
    """A per-run number read from each run's configuration (NaN for a missing run)."""
    return xr.apply_ufunc(np.vectorize(value, otypes=[float]), configs)


def transfers_offered_load(ds: xr.Dataset, name: str, start_s: float, end_s: float) -> xr.DataArray:
    """Measured offered load of the ``poisson_transfers`` generator ``name``, per run.

    The bytes of its transfers that arrived in [``start_s``, ``end_s``) divided by
    (``end_s - start_s``) x the goodput capacity its load calibration uses
    (:func:`generator_calibration`): the load the Poisson process actually offered, in
    the unit of the scenario's ``load``. Works on a run dataset (a scalar) and on a
    combined one (one value per run; NaN for a missing run).
    """
    arrived = (
        (ds["transfer_generator"] == name)
        & (ds["transfer_start_s"] >= start_s)
        & (ds["transfer_start_s"] < end_s)
    )
    size = ds["transfer_size_bytes"].where(arrived).sum("transfer")
    capacity = _generator_capacity_bps(ds, name)
    return (size * 8.0 / ((end_s - start_s) * capacity)).rename("offered_load")


def transfers_carried_load(ds: xr.Dataset, name: str, start_s: float, end_s: float) -> xr.DataArray:
    """Load the ``poisson_transfers`` generator ``name`` carried, per run.

    The bytes of its transfers whose last byte arrived in [``start_s``, ``end_s``)
    divided by (``end_s - start_s``) x the goodput capacity of its load calibration,
    the unit of :func:`transfers_offered_load`. A transfer counts whole at its end, so
    each edge of the window moves the value by at most the transfers that straddle it.
    It reads only the ``transfer_*`` variables, which both backends record alike.
    """
    ended = (
        (ds["transfer_generator"] == name)
        & (ds["transfer_end_s"] >= start_s)
        & (ds["transfer_end_s"] < end_s)
    )
    size = ds["transfer_size_bytes"].where(ended).sum("transfer")
    capacity = _generator_capacity_bps(ds, name)
    return (size * 8.0 / ((end_s - start_s) * capacity)).rename("carried_load")


def _generator_capacity_bps(ds: xr.Dataset, name: str) -> xr.DataArray:
    """The goodput capacity each run's load calibration of ``name`` uses (NaN: no run)."""
    return _per_run(
        run_configs(ds),
        lambda c: generator_calibration(c, name).capacity_bps if c.startswith("{") else np.nan,
    )
