"""Physical quantities written with their units in scenario files.

This module owns the parsing of the strings a scenario author writes
(``"10Mbps"``, ``"42ms"``, ``"200kB"``) into SI base values (bit/s, seconds,
bytes). A bare number is refused for rates and durations, so a forgotten unit
can never silently mean something else.

Prefixes are decimal (k = 1000, M = 10^6, G = 10^9) except the binary IEC
prefixes KiB, MiB, GiB. ``B`` is a byte and ``b``/``bit`` a bit; ``KB`` is
refused because people use it for both 1000 and 1024 bytes.

The ``format_*`` functions write a value back as the report prints it, the number and
its unit apart: ``50 Mb/s``, ``14 ms``, ``16 MiB``.
"""

from __future__ import annotations

import re

__all__ = [
    "format_duration",
    "format_number",
    "format_quantity",
    "format_rate",
    "format_size",
    "parse_duration",
    "parse_frequency",
    "parse_rate",
    "parse_size",
]

_NUMBER = r"(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

_RATE_RE = re.compile(_NUMBER + r"\s*(?P<prefix>[kKMGT]?)(?P<unit>bps|b/s|bit/s|bits/s|Bps|B/s)$")
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_TIME_RE = re.compile(_NUMBER + r"\s*(?P<unit>ns|us|µs|ms|s|min|h)$")
_FREQ_RE = re.compile(_NUMBER + r"\s*(?P<unit>/s|/min|/h|Hz)$")
_FREQ_UNITS = {"/s": 1.0, "Hz": 1.0, "/min": 1 / 60.0, "/h": 1 / 3600.0}
_SIZE_UNITS = {
    "B": 1,
    "kB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
}
_SIZE_RE = re.compile(_NUMBER + r"\s*(?P<unit>B|kB|MB|GB|KiB|MiB|GiB|KB)$")


def _as_text(value: object, what: str, example: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"expected a {what} such as {example!r}, got {value!r}")
    if isinstance(value, (int, float)):
        if value == 0:
            return "0"
        raise ValueError(f"a {what} needs a unit, e.g. {example!r} (got the bare number {value!r})")
    return value.strip()


def parse_rate(value: object) -> float:
    """Return a rate in bit/s from ``"10Mbps"``, ``"2 Mb/s"`` or ``"1.2MB/s"`` (bytes)."""
    text = _as_text(value, "rate", "10Mbps")
    if text == "0":
        return 0.0
    match = _RATE_RE.match(text)
    if not match:
        raise ValueError(
            f"cannot read {text!r} as a rate; write e.g. '10Mbps', '2 Mb/s' or '1.2MB/s'"
        )
    scale = _DECIMAL[match["prefix"]]
    bytes_unit = match["unit"].startswith("B")
    return float(match["num"]) * scale * (8.0 if bytes_unit else 1.0)


def parse_duration(value: object) -> float:
    """Return a duration in seconds from ``"42ms"``, ``"1.5s"``, ``"10min"``."""
    text = _as_text(value, "duration", "42ms")
    if text == "0":
        return 0.0
    match = _TIME_RE.match(text)
    if not match:
        raise ValueError(
            f"cannot read {text!r} as a duration; write e.g. '42ms', '1.5s' or '10min'"
        )
    return float(match["num"]) * _TIME_UNITS[match["unit"]]


def parse_frequency(value: object) -> float:
    """Return events per second from ``"0.15/s"``, ``"9/min"`` or ``"2Hz"``."""
    text = _as_text(value, "rate of events", "0.15/s")
    if text == "0":
        return 0.0
    match = _FREQ_RE.match(text)
    if not match:
        raise ValueError(f"cannot read {text!r} as a rate of events; write e.g. '0.15/s'")
    return float(match["num"]) * _FREQ_UNITS[match["unit"]]


def parse_size(value: object) -> int:
    """Return a size in bytes from ``"200kB"``, ``"1448B"``, ``"16MiB"``."""
    text = _as_text(value, "size", "200kB")
    if text == "0":
        return 0
    match = _SIZE_RE.match(text)
    if not match:
        raise ValueError(f"cannot read {text!r} as a size; write e.g. '1448B', '200kB' or '16MiB'")
    if match["unit"] == "KB":
        raise ValueError(f"{text!r} is ambiguous: write kB (1000 bytes) or KiB (1024 bytes)")
    size = float(match["num"]) * _SIZE_UNITS[match["unit"]]
    if abs(size - round(size)) > 1e-6:
        raise ValueError(f"{text!r} is not a whole number of bytes")
    return round(size)


def format_rate(bps: float) -> str:
    """Format a rate in bit/s with the largest decimal prefix that keeps it >= 1."""
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(bps) >= scale:
            return f"{bps / scale:g} {prefix}b/s"
    return f"{bps:g} b/s"


def format_duration(seconds: float) -> str:
    """Format a duration in seconds: milliseconds below a second (``14 ms``), else seconds."""
    if abs(seconds) < 1:
        return f"{seconds * 1000:g} ms"
    return f"{seconds:g} s"


#: units of a size, largest first: a size prints in the first that holds it whole
_SIZE_FORMATS = (("GiB", 1024**3), ("MiB", 1024**2), ("GB", 1000**3), ("MB", 1000**2))
_SIZE_FORMATS += (("KiB", 1024), ("kB", 1000))


def format_size(n_bytes: float) -> str:
    """Format a size in bytes in the largest unit that holds it whole (``16 MiB``, ``200 kB``).

    Binary units first at each scale, as buffers are written (``64 KiB``); a size that is
    a whole number of none prints in bytes (``1448 B``).
    """
    for unit, scale in _SIZE_FORMATS:
        if abs(n_bytes) >= scale and float(n_bytes) % scale == 0:
            return f"{n_bytes / scale:g} {unit}"
    return f"{n_bytes:g} B"


def format_number(value: float) -> str:
    """A bare number as the report prints it: ``:g``, its exponent without padding.

    ``0.001`` -> ``0.001``, ``0.00001`` and ``1e-05`` -> ``1e-5``, ``3e-07`` -> ``3e-7``:
    one form for a loss rate however the config wrote it.
    """
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:g}")


def format_quantity(text: str) -> str:
    """A rate, duration or size written with its unit as the report prints it.

    ``"50Mbps"`` -> ``50 Mb/s``, ``"14ms"`` -> ``14 ms``, ``"256KiB"`` -> ``256 KiB``;
    any other text (a name, a bare number) is returned as it is.
    """
    for parse, format_ in (
        (parse_rate, format_rate),
        (parse_duration, format_duration),
        (parse_size, format_size),
    ):
        try:
            value = parse(text)
        except ValueError:
            continue
        if text.strip() != "0":  # a bare 0 reads as any quantity: it has no unit to print
            return format_(value)
    return text
