"""The emulation routes, one type each, and the choice among them.

This module owns everything that differs from one emulation route to another;
nothing else in tcprepro asks which route it holds. A route answers:

- its ``name`` (``--route``, ``emulation_route:``, the datasets' ``route``, the cache
  keys), its ``label`` in the paper and its ``title`` in messages;
- what it lacks on this host for a scenario's needs (:meth:`Route.missing`, from
  :mod:`tcprepro.emulation.capabilities`), the congestion controls its kernel offers,
  its kernel release and the versions that key a cached run (:meth:`Route.versions`),
  the traffic tool a job asking for one gets;
- whether its clock is virtual and a batch may be shared among boots side by side
  (:meth:`Route.boots`), and how a batch runs (:meth:`Route.run_batch`);
- inside the guest, what the guest does before the runs and records with them.

:data:`NATIVE` (Mininet on the running kernel, as root), :data:`UML` (User-mode Linux
with a virtual clock, :mod:`tcprepro.emulation.uml`) and :data:`VM` (virtme-ng booting
Debian's full kernel, :mod:`tcprepro.emulation.vm`) are the routes, in the order
:func:`choose_route` tries them. A route's name is parsed into its object at the
boundary (:func:`get_route`); the object is what is passed on.

The module imports nothing heavy at load (the CLI reads :data:`ROUTES`).
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tcprepro.errors import CapabilityError, ConfigError

if TYPE_CHECKING:
    from tcprepro.emulation.batch import BatchSettings, EmulationJob, JobResult
    from tcprepro.emulation.capabilities import Missing, Needs
    from tcprepro.scenario import Scenario

__all__ = [
    "NATIVE",
    "REGISTRY",
    "ROUTES",
    "UML",
    "VM",
    "Route",
    "RouteChoice",
    "batch_needs",
    "choose_for",
    "choose_route",
    "get_route",
    "route_report",
]


class Route:
    """An emulation route: what it lacks, offers and records, and how its batches run."""

    #: ``--route`` value, dataset attribute, part of the cache keys
    name: ClassVar[str]
    #: the paper's name of its results, ``Linux (UML)``
    label: ClassVar[str]
    #: the route in messages, ``UML route``
    title: ClassVar[str]
    #: guest time is virtual: a busy host slows a run but does not change it
    virtual_clock: ClassVar[bool] = False
    #: a batch may be shared among boots side by side (one per core)
    runs_in_parallel: ClassVar[bool] = False
    #: what the reason of an automatic choice adds, and that of a forced one
    chosen_note: ClassVar[str] = ""
    forced_note: ClassVar[str] = ""

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<{self.title}>"

    def __reduce__(self) -> str:
        return self.name.upper()  # copied and pickled as the module's one instance

    # ---- on the host, before a batch ------------------------------------------

    def missing(self, needs: Needs) -> list[Missing]:
        """What this route lacks on this host for ``needs`` (empty: it can run them)."""
        raise NotImplementedError

    def kernel_release(self) -> str:
        """The release of the kernel the runs use."""
        raise NotImplementedError

    def offered_variants(self) -> set[str]:
        """Linux congestion-control names the route's kernel offers."""
        raise NotImplementedError

    def traffic_tool(self, requested: str) -> str:
        """The traffic tool a job asking for ``requested`` uses on this route."""
        return requested

    def versions(self, tool: str = "iperf3") -> dict[str, str]:
        """Versions that change an emulated run's result here (kernel, iperf3, tcprepro).

        A tool other than iperf3 adds its name and version (iperf3 runs keep their keys).
        """
        from tcprepro.emulation import capabilities

        return capabilities.versions_record(
            self.name, self.kernel_release(), self.traffic_tool(tool)
        )

    def boots(self, jobs: int, parallel: int) -> int:
        """How many boots side by side run ``jobs`` when ``parallel`` are allowed."""
        if not self.runs_in_parallel:
            return 1
        return max(1, min(parallel, jobs))

    def reason(self, forced: bool, lacking: Sequence[tuple[Route, list[Missing]]]) -> str:
        """Why this route was taken: forced, or the routes before it lack ``lacking``."""
        if forced:
            return f"forced (--route {self.name}){self.forced_note}"
        parts = [
            f"the {route.title}{' lacks' if i == 0 else ''}: {', '.join(m.name for m in missing)}"
            for i, (route, missing) in enumerate(lacking)
        ]
        return "; ".join([*parts, *([self.chosen_note] if self.chosen_note else [])])

    # ---- a batch ------------------------------------------------------------------

    def run_batch(
        self,
        jobs: Sequence[EmulationJob],
        settings: BatchSettings,
        cancel: Any = None,
    ) -> list[JobResult]:
        """Run ``jobs`` (one boot on the booted routes); one result each, in order.

        ``cancel`` (a ``threading.Event``) ends a boot as an interrupt would.
        """
        raise NotImplementedError

    # ---- inside the guest ----------------------------------------------------------

    def guest_clock(self, batch: dict[str, Any]) -> Callable[[], float] | None:
        """The host's wall clock as the guest reads it (None: the guest's own clock)."""
        del batch
        return None

    def guest_prepare(self, batch: dict[str, Any]) -> dict[str, Any]:
        """What the guest does before the runs (load modules); what it did."""
        del batch
        return {}

    def guest_attrs(
        self, batch: dict[str, Any], boot_s: float, prepared: dict[str, Any]
    ) -> dict[str, Any]:
        """Dataset attributes every run of the boot shares."""
        del batch, boot_s, prepared
        return {}


