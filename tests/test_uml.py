"""The virtual-clock UML route: the kernel build (tools, cache, options), the route
choice, the gate in virtual time, boots shared out side by side, and what real boots
leave on the host (nothing, after a batch failing midway or SIGTERM to
``tcprepro emulate-figure``). These compare the host's UML processes and folders before
and after, so ``make test`` runs them alone; the runs that may go side by side are in
tests/test_uml_runs.py."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, reno_100m, uml_or_skip
from tcprepro.emulation import capabilities, routes, uml, umlkernel
from tcprepro.emulation.batch import GuestJob
from tcprepro.emulation.fidelity import FidelityReport, LinkProbe, Tolerances
from tcprepro.errors import CapabilityError, ConfigError

# ---------------------------------------------------------------------------
# No boot


def test_a_host_without_the_build_tools_is_told_what_to_install(tmp_path):
    """`tcprepro build-uml-kernel` with a PATH holding only this Python: exit 3, naming
    the Debian packages (an empty cache, so nothing cached can stand in)."""
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent),
        "TCPREPRO_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": str(ROOT / "src"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "tcprepro.cli", "build-uml-kernel"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 3, result.stderr
    message = result.stderr
    assert "cannot build the UML kernel" in message
    for program in ("make", "gcc", "flex", "bison", "bc", "pkg-config"):
        assert program in message.split("missing;")[0], message
    assert "apt-get install" in message
    for package in ("build-essential", "flex", "bison", "bc", "pkg-config"):
        assert package in message.split("apt-get install")[1], message
    assert not (tmp_path / "cache" / "uml").exists() or not any(
        (tmp_path / "cache" / "uml").iterdir()
    )


def test_build_tools_are_named_with_their_packages():
    missing = dict(umlkernel.build_missing(lambda name: None))
    assert missing["gcc"] == "build-essential"
    assert missing["flex"] == "flex"
    assert missing["bison"] == "bison"
    assert missing["bc"] == "bc"
    assert missing["pkg-config"] == "pkg-config"
    assert set(missing.values()) <= set(umlkernel.BUILD_PACKAGES) | {"tar", "xz-utils"}


def test_the_cache_key_follows_the_source_version_and_the_options(monkeypatch):
    key = umlkernel.kernel_key("6.1.192-2")
    assert key.startswith("linux-6.1.192-2-")
    assert umlkernel.kernel_key("6.1.193-1") != key
    monkeypatch.setitem(umlkernel.OPTIONS, "extra", ("NET_SCH_DRR",))
    assert umlkernel.kernel_key("6.1.192-2") != key


def test_the_fragment_builds_every_variant_and_queue_discipline_in():
    fragment = umlkernel.config_fragment()
    assert "CONFIG_UML_TIME_TRAVEL_SUPPORT=y" in fragment
    assert "=m" not in fragment
    for option in ("NET_SCH_NETEM", "NET_SCH_HTB", "NET_SCH_FQ", "NET_SCH_SFQ", "NET_SCH_RED",
                   "NET_SCH_TBF", "NET_SCH_PRIO", "NET_SCH_CODEL", "NET_SCH_FQ_CODEL",
                   "NET_SCH_INGRESS", "IFB", "VETH", "NET_NS", "HOSTFS", "TMPFS"):  # fmt: skip
        assert f"CONFIG_{option}=y" in fragment, option
    from tcprepro.variants import VARIANTS

    linux = {v.linux_name for v in VARIANTS.values() if v.linux_name}
    kernel = umlkernel.UmlKernel(
        Path("linux"), "6.1", "k", 0.0, frozenset(umlkernel._read_config(fragment))
    )
    assert {name for name in linux if not kernel.has_congestion_control(name)} == set()


def test_the_boot_has_the_virtual_clock_and_init_powers_off(tmp_path):
    argv = uml.boot_argv(Path("/k/linux"), tmp_path)
    assert "time-travel=inf-cpu" in argv
    assert "rootfstype=hostfs" in argv
    assert "ro" in argv
    assert f"uml_dir={tmp_path / 'uml'}" in argv  # UML's run-time files die with the folder
    script = uml.init_script(tmp_path, ["python", "-m", "x"], "6.1-uml-abc")
    assert script.startswith("#!/bin/sh")
    assert f"mount -t hostfs -o {tmp_path} none {uml.GUEST_DIR}" in script
    assert "mount -t tmpfs tmpfs /tmp" in script
    assert "mount -t tmpfs tmpfs /run" in script
    assert "echo o > /proc/sysrq-trigger" in script
    assert script.rstrip().endswith("while :; do sleep 3600; done")  # never exits


def test_a_checkout_under_tmp_is_mounted_back_in_the_guest(tmp_path, monkeypatch):
    """The guest's /tmp is a tmpfs: a virtualenv and checkout under /tmp (a CI runner's
    clone) are mounted back read-only at their own paths, nested ones once."""
    needed = [Path("/tmp/ci/.venv"), Path("/tmp/ci/src"), Path("/tmp/ci/src/x"), Path("/usr")]
    monkeypatch.setattr(uml, "_needed_host_paths", lambda: needed)
    assert uml.remounted_paths() == [Path("/tmp/ci/.venv"), Path("/tmp/ci/src")]
    script = uml.init_script(tmp_path, ["python", "-m", "x"], "6.1-uml-abc")
    tmpfs = script.index("mount -t tmpfs tmpfs /tmp")
    for path in ("/tmp/ci/.venv", "/tmp/ci/src"):
        line = f"mount -r -t hostfs -o {path} none {path}"
        assert script.index(line) > tmpfs
    assert "/tmp/ci/src/x" not in script
    assert "hostfs -o /usr" not in script


def test_auto_prefers_uml_when_native_lacks_netem(monkeypatch):
    needs = capabilities.Needs(("htb", "netem"), ("reno",))
    lack = capabilities.Missing("qdisc netem", "the kernel has no netem qdisc", "")
    monkeypatch.setattr(capabilities, "native_missing", lambda needs: [lack])
    monkeypatch.setattr(capabilities, "uml_missing", lambda needs: [])
    monkeypatch.setattr(capabilities, "vm_missing", lambda needs: [])
    choice = routes.choose_route(needs)
    assert choice.route is routes.UML
    assert choice.reason == "the native route lacks: qdisc netem; UML has a virtual clock"
    unbuilt = capabilities.Missing("uml-kernel", "not built", "tcprepro build-uml-kernel")
    monkeypatch.setattr(capabilities, "uml_missing", lambda needs: [unbuilt])
    choice = routes.choose_route(needs)
    assert choice.route is routes.VM
    assert choice.reason == "the native route lacks: qdisc netem; the UML route: uml-kernel"
    assert routes.choose_route(needs, "vm").reason == "forced (--route vm)"
    assert routes.choose_route(needs, routes.VM).route is routes.VM
    with pytest.raises(CapabilityError, match=r"(?s)UML route \(forced\).*uml-kernel"):
        routes.choose_route(needs, "uml")
    monkeypatch.setattr(capabilities, "uml_missing", lambda needs: [])
    assert routes.choose_route(needs, "uml").reason == "forced (--route uml); virtual clock"
    monkeypatch.setattr(capabilities, "vm_missing", lambda needs: [unbuilt])
    monkeypatch.setattr(capabilities, "uml_missing", lambda needs: [unbuilt])
    with pytest.raises(CapabilityError) as refused:
        routes.choose_route(needs)
    assert str(refused.value).splitlines()[::2] == [
        "missing capabilities for the native route:",
        "missing capabilities for the UML route:",
        "missing capabilities for the VM route:",
    ]
    with pytest.raises(ConfigError, match="route: 'kvm' is not one of auto, native, uml, vm"):
        routes.choose_route(needs, "kvm")


def test_the_cli_offers_every_route():
    from tcprepro import cli

    assert cli.ROUTES == ("auto", "native", "uml", "vm") == routes.ROUTES
    assert [routes.get_route(name).label for name in routes.ROUTES[1:]] == [
        "Linux (native)",
        "Linux (UML)",
        "Linux (VM)",
    ]


def test_cpu_saturation_does_not_flag_a_virtual_time_run_but_a_bad_probe_does():
    probe = LinkProbe("bottleneck", "s0", "r", 100e6, 97.2e6, 97.0e6, 0.02, 0.02)
    for cpu_gate, flagged in ((True, True), (False, False)):
        report = FidelityReport(Tolerances(cpu_gate=cpu_gate), [probe])
        report.cpu_saturated_fraction = 1.0
        report.sample_late_fraction = 0.0
        report.judge()
        assert (not report.ok) == flagged, report.flags
    slow = LinkProbe("bottleneck", "s0", "r", 100e6, 97.2e6, 50e6, 0.02, 0.02)
    report = FidelityReport(Tolerances(cpu_gate=False), [slow])
    report.sample_late_fraction = 0.0
    report.judge()
    assert not report.ok
    assert "probe rate 51%" in report.flags[0]


def test_uml_batches_are_shared_among_boots_side_by_side(monkeypatch, tmp_path):
    """``parallel`` boots run at once on the UML route (never more than the cores), each
    with its share of the jobs; the results come back in the jobs' order. The boots are
    stand-ins here: the real ones are the same call (uml.run_batch) per share."""
    import threading

    from tcprepro.emulation import runner

    assert runner.parallel_boots(routes.UML, 5, 8) == min(5, os.cpu_count() or 1)
    assert runner.parallel_boots("uml", 5, 1) == 1
    assert runner.parallel_boots(routes.VM, 5, 8) == 1  # real time: one boot
    assert runner.parallel_boots(routes.NATIVE, 5, 8) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(routes, "choose_for", lambda *a, **k: routes.RouteChoice(routes.UML, "t"))
    running, peak, boots = [0], [0], []
    lock = threading.Lock()

    def fake_boot(jobs, log=None, tolerances=None, cancel=None):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            boots.append([job.output for job in jobs])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return [{"ok": True, "fidelity_ok": 1, "wall_s": float(job.rep)} for job in jobs]

    monkeypatch.setattr(uml, "run_batch", fake_boot)
    scenario = reno_100m()
    jobs = [runner.EmulationJob(scenario, rep, tmp_path / f"r{rep}.nc") for rep in range(5)]
    results = runner.emulate_batch(jobs, "uml", parallel=4)
    assert peak[0] == 2  # two cores: three boots side by side
    assert sorted(len(share) for share in boots) == [2, 3]
    assert [r.output for r in results] == [job.output for job in jobs]
    assert [r.wall_s for r in results] == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_sigterm_cancels_every_boot_side_by_side_and_waits_for_their_teardown(
    monkeypatch, tmp_path
):
    """A real SIGTERM to this process while two boots run in threads: both are told to
    stop, both tear down before the batch ends with KeyboardInterrupt, and the previous
    SIGTERM handler is back. (The real boots' teardown: the UML test below.)"""
    import signal
    import threading

    from tcprepro.emulation import runner

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(routes, "choose_for", lambda *a, **k: routes.RouteChoice(routes.UML, "t"))
    started, torn_down = threading.Semaphore(0), []

    def fake_boot(jobs, log=None, tolerances=None, cancel=None):
        started.release()
        try:
            deadline = time.monotonic() + 20.0
            while not cancel.is_set():  # uml._wait's check, once per clock step
                assert time.monotonic() < deadline, "the boot was never cancelled"
                time.sleep(0.01)
            raise KeyboardInterrupt("the batch was interrupted")
        finally:
            time.sleep(0.2)  # a teardown that takes time
            torn_down.append(Path(jobs[0].output).name)

    def terminate_when_both_run():
        for _ in range(2):
            started.acquire(timeout=10.0)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(uml, "run_batch", fake_boot)
    previous = signal.getsignal(signal.SIGTERM)
    scenario = reno_100m()
    jobs = [runner.EmulationJob(scenario, rep, tmp_path / f"r{rep}.nc") for rep in range(4)]
    threading.Thread(target=terminate_when_both_run, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        runner.emulate_batch(jobs, "uml", parallel=2)
    assert sorted(torn_down) == ["r0.nc", "r1.nc"]
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_boot_that_fails_lets_the_boots_beside_it_finish(monkeypatch, tmp_path):
    """One boot of two fails at once: the other is not cancelled, it ends (its datasets
    kept for the rerun) before the batch raises the failure."""
    from tcprepro.emulation import runner

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(routes, "choose_for", lambda *a, **k: routes.RouteChoice(routes.UML, "t"))
    finished = []

    def fake_boot(jobs, log=None, tolerances=None, cancel=None):
        if Path(jobs[0].output).name == "r0.nc":
            raise CapabilityError("the UML guest never reported")
        time.sleep(0.5)
        assert not cancel.is_set()
        finished.append(Path(jobs[0].output).name)
        return [{"ok": True, "fidelity_ok": 1, "wall_s": 1.0} for _ in jobs]

    monkeypatch.setattr(uml, "run_batch", fake_boot)
    jobs = [runner.EmulationJob(reno_100m(), rep, tmp_path / f"r{rep}.nc") for rep in range(2)]
    with pytest.raises(CapabilityError, match="never reported"):
        runner.emulate_batch(jobs, "uml", parallel=2)
    assert finished == ["r1.nc"]


# ---------------------------------------------------------------------------
# The built kernel and real boots


def test_the_cached_kernel_has_every_option_and_is_not_built_again():
    uml_or_skip()
    kernel = umlkernel.find_kernel()
    missing = [n for group in umlkernel.OPTIONS.values() for n in group if n not in kernel.config]
    assert missing == []
    assert "MODULES" not in kernel.config  # everything built in
    stamp = kernel.path.stat().st_mtime_ns
    assert umlkernel.build_kernel() == kernel  # cached: found, not rebuilt
    assert kernel.path.stat().st_mtime_ns == stamp
    assert not list(umlkernel.cache_root().glob(".build-*"))


def _leftovers(kernel_path):
    """UML processes (their executable is the kernel), boot folders, UML run-time dirs."""
    processes = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/exe") == str(kernel_path):
                    processes.append(pid)
            except OSError:
                continue
    folders = sorted(str(p) for p in Path(os.environ.get("TMPDIR", "/tmp")).glob("tcprepro-uml-*"))
    shm = sorted(str(p) for p in Path("/dev/shm").iterdir())
    mounts = [line for line in Path("/proc/mounts").read_text().splitlines() if "uml" in line]
    return {"processes": processes, "folders": folders, "shm": shm, "mounts": mounts}


@pytest.mark.slow
def test_a_batch_failing_midway_leaves_nothing_on_the_host(tmp_path, monkeypatch):
    """A failure on the host side 10 s after the guest program started, while it is still
    setting up or running its 30-s flow inside UML (no job has reported yet): the boot is
    killed and nothing of it is left."""
    scenario = reno_100m(duration="30s")
    uml_or_skip(scenario)
    kernel = umlkernel.find_kernel()
    before = _leftovers(kernel.path)
    seen = {}
    real_tick = uml._HostClock.tick

    def failing_tick(self):
        real_tick(self)
        if (self.folder / "guest.log").exists():
            started = seen.setdefault("guest", time.monotonic())
            if time.monotonic() - started > 10.0:
                seen["uml_processes"] = len(_leftovers(kernel.path)["processes"])
                seen["reported"] = (self.folder / "status.jsonl").exists()
                raise RuntimeError("injected failure in the middle of the batch")

    monkeypatch.setattr(uml._HostClock, "tick", failing_tick)
    job = GuestJob(scenario.to_json(), 0, str(tmp_path / "never.nc"), {}, {"probe_s": 1.0})
    with pytest.raises(RuntimeError, match="injected failure"):
        uml.run_batch([job])
    assert seen["uml_processes"] > len(before["processes"])  # UML was running then
    assert seen["reported"] is False  # and its job had not finished
    assert _leftovers(kernel.path) == before
    assert not (tmp_path / "never.nc").exists()


@pytest.mark.slow
@pytest.mark.parametrize("boots", [2, 1])
def test_sigterm_to_emulate_figure_leaves_nothing_on_the_host(tmp_path, boots):
    """``tcprepro emulate-figure`` on X10's two smoke runs (``--jobs 2``: a UML boot
    each, side by side; ``--jobs 1``: one boot) gets SIGTERM once its guests run, as a
    scheduler cancelling the job would send it: it exits 130 within a minute, and no UML
    process, boot folder, mount or output is left."""
    from tcprepro.campaign import load_workflow_config

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    runs = config.runs("X10", "smoke", "mininet")
    assert len(runs) == 2
    for run in runs:
        uml_or_skip(run.scenario())
    kernel = umlkernel.find_kernel()
    before = _leftovers(kernel.path)
    (tmp_path / "workflow").symlink_to(ROOT / "workflow")  # its scenario files
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    argv = [sys.executable, "-m", "tcprepro.cli", "emulate-figure"]
    argv += ["--workflow-config", str(ROOT / "workflow/config.yaml"), "--tier", "smoke"]
    argv += ["--figure", "X10", "--route", "uml", "--jobs", str(boots), "-o", "x10.nc"]
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 240.0
        guests = []
        while len(guests) < boots and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            now = _leftovers(kernel.path)
            new = [f for f in now["folders"] if f not in before["folders"]]
            guests = [f for f in new if (Path(f) / "guest.log").exists()]
        if len(guests) < boots:
            proc.kill()
            pytest.fail(f"{boots} guest(s) never ran:\n{proc.communicate()[1].decode()}")
        running = len(_leftovers(kernel.path)["processes"]) - len(before["processes"])
        time.sleep(3.0)  # both guests are setting up or running their flows
        proc.terminate()
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    print(stderr.decode()[-600:])
    assert running >= boots  # a UML kernel per boot (and its helpers) ran
    assert proc.returncode == 130
    assert b"interrupted" in stderr
    assert _leftovers(kernel.path) == before
    assert not (tmp_path / "x10.nc").exists()
    assert not list(tmp_path.rglob("*.nc"))


def test_a_boot_reports_each_run_as_the_guest_finishes_it(tmp_path):
    """Progress of a long UML batch: one line per finished run (its figure and cell, guest
    and wall seconds) with the time left at the boot's pace, read from the guest's status
    lines as they appear (a half-written last line waits for the next poll)."""
    import io

    jobs = [
        GuestJob("{}", 0, str(tmp_path / f"job{i}.nc"), attrs, {})
        for i, attrs in enumerate(
            [{"figure": "X5", "sweep": json.dumps({"protocol": "Cubic", "loss": 1e-5})}, {}, {}]
        )
    ]
    log = io.StringIO()
    progress = uml._Progress(tmp_path, jobs, log)
    status = tmp_path / "status.jsonl"
    status.write_text(
        json.dumps({"ok": True, "guest_s": 80.4, "wall_s": 143.2}) + "\n" + '{"ok": tr'
    )
    progress.poll(every_s=0)
    lines = log.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "UML boot: run 1/3 done (X5 protocol=Cubic, loss=1e-05: 80 guest s in 143 wall s); "
        "2 left, about"
    )
    status.write_text(
        status.read_text()[: -len('{"ok": tr')]
        + json.dumps({"ok": True, "guest_s": 1, "wall_s": 2})
        + "\n"
        + json.dumps({"ok": False, "error": "x"})
        + "\n"
    )
    progress.poll(every_s=0)
    lines = log.getvalue().splitlines()
    assert len(lines) == 3
    assert "run 2/3 done (job1.nc" in lines[1]
    assert lines[2].startswith("UML boot: run 3/3 failed (job2.nc")
    assert lines[2].endswith("the last")
