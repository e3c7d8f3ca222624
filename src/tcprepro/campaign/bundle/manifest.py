"""The bundle format: its manifest, read and checked, and its files unpacked and checked.

Shared by the three verbs (export, import, verify): the format's constants, the
provenance attributes a run's entry records, and the helpers that compare what a bundle
recorded with this checkout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import lzma
import tarfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import xarray as xr

from tcprepro.campaign.runs import Run
from tcprepro.errors import ConfigError

FORMAT = "tcprepro-bundle"


FORMAT_VERSION = 1


MANIFEST = "manifest.json"


#: where an import keeps the bundle's manifest, scenarios, claims and its own record
BUNDLE_DIR = Path("data/bundle")


RECORD = BUNDLE_DIR / "import.json"


#: run attributes that say where, when and from which commit a run was made: recorded in
#: the manifest, shown side by side on a mismatch, never compared
PROVENANCE_ATTRS = (
    "tcprepro_version",
    "ns3_version",
    "git_commit",
    "git_dirty",
    "host",
    "kernel",
    "python",
    "created",
    "wall_time_s",
    "event_loop_wall_s",
)


VOLATILE_ATTRS = frozenset(PROVENANCE_ATTRS) - {"tcprepro_version", "ns3_version"}


#: the kinds of file a bundle holds, and where each sits in the archive
KINDS = {
    "run": "data/runs/",
    "combined": "data/combined/",
    "scenarios": "scenarios/",
    "claims": "claims/",
    "records": "records/",
}


FIRST_FEW = 5


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _machine() -> dict[str, str]:
    """The exporting host: name, kernel, CPU, cores, memory, Python."""
    from tcprepro.provenance import host_description

    return host_description()


def _attrs(path: Path) -> dict[str, Any]:
    """A dataset's attributes, without reading its variables."""
    with xr.open_dataset(path, engine="netcdf4") as ds:
        return dict(ds.attrs)


def _cached(run: Run, workdir: Path) -> bool:
    """The run's dataset exists and carries this checkout's cache key."""
    path = workdir / run.path
    try:
        return path.exists() and _attrs(path).get("cache_key") == run.cache_key()
    except (OSError, ValueError):
        return False


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, Mapping):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: data}


