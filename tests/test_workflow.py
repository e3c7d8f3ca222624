"""The Snakemake workflow, for real: dry runs of every profile, a smoke-tier run through
papermill and LaTeX, a no-op rerun, and a rerun limited to what a change touches."""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tcprepro
from conftest import ROOT
from tcprepro.analysis import study_c as analysis_c
from tcprepro.store import open_dataset, validate_run_dataset

pytestmark = pytest.mark.slow

BIN = str(Path(sys.executable).parent)


def snakemake(workdir, *args, check=True, env=None):
    env = {**(env or os.environ), "PATH": f"{BIN}:{os.environ['PATH']}"}
    result = subprocess.run(
        [f"{BIN}/snakemake", *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        )
    return result


def job_counts(output):
    counts = {}
    table = re.search(r"job\s+count\n-+\s+-+\n(.*?)\ntotal", output, re.S)
    for line in (table.group(1) if table else "").splitlines():
        name, count = line.split()
        counts[name] = int(count)
    return counts


def drawn(output):
    """Per notebook job (rule draw_<notebook>), the figure ids its shell command draws
    (``tcprepro draw-notebook <notebook> <ids>``, printed by --printshellcmds)."""
    jobs = {}
    for line in output.splitlines():
        if found := re.search(r"tcprepro draw-notebook (\S+) ([^>]+)>", line):
            jobs.setdefault(found[1], []).append(found[2].split())
    return jobs


def copy_workflow(dest):
    for name in ("Snakefile", "workflow", "notebooks", "paper"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source,
                dest / name,
                ignore=shutil.ignore_patterns(
                    "build", "figures", "generated", ".ipynb_checkpoints"
                ),
            )
        else:
            shutil.copy(source, dest / name)
    return dest


#: the emulated figures, in the order of workflow/config.yaml
EMULATED = "X1, D1.1, X3, D2.1, X4, X11, X12, X6, X13, X14, X10, X7, X2, X5, X8, X9"


# simulations per profile: study A + study D (D1 + D3 + D4; D2 is drawn from D1's runs)
# + study B (B5.1, B5.10, B5.14, B5.16, B5.20; the other B figures are drawn from their runs)
# + study C (C1, C3.1, C3.3, C3.4, C3.6; C2, C3.2 and C3.5 draw C3.1's runs)
@pytest.mark.parametrize(
    ("profile", "simulations"),
    [
        ("smoke", 16 + (2 + 2 + 2) + (2 + 4 + 2 + 2 + 2) + 12),
        ("quick", 160 + (40 + 32 + 28) + (24 + 112 + 16 + 18 + 4) + 74),
        ("paper", 960 + (48 + 324 + 34) + (72 + 924 + 336 + 124 + 12) + 744),
    ],
)
def test_dry_run_of_every_profile(tmp_path, profile, simulations):
    workdir = copy_workflow(tmp_path)
    result = snakemake(
        workdir,
        "--profile",
        f"workflow/profiles/{profile}",
        "-n",
        "--cores",
        "2",
        "--printshellcmds",
        "--config",
        f"tier={profile}",
        "emulation=exclude",
    )
    counts = job_counts(result.stdout)
    from tcprepro.campaign import load_workflow_config

    config = load_workflow_config(ROOT / "workflow/config.yaml", {"tier": profile})
    # the emulated figures are excluded, and with them the ns-3 sides of the cross-checks
    figures = [f for f in config.simulated_figures if not config.crosschecked(f)]
    assert sum(len(config.runs(f, profile)) for f in figures) == simulations
    # the runs in batch jobs, one process each (tests/test_batches.py)
    assert counts["simulate_batch"] == sum(len(config.batches(f, profile)) for f in figures)
    assert counts["simulate_batch"] < simulations
    # one job per notebook (11 without the cross-checks' X1-X14), each drawing its figures
    # in one kernel: A1, A2, A1.1, A2.1, A3, A4; D1-D4; B5.1-B5.20; C1, C2 (Table I), C3.1-C3.6
    jobs = drawn(result.stdout)
    assert sum(n for name, n in counts.items() if name.startswith("draw_")) == len(jobs) == 11
    assert all(len(ids) == 1 for ids in jobs.values()), "a notebook run by two jobs"
    ids = [f for figures_ in jobs.values() for f in figures_[0]]
    assert sorted(ids) == sorted(
        f for f in config.figures if f[0] != "X" and f not in EMULATED.split(", ")
    )
    assert len(ids) == 6 + 4 + 20 + 8
    assert counts["combine"] == 4 + 3 + 5 + 5  # figures drawn from another's runs have none
    assert counts["claims"] == 4
    assert counts["paper"] == 1
    assert "emulate_figure" not in counts
    # the emulated figures (X1-X14; D1.1 and its view D2.1) are skipped together
    assert f"emulation skipped (figures {EMULATED}): excluded by the profile" in result.stderr


def test_dry_run_with_emulation_adds_the_cross_check(tmp_path):
    from tcprepro.campaign import load_workflow_config
    from tcprepro.campaign.emulated import decide

    config = load_workflow_config(ROOT / "workflow/config.yaml", {"emulation": "auto"})
    decision = decide(config, "quick")
    workdir = copy_workflow(tmp_path)
    result = snakemake(
        workdir, "--profile", "workflow/profiles/quick", "-n", "--cores", "2", "--printshellcmds"
    )
    counts = job_counts(result.stdout)
    simulated = [f for f in config.simulated_figures if "ns3" in config.backends(f)]
    if not decision.enabled:  # a host that cannot emulate: skipped, with the reason printed
        assert "emulate_figure" not in counts
        skipped = f"emulation skipped (figures {EMULATED})"
        assert f"{skipped}: this host cannot" in result.stderr
        return
    # A, D, B, C, and the ns-3 sides of X1-X14; D1.1 is emulated only (D1 is its ns-3
    # counterpart)
    twins = {"X1": 18, "X2": 5, "X3": 20, "X4": 16, "X5": 15, "X6": 8, "X7": 2, "X8": 5}
    twins |= {"X9": 5, "X10": 4, "X11": 10, "X12": 6, "X13": 8, "X14": 4}
    assert {f: len(config.runs(f, "quick")) for f in twins} == twins
    assert sum(len(config.runs(f, "quick")) for f in simulated) == (
        160 + 100 + 174 + 74 + sum(twins.values())
    )
    assert counts["simulate_batch"] == sum(len(config.batches(f, "quick")) for f in simulated)
    assert counts["emulate_figure"] == 15  # one per figure (X1-X14 and D1.1)
    assert counts["crosscheck_table"] == 14
    if decision.parallel:  # virtual time: one UML boot a figure, no exclusive slot
        assert "--figure X3 --route uml --jobs 1" in result.stdout
    # longest jobs first: a simulate job's priority is the plan's estimate of its seconds
    from tcprepro.campaign.plan import calibrations, simulate_job_s

    calibration = calibrations(config)
    found = re.findall(r"wildcards: figure=(\S+), batch=(b\d+)\n\s+priority: (\d+)", result.stdout)
    assert len(found) == counts["simulate_batch"]
    for figure, batch, priority in found:
        expected = simulate_job_s(config, config.batch(figure, batch, "quick"), calibration)
        assert int(priority) == round(expected), (figure, batch)
    assert len({p for _, _, p in found}) > 10  # the estimates differ: they order the jobs
    # the cross-checks' notebook draws X1-X14 in one job; D1.1 and D2.1 join D1 and D2's
    jobs = drawn(result.stdout)
    assert counts["draw_X1_X14_crosscheck"] == 1
    assert sorted(jobs["notebooks/X1-X14_crosscheck.ipynb"][0]) == sorted(
        f"X{k}" for k in range(1, 15)
    )
    assert sorted(jobs["notebooks/D1-D2.1_socket_buffers.ipynb"][0]) == ["D1", "D1.1", "D2", "D2.1"]
    assert sum(len(ids[0]) for ids in jobs.values()) == 6 + 4 + 20 + 8 + 2 + 14
    assert "emulation included" in result.stderr


def test_dry_run_of_the_verify_profile_runs_the_claims_cells_only(tmp_path):
    from tcprepro.campaign import load_workflow_config

    config = load_workflow_config(ROOT / "workflow/config.yaml", {"tier": "verify"})
    read = [f for f in config.simulated_figures if config.runs(f, "verify")]
    workdir = copy_workflow(tmp_path)
    result = snakemake(
        workdir, "--profile", "workflow/profiles/verify", "-n", "--cores", "2", "claims_tables"
    )
    counts = job_counts(result.stdout)
    # the paper tier's runs of the cells the claims read (tests/test_campaign.py checks
    # that these are exactly the registry's cells), combined per figure, and no figure drawn
    assert counts["simulate_batch"] == sum(len(config.batches(f, "verify")) for f in read)
    assert counts["combine"] == len(read)
    assert counts["claims"] == 4
    assert not [name for name in counts if name.startswith("draw_")]
    assert "paper" not in counts
    # its claims are kept apart: a later quick or paper report sets them next to its own
    assert "data/claims/verify/A.csv" in result.stdout
    assert "data/claims/A.csv" not in result.stdout.replace("data/claims/verify/A.csv", "")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("workflow"))
    result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "--cores", "2")
    return workdir, result


