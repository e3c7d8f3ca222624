"""Studies A and D's twins on the UML route (virtual clock) against ns-3, at their smoke
tier: A1's headline cell (X1), D1's buffer cells at 1 Gb/s (X3), D3's loss cells (X4)
and D4's sized transfers (X11). Each test boots its own kernel (see
tests/test_uml_runs.py for how ``make test`` runs these files side by side)."""

import json
import math

import pytest

from tcprepro import metrics
from twins import against_ns3_seeds, crosscheck_smoke


@pytest.mark.slow
def test_a1_smoke_cell_agrees_with_ns3_on_the_uml_route(tmp_path):
    """Study A's headline cell (A1's 10/2 Mb/s access link, 40-packet uplink buffer,
    NewReno both ways; X1's first smoke cell, 20 s) in ns-3 and with real Linux TCP in
    virtual time: utilisation and mean RTT of both flows within X1's stated tolerance of
    the range ns-3 itself gives over ten seeds.

    Twenty seconds hold about one Reno sawtooth of the 2 Mb/s upload, so one seed is not
    a reference: over seeds 0-9 ns-3's upload uses 37-52 % of the uplink and its mean RTT
    spans 275-322 ms. One emulated run against one seed sits at the edge of X1's +-10
    points / +-20 % by chance (four UML runs of this cell gave an upload RTT 15-22 % under
    seed 0's, also under the seeds' lowest: docs/emulation.md says why); against the
    seeds' range the test decides what it claims.
    """
    table, shown, _ = crosscheck_smoke(tmp_path, "X1", cells=1)
    assert len(table) == 2  # the download and the upload of this cell
    assert (table["fidelity"] == "ok").all(), shown
    seeds = against_ns3_seeds(tmp_path, "X1", table)
    assert seeds["util_in"].all(), (seeds, shown)
    assert seeds["rtt_in"].all(), (seeds, shown)


@pytest.mark.slow
def test_d1_smoke_cells_on_the_uml_route_against_ns3(tmp_path):
    """D1's cells at the thesis's real 1 Gb/s and 12 ms RTT (X3's smoke tier: BR 256 KiB,
    BE 64 KiB and 2 MiB, 2 s, iperf 2 writing 8 KiB per call as the thesis's iperf 2.0
    did), no time scaling, and the 64-KiB cell again with today's iperf 2 default of
    128-KiB writes. RTT agrees everywhere, and the receive-limited cell (BE 2 MiB) within
    X3's tolerance in throughput.

    The send-limited cell shows that Linux 6.1 keeps a sender to its send buffer with
    large writes only. ns-3's SndBufSize is payload, so FE = BE. With 128-KiB writes
    Linux keeps its doubled SO_SNDBUF (socket(7)) in flight, FE = 2 BE: twice ns-3's
    throughput. With 8-KiB writes it goes past it to the receive window (BR 256 KiB):
    3.7 times ns-3's throughput, its peak at the bound the analysis allows a held sender
    (2 BE + two 64-KiB skbs), which BR keeps it from passing here."""
    table, shown, emulated = crosscheck_smoke(
        tmp_path, "X3", variants=[(0, ["flows.f0.write_size=128KiB"])]
    )
    assert len(table) == 2
    assert (table["fidelity"] == "ok").all(), shown
    assert table["rtt_ok"].all(), shown
    rows = table.set_index("send_buffer")
    assert bool(rows.loc["2MiB", "util_ok"]), shown  # receive-limited: agreement
    assert not bool(rows.loc["64KiB", "util_ok"]), shown
    from tcprepro import metrics
    from tcprepro.units import parse_size

    windows, goodputs = {}, {}
    for ds in emulated:
        sweep = json.loads(ds.attrs["sweep"])
        writes = json.loads(ds.attrs["flow_write_bytes"])["f0"]
        in_flight = ds["unacked_bytes"].where(metrics.window(ds))
        windows[sweep["send_buffer"], writes] = window = float(in_flight.max())
        goodputs[sweep["send_buffer"], writes] = goodput = float(
            metrics.goodput_bps(ds).sel(flow="f0")
        )
        print(
            f"BE {sweep['send_buffer']}, BR {sweep['recv_buffer']}, {writes} B per write: "
            f"{goodput / 1e6:.1f} Mb/s, {window:.0f} B in flight at most, "
            f"{float(in_flight.mean()):.0f} on average"
        )
        assert ds.attrs["traffic_tool"] == "iperf2"
    be, br = parse_size("64KiB"), parse_size("256KiB")
    # the window's limit where one buffer holds it: twice BE (Linux's doubled SO_SNDBUF),
    # BR. The limit, not the mean: most boots sit at it (260 639 B of 262 144), one of
    # six fell into a cycle of 261 and 197 kB (mean 231 kB, RTT 12.4-12.8 ms)
    assert windows["2MiB", 8192] == pytest.approx(br, rel=0.05)
    assert windows["64KiB", 128 * 1024] == pytest.approx(2 * be, rel=0.05)
    # hence twice ns-3's throughput (the link's capacity from the 8-KiB run's share)
    send_limited = rows.loc["64KiB"]
    capacity = goodputs["64KiB", 8192] / (send_limited["emu_util_pct"] / 100)
    ratio = goodputs["64KiB", 128 * 1024] / capacity * 100 / send_limited["ns3_util_pct"]
    assert ratio == pytest.approx(2.0, rel=0.1), shown
    # 8-KiB writes: past the doubled buffer by more than one 64-KiB skb, up to BR
    assert windows["64KiB", 8192] > 2 * be + 64 * 1024
    assert windows["64KiB", 8192] <= br * 1.05


