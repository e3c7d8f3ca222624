"""Which figures a scenario note describes (the ``Figures`` column of ``deviations.tex``).

A file's ``notes`` are appended to those of its ``base:`` file, so every figure whose
scenario derives from a file inherits that file's notes. A note states one value, though
(``warmup: 1 s of 10 s``), and a derived scenario may set another; this module decides,
note by note, which figures still carry what the note says:

* a note names its subject in ``field``: scenario key paths (``warmup``,
  ``flows.*.start``, ``topology.senders[0].rtt``) joined by `` / ``, ``sweep`` (the
  workflow's sweep of the figure), a parenthesised qualifier (``flows.bn.variant
  (Hybla)``: those values of the path), or words for a reader (``kernel``), which
  nothing can check;
* a field that begins with figure ids (``C1 topology...``, ``C2 / C3 reference RTTs``)
  concerns those figures (``C3``: C3.1, C3.3, ...) and what derives from them;
* a note declared in a figure's own file describes that figure; a note a file nearer to
  the figure restates (same ``field``) is replaced by it there;
* a figure inherits a note through the nearest figure whose file lies under its own
  (X6 through B5.10, X11 through D4): it carries the note when that figure does and both
  have the same values of the note's paths, in every tier and sweep cell, and the same
  sweep where the note is on the sweep;
* a figure whose bases are no figure's files (B5.10 on study B's base files) carries the
  base's note unless its own file or its ``set`` changes the note's paths.

A note injected by no file (a test's) stays with the figure that shows it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tcprepro.campaign import WorkflowConfig
from tcprepro.scenario.model import Note
from tcprepro.scenario_io import apply_overrides, merged_scenario_data
from tcprepro.yamlfile import load_yaml

#: a note's identity in the deviations table: the row it makes
NoteKey = tuple[str, str, str]

#: "name (qualifier)" in a note's field
_QUALIFIED = re.compile(r"^(?P<path>[^()]*?)\s*\((?P<qualifier>[^()]*)\)\s*$")
#: a scenario key path as notes write it: dotted words, ``*``, list indices
_PATH = re.compile(r"^[A-Za-z_*][\w*]*(\[\d+\]|\.[\w*]+)*$")

_MISSING = object()


def note_key(note: Note) -> NoteKey:
    """The row a note makes: notes with the same kind, field and value share one row."""
    return (note.kind, note.field, str(note.value))


def _own_notes(path: str) -> list[Note]:
    """The notes written in one scenario file (not its base's)."""
    return [Note.model_validate(n) for n in _raw(path).get("notes") or []]


def _lookup(data: Any, path: str) -> list[Any]:
    """Values at a dotted path of raw scenario data; ``*`` any key, lists by index or name."""
    found = [data]
    for part in re.split(r"\.|(?=\[)", path):
        index = part[1:-1] if part.startswith("[") else None
        step: list[Any] = []
        for node in found:
            if isinstance(node, Mapping):
                step += list(node.values()) if part == "*" else [node.get(part, _MISSING)]
            elif isinstance(node, list):
                if part == "*":
                    step += node
                elif (index or part).isdigit() and int(index or part) < len(node):
                    step.append(node[int(index or part)])
                else:
                    step += [n for n in node if isinstance(n, Mapping) and n.get("name") == part]
        found = [n for n in step if n is not _MISSING]
    return found


def _name(value: Any) -> str:
    """A value as a qualifier names it: a variant by its name, anything else as text."""
    if isinstance(value, Mapping) and "name" in value:
        return str(value["name"])
    return str(value)


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class Subject:
    """What a note's ``field`` is about: figures it names, key paths, the sweep."""

    def __init__(self, field: str, figures: Iterable[str]):
        ids = set(figures)
        self.named: list[str] = []
        self.paths: list[tuple[str, set[str] | None]] = []
        self.sweep = False
        for part in (p.strip() for p in field.split(" / ")):
            head, _, rest = part.partition(" ")
            if head in ids or any(f.startswith(head + ".") for f in ids):
                self.named.append(head)
                part = rest
            match = _QUALIFIED.match(part)
            path, qualifier = (match["path"], match["qualifier"]) if match else (part, None)
            if path == "sweep":
                self.sweep = True
            elif _PATH.match(path):
                words = {w.strip() for w in qualifier.split(",")} if qualifier else None
                self.paths.append((path, words))

    def names(self, figure: str) -> bool:
        """Whether the field names ``figure`` (itself, or its group: ``C3`` for C3.1)."""
        return any(figure == n or figure.startswith(n + ".") for n in self.named)


class Carriers:
    """The figures of a report that carry each scenario note, for one tier's report."""

    def __init__(self, config: WorkflowConfig, tier: str):
        self.config = config
        #: the tiers whose runs are compared: the report's and the paper's, which a note's
        #: value usually quotes (the smoke tier's few cells are a test of the machinery)
        self.tiers = tuple(dict.fromkeys((tier, "paper")))
        simulated = set(config.simulated_figures)
        self._owner = {
            str(Path(config.figure(f)["scenario"])): f
            for f in config.figures
            if f in simulated and "scenario" in config.figure(f)
        }
        self._values: dict[tuple[str, str], dict[str, list[list[str]]]] = {}

    def _chain(self, figure: str) -> list[str]:
        return self.config.scenario_files(figure)

    def _declared(self, figure: str, key: NoteKey) -> int | None:
        """Index in the figure's chain of the file that declares a note (farthest base)."""
        chain = self._chain(figure)
        for i in reversed(range(len(chain))):
            if any(note_key(n) == key for n in _own_notes(chain[i])):
                return i
        return None

    def _restated(self, figure: str, field: str, below: int) -> bool:
        """Whether a file nearer to the figure than ``below`` has a note on ``field``."""
        chain = self._chain(figure)
        return any(n.field == field for path in chain[:below] for n in _own_notes(path))

    def _through(self, figure: str, declared: int) -> str | None:
        """The nearest figure whose file lies under ``figure``'s, above the note's file."""
        for path in self._chain(figure)[1 : declared + 1]:
            if path in self._owner and self._owner[path] != figure:
                return self._owner[path]
        return None

    def _data(self, figure: str, tier: str) -> list[dict[str, Any]]:
        """The raw scenario data of each cell of a figure in a tier."""
        config = self.config
        unswept = merged_scenario_data(
            config.figure(figure)["scenario"], config.base_overrides(figure, tier)
        )
        return [
            apply_overrides(unswept, config.cell_settings(figure, cell))
            for cell in config.cells(figure, tier)
        ]

    def _values_of(self, figure: str, path: str) -> dict[str, list[list[str]]]:
        """A path's values in each cell of a figure, per tier (what its runs set)."""
        if (figure, path) not in self._values:
            self._values[figure, path] = {
                tier: [[_text(v) for v in _lookup(cell, path)] for cell in self._data(figure, tier)]
                for tier in self.tiers
            }
        return self._values[figure, path]

    def _overrides(self, figure: str, nearer: int) -> list[list[str]]:
        """Key paths the files nearer than ``nearer`` and the workflow's settings set."""
        config = self.config
        found = [
            leaf
            for path in self._chain(figure)[:nearer]
            for leaf in _leaves({k: v for k, v in _raw(path).items() if k not in _NOT_SET})
        ]
        pairs = list(config.figure(figure).get("set", {}).items())
        for tier in self.tiers:
            pairs += config.base_overrides(figure, tier)
            pairs += [
                p for cell in config.cells(figure, tier) for p in config.cell_settings(figure, cell)
            ]
        return found + [_segments(path) for path, _ in pairs]

    def _replaced(self, figure: str, declared: int, subject: Subject) -> bool:
        """Whether a nearer file or a setting replaces a structure the note is about.

        A note on a structure (``topology``, ``topology.senders.bg``) holds while a nearer
        file or setting changes a part of it (``topology.uplink.buffer_pkts``), and no
        longer once the structure or one that holds it is set anew (``topology.senders``,
        a list, replaced whole).
        """
        base = merged_scenario_data(self._chain(figure)[declared])
        structural = [
            _segments(path)
            for path, _ in subject.paths
            if any(_structural(v) for v in _lookup(base, path))
        ]
        if not structural:
            return False
        return any(
            _within(leaf, path) for leaf in self._overrides(figure, declared) for path in structural
        )

    def _leaf_paths(
        self, figure: str, declared: int, subject: Subject
    ) -> list[tuple[str, set[str] | None]]:
        """The note's paths that hold a value (not a structure) in the declaring file."""
        base = merged_scenario_data(self._chain(figure)[declared])
        return [
            (path, qualifier)
            for path, qualifier in subject.paths
            if not any(_structural(v) for v in _lookup(base, path))
        ]

    def _same(self, figure: str, other: str, note: Note, subject: Subject, declared: int) -> bool:
        """Whether a figure runs only values of a note's paths that ``other`` runs.

        In every tier the note concerns, each value of each path in the figure's cells is
        one of ``other``'s (a cross-check runs some of its figure's cells); a qualifier
        that names values of ``other`` (``flows.bn.variant (Hybla)``) compares those only,
        and a note on the sweep needs the same sweep.
        """
        tiers = [t for t in self.tiers if note.concerns(t)]
        if subject.sweep and any(
            self.config.sweep_values(figure, t) != self.config.sweep_values(other, t) for t in tiers
        ):
            return False
        for path, qualifier in self._leaf_paths(figure, declared, subject):
            mine, theirs = self._values_of(figure, path), self._values_of(other, path)
            for tier in tiers:
                a, b = _distinct(mine[tier]), _distinct(theirs[tier])
                if qualifier is not None and _names(qualifier, b):
                    a = {v for v in a if _names(qualifier, {v})}
                    b = {v for v in b if _names(qualifier, {v})}
                    if a != b:
                        return False
                elif not a <= b:
                    return False
        return True

    def _unchanged(self, figure: str, declared: int, subject: Subject) -> bool:
        """Whether a figure's files and ``set`` keep the values of a base file's note."""
        chain = self._chain(figure)
        base = merged_scenario_data(chain[declared])
        mine = merged_scenario_data(chain[0], self.config.figure(figure).get("set", {}).items())
        return all(
            [_text(v) for v in _lookup(mine, path)] == [_text(v) for v in _lookup(base, path)]
            for path, _ in self._leaf_paths(figure, declared, subject)
        )

    def carries(self, figure: str, note: Note) -> bool:
        """Whether ``figure``'s scenario carries what ``note`` says (the module's rules)."""
        key = note_key(note)
        declared = self._declared(figure, key)
        if declared is None or declared == 0:
            return True  # the figure's own note (or one no file declares)
        if self._restated(figure, note.field, declared):
            return False
        subject = Subject(note.field, self.config.figures)
        through = self._through(figure, declared)
        if subject.named and subject.names(figure):
            return True
        if self._replaced(figure, declared, subject):
            return False
        if through is not None:
            return self.carries(through, note) and self._same(
                figure, through, note, subject, declared
            )
        return not subject.named and self._unchanged(figure, declared, subject)


#: top-level keys of a scenario file that set no scenario value
_NOT_SET = ("base", "id", "title", "notes")


def _raw(path: str) -> dict[str, Any]:
    return load_yaml(Path(path).read_text()) or {}


def _segments(path: str) -> list[str]:
    """A key path's parts: ``topology.senders[0].rtt`` -> topology, senders, 0, rtt."""
    return [p for p in re.split(r"[.\[\]]+", path) if p]


def _leaves(data: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[list[str]]:
    """The key paths a file sets: mappings merge into their base, anything else replaces."""
    out: list[list[str]] = []
    for key, value in data.items():
        if isinstance(value, Mapping) and value:
            out += _leaves(value, (*prefix, str(key)))
        else:
            out.append([*prefix, str(key)])
    return out


def _within(leaf: list[str], path: list[str]) -> bool:
    """Whether setting ``leaf`` replaces ``path`` or what holds it (``*``: any key)."""
    return len(leaf) <= len(path) and all(p in ("*", s) for s, p in zip(leaf, path, strict=False))


def _structural(value: Any) -> bool:
    """A structure (a link, a sender group), not a value such as a variant and its params."""
    return isinstance(value, Mapping) and not set(value) <= {"name", "params"}


def _names(qualifier: set[str], values: set[str]) -> bool:
    """Whether every word of a qualifier begins the name of one of ``values``."""
    names = {_name(json.loads(v)) for v in values}
    return all(any(n.startswith(word) for n in names) for word in qualifier)


def _distinct(cells: list[list[str]]) -> set[str]:
    return {v for cell in cells for v in cell}
