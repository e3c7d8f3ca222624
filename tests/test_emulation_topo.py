"""The emulated network of a plan (tcprepro.emulation.topo): its addressing and routes,
and the relay in front of a shaped end host. No root."""

import pytest

from conftest import ACCESS, DUMBBELL
from tcprepro.emulation.topo import Addressing
from tcprepro.network_plan import build_plan
from tcprepro.scenario_io import load_scenario_dict


def test_addressing_routes_every_subnet_through_the_right_neighbour():
    plan = build_plan(load_scenario_dict(ACCESS), 0)
    addressing = Addressing(plan)
    # links: 0 client-router, 1 router-server
    assert addressing.routes("client") == [("10.0.2.0/24", "10.0.1.2", "eth0")]
    assert addressing.routes("server") == [("10.0.1.0/24", "10.0.2.1", "eth1")]
    assert addressing.routes("router") == []
    down = addressing.path_directions("server", "client")
    assert [d.trace_name for d in down] == [None, "down"]
    assert sum(d.delay_s for d in down) == pytest.approx(0.042)


def test_a_traced_direction_leaving_a_host_is_shaped_on_a_relay():
    """Linux keeps a sender's own egress queue nearly empty (TCP small queues), so the
    uplink of the access topology is shaped one hop further, on the client's relay; the
    traced directions, their order and every other link stay as planned."""
    from tcprepro.emulation.topo import RELAY_DIRECTION, relay_name, with_relays

    plan = build_plan(load_scenario_dict(ACCESS), 0)
    relayed = with_relays(plan)
    relay = relay_name("client")
    assert relayed.hosts == plan.hosts
    assert relayed.routers == (*plan.routers, relay)
    assert [(link.a, link.b) for link in relayed.links] == [
        ("client", relay),
        (relay, "router"),
        ("router", "server"),
    ]
    assert relayed.links[0].a_to_b == relayed.links[0].b_to_a == RELAY_DIRECTION
    assert relayed.links[1].a_to_b == plan.links[0].a_to_b  # the uplink, from the relay
    assert relayed.links[1].b_to_a == plan.links[0].b_to_a  # the downlink, from the router
    assert list(relayed.traced) == list(plan.traced) == ["up", "down"]
    assert relayed.flows == plan.flows
    addressing = Addressing(relayed)
    # the client's address is on its relay link; the uplink's delay and the downlink's are
    # still the path's, and the relay adds none
    assert addressing.host_ip("client") == addressing.address(0, "a")
    forward = addressing.path_directions("client", "server")
    assert sum(d.delay_s for d in forward) == pytest.approx(0.052)
    # a dumbbell's traced directions leave routers: nothing to relay
    dumbbell = build_plan(load_scenario_dict(DUMBBELL), 0)
    assert with_relays(dumbbell) is dumbbell


def test_an_interfaces_tc_commands_become_one_batch_that_tc_parses():
    """The shaping commands of a netem-delayed, lossy direction run as one ``tc -batch``:
    every argv maps to one line (the program's name dropped), in order; an argument a
    batch line cannot carry is refused before anything runs."""
    from tcprepro.emulation import linux
    from tcprepro.emulation.topo import batch_lines
    from tcprepro.scenario_io import apply_overrides

    scenario = load_scenario_dict(
        apply_overrides(DUMBBELL, ["topology.bottleneck.loss_rate=0.001"])
    )
    plan = build_plan(scenario, 0)
    direction = next(link.a_to_b for link in plan.links if link.a_to_b.loss_rate > 0)
    commands = linux.egress_commands("eth3", direction, scenario.tcp)
    text = batch_lines("tc", commands)
    lines = text.splitlines()
    assert len(lines) == len(commands) >= 3
    assert lines[0].startswith("qdisc add dev eth3 root handle 1: netem delay ")
    assert "loss random 0.1%" in lines[0]
    assert [line.split() for line in lines] == [argv[1:] for argv in commands]
    with pytest.raises(ValueError, match="not a `tc` command"):
        batch_lines("tc", [["ip", "link", "set", "dev", "lo", "up"]])
    with pytest.raises(ValueError, match="cannot carry"):
        batch_lines("ip", [["ip", "link", "set", "dev", "a b", "up"]])


class _HostNode:
    """A node whose namespace is this process's (for a batch that changes nothing)."""

    name = "host"

    @staticmethod
    def popen(argv, **kwargs):
        import subprocess

        return subprocess.Popen(argv, **kwargs)


def test_a_failing_batch_line_raises_naming_the_node_and_the_commands():
    """``ip -batch`` stops at its first failing line and exits non-zero: the error names
    the node, iproute2's message and the lines sent. A batch of reads passes."""
    import shutil

    from tcprepro.emulation.topo import _check_batch

    if shutil.which("ip") is None:
        pytest.skip("iproute2's ip is not installed")
    _check_batch(_HostNode(), "ip", [["ip", "link", "show", "dev", "lo"], ["ip", "addr", "show"]])
    missing = "tcprepro-none0"
    with pytest.raises(RuntimeError) as error:
        _check_batch(
            _HostNode(),
            "ip",
            [["ip", "link", "show", "dev", "lo"], ["ip", "link", "show", "dev", missing]],
        )
    text = str(error.value)
    assert text.startswith("host: `ip -batch` failed")
    assert missing in text
    assert "link show dev lo" in text
