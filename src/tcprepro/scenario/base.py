"""What every part of a scenario is built from: quantities in SI units, strict models.

Quantities carry units in the file (``"10Mbps"``, ``"42ms"``, ``"200kB"``) and are stored
in SI base units (bit/s, s, bytes) once validated; a model rejects unknown keys and is
immutable.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
)

from tcprepro import units

# Validated quantities are floats/ints in SI units; they serialise back to text with
# their unit ("1e+07bps"), so a resolved scenario can be loaded again as it is.
Rate = Annotated[
    float,
    BeforeValidator(units.parse_rate),
    PlainSerializer(lambda v: f"{v!r}bps", return_type=str),
]


Duration = Annotated[
    float,
    BeforeValidator(units.parse_duration),
    PlainSerializer(lambda v: f"{v!r}s", return_type=str),
]


Size = Annotated[
    int, BeforeValidator(units.parse_size), PlainSerializer(lambda v: f"{v}B", return_type=str)
]


Frequency = Annotated[
    float,
    BeforeValidator(units.parse_frequency),
    PlainSerializer(lambda v: f"{v!r}/s", return_type=str),
]


Scalar = bool | int | float | str


def _without_unset(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data`` without ``key`` when it is None.

    A field added later and left unset serialises as before it existed, so resolved
    scenarios, cache keys and provenance of existing runs do not change.
    """
    if data.get(key) is None:
        data.pop(key, None)
    return data


class _Strict(BaseModel):
    """Base model: unknown keys are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
