"""What every study's analysis shares: reading back the scenario a dataset was run with."""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from tcprepro.scenario import Scenario
from tcprepro.scenario_io import load_scenario_dict

__all__ = ["first_scenario"]


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
