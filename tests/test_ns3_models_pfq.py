"""PFQ/LQD: fairness between Reno and HSTCP, no loss for flows below their fair share, buffer."""

import numpy as np
import pytest

from conftest import DUMBBELL
from model_checks import drivers, simulate
from tcprepro import metrics
from tcprepro.store import validate_run_dataset

BUFFER = 60


def _reno_hstcp_light(qdisc):
    # RTT 100 ms at 30 Mb/s (BDP 250 packets): HSTCP is in its aggressive regime. A third,
    # "light" flow is limited to 1 Mb/s by its access link, far below its fair share.
    return simulate(
        DUMBBELL,
        [
            "duration=40s",
            "warmup=10s",
            "topology.bottleneck.rate=30Mbps",
            "topology.bottleneck.delay=45ms",
            f"topology.bottleneck.buffer_pkts={BUFFER}",
            f"topology.bottleneck.qdisc={qdisc}",
            "topology.senders=[{name: s, count: 2, delay: 5ms}, "
            "{name: light, rate: 1Mbps, delay: 5ms, buffer_pkts: 30}]",
            "flows={reno: {src: s0, variant: NewReno}, hstcp: {src: s1, variant: HighSpeed}, "
            "light: {src: light, variant: NewReno}}",
        ],
    )


@pytest.fixture(scope="module")
def runs():
    return {qdisc: _reno_hstcp_light(qdisc) for qdisc in ("fifo", "pfq_lqd")}


@pytest.mark.slow
def test_reno_and_hstcp_share_fairly_under_pfq_lqd_not_under_fifo(runs):
    jain = {
        qdisc: float(metrics.jain_index(metrics.goodput_bps(ds).sel(flow=["reno", "hstcp"])))
        for qdisc, ds in runs.items()
    }
    assert jain["pfq_lqd"] >= 0.95, jain
    assert jain["fifo"] <= 0.85, jain
    goodput = metrics.goodput_bps(runs["fifo"])
    assert float(goodput.sel(flow="hstcp")) > 2 * float(goodput.sel(flow="reno"))


@pytest.mark.slow
def test_a_flow_below_its_fair_share_loses_nothing_under_pfq_lqd(runs):
    lost = {
        qdisc: ds["lost_data_pkts"].sel(flow="light").sum().item() for qdisc, ds in runs.items()
    }
    assert lost["pfq_lqd"] == 0, lost
    assert lost["fifo"] > 0, lost  # the same flow does lose packets in a FIFO
    pfq = runs["pfq_lqd"]
    # it still gets (nearly) all its access link carries: 1 Mb/s less headers
    assert float(metrics.goodput_bps(pfq).sel(flow="light")) > 0.9e6
    assert pfq["lost_data_pkts"].sel(flow=["reno", "hstcp"]).sum().item() > 0


@pytest.mark.slow
def test_shared_buffer_is_never_exceeded_and_drops_are_attributed(runs):
    for qdisc, ds in runs.items():
        assert validate_run_dataset(ds) == []
        bottleneck = ds.sel(link="bottleneck")
        assert float(bottleneck["link_queue_max_pkts"]) <= BUFFER, qdisc
        assert float(bottleneck["queue_pkts"].max()) <= BUFFER
        drops = float(bottleneck["drops_pkts"].sum())
        assert drops > 0
        # every queue drop is one data segment of a flow (the ACKs use the other direction)
        assert float(ds["lost_data_pkts"].sum()) == drops
    pfq = runs["pfq_lqd"]
    backlog = pfq["backlog_pkts"]
    assert "backlog_pkts" not in runs["fifo"]
    assert float(backlog.max()) > 0
    # per-flow backlogs add up to the bottleneck queue, less what the device holds
    queue = pfq["queue_pkts"].sel(link="bottleneck")
    assert np.all(backlog.sum("flow") <= queue)
    assert np.all(backlog.sum("flow") >= queue - 1)
    assert float(backlog.sel(flow="light").max()) <= 2


def _offer(qdisc, *, drop_front=False):
    # two constant-rate sources at 6 Mb/s each and a Poisson source at 1 Mb/s on 10 Mb/s
    experiment = drivers().QdiscExperiment(qdisc, 10e6, 1)
    assert experiment.Set("MaxSize", "20p") == ""
    if drop_front:
        assert experiment.Set("DropFront", "true") == ""
    for rate_bps, poisson in ((6e6, False), (6e6, False), (1e6, True)):
        experiment.AddSource(rate_bps, 1000, poisson)
    experiment.Run(20.0)
    return experiment


@pytest.mark.parametrize("drop_front", [False, True])
def test_poisson_flow_below_fair_share_is_never_dropped(drop_front):
    pfq = _offer("ns3::PfqLqdQueueDisc", drop_front=drop_front)
    arrived, dropped, served = (
        np.array(list(v())) for v in (pfq.ArrivedPackets, pfq.DroppedPackets, pfq.ServedPackets)
    )
    assert arrived[2] > 2000
    assert dropped[2] == 0
    assert served[2] >= arrived[2] - 1
    # the two greedy sources split what is left equally and lose their excess
    assert served[0] == pytest.approx(served[1], rel=0.01)
    assert dropped[0] > 0
    assert dropped[1] > 0
    assert pfq.MaxStoredPackets() == 20
    fifo = _offer("ns3::FifoQueueDisc")
    assert list(fifo.DroppedPackets())[2] > 0  # the same source loses packets in a FIFO
