"""Trace bundles: a tier's simulation results packed on one machine, checked on another.

This module owns the bundle format and its three operations (``tcprepro bundle``):

- :func:`export_bundle` packs every run dataset of a tier (``data/runs/...``, the paths
  :meth:`WorkflowConfig.runs` gives), the figures' combined datasets, each figure's
  resolved scenarios, the claims CSVs and a manifest into one tar file (compressed
  when its name ends in ``.gz``/``.tgz`` or ``.xz``).
- :func:`import_bundle` checks every file's SHA-256, checks that every run's cache key is
  the one this checkout gives it (naming the first few that differ and why), and only then
  places the files, so that ``make figures PROFILE=<tier>`` regenerates every figure, claim
  and the paper without simulating anything.
- :func:`verify_bundle` re-simulates a seeded random sample of the bundle's runs (every
  figure represented) and compares each with the bundle's dataset, value for value.

Manifest (``manifest.json``, the archive's first member)
--------------------------------------------------------
``format``, ``format_version``, ``tier``, ``created``; ``software`` (the versions every
cache key covers: tcprepro, ns-3, the C++ models' digest), ``git`` and ``machine`` (the
exporting host); ``figures`` (runs per figure) and ``omitted`` (emulation figures whose
ns-3 runs were not made); ``files``: one entry per file with its ``path``, ``kind``
(``run``, ``combined``, ``scenarios``, ``claims``), ``bytes`` and ``sha256``, and for a run
its ``figure``, ``cell``, ``rep``, ``cache_key`` and ``provenance`` (the dataset's
provenance attributes). The manifest's own SHA-256 (its *digest*) names the bundle.

Where an import puts things
---------------------------
Runs and combined datasets at their workflow paths, with modification times that make
Snakemake consider them up to date (runs first, then combined datasets, both newer than
any input; the scenario files are ``ancient()`` inputs of the simulations), after
Snakemake's records of earlier jobs that made those files are dropped. The bundle's
manifest, scenarios and claims go to ``data/bundle/``, with ``data/bundle/import.json``:
the record the paper's provenance section reads (:func:`source_record`). ``bundle verify``
adds its result to that record when the verified bundle is the one imported.

Emulated datasets (``data/emulated``) are not bundled: they come from a kernel, not from a
deterministic simulation, and cannot be re-checked bit for bit.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import io
import json
import lzma
import os
import platform
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

import numpy as np
import xarray as xr

from tcprepro import provenance
from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.runs import Run
from tcprepro.errors import ConfigError, TcpreproError
from tcprepro.store import combine_runs, open_dataset, write_dataset

__all__ = [
    "FORMAT",
    "RECORD",
    "Bundle",
    "VerifyResult",
    "export_bundle",
    "import_bundle",
    "read_record",
    "sample_runs",
    "source_record",
    "verify_bundle",
]

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


# ---------------------------------------------------------------------------
# helpers


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _machine() -> dict[str, str]:
    """The exporting host: name, kernel, CPU, cores, memory, Python."""
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = "unknown"
    with contextlib.suppress(OSError, ValueError, IndexError):
        memory = f"{int(Path('/proc/meminfo').read_text().split()[1]) / 2**20:.0f} GiB"
    return {
        "host": platform.node(),
        "kernel": platform.release(),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": memory,
        "python": platform.python_version(),
    }


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


# ---------------------------------------------------------------------------
# the manifest


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


# ---------------------------------------------------------------------------
# export


def _bundle_figures(
    config: WorkflowConfig, tier: str, workdir: Path
) -> tuple[list[str], list[str]]:
    """Figures whose ns-3 runs go into the bundle, and emulation figures left out.

    Every figure with ns-3 runs must have all of them cached; a cross-checked figure (ns-3
    and emulation, X1) whose runs were not made at all (builds that exclude emulation) is
    left out and listed in the manifest.
    """
    figures, omitted, problems = [], [], []
    for figure in config.simulated_figures:
        runs = config.runs(figure, tier)
        if not runs:
            continue
        stale = [run for run in runs if not _cached(run, workdir)]
        if len(stale) == len(runs) and config.crosschecked(figure):
            omitted.append(figure)
            continue
        for run in stale:
            state = "stale (another cache key)" if (workdir / run.path).exists() else "missing"
            problems.append(f"{run.path}: {state}")
        figures.append(figure)
    if problems:
        raise ConfigError(
            f"tier {tier} is not complete in {workdir}: {len(problems)} run(s) missing or "
            f"stale (make figures PROFILE={tier} first):\n" + _first_few(problems)
        )
    if not figures:
        raise ConfigError(f"tier {tier}: no figure has its runs in {workdir}")
    return figures, omitted


def _run_entry(run: Run, workdir: Path) -> dict[str, Any]:
    attrs = _attrs(workdir / run.path)
    return {
        "path": run.path,
        "kind": "run",
        "figure": run.figure,
        "cell": run.cell,
        "rep": run.rep,
        "cache_key": str(attrs["cache_key"]),
        "provenance": {k: _jsonable(attrs[k]) for k in PROVENANCE_ATTRS if k in attrs},
    }


def export_bundle(
    config: WorkflowConfig,
    tier: str,
    output: str | Path,
    workdir: Path = Path("."),
    log: TextIO = sys.stderr,
) -> Bundle:
    """Pack tier ``tier`` of ``workdir`` into ``output`` (written atomically).

    Raises
    ------
    ConfigError
        When a run of the tier is missing or stale, or a figure's combined dataset is
        missing or was not combined from the current runs.
    """
    output = Path(output)
    figures, omitted = _bundle_figures(config, tier, workdir)
    entries: list[dict[str, Any]] = []
    scenarios: dict[str, bytes] = {}
    for figure in figures:
        runs = config.runs(figure, tier)
        entries += [_run_entry(run, workdir) for run in runs]
        combined_path = config.combined_path(figure)
        combined = workdir / combined_path
        if not combined.exists():
            raise ConfigError(f"{combined_path}: missing (make figures PROFILE={tier} first)")
        with xr.open_dataset(combined, engine="netcdf4") as ds:
            keys = {str(k) for k in ds["run_cache_key"].values.ravel() if k}
        if keys != {run.cache_key() for run in runs}:
            raise ConfigError(
                f"{combined_path}: not combined from the current runs of {figure} "
                f"(make figures PROFILE={tier} first)"
            )
        entries.append({"path": combined_path, "kind": "combined", "figure": figure})
        resolved = {
            run.path: {
                "cell": run.cell,
                "rep": run.rep,
                "cache_key": run.cache_key(),
                "scenario": run.scenario().resolved(),
            }
            for run in runs
        }
        scenarios[f"scenarios/{figure}.json"] = json.dumps(
            {"figure": figure, "tier": tier, "runs": resolved}, indent=1, sort_keys=True
        ).encode()
    files: dict[str, Path | bytes] = {entry["path"]: workdir / entry["path"] for entry in entries}
    for name, data in scenarios.items():
        entries.append({"path": name, "kind": "scenarios", "figure": Path(name).stem})
        files[name] = data
    claims_dir = workdir / "data" / "claims"
    if tier == "verify":  # the verify tier writes its claims apart (workflow/rules/common.smk)
        claims_dir = claims_dir / "verify"
    for study in config.studies():
        claims = claims_dir / f"{study}.csv"
        if claims.exists():
            name = f"claims/{study}.csv"
            entries.append({"path": name, "kind": "claims", "study": study})
            files[name] = claims
        else:
            print(f"bundle: no claims of study {study} ({claims} missing)", file=log)
    records = workdir / "records" / "verdicts.csv"
    if records.exists():  # the verdict history travels with the runs it judged
        entries.append({"path": "records/verdicts.csv", "kind": "records"})
        files["records/verdicts.csv"] = records
    for entry in entries:
        source = files[entry["path"]]
        if isinstance(source, bytes):
            entry["bytes"], entry["sha256"] = len(source), hashlib.sha256(source).hexdigest()
        else:
            entry["bytes"], entry["sha256"] = source.stat().st_size, _sha256(source)
    commit, dirty = provenance.git_state()
    created = dt.datetime.now(dt.UTC).replace(microsecond=0)
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tier": tier,
        "created": created.isoformat(),
        "software": provenance.software_versions(),
        "git": {"commit": commit, "dirty": dirty},
        "machine": _machine(),
        "figures": {f: len(config.runs(f, tier)) for f in figures},
        "omitted": omitted,
        "files": entries,
    }
    raw = json.dumps(manifest, indent=1, sort_keys=True).encode()
    mode = {".gz": "w:gz", ".tgz": "w:gz", ".xz": "w:xz"}.get(output.suffix, "w")
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.tmp-{os.getpid()}")
    try:
        with tarfile.open(tmp, mode, format=tarfile.PAX_FORMAT) as archive:
            _add(archive, MANIFEST, raw, created)
            for entry in entries:
                source = files[entry["path"]]
                _add(archive, entry["path"], source, created)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, output)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    runs = sum(1 for e in entries if e["kind"] == "run")
    print(
        f"{output}: tier {tier}, {runs} runs of {len(figures)} figures"
        + (f" (left out: {', '.join(omitted)}, emulation figures not built)" if omitted else "")
        + f", {output.stat().st_size / 2**20:.1f} MiB",
        file=log,
    )
    return Bundle(output, manifest, hashlib.sha256(raw).hexdigest())


def _add(archive: tarfile.TarFile, name: str, source: Path | bytes, created: dt.datetime) -> None:
    """Add one file with fixed metadata (owner root, mode 0644, the bundle's date)."""
    info = tarfile.TarInfo(name)
    info.mtime = int(created.timestamp())
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if isinstance(source, bytes):
        info.size = len(source)
        archive.addfile(info, io.BytesIO(source))
    else:
        info.size = source.stat().st_size
        with open(source, "rb") as handle:
            archive.addfile(info, handle)


# ---------------------------------------------------------------------------
# matching a bundle against this checkout


def _scenarios(staged: Path, bundle: Bundle) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for entry in bundle.files:
        if entry["kind"] == "scenarios":
            out.update(json.loads((staged / entry["path"]).read_text())["runs"])
    return out


def _runs_here(config: WorkflowConfig, bundle: Bundle) -> dict[str, Run]:
    """The runs of the bundle's figures in this checkout's workflow, by path."""
    figures = sorted({str(entry["figure"]) for entry in bundle.runs})
    known = set(config.figures)
    unknown = [f for f in figures if f not in known]
    if unknown:
        raise ConfigError(
            f"the bundle's figures {', '.join(unknown)} are not in this checkout's workflow",
            str(bundle.path),
        )
    return {run.path: run for figure in figures for run in config.runs(figure, bundle.tier)}


def mismatches(config: WorkflowConfig, bundle: Bundle, staged: Path) -> list[str]:
    """Runs whose cache key this checkout does not reproduce, each with the reason.

    The reason compares the run's resolved scenario in the bundle with this checkout's,
    then the software versions the bundle's keys cover (and its datasets record) with
    this checkout's: "scenario changed (key: old -> new)", "tcprepro version changed",
    "ns-3 version changed", "tcprepro's C++ models changed"; plus runs that exist on one
    side only.
    """
    here = _runs_here(config, bundle)
    resolved = _scenarios(staged, bundle)
    versions_here = provenance.software_versions()
    problems: list[str] = []
    for entry in bundle.runs:
        path = entry["path"]
        run = here.get(path)
        if run is None:
            problems.append(
                f"{path}: not a run of this checkout's tier {bundle.tier} (sweep changed)"
            )
            continue
        key = run.cache_key()
        if key == entry["cache_key"]:
            continue
        reasons: list[str] = []
        scenario_here = run.scenario().resolved()
        bundled = resolved.get(path, {}).get("scenario")
        if bundled is None:
            attrs = open_dataset(staged / path).attrs
            bundled = json.loads(attrs["config"]) if "config" in attrs else {}
        changes = _scenario_changes(bundled, scenario_here)
        if changes:
            shown = "; ".join(changes[:3]) + ("; ..." if len(changes) > 3 else "")
            reasons.append(f"scenario changed ({shown})")
        recorded = dict(bundle.software)
        prov = entry.get("provenance", {})
        for name, attr in (("tcprepro", "tcprepro_version"), ("ns3", "ns3_version")):
            if attr in prov and str(prov[attr]) != recorded.get(name):
                recorded[name] = str(prov[attr])  # the dataset's own record wins
        reasons += _version_changes(recorded, versions_here)
        if not reasons:
            reasons.append("cache key differs (repetition or backend)")
        problems.append(f"{path}: {'; '.join(reasons)}")
    bundled_paths = {entry["path"] for entry in bundle.runs}
    lacking = sorted(path for path in here if path not in bundled_paths)
    problems += [f"{path}: run of this checkout missing from the bundle" for path in lacking]
    return problems


def _check_against_checkout(config: WorkflowConfig, bundle: Bundle, staged: Path) -> None:
    problems = mismatches(config, bundle, staged)
    if problems:
        raise ConfigError(
            f"the bundle does not match this checkout ({len(problems)} of "
            f"{len(bundle.runs)} runs): first ones:\n" + _first_few(problems),
            str(bundle.path),
        )


@contextlib.contextmanager
def _staging(parent: Path) -> Iterator[Path]:
    parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=".tcprepro-bundle-", dir=parent))
    try:
        yield staged
    finally:
        shutil.rmtree(staged, ignore_errors=True)


