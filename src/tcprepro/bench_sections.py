"""BENCHMARKS.md's sections on the workflow's measures (:mod:`tcprepro.bench_workflow`).

The calibration samples, a UML guest beside the simulations, the plan against a build and
a recorded ``make figures``; :func:`tcprepro.bench.report` puts them after the sections on
the event loop, start-up, scaling, memory and storage.
"""

from __future__ import annotations

from typing import Any

from tcprepro.bench_workflow import PLAN_TOLERANCE

__all__ = [
    "again_note",
    "calibration_section",
    "contention_section",
    "md_row",
    "plan_section",
    "recorded_section",
    "rounds_lines",
    "uml_section",
]


def md_row(*cells: object) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def calibration_section(results: dict[str, Any]) -> list[str]:
    """The simulation's cost per study on the plan's calibration sample."""
    sample = results.get("calibration")
    if not sample:
        return []
    lines = [
        "",
        "## The simulation's cost per study",
        "",
        f"The plan's calibration sample (one in {sample['stride']} {sample['tier']}-tier runs "
        "of each figure: the middle run of each equal slice of its runs ranked by the cost "
        f"model) simulated from empty data by {len(sample['processes'])} `tcprepro "
        f"sweep-batch` processes side by side in {sample['wall_s']:.0f} s. *Run wall s* sums "
        "each run's own time in its batch (scenario, event loop, dataset), *loop s* the event "
        "loops'; `tcprepro plan` calibrates its cost model on these, per figure with at least "
        "3 runs here and per study for the others (`MEASURED_QUICK_FIGURES` and "
        "`MEASURED_QUICK` in `tcprepro.campaign.measured`).",
        "",
        md_row(
            "study",
            "runs",
            "simulated s",
            "run wall s",
            "loop s",
            "wall s per simulated s",
            "datasets MiB",
        ),
        md_row(*["---"] * 7),
    ]
    for study, row in sorted(sample["studies"].items()):
        lines.append(
            md_row(
                study,
                row["runs"],
                f"{row['simulated_s']:.0f}",
                f"{row['wall_s']:.1f}",
                f"{row['loop_s']:.1f}",
                f"{row['wall_s'] / row['simulated_s']:.4f}",
                f"{row['mib']:.1f}",
            )
        )
    runs = sum(row["runs"] for row in sample["studies"].values())
    outside = sum(row["wall_s"] - row["loop_s"] for row in sample["studies"].values())
    startup = [p["wall_s"] - p["runs_s"] for p in sample["processes"]]
    lines += [
        "",
        f"Besides its event loop a run costs {outside / max(1, runs):.2f} s in its batch (mean "
        f"over {runs} runs); a process's start-up, its wall time less its runs', "
        f"{', '.join(f'{s:.1f}' for s in startup)} s.",
    ]
    figures = sample.get("figures") or {}
    if figures:
        lines += ["", "The same runs per figure:", "", md_row("figure", "runs", "run wall s")]
        lines.append(md_row(*["---"] * 3))
        for figure, row in figures.items():
            lines.append(md_row(figure, row["runs"], f"{row['wall_s']:.1f}"))
    return lines + again_note(results, "calibration")


def uml_section(results: dict[str, Any]) -> list[str]:
    """The emulation's cost per figure on the UML route (:func:`uml_sample`)."""
    sample = results.get("uml")
    if not sample:
        return []
    lines = [
        "",
        "## The emulation's cost per figure (UML route)",
        "",
        f"Every {sample['stride']}th {sample['tier']}-tier emulated run of each figure, in "
        f"{sample['cores']} boots side by side ({sample['wall_s']:.0f} s). *Wall s* sums the "
        "runs' own wall time (set-up, probe, traffic, teardown, dataset; the boots apart), "
        "*traffic s* its traffic stage; *plan s* is `tcprepro plan`'s estimate of the same "
        "runs (`tcprepro.campaign.plan.uml_run_wall_s`).",
        "",
        md_row("figure", "runs", "guest s", "wall s", "traffic s", "plan s", "plan / wall"),
        md_row(*["---"] * 7),
    ]
    total = {"wall_s": 0.0, "plan_s": 0.0}
    for figure, row in sample["figures"].items():
        total["wall_s"] += row["wall_s"]
        total["plan_s"] += row["plan_s"]
        lines.append(
            md_row(
                figure,
                row["runs"],
                f"{row['guest_s']:.0f}",
                f"{row['wall_s']:.0f}",
                f"{row['traffic_s']:.0f}",
                f"{row['plan_s']:.0f}",
                f"{row['plan_s'] / row['wall_s']:.2f}",
            )
        )
    lines += [
        "",
        f"All: {total['wall_s']:.0f} s measured, {total['plan_s']:.0f} s planned "
        f"({total['plan_s'] / total['wall_s']:.2f}).",
    ]
    return lines + again_note(results, "uml")


