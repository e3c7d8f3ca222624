"""Testbed stack profiles: the TCP stack each study ran on, knob by knob, with sources.

This module owns what a *testbed profile* is and how a scenario takes one as its base.
A profile (``workflow/testbeds/<id>.yaml``, one file per original testbed) lists the
stack's knobs: for each, the value the testbed had, where that value comes from (the
stack's source file and version, its documented default, or the RFC it implemented),
how ns-3 and the emulated Linux guest are set to it, or "not modelled" and why. The
``set`` of a knob is data: dotted scenario paths (``tcp.initial_cwnd_pkts``,
``stack.variants.Cubic.Beta``, ``stack.linux_modules.tcp_cubic.beta``) that the scenario
receives underneath its own values, so a scenario file says ``testbed:
../testbeds/freebsd-9.2.yaml`` and keeps only what its paper fixed.

A *host* profile (``kind: host``) describes the stack of some hosts only (study A's
Windows 7 end, which sends the Compound flows): a testbed profile names it under
``hosts`` by variant, and its knobs set ns-3 socket attributes (``socket.MinRto``) and
variant attributes (``variants.Compound.Gamma``).

A profile also lists the testbed's *unknowns* (``what_if``): what the papers leave open
and could matter, with the alternative setting that a what-if run tries, reported next
to the main verdict and never in its place (:mod:`tcprepro.campaign.whatif`).

A *knob trace* (``workflow/knob-traces.yaml``, :class:`KnobTrace`) sets some knobs of a
profile back, alone, to what the runs had before the profiles (ns-3's defaults or the
scenario's earlier value) on the cells that decide a claim: run as a what-if, it says
which profile change moved a verdict.

``docs/testbeds.md`` is generated from the profile files (:func:`render_markdown`;
``tcprepro testbeds --write docs/testbeds.md``), and a test checks it is up to date.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tcprepro.errors import ConfigError
from tcprepro.yamlfile import load_yaml

__all__ = [
    "Knob",
    "KnobTrace",
    "TestbedProfile",
    "WhatIf",
    "apply_profile",
    "dotted_to_nested",
    "load_knob_traces",
    "load_profile",
    "profile_settings",
    "render_markdown",
    "settings_digest",
]

Scalar = bool | int | float | str

#: where a testbed profile's knobs may write in a scenario
SCENARIO_ROOTS = ("tcp.", "stack.", "topology.", "flows.", "traffic.")
#: where a host profile's knobs may write (within ``stack.hosts.<variant>``)
HOST_ROOTS = ("socket.", "variants.", "ack_counting")
#: the text a backend description starts with when the knob is not modelled there
NOT_MODELLED = "not modelled"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Knob(_Strict):
    """One setting of a stack: its value, its source and how each backend gets it."""

    name: str = Field(min_length=1)
    value: str = Field(min_length=1, description="the testbed's value, in words and units")
    source: str = Field(
        min_length=1,
        description="the stack's source file and version, its documented default, the RFC "
        "it implemented, or the paper",
    )
    set: dict[str, Any] = Field(
        default_factory=dict, description="dotted scenario paths and the values they get"
    )
    ns3: str = Field(min_length=1, description="how ns-3 is set, or 'not modelled: why'")
    linux: str = Field(
        min_length=1, description="how the emulated Linux guest is set, or 'not modelled: why'"
    )

    @model_validator(mode="after")
    def _set_or_not_modelled(self) -> Knob:
        modelled = not self.ns3.lower().startswith(NOT_MODELLED)
        if modelled and not self.set and not self.ns3.lower().startswith("as "):
            raise ValueError(
                f"knob {self.name!r}: give 'set' (the scenario values), or say in 'ns3' that "
                f"it is '{NOT_MODELLED}: <why>' or 'as <what ns-3 already does>'"
            )
        return self


class WhatIf(_Strict):
    """A testbed unknown that could matter: run both ways, reported beside the verdict."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    question: str = Field(min_length=1)
    paper: str = Field(min_length=1, description="what the papers say of it, if anything")
    main: str = Field(min_length=1, description="the main runs' setting, and why")
    alternative: str = Field(min_length=1, description="the what-if runs' setting")
    set: dict[str, Any] = Field(
        min_length=1, description="dotted scenario paths of the what-if runs"
    )
    claims: list[str] = Field(min_length=1, description="the claims whose cells it re-runs")
    when_variant: str | None = Field(
        default=None,
        description="only the claims' cells where some flow runs this variant (e.g. Compound)",
    )
    repetitions: int | None = Field(
        default=None,
        ge=1,
        description="repetitions of each what-if cell, when fewer than the verify tier's "
        "(a spread, stated with its cost)",
    )
    when: dict[str, Any] = Field(
        default_factory=dict,
        description="only the claims' cells whose resolved scenario has these values "
        "(dotted paths, e.g. topology.bottleneck.qdisc: pfq_lqd)",
    )

    def applies_to(self, scenario: Any) -> bool:
        """Whether a cell's resolved scenario is one the what-if re-runs (``when*``)."""
        if self.when_variant is not None and self.when_variant not in scenario.variants_used():
            return False
        resolved = scenario.resolved()
        for dotted, wanted in self.when.items():
            node: Any = resolved
            for part in dotted.split("."):
                node = node.get(part) if isinstance(node, Mapping) else None
            if node != wanted:
                return False
        return True