# ---------------------------------------------------------------------------
# import


@dataclass(frozen=True)
class ImportResult:
    """What an import placed."""

    bundle: Bundle
    runs: int
    combined: int
    replaced: int


def _move(source: Path, target: Path) -> bool:
    """Move ``source`` to ``target`` (a rename on one file system); True if it replaced one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    existed = target.exists()
    try:
        os.replace(source, target)
    except OSError:  # another file system (e.g. data/ a symlink elsewhere)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        shutil.copy2(source, tmp)
        os.replace(tmp, target)
    return existed


def _metadata_record(metadata: Path, path: str) -> Path:
    """Where Snakemake keeps its record of ``path`` (snakemake.persistence, Snakemake 8-9).

    The URL-safe base64 of the path, cut into file names of at most 254 characters, all
    but the last prefixed with ``@``.
    """
    name = base64.urlsafe_b64encode(path.encode()).decode()
    parts = [name[i : i + 254] for i in range(0, len(name), 254)]
    return metadata.joinpath(*["@" + part for part in parts[:-1]], parts[-1])


def _forget_snakemake_records(workdir: Path, paths: Sequence[str], tier: str) -> None:
    """Drop Snakemake's records of earlier local jobs that made ``paths``.

    A fresh clone has none. In a folder where the workflow ran before, a record holds the
    parameters (the cache key) of the job that made a file; a run simulated here under
    another key would then be rerun over the imported dataset (the ``params`` trigger).
    ``snakemake --cleanup-metadata`` forgets them.
    """
    metadata = workdir / ".snakemake" / "metadata"
    recorded = [path for path in paths if _metadata_record(metadata, path).exists()]
    if not recorded:  # (Snakemake refuses to clean a file it has no record of)
        return
    snakemake = Path(sys.executable).parent / "snakemake"
    cmd = [
        str(snakemake if snakemake.exists() else "snakemake"),
        "--cleanup-metadata",
        *recorded,
        "--config",
        f"tier={tier}",
        "emulation=exclude",
        "--cores",
        "1",
    ]
    result = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise TcpreproError(
            "could not clear Snakemake's records of the files to import (nothing was "
            f"imported): {(result.stdout + result.stderr).strip()[-1500:]}"
        )


def import_bundle(
    path: str | Path, config: WorkflowConfig, workdir: Path = Path("."), log: TextIO = sys.stderr
) -> ImportResult:
    """Check ``path`` completely, then place its files under ``workdir``.

    Nothing under ``workdir/data`` changes unless every check passed: the files are
    extracted into a staging folder next to ``data/`` and moved into place at the end.

    Raises
    ------
    ConfigError
        A corrupt, truncated or foreign file, a checksum mismatch, a missing file, or
        cache keys that this checkout does not reproduce (the first few, with why).
    """
    bundle = read_manifest(path)
    data = workdir / "data"
    with _staging(data.resolve().parent if data.exists() else workdir) as staged:
        unpack(bundle, staged)
        _check_against_checkout(config, bundle, staged)
        print(
            f"{bundle.path}: {len(bundle.files)} files, every checksum and cache key matches",
            file=log,
        )
        placed = [e["path"] for e in bundle.files if e["kind"] in ("run", "combined")]
        _forget_snakemake_records(workdir, placed, bundle.tier)
        # every check passed: place the files. Runs first, then combined datasets a
        # second later, both newer than anything else: Snakemake finds them up to date.
        now = time.time()
        replaced = 0
        record_dir = workdir / BUNDLE_DIR
        if record_dir.exists():
            shutil.rmtree(record_dir)
        runs = combined = 0
        for entry in bundle.files:
            kind = entry["kind"]
            if kind == "run":
                target, stamp = workdir / entry["path"], now
                runs += 1
            elif kind == "combined":
                target, stamp = workdir / entry["path"], now + 1
                combined += 1
            else:
                target, stamp = record_dir / entry["path"], now
            existed = _move(staged / entry["path"], target)
            replaced += int(existed and kind in ("run", "combined"))
            os.utime(target, (stamp, stamp))
        record = {
            "bundle": str(Path(path).name),
            "manifest_sha256": bundle.digest,
            "tier": bundle.tier,
            "exported": bundle.manifest["created"],
            "exported_by": bundle.manifest["machine"],
            "software": bundle.software,
            "git": bundle.manifest.get("git", {}),
            "imported": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "runs": {
                entry["cache_key"]: str(entry.get("provenance", {}).get("created", ""))
                for entry in bundle.runs
            },
            "verify": None,
        }
        _write_json(record_dir / MANIFEST, bundle.manifest)
        _write_json(workdir / RECORD, record)
    return ImportResult(bundle, runs, combined, replaced)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_record(path: str | Path) -> dict[str, Any]:
    """An import record (``data/bundle/import.json``)."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError("no such import record", str(path)) from None
    except ValueError as exc:
        raise ConfigError(f"unreadable import record: {exc}", str(path)) from None
    if not isinstance(data, dict) or "manifest_sha256" not in data:
        raise ConfigError("not an import record (no manifest_sha256)", str(path))
    return data


