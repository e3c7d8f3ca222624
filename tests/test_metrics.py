import numpy as np
import pytest
import xarray as xr

from synthetic import synthetic_pair, synthetic_run
from tcprepro import metrics


def test_goodput_and_utilisation_use_the_measurement_window_only():
    ds = synthetic_run(goodput_bps=(9.0e6, 0.96e6), capacity_bps=(9.6e6, 1.92e6))
    assert metrics.goodput_bps(ds).sel(flow="down") == pytest.approx(9.0e6)
    util = metrics.utilisation(ds)
    assert util.sel(flow="down") == pytest.approx(9.0 / 9.6)
    assert util.sel(flow="up") == pytest.approx(0.5)


def test_utilisation_maps_each_flow_to_its_own_link():
    ds = synthetic_run(goodput_bps=(1e6, 1e6), capacity_bps=(4e6, 2e6))
    util = metrics.utilisation(ds)
    assert float(util.sel(flow="down")) == pytest.approx(0.25)
    assert float(util.sel(flow="up")) == pytest.approx(0.5)


def test_mean_rtt_is_weighted_by_sample_count_and_windowed():
    ds = synthetic_run(rtt_s=(0.2, 0.3))
    rtt = metrics.mean_rtt_s(ds)
    assert float(rtt.sel(flow="down")) == pytest.approx(0.2)
    assert float(rtt.sel(flow="up")) == pytest.approx(0.3)
    # an unweighted mean of interval means would also give 0.3 here, so check the
    # weighting on a case where interval means differ:
    ds["rtt_s"].loc[{"flow": "up"}] = np.where(np.arange(ds.sizes["time"]) % 2, 0.4, 0.1)
    weights = ds["rtt_samples"].sel(flow="up").where(ds.time > 2.0)
    expected = float((ds["rtt_s"].sel(flow="up") * weights).sum() / weights.sum())
    assert float(metrics.mean_rtt_s(ds).sel(flow="up")) == pytest.approx(expected)
    assert expected != pytest.approx(0.25)


def test_loss_rate_and_link_utilisation():
    ds = synthetic_run()
    loss = metrics.loss_rate(ds)
    assert float(loss.sel(flow="down")) == pytest.approx(0.01)
    assert float(loss.sel(flow="up")) == pytest.approx(0.02)
    link = metrics.link_utilisation(ds)
    assert float(link.sel(link="down")) == pytest.approx(0.5)
    assert float(link.sel(link="up")) == pytest.approx(0.5)
    assert float(metrics.mean_queue_pkts(ds).sel(link="up")) == pytest.approx(20.0)


def test_jain_index_known_values():
    equal = xr.DataArray([5.0, 5.0, 5.0, 5.0], dims="flow")
    assert float(metrics.jain_index(equal)) == pytest.approx(1.0)
    one_hog = xr.DataArray([1.0, 0.0, 0.0, 0.0], dims="flow")
    assert float(metrics.jain_index(one_hog)) == pytest.approx(0.25)
    assert float(metrics.jain_index(xr.DataArray([1.0, 3.0], dims="flow"))) == pytest.approx(0.8)


def test_window_requires_warmup():
    ds = synthetic_run()
    del ds.attrs["warmup_s"]
    with pytest.raises(ValueError, match="warmup_s"):
        metrics.window(ds)
    assert int(metrics.window(ds, warmup_s=0.0).sum()) == ds.sizes["time"]


# ---- study C: metrics of two flows sharing one bottleneck (known answers) ------------


def test_jain_index_of_two_flows_on_a_synthetic_trace():
    ds = synthetic_pair(goodput_bps=(30e6, 10e6))
    jain = metrics.jain_index(metrics.goodput_bps(ds))
    assert float(jain) == pytest.approx(40.0**2 / (2 * (30.0**2 + 10.0**2)))  # 0.8
    fair = synthetic_pair(goodput_bps=(20e6, 20e6))
    assert float(metrics.jain_index(metrics.goodput_bps(fair))) == pytest.approx(1.0)


def test_rtt_fairness_ratio_and_share_on_a_synthetic_trace():
    ds = synthetic_pair(goodput_bps=(30e6, 10e6))
    assert float(metrics.rtt_fairness_ratio(ds, long_flow="f2", short_flow="f1")) == (
        pytest.approx(1 / 3)
    )
    assert float(metrics.rtt_fairness_ratio(ds, long_flow="f1", short_flow="f2")) == (
        pytest.approx(3.0)
    )
    assert float(metrics.throughput_share(ds, "f1")) == pytest.approx(0.75)
    assert float(metrics.throughput_share(ds, "f2", flows=["f2"])) == pytest.approx(1.0)
    assert float(metrics.total_utilisation(ds)) == pytest.approx(40e6 / 48e6)


def test_loss_probability_of_a_set_of_flows_on_a_synthetic_trace():
    ds = synthetic_pair(sent_pkts=(1000.0, 400.0), lost_pkts=(2.0, 1.0))
    # window only: the warm-up's tenfold losses must not count
    assert float(metrics.loss_probability(ds)) == pytest.approx(3.0 / 1400.0)
    assert float(metrics.loss_probability(ds, flows=["f2"])) == pytest.approx(1.0 / 400.0)
    assert float(metrics.loss_probability(ds, warmup_s=0.0)) != pytest.approx(3.0 / 1400.0)
    lossless = synthetic_pair(lost_pkts=(0.0, 0.0))
    assert float(metrics.loss_probability(lossless)) == 0.0
    assert float(metrics.mean_queue_pkts(ds).sel(link="bottleneck")) == pytest.approx(40.0)


def test_an_unrecorded_drop_count_gives_no_loss_probability_and_retransmissions_stand_in():
    """An emulated run has no drops per flow (NaN): the loss is unknown, not 0."""
    ds = synthetic_pair(sent_pkts=(1000.0, 400.0), lost_pkts=(2.0, 1.0))
    ds["lost_data_pkts"] = ds["lost_data_pkts"] * np.nan
    assert np.isnan(float(metrics.loss_probability(ds)))
    assert np.isnan(metrics.loss_rate(ds).values).all()
    # synthetic_pair retransmits what it lost
    assert float(metrics.retransmission_probability(ds)) == pytest.approx(3.0 / 1400.0)


def test_random_loss_rate_counts_destroyed_over_passed_segments():
    ds = synthetic_pair(sent_pkts=(1000.0, 400.0), lost_pkts=(0.0, 0.0), random_lost_pkts=(1, 1))
    assert float(metrics.random_loss_rate(ds)) == pytest.approx(2.0 / 1400.0)
    assert float(metrics.loss_probability(ds)) == 0.0  # random losses are not overflow


def test_total_utilisation_refuses_flows_on_different_links():
    with pytest.raises(ValueError, match="do not share one link"):
        metrics.total_utilisation(synthetic_run())
