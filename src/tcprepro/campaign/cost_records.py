"""What a tier's runs cost, as measured: the run-cost records (``records/run-costs.csv``).

The plan's cost model is calibrated on a sample of quick-tier runs
(:mod:`tcprepro.campaign.measured`), which carries poorly to the verify and paper tiers:
their runs are the papers' lengths, with other buffers and flow counts. Once a build has
run a figure at a tier, ``tcprepro plan --record-costs`` keeps its measurement, per
figure: the runs' own wall seconds in their batches (each cached dataset's
``wall_time_s``) over the cost model's estimate of the same runs, with the host and the
code that ran them. The plan then calibrates that figure at that tier on the latest
record when this machine has too few of its runs cached to measure it itself
(:func:`tcprepro.campaign.plan.tier_calibration`). A verify run is a paper run of the
same cell (docs/tiers.md), so the paper tier takes the verify tier's record when it has
none of its own.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.cost import estimate_wall_s
from tcprepro.campaign.measured import FIGURE_CALIBRATION_MIN_RUNS
from tcprepro.campaign.runs import cached_run_attrs
from tcprepro.errors import ConfigError
from tcprepro.provenance import host_description

__all__ = [
    "FIELDS",
    "RUN_COSTS",
    "CostRecord",
    "append",
    "as_factors",
    "describe",
    "measure",
    "measured_runs",
    "read",
    "recorded_calibrations",
    "recorded_figures",
]

RUN_COSTS = Path("records/run-costs.csv")
FIELDS = (
    "figure",
    "tier",
    "runs",
    "wall_s",
    "model_s",
    "factor",
    "runs_commit",
    "cpu",
    "cores",
    "recorded",
)
#: the tier whose record stands in for another's: the same cells at the same settings
STAND_IN = {"paper": "verify"}


@dataclass(frozen=True)
class CostRecord:
    """One figure's measured cost at one tier."""

    figure: str
    tier: str
    runs: int
    wall_s: float
    model_s: float
    runs_commit: str
    cpu: str
    cores: str
    recorded: str

    @property
    def factor(self) -> float:
        """Measured wall seconds over the cost model's estimate of the same runs."""
        return self.wall_s / self.model_s

    def row(self) -> dict[str, str]:
        """The record as a CSV row."""
        return {
            "figure": self.figure,
            "tier": self.tier,
            "runs": str(self.runs),
            "wall_s": f"{self.wall_s:.1f}",
            "model_s": f"{self.model_s:.1f}",
            "factor": f"{self.factor:.3f}",
            "runs_commit": self.runs_commit,
            "cpu": self.cpu,
            "cores": self.cores,
            "recorded": self.recorded,
        }


def measured_runs(
    config: WorkflowConfig, figure: str, tier: str, workdir: Path = Path(".")
) -> tuple[float, float, int, str] | None:
    """A figure's cached runs of ``tier``: (their wall s, the model's s, count, commit).

    Cached: made with the current code (the run's cache key); ``commit``: the one most of
    them were made at (their datasets' ``git_commit``). None below
    :data:`FIGURE_CALIBRATION_MIN_RUNS` runs or when their datasets do not give their
    wall time.
    """
    runs, walls, commits = [], [], Counter()
    for run in config.runs(figure, tier):
        attrs = cached_run_attrs(run, workdir)
        try:
            wall = None if attrs is None else float(attrs["wall_time_s"])
        except (KeyError, TypeError, ValueError):
            wall = None
        if wall is not None:
            runs.append(run)
            walls.append(wall)
            commits[str(attrs.get("git_commit", "unknown"))[:7]] += 1
    if len(runs) < FIGURE_CALIBRATION_MIN_RUNS:
        return None
    # the model counts at least a run's overhead each: never zero
    return sum(walls), estimate_wall_s(runs), len(runs), commits.most_common(1)[0][0]


def measure(config: WorkflowConfig, tier: str, workdir: Path = Path(".")) -> list[CostRecord]:
    """A record per simulated figure with enough of its ``tier`` runs cached in ``workdir``."""
    host = host_description()
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    records = []
    for figure in config.simulated_figures:
        found = measured_runs(config, figure, tier, workdir)
        if found is None:
            continue
        wall, model, count, commit = found
        records.append(
            CostRecord(figure, tier, count, wall, model, commit, host["cpu"], host["cores"], now)
        )
    return records


def read(path: str | Path | None = None) -> list[CostRecord]:
    """The records of ``path`` (default :data:`RUN_COSTS`), oldest first; none if no file."""
    path = Path(RUN_COSTS if path is None else path)
    if not path.exists():
        return []
    records = []

    def where(line: int) -> str:
        return f"{path}: line {line}"

    with path.open(newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                record = CostRecord(
                    row["figure"],
                    row["tier"],
                    int(row["runs"]),
                    float(row["wall_s"]),
                    float(row["model_s"]),
                    row["runs_commit"],
                    row["cpu"],
                    row["cores"],
                    row["recorded"],
                )
            except KeyError as exc:
                raise ConfigError(f"no column {exc}", where(line)) from None
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"not a number ({exc})", where(line)) from None
            if record.runs < 1 or record.wall_s <= 0 or record.model_s <= 0:
                raise ConfigError("runs, wall_s and model_s must be positive", where(line))
            records.append(record)
    return records


def append(records: Iterable[CostRecord], path: str | Path) -> int:
    """Add ``records`` to ``path`` (written whole, then renamed); return how many."""
    path, records = Path(path), list(records)
    rows = [record.row() for record in [*read(path), *records]]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)
    return len(records)


def recorded_calibrations(
    tier: str, records: Iterable[CostRecord] | None = None
) -> dict[str, CostRecord]:
    """Per figure, the latest record of ``tier`` (else of the tier standing in for it)."""
    records = list(read() if records is None else records)
    out: dict[str, CostRecord] = {}
    for wanted in (STAND_IN.get(tier), tier):  # the tier's own records last: they win
        for record in records:
            if wanted is not None and record.tier == wanted:
                out[record.figure] = record
    return out


def recorded_figures(config: WorkflowConfig, tier: str) -> list[str]:
    """The config's figures a plan of ``tier`` estimates on their records, in its order."""
    records = recorded_calibrations(tier)
    return [figure for figure in config.simulated_figures if figure in records]


def describe(record: CostRecord, tier: str) -> str:
    """How the plan names a record it calibrates on."""
    of = "this tier" if record.tier == tier else f"the {record.tier} tier"
    return (
        f"{record.runs} runs of {of} in {RUN_COSTS} ({record.cpu}, {record.cores} cores, "
        f"{record.recorded})"
    )


def as_factors(records: Mapping[str, CostRecord]) -> dict[str, float]:
    """The calibration factors of :func:`recorded_calibrations`'s records, per figure."""
    return {figure: record.factor for figure, record in records.items()}
