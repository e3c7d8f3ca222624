"""The fidelity gate: whether an emulated run renders its scenario faithfully.

This module owns the checks that decide whether an emulated run can be used,
and their tolerances (stated here, in the dataset and in the README):

- before the run, for each traced link direction that a flow crosses, a short
  **rate probe** (UDP at 105 % of the link rate for ``probe_s`` seconds, from
  the flow's source to its destination) must deliver within
  ``rate_tolerance`` (10 %) of the direction's UDP goodput capacity, and an
  unloaded **RTT probe** (median of 7 ``ping`` replies after one that resolves
  ARP) between the same hosts must be within
  ``rtt_tolerance`` (10 %, or 2 ms on near-zero delays) of the configured
  round-trip propagation delay;
- during the run, the **CPU** (``/proc/stat``, all cores, 1-s windows) must
  not be saturated (at least 95 % busy) in more than 10 % of the windows, and
  the **samplers** must take at least 95 % of their samples within half an
  interval of their time.

In virtual time (the UML route, :mod:`tcprepro.emulation.uml`) guest CPU work takes
no guest time, so a saturated CPU cannot distort the run: ``cpu_gate = False``
keeps the CPU measurement in the report but no longer flags it. The probes and the
sampler check stay.

A run that fails any check is still written, with ``fidelity_ok = 0`` and the
reasons in ``fidelity_flags``; figures and the cross-check mark it, and it is
never silently used.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CpuMonitor", "FidelityReport", "Tolerances", "expected_udp_goodput_bps", "parse_ping"]


@dataclass(frozen=True)
class Tolerances:
    """Limits of the fidelity gate."""

    rate_rel: float = 0.10
    rtt_rel: float = 0.10
    rtt_abs_s: float = 0.002
    cpu_busy: float = 0.95
    cpu_saturated_fraction: float = 0.10
    late_fraction: float = 0.05
    #: False in virtual time: CPU saturation is measured but does not flag the run
    cpu_gate: bool = True


@dataclass
class LinkProbe:
    """Probe results of one traced link direction."""

    link: str
    src: str
    dst: str
    configured_rate_bps: float
    expected_goodput_bps: float
    probe_goodput_bps: float
    configured_rtt_s: float
    probe_rtt_s: float
    ping_ms: str = ""
    rate_ok: bool = False
    rtt_ok: bool = False

    @property
    def rate_ratio(self) -> float:
        """Achieved / expected UDP goodput."""
        return self.probe_goodput_bps / self.expected_goodput_bps


@dataclass
class FidelityReport:
    """Everything the gate measured, and its verdict."""

    tolerances: Tolerances = field(default_factory=Tolerances)
    links: list[LinkProbe] = field(default_factory=list)
    cpu_mean_busy: float = math.nan
    cpu_saturated_fraction: float = math.nan
    sample_late_fraction: float = math.nan
    sample_max_late_s: float = math.nan
    flags: list[str] = field(default_factory=list)

    def judge(self) -> None:
        """Fill ``flags`` from the measurements and the tolerances."""
        tol = self.tolerances
        self.flags = []
        for probe in self.links:
            probe.rate_ok = abs(probe.rate_ratio - 1.0) <= tol.rate_rel
            allowed = max(tol.rtt_rel * probe.configured_rtt_s, tol.rtt_abs_s)
            probe.rtt_ok = abs(probe.probe_rtt_s - probe.configured_rtt_s) <= allowed
            if not probe.rate_ok:
                self.flags.append(
                    f"{probe.link}: probe rate {probe.rate_ratio:.0%} of the expected "
                    f"{probe.expected_goodput_bps / 1e6:.3g} Mb/s (tolerance ±{tol.rate_rel:.0%})"
                )
            if not probe.rtt_ok:
                self.flags.append(
                    f"{probe.link}: probe RTT {probe.probe_rtt_s * 1e3:.1f} ms for "
                    f"{probe.configured_rtt_s * 1e3:.1f} ms configured"
                )
        if tol.cpu_gate and self.cpu_saturated_fraction > tol.cpu_saturated_fraction:
            self.flags.append(
                f"CPU saturated (>= {tol.cpu_busy:.0%} busy) in "
                f"{self.cpu_saturated_fraction:.0%} of the 1-s windows"
            )
        if self.sample_late_fraction > tol.late_fraction:
            self.flags.append(
                f"{self.sample_late_fraction:.0%} of the trace samples were late or skipped"
            )

    @property
    def ok(self) -> bool:
        """True when no check failed."""
        return not self.flags

    def to_json(self) -> str:
        """The report as JSON (dataset attribute ``fidelity``)."""
        data: dict[str, Any] = asdict(self)
        data["ok"] = self.ok
        for probe, entry in zip(self.links, data["links"], strict=True):
            entry["rate_ratio"] = probe.rate_ratio
        return json.dumps(data, allow_nan=True)


def expected_udp_goodput_bps(rate_bps: float, payload_bytes: int) -> float:
    """UDP payload rate of a link at ``rate_bps`` (IP 20 + UDP 8 + Ethernet 14 header bytes)."""
    return rate_bps * payload_bytes / (payload_bytes + 28 + 14)


def parse_ping(text: str) -> float:
    """Median RTT (s) of the replies in ``ping`` output (NaN when none).

    The median, not the mean: one reply delayed by the host (a scheduling hiccup
    under QEMU TCG) must not move the estimate of the propagation RTT.
    """
    times = sorted(
        float(line.split("time=")[1].split()[0]) / 1000.0
        for line in text.splitlines()
        if "time=" in line
    )
    if not times:
        return math.nan
    middle = len(times) // 2
    return times[middle] if len(times) % 2 else (times[middle - 1] + times[middle]) / 2


class CpuMonitor:
    """Busy fraction of all CPUs over successive windows, from ``/proc/stat``."""

    def __init__(self) -> None:
        self.busy: list[float] = []
        self._last = self._read()

    @staticmethod
    def _read() -> tuple[int, int]:
        with open("/proc/stat") as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return sum(fields), idle

    def sample(self) -> None:
        """Close the current window (call about once a second)."""
        total, idle = self._read()
        d_total, d_idle = total - self._last[0], idle - self._last[1]
        if d_total > 0:
            self.busy.append(1.0 - d_idle / d_total)
        self._last = (total, idle)

    def summary(self, threshold: float) -> tuple[float, float]:
        """(mean busy fraction, fraction of windows at or above ``threshold``)."""
        if not self.busy:
            return math.nan, math.nan
        saturated = sum(1 for b in self.busy if b >= threshold)
        return sum(self.busy) / len(self.busy), saturated / len(self.busy)


def sleep_until(deadline: float, cpu: CpuMonitor | None = None, step_s: float = 1.0) -> None:
    """Sleep until ``deadline`` (monotonic), closing a CPU window about every second."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, step_s))
        if cpu is not None and min(left, step_s) >= step_s:
            cpu.sample()
