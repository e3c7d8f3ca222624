"""Real runs on the virtual-clock UML route: a 100 Mb/s Reno flow at full rate while a
CPU hog keeps every host core busy, the same run in another boot, the gate's probe at
500 Mb/s and on a mis-shaped path, a transfer generator in virtual time, and a
Snakemake build whose emulated figure runs beside its simulations. Each test
boots its own kernel and leaves the host's state to itself, so ``make test`` runs this
file beside the twins' smoke tests (tests/test_uml_twins_*.py), a file per pytest
worker; the tests that check what a boot leaves on the host stay in tests/test_uml.py,
run alone."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import DUMBBELL, ROOT, reno_100m, scenario_dict, uml_batch, uml_or_skip
from tcprepro import metrics
from tcprepro.bench_workflow import job_spans
from tcprepro.scenario_io import load_scenario_dict
from test_workflow import copy_workflow, snakemake


def _busy_fraction(before, after):
    fields = [b - a for a, b in zip(before, after, strict=True)]
    return 1.0 - (fields[3] + fields[4]) / sum(fields)


def _cpu_times():
    with open("/proc/stat") as handle:
        return [int(v) for v in handle.readline().split()[1:]]


@pytest.fixture(scope="module")
def reno_runs(tmp_path_factory):
    """The Reno run twice, in three boots: first while a CPU hog keeps every host core
    busy (started and ended here), then on the host as it is."""
    from tcprepro.emulation.runner import EmulationJob
    from tcprepro.store import open_dataset

    scenario = reno_100m()
    uml_or_skip(scenario)
    folder = tmp_path_factory.mktemp("uml")
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        before = _cpu_times()
        [loaded] = uml_batch([EmulationJob(scenario, 0, folder / "loaded.nc")])
        busy = _busy_fraction(before, _cpu_times())
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    [idle] = uml_batch([EmulationJob(scenario, 0, folder / "again.nc")])
    for result in (loaded, idle):
        assert result.ok, result.error
    return {
        "busy": busy,
        "loaded": open_dataset(folder / "loaded.nc"),
        "again": open_dataset(folder / "again.nc"),
    }


@pytest.mark.slow
def test_virtual_clock_keeps_a_100mbps_reno_flow_at_full_rate_on_a_saturated_host(reno_runs):
    ds = reno_runs["loaded"]
    assert reno_runs["busy"] >= 0.95, "the hog did not keep the host's cores busy"
    assert ds.attrs["route"] == "uml"
    assert ds.attrs["clock_mode"].startswith("virtual")
    assert str(ds["flow_cc_type"].sel(flow="f0").values) == "linux:reno"
    goodput = float(metrics.goodput_bps(ds).sel(flow="f0"))
    ratio = float(ds.attrs["wall_time_ratio"])
    print(
        f"goodput {goodput / 1e6:.2f} Mb/s of 100 with host cores {reno_runs['busy']:.0%} busy;"
        f" {ds.attrs['guest_time_s']} guest s in {ds.attrs['wall_time_s']} wall s"
        f" (ratio {ratio:.3f}); flags: {ds.attrs['fidelity_flags'] or 'none'}"
    )
    assert goodput >= 0.93 * 100e6
    assert ds.attrs["fidelity_ok"] == 1, ds.attrs["fidelity_flags"]
    report = json.loads(ds.attrs["fidelity"])
    assert report["tolerances"]["cpu_gate"] is False
    assert float(report["links"][0]["probe_rtt_s"]) == pytest.approx(0.020, abs=1e-4)
    assert 0 < ratio < 100
    assert float(ds.attrs["wall_time_s"]) > 0


@pytest.mark.slow
def test_the_same_run_in_another_boot_gives_the_same_goodput(reno_runs):
    first = float(metrics.goodput_bps(reno_runs["loaded"]).sel(flow="f0"))
    second = float(metrics.goodput_bps(reno_runs["again"]).sel(flow="f0"))
    print(f"goodput {first / 1e6:.3f} and {second / 1e6:.3f} Mb/s")
    assert second == pytest.approx(first, rel=0.01)
    assert reno_runs["again"].attrs["cache_key"] == reno_runs["loaded"].attrs["cache_key"]


@pytest.mark.slow
def test_the_gate_passes_a_500mbps_probe_and_flags_a_misshaped_path(tmp_path):
    """One boot, two runs: a 500 Mb/s bottleneck, whose probe must pass in virtual time,
    and a path whose access link (50 Mb/s) is slower than the 100 Mb/s bottleneck the
    probe checks: the traced link cannot deliver its configured rate, so the run is
    flagged, virtual clock or not."""
    from tcprepro.emulation.runner import EmulationJob
    from tcprepro.store import open_dataset

    fast = reno_100m(duration="1s", warmup="0.5s")
    data = json.loads(fast.to_json())
    data["topology"]["bottleneck"]["rate"] = "500Mbps"
    fast = load_scenario_dict(data)
    misshaped = json.loads(reno_100m(duration="1s", warmup="0.5s").to_json())
    misshaped["topology"]["senders"][0]["rate"] = "50Mbps"
    misshaped = load_scenario_dict(misshaped)
    uml_or_skip(fast)
    results = uml_batch(
        [
            EmulationJob(fast, 0, tmp_path / "fast.nc"),
            EmulationJob(misshaped, 0, tmp_path / "misshaped.nc"),
        ]
    )
    for result in results:
        assert result.ok, result.error
    good, bad = (open_dataset(tmp_path / n) for n in ("fast.nc", "misshaped.nc"))
    for ds in (good, bad):
        probe = json.loads(ds.attrs["fidelity"])["links"][0]
        print(
            f"{probe['configured_rate_bps'] / 1e6:g} Mb/s: probe {probe['rate_ratio']:.3f} of "
            f"expected, RTT {probe['probe_rtt_s'] * 1e3:.2f} ms; ratio "
            f"{ds.attrs['wall_time_ratio']}; flags: {ds.attrs['fidelity_flags'] or 'none'}"
        )
    assert good.attrs["fidelity_ok"] == 1, good.attrs["fidelity_flags"]
    # iperf 2 sent the probe (it sleeps; iperf3 polls the clock), and the run's stages are
    # timed on both clocks: the 1-s probe, its pings and drain in guest seconds
    assert good.attrs["traffic_tool"] == "iperf2"
    assert good.attrs["stage_probe_guest_s"] >= 1.0
    assert good.attrs["stage_traffic_guest_s"] >= 1.0
    assert good.attrs["stage_probe_wall_s"] > 0
    assert float(good["link_probe_goodput_bps"].sel(link="bottleneck")) == pytest.approx(
        float(good["link_probe_expected_bps"].sel(link="bottleneck")), rel=0.05
    )
    assert bad.attrs["fidelity_ok"] == 0
    assert "bottleneck: probe rate" in bad.attrs["fidelity_flags"]


@pytest.mark.slow
def test_generated_transfers_on_the_uml_route_open_on_time_and_last_as_in_ns3(tmp_path):
    """A poisson_transfers generator (Linux's CUBIC, exponential sizes of mean 30 kB, 30 %
    of a 10 Mb/s link with a 40-ms RTT) beside a bulk Reno flow, in UML's virtual time: the
    guest's sender opens each planned transfer at its arrival and never stalls the clock,
    every transfer that ends brings all its bytes, and the transfers' median duration is
    within a factor of 2 of ns-3's for the same planned transfers."""
    from tcprepro.emulation.runner import EmulationJob
    from tcprepro.ns3.backend import run_scenario as simulate
    from tcprepro.store import open_dataset

    scenario = load_scenario_dict(
        scenario_dict(
            DUMBBELL,
            topology={
                "kind": "dumbbell",
                "bottleneck": {"rate": "10Mbps", "delay": "15ms", "buffer_pkts": 50},
                "senders": [{"name": "s", "count": 1, "rate": "1Gbps", "delay": "5ms"}],
            },
            flows={"f0": {"src": "s0", "variant": "NewReno"}},
            traffic={
                "web": {
                    "kind": "poisson_transfers",
                    "src": "s0",
                    "variant": "Cubic",
                    "load": 0.3,
                    "size": {"law": "exponential", "mean": "30kB"},
                }
            },
            duration="10s",
            warmup="2s",
        )
    )
    uml_or_skip(scenario)
    [result] = uml_batch([EmulationJob(scenario, 0, tmp_path / "web.nc")])
    assert result.ok, result.error
    emulated, simulated = open_dataset(tmp_path / "web.nc"), simulate(scenario, 0)
    summary = json.loads(emulated.attrs["transfers"])["web"]
    print(f"transfers: {summary}")
    assert summary["planned"] == summary["opened"] > 50
    assert summary["errors"] == 0
    assert summary["max_late_s"] < 0.005  # virtual time: each opening at its arrival
    ended = np.isfinite(emulated["transfer_end_s"].values)
    sizes = emulated["transfer_size_bytes"].values
    assert np.array_equal(emulated["transfer_rx_bytes"].values[ended], sizes[ended])
    both = ended & np.isfinite(simulated["transfer_end_s"].values)
    durations = {
        name: (ds["transfer_end_s"] - ds["transfer_start_s"]).values[both]
        for name, ds in (("linux", emulated), ("ns3", simulated))
    }
    ratio = float(np.median(durations["linux"]) / np.median(durations["ns3"]))
    print(
        f"median duration over {both.sum()} transfers: Linux "
        f"{np.median(durations['linux']) * 1e3:.0f} ms, ns-3 "
        f"{np.median(durations['ns3']) * 1e3:.0f} ms (ratio {ratio:.2f})"
    )
    assert 0.5 < ratio < 2.0


