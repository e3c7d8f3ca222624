"""A figure's title states what its runs had, read from their data, never typed.

A tier may change a figure's parameters (study C's smoke runs: 10 Mb/s and 200 ms for C1);
the titles read each number from the runs' resolved scenarios and traces.
"""

import numpy as np
import xarray as xr

from conftest import ROOT
from tcprepro.figures import study_b_common, study_c
from tcprepro.scenario_io import load_scenario

SCENARIOS = ROOT / "workflow" / "scenarios"


def _config(scenario, *overrides):
    return load_scenario(SCENARIOS / f"{scenario}.yaml", list(overrides)).to_json()


def _links(rate_bps, *dims):
    """``link_rate_bps`` over ``dims`` and the two links, the bottleneck at ``rate_bps``."""
    shape = (*(1 for _ in dims), 2)
    return (
        (*dims, "link"),
        np.broadcast_to(np.array([rate_bps, 1e9]), shape).copy(),
    )


def _c33(rtt1):
    config = _config("C3.3", ("topology.senders.0.rtt", rtt1))
    return xr.Dataset(
        {
            "run_config": (("protocol", "rtt2", "rep"), [[[config]]]),
            "link_rate_bps": _links(10e6, "protocol", "rtt2", "rep"),
        },
        coords={
            "protocol": ["YeahPaper"],
            "rtt2": ["160ms"],
            "rep": [0],
            "link": ["bottleneck", "reverse"],
        },
    )


def test_c33s_title_gives_the_rtt1_its_runs_had(monkeypatch):
    for rtt1 in ("40ms", "70ms"):
        ds = _c33(rtt1)
        ratio = ds["run_config"].copy(data=[[[1.2]]]).astype(float)
        monkeypatch.setattr(study_c.analysis_c, "rtt_fairness", lambda ds, r=ratio: r)
        fig = study_c.metric_figure("C3.3", ds)
        title = fig.axes[0].get_title()
        assert f"RTT1 = {rtt1.removesuffix('ms')} ms" in title, title
        assert "C = 10 Mb/s" in title


def _c1(rtt):
    config = _config("C1", ("topology.senders.0.rtt", rtt))
    times = np.arange(1.0, 11.0)
    window = np.full((1, 1, 2, times.size), 14_480.0)  # second, rep, flow, time
    return xr.Dataset(
        {
            "run_config": (("second", "rep"), [[config]]),
            "cwnd_bytes": (("second", "rep", "flow", "time"), window),
            "queue_pkts": (
                ("second", "rep", "link", "time"),
                np.full((1, 1, 2, times.size), 3.0),
            ),
            "link_rate_bps": _links(10e6, "second", "rep"),
        },
        coords={
            "second": ["NewReno"],
            "rep": [0],
            "flow": ["f1", "f2"],
            "link": ["bottleneck", "reverse"],
            "time": times,
        },
    )


def test_c1s_title_gives_the_rtt_and_capacity_its_runs_had():
    for rtt, text in (("25ms", "RTT 25 ms"), ("200ms", "RTT 200 ms")):
        title = study_c.cwnd_panels(_c1(rtt))._suptitle.get_text()
        assert title.startswith("C1: "), title
        assert text in title, title
        assert "C = 10 Mb/s" in title, title
        assert "Reno" in title


def test_a_study_b_title_gives_the_load_the_background_measured(monkeypatch):
    loads = iter([0.12, 0.14])
    monkeypatch.setattr(study_b_common.analysis_b, "offered_load", lambda run: {"bg": next(loads)})
    runs = [xr.Dataset(attrs={"config": "{}"}) for _ in range(2)]
    assert study_b_common._measured_load_text(runs) == "12-14 %"
    monkeypatch.setattr(study_b_common.analysis_b, "offered_load", lambda run: {"bg": 0.5})
    assert study_b_common._measured_load_text(runs[:1]) == "50 %"
    assert study_b_common._measured_load_text([xr.Dataset()]) == ""
