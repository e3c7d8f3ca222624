import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr

from synthetic import synthetic_run
from tcprepro import store


def test_run_dataset_follows_the_schema():
    ds = synthetic_run()
    assert store.validate_run_dataset(ds) == []
    assert ds["goodput_bps"].attrs["units"] == "bit/s"
    assert ds["time"].attrs["units"] == "s"
    broken = ds.drop_vars("rtt_s")
    assert "missing variable rtt_s" in store.validate_run_dataset(broken)


def test_counters_become_per_interval_values():
    ds = synthetic_run(interval_s=0.5)
    assert np.allclose(ds["tx_data_pkts"].values, 100.0)
    assert np.allclose(ds["drops_pkts"].sel(link="up").values, 2.0)


def test_window_and_timeout_series_are_per_interval_or_absent_when_not_measured():
    # a constant 20 kB (down) / 5 kB (up) unacknowledged: the integral grows by 20 kB x 0.5 s
    # per 0.5-s interval, so the per-interval average is 20 kB; one RTO every other sample
    ds = synthetic_run(
        extra_flow_series={
            "unacked_byte_s": lambda t: np.outer(t, [20_000.0, 5_000.0]),
            "rto_count": lambda t: np.outer(np.floor(np.arange(1, t.size + 1) / 2), [1.0, 0.0]),
        }
    )
    assert store.validate_run_dataset(ds) == []
    assert np.allclose(ds["unacked_bytes"].sel(flow="down"), 20_000.0)
    assert np.allclose(ds["unacked_bytes"].sel(flow="up"), 5_000.0)
    assert ds["rto_count"].sel(flow="down").values[:4].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert float(ds["rto_count"].sel(flow="up").sum()) == 0.0
    assert ds["unacked_bytes"].attrs["units"] == "byte"
    # a backend that cannot measure them (no raw series): absent, and the dataset conforms
    plain = synthetic_run()
    assert store.validate_run_dataset(plain) == []
    assert "unacked_bytes" not in plain
    assert "rto_count" not in plain


def test_round_trip_is_exact(tmp_path):
    ds = synthetic_run()
    path = store.write_dataset(ds, tmp_path / "run.nc")
    back = store.open_dataset(path)
    xr.testing.assert_identical(back.drop_attrs(deep=False), ds.drop_attrs(deep=False))
    assert back.attrs == ds.attrs
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    ds = synthetic_run()

    def explode(self, path, *args, **kwargs):
        with open(path, "wb") as handle:
            handle.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", explode)
    with pytest.raises(OSError, match="disk full"):
        store.write_dataset(ds, tmp_path / "run.nc")
    assert list(tmp_path.iterdir()) == []


def test_killed_writer_never_leaves_a_partial_dataset(tmp_path):
    """SIGKILL a process in the middle of writing a big dataset: the final name never
    appears half-written (either absent, or complete and readable)."""
    target = tmp_path / "big.nc"
    code = f"""
import numpy as np, xarray as xr
from tcprepro.store import write_dataset
ds = xr.Dataset({{"x": (("a", "b"), np.random.default_rng(0).random((4000, 4000)))}})
print("ready", flush=True)
write_dataset(ds, {str(target)!r})
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    if target.exists():  # the rename happened before the kill: it must be complete
        assert store.open_dataset(target)["x"].shape == (4000, 4000)
    else:
        leftovers = [p.name for p in tmp_path.iterdir()]
        assert all(name.startswith(".big.nc.tmp-") for name in leftovers)


def _figure_run(up, down, rep, values):
    return synthetic_run(
        attrs={
            "figure": "A1",
            "sweep": json.dumps({"up": up, "down": down}),
            "sweep_values": json.dumps(values),
            "rep": rep,
        }
    )


def test_combine_has_one_dim_per_swept_parameter_plus_rep(tmp_path):
    values = {"up": ["NewReno", "Cubic", "Compound"], "down": ["Vegas", "NewReno"]}
    paths = []
    for up in ["NewReno", "Cubic"]:
        for down in values["down"]:
            for rep in range(2):
                path = tmp_path / f"{up}-{down}-{rep}.nc"
                store.write_dataset(_figure_run(up, down, rep, values), path)
                paths.append(path)
    combined = store.combine_runs(paths)
    assert list(combined["up"].values) == values["up"]  # config order, pending value kept
    assert list(combined["down"].values) == values["down"]
    assert list(combined["rep"].values) == [0, 1]
    assert combined["goodput_bps"].dims == ("up", "down", "rep", "flow", "time")
    assert combined.attrs["n_runs"] == 8
    missing = json.loads(combined.attrs["missing_cells"])
    assert missing == [{"up": "Compound", "down": "Vegas"}, {"up": "Compound", "down": "NewReno"}]
    assert np.isnan(combined["goodput_bps"].sel(up="Compound")).all()
    assert combined["run_cache_key"].sel(up="Cubic", down="Vegas", rep=1).item() == "0" * 20
    store.write_dataset(combined, tmp_path / "combined.nc")  # string padding is writable
    assert (
        store.open_dataset(tmp_path / "combined.nc")["flow_variant"]
        .sel(up="Compound", down="Vegas", rep=0, flow="up")
        .item()
        == ""
    )


def test_combine_refuses_duplicates_and_foreign_runs():
    values = {"up": ["NewReno"], "down": ["NewReno"]}
    run = _figure_run("NewReno", "NewReno", 0, values)
    with pytest.raises(ValueError, match="same sweep values"):
        store.combine_runs([run, run.copy()])
    with pytest.raises(ValueError, match="not produced for a figure"):
        store.combine_runs([synthetic_run()])


def test_combine_keeps_a_cell_whose_cached_neighbours_record_a_shorter_tier():
    """X12's quick tier gained four cases; its six cached runs recorded the six-case
    list, and the combined dataset silently left the four new runs out. A run outside
    the values is now an error, and the workflow's values now take precedence."""
    old = {"up": ["NewReno"], "down": ["NewReno"]}
    new = {"up": ["NewReno", "Cubic"], "down": ["NewReno"]}
    cached = _figure_run("NewReno", "NewReno", 0, old)
    fresh = _figure_run("Cubic", "NewReno", 0, new)
    with pytest.raises(ValueError, match=r"up = 'Cubic' is not among the figure's values"):
        store.combine_runs([cached, fresh])
    combined = store.combine_runs([cached, fresh], sweep_values=new)
    assert list(combined["up"].values) == ["NewReno", "Cubic"]
    assert json.loads(combined.attrs["missing_cells"]) == []
    assert np.isfinite(combined["goodput_bps"].sel(up="Cubic", rep=0)).any()


