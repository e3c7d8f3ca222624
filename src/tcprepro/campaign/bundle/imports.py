"""``tcprepro bundle import``: a bundle checked completely, then placed, and its record.

The record (``data/bundle/import.json``) is what the paper's provenance section reads
(:func:`source_record`).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tcprepro.campaign.batches import manifest_dir, write_manifest
from tcprepro.campaign.bundle.checkout import _check_against_checkout, _staging
from tcprepro.campaign.bundle.manifest import (
    BUNDLE_DIR,
    MANIFEST,
    RECORD,
    Bundle,
    read_manifest,
    unpack,
)
from tcprepro.campaign.config import WorkflowConfig
from tcprepro.errors import ConfigError, TcpreproError


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


def _complete_batches(config: WorkflowConfig, bundle: Bundle) -> dict[str, list[dict[str, Any]]]:
    """The manifests (path: entries) of the tier's batches whose every run is in the bundle."""
    keys = {entry["path"]: entry["cache_key"] for entry in bundle.runs}
    out = {}
    folder = manifest_dir(bundle.tier)
    for figure in config.simulated_figures:
        for batch in config.batches(figure, bundle.tier):
            paths = [run.path for run in batch.runs]
            if all(path in keys for path in paths):
                out[f"{folder}/{figure}/{batch.name}.json"] = [
                    {"path": path, "cache_key": keys[path], "status": "imported"} for path in paths
                ]
    return out


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
        batches = _complete_batches(config, bundle)
        _forget_snakemake_records(workdir, placed + list(batches), bundle.tier)
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
        # the batch jobs whose every run came with the bundle are done: their manifests,
        # as old as the runs, keep Snakemake from starting them again
        for manifest, entries in batches.items():
            write_manifest(workdir / manifest, entries, 0.0)
            os.utime(workdir / manifest, (now, now))
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