class TestbedProfile(_Strict):
    """A testbed's stack (``kind: testbed``) or one kind of host within it (``kind: host``)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    kind: Literal["testbed", "host"] = "testbed"
    title: str = Field(min_length=1)
    studies: list[str] = Field(min_length=1)
    stack: str = Field(min_length=1, description="which system, which hosts, as the paper says")
    hosts: dict[str, str] = Field(
        default_factory=dict,
        description="variant -> host profile file (relative): hosts that send that variant",
    )
    knobs: list[Knob] = Field(min_length=1)
    what_if: list[WhatIf] = Field(default_factory=list)

    @model_validator(mode="after")
    def _paths(self) -> TestbedProfile:
        roots = HOST_ROOTS if self.kind == "host" else SCENARIO_ROOTS
        for knob in self.knobs:
            for path in knob.set:
                if not path.startswith(roots):
                    raise ValueError(
                        f"knob {knob.name!r}: set path {path!r} must start with one of "
                        f"{', '.join(roots)}"
                    )
        if self.kind == "host" and (self.hosts or self.what_if):
            raise ValueError("a host profile has no hosts nor what_if of its own")
        names = [knob.name for knob in self.knobs]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"knobs named twice: {', '.join(repeated)}")
        return self


class KnobTrace(_Strict):
    """Knobs of a profile set back, alone, to their setting before the profiles."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    knobs: list[str] = Field(
        min_length=1, description="'<profile id>/<knob name>' of each knob set back"
    )
    before: str = Field(
        min_length=1, description="the setting before the profiles, in words, and its source"
    )
    why: str = Field(min_length=1, description="why these knobs could move the claims")
    set: dict[str, Any] = Field(min_length=1, description="dotted scenario paths set back")
    claims: list[str] = Field(min_length=1)
    when_variant: str | None = None
    repetitions: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _paths(self) -> KnobTrace:
        for path in self.set:
            if not path.startswith(SCENARIO_ROOTS):
                raise ValueError(
                    f"set path {path!r} must start with one of {', '.join(SCENARIO_ROOTS)}"
                )
        for knob in self.knobs:
            if "/" not in knob:
                raise ValueError(f"knob {knob!r}: write '<profile id>/<knob name>'")
        return self

    def what_if(self, folder: Path) -> WhatIf:
        """The trace as a what-if run (id ``knob-<id>``), its knobs read in ``folder``."""
        values, sources = [], []
        for name in self.knobs:
            profile_id, _, knob_name = name.partition("/")
            knob = _knob(folder, profile_id, knob_name)
            values.append(f"{name}: {knob.value}")
            sources.append(f"{name}: {knob.source}")
        return WhatIf(
            id=f"knob-{self.id}",
            question=f"Does {', '.join(self.knobs)} alone move {', '.join(self.claims)}? "
            + self.why,
            paper="; ".join(sources),
            main="; ".join(values),
            alternative=self.before,
            set=self.set,
            claims=self.claims,
            when_variant=self.when_variant,
            repetitions=self.repetitions,
        )


