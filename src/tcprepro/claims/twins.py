"""Second verdicts: a claim judged again on its emulated twin (real Linux TCP).

:func:`twin_claim` gives the claim as its twin judges it; :func:`backend_label` names the
route that ran the twin's dataset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import xarray as xr

from tcprepro.claims.cells import spec_dims
from tcprepro.claims.judge import _judge
from tcprepro.claims.registry import Claim
from tcprepro.claims.verdicts import ClaimResult
from tcprepro.emulation.routes import REGISTRY

#: what a twin's emulated dataset is called by its route (``emulation_route`` attribute)
ROUTE_LABELS = {name: route.label for name, route in REGISTRY.items()}


EMULATED_LABEL = "Linux (emulated)"


NOT_EMULATED = "not emulated in this build"


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
        absent = [dim for dim in spec_dims(spec) if dim not in ds.dims]
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