def _kernel_offers(kernel: Any) -> set[str]:
    """Congestion controls of tcprepro's variants that a guest kernel builds."""
    if kernel is None:
        return set()
    from tcprepro.variants import VARIANTS

    names = {v.linux_name for v in VARIANTS.values() if v.linux_name}
    names |= {name for v in VARIANTS.values() for name in v.linux_with_params.values()}
    return {name for name in names if kernel.has_congestion_control(name)}


class NativeRoute(Route):
    """Mininet on the running kernel, as root, one run after the other in real time."""

    name = "native"
    label = "Linux (native)"
    title = "native route"

    def missing(self, needs: Needs) -> list[Missing]:
        from tcprepro.emulation import capabilities

        return capabilities.native_missing(needs)

    def kernel_release(self) -> str:
        return platform.release()

    def offered_variants(self) -> set[str]:
        from tcprepro.emulation import capabilities

        return set(capabilities.congestion_controls())

    def reason(self, forced: bool, lacking: Sequence[tuple[Route, list[Missing]]]) -> str:
        del forced, lacking
        return f"the running kernel ({platform.release()}) has it all"

    def run_batch(
        self, jobs: Sequence[EmulationJob], settings: BatchSettings, cancel: Any = None
    ) -> list[JobResult]:
        del cancel  # one run after the other in this process: an interrupt ends them
        return [self._run(job, settings) for job in jobs]

    def _run(self, job: EmulationJob, settings: BatchSettings) -> JobResult:
        import time

        from tcprepro.emulation.backend import EmulationOptions, run_scenario
        from tcprepro.emulation.batch import JobResult, report
        from tcprepro.store import write_dataset

        started = time.perf_counter()
        options = EmulationOptions(
            route=self.name,
            probe_s=settings.probe_s,
            tolerances=settings.tolerances,
            extra_attrs={**job.attrs, **settings.route_attrs},
            traffic_tool=job.tool,
            versions=self.versions(job.tool),
        )
        try:
            ds = run_scenario(job.scenario, job.rep, options=options)
        except Exception as exc:  # reported per job; the batch goes on
            result = JobResult(job.output, False, f"{type(exc).__name__}: {exc}")
            report(result, job, settings.log)
            return result
        write_dataset(ds, job.output)
        result = JobResult(
            job.output,
            True,
            fidelity_ok=bool(ds.attrs["fidelity_ok"]),
            wall_s=time.perf_counter() - started,
        )
        report(result, job, settings.log)
        return result


