"""Shared fixtures: the repository root, small scenarios, and capability skips."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: a small access-link scenario (study A's topology), valid as is
ACCESS: dict[str, Any] = {
    "id": "test-access",
    "topology": {
        "kind": "access",
        "downlink": {"rate": "10Mbps", "delay": "42ms", "buffer_pkts": 250},
        "uplink": {"rate": "2Mbps", "delay": "52ms", "buffer_pkts": 40},
    },
    "flows": {
        "down": {"direction": "down", "variant": "NewReno"},
        "up": {"direction": "up", "variant": "NewReno"},
    },
    "duration": "20s",
    "warmup": "5s",
}

#: a one-sender dumbbell, valid as is
DUMBBELL: dict[str, Any] = {
    "id": "test-dumbbell",
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer_pkts": 100},
        "senders": [{"name": "s", "count": 1, "rate": "100Mbps", "delay": "5ms"}],
    },
    "flows": {"f0": {"src": "s0", "variant": "NewReno"}},
    "duration": "20s",
    "warmup": "5s",
}


def compile_latex(tmp_path: Path, body: str, runs: int = 1, *, halt: bool = True) -> str:
    """Compile ``body`` with the report's preamble into ``tmp_path / "t.pdf"``.

    ``runs`` pdflatex passes (two to read back the labels the first one wrote); with
    ``halt``, a LaTeX error fails the test. Returns the last pass's log.
    """
    import subprocess

    (tmp_path / "t.tex").write_text(
        "\\documentclass[10pt,a4paper]{article}\n"
        + (ROOT / "paper/preamble.tex").read_text()
        + "\n\\begin{document}\n"
        + body
        + "\n\\end{document}\n"
    )
    for _ in range(runs):
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", *(["-halt-on-error"] * halt), "t.tex"],
            cwd=tmp_path,
            capture_output=True,
        )
        assert not halt or done.returncode == 0, done.stdout.decode(errors="replace")[-2000:]
    return (tmp_path / "t.log").read_text(errors="replace")


def pdf_text(pdf: Path, layout: bool = True) -> str:
    """The text of ``pdf`` by pdftotext (its pages separated by form feeds)."""
    import subprocess

    return subprocess.run(
        ["pdftotext", *(["-layout"] * layout), str(pdf), "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def compile_report_inputs(
    tmp_path: Path, inputs: list[str], runs: int = 1, setting: str = ""
) -> str:
    """Compile generated report inputs (paths under ``tmp_path``) with the report's preamble.

    Each input is read through ``\\reproinput`` as in the report, after ``setting`` (e.g.
    ``\\small``, as the report sets the parameters table); ``runs`` pdflatex passes
    (:func:`compile_latex`). Returns the last pass's log; the PDF is ``tmp_path / "t.pdf"``.
    """
    body = "".join(f"\\reproinput{{{name}}}\n" for name in inputs)
    return compile_latex(tmp_path, setting + "\n" + body, runs)


def scenario_dict(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with top-level keys replaced."""
    out = copy.deepcopy(base)
    out.update(changes)
    return out


#: one bulk flow through a 10 Mb/s bottleneck, no delay (the emulation and VM tests)
BOTTLENECK_10M = scenario_dict(
    DUMBBELL,
    topology={
        "kind": "dumbbell",
        "bottleneck": {"rate": "10Mbps", "delay": "0ms", "buffer_pkts": 50},
        "reverse": {"rate": "10Mbps", "delay": "0ms", "buffer_pkts": 1000},
        "senders": [{"name": "s", "count": 1, "rate": "1Gbps", "delay": "0ms"}],
    },
    duration="12s",
    warmup="3s",
)


@pytest.fixture
def repo_root() -> Path:
    return ROOT


#: whether the host kernel has sch_netem, checked once per session (None: not checked yet)
_NETEM: Any = None


def _netem() -> Any:
    """The doctor's netem check (a throw-away namespace), run once and cached."""
    global _NETEM
    if _NETEM is None:
        from tcprepro.doctor import netem_available

        _NETEM = netem_available()
    return _NETEM


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_root") and os.geteuid() != 0:
        pytest.skip("missing capability: root (run the tests as root)")
    if item.get_closest_marker("needs_latex"):
        from tcprepro.doctor import _latex

        latex = _latex()
        if not latex.ok:
            pytest.skip(f"missing capability: {latex.detail} ({latex.fix})")
    if item.get_closest_marker("needs_netem"):
        netem = _netem()
        if not netem.ok:
            pytest.skip(f"missing capability: netem ({netem.detail}; {netem.fix})")


# ---------------------------------------------------------------------------
# The UML route (tests/test_uml*.py, tests/twins.py)


def uml_or_skip(scenario: Any = None) -> None:
    """Skip the test when the UML route lacks what ``scenario`` (or a Reno flow) needs."""
    from tcprepro.emulation import capabilities

    needs = capabilities.Needs(("htb", "netem", "pfifo"), ("reno",))
    if scenario is not None:
        needs = needs | capabilities.scenario_needs(scenario)
    missing = capabilities.uml_missing(needs)
    if missing:
        pytest.skip("missing capability for the UML route: " + "; ".join(map(str, missing)))


def reno_100m(**changes: Any) -> Any:
    """A UML test's scenario: 100 Mb/s bottleneck, 20 ms RTT, a 1-BDP buffer, one Reno flow."""
    rtt = 0.020
    bdp_pkts = round(100e6 * rtt / 8 / 1500)
    data = scenario_dict(
        DUMBBELL,
        topology={
            "kind": "dumbbell",
            "bottleneck": {"rate": "100Mbps", "delay": "10ms", "buffer_pkts": bdp_pkts},
            "senders": [{"name": "s", "count": 1, "rate": "1Gbps", "delay": "0ms"}],
        },
        flows={"f0": {"src": "s0", "variant": "NewReno"}},
        **{"duration": "8s", "warmup": "4s", "trace": {"interval": "0.5s"}, **changes},
    )
    from tcprepro.scenario_io import load_scenario_dict

    return load_scenario_dict(data)


def uml_batch(jobs: list[Any], **kwargs: Any) -> list[Any]:
    """``jobs`` in one batch on the UML route (1-s probes), its wall time printed."""
    import time

    from tcprepro.emulation.runner import emulate_batch

    started = time.monotonic()
    results = emulate_batch(jobs, "uml", probe_s=1.0, **kwargs)
    print(f"UML batch of {len(jobs)}: {time.monotonic() - started:.0f} s wall")
    return results
