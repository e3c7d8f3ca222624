"""The JupyterLab explorer of a figure: ipywidgets controls, background runs, the figure.

This module owns the widgets only: one control per knob of the figure
(:func:`tcprepro.explore.cell.figure_knobs`), each with the error of its field under it;
a change is validated at once (a bad value shows its field's error and starts nothing),
then the cell runs in the background (:class:`~tcprepro.explore.runner.Exploration`,
which a newer change or the Cancel button stops), with one progress bar per backend.
The result is a table of numbers per flow and the explored cell drawn over the latest
build (:func:`tcprepro.figures.explore.explored_figure`); "Save as scenario" writes the
cell as a scenario file (:meth:`~tcprepro.explore.cell.FigureExplorer.save_scenario`).

Every element a test reads has a CSS class: ``tcprepro-knob-<key>`` (a control),
``tcprepro-error-<key>`` (its error), ``tcprepro-status``, ``tcprepro-results`` (whose
numbers are ``<td class="tcprepro-value" data-backend=... data-flow=... data-metric=...>``).
"""

from __future__ import annotations

import html
import re
import threading
from pathlib import Path
from typing import Any

import pandas as pd

from tcprepro.errors import ConfigError
from tcprepro.explore.cell import ExploredCell, FigureExplorer, field_errors
from tcprepro.explore.runner import Exploration

__all__ = ["Explorer", "css_name"]

#: the numbers of the results table: (column of the comparison table, backend, metric, digits)
_COLUMNS = (
    ("ns3_util_pct", "ns3", "util_pct", 1),
    ("ns3_rtt_ms", "ns3", "rtt_ms", 1),
    ("emu_util_pct", "linux", "util_pct", 1),
    ("emu_rtt_ms", "linux", "rtt_ms", 1),
    ("diff_pp", "linux", "diff_pp", 1),
)
_HEADERS = (
    "flow",
    "ns-3 utilisation (%)",
    "ns-3 RTT (ms)",
    "Linux utilisation (%)",
    "Linux RTT (ms)",
    "Linux - ns-3 (pp)",
    "within tolerance",
)
#: the results table's cell padding
_PAD = ' style="padding: 0.1em 0.8em; text-align: right"'
#: the default cross-check tolerance of a figure without one (only drawn, never judged)
_NO_TOLERANCE = {"utilisation_pp": 0.0, "rtt_rel": 0.0}