class UmlRoute(Route):
    """User-mode Linux with a virtual clock: one boot per batch, boots side by side."""

    name = "uml"
    label = "Linux (UML)"
    title = "UML route"
    virtual_clock = True
    # in virtual time a busy host does not change the results: one boot per core
    runs_in_parallel = True
    chosen_note = "UML has a virtual clock"
    forced_note = "; virtual clock"

    def missing(self, needs: Needs) -> list[Missing]:
        from tcprepro.emulation import capabilities

        return capabilities.uml_missing(needs)

    def kernel_release(self) -> str:
        from tcprepro.emulation import uml

        return uml.kernel_release()

    def offered_variants(self) -> set[str]:
        from tcprepro.emulation import umlkernel

        return _kernel_offers(umlkernel.find_kernel())

    def traffic_tool(self, requested: str) -> str:
        from tcprepro.emulation import uml

        return uml.traffic_tool(requested)

    def run_batch(
        self, jobs: Sequence[EmulationJob], settings: BatchSettings, cancel: Any = None
    ) -> list[JobResult]:
        from tcprepro.emulation import batch, uml

        statuses = uml.run_batch(
            batch.guest_jobs(jobs, settings),
            log=settings.log,
            tolerances=settings.tolerances,
            cancel=cancel,
        )
        return batch.results(jobs, statuses, settings.log)

    def guest_clock(self, batch: dict[str, Any]) -> Callable[[], float] | None:
        from tcprepro.emulation import uml

        # the guest's clock is virtual: the host's stamps a shared file
        return functools.partial(uml.host_wall_clock, batch["clock_folder"])

    def guest_attrs(
        self, batch: dict[str, Any], boot_s: float, prepared: dict[str, Any]
    ) -> dict[str, Any]:
        from tcprepro.emulation import uml

        del batch, prepared
        return uml.guest_attrs(boot_s)


class VmRoute(Route):
    """virtme-ng booting Debian's full kernel in QEMU: one boot per batch, real time."""

    name = "vm"
    label = "Linux (VM)"
    title = "VM route"

    def missing(self, needs: Needs) -> list[Missing]:
        from tcprepro.emulation import capabilities

        return capabilities.vm_missing(needs)

    def kernel_release(self) -> str:
        from tcprepro.emulation import vm

        kernel = vm.find_kernel()
        return kernel.release if kernel else "none"

    def offered_variants(self) -> set[str]:
        from tcprepro.emulation import vm

        return _kernel_offers(vm.find_kernel())

    def run_batch(
        self, jobs: Sequence[EmulationJob], settings: BatchSettings, cancel: Any = None
    ) -> list[JobResult]:
        from tcprepro.emulation import batch, vm

        del cancel  # real time: never side by side
        statuses = vm.run_batch(
            batch.guest_jobs(jobs, settings), log=settings.log, tolerances=settings.tolerances
        )
        return batch.results(jobs, statuses, settings.log)

    def guest_prepare(self, batch: dict[str, Any]) -> dict[str, Any]:
        """Load the modules the batch needs (``sch_netem``, ``tcp_<variant>``...)."""
        import json
        import subprocess

        from tcprepro.emulation import capabilities
        from tcprepro.scenario_io import load_scenario_dict

        needs = capabilities.Needs((), ())
        for job in batch["jobs"]:
            needs = needs | capabilities.scenario_needs(
                load_scenario_dict(json.loads(job["scenario_json"]))
            )
        modules = [f"sch_{kind}" for kind in needs.qdiscs if kind != "pfifo"]
        modules += [f"tcp_{name}" for name in needs.congestion_controls if name != "reno"]
        loaded = {}
        for module in modules:
            result = subprocess.run(
                ["modprobe", module], capture_output=True, text=True, check=False
            )
            loaded[module] = result.returncode == 0 or result.stderr.strip()
        return loaded

    def guest_attrs(
        self, batch: dict[str, Any], boot_s: float, prepared: dict[str, Any]
    ) -> dict[str, Any]:
        import json

        return {
            "vm_accel": batch["accel"],
            "vm_accel_reason": batch["accel_reason"],
            "vm_boot_s": round(boot_s, 1),
            "vm_modules": json.dumps(prepared, sort_keys=True),
        }


