"""The emulation routes as objects: names, registry, versions, boots, parsing, copies."""

import copy
import pickle
import platform

import pytest

from tcprepro.emulation import capabilities, routes, uml
from tcprepro.errors import ConfigError


def test_each_route_is_found_by_its_name_and_says_it():
    for name, route in routes.REGISTRY.items():
        assert routes.get_route(name) is route
        assert routes.get_route(route) is route
        assert str(route) == f"{route}" == route.name == name
    with pytest.raises(ConfigError, match="route: 'auto' is not one of auto, native, uml, vm"):
        routes.get_route("auto")


def test_a_route_stays_the_one_instance_when_copied_or_pickled():
    for route in routes.REGISTRY.values():
        assert copy.deepcopy(route) is route
        assert pickle.loads(pickle.dumps(route)) is route


def test_the_versions_keying_a_run_are_those_of_its_kernel_and_tool():
    """The versions (hence the cache keys) as capabilities.emulation_versions gave them."""
    native = routes.NATIVE.versions("iperf3")
    assert native == capabilities.versions_record("native", platform.release(), "iperf3")
    assert set(native) == {"tcprepro", "kernel", "iperf3", "route"}
    # the UML route sends with iperf 2 whatever the job asks (its traffic tool)
    assert routes.UML.traffic_tool("iperf3") == uml.GUEST_TRAFFIC_TOOL
    assert routes.UML.versions("iperf3") == capabilities.versions_record(
        "uml", uml.kernel_release(), uml.GUEST_TRAFFIC_TOOL
    )
    assert routes.VM.versions("iperf2")["traffic_tool"].startswith("iperf2 ")
    assert routes.VM.traffic_tool("iperf3") == "iperf3"


def test_only_a_parallel_route_shares_a_batch_among_boots():
    assert routes.UML.boots(5, 8) == 5
    assert routes.UML.boots(5, 2) == 2
    assert routes.UML.boots(0, 2) == 1
    assert routes.VM.boots(5, 8) == routes.NATIVE.boots(5, 8) == 1
    assert [r.virtual_clock for r in routes.REGISTRY.values()] == [False, True, False]
