"""Registry of TCP congestion-control variants and queue disciplines.

This module owns the names a scenario may use for a congestion control
(``variant``) or a queue discipline (``qdisc``), what each maps to in every
backend (an ns-3 TypeId, a Linux ``tcp_congestion_control`` name, a ``tc``
qdisc) and where the model comes from. Backends look names up here; nothing
else in the package hard-codes them.

A variant whose model is not built yet has ``status`` other than
``"available"``: it is still a known name (so a figure can show a "pending"
cell for it), but a scenario that selects it is refused before any run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "MODEL_SOURCES",
    "QDISCS",
    "VARIANTS",
    "Qdisc",
    "Variant",
    "canonical_variant",
    "get_qdisc",
    "get_variant",
    "params_key",
    "variant_label",
]


@dataclass(frozen=True)
class Variant:
    """A congestion-control algorithm as the scenario files name it."""

    name: str
    ns3_type: str
    reference: str
    model: str = "ns-3 built-in"
    linux_name: str | None = None
    status: str = "available"
    aliases: tuple[str, ...] = ()
    notes: str = ""
    #: ns-3 attributes always set for this variant (name -> value as text)
    ns3_defaults: dict[str, str] = field(default_factory=dict)
    #: stem of tcprepro's C++ source of the model (``tcp-compound`` for
    #: ``cpp/tcp-compound.{h,cc}``); its runs' cache keys cover that source
    cpp_source: str | None = None
    #: Linux modules that are this variant with some of its parameters (``Alpha=1,Beta=2``,
    #: :func:`params_key`, -> ``reno``): the emulation runs these parameter sets only
    linux_with_params: dict[str, str] = field(default_factory=dict)
    #: the name the report prints (figures, legends, tables); the registry name if empty
    label: str = ""

    @property
    def available(self) -> bool:
        """True when the ns-3 model exists in this version of tcprepro."""
        return self.status == "available"

    @property
    def shown_name(self) -> str:
        """The name the report prints: :attr:`label`, else the registry name."""
        return self.label or self.name


def params_key(params: dict[str, object]) -> str:
    """A variant's parameters as one text, sorted by name: ``Alpha=1,Beta=2``."""
    return ",".join(
        f"{name}={value:g}" if isinstance(value, (int, float)) else f"{name}={value}"
        for name, value in sorted(params.items())
    )