@pytest.mark.needs_latex
def test_smoke_run_produces_figures_claims_and_paper(smoke_run):
    workdir, result = smoke_run
    assert "simulations to run" in result.stdout + result.stderr  # plan printed before running
    assert (workdir / "paper/build/tcprepro.pdf").stat().st_size > 10_000
    for figure in ("A1", "A2", "A3", "A4"):
        assert (workdir / f"paper/figures/{figure}.pdf").stat().st_size > 5_000
        executed = json.loads((workdir / f"data/notebooks/{figure}.ipynb").read_text())
        assert any(cell.get("outputs") for cell in executed["cells"])
        combined = open_dataset(workdir / f"data/combined/{figure}.nc")
        sweep = ("up", "down", "rep") if figure in ("A1", "A2") else ("up", "down", "load", "rep")
        assert combined["goodput_bps"].dims[: len(sweep)] == sweep
        assert list(combined["up"].values) == ["NewReno", "Vegas"]
    a3 = open_dataset(workdir / "data/combined/A3.nc")
    assert a3["transfer_size_bytes"].dims == ("up", "down", "load", "rep", "transfer")
    assert int(np.isfinite(a3["transfer_end_s"]).sum()) > 0
    runs = sorted((workdir / "data/runs").rglob("*.nc"))
    assert len(runs) == 16 + 6 + 12 + 12
    assert all(validate_run_dataset(open_dataset(run)) == [] for run in runs)
    claims = (workdir / "data/claims/A.csv").read_text()
    for claim in ("A-c1", "A-c3", "A-c4", "A-c5", "A-c6", "A-c7", "A-c8", "A-c9"):
        assert claim in claims
    log = (workdir / "data/logs/claims/A.log").read_text()
    # one block per claim, its verdict in capitals after the id, with its coverage
    verdicts = "REPRODUCED|NOT REPRODUCED|INCONCLUSIVE|NOT RUN|PENDING"
    assert re.search(rf"^A-c5 +({verdicts}) on 1 cell$", log, re.M)
    tex = (workdir / "paper/generated/claims_A.tex").read_text()
    assert "A-c2" in tex
    assert "not run" in tex
    # a trace figure under the why of every claim not reproduced or inconclusive, no other
    rows = csv.DictReader((workdir / "data/claims/A.csv").open())
    explained = {r["claim"] for r in rows if r["verdict"] in ("not reproduced", "inconclusive")}
    assert explained
    assert {p.stem for p in (workdir / "paper/figures/why/A").glob("*.pdf")} == explained
    # each drawn once: a claim whose run another's figure draws points to that figure
    for claim in explained:
        drawn = f"{{figures/why/A/{claim}.pdf}}" in tex
        pointed = re.search(
            rf"\\item\[{claim}\][^\n]*\n\\par\\noindent Its traces: the same run as "
            r"Figure~\\ref\{why:A-c\d+\}",
            tex,
        )
        assert drawn != bool(pointed), claim


