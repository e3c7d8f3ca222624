import subprocess
import sys

import pytest
import yaml

from conftest import ACCESS, DUMBBELL, ROOT, scenario_dict
from tcprepro.errors import ConfigError
from tcprepro.network_plan import build_plan
from tcprepro.scenario_io import apply_overrides, load_scenario, load_scenario_dict


def test_valid_access_scenario_resolves_units():
    scenario = load_scenario_dict(ACCESS)
    assert scenario.topology.downlink.rate == 10e6
    assert scenario.topology.uplink.delay == pytest.approx(0.052)
    assert scenario.flows["up"].variant.name == "NewReno"
    assert scenario.endpoints_of("down") == ("server", "client")
    assert scenario.endpoints_of("up") == ("client", "server")


def test_variant_aliases_and_case_are_canonicalised():
    data = apply_overrides(ACCESS, ["flows.up.variant=cubic", "flows.down.variant=Reno"])
    scenario = load_scenario_dict(data)
    assert scenario.flows["up"].variant.name == "Cubic"
    assert scenario.flows["down"].variant.name == "NewReno"


@pytest.mark.parametrize(
    ("override", "field", "message"),
    [
        ("flows.up.variant=Vegass", "flows.up.variant.name", "unknown TCP variant 'Vegass'"),
        ("topology.uplink.rate=-2Mbps", "topology.uplink.rate", "greater than 0"),
        ("topology.uplink.rate=0", "topology.uplink.rate", "greater than 0"),
        ("topology.uplink.rate=2", "topology.uplink.rate", "needs a unit"),
        ("topology.downlink.buffer_pkts=-5", "topology.downlink.buffer_pkts", "greater than"),
        ("topology.uplink.bufer_pkts=40", "topology.uplink.bufer_pkts", "unknown key"),
        ("durration=10s", "durration", "unknown key"),
        ("warmup=30s", "(top level)", "warmup (30 s) must be shorter than duration"),
        ("flows.up.direction=sideways", "flows.up.direction", "'down' or 'up'"),
        ("topology.uplink.qdisc=sfq", "topology.uplink.qdisc", "unknown queue discipline"),
        ("flows.up.start=-1s", "flows.up.start", "start time must be >= 0"),
        ("flows.up.size=0", "flows.up.size", "size must be"),
        ("seed=0", "seed", "greater than or equal to 1"),
        ("tcp.min_rto=200ms", "tcp", "tcp.delayed_ack_timeout (0.2 s) must be shorter than"),
    ],
)
def test_bad_fields_are_named(override, field, message):
    data = apply_overrides(ACCESS, [override])
    with pytest.raises(ConfigError) as info:
        load_scenario_dict(data, "test.yaml")
    text = str(info.value)
    assert text.startswith("test.yaml: ")
    assert f"{field}: " in text
    assert message in text


def test_pending_model_is_refused_with_reason():
    data = apply_overrides(ACCESS, ["flows.up.variant=Africa"])
    with pytest.raises(ConfigError, match="'Africa' is not available: pending"):
        load_scenario_dict(data)


def test_dumbbell_hosts_and_flow_endpoints():
    scenario = load_scenario_dict(DUMBBELL)
    assert scenario.topology.sender_names == ["s0"]
    assert scenario.endpoints_of("f0") == ("s0", "receiver")
    bad = apply_overrides(DUMBBELL, ["flows.f0.src=s7"])
    with pytest.raises(ConfigError, match=r"flows.f0.src: unknown host 's7'"):
        load_scenario_dict(bad)
    with pytest.raises(ConfigError, match="only the access topology has directions"):
        load_scenario_dict(apply_overrides(DUMBBELL, ["flows.f0.direction=down"]))


def test_base_file_is_merged_and_overridden(tmp_path):
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(ACCESS))
    (tmp_path / "child.yaml").write_text(
        "base: base.yaml\nid: child\ntopology: {kind: access, uplink: {buffer_pkts: 250}}\n"
    )
    scenario = load_scenario(tmp_path / "child.yaml", ["duration=30s"])
    assert scenario.id == "child"
    assert scenario.topology.uplink.buffer_pkts == 250
    assert scenario.topology.uplink.rate == 2e6  # inherited
    assert scenario.duration == 30


