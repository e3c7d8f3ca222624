"""Helpers for the ns-3 model tests (test_ns3_models_*.py): tiny ns-3 runs and the C++
model-check drivers."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import xarray as xr

from tcprepro.scenario_io import apply_overrides, load_scenario_dict


def simulate(base: dict[str, Any], overrides: list[str], **kwargs: Any) -> xr.Dataset:
    """Run ``base`` with ``overrides`` in ns-3 (keyword arguments go to run_scenario)."""
    from tcprepro.ns3.backend import run_scenario

    return run_scenario(load_scenario_dict(apply_overrides(base, overrides)), **kwargs)


@cache
def drivers() -> Any:
    """The C++ drivers of ``model-checks.h`` (namespace ``tcprepro``) through cppyy."""
    import cppyy

    from tcprepro.ns3 import build

    build.load()
    cppyy.include("model-checks.h")
    return cppyy.gbl.tcprepro


def cwnd_segments(ds: xr.Dataset, flow: str, mss: int = 1448) -> np.ndarray:
    """Congestion window of ``flow`` at each sample time, in segments."""
    return ds["cwnd_bytes"].sel(flow=flow).values / mss
