"""What the plan's cost model is scaled by: its calibrations, measured on this machine's runs.

The cost models (:mod:`tcprepro.campaign.cost`) count packets and set-up; what a run
really costs on a host is measured and carried to the other runs as a factor, the
measured wall seconds over the model's estimate of the same runs:

- per study and per figure, on a sample of quick-tier runs (:func:`calibrations`,
  :func:`calibration_runs`; the measurements: :mod:`tcprepro.campaign.measured`);
- per figure and tier, on the figure's own cached runs of the tier
  (:func:`tier_calibration`), or on its run-cost records of the tier
  (:func:`tier_calibrations`, :mod:`tcprepro.campaign.cost_records`), since the quick
  sample carries poorly to the papers' lengths;
- per emulated figure, on a sample of its quick-tier runs on the UML route
  (:func:`uml_calibrations`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tcprepro.campaign.config import WorkflowConfig
from tcprepro.campaign.cost import estimate_wall_s, uml_run_wall_s
from tcprepro.campaign.cost_records import (
    CostRecord,
    as_factors,
    measured_runs,
    recorded_calibrations,
)
from tcprepro.campaign.measured import (
    CALIBRATION_STRIDE,
    FIGURE_CALIBRATION_MIN_RUNS,
    MEASURED_QUICK,
    MEASURED_QUICK_FIGURES,
    UML_MEASURED_QUICK,
    UML_SAMPLE_STRIDE,
)
from tcprepro.campaign.runs import Run

__all__ = [
    "calibration_factor",
    "calibration_runs",
    "calibrations",
    "tier_calibration",
    "tier_calibrations",
    "uml_calibrations",
    "uml_sample_runs",
]


def calibration_factor(
    config: WorkflowConfig, figure: str, calibration: Mapping[str, float | None]
) -> float:
    """What a figure's runs cost over the cost model: its own factor, else its study's, else 1.

    :func:`calibrations` gives a figure its own factor only within a calibrated study.
    """
    study = config.figure(figure)["study"]
    return calibration.get(figure) or calibration.get(study) or 1.0


def calibration_runs(
    config: WorkflowConfig, study: str, stride: int = CALIBRATION_STRIDE, tier: str = "quick"
) -> list[Run]:
    """A study's calibration sample: one in ``stride`` runs of each figure of ``tier``.

    Each figure's runs are ranked by the cost model (:func:`estimate_wall_s`; the run's
    path breaks ties) and the sample takes the middle run of each of its
    ceil(n / ``stride``) equal slices of that ranking, so the sample spans the figure's
    cheap and costly cells in their proportions whatever the order of its grid (every
    ``stride``-th run in the config's order can keep landing on a grid's cheap cells).
    Figures in the config's order; cross-checked
    figures aside (their ns-3 runs repeat another figure's cells).
    """
    sample: list[Run] = []
    for figure in config.figures_of(study):
        if config.crosschecked(figure):
            continue
        runs = sorted(config.runs(figure, tier), key=lambda r: (estimate_wall_s([r]), r.path))
        slices = -(-len(runs) // stride)
        sample += [runs[int((k + 0.5) * len(runs) / slices)] for k in range(slices)]
    return sample


def tier_calibration(
    config: WorkflowConfig, figure: str, tier: str, workdir: Path = Path(".")
) -> tuple[float, int] | None:
    """A figure's calibration on its own cached runs of ``tier``: (factor, runs), else None.

    The wall seconds its cached runs took (their datasets' ``wall_time_s``, made by the
    current code: :func:`tcprepro.campaign.cost_records.measured_runs`) over the cost
    model's estimate of the same runs, once at least :data:`FIGURE_CALIBRATION_MIN_RUNS`
    of them are cached. The quick-tier sample (:func:`calibrations`) carries poorly to a
    tier whose runs are longer or faster: after a build's first runs, this factor
    estimates the rest of it (and ``tcprepro plan --record-costs`` keeps it for another
    machine: :mod:`tcprepro.campaign.cost_records`).
    """
    measured = measured_runs(config, figure, tier, workdir)
    if measured is None:
        return None
    wall, model, count, _ = measured
    return wall / model, count


def calibrations(
    config: WorkflowConfig, studies: Iterable[str] | None = None
) -> dict[str, float | None]:
    """Measured quick-tier wall time over the cost model's estimate of the same runs.

    Keyed by figure for a figure with at least :data:`FIGURE_CALIBRATION_MIN_RUNS` runs in
    the calibration sample (:data:`MEASURED_QUICK_FIGURES`), and by study for the study's
    other figures (the rest of its sample; its whole sample when every figure has its own).
    A study is None when not measured (:data:`MEASURED_QUICK`) or when its quick tier no
    longer has the measured number of runs: its runs keep the cost model alone, and so do
    its figures. ``studies``: only those (default: every study of the config).
    """
    out: dict[str, float | None] = {}
    for study in config.studies() if studies is None else studies:
        measured = MEASURED_QUICK.get(study)
        out[study] = None
        if measured is None:
            continue
        quick = calibration_runs(config, study)
        if len(quick) != measured.runs:
            continue
        rest, rest_wall = list(quick), measured.wall_s
        for figure in dict.fromkeys(run.figure for run in quick):  # the sample's order
            runs = [run for run in quick if run.figure == figure]
            count, wall = MEASURED_QUICK_FIGURES.get(figure, (0, 0.0))
            if count == len(runs) >= FIGURE_CALIBRATION_MIN_RUNS:
                out[figure] = wall / estimate_wall_s(runs)
                rest = [run for run in rest if run.figure != figure]
                rest_wall -= wall
        if rest and rest_wall > 0:
            out[study] = rest_wall / estimate_wall_s(rest)
        else:
            out[study] = measured.wall_s / estimate_wall_s(quick)
    return out


def tier_calibrations(
    config: WorkflowConfig,
    tier: str,
    recorded: Mapping[str, CostRecord] | None = None,
    studies: Iterable[str] | None = None,
) -> dict[str, float | None]:
    """The factors a tier's runs are estimated with, per figure or study.

    The quick-tier sample's (:func:`calibrations`), and a figure's recorded run costs of
    the tier where it has some (``recorded``, default :func:`recorded_calibrations` of
    records/run-costs.csv). ``studies``: only those studies' (default: every one).
    """
    recorded = recorded_calibrations(tier) if recorded is None else recorded
    return {**calibrations(config, studies), **as_factors(recorded)}


def uml_sample_runs(
    config: WorkflowConfig, figure: str, stride: int = UML_SAMPLE_STRIDE, tier: str = "quick"
) -> list[Run]:
    """The UML sample of a figure: every ``stride``-th of its emulated runs in ``tier``."""
    return config.runs(figure, tier, "mininet")[::stride]


def uml_calibrations(config: WorkflowConfig) -> dict[str, float | None]:
    """Per emulated figure, its UML sample's measured wall time over the model's estimate.

    None for a figure not measured (:data:`UML_MEASURED_QUICK`) or whose quick tier no
    longer has the measured number of sample runs: its runs keep the model alone. The
    model (:func:`uml_run_wall_s`) follows rates, durations, nodes and samplers; what it
    leaves out (a figure's web transfers or background processes, how much of the link
    its flows fill in Linux) the figure's calibration carries to its other cells and tiers.
    """
    return config.derived("uml_calibrations", lambda: _uml_calibrations(config))


def _uml_calibrations(config: WorkflowConfig) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for figure in config.simulated_figures:
        measured = UML_MEASURED_QUICK.get(figure)
        sample = uml_sample_runs(config, figure) if measured else []
        out[figure] = None
        if measured and sample and len(sample) == measured[0]:
            out[figure] = measured[1] / sum(uml_run_wall_s(run.scenario()) for run in sample)
    return out
