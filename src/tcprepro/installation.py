"""What is installed: where ns-3 is, and which C++ model sources tcprepro compiles.

Both are part of every run's provenance and cache key. Nothing here imports
ns-3 or compiles anything (that is :mod:`tcprepro.ns3.build`'s job), so the
lowest layers (provenance, the campaign's cache keys) can ask without loading a
backend.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tcprepro.errors import CapabilityError

__all__ = ["CPP_DIR", "Ns3Wheel", "find_wheel", "library_digest", "source_digest", "source_files"]

#: tcprepro's C++ sources (models, applications, trace sinks)
CPP_DIR = Path(__file__).parent / "ns3" / "cpp"


@dataclass(frozen=True)
class Ns3Wheel:
    """Where an ns-3 installation keeps its headers and libraries.

    By default the PyPI ``ns3`` wheel; ``TCPREPRO_NS3_PREFIX`` points to another
    installation instead (e.g. ns-3 built from source with the ``optimized``
    profile and installed with ``./ns3 install``), whose libraries carry a
    profile suffix (``libns3.44-core-optimized.so``).
    """

    prefix: Path
    package_version: str  # e.g. "3.44.post0", or "source 3.44-optimized"
    version: str  # ns-3 release, e.g. "3.44"
    include_dir: Path
    lib_dir: Path
    lib_suffix: str = ""  # "" for the wheel, e.g. "-optimized" for a source build
    defines: tuple[str, ...] = ("NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE", "NS3_BUILD_PROFILE_RELEASE")


_CORE_LIB = re.compile(r"libns(3\.[0-9.]+)-core(-[a-z]+)?\.so$")


def _ns3_defines(lib_dir: Path, suffix: str) -> tuple[str, ...]:
    """The NS3_* compile definitions the installation was built with (from its CMake export)."""
    for targets in sorted(lib_dir.glob("cmake/ns3/ns3Targets.cmake")):
        match = re.search(r'INTERFACE_COMPILE_DEFINITIONS "([^"]*)"', targets.read_text())
        if match:
            defines = [d for d in match[1].split(";") if d.startswith("NS3_")]
            if defines:
                return tuple(defines)
    profile = {
        "-optimized": ("NS3_BUILD_PROFILE_OPTIMIZED",),
        "-debug": ("NS3_BUILD_PROFILE_DEBUG", "NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE"),
    }
    return profile.get(suffix, ("NS3_BUILD_PROFILE_RELEASE", "NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE"))


def _locate(prefix: Path, package_version: str | None) -> Ns3Wheel:
    libs = sorted(p for p in prefix.glob("lib*/libns3.*-core*.so") if _CORE_LIB.search(p.name))
    if not libs:
        raise CapabilityError(f"no libns3.<version>-core library under {prefix}/lib*")
    match = _CORE_LIB.search(libs[0].name)
    version, suffix = match[1], match[2] or ""
    headers = sorted(prefix.glob("include/**/ns3/core-module.h"), key=lambda p: len(p.parts))
    if not headers:
        raise CapabilityError(f"no ns3/core-module.h under {prefix}/include")
    return Ns3Wheel(
        prefix=prefix,
        package_version=package_version or f"source {version}{suffix}",
        version=version,
        include_dir=headers[0].parent.parent,
        lib_dir=libs[0].parent,
        lib_suffix=suffix,
        defines=_ns3_defines(libs[0].parent, suffix),
    )


@cache
def find_wheel() -> Ns3Wheel:
    """Locate ns-3 without importing its (slow) Python bindings.

    ``TCPREPRO_NS3_PREFIX`` selects an installation prefix; otherwise the ``ns3`` wheel.
    """
    env = os.environ.get("TCPREPRO_NS3_PREFIX")
    if env:
        return _locate(Path(env), None)
    spec = importlib.util.find_spec("ns3")
    if spec is None or not spec.submodule_search_locations:
        raise CapabilityError("ns-3 Python bindings missing: pip install 'ns3==3.44.*'")
    prefix = Path(next(iter(spec.submodule_search_locations)))
    return _locate(prefix, importlib.metadata.version("ns3"))


def source_files() -> list[Path]:
    """C++ sources compiled into the library, in a stable order."""
    return sorted(CPP_DIR.glob("*.cc"))


def source_digest(leave_out: Collection[str] = ()) -> str:
    """Hash of the C++ sources (headers and sources) but those whose stem is in ``leave_out``.

    With nothing left out it covers every source (the compiled library's identity); a
    run's cache key leaves out the models the run does not use
    (:func:`tcprepro.provenance.software_versions`).
    """
    digest = hashlib.sha256()
    for path in sorted(CPP_DIR.glob("*.h")) + source_files():
        if path.stem not in leave_out:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def library_digest() -> str:
    """Hash of tcprepro's Python code and package data (the claims registry).

    That is what the figures, tables, claims and paper inputs are computed with. The
    workflow passes it to those rules as a parameter, so that Snakemake redraws them when
    the library changes; a simulation's own inputs are covered by its cache key.
    """
    package = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".yaml", ".tex"):
            digest.update(str(path.relative_to(package)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
