"""The claims registry and checker.

This package owns the list of the papers' claims (``registry.yaml``: id, text,
paper value, tolerance, the function that computes the reproduced value and
the figures it reads) and the checker that evaluates them against combined
datasets, producing one :class:`ClaimResult` per claim: the reproduced value,
a verdict and the coverage (how many of the claim's cells could be computed).

Verdicts
--------
``reproduced``
    the reproduced value meets the stated tolerance on every available cell;
``not reproduced``
    it does not (the result is reported, never tuned away);
``inconclusive``
    the runs at hand cannot decide: they miss one of the claim's *regime criteria*
    (stated in the registry before any run, see :mod:`tcprepro.claims.regime`), e.g.
    no loss in the measured window of a loss-driven claim; the unmet criterion is
    given as the "why";
``not run``
    nothing the claim reads ran in this build: none of its cells, a figure this tier
    does not run, or (second verdict) its emulated twin not in this build;
``pending``
    the claim cannot be checked until a model it needs is built (``check: pending``
    in the registry).

Each word has one meaning, defined in :mod:`tcprepro.claims.glossary` (the report's
glossary).

Every verdict carries its coverage: the claim's cells (``cells:`` in the registry)
that ran, "k of n cells" (e.g. the Compound cells before the Compound model, or a
tier that runs part of a sweep). With two or more repetitions, the check is
repeated on bootstrap resamples of the repetitions: the verdict is *robust* when
at least 97.5 % of the resamples give it (the 95 % interval does not cross the
tolerance), *fragile* otherwise; the check's headline number (its *statistic*)
gets its 95 % bootstrap interval. Every claim not reproduced gets a "why":
its explainer's account of the traces, else the regime measures of its cells.

Two verdicts: ns-3 and emulated Linux
-------------------------------------
A claim whose registry entry names an *emulated twin* (``emulated: {figure: X3, as:
D1, reason: ...}``: a cross-check figure run with real Linux TCP on the cells of the
figure ``as``) is judged a second time on that twin's emulated combined dataset
(``data/combined/emulated/<figure>.nc``): the same check, regime criteria and
coverage, the claim's cells and arguments naming the twin instead of ``as`` (the
entry's ``args`` override some of them). That second verdict
(:attr:`ClaimResult.emulated`) is ``not run`` when the build has no emulated runs
("not emulated in this build"). An entry without ``figure`` states why no twin can
judge the claim. :func:`twin_claim` gives the claim as its twin judges it.

Trace figures
-------------
Each claim not reproduced or inconclusive also names the run its "why" rests on
(:attr:`ClaimResult.trace`, a :class:`~tcprepro.claims.regime.TracedRun`): for an
inconclusive claim, the run its first unmet regime criterion names; for one not
reproduced, the first of its explainer's cells (``explain_args: cells``) that ran, else
the first of its ``cells:`` that ran. :func:`write_why_figures` draws the windows, queue
and losses of that run (:func:`tcprepro.figures.why.run_trace`) and :func:`write_tex`
sets each figure under its claim's "why".
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from itertools import product
from math import prod
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr
import yaml

from tcprepro.claims.glossary import span
from tcprepro.latex import atomic_write
from tcprepro.latex import escape as tex

if TYPE_CHECKING:
    from tcprepro.claims.cells import TracedRun

__all__ = [
    "UNDECIDED",
    "VERDICT_COLOURS",
    "Claim",
    "ClaimResult",
    "Margin",
    "WhyFigure",
    "backend_label",
    "check",
    "check_claims",
    "format_table",
    "load_registry",
    "reading_rules",
    "twin_claim",
    "write_csv",
    "write_tex",
    "write_why_figures",
]

VERDICTS = ("reproduced", "not reproduced", "inconclusive", "not run", "pending")
#: verdicts that decide nothing: nothing the claim reads ran, or its model is not built
UNDECIDED = ("not run", "pending")
#: colour of each verdict in the claims tables and the report (xcolor dvipsnames)
VERDICT_COLOURS = {
    "reproduced": "ForestGreen",
    "not reproduced": "BrickRed",
    "inconclusive": "BurntOrange",
    "not run": "gray",
    "pending": "Plum",
}
#: resamples of the repetitions per claim (all of them when there are fewer)
BOOTSTRAP_RESAMPLES = 100
#: a verdict is fragile when more than this share of the resamples disagree with it
FRAGILE_SHARE = 0.025
CHECKS: dict[str, Callable[..., ClaimResult]] = {}
EXPLAINERS: dict[str, Callable[..., str]] = {}


@dataclass(frozen=True)
class Claim:
    """One registry entry."""

    id: str
    study: str
    text: str
    paper: str
    tolerance: str
    check: str
    #: the paper's words (verbatim, original language; a tuple when several sentences)
    quote: str | tuple[str, ...] = ""
    translation: str | tuple[str, ...] = ""
    #: the paper's figure or table the sentence reads, and the metric it shows
    source: str = ""
    metric: str = ""
    #: the seed text (../shared/seeds) the quote is in
    seed: str = ""
    #: the rules of the reading guide the tolerance applies (readings.yaml)
    rules: tuple[str, ...] = ()
    args: Mapping[str, Any] = field(default_factory=dict)
    requires: tuple[str, ...] = ()
    pending: str = ""
    #: function (registered with @explainer) that explains a disagreement from the data
    explain: str = ""
    explain_args: Mapping[str, Any] = field(default_factory=dict)
    #: the cells the claim reads, per figure (see tcprepro.claims.regime)
    cells: tuple[Mapping[str, Any], ...] = ()
    #: what its runs must show to decide it (see tcprepro.claims.regime)
    regime: Mapping[str, Any] = field(default_factory=dict)
    #: the emulated twin that judges it a second time (figure, as, args, reason), or
    #: only the reason no twin can (see :func:`twin_claim`)
    emulated: Mapping[str, Any] = field(default_factory=dict)
    #: a known departure of a model the claim reads from the published algorithm, shown
    #: with every verdict of the claim (the departure itself is documented in docs/)
    model_caveat: str = ""

    @property
    def twin(self) -> tuple[str, str] | None:
        """(emulated figure, the figure(s) whose cells it runs), or None without a twin.

        A twin that runs several figures' cells as slices of one sweep (X1 for A1 and A2,
        by its uplink buffer) names them all: ``"A1, A2"`` (:attr:`twin_slices`).
        """
        if "figure" not in self.emulated:
            return None
        source = self.emulated["as"]
        named = ", ".join(source) if isinstance(source, Mapping) else str(source)
        return str(self.emulated["figure"]), named

    @property
    def twin_slices(self) -> dict[str, dict[str, Any]]:
        """Figure -> the twin's cells that stand for it (``as: {A1: {buffer: 40}}``).

        Empty when the twin stands for one figure whole.
        """
        source = self.emulated.get("as")
        return {str(k): dict(v) for k, v in source.items()} if isinstance(source, Mapping) else {}


#: a value outside a one-sided tolerance by more than this share of its bound is "far from" it
FAR_SHARE_ONE_SIDED = 0.25
#: ... outside a two-sided tolerance by more than this share of its width
FAR_SHARE_TWO_SIDED = 0.5


@dataclass(frozen=True)
class Margin:
    """A check's headline value against the bounds of its tolerance (None: unbounded side).

    :attr:`distance` is positive inside the tolerance, negative outside; :attr:`reading`
    says where the value stands (the glossary's "reading": meets, misses, far from).
    """

    name: str
    value: float
    low: float | None = None
    high: float | None = None

    @property
    def distance(self) -> float:
        """Distance to the nearest bound: positive inside, negative outside."""
        sides = [self.value - self.low] if self.low is not None else []
        sides += [self.high - self.value] if self.high is not None else []
        return min(sides) if sides else float("nan")

    @property
    def scale(self) -> float:
        """How far outside counts as far: half a two-sided width, a quarter of one bound."""
        if self.low is not None and self.high is not None:
            return FAR_SHARE_TWO_SIDED * (self.high - self.low)
        bound = self.low if self.low is not None else self.high
        return FAR_SHARE_ONE_SIDED * abs(bound or 0.0)

    @property
    def reading(self) -> str:
        """``meets``, ``misses`` or ``far from`` (the tolerance)."""
        if not np.isfinite(self.distance):
            return ""
        if self.distance >= 0:
            return "meets"
        return "misses" if -self.distance <= self.scale else "far from"

    def tolerance_text(self) -> str:
        """``"30 to 50"``, ``">= 90"`` or ``"<= 30"``."""
        if self.low is not None and self.high is not None:
            return span(self.low, self.high, "{:.3g}", " to ")
        if self.low is not None:
            return f">= {self.low:.3g}"
        return f"<= {self.high:.3g}"

    def text(self) -> str:
        """``"phi (%) 19 against 30 to 50: margin -11"``."""
        return (
            f"{self.name} {self.value:.3g} against {self.tolerance_text()}: margin "
            f"{self.distance:+.3g}"
        )


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of checking one claim."""

    value: str
    verdict: str
    coverage: str = ""
    claim: Claim | None = None
    #: why: for a claim not reproduced, what the traces show (computed from the data);
    #: for an inconclusive one, the regime criteria its runs miss
    explanation: str = ""
    #: the check's headline number and what it is (bootstrapped over repetitions)
    statistic: tuple[str, float] | None = None
    #: "k of n cells" of the claim's cells that ran
    cells: str = ""
    #: robust / fragile over bootstrap resamples of the repetitions, with the interval
    confidence: str = ""
    #: the run the "why" rests on (not reproduced or inconclusive; None if none ran)
    trace: TracedRun | None = None
    #: what judged it when not ns-3 (e.g. "Linux (UML)"); empty for ns-3
    backend: str = ""
    #: the second verdict, on the claim's emulated twin (None: the claim has no twin)
    emulated: ClaimResult | None = None
    #: the bounds (low, high; None: open side) of the tolerance the statistic is held to
    bounds: tuple[float | None, float | None] | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def margin(self) -> Margin | None:
        """The statistic against its tolerance's bounds (None without both)."""
        if self.statistic is None or self.bounds is None or self.verdict in UNDECIDED:
            return None
        name, value = self.statistic
        return Margin(name, float(value), *self.bounds)

    @property
    def reading(self) -> str:
        """Next to an inconclusive or fragile verdict: ``"meets"``, ``"misses"``, ``"far from"``.

        Not a verdict: where the value stands while the runs miss the claim's regime.
        """
        margin = self.margin
        undecided = self.verdict == "inconclusive" or self.confidence.startswith("fragile")
        return margin.reading if margin is not None and undecided else ""

    def reading_text(self) -> str:
        """``"reading, not a verdict: misses the tolerance"`` (empty without a reading)."""
        return f"reading, not a verdict: {self.reading} the tolerance" if self.reading else ""


def check(func: Callable[..., ClaimResult]) -> Callable[..., ClaimResult]:
    """Register a check function under its name (used by ``check:`` in the registry)."""
    CHECKS[func.__name__] = func
    return func


def explainer(func: Callable[..., str]) -> Callable[..., str]:
    """Register a function explaining a disagreement (``explain:`` in the registry).

    It receives the datasets and the claim's ``explain_args`` and returns prose that
    quotes numbers computed from the traces (queue occupancy, losses, windows ...).
    """
    EXPLAINERS[func.__name__] = func
    return func


def _load_checks() -> None:
    """Import every ``study_*`` module of this package (they register their checks)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("study_"):
            importlib.import_module(f"{__name__}.{module.name}")


TWIN_KEYS = frozenset({"figure", "as", "args", "absent", "reason"})
#: what a twin's emulated dataset is called by its route (``emulation_route`` attribute)
ROUTE_LABELS = {"uml": "Linux (UML)", "native": "Linux (native)", "vm": "Linux (VM)"}
EMULATED_LABEL = "Linux (emulated)"
NOT_EMULATED = "not emulated in this build"


def _validate_twin(claim_id: str, requires: tuple[str, ...], block: Mapping[str, Any]) -> None:
    """Check the shape of an ``emulated:`` entry (its figures: :meth:`WorkflowConfig.twins`)."""
    if not block:
        return
    unknown = set(block) - TWIN_KEYS
    if unknown:
        raise ValueError(f"{claim_id}: unknown emulated keys {sorted(unknown)}")
    if not str(block.get("reason", "")).strip():
        raise ValueError(f"{claim_id}: emulated states its reason")
    if "figure" not in block:
        if {"as", "args", "absent"} & set(block):
            raise ValueError(
                f"{claim_id}: emulated.as, emulated.args and emulated.absent need emulated.figure"
            )
        return
    source = block.get("as")
    named = list(source) if isinstance(source, Mapping) else [source]
    if not named or any(f not in requires for f in named):
        raise ValueError(
            f"{claim_id}: emulated.as must be a figure the claim requires ({list(requires)}), "
            f"or a mapping of them to the twin's cells that stand for each, not {source!r}"
        )
    if isinstance(source, Mapping) and not all(isinstance(v, Mapping) for v in source.values()):
        raise ValueError(f"{claim_id}: emulated.as maps each figure to a mapping {{dim: value}}")
    if block["figure"] in named:
        raise ValueError(f"{claim_id}: emulated.figure must be another figure than its as")
    if not isinstance(block.get("args", {}), Mapping):
        raise ValueError(f"{claim_id}: emulated.args must be a mapping")
    absent = block.get("absent", {})
    if not isinstance(absent, Mapping) or not all(
        isinstance(v, (list, tuple)) for v in absent.values()
    ):
        raise ValueError(f"{claim_id}: emulated.absent must map a dimension to a list of values")


def twin_claim(claim: Claim) -> Claim | None:
    """The claim as its emulated twin judges it (None when it has no twin).

    The figure ``as`` is renamed to the twin figure wherever the claim names it (its
    cells, requirements, check and explainer arguments), then the entry's ``args``
    override the check's arguments (e.g. a check reading several backends' datasets
    reads only the twin's).
    """
    twin = claim.twin
    if twin is None:
        return None
    figure, source = twin
    if claim.twin_slices:  # the twin's slices stand for the figures: nothing to rename
        return replace(
            claim, args={**dict(claim.args), **dict(claim.emulated.get("args", {}))}, emulated={}
        )

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return figure if value == source else value
        if isinstance(value, (list, tuple)):
            return [rename(v) for v in value]
        if isinstance(value, Mapping):
            return {k: rename(v) for k, v in value.items()}
        return value

    cells = tuple(
        {**spec, "figure": figure if spec["figure"] == source else spec["figure"]}
        for spec in claim.cells
    )
    return replace(
        claim,
        args={**rename(dict(claim.args)), **dict(claim.emulated.get("args", {}))},
        requires=tuple(rename(list(claim.requires))),
        cells=cells,
        explain_args=rename(dict(claim.explain_args)),
        emulated={},
    )


def backend_label(ds: xr.Dataset) -> str:
    """``"Linux (UML)"`` for a dataset emulated on the UML route (by its ``emulation_route``)."""
    return ROUTE_LABELS.get(str(ds.attrs.get("emulation_route", "")), EMULATED_LABEL)


def reading_rules() -> dict[str, Mapping[str, str]]:
    """The reading guide (``readings.yaml``): each rule by id (R1 ...), in order."""
    text = resources.files(__package__).joinpath("readings.yaml").read_text()
    return {entry["id"]: entry for entry in yaml.safe_load(text)}


def load_registry(path: str | Path | None = None) -> list[Claim]:
    """Read the registry (the packaged ``registry.yaml`` by default, parsed once)."""
    if path is None:
        text = resources.files(__package__).joinpath("registry.yaml").read_text()
        return list(_parsed_registry(text))
    return list(_parsed_registry(Path(path).read_text()))


@functools.lru_cache(maxsize=4)
def _parsed_registry(text: str) -> tuple[Claim, ...]:
    """The claims of a registry's text (cached by the text: an edited file is read anew)."""
    from tcprepro.claims.cells import REGIME_KEYS, validate_claim_cells

    claims = []
    for entry in yaml.safe_load(text):
        entry = dict(entry)
        entry["requires"] = tuple(entry.get("requires", ()))
        entry["cells"] = tuple(entry.get("cells", ()))
        for key in ("quote", "translation"):
            if isinstance(entry.get(key), list):
                entry[key] = tuple(entry[key])
        entry["rules"] = tuple(entry.get("rules", ()))
        unknown_rules = sorted(set(entry["rules"]) - set(reading_rules()))
        if unknown_rules:
            raise ValueError(f"{entry['id']}: rules {unknown_rules} are not in the reading guide")
        validate_claim_cells(entry["id"], entry["cells"])
        _validate_twin(entry["id"], entry["requires"], entry.get("emulated", {}))
        unknown = set(entry.get("regime", {})) - REGIME_KEYS
        if unknown:
            raise ValueError(f"{entry['id']}: unknown regime criteria {sorted(unknown)}")
        claims.append(Claim(**entry))
    ids = [c.id for c in claims]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate claim ids in the registry")
    return tuple(claims)


def _resamples(
    datasets: Mapping[str, xr.Dataset], figures: Iterable[str], limit: int
) -> Iterator[dict[str, list[int]]]:
    """Bootstrap resamples of the repetitions of each figure that has two or more.

    Repetition r of every figure runs with seed r, so figures with as many repetitions
    share their draws (common random numbers): A3's and A4's repetition r carry the same
    planned transfers, which a check comparing them transfer by transfer pairs, and a
    resample keeps those pairs. Every ordered resample when there are at most ``limit``
    of them (2 repetitions: 4, 3 repetitions: 27), else ``limit`` drawn with a fixed seed.
    """
    reps = {f: datasets[f].sizes.get("rep", 1) for f in figures if f in datasets}
    reps = {f: n for f, n in reps.items() if n >= 2}
    if not reps or limit <= 0:
        return
    counts = sorted(set(reps.values()))
    if prod(n**n for n in counts) <= limit:
        choices = [list(product(range(n), repeat=n)) for n in counts]
        for combo in product(*choices):
            drawn = dict(zip(counts, combo, strict=True))
            yield {f: list(drawn[n]) for f, n in reps.items()}
        return
    rng = np.random.default_rng(0)
    for _ in range(limit):
        drawn = {n: [int(i) for i in rng.integers(0, n, n)] for n in counts}
        yield {f: list(drawn[n]) for f, n in reps.items()}


def _confidence(
    claim: Claim,
    func: Callable[..., ClaimResult],
    datasets: Mapping[str, xr.Dataset],
    point: ClaimResult,
    limit: int,
) -> str:
    """Robust or fragile over bootstrap resamples of the repetitions (see the module doc)."""
    if limit <= 0:
        return ""
    verdicts, values = [], []
    for resample in _resamples(datasets, claim.requires, limit):
        data = dict(datasets)
        for figure, index in resample.items():
            data[figure] = datasets[figure].isel(rep=index).assign_coords(rep=np.arange(len(index)))
        result = func(data, **claim.args)
        verdicts.append(result.verdict)
        if result.statistic is not None and np.isfinite(result.statistic[1]):
            values.append(result.statistic[1])
    if not verdicts:
        return "one repetition: no interval"
    agree = sum(v == point.verdict for v in verdicts)
    label = "fragile" if 1 - agree / len(verdicts) > FRAGILE_SHARE else "robust"
    text = f"{label}: {agree} of {len(verdicts)} resamples of the repetitions agree"
    if values and point.statistic is not None:
        low, high = np.percentile(values, [2.5, 97.5])
        name, value = point.statistic
        interval = span(low, high, "{:.3g}", " to ")
        text += f"; {name} {value:.3g} (95 % interval {interval})"
    return text


def _generic_why(claim: Claim, datasets: Mapping[str, xr.Dataset]) -> str:
    """What the regime measures of the claim's cells show (when no explainer speaks)."""
    from tcprepro.claims.cells import describe_cells

    return describe_cells(claim.cells, datasets)


#: tiers at the papers' own durations and repetitions: a claim is decided there (R14)
DECIDING_TIERS = ("verify", "paper")
#: regime criteria of statistics a scaled-down run may lack: they only apply below the
#: deciding tiers, where the papers' own set-up could fail them (R14)
SCALE_CRITERIA = ("min_loss_events", "min_rtts", "min_completed_transfers")


def tier_regime(regime: Mapping[str, Any], tier: str | None) -> dict[str, Any]:
    """The regime criteria a tier applies (reading rule R14).

    All of them below the papers' settings; at the verify and paper tiers only those that
    catch a failed run (a flow never past its first slow start). ``tier`` None: all (an
    unknown tier is not deciding).
    """
    if tier not in DECIDING_TIERS:
        return dict(regime)
    return {k: v for k, v in regime.items() if k not in SCALE_CRITERIA}


def _judge(
    claim: Claim,
    datasets: Mapping[str, xr.Dataset],
    resamples: int,
    tier: str | None = None,
    decide: str = "",
) -> ClaimResult:
    """One verdict of ``claim`` on ``datasets`` (see the module doc).

    ``tier``: the tier the runs are of (the regime it applies, :func:`tier_regime`);
    ``decide``: the command that decides the claim and its cost, named in an
    inconclusive verdict's "why" below the deciding tiers.
    """
    from tcprepro.claims.cells import cell_coverage, first_present_run, unmet_regime

    if claim.check == "pending":
        return ClaimResult("—", "pending", claim.pending or "its model is not built", claim)
    missing = [f for f in claim.requires if f not in datasets]
    if missing:
        reason = f"figure(s) {', '.join(missing)} not run in this build"
        return ClaimResult("—", "not run", reason, claim)
    cells = ""
    if claim.cells:
        coverage = cell_coverage(claim.cells, datasets)
        cells = coverage.text()
        if coverage.present == 0:
            return ClaimResult("—", "not run", "none of the claim's cells ran", claim, cells=cells)
    func = CHECKS[claim.check]
    result = replace(func(datasets, **claim.args), claim=claim, cells=cells)
    if result.verdict in UNDECIDED:
        return result
    regime = tier_regime(claim.regime, tier)
    unmet = unmet_regime(regime, claim.cells, datasets) if regime else []
    if unmet:
        why = "inconclusive at this tier: " + "; ".join(u.text for u in unmet)
        if decide and tier not in DECIDING_TIERS:
            why += f". Decided by {decide}"
        # the trace: the run the check names as failing, else the cells the claim's
        # explanation is about, else the run furthest from the regime
        explained = claim.explain_args.get("cells")
        trace = result.trace or (
            first_present_run(explained, datasets, "the first explained cell that ran")
            if explained
            else None
        )
        return replace(result, verdict="inconclusive", explanation=why, trace=trace or unmet[0].run)
    explanation, trace = "", None
    if result.verdict == "inconclusive":  # the check's own: a part with no run in its regime
        explanation = result.explanation
        trace = result.trace or first_present_run(
            claim.cells, datasets, "the claim's first cell that ran"
        )
    if result.verdict == "not reproduced":
        if claim.explain:
            explanation = EXPLAINERS[claim.explain](datasets, **claim.explain_args)
        if not explanation:
            explanation = _generic_why(claim, datasets)
        explained = claim.explain_args.get("cells")
        if explained:
            trace = first_present_run(explained, datasets, "the first explained cell that ran")
        if trace is None:
            trace = first_present_run(claim.cells, datasets, "the claim's first cell that ran")
    confidence = _confidence(claim, func, datasets, result, resamples)
    return replace(result, explanation=explanation, confidence=confidence, trace=trace)


def _check_twin_dataset(claim: Claim, figure: str, ds: xr.Dataset) -> None:
    """An emulated dataset fit to judge the twin ``claim`` (raises ValueError otherwise)."""
    backend = str(ds.attrs.get("backend", "ns3"))
    if backend == "ns3":
        raise ValueError(f"{claim.id}: the dataset given as {figure}'s emulated runs is ns-3's")
    named = ds.attrs.get("figure")
    if named is not None and str(named) != figure:
        raise ValueError(f"{claim.id}: the dataset given as {figure}'s emulated runs is {named}'s")
    for spec in claim.cells:
        if spec["figure"] != figure:
            continue
        absent = [dim for dim in spec if dim != "figure" and dim not in ds.dims]
        if absent:
            raise ValueError(
                f"{claim.id}: the emulated twin {figure} has no dimension "
                f"{', '.join(absent)} (its dimensions: {', '.join(map(str, ds.dims))})"
            )


def _judge_twin(
    claim: Claim,
    emulated: Mapping[str, xr.Dataset] | None,
    note: str,
    resamples: int,
    tier: str | None = None,
) -> ClaimResult | None:
    """The second verdict of ``claim``: on its emulated twin (None without a twin)."""
    twin = twin_claim(claim)
    if twin is None or claim.twin is None:
        return None
    figure = claim.twin[0]
    if emulated is None or figure not in emulated:
        why = note if emulated is None else f"{figure} has no emulated dataset in this build"
        return ClaimResult(
            "—", "not run", NOT_EMULATED, twin, explanation=why, backend=EMULATED_LABEL
        )
    ds = emulated[figure]
    slices = claim.twin_slices
    if slices:  # each figure the claim reads is a slice of the twin's sweep
        datasets = {}
        for name, selection in slices.items():
            missing = [dim for dim in selection if dim not in ds.dims]
            if missing:
                raise ValueError(f"{claim.id}: the emulated twin {figure} has no {missing}")
            values = {
                dim: ds[dim].values[ds[dim].values == value] for dim, value in selection.items()
            }
            if any(len(v) == 0 for v in values.values()):
                continue  # this build ran no cell of that slice
            part = ds.sel({dim: v[0] for dim, v in values.items()}, drop=True)
            _check_twin_dataset(twin, name, part.assign_attrs(figure=name))
            datasets[name] = part
        return replace(_judge(twin, datasets, resamples, tier), backend=backend_label(ds))
    _check_twin_dataset(twin, figure, ds)
    return replace(_judge(twin, {figure: ds}, resamples, tier), backend=backend_label(ds))


def check_claims(
    datasets: Mapping[str, xr.Dataset],
    study: str | None = None,
    registry: Iterable[Claim] | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    emulated: Mapping[str, xr.Dataset] | None = None,
    emulation_note: str = "",
    tier: str | None = None,
    decide: Mapping[str, str] | None = None,
) -> list[ClaimResult]:
    """Evaluate the claims of ``study`` (all studies if None) on combined datasets.

    Parameters
    ----------
    datasets
        Combined figure datasets by figure id (e.g. ``{"A1": ds1, "A2": ds2}``).
    resamples
        Bootstrap resamples of the repetitions per claim (0: no confidence computed).
    emulated
        The emulated combined datasets of the twins by figure id (``{"X3": ds}``): each
        claim with a twin gets its second verdict on them. None: this build has no
        emulated runs, and that verdict is "not run" ("not emulated in this build").
    emulation_note
        Why this build has no emulated runs (the second verdicts' "why" when
        ``emulated`` is None).
    tier
        The tier the datasets' runs are of: at the verify and paper tiers only a failed
        run leaves a claim undecided (:func:`tier_regime`); None applies every criterion.
    decide
        Per claim id, the command that decides the claim and its cost
        (:func:`tcprepro.campaign.plan.decide_commands`), named when it is inconclusive
        below those tiers.

    Raises
    ------
    ValueError
        When a twin's dataset is ns-3's, another figure's, or lacks a dimension of the
        claim's cells.
    """
    _load_checks()
    results = []
    for claim in registry if registry is not None else load_registry():
        if study is not None and claim.study != study:
            continue
        result = _judge(claim, datasets, resamples, tier, (decide or {}).get(claim.id, ""))
        second = _judge_twin(claim, emulated, emulation_note, resamples, tier)
        results.append(replace(result, emulated=second) if second is not None else result)
    return results


_COLUMNS = (
    "claim",
    "paper",
    "reproduced",
    "verdict",
    "cells",
    "confidence",
    "coverage",
    "margin",
    "reading",
)


def _rows(results: Iterable[ClaimResult]) -> list[dict[str, str]]:
    return [
        {
            "claim": r.claim.id if r.claim else "",
            "paper": r.claim.paper if r.claim else "",
            "reproduced": r.value,
            "verdict": r.verdict,
            "cells": r.cells,
            "confidence": r.confidence,
            "coverage": r.coverage,
            "margin": r.margin.text() if r.margin else "",
            "reading": r.reading_text(),
        }
        for r in results
    ]


#: the second verdict's columns (empty for a claim without emulated twin)
_EMULATED_COLUMNS = (
    "emulated_backend",
    "emulated_verdict",
    "emulated_value",
    "emulated_cells",
    "emulated_coverage",
    "emulated_explanation",
)


def _emulated_row(result: ClaimResult) -> dict[str, str]:
    second = result.emulated
    if second is None:
        return dict.fromkeys(_EMULATED_COLUMNS, "")
    return {
        "emulated_backend": second.backend,
        "emulated_verdict": second.verdict,
        "emulated_value": second.value,
        "emulated_cells": second.cells,
        "emulated_coverage": second.coverage,
        "emulated_explanation": second.explanation,
    }


def write_csv(results: Iterable[ClaimResult], path: str | Path) -> None:
    """Write the claims table as CSV (with the claim text, tolerance and second verdict)."""
    path = Path(path)
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer,
        fieldnames=[
            *_COLUMNS,
            "text",
            "tolerance",
            "explanation",
            *_EMULATED_COLUMNS,
            "model_caveat",
        ],
    )
    writer.writeheader()
    for result, row in zip(results := list(results), _rows(results), strict=True):
        claim = result.claim
        writer.writerow(
            {
                **row,
                "text": claim.text if claim else "",
                "tolerance": claim.tolerance if claim else "",
                "explanation": result.explanation,
                **_emulated_row(result),
                "model_caveat": claim.model_caveat if claim else "",
            }
        )
    atomic_write(path, buffer.getvalue())


