"""A notebook's figures drawn in one job: one kernel, one papermill execution per figure.

Each figure of ``workflow/config.yaml`` names the notebook that draws it, and several
figures share a notebook (B5.10-B5.20, C3.1-C3.6, X1-X14). The workflow runs each
notebook once per build (one Snakemake job), for all its figures: papermill executes
the notebook once per figure with that figure's parameters, writing the executed copy
``data/notebooks/<figure>.ipynb`` as before, but every execution runs in the same
Jupyter kernel, so the libraries (xarray, Matplotlib, tcprepro) are imported once.
Between two executions the kernel's namespace is cleared (``%reset -f``), its figures
closed and its cell counter set back, so each executed notebook reads as if run alone.

:func:`notebook_runs` gives, per notebook, each figure's parameters and outputs; the
Snakemake rules (``workflow/rules/figures.smk``) declare these, and
``tcprepro draw-notebook`` executes them (:func:`execute`).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tcprepro.campaign.config import WorkflowConfig

__all__ = ["NotebookRun", "execute", "notebook_runs", "rule_name"]

#: where each figure's executed notebook is written
EXECUTED = "data/notebooks/{}.ipynb"

#: run in the kernel between two executions: no name, figure or cell number carries over
_RESET = (
    "import matplotlib.pyplot as _plt\n"
    "_plt.close('all')\n"
    "get_ipython().run_line_magic('reset', '-f')\n"
    "get_ipython().execution_count = 1\n"
)


@dataclass(frozen=True)
class NotebookRun:
    """One figure's execution of its notebook: the parameters papermill injects."""

    figure: str
    parameters: dict[str, str] = field(default_factory=dict)

    @property
    def executed(self) -> str:
        """The executed notebook written for this figure."""
        return EXECUTED.format(self.figure)

    @property
    def inputs(self) -> list[str]:
        """The datasets the figure reads (combined, and the emulated one of a cross-check)."""
        return [self.parameters[k] for k in ("combined", "emulated") if k in self.parameters]

    @property
    def outputs(self) -> list[str]:
        """What the execution writes: the figure and its record, the table, the notebook."""
        out = []
        if "output_pdf" in self.parameters:
            pdf = self.parameters["output_pdf"]
            out += [pdf, pdf.removesuffix(".pdf") + ".json"]
        if "output_tex" in self.parameters:
            out.append(self.parameters["output_tex"])
        return [*out, self.executed]


def figure_run(config: WorkflowConfig, figure: str) -> NotebookRun:
    """The parameters of one figure's execution (the config's paths, one place)."""
    parameters = {"figure_id": figure}
    if config.crosschecked(figure):  # X1...: the ns-3 and the emulated sides, compared
        parameters["combined"] = f"data/combined/{figure}.nc"
        parameters["emulated"] = f"data/combined/emulated/{figure}.nc"
    else:
        parameters["combined"] = config.combined_path(figure)
    outputs = ["figure"] if config.crosschecked(figure) else config.outputs(figure)
    if "figure" in outputs:
        parameters["output_pdf"] = f"paper/figures/{figure}.pdf"
    if "table" in outputs:
        parameters["output_tex"] = f"paper/generated/{figure}.tex"
    return NotebookRun(figure, parameters)


def notebook_runs(config: WorkflowConfig, figures: Iterable[str]) -> dict[str, list[NotebookRun]]:
    """Per notebook (config order), the executions drawing ``figures`` (config order)."""
    wanted = set(figures)
    out: dict[str, list[NotebookRun]] = {}
    for figure in config.figures:
        if figure in wanted:
            notebook = str(config.figure(figure)["notebook"])
            out.setdefault(notebook, []).append(figure_run(config, figure))
    return out


def rule_name(notebook: str | Path) -> str:
    """The Snakemake rule of a notebook: ``draw_`` and its name as an identifier."""
    return "draw_" + re.sub(r"\W", "_", Path(notebook).stem)


def execute(
    notebook: str | Path,
    runs: Iterable[NotebookRun],
    *,
    progress: Callable[[str], None] = print,
) -> list[str]:
    """Execute ``notebook`` once per run in one kernel; the figures that failed.

    A failed execution (a figure defect, a missing dataset) is reported and the next
    figure is drawn all the same; its executed notebook, with the error, is still
    written by papermill.
    """
    import papermill as pm
    from jupyter_client.manager import KernelManager

    runs = list(runs)
    # local sockets in a folder of this job's own (two jobs in one folder never share one)
    sockets = tempfile.mkdtemp(prefix="tcprepro-kernel-")
    manager = KernelManager(
        kernel_name=_kernel_name(notebook), transport="ipc", ip=f"{sockets}/kernel"
    )
    manager.start_kernel()
    failed: list[str] = []
    try:
        for index, run in enumerate(runs):
            if index:
                _reset(manager)
            started = time.monotonic()
            Path(run.executed).parent.mkdir(parents=True, exist_ok=True)
            try:
                pm.execute_notebook(
                    str(notebook),
                    run.executed,
                    parameters=run.parameters,
                    progress_bar=False,
                    km=manager,
                )
            except Exception as exc:  # papermill re-raises the cell's error
                failed.append(run.figure)
                progress(f"{run.figure}: FAILED ({type(exc).__name__}); see {run.executed}")
                progress(str(exc))
                continue
            progress(
                f"{run.figure}: drawn in {time.monotonic() - started:.1f} s "
                f"({index + 1} of {len(runs)}; {', '.join(run.outputs[:-1])})"
            )
    finally:
        manager.shutdown_kernel(now=True)
        shutil.rmtree(sockets, ignore_errors=True)
    return failed


def _kernel_name(notebook: str | Path) -> str:
    """The kernel the notebook names (papermill's default choice too)."""
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    return str(nb.metadata.get("kernelspec", {}).get("name", "python3"))


def _reset(manager) -> None:
    """Clear the kernel between two executions (names, figures, cell counter)."""
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        reply = client.execute_interactive(_RESET, timeout=60, store_history=False)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"the kernel did not reset: {reply['content']}")
    finally:
        client.stop_channels()