def _acks_per_data_segment(ds):
    """Pure ACKs the reverse direction carried per data segment sent, in the window (a
    pure ACK is the TCP/IP header plus the link's L2 bytes; SACK blocks make a few
    longer, so this is an upper bound)."""
    from tcprepro import metrics

    mask = metrics.window(ds)
    header = 40 + (12 if json.loads(ds.attrs["config"])["tcp"]["timestamps"] else 0)
    ack_bytes = header + float(ds.attrs["l2_overhead_bytes"])
    acks = float(ds["tx_bytes"].sel(link="reverse").where(mask).sum()) / ack_bytes
    return acks / float(ds["tx_data_pkts"].where(mask).sum())


def _mathis_constant(ds):
    """Throughput x mean RTT x sqrt(p) / MSS of flow f0 over the window, p being the
    share of its data segments the path lost at random (Mathis et al.'s C)."""
    from tcprepro import units

    mask = metrics.window(ds)
    flow = ds.sel(flow="f0")
    lost = float(flow["random_lost_pkts"].where(mask).sum())
    sent = float(flow["tx_data_pkts"].where(mask).sum())
    assert lost > 0, "no random loss in the window: Mathis's constant is undefined"
    goodput = float(metrics.goodput_bps(ds).sel(flow="f0"))
    rtt = float(metrics.mean_rtt_s(ds).sel(flow="f0"))
    mss = units.parse_size(json.loads(ds.attrs["config"])["tcp"]["mss"])
    return goodput / 8.0 * rtt * math.sqrt(lost / sent) / mss