def format_table(results: Iterable[ClaimResult]) -> str:
    """The claims as text for the terminal: one block per claim, nothing truncated."""
    import textwrap

    out = []
    for result in results:
        claim = result.claim
        name = claim.id if claim else "?"
        verdict = result.verdict.upper() + (f" on {result.cells}" if result.cells else "")
        out.append(f"{name:<7} {verdict}")
        for label, text in (
            ("paper", claim.paper if claim else ""),
            ("reproduced", result.value),
            ("margin", result.margin.text() if result.margin else ""),
            ("reading", result.reading_text()),
            ("coverage", result.coverage),
            ("confidence", result.confidence),
            ("why", result.explanation),
            ("model caveat", claim.model_caveat if claim else ""),
        ):
            if text:
                out += textwrap.wrap(
                    f"{label}: {text}",
                    width=100,
                    initial_indent=" " * 8,
                    subsequent_indent=" " * 10,
                )
        second = result.emulated
        if second is not None:
            verdict = second.verdict.upper() + (f" on {second.cells}" if second.cells else "")
            out.append(f"{'':<7} {second.backend}: {verdict}")
            for label, text in (
                ("reproduced", second.value),
                ("coverage", second.coverage),
                ("confidence", second.confidence),
                ("why", second.explanation),
            ):
                if text and text != "—":
                    out += textwrap.wrap(
                        f"{label}: {text}",
                        width=100,
                        initial_indent=" " * 10,
                        subsequent_indent=" " * 12,
                    )
    return "\n".join(out)