def test_combine_pads_runs_with_different_numbers_of_transfers(tmp_path):
    values = {"up": ["NewReno"], "down": ["NewReno"]}
    runs = []
    for rep, count in enumerate((3, 5)):
        ds = synthetic_run(
            transfers=count,
            attrs={
                "figure": "A3",
                "sweep": json.dumps({"up": "NewReno", "down": "NewReno"}),
                "sweep_values": json.dumps(values),
                "rep": rep,
            },
        )
        assert store.validate_run_dataset(ds) == []
        runs.append(ds)
    combined = store.combine_runs(runs)
    assert combined.sizes["transfer"] == 5
    sizes = combined["transfer_size_bytes"].sel(up="NewReno", down="NewReno")
    assert int(np.isfinite(sizes.sel(rep=0)).sum()) == 3
    assert int(np.isfinite(sizes.sel(rep=1)).sum()) == 5
    path = store.write_dataset(combined, tmp_path / "c.nc")
    assert store.open_dataset(path).sizes["transfer"] == 5


def test_combine_a_figure_without_sweep():
    runs = [
        synthetic_run(attrs={"figure": "C1", "sweep": "{}", "sweep_values": "{}", "rep": rep})
        for rep in (1, 0)
    ]
    combined = store.combine_runs(runs)
    assert list(combined["rep"].values) == [0, 1]
    assert combined["goodput_bps"].dims == ("rep", "flow", "time")
    assert json.loads(combined.attrs["missing_cells"]) == []


def test_optional_variables_are_allowed_and_combine_with_runs_lacking_them():
    values = {"qdisc": ["fifo", "pfq_lqd"]}
    runs = []
    for qdisc in values["qdisc"]:
        ds = synthetic_run(
            attrs={
                "figure": "B",
                "sweep": json.dumps({"qdisc": qdisc}),
                "sweep_values": json.dumps(values),
                "rep": 0,
            }
        )
        if qdisc == "pfq_lqd":
            ds["backlog_pkts"] = (ds["cwnd_bytes"] * 0 + 3).assign_attrs(units="packet")
        assert store.validate_run_dataset(ds) == []
        runs.append(ds)
    combined = store.combine_runs(runs)
    assert np.isnan(combined["backlog_pkts"].sel(qdisc="fifo")).all()
    assert (combined["backlog_pkts"].sel(qdisc="pfq_lqd") == 3).all()


def test_combine_keeps_long_flow_names_that_the_first_run_lacks(tmp_path):
    """Runs with different flows (study B's cases): the union of their names is not cut to
    the first run's string width (``reno0`` first truncated ``hstcp0`` to ``hstcp``)."""
    values = {"up": ["NewReno", "Cubic"], "down": ["Vegas"]}
    paths = []
    for up, flows in (("NewReno", ["reno0", "bg"]), ("Cubic", ["hstcp0", "hstcp1", "bg"])):
        run = _figure_run(up, "Vegas", 0, values)
        run = run.isel(flow=[0] * len(flows)).assign_coords(flow=np.array(flows))
        qdisc = "fifo" if up == "NewReno" else "pfq_lqd"
        run["link_qdisc"] = ("link", np.array([qdisc] * run.sizes["link"]))
        paths.append(tmp_path / f"{up}.nc")
        store.write_dataset(run, paths[-1])
    store.write_dataset(store.combine_runs(paths), tmp_path / "combined.nc")
    combined = store.open_dataset(tmp_path / "combined.nc")
    assert sorted(map(str, combined["flow"].values)) == ["bg", "hstcp0", "hstcp1", "reno0"]
    assert set(map(str, np.unique(combined["link_qdisc"].values))) >= {"fifo", "pfq_lqd"}
