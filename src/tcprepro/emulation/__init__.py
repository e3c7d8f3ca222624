"""The Mininet emulation backend: the same scenarios with real Linux TCP.

Who does what (as in Mininet: nodes execute commands, interfaces configure
themselves, links connect nodes):

- :mod:`~tcprepro.emulation.linux` knows the Linux side: the ``tc`` commands of
  one shaped link direction (htb rate, pfifo buffer, netem delay), the
  sysctls and route metrics of the TCP settings, and the parsers of
  ``tc -s -j qdisc`` and ``ss -tin`` output. Pure functions, testable anywhere.
- :mod:`~tcprepro.emulation.topo` turns a :class:`~tcprepro.network_plan.NetworkPlan`
  into a Mininet ``Topo`` (hosts and Linux routers joined by veth pairs, no
  Open vSwitch) whose interfaces shape themselves and switch offloads off.
- :mod:`~tcprepro.emulation.sampler` is the small process that samples
  ``ss``/``tc`` inside one network namespace at the scenario's interval.
- :mod:`~tcprepro.emulation.fidelity` probes each link before a run (rate,
  RTT), watches the CPU during it, and gives the verdict stored in the dataset.
- :mod:`~tcprepro.emulation.capabilities` says what a scenario needs from the
  kernel (qdiscs, congestion controls) and what each route lacks for it on this host.
- :mod:`~tcprepro.emulation.routes` holds one type per route (native, UML, VM): what
  it lacks and offers, its versions, traffic tool, parallelism and how its batches run;
  it picks the route this host takes, refusing up front with one message listing what
  is missing. :mod:`~tcprepro.emulation.runner` runs a batch on the route it is given;
  :mod:`~tcprepro.emulation.batch` is the boot plumbing the booted routes share.
- :mod:`~tcprepro.emulation.backend` runs one repetition: capability checks,
  topology, probes, iperf3 flows, sampling, teardown (always), dataset. Its
  parts: :mod:`~tcprepro.emulation.network` (the Mininet network of the run,
  always torn down), :mod:`~tcprepro.emulation.probe` (the rate and RTT probes
  before the run), :mod:`~tcprepro.emulation.iperf` (the traffic tool's command
  lines and reports) and :mod:`~tcprepro.emulation.traces` (the samplers' output
  read back as arrays).
- :mod:`~tcprepro.emulation.vm` is the full-kernel VM route (virtme-ng, QEMU
  KVM or TCG): one boot per batch of runs; :mod:`~tcprepro.emulation.guest`
  is what runs inside it.
- :mod:`~tcprepro.emulation.uml` is the virtual-clock route: User-mode Linux
  booted with ``time-travel=inf-cpu``, one boot per batch, the same guest entry
  point as the VM; :mod:`~tcprepro.emulation.umlkernel` builds (once, cached)
  its kernel from Debian's ``linux-source-6.1``.
- :mod:`~tcprepro.analysis.crosscheck` compares ns-3 and emulation.
"""