@pytest.mark.slow
def test_an_emulated_figure_runs_beside_the_simulations_of_its_build(tmp_path):
    """``snakemake --cores 2`` of figure D1.1 (D1's cells emulated: two runs on the UML
    route, drawn with D1) and of A1's simulations: the emulate job is one boot on one core,
    starts first (the longest job: priorities are the jobs' estimated seconds) and the
    simulate batches run on the other core meanwhile, instead of waiting for both cores to
    be free; then the emulated figure is drawn and passes the figure checks."""
    from tcprepro.campaign import load_workflow_config

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    uml_or_skip(config.runs("D1.1", "smoke", "mininet")[0].scenario())
    workdir = copy_workflow(tmp_path)
    targets = ["paper/figures/D1.1.pdf", "data/combined/A1.nc"]
    result = snakemake(
        workdir,
        *targets,
        "--profile",
        "workflow/profiles/smoke",
        "--cores",
        "2",
        "--printshellcmds",
        "--config",
        "tier=smoke",
        "emulation=include",
    )
    log = result.stdout + result.stderr
    assert "--figure D1.1 --route uml --jobs 1" in log
    spans = list(job_spans(log).values())
    [emulate] = [s for s in spans if s["rule"] == "emulate_figure"]
    simulate = [s for s in spans if s["rule"] == "simulate_batch"]
    assert len(simulate) == len(config.batches("A1", "smoke")) + len(config.batches("D1", "smoke"))
    print(
        f"emulate {emulate['start']:%T}-{emulate['end']:%T}; simulate "
        + ", ".join(f"{s['start']:%T}-{s['end']:%T}" for s in simulate)
    )
    assert emulate["start"] <= min(s["start"] for s in simulate)
    beside = [s for s in simulate if emulate["start"] <= s["start"] and s["end"] < emulate["end"]]
    assert beside, "no simulate job ran while the emulation did"
    assert (workdir / "paper/figures/D1.1.pdf").stat().st_size > 0


