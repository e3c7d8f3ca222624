"""A bundle matched against this checkout: every run's cache key, or why it differs.

Import and verify both check a bundle so, in a staging folder, before anything else.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tcprepro import provenance
from tcprepro.campaign.bundle.manifest import (
    Bundle,
    _first_few,
    _scenario_changes,
    _version_changes,
)
from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.runs import Run
from tcprepro.errors import ConfigError
from tcprepro.store import open_dataset


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
