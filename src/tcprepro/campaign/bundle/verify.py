"""``tcprepro bundle verify``: a seeded sample of a bundle's runs re-simulated and compared.

Value for value, bit for bit; each combined dataset is combined again from the bundle's
runs and compared too.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import xarray as xr

from tcprepro.campaign.bundle.checkout import _check_against_checkout, _runs_here, _staging
from tcprepro.campaign.bundle.imports import _write_json, source_record
from tcprepro.campaign.bundle.manifest import (
    PROVENANCE_ATTRS,
    RECORD,
    VOLATILE_ATTRS,
    Bundle,
    read_manifest,
    unpack,
)
from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.runs import Run
from tcprepro.errors import ConfigError
from tcprepro.store import combine_runs, open_dataset, write_dataset


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
        _check_combined(config, bundle, staged, result, log)
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

        _compare_sample(chosen, here, staged, simulate, result, log)
    print(result.summary(), file=log)
    _record_verification(workdir, bundle, seed, len(chosen), result)
    return result


def _check_combined(
    config: WorkflowConfig, bundle: Bundle, staged: Path, result: VerifyResult, log: TextIO
) -> None:
    """Each combined dataset of the bundle against the combination of its runs."""
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


def _compare_sample(
    chosen: list[Mapping[str, Any]],
    here: Mapping[str, Run],
    staged: Path,
    simulate: Callable[[Run, Path], None],
    result: VerifyResult,
    log: TextIO,
) -> None:
    """Simulate each chosen run again and compare it with the bundle's, bit for bit."""
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
            print(f"{entry['path']}: DIFFERENT ({', '.join(diff[:8])}) [{wall:.0f} s]", file=log)
            print(side_by_side(bundled.attrs, fresh.attrs), file=log)
        else:
            result.identical.append(entry["path"])
            print(f"{entry['path']}: identical [{wall:.0f} s]", file=log)


def _record_verification(
    workdir: Path, bundle: Bundle, seed: int, sampled: int, result: VerifyResult
) -> None:
    """Add the result to the import record, when the verified bundle is the one imported."""
    record = source_record(workdir)
    if record is not None and record.get("manifest_sha256") == bundle.digest:
        record["verify"] = {
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "seed": seed,
            "sampled": sampled,
            "identical": len(result.identical),
            "different": sorted(result.different),
            "combined_differ": sorted(f for f, d in result.combined.items() if d),
        }
        _write_json(workdir / RECORD, record)