def test_the_uml_sample_times_each_figures_runs_beside_the_plans_estimate():
    """make bench's emulation section: X14's smoke run emulated on the UML route, its
    wall time (set-up, probe, traffic, dataset) from its dataset beside the plan's
    estimate of it, and the report's row."""
    uml_or_skip()
    from tcprepro import bench_sections
    from tcprepro.bench_workflow import uml_sample
    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.plan import uml_run_wall_s

    sample = uml_sample(stride=1, tier="smoke", figures=("X14",), progress=lambda _: None)
    [run] = load_workflow_config(ROOT / "workflow/config.yaml").runs("X14", "smoke", "mininet")
    row = sample["figures"]["X14"]
    assert row["runs"] == 1
    assert row["guest_s"] == run.scenario().duration
    assert row["wall_s"] > row["traffic_s"] > 0
    assert row["plan_s"] == pytest.approx(uml_run_wall_s(run.scenario()))
    assert sample["wall_s"] > row["wall_s"]  # the boot besides the run
    text = "\n".join(bench_sections.uml_section({"uml": sample}))
    assert f"| X14 | 1 | {row['guest_s']:.0f} | {row['wall_s']:.0f} |" in text


def test_guest_contention_times_the_same_runs_alone_and_beside_a_uml_guest():
    """make bench's "A UML guest beside the simulations": D4's smoke sample simulated
    alone, then while a UML guest runs X14's smoke run on the other core; the slowdown is
    the ratio of the runs' own wall times, and the report's row prints it, saying whether
    the guest outlasted the simulations (a smoke run's guest, its boot waited out, can end
    first on a host busy with another test file: the factor is then a lower bound)."""
    uml_or_skip()
    from tcprepro import bench_sections
    from tcprepro.bench_workflow import guest_contention

    row = guest_contention(progress=lambda _: None, tier="smoke", setup=("X14", 1, ("D4",)))
    assert row["runs"] > 0
    assert row["guest_runs"] == 1
    assert row["alone_s"] > 0
    assert row["beside_s"] > 0
    assert row["slowdown"] == pytest.approx(row["beside_s"] / row["alone_s"])
    assert isinstance(row["overlapped"], bool)
    text = "\n".join(bench_sections.contention_section({"contention": row}))
    throughout = "yes" if row["overlapped"] else "no: the factor is a lower bound"
    expected = f"| {row['alone_s']:.1f} | {row['beside_s']:.1f} | {row['slowdown']:.2f} |"
    assert f"{expected} {throughout} |" in text