@dataclass(frozen=True)
class Qdisc:
    """A queue discipline: how a bottleneck buffer of B packets is managed."""

    name: str
    ns3_type: str
    description: str
    #: the name the report prints (the parameters table, captions); the registry name if empty
    label: str = ""
    #: ns-3 attribute that receives the buffer size as "<B>p"
    ns3_limit_attribute: str = "MaxSize"
    linux_qdisc: str | None = None
    status: str = "available"
    #: stem of tcprepro's C++ source of the model (see Variant.cpp_source)
    cpp_source: str | None = None

    @property
    def available(self) -> bool:
        """True when the ns-3 model exists in this version of tcprepro."""
        return self.status == "available"

    @property
    def shown_name(self) -> str:
        """The name the report prints: :attr:`label`, else the registry name."""
        return self.label or self.name


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "NewReno",
            "ns3::TcpNewReno",
            "RFC 5681 / RFC 6582",
            linux_name="reno",
            aliases=("Reno",),
            label="Reno",
            notes="ns-3's TcpNewReno is Reno's AIMD; NewReno/SACK recovery lives in the socket.",
        ),
        Variant(
            "Cubic",
            "ns3::TcpCubic",
            "Ha, Rhee, Xu 2008; RFC 9438",
            linux_name="cubic",
            label="CUBIC",
        ),
        Variant("Vegas", "ns3::TcpVegas", "Brakmo, Peterson 1995", linux_name="vegas"),
        Variant(
            "HighSpeed",
            "ns3::TcpHighSpeed",
            "RFC 3649",
            linux_name="highspeed",
            aliases=("HSTCP",),
            label="HSTCP",
        ),
        Variant("Scalable", "ns3::TcpScalable", "Kelly 2003", linux_name="scalable"),
        Variant(
            "WestwoodPlus",
            "ns3::TcpWestwoodPlus",
            "Mascolo et al. 2001; Grieco 2004",
            linux_name="westwood",
            aliases=("Westwood+",),
            label="Westwood+",
        ),
        Variant("Bic", "ns3::TcpBic", "Xu, Harfoush, Rhee 2004", linux_name="bic", label="BIC"),
        Variant(
            "Htcp",
            "ns3::TcpHtcp",
            "Leith, Shorten 2004",
            linux_name="htcp",
            aliases=("H-TCP",),
            label="H-TCP",
        ),
        Variant("Illinois", "ns3::TcpIllinois", "Liu, Basar, Srikant 2006", linux_name="illinois"),
        Variant("Veno", "ns3::TcpVeno", "Fu, Liew 2003", linux_name="veno"),
        Variant(
            "Yeah",
            "ns3::TcpYeah",
            "Baiocchi, Castellani, Vacirca 2007",
            linux_name="yeah",
            aliases=("YeAH",),
        ),
        Variant(
            "Hybla",
            "ns3::TcpHyblaMinRtt",
            "Caini, Firrincieli 2004",
            model="tcprepro",
            cpp_source="tcp-hybla",
            linux_name="hybla",
            notes="rho = max(min smoothed RTT / RRTT, 1), recomputed as the minimum falls; "
            "RRTT 25 ms (the paper's and Linux's RTT0).",
        ),
        Variant(
            "HyblaNs3",
            "ns3::TcpHybla",
            "Caini, Firrincieli 2004 (ns-3's model)",
            notes="ns-3's built-in Hybla: keeps rho = 1 in a simulation, so it grows as Reno "
            "(docs/variants.md); kept for comparison.",
        ),
        Variant(
            "Bbr",
            "ns3::TcpBbr",
            "Cardwell et al. 2016",
            linux_name="bbr",
            aliases=("BBR",),
            notes="needs pacing (set pacing: true on the flow).",
        ),
        Variant(
            "Compound",
            "ns3::TcpCompound",
            "Tan, Song, Zhang, Sridharan 2006; draft-sridharan-tcpm-ctcp-02",
            model="tcprepro",
            cpp_source="tcp-compound",
            aliases=("CTCP",),
            notes="Alpha 1/8, Beta 1/2, K 0.75, Gamma 30 pkts (fixed), Eta 1, LowWindow 38 pkts.",
        ),
        Variant(
            "Fast",
            "ns3::TcpFast",
            "Jin, Wei, Low 2004; Wei, Jin, Low, Hegde 2006",
            model="tcprepro",
            cpp_source="tcp-fast",
            aliases=("FAST",),
            label="FAST",
            notes="Alpha 200 pkts, Gamma 0.5 (choices; set Alpha per scenario).",
        ),
        Variant(
            "AIMD",
            "ns3::TcpGeneralizedAimd",
            "catalogue study B parameterisation",
            model="tcprepro",
            cpp_source="tcp-generalized",
            notes="cwnd += Alpha/cwnd per ACK, cwnd -= cwnd/Beta on loss; Alpha 1, Beta 2 (Reno).",
            # Linux's Reno: 1 segment per cwnd ACKed segments, ssthresh = cwnd/2
            linux_with_params={"Alpha=1,Beta=2": "reno"},
        ),
        Variant(
            "MIMD",
            "ns3::TcpGeneralizedMimd",
            "catalogue study B parameterisation",
            model="tcprepro",
            cpp_source="tcp-generalized",
            notes="cwnd += 1/Alpha per ACKed segment, cwnd -= cwnd*2^-Beta on loss; "
            "Alpha 50, Beta 3 (Scalable).",
            # Linux's tcp_scalable (6.1): 1 segment per min(cwnd, 100) ACKed segments,
            # ssthresh = cwnd - cwnd/8
            linux_with_params={"Alpha=100,Beta=3": "scalable"},
        ),
        Variant(
            "YeahPaper",
            "ns3::TcpYeahPaper",
            "Baiocchi, Castellani, Vacirca 2007, section III",
            model="tcprepro",
            cpp_source="tcp-yeah-paper",
            # emulated: the authors' own Linux module (tcp_yeah), whose constants it takes
            linux_name="yeah",
            aliases=("YeAH-paper",),
            label="YeAH",
            notes="YeAH rules as written in the paper; constants of the authors' Linux module "
            "(Alpha=Q_max 80, Phy 8, Rho 16, Zeta 50, Delta 3, StcpAiFactor 100), which the "
            "Mininet backend runs in its place.",
        ),
        Variant(
            "Africa",
            "ns3::TcpAfrica",
            "King, Baraniuk, Riedi 2005",
            model="tcprepro",
            status="pending: not built, the published description used here does not fix "
            "its parameters (issue #3, docs/variants.md)",
        ),
    )
}