def source_record(workdir: Path = Path(".")) -> dict[str, Any] | None:
    """The record of the bundle imported into ``workdir`` (None: nothing imported)."""
    path = workdir / RECORD
    return read_record(path) if path.exists() else None


# ---------------------------------------------------------------------------
# verify


def sample_runs(runs: Sequence[Mapping[str, Any]], n: int, seed: int) -> list[Mapping[str, Any]]:
    """``n`` runs drawn at random with ``seed``, every figure represented when ``n`` allows.

    First one run of each figure (figures in random order; with fewer draws than figures,
    the first ``n`` of that order), then the remaining draws uniformly from the runs left,
    so that larger figures get proportionally more. Returned in bundle order.
    """
    rng = random.Random(seed)
    by_figure: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        by_figure.setdefault(str(run["figure"]), []).append(index)
    order = sorted(by_figure)
    rng.shuffle(order)
    chosen = [rng.choice(by_figure[figure]) for figure in order[: max(0, n)]]
    rest = [i for i in range(len(runs)) if i not in set(chosen)]
    chosen += rng.sample(rest, min(len(rest), max(0, n - len(chosen))))
    return [runs[i] for i in sorted(chosen)]


def _bit_equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == object:
        return [str(x) for x in a.ravel()] == [str(x) for x in b.ravel()]
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def differences(bundled: xr.Dataset, here: xr.Dataset) -> list[str]:
    """What differs between two run datasets, bit for bit: variables, then attributes.

    Attributes that say where and when a run was made (:data:`VOLATILE_ATTRS`) are not
    compared.
    """
    out = []
    for name in sorted(set(bundled.variables) | set(here.variables)):
        if name not in bundled.variables or name not in here.variables:
            out.append(f"{name} (only in {'the bundle' if name in bundled.variables else 'here'})")
            continue
        a, b = bundled[name], here[name]
        if a.dims != b.dims or not _bit_equal(a.values, b.values):
            out.append(name)
    for attr in sorted((set(bundled.attrs) | set(here.attrs)) - VOLATILE_ATTRS):
        a, b = bundled.attrs.get(attr), here.attrs.get(attr)
        if not _bit_equal(np.asarray(a), np.asarray(b)):
            out.append(f"attribute {attr}")
    return out