def _scenario_changes(bundle: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """The resolved-scenario keys that differ: ``path: bundle -> here``."""
    old, new = _flatten(bundle), _flatten(here)
    return [
        f"{key}: {old.get(key, '(absent)')!r} -> {new.get(key, '(absent)')!r}"
        for key in sorted(set(old) | set(new))
        if old.get(key, "(absent)") != new.get(key, "(absent)")
    ]


VERSION_NAMES = {"tcprepro": "tcprepro", "ns3": "ns-3", "models": "tcprepro's C++ models"}


def _version_changes(bundle: Mapping[str, str], here: Mapping[str, str]) -> list[str]:
    return [
        f"{VERSION_NAMES.get(key, key)} version changed ({bundle.get(key)} -> {here.get(key)})"
        for key in sorted(set(bundle) | set(here))
        if bundle.get(key) != here.get(key)
    ]


def _first_few(problems: Sequence[str]) -> str:
    shown = "\n  ".join(problems[:FIRST_FEW])
    more = f"\n  ... and {len(problems) - FIRST_FEW} more" if len(problems) > FIRST_FEW else ""
    return f"  {shown}{more}"


@dataclass(frozen=True)
class Bundle:
    """A bundle's manifest, as read and checked (:func:`read_manifest`)."""

    path: Path
    manifest: dict[str, Any]
    digest: str  # SHA-256 of manifest.json as stored

    @property
    def tier(self) -> str:
        """Tier of the runs."""
        return str(self.manifest["tier"])

    @property
    def files(self) -> list[dict[str, Any]]:
        """Every file entry (manifest order)."""
        return list(self.manifest["files"])

    @property
    def runs(self) -> list[dict[str, Any]]:
        """The run entries."""
        return [entry for entry in self.files if entry["kind"] == "run"]

    @property
    def software(self) -> dict[str, str]:
        """The versions the runs' cache keys cover."""
        return dict(self.manifest["software"])


def _check_manifest(data: Any, source: str) -> dict[str, Any]:
    """Raise ConfigError unless ``data`` is a tcprepro bundle manifest this version reads."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"not a tcprepro bundle (its {MANIFEST} is not one)", source)
    if data.get("format_version") != FORMAT_VERSION:
        raise ConfigError(
            f"bundle format version {data.get('format_version')!r}; this tcprepro reads "
            f"version {FORMAT_VERSION}",
            source,
        )
    for key in ("tier", "software", "files", "created", "machine"):
        if key not in data:
            raise ConfigError(f"{MANIFEST} lacks {key!r}", source)
    seen: set[str] = set()
    for entry in data["files"]:
        path = str(entry.get("path", ""))
        kind = entry.get("kind")
        pure = PurePosixPath(path)
        if (
            kind not in KINDS
            or not path.startswith(KINDS[kind])
            or pure.is_absolute()
            or ".." in pure.parts
            or path in seen
        ):
            raise ConfigError(f"{MANIFEST}: bad or duplicate entry {path!r} ({kind})", source)
        if not isinstance(entry.get("sha256"), str) or not isinstance(entry.get("bytes"), int):
            raise ConfigError(f"{MANIFEST}: entry {path!r} lacks its sha256 or size", source)
        if kind == "run" and not entry.get("cache_key"):
            raise ConfigError(f"{MANIFEST}: run {path!r} lacks its cache key", source)
        seen.add(path)
    return data


_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError)


@contextlib.contextmanager
def _open_archive(path: Path) -> Iterator[tarfile.TarFile]:
    if not path.is_file():
        raise ConfigError("no such bundle file", str(path))
    try:
        with tarfile.open(path, "r:*") as archive:
            yield archive
    except ConfigError:
        raise
    except _ARCHIVE_ERRORS as exc:
        raise ConfigError(
            f"not a readable tar archive (corrupt, truncated or not a bundle): {exc}", str(path)
        ) from None


def read_manifest(path: str | Path) -> Bundle:
    """Read and check a bundle's manifest (not its files: :func:`unpack` checks those)."""
    path = Path(path)
    with _open_archive(path) as archive:
        try:
            member = archive.next()
        except _ARCHIVE_ERRORS as exc:
            raise ConfigError(f"not a readable tar archive: {exc}", str(path)) from None
        if member is None or member.name != MANIFEST or not member.isfile():
            raise ConfigError(f"not a tcprepro bundle: its first file is not {MANIFEST}", str(path))
        handle = archive.extractfile(member)
        assert handle is not None
        try:
            raw = handle.read()
            data = json.loads(raw)
        except _ARCHIVE_ERRORS as exc:
            raise ConfigError(f"{MANIFEST} unreadable (truncated?): {exc}", str(path)) from None
        except ValueError as exc:
            raise ConfigError(f"{MANIFEST} is not valid JSON: {exc}", str(path)) from None
    manifest = _check_manifest(data, str(path))
    return Bundle(path, manifest, hashlib.sha256(raw).hexdigest())


def unpack(bundle: Bundle, dest: Path) -> None:
    """Extract every file of ``bundle`` under ``dest``, checking its size and SHA-256.

    Raises ConfigError naming the first file that is missing, extra, not a regular file,
    of the wrong size or checksum, or unreadable (a truncated or corrupt archive).
    """
    expected = {entry["path"]: entry for entry in bundle.files}
    found: set[str] = set()
    source = str(bundle.path)
    with _open_archive(bundle.path) as archive:
        try:
            for member in archive:
                if member.name == MANIFEST:
                    continue
                entry = expected.get(member.name)
                if entry is None:
                    raise ConfigError(
                        f"{member.name}: in the archive but not in its manifest", source
                    )
                if not member.isfile():
                    raise ConfigError(f"{member.name}: not a regular file", source)
                if member.name in found:
                    raise ConfigError(f"{member.name}: twice in the archive", source)
                target = dest / member.name
                target.parent.mkdir(parents=True, exist_ok=True)
                handle = archive.extractfile(member)
                assert handle is not None
                digest = hashlib.sha256()
                size = 0
                with open(target, "wb") as out:
                    for block in iter(lambda h=handle: h.read(1 << 20), b""):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
                if size != entry["bytes"] or digest.hexdigest() != entry["sha256"]:
                    raise ConfigError(
                        f"{member.name}: checksum mismatch (SHA-256 {digest.hexdigest()[:16]}..., "
                        f"{size} bytes; the manifest says {entry['sha256'][:16]}..., "
                        f"{entry['bytes']} bytes): the file is corrupt",
                        source,
                    )
                found.add(member.name)
        except _ARCHIVE_ERRORS as exc:
            raise ConfigError(
                f"archive unreadable after {len(found)} files (truncated or corrupt): {exc}",
                source,
            ) from None
    missing = [path for path in expected if path not in found]
    if missing:
        raise ConfigError(
            f"{len(missing)} file(s) listed in the manifest are missing from the archive:\n"
            + _first_few(missing),
            source,
        )
