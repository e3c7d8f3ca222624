"""What runs inside the VM of the full-kernel route: a batch of emulated runs.

This module owns the guest side of :mod:`tcprepro.emulation.vm`. Started by
``vng --exec`` as ``python -m tcprepro.emulation.guest <batch.json>``, it
loads the kernel modules the batch needs (``sch_netem``, ``sch_htb``,
``tcp_<variant>``...), raises the VM's socket-buffer limits (the VM is thrown
away afterwards), then runs each job with the native code path
(:func:`tcprepro.emulation.backend.run_scenario`) and appends one status line
per job to ``status.jsonl`` in the shared folder. A failing job is recorded
and the next one runs; the guest always exits normally so that the VM powers
off.

The UML route (:mod:`tcprepro.emulation.uml`) runs the same entry point. The batch
names its route; what differs from one route to another (loading modules, a virtual
clock read against the host's, the attributes every run records) is asked of the
route (:class:`tcprepro.emulation.routes.Route`). With a host clock, each dataset also
records the guest and host wall seconds of the run and their ratio.
"""

from __future__ import annotations

import json
import platform
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the batch described by ``argv[0]`` (a JSON file in the shared folder)."""
    args = list(sys.argv[1:] if argv is None else argv)
    batch_path = Path(args[0])
    batch = json.loads(batch_path.read_text())
    status_path = batch_path.parent / "status.jsonl"
    from tcprepro.emulation.routes import get_route

    route = get_route(str(batch["route"]))
    clock = route.guest_clock(batch)
    boot_s = (clock or time.time)() - float(batch["launched_wall_s"])
    prepared = route.guest_prepare(batch)
    for key in ("net.core.rmem_max", "net.core.wmem_max"):
        Path("/proc/sys", *key.split(".")).write_text(str(64 * 1024 * 1024))

    from tcprepro.emulation.backend import EmulationOptions, run_scenario
    from tcprepro.emulation.fidelity import Tolerances
    from tcprepro.scenario_io import load_scenario_dict
    from tcprepro.store import write_dataset

    adv_win_scale = Path("/proc/sys/net/ipv4/tcp_adv_win_scale")
    vm_attrs = {
        # receive-window rule of the guest kernel (absent since Linux 6.6: scaling_ratio)
        "guest_tcp_adv_win_scale": adv_win_scale.read_text().strip()
        if adv_win_scale.exists()
        else "absent",
        "host_kernel": batch["host_kernel"],
    }
    vm_attrs.update(route.guest_attrs(batch, boot_s, prepared))
    from tcprepro.provenance import git_state

    if git_state()[0] == "unknown" and "host_git_commit" in batch:
        # git inside the guest cannot always read the (worktree) metadata: the host's state
        vm_attrs["git_commit"] = batch["host_git_commit"]
        vm_attrs["git_dirty"] = batch["host_git_dirty"]
    for job in batch["jobs"]:
        started = time.monotonic()
        wall_started = clock() if clock else 0.0
        status: dict[str, Any] = {"output": job["output"], "guest_kernel": platform.release()}
        try:
            scenario = load_scenario_dict(json.loads(job["scenario_json"]))
            opts = dict(job["options"])
            tolerances = Tolerances(**opts.pop("tolerances", {}))
            options = EmulationOptions(
                route=route.name,
                tolerances=tolerances,
                extra_attrs={**job["attrs"], **vm_attrs},
                wall_clock=clock,
                versions=route.versions(str(opts.get("traffic_tool", "iperf3"))),
                **opts,
            )
            ds = run_scenario(scenario, int(job["rep"]), options=options)
            if clock is not None:
                from tcprepro.emulation.uml import timed_attrs

                ds.attrs.update(timed_attrs(time.monotonic() - started, clock() - wall_started))
                status.update(guest_s=ds.attrs["guest_time_s"], ratio=ds.attrs["wall_time_ratio"])
            write_dataset(ds, job["output"])
            status.update(ok=True, fidelity_ok=int(ds.attrs["fidelity_ok"]))
        except Exception as exc:  # one job's failure must not end the batch
            status.update(
                ok=False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()
            )
        status["wall_s"] = round(
            (clock() - wall_started) if clock else time.monotonic() - started, 1
        )
        status["boot_s"] = round(boot_s, 1)
        with open(status_path, "a") as handle:
            handle.write(json.dumps(status) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
