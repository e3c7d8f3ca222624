"""The traces of an emulated run (tcprepro.emulation.traces) from recorded samples of
ss, tc and netstat. No root."""

import json

import numpy as np

from conftest import ROOT
from tcprepro.emulation import linux
from tcprepro.network_plan import build_plan
from tcprepro.scenario_io import load_scenario
from test_emulation_linux import NETSTAT


def _d3_transfer():
    """D3's one transfer (3 s, sampled every 1 s): the run's view, the flow, its two ends."""
    from tcprepro.emulation import traces
    from tcprepro.emulation.iperf import flow_ports

    d3 = load_scenario(
        ROOT / "workflow/scenarios/D3.yaml", ["duration=3s", "warmup=1s", "trace.interval=1s"]
    )
    view = traces.View(d3, build_plan(d3, 0), "iperf2")
    [flow] = view.plan.flows
    port, cport = flow_ports(0)
    src = linux.endpoint(view.addressing.host_ip(flow.src), cport)
    dst = linux.endpoint(view.addressing.host_ip(flow.dst), port)
    return view, flow, src, dst


def test_d3_traces_give_the_flow_its_timeouts_and_netem_losses():
    """One transfer on D3's lossy path: its random losses are netem's drops on the
    bottleneck (the only lossy direction, no other flow), its RTO expiries the sender
    namespace's TcpExt TCPTimeouts, both counted from sample 0."""
    from tcprepro.emulation import traces

    view, flow, src, dst = _d3_transfer()
    ss = f"ESTAB 0 0 {src} {dst}\n\t reno cwnd:10 rtt:20.5/1 data_segs_out:{{segs}}\n"
    samples = {node: [None] * 4 for node in view.plan.nodes}
    samples[flow.src] = [
        {
            "k": k,
            "late_s": 0.0,
            "ss": ss.format(segs=100 * k),
            "netstat": NETSTAT.format(timeouts=5 + t),
        }
        for k, t in enumerate([0, 0, 1, 3])
    ]
    [(index, link)] = [
        (i, link) for i, link in enumerate(view.plan.links) if link.a_to_b.loss_rate > 0
    ]
    dev = view.addressing.interface(index)

    def tc(drops, overflow):
        # netem at the root counts the buffer's overflow among its own drops (a child
        # refusing a packet netem hands it is a netem drop too): in UML, X5's slow start
        # overflowed 136 packets of a 1e-3 loss link and netem counted 137
        return json.dumps(
            [
                {"kind": "netem", "handle": "1:", "drops": drops + overflow, "bytes": 0},
                {"kind": "htb", "handle": "2:", "bytes": 1000, "packets": 1},
                {"kind": "pfifo", "handle": "3:", "drops": overflow, "qlen": 0, "backlog": 0},
            ]
        )

    samples[link.a] = [
        {"k": k, "late_s": 0.0, "tc": {dev: tc(d, o)}}
        for k, (d, o) in enumerate([(2, 0), (2, 136), (4, 165), (9, 165)])
    ]
    series, _ = traces.flow_series(view, samples, 3)
    assert series["rto_count"][:, 0].tolist() == [0, 0, 1, 3]
    names, links = traces.link_series(view, samples, 3)
    assert links["random_drops_pkts"][:, names.index("bottleneck")].tolist() == [0, 0, 2, 7]
    assert links["random_drops_pkts"][:, names.index("reverse")].tolist() == [0, 0, 0, 0]
    lost = traces.flow_random_losses(view, names, links, 3)
    assert lost[:, 0].tolist() == [0, 0, 2, 7]
    # samples of an older sampler (no netstat): no rto_count series, as before
    for sample in samples[flow.src]:
        del sample["netstat"]
    assert "rto_count" not in traces.flow_series(view, samples, 3)[0]


def test_samples_read_over_netlink_give_the_series_of_ss_and_tc_text():
    """The sampler reads sockets and qdiscs over netlink (tcprepro.emulation.netlink) in
    ss's and tc's notation: the same counters as structures give the same series as
    the two programs' text."""
    from tcprepro.emulation import traces

    view, flow, src, dst = _d3_transfer()
    [(index, link)] = [
        (i, link) for i, link in enumerate(view.plan.links) if link.a_to_b.loss_rate > 0
    ]
    dev = view.addressing.interface(index)
    fields = [
        {"cwnd": str(10 + k), "rtt": f"{20 + k}.5/1", "data_segs_out": str(100 * k), "mss": "1448"}
        for k in range(4)
    ]
    qdiscs = [
        [
            {"kind": "netem", "handle": "1:", "drops": 3 * k, "bytes": 0},
            {"kind": "htb", "handle": "2:", "bytes": 1000 * k, "packets": k},
            {"kind": "pfifo", "handle": "3:", "drops": k, "qlen": k, "backlog": 1500 * k},
        ]
        for k in range(4)
    ]

    def text(k):
        line = " ".join(f"{name}:{value}" for name, value in fields[k].items())
        return {"ss": f"ESTAB 0 0 {src} {dst}\n\t reno {line}\n"}

    def structured(k):
        return {"sockets": [["ESTAB", src, dst, "reno", fields[k]]]}

    results = []
    for form, tc in (
        (text, lambda q: {"tc": {dev: json.dumps(q)}}),
        (structured, lambda q: {"qdiscs": {dev: q}}),
    ):
        samples = {node: [None] * 4 for node in view.plan.nodes}
        samples[flow.src] = [{"k": k, "late_s": 0.0, **form(k)} for k in range(4)]
        samples[link.a] = [{"k": k, "late_s": 0.0, **tc(q)} for k, q in enumerate(qdiscs)]
        series, facts = traces.flow_series(view, samples, 3)
        names, links = traces.link_series(view, samples, 3)
        results.append((series, facts, names, links))
    (s1, f1, n1, l1), (s2, f2, n2, l2) = results
    assert s1["cwnd_bytes"][:, 0].tolist() == [14480, 15928, 17376, 18824]
    assert l1["queue_pkts"][:, n1.index("bottleneck")].tolist() == [0, 1, 2, 3]
    assert f1["cc"] == f2["cc"] == ["reno"]
    assert n1 == n2
    assert (s1.keys(), l1.keys()) == (s2.keys(), l2.keys())
    for name in s1:
        np.testing.assert_array_equal(s1[name], s2[name], err_msg=name)
    for name in l1:
        np.testing.assert_array_equal(l1[name], l2[name], err_msg=name)
