"""What a scenario sends: TCP flows and generated traffic, and their congestion controls."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from tcprepro import units
from tcprepro.scenario.base import Duration, Frequency, Rate, Scalar, Size, _Strict, _without_unset
from tcprepro.variants import canonical_variant, get_variant


class VariantConfig(_Strict):
    """A congestion control and its parameters (ns-3 attribute names)."""

    name: str
    params: dict[str, Scalar] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        canonical = canonical_variant(name)
        variant = get_variant(canonical)
        if not variant.available:
            raise ValueError(f"variant {canonical!r} is not available: {variant.status}")
        return canonical


class UniformStart(_Strict):
    """A start time drawn uniformly in [low, high] for each repetition."""

    uniform: tuple[Duration, Duration]

    @model_validator(mode="after")
    def _ordered(self) -> UniformStart:
        low, high = self.uniform
        if low < 0 or high < low:
            raise ValueError("uniform start needs 0 <= low <= high")
        return self


class _Endpoints(_Strict):
    """Where traffic goes: ``direction`` (access topology) or ``src``/``dst`` hosts."""

    direction: Literal["down", "up"] | None = Field(
        default=None, description="access topology: down = server->client, up = client->server"
    )
    src: str | None = None
    dst: str | None = None


class FlowConfig(_Endpoints):
    """One TCP connection between two hosts (or ``count`` alike ones).

    With ``count``, the entry ``name`` stands for ``count`` connections named
    ``name0`` .. ``name{count-1}`` (0: none), each with its own random start;
    ``src`` may then name a dumbbell sender group, whose hosts they are spread
    over round-robin.
    """

    variant: VariantConfig
    start: UniformStart | Duration = Field(default=0.0, union_mode="left_to_right")
    size: Literal["bulk"] | Size = "bulk"
    pacing: bool = False
    count: int | None = Field(
        default=None, ge=0, description="this many alike connections name0.. (0: none)"
    )
    write_size: Size | None = Field(
        default=None,
        ge=128,
        description="bytes the emulated application hands the socket per write (iperf -l, "
        "the transfer sender's chunk); None: the tool's default (iperf 2 and iperf3: "
        "128 KiB, the transfer sender: 64 KiB). Linux 6.1 keeps a sender to a small "
        "SO_SNDBUF with large writes and not with small ones (docs/emulation.md); ns-3's "
        "sender keeps its send buffer full whatever the write size, and ignores it",
    )

    @model_serializer(mode="wrap")
    def _without_unset_write_size(self, handler: Any) -> dict[str, Any]:
        return _without_unset(handler(self), "write_size")

    @field_validator("start", mode="before")
    @classmethod
    def _nonnegative_start(cls, value: Any) -> Any:
        if isinstance(value, (str, int, float)) and units.parse_duration(value) < 0:
            raise ValueError("start time must be >= 0")
        return value

    @field_validator("size")
    @classmethod
    def _positive_size(cls, value: Any) -> Any:
        if value != "bulk" and value <= 0:
            raise ValueError("size must be 'bulk' or a positive size such as '2MB'")
        return value

    def latest_start(self) -> float:
        """Latest possible start time (s)."""
        return self.start.uniform[1] if isinstance(self.start, UniformStart) else self.start


class SizeLaw(_Strict):
    """Distribution of transfer sizes (bytes).

    ``fixed`` (``size``), ``exponential`` (``mean``), ``pareto`` (shape
    ``alpha`` > 1, scale ``min``, optional truncation ``max``: a bounded Pareto) or
    ``zipf`` (Zipf's rank-size law of exponent ``alpha`` > 0: the r-th largest of n
    sizes is proportional to r^-alpha, i.e. P(S > s) proportional to s^(-1/alpha), a
    Pareto law of index 1/alpha on [``min``, ``max``]; ``max`` is required when
    alpha >= 1, whose unbounded mean is infinite). For a Pareto or Zipf law, give
    ``min`` or ``mean`` (not both); a generator with a ``load`` may leave the scale
    open, and it is calibrated to that load.
    """

    law: Literal["fixed", "exponential", "pareto", "zipf"]
    size: Size | None = Field(default=None, gt=0)
    mean: Size | None = Field(default=None, gt=0)
    alpha: float | None = Field(default=None, gt=0)
    min: Size | None = Field(default=None, gt=0)
    max: Size | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _parameters(self) -> SizeLaw:
        allowed = {
            "fixed": {"size"},
            "exponential": {"mean"},
            "pareto": {"alpha", "min", "mean", "max"},
            "zipf": {"alpha", "min", "mean", "max"},
        }[self.law]
        given = {k for k in ("size", "mean", "alpha", "min", "max") if getattr(self, k) is not None}
        if given - allowed:
            extra = sorted(given - allowed)
            raise ValueError(f"a {self.law} law takes {sorted(allowed)}, not {extra}")
        if self.law == "pareto" and (self.alpha is None or self.alpha <= 1):
            raise ValueError("a pareto law needs alpha greater than 1")
        if self.law == "zipf":
            if self.alpha is None:
                raise ValueError("a zipf law needs alpha (its rank exponent, > 0)")
            if self.alpha >= 1 and self.max is None:
                raise ValueError("a zipf law with alpha >= 1 needs max (its mean is infinite)")
        if self.law in ("pareto", "zipf"):
            if self.min is not None and self.mean is not None:
                raise ValueError(f"give min or mean for a {self.law} law, not both")
            if self.min is not None and self.max is not None and self.max <= self.min:
                raise ValueError("max must exceed min")
        return self

    @property
    def tail_index(self) -> float | None:
        """Pareto index of a power law: P(S > s) ~ s^-index (pareto: alpha; zipf: 1/alpha)."""
        if self.alpha is None:
            return None
        return float(self.alpha) if self.law == "pareto" else 1.0 / float(self.alpha)


class TransferGenerator(_Endpoints):
    """Finite TCP transfers arriving as a Poisson process (web-like load).

    Give two of ``arrival_rate``, ``load`` and a size law whose mean is known;
    the third follows (:func:`tcprepro.traffic.calibrate`). ``load`` is the
    offered load as a fraction of the goodput capacity of the bottleneck
    direction the transfers cross: link rate x MSS / (MSS + TCP/IP
    headers). Each transfer is a new connection.
    """

    kind: Literal["poisson_transfers"]
    variant: VariantConfig
    arrival_rate: Frequency | None = Field(default=None, gt=0, description="arrivals per second")
    load: float | None = Field(default=None, gt=0, le=2)
    size: SizeLaw
    start: Duration = Field(default=0.0, ge=0, description="first possible arrival (s)")
    stop: Duration | None = Field(default=None, gt=0, description="last arrival (default: end)")
    max_rate: Rate | None = Field(
        default=None,
        gt=0,
        description="each transfer's sending socket paced at most at this rate (bit/s of "
        "payload; ns-3 from the end of the initial window, Linux from the 11th segment)",
    )
    request_bytes: Size | None = Field(
        default=None,
        gt=0,
        description="the receiving end of each transfer sends a request of this many bytes "
        "once the connection is up, and the sender answers only when it has it (a browser's "
        "request crossing the receiver's uplink); None: the sender starts at once",
    )

    @model_serializer(mode="wrap")
    def _without_unset_rate(self, handler: Any) -> dict[str, Any]:
        return _without_unset(_without_unset(handler(self), "max_rate"), "request_bytes")


class PacketGenerator(_Endpoints):
    """Poisson packet arrivals (UDP) at a given load, split over ``flows`` flows.

    ``load`` is the fraction of the bottleneck direction's link rate the packets
    occupy (``packet_size`` is the IP packet size). Each of the ``flows`` flows
    (distinct UDP ports) carries an equal share of the load.
    """

    kind: Literal["poisson_packets"]
    load: float = Field(gt=0, le=2)
    packet_size: Size = Field(default=1000, ge=64, le=9000)
    flows: int = Field(default=1, ge=1)
    start: Duration = Field(default=0.0, ge=0)
    stop: Duration | None = Field(default=None, gt=0)


Generator = Annotated[TransferGenerator | PacketGenerator, Field(discriminator="kind")]