def css_name(key: str) -> str:
    """A knob's key as a CSS class suffix (``a.b_c`` gives ``a-b_c``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", key)


class Explorer:
    """A figure's explorer in JupyterLab (display it as the last value of a cell).

    Parameters
    ----------
    figure
        Catalogue id (a data view explores the figure it draws).
    tier
        The tier whose settings the cells start from (``smoke``, ``quick``, ``paper``).
    linux
        Run each cell in real Linux too (User-mode Linux), when the figure and host can.
    run_on_open
        Show the tier's first cell at once (read from ``data/``, or run it).
    root, workdir
        Repository folder and the folder holding ``data/`` (see
        :class:`~tcprepro.explore.cell.FigureExplorer`).
    """

    def __init__(
        self,
        figure: str,
        tier: str = "smoke",
        *,
        linux: bool = False,
        run_on_open: bool = True,
        root: str | Path | None = None,
        workdir: str | Path | None = None,
    ) -> None:
        import ipywidgets as w

        self.model = FigureExplorer(figure, tier, root, workdir)
        self.side = self.model.linux()
        self.exploration: Exploration | None = None
        self.cell: ExploredCell | None = None
        self._draw_lock = threading.Lock()
        self._build, self._build_label = self._latest_build()
        self._comparison: pd.DataFrame | None = None

        self.controls: dict[str, Any] = {}
        self.errors: dict[str, Any] = {}
        rows = []
        for knob in self.model.knobs:
            start = self.model.start_texts()[knob.key]
            if knob.cases:
                control = w.Dropdown(options=list(knob.choices), value=start)
            elif knob.choices:
                control = w.Combobox(options=list(knob.choices), value=start, ensure_option=False)
            else:
                control = w.Text(value=start)
            control.continuous_update = False
            control.description = knob.label
            control.style = {"description_width": "14em"}
            control.layout = w.Layout(width="26em")
            control.add_class(f"tcprepro-knob-{css_name(knob.key)}")
            control.observe(self._changed, names="value")
            error = w.HTML(value="")
            error.add_class(f"tcprepro-error-{css_name(knob.key)}")
            self.controls[knob.key], self.errors[knob.key] = control, error
            rows.append(w.HBox([control, error]))

        self.linux_box = w.Checkbox(
            value=bool(linux and self.side.available),
            description="Linux beside (UML, virtual time)",
            disabled=not self.side.available,
            indent=False,
        )
        self.linux_box.observe(self._changed, names="value")
        self.run_button = w.Button(description="Run", button_style="primary")
        self.run_button.on_click(lambda _: self.run())
        self.cancel_button = w.Button(description="Cancel")
        self.cancel_button.on_click(lambda _: self.cancel())
        self.save_path = w.Text(
            value="", placeholder="scenario file to write", layout={"width": "30em"}
        )
        self.save_button = w.Button(description="Save as scenario")
        self.save_button.on_click(lambda _: self.save())
        self.saved = w.HTML(value="")
        self.saved.add_class("tcprepro-saved")
        self.status = w.HTML(value="")
        self.status.add_class("tcprepro-status")
        self.bars = {
            backend: w.FloatProgress(value=0.0, min=0.0, max=1.0, description=name)
            for backend, name in (("ns3", "ns-3"), ("linux", "Linux"))
        }
        self.results = w.HTML(value="")
        self.results.add_class("tcprepro-results")
        self.image = w.Image(format="png")
        linux_note = w.HTML(value=f"<i>{html.escape(self.side.reason)}</i>")
        header = w.HTML(
            value=f"<b>{html.escape(self.model.shown)}: {html.escape(self.model.title)}</b>"
            f" &mdash; cells start from the {html.escape(tier)} tier; "
            f"grey: {html.escape(self._build_label)}"
        )
        self.widget = w.VBox(
            [
                header,
                *rows,
                w.HBox([self.linux_box, linux_note]),
                w.HBox([self.run_button, self.cancel_button]),
                self.status,
                w.HBox(list(self.bars.values())),
                self.results,
                self.image,
                w.HBox([self.save_path, self.save_button]),
                self.saved,
            ]
        )
        self.widget.add_class("tcprepro-explorer")
        self._draw()
        if run_on_open:
            self.run()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # ---- controls --------------------------------------------------------------

    def texts(self) -> dict[str, str]:
        """Every control's text, by knob key."""
        return {key: str(control.value) for key, control in self.controls.items()}

    def set(self, **texts: str) -> None:
        """Set controls by knob key (``set(down="Bbr")``; a dotted key: ``set(**{...})``)."""
        for key, text in texts.items():
            self.controls[key].value = text

    def validate(self) -> ExploredCell | None:
        """The cell the controls describe, or None after showing each field's error."""
        for error in self.errors.values():
            error.value = ""
        try:
            cell = self.model.cell(self.texts())
        except ConfigError as exc:
            per_knob, rest = field_errors(exc, self.model.knobs)
            for key, message in per_knob.items():
                self.errors[key].value = _error_html(message)
            shown = rest or [f"{len(per_knob)} field(s) invalid"]
            self.status.value = _error_html("nothing runs: " + "; ".join(shown))
            return None
        return cell

    def _changed(self, _change: Any) -> None:
        self.run()

    # ---- running -----------------------------------------------------------------

    def backends(self) -> tuple[str, ...]:
        """ns-3, and Linux when its box is ticked."""
        return ("ns3", "linux") if self.linux_box.value else ("ns3",)

    def run(self) -> Exploration | None:
        """Validate the controls and run their cell (cancelling a run still going)."""
        cell = self.validate()
        if cell is None:
            return None
        self.cancel()
        self.cell = cell
        self._comparison = None
        self.status.value = f"running: {html.escape(cell.describe())}"
        exploration = Exploration(self.model, cell, self.backends(), self._listener)
        self.exploration = exploration
        self.save_path.value = str(self._default_save_path(cell))
        return exploration.start()

    def cancel(self) -> None:
        """Stop the cell's runs (what finished stays cached)."""
        if self.exploration is not None and not self.exploration.over:
            self.exploration.cancel()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait for the current cell's runs (False when ``timeout_s`` ran out)."""
        return self.exploration.wait(timeout_s) if self.exploration is not None else True

    def _listener(self, exploration: Exploration) -> None:
        if exploration is not self.exploration:
            return  # a cancelled cell's last words
        parts = []
        for backend, progress in exploration.progress.items():
            bar = self.bars[backend]
            bar.value = progress.done / max(progress.total, 1)
            bar.bar_style = {"done": "success", "failed": "danger"}.get(progress.state, "")
            text = f"{progress.done}/{progress.total} runs, {progress.elapsed_s:.0f} s"
            if progress.state == "running" and progress.estimate_s:
                text += f" (estimate {progress.estimate_s:.0f} s)"
            if progress.message:
                text += f": {progress.message}"
            name = "ns-3" if backend == "ns3" else "Linux"
            parts.append(f"{name} {progress.state} ({html.escape(text)})")
        if any(p.state == "done" for p in exploration.progress.values()):
            self._draw()  # before the status says done: what it says is drawn
        state = "done" if exploration.over else "running"
        described = html.escape(exploration.cell.describe())
        self.status.value = f"{state}: {described}<br>" + "<br>".join(parts)

    # ---- results -------------------------------------------------------------

    def comparison(self) -> pd.DataFrame | None:
        """The explored cell's numbers per flow (ns-3, and Linux when it ran), or None."""
        from tcprepro.analysis import crosscheck

        exploration = self.exploration
        if exploration is None:
            return None
        ns3 = exploration.dataset("ns3")
        if ns3 is None:
            return None
        linux = exploration.dataset("linux") if "linux" in exploration.progress else None
        tolerance = self.side.tolerance or _NO_TOLERANCE
        return crosscheck.compare(
            ns3,
            linux,
            float(tolerance["utilisation_pp"]),
            float(tolerance["rtt_rel"]),
            utilisation_rel=(
                float(tolerance["utilisation_rel"]) if "utilisation_rel" in tolerance else None
            ),
        )

    def figure(self, table: pd.DataFrame | None = None) -> Any:
        """The explored cell over the latest build, as it stands (a matplotlib Figure).

        ``table`` is the cell's :meth:`comparison` when the caller has it already.
        """
        from tcprepro.figures.explore import explored_figure

        table = self.comparison() if table is None else table
        paper = None
        if table is not None and self.exploration is not None:
            paper = self.model.paper_values(self.exploration.cell, self.exploration.dataset("ns3"))
        cell = self.cell.describe() if self.cell is not None else "nothing explored yet"
        return explored_figure(
            table,
            self._build,
            title=f"{self.model.shown}: {cell}",
            build_label=self._build_label,
            tolerance=self.side.tolerance if "linux" in self.backends() else None,
            paper=paper,
        )

    def snapshot(self) -> Any:
        """The figure as it stands, as a PNG image a notebook cell shows (and keeps)."""
        from IPython.display import Image

        from tcprepro.figures.explore import png_bytes

        return Image(data=png_bytes(self.figure()), format="png")

    def _draw(self) -> None:
        from tcprepro.figures.explore import png_bytes

        with self._draw_lock:
            self._comparison = self.comparison()
            fig = self.figure(self._comparison)
            cell = self.exploration.cell.describe() if self.exploration is not None else ""
            self.results.value = _results_html(self._comparison, cell)
            self.image.value = png_bytes(fig)

    def _latest_build(self) -> tuple[pd.DataFrame | None, str]:
        from tcprepro.analysis import crosscheck

        dataset, which = self.model.latest_build()
        if dataset is None:
            return None, which
        rows = crosscheck.cell_metrics(dataset, "ns3")
        cells = int(dataset.attrs.get("n_runs", 0))
        return rows, f"latest build ({which}), {cells} runs"

    # ---- export ---------------------------------------------------------------------

    def _default_save_path(self, cell: ExploredCell) -> Path:
        key = self.model.runs(cell)[0].cache_key()[:8]
        folder = self.model.workdir / "data" / "explore" / "scenarios"
        return folder / f"{cell.figure}-{cell.name}-{key}.yaml"

    def save(self, path: str | Path | None = None) -> Path | None:
        """Write the controls' cell as a scenario file (the path box's, or ``path``)."""
        cell = self.validate()
        if cell is None:
            return None
        output = Path(path or self.save_path.value or self._default_save_path(cell))
        written = self.model.save_scenario(cell, output)
        self.saved.value = (
            f"saved <code>{html.escape(str(written))}</code>; run it with "
            f"<code>tcprepro simulate {html.escape(str(written))} -o run.nc</code>"
        )
        return written