def _knob(folder: Path, profile_id: str, name: str) -> Knob:
    path = folder / f"{profile_id}.yaml"
    if not path.exists():
        raise ConfigError(f"knob trace: no testbed profile {profile_id!r} in {folder}")
    knobs = {knob.name: knob for knob in load_profile(path).knobs}
    if name not in knobs:
        raise ConfigError(
            f"knob trace: {profile_id} has no knob {name!r}; its knobs: {', '.join(knobs)}",
            str(path),
        )
    return knobs[name]


def load_knob_traces(path: str | Path, folder: str | Path) -> list[WhatIf]:
    """The knob traces of ``path`` as what-ifs, their knobs checked in profile ``folder``."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = load_yaml(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", str(path)) from None
    entries = (data or {}).get("traces", []) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError("traces: must be a list of knob traces", str(path))
    out = []
    for i, entry in enumerate(entries):
        try:
            trace = KnobTrace.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "".join(f".{p}" for p in first["loc"])
            message = first["msg"].removeprefix("Value error, ")
            raise ConfigError(f"traces[{i}]{where}: {message}", str(path)) from None
        out.append(trace.what_if(Path(folder)))
    return out


def dotted_to_nested(values: Mapping[str, Any]) -> dict[str, Any]:
    """``{"tcp.min_rto": "1s"}`` -> ``{"tcp": {"min_rto": "1s"}}`` (later keys win)."""
    out: dict[str, Any] = {}
    for dotted, value in values.items():
        node = out
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{dotted}: {part!r} is set both as a value and a mapping")
        node[leaf] = copy.deepcopy(value)
    return out


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@functools.lru_cache(maxsize=32)
def _load(path_text: str, _mtime_ns: int) -> TestbedProfile:
    path = Path(path_text)
    try:
        data = load_yaml(path.read_text())
    except FileNotFoundError:
        raise ConfigError("testbed profile not found", path_text) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", path_text) from None
    if not isinstance(data, dict):
        raise ConfigError("a testbed profile must be a YAML mapping", path_text)
    try:
        return TestbedProfile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{where}: {message}", path_text) from None


def load_profile(path: str | Path) -> TestbedProfile:
    """Read and validate a profile file (cached per file version)."""
    path = Path(path).resolve()
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        raise ConfigError("testbed profile not found", str(path)) from None
    return _load(str(path), mtime)


def _knob_settings(knobs: Iterable[Knob]) -> dict[str, Any]:
    dotted: dict[str, Any] = {}
    for knob in knobs:
        dotted.update(knob.set)
    return dotted_to_nested(dotted)


def profile_settings(path: str | Path) -> dict[str, Any]:
    """The scenario values a testbed profile gives (nested, to merge under a scenario).

    Its knobs' ``set`` paths, ``stack.testbed`` (the profile's id) and, for each variant
    its ``hosts`` name, ``stack.hosts.<variant>``: the host profile's socket attributes
    and its variants' attributes merged into ``stack.variants``.
    """
    path = Path(path).resolve()
    profile = load_profile(path)
    if profile.kind != "testbed":
        raise ConfigError(
            "a scenario's testbed: must name a testbed profile, not a host", str(path)
        )
    settings = _merge({"stack": {"testbed": profile.id}}, _knob_settings(profile.knobs))
    for variant, host_file in profile.hosts.items():
        host = load_profile(path.parent / host_file)
        if host.kind != "host":
            raise ConfigError(f"hosts.{variant}: {host_file} is not a host profile", str(path))
        values = _knob_settings(host.knobs)
        host_stack = {"testbed": host.id, "socket": values.get("socket", {})}
        if "ack_counting" in values:
            host_stack["ack_counting"] = values["ack_counting"]
        settings = _merge(
            settings,
            {"stack": {"hosts": {variant: host_stack}, "variants": values.get("variants", {})}},
        )
    return settings


def settings_digest(path: str | Path) -> str:
    """A short digest of the values the profile gives the runs (:func:`profile_settings`).

    The verdict records name a study's profile by it: a source, note or what-if edited in
    the file leaves it, a changed setting (``set``) of any knob, the hosts' included, moves it.
    """
    payload = json.dumps(profile_settings(path), sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:8]


def apply_profile(data: Mapping[str, Any], path: str | Path) -> dict[str, Any]:
    """``data`` (a scenario mapping) with the profile's values merged underneath it."""
    return _merge(profile_settings(path), data)


# ---------------------------------------------------------------------------
# docs/testbeds.md


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _setting_text(values: Mapping[str, Any]) -> str:
    def text(value: Any) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    return "; ".join(f"`{path}: {text(value)}`" for path, value in values.items())


