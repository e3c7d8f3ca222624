"""The explorer in a real browser: JupyterLab and headless Chromium on a smoke-sized cell.

The test opens ``notebooks/explore.ipynb`` (figure A1, smoke tier, an empty ``data/``),
runs its cells, types an uplink buffer no cached run has into its control, waits for the
run (a liveness timeout, not a speed target) and checks that the utilisation the page
shows is the one of the new dataset the explorer wrote. The screenshot is saved next to
the test's files (its path is printed; ``TCPREPRO_SCREENSHOTS=<folder>`` copies it there).
"""

import os
import shutil
import time
from pathlib import Path

import pytest
import xarray as xr

from conftest import ROOT
from explore_browser import LabSession, missing_capability

pytestmark = pytest.mark.slow

#: an uplink buffer (packets) that no tier of A1 runs: never cached by the workflow
NEW_BUFFER_PKTS = "57"
KNOB = "topology.uplink.buffer_pkts"


def test_explorer_in_jupyterlab_shows_the_new_datasets_value(tmp_path):
    missing = missing_capability()
    if missing:
        pytest.skip(f"missing capability: {missing}")
    from tcprepro import metrics
    from tcprepro.explore.cell import FigureExplorer

    workdir = tmp_path / "work"
    parameters = {"figure_id": "A1", "tier": "smoke", "linux": False}
    parameters |= {"root": str(ROOT), "workdir": str(workdir)}
    with LabSession(tmp_path, parameters) as lab:
        lab.open_and_run_all()
        first_s = lab.wait_for_cell("")
        pressed = lab.set_control(KNOB, NEW_BUFFER_PKTS)
        lab.wait_for_cell(f"{KNOB} = {NEW_BUFFER_PKTS}")
        drawn_s = time.monotonic() - pressed
        shown = {flow: lab.shown_value("ns3", flow, "util_pct") for flow in ("down", "up")}
        screenshot = lab.screenshot(tmp_path / "explorer-A1.png")
    print(f"first cell {first_s:.1f} s; {KNOB} = {NEW_BUFFER_PKTS} drawn {drawn_s:.1f} s")
    print(f"screenshot: {screenshot}")
    if os.environ.get("TCPREPRO_SCREENSHOTS"):
        shutil.copy(screenshot, Path(os.environ["TCPREPRO_SCREENSHOTS"]) / screenshot.name)

    explorer = FigureExplorer("A1", "smoke", ROOT, workdir)
    cell = explorer.cell({**explorer.start_texts(), KNOB: NEW_BUFFER_PKTS})
    [run] = explorer.runs(cell)
    dataset = explorer.output_path(run, "ns3")
    assert dataset.exists(), f"the explorer wrote no {dataset}"
    with xr.open_dataset(dataset) as ds:
        assert ds.attrs["cache_key"] == run.cache_key()
        assert '"buffer_pkts":57' in ds.attrs["config"].replace(" ", "")
        util_pct = (metrics.utilisation(ds) * 100.0).to_series()
    for flow, text in shown.items():
        assert text == f"{util_pct[flow]:.1f}", f"{flow}: shown {text}, dataset {util_pct[flow]}"
    assert screenshot.stat().st_size > 10_000
