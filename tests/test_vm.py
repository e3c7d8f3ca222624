"""The full-kernel VM route (virtme-ng, QEMU with KVM, or TCG without it): one boot for
every test here, a Vegas flow through a netem-delayed link and D1.1's smoke cells. The
boot runs in real time, so ``make test`` runs this file alone; under TCG on a busy host
the fidelity gate flags the runs, which the tests then skip rather than judge."""

import json
import time

import numpy as np
import pytest

from conftest import BOTTLENECK_10M, ROOT
from tcprepro import metrics
from tcprepro.emulation import capabilities
from tcprepro.emulation.fidelity import Tolerances
from tcprepro.scenario_io import apply_overrides, load_scenario_dict
from tcprepro.store import validate_run_dataset


@pytest.fixture(scope="session")
def vm_batch(tmp_path_factory):
    """One VM boot for every VM-route test: a Vegas flow (study A's kind of scenario) and
    the two cells of D1.1's smoke tier (iperf 2, BE 16 KiB and 1 MiB, BR 16 MiB)."""
    from tcprepro.campaign import load_workflow_config
    from tcprepro.emulation.runner import EmulationJob, emulate_batch
    from tcprepro.store import open_dataset

    # RTT 2 x 25 ms through a 10 Mb/s netem-delayed link; one Vegas flow (a module)
    data = apply_overrides(
        BOTTLENECK_10M,
        [
            "topology.bottleneck.delay=25ms",
            "topology.reverse.delay=25ms",
            "flows={f0: {src: s0, variant: Vegas}}",
            "duration=15s",
            "warmup=5s",
        ],
    )
    scenario = load_scenario_dict(data)
    needs = capabilities.scenario_needs(scenario) | capabilities.tool_needs("iperf2")
    missing = capabilities.vm_missing(needs)
    if missing:
        pytest.skip("missing capability for the VM route: " + "; ".join(str(m) for m in missing))
    folder = tmp_path_factory.mktemp("vm")
    jobs = {"vegas": EmulationJob(scenario, 0, folder / "vegas.nc")}
    config = load_workflow_config(ROOT / "workflow/config.yaml")
    for run in config.runs("D1.1", "smoke", "mininet"):
        be = dict(run.sweep)["send_buffer"]
        jobs[f"d1_{be}"] = EmulationJob(
            run.scenario(), run.rep, folder / f"d1_{be}.nc", run.attrs(), "iperf2"
        )
    started = time.monotonic()
    results = emulate_batch(list(jobs.values()), "vm")
    print(f"VM batch wall time {time.monotonic() - started:.0f} s")
    for result in results:
        assert result.ok, result.error
    return {name: open_dataset(job.output) for name, job in jobs.items()}


@pytest.mark.slow
def test_vm_route_gives_the_configured_rtt_on_a_netem_delayed_link(vm_batch):
    ds = vm_batch["vegas"]
    assert validate_run_dataset(ds) == []
    assert ds.attrs["route"] == "vm"
    configured = float(ds["link_probe_configured_rtt_s"].sel(link="bottleneck"))
    assert configured == pytest.approx(0.050)
    measured = float(ds["link_probe_rtt_s"].sel(link="bottleneck"))
    smallest = float(np.nanmin(ds["rtt_s"].sel(flow="f0").values))  # the flow's smoothed RTT
    print(
        f"VM RTT: probe {measured * 1e3:.1f} ms, flow min {smallest * 1e3:.1f} ms, "
        f"configured {configured * 1e3:.0f} ms; pings {ds.attrs['fidelity']}"
    )
    # the link's RTT is the unloaded probe's; the flow's own RTT includes the queue Vegas
    # keeps on purpose (2-4 packets: 2.4-4.8 ms at 10 Mb/s), so it is printed, not judged
    within = abs(measured / configured - 1) <= 0.10
    if not within:
        # QEMU TCG cannot keep time on a saturated host; then the run must be flagged, not used
        saturated = float(ds.attrs.get("host_cpu_saturated_fraction", 0.0))
        assert saturated > Tolerances().cpu_saturated_fraction, (measured, smallest)
        assert int(ds["fidelity_ok"]) == 0
        assert "RTT" in ds.attrs["fidelity_flags"] or "host CPU" in ds.attrs["fidelity_flags"]
        pytest.skip(
            f"host CPU saturated in {saturated:.0%} of the VM batch (other load on this "
            f"host): probe RTT {measured * 1e3:.1f} ms for {configured * 1e3:.0f} ms cannot be "
            "judged under QEMU TCG; the fidelity gate flagged the run"
        )


