"""The claims registry (``registry.yaml``): each claim, read and checked once.

:func:`load_registry` parses the entries into :class:`Claim` records, checking their
reading rules (``readings.yaml``, :func:`reading_rules`), cells, regime criteria and the
shape of their ``emulated:`` entries.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tcprepro.yamlfile import load_yaml


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
    #: the cells the claim reads, per figure (see tcprepro.claims.cells)
    cells: tuple[Mapping[str, Any], ...] = ()
    #: what its runs must show to decide it (see tcprepro.claims.cells)
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


TWIN_KEYS = frozenset({"figure", "as", "args", "absent", "reason"})


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


def reading_rules() -> dict[str, Mapping[str, str]]:
    """The reading guide (``readings.yaml``): each rule by id (R1 ...), in order."""
    text = resources.files(__package__).joinpath("readings.yaml").read_text()
    return {entry["id"]: entry for entry in load_yaml(text)}


def _validate_excepted(
    claim_id: str, args: Mapping[str, Any], cells: tuple[Mapping[str, Any], ...]
) -> None:
    """A check's ``except_cells`` are the cells its ``cells:`` entry excepts.

    One list, read alike by the check, the coverage and the regime criteria.
    """
    from tcprepro.claims.cells import EXCEPT_KEY

    if "except_cells" not in args:
        return
    figure = args.get("figure")
    named = [list(spec.get(EXCEPT_KEY, [])) for spec in cells if spec["figure"] == figure]
    if [dict(c) for c in args["except_cells"]] != [dict(c) for e in named for c in e]:
        raise ValueError(
            f"{claim_id}: args.except_cells must be the cells its {figure} cells entry excepts "
            f"(cells.{EXCEPT_KEY})"
        )


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
    for entry in load_yaml(text):
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
        _validate_excepted(entry["id"], entry.get("args", {}), entry["cells"])
        _validate_twin(entry["id"], entry["requires"], entry.get("emulated", {}))
        unknown = set(entry.get("regime", {})) - REGIME_KEYS
        if unknown:
            raise ValueError(f"{entry['id']}: unknown regime criteria {sorted(unknown)}")
        claims.append(Claim(**entry))
    ids = [c.id for c in claims]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate claim ids in the registry")
    return tuple(claims)
