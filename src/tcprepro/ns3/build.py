"""Compile and load tcprepro's C++ ns-3 code (models, applications, trace sinks).

This module owns the shared library ``libtcprepro-<hash>.so``: it is compiled
once per environment from the ``.h``/``.cc`` sources in ``cpp/`` against the
headers and libraries of the PyPI ``ns3`` wheel, cached under
``$TCPREPRO_CACHE_DIR`` (default ``~/.cache/tcprepro``), and rebuilt
automatically when a source file, the compiler, the flags or the ns-3 wheel
change (they are all part of the file name's hash). Concurrent builds (several
Snakemake jobs starting at once) are serialised by a file lock, and the
library appears atomically (compiled under a temporary name, then renamed).

:func:`load` makes the library usable from Python through cppyy. It parses
only ``tcprepro.h``, which includes no ns-3 header, so it costs well under a
second instead of the 10-20 s of ``from ns import ns``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

from tcprepro.errors import CapabilityError
from tcprepro.installation import CPP_DIR, Ns3Wheel, find_wheel, source_digest, source_files

__all__ = [
    "Ns3Wheel",
    "build_library",
    "cache_dir",
    "find_wheel",
    "load",
    "source_digest",
    "source_files",
]

NS3_MODULES = ("core", "network", "internet", "point-to-point", "applications", "traffic-control")
CXXFLAGS = ("-std=c++20", "-O2", "-fPIC", "-Wall", "-Wno-unused-parameter")


def cache_dir() -> Path:
    """Root of tcprepro's per-user cache (compiled libraries)."""
    env = os.environ.get("TCPREPRO_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tcprepro"


def _compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    if shutil.which(cxx) is None:
        raise CapabilityError(
            f"C++ compiler {cxx!r} not found: the ns-3 models need one (apt-get install g++)"
        )
    return cxx


def _compiler_id(cxx: str) -> str:
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else cxx


def _flags(wheel: Ns3Wheel) -> list[str]:
    return [
        *CXXFLAGS,
        *(f"-D{define}" for define in wheel.defines),
        f'-DTCPREPRO_NS3_VERSION="{wheel.version}"',
        f"-I{wheel.include_dir}",
    ]


def _link_flags(wheel: Ns3Wheel) -> list[str]:
    libs = [f"-lns{wheel.version}-{module}{wheel.lib_suffix}" for module in NS3_MODULES]
    return ["-shared", f"-L{wheel.lib_dir}", f"-Wl,-rpath,{wheel.lib_dir}", *libs]


def library_path(wheel: Ns3Wheel | None = None) -> Path:
    """Path the library for the current sources, compiler and wheel has in the cache."""
    wheel = wheel or find_wheel()
    cxx = _compiler()
    digest = hashlib.sha256()
    for item in (_compiler_id(cxx), " ".join(_flags(wheel)), " ".join(_link_flags(wheel))):
        digest.update(item.encode() + b"\0")
    digest.update(str(wheel.prefix).encode() + b"\0" + wheel.package_version.encode())
    digest.update(source_digest().encode())
    return cache_dir() / f"ns3-{wheel.version}" / f"libtcprepro-{digest.hexdigest()[:16]}.so"


def build_library(force: bool = False, verbose: bool = False) -> Path:
    """Compile the C++ sources if the cached library is missing; return its path."""
    wheel = find_wheel()
    target = library_path(wheel)
    if target.exists() and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    cxx = _compiler()
    with open(target.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists() and not force:
            return target
        started = time.monotonic()
        if verbose:
            count = len(source_files())
            print(f"tcprepro: compiling {count} C++ sources against ns-3 {wheel.version}")
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            objects = [Path(tmp) / (src.stem + ".o") for src in source_files()]

            def compile_one(pair: tuple[Path, Path]) -> subprocess.CompletedProcess[str]:
                src, obj = pair
                cmd = [cxx, *_flags(wheel), f"-I{CPP_DIR}", "-c", str(src), "-o", str(obj)]
                return subprocess.run(cmd, capture_output=True, text=True, check=False)

            workers = max(1, min(len(objects), os.cpu_count() or 1))
            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(compile_one, zip(source_files(), objects, strict=True)))
            failed = [r for r in results if r.returncode != 0]
            if failed:
                raise RuntimeError("compiling tcprepro's ns-3 code failed:\n" + failed[0].stderr)
            partial = Path(tmp) / target.name
            link = [cxx, *map(str, objects), "-o", str(partial), *_link_flags(wheel)]
            result = subprocess.run(link, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise RuntimeError("linking tcprepro's ns-3 library failed:\n" + result.stderr)
            os.replace(partial, target)
        if verbose:
            print(f"tcprepro: built {target} in {time.monotonic() - started:.1f} s")
    return target


@cache
def load() -> Any:
    """Build if needed, load the library into this process, return ``cppyy.gbl.tcprepro``."""
    path = build_library()
    import cppyy  # deferred: importing cppyy costs ~0.3 s

    cppyy.add_include_path(str(CPP_DIR))
    cppyy.include("tcprepro.h")
    cppyy.load_library(str(path))
    return cppyy.gbl.tcprepro
