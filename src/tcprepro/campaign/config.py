"""The workflow config (``workflow/config.yaml``): figures, sweeps, studies and tiers.

Each figure names a scenario file, the swept dimensions (a scenario key path and
its values, or named *cases*, each a set of scenario overrides) and its study;
each study defines the reproduction tiers (``smoke``, ``quick``, ``paper``) as
overrides and a number of repetitions. A fourth tier, ``verify``, is derived: the
paper tier's settings and repetitions on exactly the cells the claims read (the
``cells:`` of the claims registry), no figure's whole sweep; a figure no claim
reads has no run in it. A figure may instead be drawn from another
figure's combined dataset (``data: <figure>``). From that, :class:`WorkflowConfig`
derives every :class:`~tcprepro.campaign.runs.Run` of a figure for a tier.
Snakemake rules and the ``tcprepro`` CLI both call these functions, so a path or a
key is computed in exactly one place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from tcprepro.campaign.batches import DEFAULT_BATCH_S, Batch, make_batches
from tcprepro.campaign.runs import Run, _paths, cell_name, pending_reason
from tcprepro.errors import ConfigError
from tcprepro.quoting import fill
from tcprepro.scenario import Scenario
from tcprepro.scenario_io import Override, load_scenario
from tcprepro.testbeds import WhatIf, load_knob_traces, load_profile
from tcprepro.yamlfile import load_yaml

__all__ = ["TIERS", "WorkflowConfig", "load_workflow_config", "validate_workflow_config"]

TIERS = ("smoke", "quick", "paper", "verify")
#: the testbed profiles, whose what-if runs a verify build may make (``whatif:``)
TESTBEDS_DIR = Path("workflow/testbeds")
#: the knob traces (what-ifs that set a profile's knobs back), beside the profiles' folder
KNOB_TRACES = "knob-traces.yaml"
#: a what-if run's cell name: its cell's, then this and the what-if's id
WHATIF_MARK = "_whatif-"
#: the tier whose settings (durations, repetitions) the verify tier runs
VERIFY_SETTINGS = "paper"
SCHEMA_PATH = Path("workflow/schemas/config.schema.yaml")


def _same(sweep_value: Any, value: Any) -> bool:
    """A registry value names this sweep value (numbers compared as numbers)."""
    if isinstance(sweep_value, bool) or isinstance(value, bool):
        return sweep_value is value
    if isinstance(sweep_value, (int, float)) and isinstance(value, (int, float)):
        return bool(abs(sweep_value - value) <= 1e-12 * max(abs(sweep_value), abs(value), 1e-300))
    return str(sweep_value) == str(value)


@dataclass(frozen=True)
class WorkflowConfig:
    """The validated workflow config (``workflow/config.yaml``)."""

    data: Mapping[str, Any]
    _runs: dict[tuple[str, str], list[Run]] = field(default_factory=dict, repr=False, compare=False)
    _files: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    _claim_cells: dict[tuple[str, tuple[str, ...] | None], list[dict[str, Any]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # not an __init__ argument: a replace()d config (another what-if) starts without batches
    _batches: dict[tuple[str, str], list[Batch]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def derived(self, name: str, compute: Callable[[], Any]) -> Any:
        """A value computed once from this config, by ``name``.

        The plan's calibrations and emulated jobs.
        """
        if name not in self._derived:
            self._derived[name] = compute()
        return self._derived[name]

    @property
    def tier(self) -> str:
        """Tier selected by the config (profiles override it)."""
        return str(self.data.get("tier", "quick"))

    @property
    def verify_claims(self) -> list[str] | None:
        """Claim ids the verify tier is restricted to (``verify_claims:``; None: every claim).

        An id the claims registry does not have is a ConfigError naming it.
        """
        wanted = self.data.get("verify_claims")
        if not wanted:
            return None
        from tcprepro.claims import load_registry

        known = {claim.id for claim in load_registry()}
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise ConfigError(
                f"verify_claims: no claim {', '.join(map(str, unknown))} in the claims registry"
            )
        return [str(c) for c in wanted]

    @property
    def whatif(self) -> str | None:
        """The what-if a verify build runs (``whatif:``, an id of a testbed profile), or None."""
        value = self.data.get("whatif")
        return str(value) if value else None

    def what_if(self, whatif: str | None = None) -> WhatIf:
        """A testbed profile's what-if entry by id (default: this build's).

        Raises
        ------
        ConfigError
            When no profile of ``workflow/testbeds/`` has it, listing those that exist.
        """
        wanted = whatif or self.whatif
        entries = what_ifs()
        if wanted not in entries:
            raise ConfigError(
                f"whatif: no what-if {wanted!r} in {TESTBEDS_DIR}; known: {', '.join(entries)}"
            )
        return entries[wanted]

    def _verify_claim_ids(self) -> list[str] | None:
        """The claims whose cells a verify build runs: ``verify_claims``, then the what-if's."""
        claims = self.verify_claims
        if self.whatif is None:
            return claims
        own = self.what_if().claims
        return [c for c in own if claims is None or c in claims]

    @property
    def figures(self) -> list[str]:
        """Figure ids in config order."""
        return list(self.data["figures"])

    def figure(self, figure: str) -> Mapping[str, Any]:
        """The config block of one figure."""
        try:
            return self.data["figures"][figure]
        except KeyError:
            known = ", ".join(self.figures)
            raise ConfigError(f"figures: no figure {figure!r}; known: {known}") from None

    def source(self, figure: str) -> str:
        """Figure whose combined dataset ``figure`` draws: its ``data:`` or itself."""
        return str(self.figure(figure).get("data", figure))

    @property
    def simulated_figures(self) -> list[str]:
        """Figures that have runs of their own (not ``data:`` views of another)."""
        return [f for f in self.figures if "data" not in self.figure(f)]

    @property
    def combined_dir(self) -> str:
        """Where the combined datasets go: ``data/combined``, a what-if build's apart."""
        return "data/combined" + (f"/whatif/{self.whatif}" if self.whatif else "")

    def combined_path(self, figure: str) -> str:
        """Combined dataset a figure's notebook reads (emulated-only figures: the emulated one)."""
        source = self.source(figure)
        if "ns3" not in self.backends(source):
            return f"{self.combined_dir}/emulated/{source}.nc"
        return f"{self.combined_dir}/{source}.nc"

    def crosschecked(self, figure: str) -> bool:
        """True for a figure run by both backends and compared (X1): ns-3 and mininet."""
        return {"ns3", "mininet"} <= set(self.backends(figure))

    def outputs(self, figure: str) -> list[str]:
        """What a figure's notebook produces for the paper: "figure" and/or "table"."""
        return list(self.figure(figure).get("outputs", ["figure"]))

    def paper_files(self, kind: str) -> list[str]:
        """Paths of every figure PDF (``kind="figure"``) or table (``"table"``) of the paper."""
        pattern = {"figure": "paper/figures/{}.pdf", "table": "paper/generated/{}.tex"}[kind]
        return [pattern.format(f) for f in self.figures if kind in self.outputs(f)]

    def studies(self) -> list[str]:
        """Studies that have at least one figure, in config order."""
        seen: list[str] = []
        for figure in self.figures:
            study = self.figure(figure)["study"]
            if study not in seen:
                seen.append(study)
        return seen

    def figures_of(self, study: str) -> list[str]:
        """Figure ids of one study."""
        return [f for f in self.figures if self.figure(f)["study"] == study]

    def tier_settings(self, figure: str, tier: str | None = None) -> Mapping[str, Any]:
        """The tier block (repetitions, set, values) of a figure: its own, else its study's."""
        tier = tier or self.tier
        if tier not in TIERS:
            raise ConfigError(f"tier: {tier!r} is not one of {', '.join(TIERS)}")
        if tier == "verify":  # the paper's settings; the cells come from the claims
            settings = self.tier_settings(figure, VERIFY_SETTINGS)
            return {k: v for k, v in settings.items() if k != "values"}
        block = self.figure(figure)
        if "tiers" in block:
            return block["tiers"][tier]
        study = block["study"]
        try:
            return self.data["studies"][study]["tiers"][tier]
        except KeyError:
            raise ConfigError(f"studies.{study}.tiers.{tier}: missing") from None

    # ---- sweep dimensions given as named cases ----

    def cell_settings(self, figure: str, cell: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """(scenario key path, value) pairs that make one cell of a figure's sweep.

        A dimension with ``path`` sets that path to the cell's value; a dimension
        with ``cases`` applies every override of the named case.
        """
        sweep = self.figure(figure).get("sweep", {})
        settings: list[tuple[str, Any]] = []
        for dim, value in cell.items():
            spec = sweep[dim]
            if "cases" in spec:
                settings += list(spec["cases"][value].items())
            else:
                settings += [(path, value) for path in _paths(spec)]
        return settings

    def sweep_values(self, figure: str, tier: str | None = None) -> dict[str, list[Any]]:
        """Values of each swept dimension for a tier (a tier may narrow them).

        The values of a dimension given as ``cases`` are the case names.
        """
        if "data" in self.figure(figure):
            return {}
        sweep = self.figure(figure).get("sweep", {})
        if (tier or self.tier) == "verify":
            cells = self.claim_cells(figure, self._verify_claim_ids())
            return {
                dim: [v for v in self._all_values(figure, dim) if any(c[dim] == v for c in cells)]
                for dim in sweep
            }
        narrowed = self.tier_settings(figure, tier).get("values", {})
        out: dict[str, list[Any]] = {}
        for dim, spec in sweep.items():
            values = list(spec["cases"]) if "cases" in spec else list(spec["values"])
            if dim in narrowed:
                extra = [v for v in narrowed[dim] if v not in values]
                if extra:
                    raise ConfigError(
                        f"studies tier values for {figure}.{dim}: {extra} not among {values}"
                    )
                values = list(narrowed[dim])
            out[dim] = values
        for dim in narrowed:
            if dim not in sweep:
                raise ConfigError(f"tier values name {dim!r}, which {figure} does not sweep")
        return out

    def _all_values(self, figure: str, dim: str) -> list[Any]:
        """Every value of one swept dimension of a figure (case names for cases)."""
        spec = self.figure(figure)["sweep"][dim]
        return list(spec["cases"]) if "cases" in spec else list(spec["values"])

    def claim_cells(self, figure: str, claims: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """The cells of a figure the claims registry's claims read, in sweep order.

        ``claims`` restricts them to those claim ids. Each registry value is matched to
        the sweep value it names (numbers compared as numbers); a value or dimension the
        sweep does not have is a ConfigError.
        """
        key = (figure, None if claims is None else tuple(sorted(claims)))
        if key not in self._claim_cells:
            from tcprepro.claims import load_registry
            from tcprepro.claims.cells import claim_cells

            sweep = self.figure(figure).get("sweep", {})
            found: list[dict[str, Any]] = []
            for claim in load_registry():
                if claims is not None and claim.id not in set(claims):
                    continue
                for cell in claim_cells(claim.cells).get(figure, []):
                    if list(cell) != list(sweep):
                        raise ConfigError(
                            f"claims registry, {claim.id}: cells of {figure} must give "
                            f"{list(sweep)}, not {list(cell)}"
                        )
                    matched = {}
                    for dim, value in cell.items():
                        hits = [v for v in self._all_values(figure, dim) if _same(v, value)]
                        if not hits:
                            raise ConfigError(
                                f"claims registry, {claim.id}: {figure}.{dim} has no value "
                                f"{value!r}"
                            )
                        matched[dim] = hits[0]
                    if matched not in found:
                        found.append(matched)
            order = {
                dim: {v: i for i, v in enumerate(map(str, self._all_values(figure, dim)))}
                for dim in sweep
            }
            found.sort(key=lambda c: [order[d][str(v)] for d, v in c.items()])
            self._claim_cells[key] = found
        return [dict(c) for c in self._claim_cells[key]]

    def twins(self, study: str | None = None) -> dict[str, str]:
        """The emulated twins that judge the claims of ``study`` (all if None): twin -> as.

        Each claims-registry ``emulated.figure`` must be a figure of this config, of the
        claim's study, run by both backends (``backends: [ns3, mininet]``), and sweep every
        cell the claim reads of the figure ``as`` (same dimensions, each value one of its
        own, but for the values the entry's ``absent`` states the twin cannot run);
        anything else is a ConfigError naming the claim.
        """
        from tcprepro.claims import load_registry
        from tcprepro.claims.cells import claim_cells

        out: dict[str, str] = {}
        for claim in load_registry():
            if claim.twin is None or (study is not None and claim.study != study):
                continue
            twin, source = claim.twin
            where = f"claims registry, {claim.id}: emulated twin {twin}"
            if twin not in self.figures:
                raise ConfigError(f"{where} is no figure of the workflow config")
            if self.figure(twin)["study"] != claim.study:
                raise ConfigError(f"{where} is a figure of study {self.figure(twin)['study']}")
            if not self.crosschecked(twin):
                raise ConfigError(f"{where} is not run by both backends (ns3, mininet)")
            sweep = self.figure(twin).get("sweep", {})
            absent = claim.emulated.get("absent", {})
            slices = claim.twin_slices or {source: {}}
            for figure, selection in slices.items():
                for dim, value in selection.items():
                    if not any(_same(v, value) for v in self._all_values(twin, dim)):
                        raise ConfigError(f"{where} has no cell with {dim} = {value!r}")
                for cell in claim_cells(claim.cells).get(figure, []):
                    wanted = [d for d in sweep if d not in selection]
                    if list(cell) != wanted:
                        raise ConfigError(
                            f"{where} sweeps {wanted} for {figure}, the claim's cells of "
                            f"{figure} {list(cell)}"
                        )
                    for dim, value in cell.items():
                        if any(_same(v, value) for v in absent.get(dim, ())):
                            continue  # stated: the twin cannot run it (counted as not run)
                        if not any(_same(v, value) for v in self._all_values(twin, dim)):
                            raise ConfigError(f"{where} has no cell with {dim} = {value!r}")
            if claim.twin_slices:  # slices of its sweep: it stands for each figure named
                named = [*out.get(twin, "").split(", "), *claim.twin_slices]
                out[twin] = ", ".join(sorted({n for n in named if n}))
                continue
            if out.get(twin, source) != source:
                raise ConfigError(f"{where} stands for {out[twin]} in another claim")
            out[twin] = source
        return out

    def cells(self, figure: str, tier: str | None = None) -> list[dict[str, Any]]:
        """Every cell (one value per swept dimension) of a figure, pending ones included.

        The verify tier's cells are those the claims read (:meth:`claim_cells`).
        """
        if (tier or self.tier) == "verify":
            if "data" in self.figure(figure):
                return []
            return self.claim_cells(figure, self._verify_claim_ids())
        values = self.sweep_values(figure, tier)
        return [dict(zip(values, combo, strict=True)) for combo in product(*values.values())]

    def pending_cells(
        self, figure: str, tier: str | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        """Cells that cannot run yet, with the reason."""
        out = []
        for cell in self.cells(figure, tier):
            values = [*cell.values(), *(v for _, v in self.cell_settings(figure, cell))]
            reasons = sorted({r for r in map(pending_reason, values) if r})
            if reasons:
                out.append((cell, "; ".join(reasons)))
        return out

    def runs(self, figure: str, tier: str | None = None, backend: str = "ns3") -> list[Run]:
        """Every run of a figure for a tier (pending cells excluded; none for data views).

        ``backend="mininet"`` gives the emulated runs of a figure whose
        ``backends`` list it (same cells and settings, other output paths).
        """
        if "data" in self.figure(figure):
            return []
        key = (figure, tier or self.tier)
        if key not in self._runs:
            self._runs[key] = self._make_runs(figure, tier)
        runs = list(self._runs[key])
        if backend not in self.backends(figure):
            return []  # e.g. no ns-3 runs for an emulated-only figure (backends: [mininet])
        if backend == "ns3":
            return runs
        return [replace(run, backend=backend) for run in runs]

    @property
    def simulate_batch_s(self) -> float:
        """Estimated core seconds of simulation per batch job (``simulate_batch_s``)."""
        return float(self.data.get("simulate_batch_s", DEFAULT_BATCH_S))

    def batches(self, figure: str, tier: str | None = None) -> list[Batch]:
        """The figure's ns-3 runs in batch jobs (:mod:`tcprepro.campaign.batches`)."""
        key = (figure, tier or self.tier)
        if key not in self._batches:
            self._batches[key] = self.group_runs(figure, self.runs(figure, tier))
        return list(self._batches[key])

    def group_runs(self, figure: str, runs: Sequence[Run]) -> list[Batch]:
        """``runs`` of a figure in batch jobs, as a build of exactly those runs groups them.

        By the cost model (:func:`tcprepro.campaign.cost.estimate_wall_s`).
        """
        from tcprepro.campaign.cost import estimate_wall_s

        return make_batches(figure, runs, lambda run: estimate_wall_s([run]), self.simulate_batch_s)

    def batch(self, figure: str, name: str, tier: str | None = None) -> Batch:
        """One batch of a figure by its name (``b0``); a ConfigError naming the known ones."""
        found = {batch.name: batch for batch in self.batches(figure, tier)}
        if name not in found:
            raise ConfigError(
                f"{figure} has no batch {name} in tier {tier or self.tier} "
                f"(it has {', '.join(found) or 'none'})"
            )
        return found[name]

    def backends(self, figure: str) -> list[str]:
        """Backends a figure's runs use (``ns3`` unless its block lists ``backends``).

        A data view (``data:``) has the backends of the figure it draws.
        """
        block = self.figure(figure)
        if "data" in block:
            return self.backends(str(block["data"]))
        return list(block.get("backends", ["ns3"]))

    def base_overrides(self, figure: str, tier: str | None = None) -> list[Override]:
        """Overrides every run of a figure in a tier starts from, before its cell's.

        The figure's ``set``, its tier's ``set`` and the tier's repetitions, in that order.
        """
        settings = self.tier_settings(figure, tier)
        base: list[Override] = list(self.figure(figure).get("set", {}).items())
        base += list(settings.get("set", {}).items())
        base.append(("repetitions", int(settings["repetitions"])))
        return base

    def _make_runs(self, figure: str, tier: str | None) -> list[Run]:
        block = self.figure(figure)
        base = self.base_overrides(figure, tier)
        repetitions = int(self.tier_settings(figure, tier)["repetitions"])
        values_json = json.dumps(self.sweep_values(figure, tier))
        pending = [cell for cell, _ in self.pending_cells(figure, tier)]
        whatif = self.what_if() if (tier or self.tier) == "verify" and self.whatif else None
        if whatif is not None and whatif.repetitions is not None:
            repetitions = min(repetitions, whatif.repetitions)
            base = [item for item in base if item[0] != "repetitions"]
            base.append(("repetitions", repetitions))
        runs = []
        for cell in self.cells(figure, tier):
            if cell in pending:
                continue
            overrides = [*base, *self.cell_settings(figure, cell)]
            name = cell_name(cell)
            if whatif is not None:
                scenario = load_scenario(block["scenario"], overrides)
                if not whatif.applies_to(scenario):
                    continue
                overrides += list(whatif.set.items())
                name += WHATIF_MARK + whatif.id
            for rep in range(repetitions):
                runs.append(
                    Run(
                        figure=figure,
                        cell=name,
                        sweep=tuple(cell.items()),
                        rep=rep,
                        scenario_path=str(block["scenario"]),
                        overrides=tuple(overrides),
                        sweep_values=values_json,
                    )
                )
        return runs

    def run(self, figure: str, cell: str, rep: int, tier: str | None = None) -> Run:
        """Find one run by figure, cell name and repetition.

        A what-if run's cell name carries its what-if (``..._whatif-<id>``): it is found
        whatever this config's ``whatif:`` says (a Snakemake job's command passes none).
        """
        marked = cell.partition(WHATIF_MARK)[2]
        if marked and marked != self.whatif:
            return replace(self, data={**self.data, "whatif": marked}, _runs={}).run(
                figure, cell, rep, tier
            )
        for candidate in self.runs(figure, tier):
            if candidate.cell == cell and candidate.rep == rep:
                return candidate
        raise ConfigError(f"{figure} has no run {cell}/rep{rep} in tier {tier or self.tier}")

    def figure_scenario(self, figure: str, tier: str | None = None) -> Scenario:
        """The scenario a figure's runs share in a tier (what its caption quotes).

        That of its first run (a data view: of the figure it draws); without runs, its
        scenario file with the figure's and the tier's ``set``.
        """
        source = self.source(figure)
        backends = self.backends(source)
        runs = [run for backend in backends for run in self.runs(source, tier, backend)]
        if runs:
            return runs[0].scenario()
        block = self.figure(source)
        settings = self.tier_settings(source, tier)
        overrides = [*block.get("set", {}).items(), *settings.get("set", {}).items()]
        return load_scenario(block["scenario"], overrides)

    def caption(self, figure: str, tier: str | None = None) -> str:
        """A figure's caption, its ``[[path]]`` quotes filled from :meth:`figure_scenario`."""
        template = str(self.figure(figure).get("caption", ""))
        if "[[" not in template:
            return template
        return fill(template, self.figure_scenario(figure, tier))

    def scenario_files(self, figure: str) -> list[str]:
        """The figure's scenario file and every ``base:`` file under it."""
        if "data" in self.figure(figure):
            return []
        if figure not in self._files:  # asked once per simulation job: read the chain once
            files: list[str] = []
            path: Path | None = Path(self.figure(figure)["scenario"])
            while path is not None and str(path) not in files:
                files.append(str(path))
                base = load_yaml(path.read_text()).get("base")
                path = path.parent / base if base else None
            self._files[figure] = files
        return list(self._files[figure])

    def check(self, tier: str | None = None, figures: Iterable[str] | None = None) -> None:
        """Validate every run's scenario of a tier (raises ConfigError naming the figure)."""
        for figure in self.figures if figures is None else figures:
            runs = [
                run for backend in self.backends(figure) for run in self.runs(figure, tier, backend)
            ]
            for run in runs:
                try:
                    run.scenario()
                except ConfigError as exc:
                    raise ConfigError(f"figure {figure}, cell {run.cell}: {exc}") from None


def what_ifs(folder: Path = TESTBEDS_DIR) -> dict[str, WhatIf]:
    """Every what-if of the testbed profiles in ``folder``, by id, then the knob traces.

    The knob traces (``knob-traces.yaml`` beside ``folder``) are what-ifs ``knob-<id>``.
    """
    entries: dict[str, WhatIf] = {}
    traces_file = folder.parent / KNOB_TRACES
    found = [(path, load_profile(path).what_if) for path in sorted(folder.glob("*.yaml"))]
    found.append((traces_file, load_knob_traces(traces_file, folder)))
    for path, what_if in found:
        for entry in what_if:
            if entry.id in entries:
                raise ConfigError(f"what_if: {entry.id!r} is defined twice", str(path))
            entries[entry.id] = entry
    return entries


def load_workflow_config(
    path: str | Path = "workflow/config.yaml", overrides: Mapping[str, Any] | None = None
) -> WorkflowConfig:
    """Read and validate the workflow config against its JSON schema."""
    path = Path(path)
    try:
        data = load_yaml(path.read_text())
    except FileNotFoundError:
        raise ConfigError("file not found", str(path)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", str(path)) from None
    data = {**(data or {}), **dict(overrides or {})}
    return validate_workflow_config(data, path.parent / "schemas" / "config.schema.yaml", str(path))


def validate_workflow_config(
    data: Mapping[str, Any], schema_path: str | Path, source: str = "workflow config"
) -> WorkflowConfig:
    """Validate an already-loaded workflow config (as Snakemake holds it)."""
    from tcprepro import skip_iri_grammars

    skip_iri_grammars()
    import jsonschema

    schema = load_yaml(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(dict(data)), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: {error.message}", source)
    figures = data["figures"]
    for figure, block in figures.items():  # a data view draws a simulated figure of its study
        target = block.get("data")
        if target is None:
            continue
        if target not in figures or "data" in figures[target]:
            raise ConfigError(
                f"figures.{figure}.data: {target!r} must be a figure with runs of its own", source
            )
        if block.get("study") != figures[target].get("study"):
            raise ConfigError(f"figures.{figure}.data: {target!r} is in another study", source)
    for figure, block in figures.items():  # the views a twin compares: known ones only
        views = block.get("crosscheck", {}).get("views")
        if views is None:
            continue
        from tcprepro.analysis.crosscheck import check_views

        try:
            check_views(views)
        except ValueError as error:
            raise ConfigError(f"figures.{figure}.{error}", source) from None
    return WorkflowConfig(dict(data))