def test_every_figure_of_the_smoke_run_passed_the_figure_checks(smoke_run):
    """Issue 34: save_figure checks each figure before writing it, and its record lists the
    checks; a figure with a defect fails its job, so the run's figures are all clean."""
    from tcprepro.figures.checks import CHECKS

    workdir, result = smoke_run
    assert "FigureDefectError" not in result.stdout + result.stderr
    figures = sorted((workdir / "paper/figures").rglob("*.pdf"))
    assert len(figures) >= 20  # the catalogue's figures and the claims' trace figures
    assert any(p.parent.name in "ABCD" for p in figures)  # why/<study>/<claim>.pdf
    for pdf in figures:
        record = json.loads(pdf.with_suffix(".json").read_text())
        assert record["checked"] == list(CHECKS), pdf


@pytest.mark.needs_latex
def test_smoke_run_draws_study_d_with_its_tables_and_claims(smoke_run):
    workdir, _ = smoke_run
    for figure in ("D1", "D2", "D3", "D4"):
        assert (workdir / f"paper/figures/{figure}.pdf").stat().st_size > 5_000
        executed = json.loads((workdir / f"data/notebooks/{figure}.ipynb").read_text())
        assert any(cell.get("outputs") for cell in executed["cells"])
    assert not (workdir / "data/combined/D2.nc").exists()  # D2 is drawn from D1's runs
    d1 = open_dataset(workdir / "data/combined/D1.nc")
    assert list(d1["send_buffer"].values) == ["64KiB", "2MiB"]
    assert d1["unacked_bytes"].notnull().any()
    # the thesis's tables, reproduced: our rows next to the thesis's (BE 64 KiB, 12 ms, 16 MiB)
    d1_table = (workdir / "paper/generated/D1.tex").read_text()
    assert "tabular" in d1_table
    assert "0.630" in d1_table  # Table 3.1's FE/BE for that row
    assert "24.9" in (workdir / "paper/generated/D2.tex").read_text()  # Table 3.4's D_m
    body = (workdir / "paper/generated/body.tex").read_text()
    assert "generated/D1.tex" in body
    assert "figures/D2.pdf" in body
    assert "claims_D.tex" in body
    claims = (workdir / "data/claims/D.csv").read_text()
    for claim in ("D-c1", "D-c2", "D-c3"):
        assert claim in claims