NATIVE = NativeRoute()
UML = UmlRoute()
VM = VmRoute()
#: the routes by name, in the order an automatic choice tries them
REGISTRY: dict[str, Route] = {route.name: route for route in (NATIVE, UML, VM)}
#: what ``--route`` and ``emulation_route:`` accept
ROUTES = ("auto", *REGISTRY)


def get_route(route: str | Route) -> Route:
    """The route named ``route`` (a route is returned as it is).

    Raises
    ------
    ConfigError
        For an unknown name (``auto`` is not a route: :func:`choose_route` picks one).
    """
    if isinstance(route, Route):
        return route
    if route not in REGISTRY:
        raise ConfigError(f"route: {route!r} is not one of {', '.join(ROUTES)}")
    return REGISTRY[route]


@dataclass(frozen=True)
class RouteChoice:
    """The route a batch of emulated runs takes, and why."""

    route: Route
    reason: str


def choose_route(needs: Needs, forced: str | Route = "auto") -> RouteChoice:
    """Pick the route for ``needs``: native when it has everything, else UML, else the VM.

    ``forced`` (a route or its name) takes that route when it has everything.

    Raises
    ------
    CapabilityError
        Naming every missing capability of the forced route, or of every route.
    ConfigError
        For an unknown route name.
    """
    if isinstance(forced, str) and forced not in ROUTES:
        raise ConfigError(f"route: {forced!r} is not one of {', '.join(ROUTES)}")
    auto = forced == "auto"
    candidates = list(REGISTRY.values()) if auto else [get_route(forced)]
    lacking: list[tuple[Route, list[Missing]]] = []
    for route in candidates:
        missing = route.missing(needs)
        if not missing:
            return RouteChoice(route, route.reason(not auto, lacking))
        lacking.append((route, missing))
    if not auto:
        [(route, missing)] = lacking
        raise CapabilityError(_missing_message(f"{route.title} (forced)", missing))
    raise CapabilityError("\n".join(_missing_message(r.title, m) for r, m in lacking))


def _missing_message(route: str, missing: Iterable[Missing]) -> str:
    lines = "\n  ".join(str(m) for m in missing)
    return f"missing capabilities for the {route}:\n  {lines}"


def batch_needs(
    scenarios: Iterable[Scenario], tools: Iterable[str] = (), *, variants: bool = True
) -> Needs:
    """What a batch of scenarios and traffic tools needs (htb always).

    ``variants=False`` leaves the congestion controls out (a figure's cells are
    filtered by what the route's kernel offers instead).
    """
    from tcprepro.emulation import capabilities

    needs = capabilities.Needs(("htb",), ())
    for scenario in scenarios:
        scenario_needs = capabilities.scenario_needs(scenario)
        if not variants:
            scenario_needs = capabilities.Needs(scenario_needs.qdiscs, ())
        needs = needs | scenario_needs
    for tool in tools:
        needs = needs | capabilities.tool_needs(tool)
    return needs


def choose_for(
    scenarios: Iterable[Scenario],
    forced: str | Route = "auto",
    tools: Iterable[str] = (),
    *,
    variants: bool = True,
) -> RouteChoice:
    """The route a batch of scenarios takes (raises CapabilityError/ConfigError up front)."""
    return choose_route(batch_needs(scenarios, tools, variants=variants), forced)


def route_report(needs_by_label: dict[str, Needs]) -> list[str]:
    """Lines saying which route each kind of scenario takes on this host, and why."""
    lines = []
    for label, needs in needs_by_label.items():
        try:
            choice = choose_route(needs)
            text = f"{choice.route} ({choice.reason})"
        except CapabilityError as exc:
            text = "none: " + str(exc).replace("\n", "; ")
        lines.append(f"{label}: {text}")
    return lines