def contention_section(results: dict[str, Any]) -> list[str]:
    """The simulations' slowdown beside a UML guest (:func:`guest_contention`)."""
    check = results.get("contention")
    if not check:
        return []
    return [
        "",
        "## A UML guest beside the simulations",
        "",
        f"The calibration sample's {check['runs']} runs of {' and '.join(check['figures'])} in "
        "one `tcprepro sweep-batch` process, alone and then beside a UML guest running "
        f"{check['twin']}'s first {check['guest_runs']} emulated runs on the other core. "
        "`tcprepro plan` slows a simulate job by this factor while an emulated job runs "
        "(`UML_NEIGHBOUR_SLOWDOWN` in `tcprepro.campaign.measured`).",
        "",
        md_row("runs' wall s alone", "beside the guest", "slowdown", "guest ran throughout"),
        md_row(*["---"] * 4),
        md_row(
            f"{check['alone_s']:.1f}",
            f"{check['beside_s']:.1f}",
            f"{check['slowdown']:.2f}",
            "yes" if check["overlapped"] else "no: the factor is a lower bound",
        ),
        *again_note(results, "contention"),
    ]


def again_note(results: dict[str, Any], section: str) -> list[str]:
    """A section measured again apart from the rest (:func:`measure_again`): when, where."""
    again = results.get("measured_again", {}).get(section)
    if not again:
        return []
    return [
        "",
        f"Measured again alone (`tcprepro bench --only {section}`): {again['date']}, commit "
        f"{again['tcprepro commit']}, load average at start {again['load average at start']}.",
    ]


def _job_s(item: dict[str, Any], rule: str) -> str:
    row = (item.get("stages") or {}).get(rule)
    return f"{row['job_s']:.0f}" if row else "-"


def _load(item: dict[str, Any]) -> str:
    return f"{item['load_at_start']:.2f}" if "load_at_start" in item else "-"


def rounds_lines(results: dict[str, Any], name: str) -> list[str]:
    """Each round of a section measured in rounds (``--rounds``), with its stages.

    The section's own table shows the median round; this table shows every round, the
    load when it started and where its time went (job time of the simulate, emulate and
    draw stages; the runs' own time in their batches), so a slow round can be explained.
    """
    rounds = results.get("rounds", {}).get(name) or []
    if len(rounds) < 2:
        return []
    if name == "workflow":
        items = [value[0] for value in rounds]
        times = [item["full_s"] for item in items]
        head = ("round", "1-min load at start", "wall s", "no-op rerun s", "simulate job s")
        head += ("draw job s", "runs' own s")
        rows = [
            (
                f"{item['full_s']:.0f}",
                f"{item['noop_rerun_s']:.1f}",
                _job_s(item, "simulate_batch"),
                _job_s(item, "draw"),
                f"{item['runs_wall_s']:.0f}",
            )
            for item in items
        ]
        summary = ""
    else:
        items = rounds
        times = [item["measured_s"] for item in items]
        head = ("round", "1-min load at start", "predicted s", "measured s", "predicted / measured")
        head += ("simulate job s", "emulate job s", "runs' own s")
        rows = [
            (
                f"{item['predicted_s']:.0f}",
                f"{item['measured_s']:.0f}",
                f"{item['ratio']:.2f}" + ("" if item["within"] else " (outside)"),
                _job_s(item, "simulate_batch"),
                _job_s(item, "emulate_figure"),
                f"{item['runs_wall_s']:.0f}" if "runs_wall_s" in item else "-",
            )
            for item in items
        ]
        within = sum(1 for item in items if item["within"])
        summary = f"; {within} of {len(items)} rounds within ±{PLAN_TOLERANCE:.0%}"
    lines = [
        "",
        f"{len(items)} rounds, one after the other (the table above shows the median): "
        f"{min(times):.0f} to {max(times):.0f} s measured{summary}. The 1-minute load average "
        "at a round's start still carries the round before it; a round's stage and run times "
        "show where its time went.",
        "",
        md_row(*head),
        md_row(*["---"] * len(head)),
    ]
    for index, (item, row) in enumerate(zip(items, rows, strict=True), 1):
        lines.append(md_row(index, _load(item), *row))
    return lines