@pytest.mark.needs_latex
def test_smoke_run_draws_study_b_from_a_tiny_phi_sweep(smoke_run):
    workdir, _ = smoke_run
    for figure in [f"B5.{i}" for i in range(1, 21)]:
        facts = json.loads((workdir / f"paper/figures/{figure}.json").read_text())
        if facts["panels_drawn"]:  # a figure with nothing run in the tier is not drawn
            assert (workdir / f"paper/figures/{figure}.pdf").stat().st_size > 5_000, figure
    executed = json.loads((workdir / "data/notebooks/B5.10.ipynb").read_text())
    assert any(cell.get("outputs") for cell in executed["cells"])
    b510 = open_dataset(workdir / "data/combined/B5.10.nc")
    assert b510["goodput_bps"].dims[:5] == ("variant", "flows", "buffer", "rate", "rep")
    assert list(b510["flows"].values) == [1, 2]
    assert not (workdir / "data/combined/B5.11.nc").exists()  # drawn from B5.10's runs
    body = (workdir / "paper/generated/body.tex").read_text()
    assert "figures/B5.10.pdf" in body
    # B5.11 is B5.10 at B = 100, which the smoke tier does not run: one line at a glance
    assert "figures/B5.11.pdf" not in body
    assert re.search(r"(?m)^B5\.11 & .* & not run in this tier &", glance(workdir))
    assert "claims_B.tex" in body
    claims = (workdir / "data/claims/B.csv").read_text()
    for claim in [f"B-c{i}" for i in range(1, 11)]:
        assert claim in claims


@pytest.mark.needs_latex
def test_smoke_run_draws_study_c_with_its_table_and_claims(smoke_run):
    workdir, _ = smoke_run
    for figure in ("C1", "C3.1", "C3.2", "C3.3", "C3.4", "C3.5", "C3.6"):
        assert (workdir / f"paper/figures/{figure}.pdf").stat().st_size > 5_000
    for view in ("C2", "C3.2", "C3.5"):  # drawn from C3.1's runs
        assert not (workdir / f"data/combined/{view}.nc").exists()
    table = (workdir / "paper/generated/C2.tex").read_text()
    assert "tabular" in table
    assert "YeAH" in table
    assert "RTT 14 ms, paper" in table
    body = (workdir / "paper/generated/body.tex").read_text()
    assert "generated/C2.tex" in body
    assert "claims_C.tex" in body
    claims = (workdir / "data/claims/C.csv").read_text()
    for claim in ("C-c1", "C-c2", "C-c3", "C-c4"):
        assert claim in claims


