"""The scenario model: what a scenario is, validated, typed and in SI units.

This package owns what a scenario *is*: a topology (links with rate, one-way
delay, buffer in packets and queue discipline per direction), TCP flows
(variant, endpoints, start time or random stagger, bulk or sized), TCP
settings, duration, warm-up, seed and repetitions. Both backends (ns-3 and
Mininet) run the same validated :class:`Scenario`.

Reading scenario files (``base:`` chains, ``--set`` overrides) is
:mod:`tcprepro.scenario_io`'s job; every error it raises is a
:class:`~tcprepro.errors.ConfigError` that names the offending field, before
anything runs.

Quantities carry units in the file (``"10Mbps"``, ``"42ms"``, ``"200kB"``) and
are stored in SI base units (bit/s, s, bytes) once validated.

The package: :mod:`~tcprepro.scenario.base` (quantities, the strict model),
:mod:`~tcprepro.scenario.links` (the topologies), :mod:`~tcprepro.scenario.flows`
(flows and generated traffic), :mod:`~tcprepro.scenario.stack` (TCP and the testbed's
stack) and :mod:`~tcprepro.scenario.model` (:class:`Scenario`).
"""

from tcprepro.scenario.base import Duration as Duration
from tcprepro.scenario.base import Frequency as Frequency
from tcprepro.scenario.base import Rate as Rate
from tcprepro.scenario.base import Scalar as Scalar
from tcprepro.scenario.base import Size as Size
from tcprepro.scenario.flows import FlowConfig, VariantConfig
from tcprepro.scenario.flows import Generator as Generator
from tcprepro.scenario.flows import PacketGenerator as PacketGenerator
from tcprepro.scenario.flows import SizeLaw as SizeLaw
from tcprepro.scenario.flows import TransferGenerator as TransferGenerator
from tcprepro.scenario.flows import UniformStart as UniformStart
from tcprepro.scenario.links import AccessTopology, DumbbellTopology, LinkDirection
from tcprepro.scenario.links import SenderLink as SenderLink
from tcprepro.scenario.links import Topology as Topology
from tcprepro.scenario.model import Note as Note
from tcprepro.scenario.model import Scenario
from tcprepro.scenario.model import TraceSettings as TraceSettings
from tcprepro.scenario.stack import TCP_PROFILE_KNOBS as TCP_PROFILE_KNOBS
from tcprepro.scenario.stack import Counting as Counting
from tcprepro.scenario.stack import GrowthCounting as GrowthCounting
from tcprepro.scenario.stack import HostStack, StackSettings, TcpSettings, goodput_capacity_bps

__all__ = [
    "AccessTopology",
    "DumbbellTopology",
    "FlowConfig",
    "HostStack",
    "LinkDirection",
    "Scenario",
    "StackSettings",
    "TcpSettings",
    "VariantConfig",
    "goodput_capacity_bps",
]