def side_by_side(bundled: Mapping[str, Any], here: Mapping[str, Any]) -> str:
    """Two runs' provenance attributes in two columns (bundle | re-simulated here)."""
    keys = [*PROVENANCE_ATTRS, "cache_key", "ns3_events"]
    rows = [("", "bundle", "re-simulated here")]
    rows += [(k, str(bundled.get(k, "")), str(here.get(k, ""))) for k in keys]
    width = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "    " + "  ".join(cell.ljust(width[i]) for i, cell in enumerate(row)).rstrip()
        for row in rows
    )


@dataclass
class VerifyResult:
    """Outcome of :func:`verify_bundle`: per sampled run, identical or what differs."""

    bundle: Bundle
    seed: int
    sample: int
    identical: list[str] = field(default_factory=list)
    different: dict[str, list[str]] = field(default_factory=dict)
    combined: dict[str, list[str]] = field(default_factory=dict)  # figure -> differences

    @property
    def ok(self) -> bool:
        """Every sampled run identical and every combined dataset made of the bundle's runs."""
        return not self.different and not any(self.combined.values())

    def summary(self) -> str:
        """One line: how many sampled runs were identical."""
        n = len(self.identical) + len(self.different)
        bad = [f for f, diff in self.combined.items() if diff]
        text = (
            f"{len(self.identical)} of {n} sampled runs re-simulated bit-identical "
            f"(seed {self.seed})"
        )
        if self.different:
            text += f"; different: {', '.join(self.different)}"
        if bad:
            text += f"; combined datasets not made of the bundle's runs: {', '.join(bad)}"
        return text


