"""Reading scenario files: YAML, ``base:`` chains, overrides, then validation.

Loading a file goes: YAML -> optional ``base:`` file merged underneath ->
overrides -> validation (:class:`tcprepro.scenario.Scenario`, then the traffic
generators' calibration). An override is a ``(key path, value)`` pair, where the
path is dotted (``flows.up.variant``) and may index a list
(``topology.senders.1.rtt``); the command line's ``--set key.path=value`` text
is parsed into such a pair once, with YAML for the value. Every error is a
:class:`~tcprepro.errors.ConfigError` that names the file and the field, raised
before anything runs.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tcprepro import testbeds, traffic
from tcprepro.errors import ConfigError
from tcprepro.scenario import Scenario
from tcprepro.yamlfile import load_yaml

__all__ = [
    "Override",
    "apply_overrides",
    "load_scenario",
    "load_scenario_dict",
    "merged_scenario_data",
    "parse_override",
]

#: one override: a dotted key path and the value it sets
Override = tuple[str, Any]


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``top`` over ``base``; a key set to null in ``top`` removes it."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise ConfigError("file not found", str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", str(path)) from None
    # a sweep loads the same few files for every run: parse each version of a file once
    return copy.deepcopy(_parse_yaml_file(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=256)
def _parse_yaml_file(name: str, _mtime_ns: int, _size: int) -> dict[str, Any]:
    path = Path(name)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError("file not found", str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", str(path)) from None
    try:
        data = copy.deepcopy(_parse_yaml(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"malformed YAML{where}: {problem}", str(path)) from None
    if not isinstance(data, dict):
        raise ConfigError("a scenario file must be a YAML mapping", str(path))
    return data


@functools.lru_cache(maxsize=64)
def _parse_yaml(text: str) -> Any:
    """Parsed YAML of a file's text, cached by content (a sweep reloads the same files)."""
    return load_yaml(text)


def _load_raw(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    path = path.resolve()
    if path in chain:
        raise ConfigError("circular 'base:' chain", str(path))
    data = _read_yaml(path)
    testbed = data.get("testbed")
    if isinstance(testbed, str):  # a profile file, relative to the file that names it
        data["testbed"] = str((path.parent / testbed).resolve())
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise ConfigError("base: must be the path of another scenario file", str(path))
    underneath = _load_raw(path.parent / base, (*chain, path))
    merged = _merge(underneath, data)
    if isinstance(underneath.get("notes"), list) and isinstance(data.get("notes"), list):
        merged["notes"] = underneath["notes"] + data["notes"]  # notes add up along the chain
    return merged


def parse_override(text: str) -> Override:
    """Parse ``"flows.up.variant=Cubic"`` (``--set``) into a key path and a YAML value."""
    path, value = _parse_override(text)
    return path, copy.deepcopy(value)


@functools.lru_cache(maxsize=4096)
def _parse_override(text: str) -> Override:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {text!r} must look like key.path=value", "--set")
    try:
        value = load_yaml(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.strip(), value


def _as_override(item: str | Override) -> Override:
    return parse_override(item) if isinstance(item, str) else (item[0], item[1])


def apply_overrides(data: dict[str, Any], overrides: Iterable[str | Override]) -> dict[str, Any]:
    """Return ``data`` with each override applied.

    An override is a ``(key path, value)`` pair, or ``key.path=value`` text as given to
    ``--set`` (parsed with :func:`parse_override`).
    """
    out = copy.deepcopy(data)
    for item in overrides:
        dotted, value = _as_override(item)
        text = f"{dotted}={value!r}" if not isinstance(item, str) else item
        path = dotted.split(".")
        if any(not part for part in path):
            raise ConfigError(f"override {text!r} has an empty key component", "--set")
        value = copy.deepcopy(value)
        node: Any = out
        for part in path[:-1]:
            if isinstance(node, list):  # a list item by its index: topology.senders.0.rtt
                node = node[_list_index(node, part, text)]
                continue
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, (dict, list)):
                raise ConfigError(f"override {text!r}: {part!r} is not a mapping", "--set")
            node = child
        if isinstance(node, list):
            node[_list_index(node, path[-1], text)] = value
        else:
            node[path[-1]] = value
    return out


def _list_index(items: list[Any], part: str, text: str) -> int:
    """Index ``part`` of a list in an override path, or ConfigError."""
    if not part.isdigit() or int(part) >= len(items):
        raise ConfigError(
            f"override {text!r}: {part!r} is not an index of a list of {len(items)} items",
            "--set",
        )
    return int(part)


def _format_location(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for i, item in enumerate(loc):
        # drop the discriminator tag pydantic inserts for tagged unions
        if i > 0 and loc[i - 1] == "topology" and item in ("access", "dumbbell"):
            continue
        if isinstance(item, str) and item.startswith(("function-", "union[")):
            continue
        if item == "[key]":
            continue
        parts.append(f"[{item}]" if isinstance(item, int) else str(item))
    return ".".join(parts).replace(".[", "[")


def _format_validation_error(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        location = _format_location(tuple(error["loc"])) or "(top level)"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown key (misspelt?)"
        elif message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        lines.append(f"{location}: {message}")
    return "; ".join(lines)


def load_scenario_dict(data: Mapping[str, Any], source: str = "<scenario>") -> Scenario:
    """Validate an already-parsed scenario mapping, generators' calibration included.

    A ``testbed:`` key names a testbed profile file (:mod:`tcprepro.testbeds`; relative to
    the scenario file that set it, else to the working directory): its values are merged
    underneath the scenario's.
    """
    data = dict(data)
    testbed = data.pop("testbed", None)
    if testbed is not None:
        if not isinstance(testbed, str):
            raise ConfigError("testbed: must be the path of a testbed profile file", source)
        data = testbeds.apply_profile(data, testbed)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc), source) from None
    for name in scenario.traffic:
        try:
            traffic.calibrate(scenario, name)
        except ValueError as exc:
            raise ConfigError(f"(top level): traffic.{name}: {exc}", source) from None
    return scenario


def merged_scenario_data(
    path: str | Path, overrides: Iterable[str | Override] = ()
) -> dict[str, Any]:
    """A scenario file's mapping with its ``base:`` chain merged and ``overrides`` applied.

    What :func:`load_scenario` validates (a ``testbed:`` path made absolute), before
    validation: the keys as written, values in their units (``2Mbps``, ``52ms``).
    """
    return apply_overrides(_load_raw(Path(path)), overrides)


def load_scenario(path: str | Path, overrides: Iterable[str | Override] = ()) -> Scenario:
    """Read, merge, override and validate a scenario file.

    Parameters
    ----------
    path
        YAML scenario file; a ``base:`` key names another file (relative to
        this one) whose content is merged underneath (a key set to null removes
        the base's entry; a file's ``notes`` are appended to its base's); a
        ``testbed:`` key names the testbed profile merged underneath everything
        (:mod:`tcprepro.testbeds`).
    overrides
        ``(key path, value)`` pairs or ``key.path=value`` strings (``--set``), applied
        after merging.

    Raises
    ------
    ConfigError
        On any problem, naming the file and the field.
    """
    return load_scenario_dict(merged_scenario_data(path, overrides), str(path))