@pytest.mark.needs_latex
def test_smoke_c1_second_yeah_flow_catches_up_with_the_first(smoke_run):
    """Issue 6: in the tiny C1 run, the later YeAH flow's window comes within a factor 2 of
    the first's (5-s means) before the end, and YeAH's count_reno is sampled through the
    limited-slow-start decorator."""
    workdir, _ = smoke_run
    c1 = open_dataset(workdir / "data/combined/C1.nc")
    run = c1.sel(second="YeahPaper").isel(rep=0)
    assert float(run["flow_start_s"].sel(flow="f2")) == 10.0
    converged_s = analysis_c.convergence_time_s(run, factor=2.0, smooth_s=5.0)
    assert np.isfinite(converged_s), "the second YeAH flow never came within x2 of the first"
    assert converged_s < float(run["time"].max()) - 10.0
    assert bool(run["cc_RenoCount"].sel(flow="f1").notnull().any())
    assert str(run["flow_cc_type"].sel(flow="f1").values) == "ns3::TcpYeahPaper"


@pytest.mark.needs_latex
def test_rerun_with_nothing_changed_runs_nothing(smoke_run):
    workdir, _ = smoke_run
    result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2")
    assert "Nothing to be done" in result.stdout + result.stderr


@pytest.mark.needs_latex
def test_a_change_reruns_only_what_it_touches(smoke_run):
    workdir, _ = smoke_run
    scenario = workdir / "workflow/scenarios/A2.yaml"
    original = scenario.read_text()
    try:
        scenario.write_text(original + "# a comment changes no result\n")
        result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2")
        assert "Nothing to be done" in result.stdout + result.stderr

        scenario.write_text(
            original.replace("uplink: {buffer_pkts: 250}", "uplink: {buffer_pkts: 200}")
        )
        result = snakemake(workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2")
        counts = job_counts(result.stdout)
        assert counts["simulate_batch"] == 1  # the batch of the four A2 runs, none of A1
        rerun = re.findall(r"output: (data/batches/\S+\.json)", result.stdout)
        assert rerun == ["data/batches/smoke/A2/b0.json"]
    finally:
        scenario.write_text(original)


def test_a_library_change_redraws_and_rejudges_without_simulating(smoke_run, tmp_path):
    """A change in tcprepro's code (here, one line added to a copy of the package) reruns
    the figures, tables, claims and paper inputs drawn with it, and no simulation."""
    workdir, _ = smoke_run
    package = Path(tcprepro.__file__).parent
    copy = tmp_path / "src" / "tcprepro"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    same = snakemake(workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2", env=env)
    assert "Nothing to be done" in same.stdout + same.stderr  # an identical copy changes nothing

    with open(copy / "figures" / "common.py", "a") as handle:
        handle.write("\n# a change in the library\n")
    result = snakemake(
        workdir, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2", env=env
    )
    counts = job_counts(result.stdout)
    assert "simulate_batch" not in counts, counts
    assert "combine" not in counts, counts
    # every notebook job redraws (one per notebook: 11 without the cross-checks)
    assert sum(n for name, n in counts.items() if name.startswith("draw_")) == 11, counts
    assert counts.get("claims") == 4, counts
    assert counts.get("paper_inputs") == 1, counts
    assert counts.get("paper") == 1, counts


# ---- the report an evaluator reads (issue 15) -----------------------------------------


def _pdf_text(pdf, *args):
    return subprocess.run(
        ["pdftotext", "-layout", *args, str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout


def glance(workdir):
    return (workdir / "paper/generated/glance.tex").read_text()


def _captions(body):
    """Each figure's caption in body.tex: id -> (caption text, tier line)."""
    pattern = re.compile(
        r"\\caption\{\\textbf\{(?P<id>[^}]*)\.\}(?P<text>(?:(?!\\caption).)*?)"
        r"\\reprotierline\{(?P<line>[^\n]*?)\}\}\n\\label\{fig:",
        re.S,
    )
    return {m["id"]: (m["text"], m["line"]) for m in pattern.finditer(body)}


@pytest.mark.needs_latex
def test_smoke_report_lists_every_artefact_and_counts_every_verdict(smoke_run):
    from tcprepro.campaign import load_workflow_config

    workdir, _ = smoke_run
    config = load_workflow_config(workdir / "workflow/config.yaml")
    pdf = workdir / "paper/build/tcprepro.pdf"
    text = _pdf_text(pdf)
    first_pages = _pdf_text(pdf, "-l", "2")
    assert "At a glance" in first_pages
    for figure in config.figures:
        captioned = re.search(rf"(Figure|Table) \d+: {re.escape(figure)}\.\s", text)
        listed = re.search(rf"(?m)^\s*{re.escape(figure)}\s{{2,}}\S", text)
        assert captioned or listed, f"{figure}: neither captioned nor in the at-a-glance table"
    # the totals of the at-a-glance section equal the verdicts of data/claims/*.csv
    counts = {}
    for path in sorted((workdir / "data/claims").glob("*.csv")):
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                counts.setdefault(path.stem, {}).setdefault(row["verdict"], 0)
                counts[path.stem][row["verdict"]] += 1
    glance = (workdir / "paper/generated/glance.tex").read_text()
    header = re.search(r"\\toprule Study & (.*) & total \\\\", glance)[1]
    verdicts = [re.sub(r"\\textcolor\{[^}]*\}\{(.*)\}", r"\1", v) for v in header.split(" & ")]
    assert sorted(verdicts) == sorted({v for study in counts.values() for v in study})
    for study, by_verdict in counts.items():
        row = re.search(rf"(?m)^{study} & (.*) \\\\$", glance)[1].split(" & ")
        assert [int(n) for n in row] == [by_verdict.get(v, 0) for v in verdicts] + [
            sum(by_verdict.values())
        ]
    total = re.search(r"(?m)^total & (.*) \\\\$", glance)[1].split(" & ")
    assert int(total[-1]) == sum(sum(s.values()) for s in counts.values())
    # and the PDF prints that total row
    assert re.search(r"total\s+" + r"\s+".join(total), text)


@pytest.mark.needs_latex
def test_smoke_captions_state_what_was_drawn_and_the_tier(smoke_run):
    workdir, _ = smoke_run
    body = (workdir / "paper/generated/body.tex").read_text()
    captions = _captions(body)
    assert len(captions) >= 20
    for figure, (caption, line) in captions.items():
        ds = open_dataset(workdir / "data/combined" / f"{_source(workdir, figure)}.nc")
        reps = int(ds.sizes.get("rep", 1))
        if reps == 1:
            assert "standard deviation" not in caption, figure
            assert "std" not in caption.split(), figure
        assert line.startswith("This build: smoke tier,"), figure
        assert f"{reps} repetition" in line, figure
        if "duration_s" in ds.attrs:
            assert f"{float(ds.attrs['duration_s']):g} s simulated per run" in line, figure
        if "warmup_s" in ds.attrs and float(ds.attrs["warmup_s"]) > 0:
            assert f"({float(ds.attrs['warmup_s']):g} s warm-up)" in line, figure
        assert "Paper:" in line, figure
    # A1 at the smoke tier: one repetition, so no error bars; 4 of the paper's 16 cells
    assert "One repetition: no error bars." in captions["A1"][0]
    assert "4 of 16 cells" in captions["A1"][1]


def test_no_generated_text_of_the_smoke_report_reads_as_a_bug(smoke_run):
    """Issue 34: no range with equal ends, no "of 1 cells", no "run(s)", no "fewer than 1
    loss events" in any generated part of the report (claims, captions, tables, glance)."""
    from tcprepro.claims.glossary import wording_problems

    workdir, _ = smoke_run
    parts = sorted((workdir / "paper/generated").glob("*.tex"))
    assert len(parts) >= 10
    found = {p.name: wording_problems(p.read_text()) for p in parts}
    assert {name: problems for name, problems in found.items() if problems} == {}


def _source(workdir, figure):
    from tcprepro.campaign import load_workflow_config

    return load_workflow_config(workdir / "workflow/config.yaml").source(figure)


@pytest.mark.needs_latex
def test_smoke_report_has_no_overfull_generated_box_and_figures_fit(smoke_run):
    from tcprepro.paper import overfull_boxes

    workdir, _ = smoke_run
    log = (workdir / "paper/build/tcprepro.log").read_text(errors="replace")
    assert "<<generated generated/body.tex>>" in log  # the marks the check relies on
    too_wide = [
        (name, width)
        for name, width, _ in overfull_boxes(log)
        if name.startswith("generated/") and width > 1.0
    ]
    assert too_wide == []
    assert "passes" in (workdir / "data/logs/paper/latexmk.log").read_text()
    # every figure the report includes is at most as wide as the text: printed at its
    # natural size, its 8-pt text stays 8 pt
    body = (workdir / "paper/generated/body.tex").read_text()
    for name in re.findall(r"\\reprographic\{figures/([^}]*)\.pdf\}", body):
        info = subprocess.run(
            ["pdfinfo", str(workdir / f"paper/figures/{name}.pdf")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        width = float(re.search(r"Page size:\s+([\d.]+) x", info)[1])
        assert width <= 17.0 / 2.54 * 72, f"{name}: {width:.0f} pt wide"  # the text width