def resimulate(run: Run, tier: str, output: Path, workflow_config: Path, workdir: Path) -> None:
    """Simulate ``run`` again in a fresh process, as the workflow does (``sweep-run``)."""
    cmd = [
        sys.executable,
        "-m",
        "tcprepro.cli",
        "sweep-run",
        "--workflow-config",
        str(workflow_config),
        "--tier",
        tier,
        "--figure",
        run.figure,
        "--cell",
        run.cell,
        "--rep",
        str(run.rep),
        "-o",
        str(output),
        "--quiet",
    ]
    result = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ConfigError(f"re-simulating {run.path} failed: {result.stderr.strip()[-2000:]}")


def verify_bundle(
    path: str | Path,
    config: WorkflowConfig,
    sample: int,
    seed: int | None = None,
    workdir: Path = Path("."),
    workflow_config: Path = Path("workflow/config.yaml"),
    simulate: Callable[[Run, Path], None] | None = None,
    log: TextIO = sys.stdout,
) -> VerifyResult:
    """Re-simulate ``sample`` runs of the bundle and compare them with its datasets.

    Also checks that each combined dataset is exactly the combination of the bundle's
    runs (the figures are drawn from those). Writes nothing under ``data/`` except the
    result in the import record, when this bundle is the one imported into ``workdir``.

    Parameters
    ----------
    workflow_config
        The workflow config ``config`` was read from (for the re-simulations).
    simulate
        Makes one run's dataset at the given path; default: a fresh ``tcprepro
        sweep-run`` process in ``workdir``.
    """
    if sample < 1:
        raise ConfigError(f"--sample: {sample} must be at least 1")
    bundle = read_manifest(path)
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "big")
    with _staging(Path(tempfile.gettempdir())) as staged:
        unpack(bundle, staged)
        _check_against_checkout(config, bundle, staged)
        result = VerifyResult(bundle, seed, sample)
        here = _runs_here(config, bundle)
        for entry in bundle.files:
            if entry["kind"] != "combined":
                continue
            figure = str(entry["figure"])
            planned = config.runs(figure, bundle.tier)
            runs = [staged / run.path for run in planned]
            values = json.loads(planned[0].sweep_values) if planned else None
            recombined_path = staged / "recombined" / f"{figure}.nc"
            # as `tcprepro combine` does in the workflow, with the tier's values
            write_dataset(combine_runs(runs, sweep_values=values), recombined_path)
            recombined = open_dataset(recombined_path)
            bundled = open_dataset(staged / entry["path"])
            result.combined[figure] = differences(bundled, recombined)
            state = (
                "made of the bundle's runs"
                if not result.combined[figure]
                else (f"DIFFERS from the bundle's runs: {', '.join(result.combined[figure][:5])}")
            )
            print(f"combined {figure}: {state}", file=log)
        chosen = sample_runs(bundle.runs, sample, seed)
        print(
            f"re-simulating {len(chosen)} of {len(bundle.runs)} runs "
            f"(seed {seed}; figures {', '.join(sorted({str(e['figure']) for e in chosen}))})",
            file=log,
        )
        if simulate is None:
            source = Path(workflow_config).resolve()

            def simulate(run: Run, output: Path) -> None:
                resimulate(run, bundle.tier, output, source, workdir)

        for entry in chosen:
            run = here[entry["path"]]
            output = staged / "resimulated" / entry["path"]
            output.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            simulate(run, output)
            bundled, fresh = open_dataset(staged / entry["path"]), open_dataset(output)
            diff = differences(bundled, fresh)
            wall = time.perf_counter() - started
            if diff:
                result.different[entry["path"]] = diff
                print(
                    f"{entry['path']}: DIFFERENT ({', '.join(diff[:8])}) [{wall:.0f} s]", file=log
                )
                print(side_by_side(bundled.attrs, fresh.attrs), file=log)
            else:
                result.identical.append(entry["path"])
                print(f"{entry['path']}: identical [{wall:.0f} s]", file=log)
    print(result.summary(), file=log)
    record = source_record(workdir)
    if record is not None and record.get("manifest_sha256") == bundle.digest:
        record["verify"] = {
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "seed": seed,
            "sampled": len(chosen),
            "identical": len(result.identical),
            "different": sorted(result.different),
            "combined_differ": sorted(f for f, d in result.combined.items() if d),
        }
        _write_json(workdir / RECORD, record)
    return result