def test_circular_base_is_an_error(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\n")
    with pytest.raises(ConfigError, match="circular"):
        load_scenario(tmp_path / "a.yaml")


def test_malformed_yaml_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("id: x\ntopology: {kind: access\nflows: [\n")
    with pytest.raises(ConfigError, match=r"broken.yaml: malformed YAML \(line \d+"):
        load_scenario(path)


def test_override_syntax_errors():
    with pytest.raises(ConfigError, match=r"must look like key\.path=value"):
        apply_overrides(ACCESS, ["duration"])
    with pytest.raises(ConfigError, match="is not a mapping"):
        apply_overrides(ACCESS, ["duration.x=1"])


def test_random_stagger_is_per_rep_and_deterministic():
    data = apply_overrides(ACCESS, ["flows.up.start={uniform: [0s, 10s]}", "repetitions=3"])
    scenario = load_scenario_dict(data)
    starts = [build_plan(scenario, rep).flows[1].start_s for rep in range(3)]
    assert all(0 <= s <= 10 for s in starts)
    assert len(set(starts)) == 3
    assert starts == [build_plan(scenario, rep).flows[1].start_s for rep in range(3)]
    with pytest.raises(ConfigError, match=r"rep: 3 is outside 0\.\.2"):
        build_plan(scenario, 3)


def test_cache_key_covers_scenario_seed_rep_and_versions():
    scenario = load_scenario_dict(ACCESS)
    versions = {"tcprepro": "1", "ns3": "3.44"}
    key = scenario.cache_key(0, "ns3", versions)
    assert key == load_scenario_dict(ACCESS).cache_key(0, "ns3", versions)
    assert key != scenario.cache_key(1, "ns3", versions)
    assert key != scenario.cache_key(0, "ns3", {**versions, "ns3": "3.45"})
    assert key != load_scenario_dict(scenario_dict(ACCESS, seed=2)).cache_key(0, "ns3", versions)
    other = apply_overrides(ACCESS, ["topology.uplink.buffer_pkts=41"])
    assert key != load_scenario_dict(other).cache_key(0, "ns3", versions)


def test_a_sender_groups_label_names_it_for_the_report_and_changes_no_cache_key():
    versions = {"tcprepro": "1", "ns3": "3.44"}
    plain = load_scenario_dict(DUMBBELL)
    labelled = load_scenario_dict(
        apply_overrides(DUMBBELL, ["topology.senders.0.label=bottlenecked flow's host"])
    )
    assert plain.topology.senders[0].shown_name == "senders s"
    assert labelled.topology.senders[0].shown_name == "bottlenecked flow's host"
    # words for a reader: the resolved scenario, its cache key and its runs are the same
    assert labelled.resolved() == plain.resolved()
    assert labelled.cache_key(0, "ns3", versions) == plain.cache_key(0, "ns3", versions)


def test_a_notes_tiers_say_which_reports_show_it_and_change_no_cache_key():
    versions = {"tcprepro": "1", "ns3": "3.44"}
    note = {"field": "sweep", "value": "i = 1, 2", "reason": "budget of the quick tier"}
    plain = load_scenario_dict(scenario_dict(DUMBBELL, notes=[note]))
    tiered = load_scenario_dict(scenario_dict(DUMBBELL, notes=[{**note, "tiers": ["quick"]}]))
    assert plain.notes[0].concerns("smoke")
    assert plain.notes[0].concerns("paper")
    assert tiered.notes[0].concerns("quick")
    assert not tiered.notes[0].concerns("smoke")
    assert tiered.resolved() == plain.resolved()
    assert tiered.cache_key(0, "ns3", versions) == plain.cache_key(0, "ns3", versions)


@pytest.mark.parametrize(
    "override",
    ["flows.up.variant=NotAVariant", "topology.uplink.rate=-1Mbps", "topology.uplinkk.rate=1Mbps"],
)
def test_cli_exits_2_and_writes_nothing(tmp_path, override):
    out = tmp_path / "out.nc"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcprepro.cli",
            "simulate",
            str(ROOT / "workflow/scenarios/A1.yaml"),
            "--set",
            override,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "tcprepro: error:" in result.stderr
    assert override.split("=")[0].rsplit(".", 1)[0].split(".")[0] in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_cli_malformed_file_exits_2(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("id: [unclosed\n")
    result = subprocess.run(
        [sys.executable, "-m", "tcprepro.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "malformed YAML" in result.stderr
