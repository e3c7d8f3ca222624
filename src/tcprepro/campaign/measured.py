"""What the plan's cost model is calibrated on: the machine's measured samples.

Each constant is a measurement of `tcprepro bench` (BENCHMARKS.md names its section),
committed before any build the plan is checked against; :mod:`tcprepro.campaign.plan`
reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CALIBRATION_STRIDE",
    "FIGURE_CALIBRATION_MIN_RUNS",
    "MEASURED_QUICK",
    "MEASURED_QUICK_FIGURES",
    "UML_MEASURED_QUICK",
    "UML_NEIGHBOUR_SLOWDOWN",
    "UML_SAMPLE_STRIDE",
    "StudyMeasurement",
]


@dataclass(frozen=True)
class StudyMeasurement:
    """One study's runs in the plan's calibration sample (BENCHMARKS.md).

    ``wall_s`` sums each run's own time in its batch process (the batch manifest's);
    ``mib`` is the size of the run datasets.
    """

    runs: int
    simulated_s: float
    wall_s: float
    mib: float

    @property
    def wall_per_simulated_s(self) -> float:
        """Measured wall seconds per simulated second."""
        return self.wall_s / self.simulated_s


#: the calibration sample: every CALIBRATION_STRIDE-th quick-tier run of each figure
#: (:func:`calibration_runs`), which `tcprepro bench` simulates (:data:`MEASURED_QUICK`)
CALIBRATION_STRIDE = 7
#: the calibration sample simulated by two batch processes side by side on the idle 2-core
#: machine, as `tcprepro bench` measures it (its section "The simulation's cost per study",
#: :func:`tcprepro.bench_workflow.calibration_sample`)
MEASURED_QUICK = {
    "A": StudyMeasurement(24, 11600.0, 178.7, 6.43),
    "B": StudyMeasurement(27, 980.0, 250.7, 3.87),
    "C": StudyMeasurement(13, 1120.0, 214.6, 2.72),
    "D": StudyMeasurement(15, 712.0, 46.0, 1.78),
}
#: per figure, its runs in the same calibration sample and their wall seconds (the rows of
#: that section per figure); a figure with at least FIGURE_CALIBRATION_MIN_RUNS runs there
#: is calibrated on its own runs (:func:`calibrations`), since one study's figures can cost
#: the model's estimate times quite different factors (A1's runs 2.6 times A3's)
MEASURED_QUICK_FIGURES: dict[str, tuple[int, float]] = {
    "A1": (7, 71.459),
    "A2": (7, 49.88),
    "A3": (5, 29.024),
    "A4": (5, 28.383),
    "D1": (6, 12.395),
    "D3": (5, 31.099),
    "D4": (4, 2.49),
    "B5.1": (4, 77.044),
    "B5.10": (16, 134.431),
    "B5.14": (3, 16.842),
    "B5.16": (3, 12.645),
    "B5.20": (1, 9.781),
    "C1": (1, 85.918),
    "C3.1": (6, 58.556),
    "C3.3": (2, 21.558),
    "C3.4": (1, 11.457),
    "C3.6": (3, 37.104),
}
FIGURE_CALIBRATION_MIN_RUNS = 3
#: the UML sample: every UML_SAMPLE_STRIDE-th quick-tier emulated run of each figure
#: (:func:`uml_sample_runs`), which `tcprepro bench` emulates (:data:`UML_MEASURED_QUICK`)
UML_SAMPLE_STRIDE = 4
#: per emulated figure, its UML sample's runs and their wall seconds (each run's own:
#: set-up, probe, traffic, teardown, dataset; the boot apart), two boots side by side on
#: the idle 2-core machine, as `tcprepro bench` measures them (its section "The
#: emulation's cost per figure", :func:`tcprepro.bench_workflow.uml_sample`)
UML_MEASURED_QUICK: dict[str, tuple[int, float]] = {
    "X1": (5, 81.8),
    "D1.1": (2, 21.5),
    "X3": (5, 130.7),
    "X4": (4, 103.8),
    "X11": (3, 72.6),
    "X12": (2, 68.9),
    "X6": (2, 178.9),
    "X13": (2, 77.6),
    "X14": (1, 56.7),
    "X10": (1, 57.1),
    "X7": (1, 125.2),
    "X2": (2, 211.1),
    "X5": (4, 121.6),
    "X8": (2, 102.7),
    "X9": (2, 96.7),
}
#: how much slower a simulation runs while a UML guest runs on the other core of the idle
#: 2-core machine: the same simulate batch beside a guest running an emulated figure's
#: runs, against alone, as `tcprepro bench` measures it (its section "A UML guest beside
#: the simulations", :func:`tcprepro.bench_workflow.guest_contention`)
UML_NEIGHBOUR_SLOWDOWN = 1.0  # 1.00 measured: the guest and ns-3 each keep a core