@dataclass(frozen=True)
class WhyFigure:
    """The trace figure of one claim's "why" (see :func:`write_why_figures`)."""

    claim: str
    path: Path
    #: the path LaTeX includes it by
    include: str
    #: its caption (plain text; escaped when written)
    caption: str


def write_why_figures(
    results: Iterable[ClaimResult],
    datasets: Mapping[str, xr.Dataset],
    directory: str | Path,
    include_root: str | Path | None = None,
) -> dict[str, WhyFigure]:
    """Draw the run behind the "why" of each claim not reproduced or inconclusive.

    One PDF per such claim whose run is in ``datasets`` (``<directory>/<claim>.pdf``,
    with what it drew beside it as ``<claim>.json``). The directory is written afresh:
    the figures are drawn into a temporary sibling that then replaces it, so a figure
    of a claim now reproduced does not linger, and a failed drawing leaves the old
    directory whole.

    Parameters
    ----------
    include_root
        The directory LaTeX resolves graphics paths from (the report's, ``paper``):
        each figure's include path is relative to it (else the path as given).

    Returns
    -------
    dict
        The figures by claim id.
    """
    import os
    import shutil

    from tcprepro.figures.common import drawn, save_figure
    from tcprepro.figures.why import run_trace

    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.with_name(f".{directory.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    out = {}
    try:
        for result in results:
            claim, run = result.claim, result.trace
            if claim is None or run is None or run.figure not in datasets:
                continue
            if result.verdict not in ("not reproduced", "inconclusive"):
                continue
            fig = run_trace(datasets[run.figure], run.cell, run.rep, run.flow)
            facts = drawn(fig)
            statements = " ".join(facts.statements) if facts else ""
            save_figure(fig, staging / f"{claim.id}.pdf")
            path = directory / f"{claim.id}.pdf"
            include = Path(os.path.relpath(path, include_root)) if include_root else path
            caption = f"The traces of {run.reason}. {statements}"
            out[claim.id] = WhyFigure(claim.id, path, include.as_posix(), caption)
        old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
        if directory.exists():
            os.replace(directory, old)
        os.replace(staging, directory)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def _why_item(result: ClaimResult, figure: WhyFigure | None) -> list[str]:
    """The description item of one claim: its "why", then its trace figure."""
    from tcprepro.figures.why import HEIGHT_IN  # its print height (its width: the list's)

    assert result.claim is not None
    lines = [rf"\item[{tex(result.claim.id)}] {tex(result.explanation)}"]
    if figure is not None:
        lines += [
            r"\par\nopagebreak\noindent\begin{minipage}{\linewidth}\centering"
            r"\captionsetup{type=figure}",
            rf"\includegraphics[width=\linewidth,height={HEIGHT_IN:g}in,keepaspectratio]"
            rf"{{{figure.include}}}",
            rf"\caption{{\textbf{{Why {tex(result.claim.id)}.}} {tex(figure.caption)}}}"
            rf"\label{{why:{result.claim.id}}}",
            r"\end{minipage}",
        ]
    return lines


def _second_verdict(second: ClaimResult) -> str:
    """The verdict cell's line of the second verdict: "Linux (UML): reproduced, 2 of 4 cells"."""
    colour = VERDICT_COLOURS.get(second.verdict, "black")
    detail = second.cells or (second.coverage if second.verdict in UNDECIDED else "")
    return (
        rf"\newline{{\footnotesize {tex(second.backend)}: "
        rf"\textcolor{{{colour}}}{{{tex(second.verdict)}}}"
        + (f", {tex(detail)}" if detail else "")
        + "}"
    )


def _second_items(results: list[ClaimResult]) -> list[str]:
    """The second verdicts in full: what the emulated twin gave, its coverage and why."""
    seconds = [r for r in results if r.claim is not None and r.emulated is not None]
    if not seconds:
        return []
    lines = [
        r"\paragraph{The same claims on real Linux TCP (emulated twins).}",
        r"\begin{description}",
    ]
    for r in seconds:
        assert r.claim is not None
        assert r.emulated is not None
        assert r.claim.twin is not None
        second = r.emulated
        figure, source = r.claim.twin
        parts = [f"{second.backend}, {figure}'s emulated runs of {source}'s cells: "]
        parts[0] += second.verdict
        if second.value and second.value != "—":
            parts.append(second.value)
        parts += [text for text in (second.coverage, second.confidence, second.explanation) if text]
        sentences = [p.rstrip(". ") for p in parts]  # each a sentence, its first letter capital
        text = ". ".join(s[:1].upper() + s[1:] for s in sentences if s)
        lines.append(rf"\item[{tex(r.claim.id)}] {tex(text)}.")
    lines.append(r"\end{description}")
    return lines


def write_tex(
    results: Iterable[ClaimResult],
    path: str | Path,
    caption: str,
    figures: Mapping[str, WhyFigure] | None = None,
) -> None:
    """Write the claims table as a LaTeX ``longtable`` (verdicts coloured).

    Each row carries the label ``claim:<id>`` (the report's at-a-glance table quotes
    its page). A claim with an emulated twin has its second verdict on a line of its
    verdict cell, and in full in a description list after the table. Explanations of
    disagreements follow the table as a description list,
    each with its claim's trace figure from ``figures`` (:func:`write_why_figures`),
    captioned and labelled ``why:<id>``.
    """
    results = list(results)
    figures = figures or {}
    head = r"\toprule Claim & Text and tolerance & Paper & Reproduced & Verdict \\ \midrule"
    lines = [
        r"\begin{longtable}{@{}P{0.07\linewidth}P{0.3\linewidth}P{0.14\linewidth}"
        r"P{0.25\linewidth}P{0.14\linewidth}@{}}",
        rf"\caption{{{tex(caption)}}}\\",
        head,
        r"\endfirsthead",
        head,
        r"\endhead",
    ]
    for result in results:
        claim = result.claim
        assert claim is not None
        colour = VERDICT_COLOURS.get(result.verdict, "black")
        verdict = rf"\textcolor{{{colour}}}{{{tex(result.verdict)}}}"
        if result.cells:
            verdict += rf"\newline{{\footnotesize on {tex(result.cells)}}}"
        if result.confidence:
            verdict += rf"\newline{{\footnotesize {tex(result.confidence)}}}"
        if result.reading:
            verdict += rf"\newline{{\footnotesize\emph{{{tex(result.reading_text())}}}}}"
        if result.coverage:
            verdict += rf"\newline{{\footnotesize {tex(result.coverage)}}}"
        if result.emulated is not None:
            verdict += _second_verdict(result.emulated)
        text = (
            rf"{tex(claim.text)}\newline{{\footnotesize\emph{{Tolerance:}} "
            rf"{tex(claim.tolerance)}}}"
        )
        if claim.model_caveat:
            text += rf"\newline{{\footnotesize\emph{{Model caveat:}} {tex(claim.model_caveat)}}}"
        value = tex(result.value)
        if result.margin is not None:
            value += rf"\newline{{\footnotesize {tex(result.margin.text())}}}"
        lines.append(  # the label: the at-a-glance table gives the page of each claim
            rf"\phantomsection\label{{claim:{claim.id}}}{tex(claim.id)} & {text} & "
            rf"{tex(claim.paper)} & {value} & {verdict} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    lines += _second_items(results)
    explained = [
        r for r in results if r.claim is not None and (r.explanation or r.claim.id in figures)
    ]
    if explained:
        lines.append(r"\paragraph{Where the reproduction disagrees or cannot decide, and why.}")
        lines.append(r"\begin{description}")
        for r in explained:
            assert r.claim is not None
            lines += _why_item(r, figures.get(r.claim.id))
        lines.append(r"\end{description}")
    atomic_write(Path(path), "\n".join(lines) + "\n")