def render_markdown(paths: Iterable[str | Path], traces: Iterable[WhatIf] = ()) -> str:
    """``docs/testbeds.md``: every profile's knobs and unknowns, from the profile files.

    ``traces``: the knob traces (:func:`load_knob_traces`), listed after the profiles.
    """
    paths = sorted(Path(p) for p in paths)
    profiles = [(path, load_profile(path)) for path in paths]
    lines = [
        "# Testbed stack profiles",
        "",
        "<!-- generated by `tcprepro testbeds --write docs/testbeds.md` from "
        "workflow/testbeds/*.yaml: edit those files, not this page -->",
        "",
        "Each study runs on a profile of its original testbed's TCP stack, so that a "
        "difference from a paper is the finding and not ns-3's defaults. A scenario takes "
        "its testbed as its base (`testbed: ../testbeds/<id>.yaml`): the knobs' values "
        "below are set underneath the scenario's own (`tcprepro validate` prints the "
        "result). A knob ns-3 or Linux cannot match says so; a testbed unknown that could "
        "matter is run both ways at the verify tier (*what-if* runs, reported next to the "
        "main verdict, never in its place: [claims.md](claims.md#what-if-runs)).",
        "",
        "| profile | kind | studies | stack |",
        "|---|---|---|---|",
    ]
    for _, profile in profiles:
        lines.append(
            f"| [{profile.id}](#{profile.id.replace('.', '')}) | {profile.kind} | "
            f"{', '.join(profile.studies)} | {_cell(profile.stack)} |"
        )
    for path, profile in profiles:
        lines += ["", f"## {profile.id}", "", f"**{_cell(profile.title)}** ", ""]
        lines += [f"File: `workflow/testbeds/{path.name}`. {_cell(profile.stack)}", ""]
        if profile.hosts:
            hosts = ", ".join(f"{variant}: `{file}`" for variant, file in profile.hosts.items())
            lines += [f"Hosts with another stack (by the variant they send): {hosts}.", ""]
        lines += [
            "| knob | value | source | scenario values | ns-3 | emulated Linux |",
            "|---|---|---|---|---|---|",
        ]
        for knob in profile.knobs:
            lines.append(
                f"| {_cell(knob.name)} | {_cell(knob.value)} | {_cell(knob.source)} | "
                f"{_cell(_setting_text(knob.set)) or '—'} | {_cell(knob.ns3)} | "
                f"{_cell(knob.linux)} |"
            )
        if profile.what_if:
            lines += [
                "",
                "Unknowns run both ways (what-if):",
                "",
                "| what-if | question | the papers | main runs | what-if runs | claims |",
                "|---|---|---|---|---|---|",
            ]
            for entry in profile.what_if:
                claims = _claims_text(entry)
                lines.append(
                    f"| `{entry.id}` | {_cell(entry.question)} | {_cell(entry.paper)} | "
                    f"{_cell(entry.main)} | {_cell(entry.alternative)} "
                    f"({_cell(_setting_text(entry.set))}) | {claims} |"
                )
    return "\n".join(lines + _trace_lines(list(traces))) + "\n"


def _claims_text(entry: WhatIf) -> str:
    """A what-if's claims, the cells it keeps and its repetitions, as a table cell."""
    claims = ", ".join(entry.claims)
    if entry.when_variant:
        claims += f" (cells with {entry.when_variant})"
    if entry.repetitions:
        claims += f"; {entry.repetitions} repetitions"
    return claims


def _trace_lines(traces: list[WhatIf]) -> list[str]:
    if not traces:
        return []
    lines = [
        "",
        "## Knob traces",
        "",
        "Which profile change moved a verdict: each trace sets some knobs back, alone, to "
        "what the runs had before the profiles, on the cells that decide its claims, and "
        "is built and judged as a what-if (`whatif=<id>`; workflow/knob-traces.yaml).",
        "",
        "| trace | knobs (the profile's value) | set back to | claims |",
        "|---|---|---|---|",
    ]
    for entry in traces:
        claims = _claims_text(entry)
        lines.append(
            f"| `{entry.id}` | {_cell(entry.main)} | {_cell(entry.alternative)} "
            f"({_cell(_setting_text(entry.set))}) | {claims} |"
        )
    return lines