def plan_section(results: dict[str, Any]) -> list[str]:
    """The plan's estimate of a small build against the build (:func:`plan_check`)."""
    check = results.get("plan_check")
    if not check:
        return []
    return [
        "",
        "## The plan against a build",
        "",
        f"`tcprepro plan`'s cost of the {check['tier']} tier's runs of "
        f"{' and '.join(check['figures'])} ({check['runs']} runs, their batch jobs' "
        "start-ups)"
        + (
            f" and of the emulated twin {', '.join(check['emulated'])} "
            f"({check['emulated_runs']} runs, one {check['route'].upper()} boot), sharing "
            f"{check['cores']} cores longest job first,"
            if check.get("emulated")
            else f" on {check['cores']} cores"
        )
        + " against the wall time Snakemake took to build them from empty data (setup "
        "excluded).",
        "",
        md_row(
            "predicted s", "measured s", "predicted / measured", f"within ±{PLAN_TOLERANCE:.0%}"
        ),
        md_row(*["---"] * 4),
        md_row(
            f"{check['predicted_s']:.0f}",
            f"{check['measured_s']:.0f}",
            f"{check['ratio']:.2f}",
            "yes" if check["within"] else "no",
        ),
        *rounds_lines(results, "plan_check"),
        *again_note(results, "plan_check"),
    ]


def _recorded_stages(inv: dict[str, Any]) -> list[str]:
    """The stages of one recorded invocation that ran more than one job."""
    stages = inv.get("stages") or {}
    if sum(row["jobs"] for row in stages.values()) < 2:
        return []
    lines = [
        "",
        f"Stages of the invocation started {inv['started']} (Snakemake's log: *job time* "
        "sums its jobs' start-to-end times, so a stage on 2 cores can take up to twice its "
        "wall time; *done at* is when its last job ended, from the first job's start):",
        "",
        md_row("rule", "jobs", "job time min", "done at min"),
        md_row(*["---"] * 4),
    ]
    for rule, row in sorted(stages.items(), key=lambda kv: kv[1]["ended_s"]):
        lines.append(
            md_row(rule, int(row["jobs"]), f"{row['job_s'] / 60:.1f}", f"{row['ended_s'] / 60:.1f}")
        )
    return lines


def recorded_section(results: dict[str, Any]) -> list[str]:
    """The logs of an earlier ``make figures`` (``--recorded``), when given."""
    lines: list[str] = []
    recorded = results.get("recorded")
    if recorded:
        lines += [
            "",
            "## A recorded `make figures` run",
            "",
            "Read from the logs of an earlier run in this folder (`tcprepro bench --recorded "
            "DIR`): each Snakemake invocation with its wall time, then each study's runs. "
            "*Run wall s* is the sum over runs of each run's own event loop and writing, as "
            "its log reports it; divide by the cores the run had.",
            "",
            md_row("started (UTC)", "command", "wall min", "steps done", "outcome"),
            md_row(*["---"] * 5),
        ]
        for inv in recorded["invocations"]:
            lines.append(
                md_row(
                    inv["started"],
                    f"`{inv['command']}`",
                    f"{inv['wall_s'] / 60:.1f}",
                    f"{inv['steps_done']} of {inv['steps_total']}",
                    inv["outcome"],
                )
            )
        for inv in recorded["invocations"]:
            lines += _recorded_stages(inv)
        lines += [
            "",
            md_row(
                "study",
                "runs",
                "simulated s",
                "run wall s",
                "wall s per simulated s",
                "datasets MiB",
            ),
            md_row(*["---"] * 6),
        ]
        for study, row in sorted(recorded["studies"].items()):
            if not row["runs"]:
                continue
            lines.append(
                md_row(
                    study,
                    int(row["runs"]),
                    f"{row['simulated_s']:.0f}",
                    f"{row['wall_s']:.0f}",
                    f"{row['wall_s'] / row['simulated_s']:.3f}",
                    f"{row['bytes'] / 2**20:.1f}",
                )
            )
        lines += [
            "",
            f"Paper profile storage, estimated from each figure's bytes per simulated second "
            f"above: {recorded['paper_estimate_gib']:.2f} GiB for "
            f"{recorded['paper_estimate_runs']} runs.",
        ]
    return lines