@pytest.mark.slow
def test_d3_smoke_cells_on_the_uml_route_against_ns3(tmp_path):
    """D3's loss cells at the real 1 Gb/s and 20-ms RTT (X4's smoke tier: SACK, p = 1e-3
    and 1e-2, b = 1 and 2, 10 s with 2 s of warm-up), no time scaling. Every run passes
    the fidelity gate and every mean RTT agrees within X4's tolerance.

    Throughput, ns-3 / Linux in % of the link, three boots (UML's netem draws its losses
    from the kernel's generator, unseeded: each boot is another sample; 8 s hold 20-70
    loss events, about 1/sqrt(N) = 12-22 % of noise):

    - b = 1 (Linux: route metric quickack 1), p = 1e-3: 2.28 / 2.45, 2.13, 2.42, 2.54, 1.76
      (+7, -7, +6, +11, -23 %): one ns-3 seed is no reference for a cell of about 20 losses
      (ns-3's seeds 0-9 give 1.8-2.7 %), so the agreement is asserted against ns-3's range
      over ten seeds, widened by X4's tolerance (1.76 is inside it).
    - b = 1, p = 1e-2: 0.61 / 0.71, 0.77, 0.76 (+17, +26, +25 %): Linux past the 20 %
      bound in two boots of three, above ns-3 every time (Linux's PRR and RACK recover from several
      losses in a window where ns-3 runs classic NewReno recovery). Asserted: Linux not
      below ns-3's ten-seed range beyond the tolerance; whether it is faster beyond it is
      for the quick tier (110 s) to say, not for a wider bound.
    - b = 2: 1.49 / 2.72, 2.11, 2.22 (+83, +42, +49 %) at p = 1e-3, 0.40 / 0.68, 0.76, 0.74
      (+70, +89, +86 %) at 1e-2: outside the tolerance, explained by the stacks (X4's notes,
      docs/emulation.md). ns-3's NewReno grows its window per ACK, so b = 2 slows it by
      about sqrt(2) (ns-3 b = 1 / b = 2: 1.53 at both p); Linux's Reno counts acknowledged
      segments, so the ACK rate does not set its growth, and its receiver ACKs less often
      than every second segment here (one pure ACK per 5-12 data segments: it holds the
      ACK while received data waits for the application). Linux at b = 2 runs like Linux
      at b = 1 (0.92-1.11x in three boots, 1.30x in a fourth, 0.71x in a fifth, whose
      b = 1 cell drew few losses). Asserted: Linux above ns-3 at b = 2, and the growth
      itself, read free of the loss count's noise: each run's throughput x RTT x sqrt(p),
      p being the run's own share of lost data segments (Mathis's constant, which a
      run's draw of losses does not move: ns-3's ten seeds give 1.14-1.26 at b = 1,
      p = 1e-3, where their throughputs span 17-26 Mb/s). Its b = 2 / b = 1 ratio tells
      the two growth rules apart: growth per ACK predicts sqrt(a2 / a1), a being the run's
      own ACKs per data segment (ns-3: sqrt(0.52) = 0.72; Linux, were it to grow per ACK,
      sqrt(0.1-0.2) = 0.3-0.45), growth per acknowledged segment predicts 1. Each stack
      is asserted on its own side of the geometric midpoint (a2 / a1)^(1/4): ns-3 below
      (0.71-0.77 against 0.85-0.86), Linux above (at p = 1e-3 and 1e-2: 1.04 and 1.06,
      1.03 and 1.09, 0.96 and 1.07, 0.97 and 1.03, 1.05 and 1.07 in five boots, 0.89 at
      p = 1e-3 in the CI boot of 2026-11-23, against 0.55-0.68). An earlier form asked
      Linux's ratio to beat ns-3's by X4's 20 %: that margin is about one standard
      deviation of a ratio of two 20-loss runs, and that CI boot missed it (0.894 against
      0.895). ns-3's seed is fixed, so its side cannot vary.

    And quickack reaches the receiver: Linux sends one ACK per data segment at b = 1
    (0.98-1.01, ns-3 1.00-1.01), at least twice as many as at b = 2 (Linux 0.09-0.21,
    ns-3 0.52-0.56)."""
    from tcprepro.store import open_dataset

    table, shown, emulated = crosscheck_smoke(tmp_path, "X4")
    assert len(table) == 4
    assert (table["fidelity"] == "ok").all(), shown
    assert table["rtt_ok"].all(), shown
    rows = table.set_index(["loss", "delack"])
    simulated = [open_dataset(path) for path in sorted(tmp_path.glob("ns3-*.nc"))]
    acks, mathis = {}, {}
    for backend, datasets in (("ns-3", simulated), ("Linux", emulated)):
        for ds in datasets:
            sweep = json.loads(ds.attrs["sweep"])
            key = (backend, sweep["loss"], int(sweep["delack"]))
            acks[key] = _acks_per_data_segment(ds)
            mathis[key] = _mathis_constant(ds)
            flow = ds.sel(flow="f0")
            print(
                f"{backend}, p = {sweep['loss']}, b = {sweep['delack']}: "
                f"{acks[key]:.3f} ACKs per data segment, "
                f"{float(flow['random_lost_pkts'].sum()):.0f} random losses, "
                f"{float(flow['rto_count'].sum()) if 'rto_count' in flow else float('nan'):.0f}"
                f" timeouts, {float(flow['tx_data_pkts'].sum()):.0f} data segments"
            )
    # b = 1 against ns-3's ten seeds: agreement at p = 1e-3, not slower at 1e-2 (see above)
    seeds = against_ns3_seeds(tmp_path, "X4", table[table["delack"] == 1])
    assert seeds.loc[("10ms", "0.001", "True", "1", "f0"), "util_in"], (seeds, shown)
    assert seeds.loc[("10ms", "0.01", "True", "1", "f0"), "util_not_below"], (seeds, shown)
    for loss in ("0.001", "0.01"):
        delayed = rows.loc[(loss, 2)]
        assert delayed["emu_util_pct"] > delayed["ns3_util_pct"], shown
        # the ACK rate slows ns-3's growth, not Linux's, read in Mathis's constant (the
        # throughputs themselves carry the 1/sqrt(N) noise of each run's loss count)
        ratio = {b: mathis[(b, loss, 2)] / mathis[(b, loss, 1)] for b in ("ns-3", "Linux")}
        print(f"p = {loss}: b = 2 / b = 1 of throughput x RTT x sqrt(p): {ratio}")
        # per-ACK growth predicts sqrt(a2 / a1), per-segment growth 1: each stack's ratio
        # on its own side of the geometric midpoint between the two
        midpoint = {b: (acks[(b, loss, 2)] / acks[(b, loss, 1)]) ** 0.25 for b in ratio}
        print(f"p = {loss}: midpoint between the two growth rules: {midpoint}")
        assert ratio["ns-3"] < midpoint["ns-3"], (ratio, midpoint, shown)
        assert ratio["Linux"] > midpoint["Linux"], (ratio, midpoint, shown)
        assert 0.9 <= acks[("Linux", loss, 1)] <= 1.15, acks
        assert acks[("Linux", loss, 1)] >= 2 * acks[("Linux", loss, 2)], acks
    for ds in emulated:
        assert ds.attrs["traffic_tool"] == "iperf2"