def _error_html(message: str) -> str:
    return f'<span style="color:#b00020">{html.escape(message)}</span>'


def _results_html(table: pd.DataFrame | None, cell: str) -> str:
    """The numbers per flow as an HTML table whose cells name their backend, flow, metric.

    The table's ``data-cell`` is the cell's description (what a test waits for).
    """
    if table is None:
        return "<i>no result yet</i>"
    head = "".join(f"<th{_PAD}>{html.escape(h)}</th>" for h in _HEADERS)
    rows = []
    for _, row in table.iterrows():
        flow = str(row["flow"])
        cells = [f"<td{_PAD}>{html.escape(flow)}</td>"]
        for column, backend, metric, digits in _COLUMNS:
            value = row.get(column)
            text = "" if value is None or pd.isna(value) else f"{float(value):.{digits}f}"
            cells.append(
                f'<td{_PAD} class="tcprepro-value" data-backend="{backend}" '
                f'data-flow="{html.escape(flow)}" data-metric="{metric}">{text}</td>'
            )
        verdicts = [row.get("util_ok"), row.get("rtt_ok")]
        within = (
            ""
            if all(v is None or pd.isna(v) for v in verdicts)
            else (
                "yes"
                if all(bool(v) for v in verdicts if v is not None and not pd.isna(v))
                else "no"
            )
        )
        cells.append(f"<td{_PAD}>{within}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table data-cell="{html.escape(cell)}"><tr>{head}</tr>{"".join(rows)}</table>'
