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
