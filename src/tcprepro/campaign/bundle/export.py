"""``tcprepro bundle export``: a tier's runs, combined datasets, scenarios and claims packed."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import json
import os
import sys
import tarfile
from pathlib import Path
from typing import Any, TextIO

import xarray as xr

from tcprepro import provenance
from tcprepro.campaign.bundle.manifest import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    PROVENANCE_ATTRS,
    Bundle,
    _attrs,
    _cached,
    _first_few,
    _jsonable,
    _machine,
    _sha256,
)
from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.runs import Run
from tcprepro.errors import ConfigError


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
    entries, scenarios = _figure_entries(config, tier, figures, workdir)
    files = _files(config, tier, workdir, entries, scenarios, log)
    _checksums(entries, files)
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
    _write_archive(output, raw, entries, files, created)
    runs = sum(1 for e in entries if e["kind"] == "run")
    print(
        f"{output}: tier {tier}, {runs} runs of {len(figures)} figures"
        + (f" (left out: {', '.join(omitted)}, emulation figures not built)" if omitted else "")
        + f", {output.stat().st_size / 2**20:.1f} MiB",
        file=log,
    )
    return Bundle(output, manifest, hashlib.sha256(raw).hexdigest())


def _figure_entries(
    config: WorkflowConfig, tier: str, figures: list[str], workdir: Path
) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """Each figure's run and combined entries, and its resolved scenarios (JSON by name).

    Raises ConfigError when a figure's combined dataset is missing or was not combined
    from the current runs.
    """
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
    return entries, scenarios


def _files(
    config: WorkflowConfig,
    tier: str,
    workdir: Path,
    entries: list[dict[str, Any]],
    scenarios: dict[str, bytes],
    log: TextIO,
) -> dict[str, Path | bytes]:
    """Every file of the bundle by its path in the archive.

    Appends the entries of the scenarios, the claims CSVs and the verdict records to
    ``entries``.
    """
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
    for name in ("records/verdicts.csv", "records/traces.csv"):
        records = workdir / name
        if records.exists():  # the verdict history travels with the runs it judged
            entries.append({"path": name, "kind": "records"})
            files[name] = records
    return files


def _checksums(entries: list[dict[str, Any]], files: dict[str, Path | bytes]) -> None:
    """Set each entry's size and SHA-256."""
    for entry in entries:
        source = files[entry["path"]]
        if isinstance(source, bytes):
            entry["bytes"], entry["sha256"] = len(source), hashlib.sha256(source).hexdigest()
        else:
            entry["bytes"], entry["sha256"] = source.stat().st_size, _sha256(source)


def _write_archive(
    output: Path,
    raw: bytes,
    entries: list[dict[str, Any]],
    files: dict[str, Path | bytes],
    created: dt.datetime,
) -> None:
    """The tar file, the manifest first, written atomically (``.gz``/``.tgz``, ``.xz``)."""
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