@pytest.mark.slow
def test_vm_route_runs_a_vegas_flow(vm_batch):
    ds = vm_batch["vegas"]
    assert str(ds["flow_cc_type"].sel(flow="f0").values) == "linux:vegas"
    assert json.loads(ds.attrs["iperf3"])["f0"]["sender_congestion"] == "vegas"
    assert json.loads(ds.attrs["vm_modules"])["tcp_vegas"] is True
    assert float(ds["flow_rx_bytes"].sel(flow="f0")) > 1e6
    print("VM boot", ds.attrs["vm_boot_s"], "s; fidelity", ds.attrs["fidelity_flags"] or "ok")


@pytest.mark.slow
def test_vm_route_d1_cells_set_each_buffer_at_its_own_end(vm_batch):
    """iperf 2 gives the send buffer to the client and the receive buffer to the server;
    the kernel reports each doubled (socket(7)); iperf3 would have given both 16 KiB."""
    for name, be in (("d1_16KiB", 16 * 1024), ("d1_1MiB", 1024 * 1024)):
        ds = vm_batch[name]
        assert validate_run_dataset(ds) == []
        assert ds.attrs["traffic_tool"] == "iperf2"
        ends = json.loads(ds.attrs["iperf3"])["f0"]
        assert ends["client"]["window_requested_bytes"] == be
        assert ends["client"]["window_size_bytes"] == 2 * be
        assert ends["server"]["window_requested_bytes"] == 16 * 1024 * 1024
        assert ends["server"]["window_size_bytes"] == 2 * 16 * 1024 * 1024
        assert str(ds["flow_cc_type"].sel(flow="f0").values) == "linux:reno"
        in_flight = ds["unacked_bytes"].sel(flow="f0").where(metrics.window(ds))
        assert float(in_flight.max()) > 0


@pytest.mark.slow
def test_vm_route_d1_window_from_ss_agrees_with_throughput_times_rtt(vm_batch):
    """Two independent measurements of the send window of each cell: the sampled bytes in
    flight of the sender (ss bytes_sent - bytes_acked) and the bytes the receiver got per
    smoothed RTT (Little's law). The 1-MiB cell fills the link. Linux grants twice each
    requested send buffer (iperf 2's report); the 16-KiB cell stays far below the link
    only when the kernel holds the sender to that buffer, which Linux 6.1 often does not
    at this time-scaled RTT (400 ms: 0.2-0.8 MB in flight at the peak); the analysis then
    marks the cell (``send_buffer_held``) and D-c1/D-c2 leave it out."""
    from tcprepro.analysis.study_d import buffer_table
    from tcprepro.store import combine_runs

    table = buffer_table(combine_runs([vm_batch["d1_16KiB"], vm_batch["d1_1MiB"]]))
    small = table[table["send_buffer_bytes"] == 16 * 1024].iloc[0]
    large = table[table["send_buffer_bytes"] == 1024 * 1024].iloc[0]
    columns = ["send_buffer_bytes", "measured_bps", "window_bytes", "window_little_bytes"]
    columns += ["peak_window_bytes", "mean_rtt_s", "send_buffer_held", "fidelity_ok"]
    print(table[columns].to_string())
    for name, requested in (("d1_16KiB", 16 * 1024), ("d1_1MiB", 1024 * 1024)):
        client = json.loads(vm_batch[name].attrs["iperf3"])["f0"]["client"]
        assert client["window_size_bytes"] == 2 * requested, name
    flags = "; ".join(
        f"{name}: {vm_batch[name].attrs['fidelity_flags'] or 'passed'}"
        for name in ("d1_16KiB", "d1_1MiB")
    )
    if int(small["fidelity_ok"]) == 0 or int(large["fidelity_ok"]) == 0:
        # a flagged run is no evidence of anything, D-c2 included
        pytest.skip(f"the fidelity gate flagged the runs (host too busy for TCG): {flags}")
    assert small["window_bytes"] == pytest.approx(small["window_little_bytes"], rel=0.3)
    assert large["measured_bps"] >= 0.85 * large["capacity_bps"]
    if bool(small["send_buffer_held"]):
        assert small["measured_bps"] < 0.5 * small["capacity_bps"]  # D-c2's premise
    else:  # Linux 6.1 at RTT 400 ms, in QEMU and UML alike (docs/emulation.md)
        print(
            f"BE 16 KiB: peak {small['peak_window_bytes']:.0f} B in flight for a granted "
            f"buffer of {small['sndbuf_granted_bytes']:.0f} B (kernel "
            f"{vm_batch['d1_16KiB'].attrs.get('kernel', '?')}): not held, left out of D-c1/D-c2"
        )