@pytest.mark.slow
def test_sized_flows_on_the_uml_route_end_at_their_last_byte_as_in_ns3(tmp_path):
    """D4's cells (X11's smoke tier: one NewReno transfer of 64 KiB or 1 MiB over 1 Gb/s
    and 8.5 ms, a 32-KiB receive buffer): on the UML route a sized flow is one planned
    transfer whose sink times its last byte. Each transfer opens, delivers all its bytes
    and ends; the goodput series adds up to its size; its throughput (volume over the time
    from the end of the handshake to the last byte, D4's measure and X11's compared
    utilisation) is within X11's tolerance of ns-3's for 1 MiB, where the window limits
    both stacks, and smaller for 64 KiB than for 1 MiB in both (D4's point: a small
    transfer ends before it reaches its rate)."""
    from tcprepro.store import open_dataset

    table, shown, emulated = crosscheck_smoke(tmp_path, "X11")
    assert len(table) == 2
    assert (table["fidelity"] == "ok").all(), shown
    rates = {}
    for i, ds in enumerate(emulated):
        flow = ds.sel(flow="f0")
        size = int(flow["flow_size_bytes"])
        carried = json.loads(ds.attrs["iperf3"])["f0"]
        assert carried["recv_buffer_requested_bytes"] == 32 * 1024  # the sink's SO_RCVBUF
        summary = carried["transfers"]
        print(f"{ds.attrs['sweep']}: {summary}")
        assert summary["planned"] == summary["opened"] == summary["delivered"] == 1
        assert summary["errors"] == 0
        assert float(flow["flow_rx_bytes"]) == size
        end, connected = float(flow["flow_end_s"]), float(flow["flow_connected_s"])
        assert float(flow["flow_start_s"]) <= connected < end
        # the goodput series carries every byte, from the samples and the sink's count
        interval = float(ds["time"][1] - ds["time"][0])
        assert float(flow["goodput_bps"].sum()) * interval / 8 == pytest.approx(size, rel=1e-9)
        simulated = open_dataset(tmp_path / f"ns3-{i}.nc").sel(flow="f0")
        rates[size] = {
            name: 8 * size / float(d["flow_end_s"] - d["flow_connected_s"]) / 1e6
            for name, d in (("linux", flow), ("ns3", simulated))
        }
        print(f"{size} bytes: Linux {rates[size]['linux']:.1f} Mb/s, ns-3 {rates[size]['ns3']:.1f}")
    small, large = sorted(rates)
    assert bool(table.loc[table["size"] == "1MiB", "util_ok"].iloc[0]), shown
    for stack in ("linux", "ns3"):
        assert rates[small][stack] < rates[large][stack], rates
