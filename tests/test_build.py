"""Locating ns-3: the PyPI wheel by default, or an installation prefix (e.g. optimized build)."""

import pytest

from tcprepro.errors import CapabilityError
from tcprepro.ns3 import build


def test_the_wheel_is_found_without_importing_the_bindings():
    import sys

    wheel = build.find_wheel()
    assert wheel.version.startswith("3.")
    assert (wheel.include_dir / "ns3" / "core-module.h").is_file()
    assert wheel.lib_suffix == ""
    assert "NS3_BUILD_PROFILE_RELEASE" in wheel.defines
    assert "ns" not in sys.modules  # `from ns import ns` costs 10-20 s: never done here


def test_an_optimized_source_install_is_located_with_its_profile(tmp_path, monkeypatch):
    (tmp_path / "include/ns3.44/ns3").mkdir(parents=True)
    (tmp_path / "include/ns3.44/ns3/core-module.h").write_text("")
    (tmp_path / "lib/cmake/ns3").mkdir(parents=True)
    (tmp_path / "lib/libns3.44-core-optimized.so").write_text("")
    (tmp_path / "lib/cmake/ns3/ns3Targets.cmake").write_text(
        'INTERFACE_COMPILE_DEFINITIONS "PROJECT_SOURCE_PATH=\\"/src\\";NS3_BUILD_PROFILE_OPTIMIZED"'
    )
    monkeypatch.setenv("TCPREPRO_NS3_PREFIX", str(tmp_path))
    build.find_wheel.cache_clear()
    try:
        found = build.find_wheel()
    finally:
        build.find_wheel.cache_clear()
    assert found.version == "3.44"
    assert found.lib_suffix == "-optimized"
    assert found.include_dir == tmp_path / "include/ns3.44"
    assert found.defines == ("NS3_BUILD_PROFILE_OPTIMIZED",)
    assert found.package_version == "source 3.44-optimized"
    assert "-lns3.44-core-optimized" in build._link_flags(found)
    assert "-DNS3_BUILD_PROFILE_OPTIMIZED" in build._flags(found)


def test_a_prefix_without_ns3_is_a_clear_capability_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TCPREPRO_NS3_PREFIX", str(tmp_path))
    build.find_wheel.cache_clear()
    try:
        with pytest.raises(CapabilityError, match=r"no libns3\.<version>-core library"):
            build.find_wheel()
    finally:
        build.find_wheel.cache_clear()