QDISCS: dict[str, Qdisc] = {
    q.name: q
    for q in (
        Qdisc(
            "fifo",
            "ns3::FifoQueueDisc",
            "FIFO with tail drop (DropTail)",
            label="FIFO (drop-tail)",
            linux_qdisc="pfifo",
        ),
        Qdisc(
            "red",
            "ns3::RedQueueDisc",
            "Random Early Detection (ns-3 defaults)",
            label="RED",
            linux_qdisc="red",
        ),
        Qdisc(
            "codel",
            "ns3::CoDelQueueDisc",
            "CoDel AQM (ns-3 defaults)",
            label="CoDel",
            linux_qdisc="codel",
        ),
        Qdisc(
            "fq_codel",
            "ns3::FqCoDelQueueDisc",
            "FQ-CoDel (ns-3 defaults)",
            label="FQ-CoDel",
            linux_qdisc="fq_codel",
        ),
        Qdisc(
            "pfq_lqd",
            "ns3::PfqLqdQueueDisc",
            "per-flow start-time fair queueing with priority to flows below the fair rate "
            "(PFQ), shared buffer, drop from the longest queue (LQD); DropFront: true drops "
            "its first packet",
            label="PFQ/LQD",
            # Linux twin (tcprepro.emulation.linux.sfq_arguments): stochastic fairness
            # queueing, DRR over hashed flows with one shared limit, dropping from the
            # longest flow when full, at its head with headdrop (DropFront true), else at
            # its tail; no priority to flows below their fair rate (docs/emulation.md, X6)
            linux_qdisc="sfq",
            cpp_source="pfq-lqd-queue-disc",
        ),
    )
}

#: stems of tcprepro's C++ model sources (each covered only by the keys of runs using it)
MODEL_SOURCES: frozenset[str] = frozenset(
    entry.cpp_source for entry in (*VARIANTS.values(), *QDISCS.values()) if entry.cpp_source
)

_VARIANT_LOOKUP = {key.lower(): v.name for v in VARIANTS.values() for key in (v.name, *v.aliases)}


def canonical_variant(name: str) -> str:
    """Return the registry name of a variant, accepting aliases and any letter case.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the known names.
    """
    try:
        return _VARIANT_LOOKUP[name.strip().lower()]
    except KeyError:
        known = ", ".join(VARIANTS)
        raise ValueError(f"unknown TCP variant {name!r}; known variants: {known}") from None


def get_variant(name: str) -> Variant:
    """Return the :class:`Variant` registered under ``name`` (or one of its aliases)."""
    return VARIANTS[canonical_variant(name)]


def get_qdisc(name: str) -> Qdisc:
    """Return the :class:`Qdisc` registered under ``name``."""
    try:
        return QDISCS[name]
    except KeyError:
        known = ", ".join(QDISCS)
        raise ValueError(f"unknown queue discipline {name!r}; known: {known}") from None


def variant_label(variant: str) -> str:
    """A variant as the report names it: ``HighSpeed`` -> ``HSTCP``.

    The registry's :attr:`Variant.shown_name`; a name the registry does not know, as given.
    """
    known = VARIANTS.get(variant)
    return known.shown_name if known else variant
