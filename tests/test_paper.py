import copy
import json
import re

import pandas as pd
import pytest
import yaml

from conftest import ROOT, compile_latex, pdf_text
from tcprepro.campaign import WorkflowConfig
from tcprepro.latex import write_tabular
from tcprepro.paper import Status, _body


def test_write_tabular_escapes_and_formats(tmp_path):
    frame = pd.DataFrame({"variant": ["NewReno", "H_TCP"], "loss %": [0.012345, 12.0]})
    text = write_tabular(frame, tmp_path / "t.tex").read_text()
    assert text.startswith(r"\begin{tabular}{ll}")
    assert r"H\_TCP & 12 \\" in text
    assert r"loss \%" in text
    assert "0.0123" in text


def test_paper_body_includes_figures_and_tables_by_declared_output():
    data = yaml.safe_load((ROOT / "workflow/config.yaml").read_text())
    data = copy.deepcopy(data)
    data["figures"]["A2"]["outputs"] = ["figure", "table"]
    config = WorkflowConfig(data)
    assert "paper/generated/A2.tex" in config.paper_files("table")
    assert "paper/generated/A1.tex" not in config.paper_files("table")
    assert "paper/figures/A2.pdf" in config.paper_files("figure")
    statuses = {f: Status(f, "full", 4, 4) for f in ("A1", "A2")}
    lines = dict.fromkeys(statuses, "This build: smoke tier.")
    body = _body(config, ["A1", "A2"], statuses, {}, lines, "figures", "generated", "smoke", ["A"])
    assert r"\reprographic{figures/A1.pdf}" in body
    assert r"\reproinput{generated/A2.tex}" in body
    assert r"\reproinput{generated/A1.tex}" not in body
    assert r"\reprolongtable{generated/claims_A.tex}" in body
    # the claims table follows the study's figures, never a float still waiting
    assert body.index(r"\reprofloatbarrier") < body.index("claims_A.tex")
    assert body.index("figures/A2.pdf") < body.index("claims_A.tex")
    # the heading starts a page when this one has no room for the study's first figure
    assert body.index(r"\reproroomfor{figures/A1.pdf}") < body.index(r"\section{Study A")


def test_caption_and_title_quote_the_scenario_not_typed_numbers(tmp_path):
    """An uplink buffer of 77 packets makes the A1 caption and title say 77."""
    import xarray as xr

    from tcprepro.figures.study_a import title
    from tcprepro.scenario_io import load_scenario

    data = copy.deepcopy(yaml.safe_load((ROOT / "workflow/config.yaml").read_text()))
    scenario = yaml.safe_load((ROOT / "workflow/scenarios/A1.yaml").read_text())
    scenario["topology"]["uplink"]["buffer_pkts"] = 77
    scenario["testbed"] = str(ROOT / "workflow/testbeds/freebsd-9.2.yaml")
    path = tmp_path / "A1.yaml"
    path.write_text(yaml.safe_dump(scenario))
    data["figures"]["A1"]["scenario"] = str(path)
    caption = WorkflowConfig(data).caption("A1", "smoke")
    assert "(77 packets)" in caption
    assert "40 packets" not in caption
    assert "[[" not in caption
    ds = xr.Dataset(attrs={"config": load_scenario(path).to_json()})
    assert title(ds, "A1") == "A1: uplink buffer 77 packets, 10/2 Mb/s"


def test_a_caption_naming_a_field_the_scenario_lacks_is_refused():
    from tcprepro.errors import ConfigError
    from tcprepro.quoting import fill
    from tcprepro.scenario_io import load_scenario

    scenario = load_scenario(ROOT / "workflow/scenarios/A1.yaml")
    assert fill("[[topology.downlink.rate|rate]], [[duration|s]]", scenario).startswith("10~Mb/s")
    with pytest.raises(ConfigError, match=r"topology\.uplink\.colour"):
        fill("[[topology.uplink.colour]]", scenario)


# ---- typesetting: one escaping function, T1, math for symbols (issue 15) -------------

#: every character LaTeX treats specially, and the symbols the claims and captions use
SPECIALS = r"a<b>c|de_fg&h%i#j^k~l\m$n{o}p"
SYMBOLS = "ρ_b ≥ 0.5, |D_p − D_m| ≤ 30 %, 93 ± 2 %, 3 × 4"
COMMAND = "snakemake --config 'verify_claims=[\"A-c1\"]' -- claims_tables"


def test_escape_sets_specials_as_text_and_symbols_as_math():
    from tcprepro.latex import escape

    assert escape("ab_c & d%") == r"ab\_c \& d\%"
    assert escape("ρ_b = 0.5") == r"$\rho_{b}$ = 0.5"
    assert escape("C_e and x ≥ 1") == r"$C_{e}$ and x $\geq$ 1"
    # adjacent math pieces share one $...$ (never "$$", display math)
    assert escape("|D_p - D_m|") == r"$|D_{p}$ - $D_{m}|$"
    assert "$$" not in escape("ρ_b≥|x|")
    # identifiers stay text: only a Greek letter or a lone letter takes a subscript
    assert (
        escape("tcp_adv_win_scale")
        == r"tcp\_\allowbreak{}adv\_\allowbreak{}win\_\allowbreak{}scale"
    )
    assert escape("H_TCP SO_SNDBUF") == r"H\_TCP SO\_SNDBUF"
    # a long token may break; a short one is left alone
    assert r"\allowbreak{}" in escape("data/combined/emulated/X1.nc")
    assert escape("NewReno/CUBIC") == r"NewReno/\allowbreak{}CUBIC"  # a claims table's cell
    assert escape("B5.10") == "B5.10"
    # two hyphens print as two (never an en dash); a span in backticks is a command
    assert escape("a--b") == "a-{}-b"
    code = escape("run `x --y 'z'` now")
    assert code.startswith(r"run \texttt{")
    assert code.endswith(r"\relax x -{}-y \textquotesingle{}z\textquotesingle{}} now")
    assert escape("a lone ` backtick") == r"a lone \textasciigrave{} backtick"


@pytest.mark.needs_latex
def test_a_generated_string_with_every_special_character_prints_as_itself(tmp_path):
    """The report's preamble and escape() print < > | _ & % # ^ ~ \\ $ { } and the symbols."""

    from tcprepro.latex import escape

    body = "\\noindent " + escape(SPECIALS) + "\\par\\noindent " + escape(SYMBOLS)
    compile_latex(tmp_path, body + "\\par\\noindent " + escape(f"`{COMMAND}`"))
    text = pdf_text(tmp_path / "t.pdf", layout=False)
    lines = [line.replace(" ", "") for line in text.splitlines() if line.strip()]
    assert lines[0] == SPECIALS
    # math: the minus sign and Greek letters come out as their Unicode characters, and a
    # subscript as a subscript (the text layer has its letter without the "_")
    assert lines[1] == SYMBOLS.replace(" ", "").replace("_", "")
    # a command as a reader copies it: straight quotes, double dashes
    assert lines[2] == COMMAND.replace(" ", "")


# ---- the report's structure, status and captions, from the data -------------------


def _config():
    from tcprepro.campaign import load_workflow_config

    return load_workflow_config(ROOT / "workflow/config.yaml")


def test_figures_come_in_catalogue_order():
    from tcprepro.paper import figure_order

    config = _config()
    order = figure_order(config, config.figures)
    studies = [config.figure(f)["study"] for f in order]
    assert studies == sorted(studies)  # A, B, C, D
    assert order[:7] == ["A1", "A1.1", "A2", "A2.1", "A3", "A4", "X1"]
    assert order.index("B5.2") < order.index("B5.10") < order.index("B5.20")
    assert [f for f in order if f.startswith("D")] == ["D1", "D1.1", "D2", "D2.1", "D3", "D4"]


def _combined(values: dict, missing: list | None = None, reps: int = 1, **attrs):
    """A tiny combined dataset: one NaN-free variable over the sweep and rep."""
    import numpy as np
    import xarray as xr

    shape = [len(v) for v in values.values()] + [reps]
    ds = xr.Dataset(
        {"goodput_bps": ([*values, "rep"], np.ones(shape))},
        coords={**values, "rep": list(range(reps))},
    )
    ds.attrs.update(
        sweep_dims=json.dumps(list(values)),
        missing_cells=json.dumps(missing or []),
        n_runs=int(np.prod(shape)),
        **attrs,
    )
    return ds


def test_status_counts_the_paper_grid_cells_drawn():
    from tcprepro.paper import figure_status

    config = _config()
    # smoke-like A1: 2 x 2 of the paper's 4 x 4
    ds = _combined({"up": ["NewReno", "Vegas"], "down": ["NewReno", "Cubic"]})
    status = figure_status(config, "A1", ds, {"recorded": True, "panels_drawn": 4})
    assert (status.kind, status.cells_run, status.cells_paper) == ("partial", 4, 16)
    assert status.text() == "partial: 4 of 16 cells"
    # a cell without runs does not count
    missing = [{"up": "Vegas", "down": "Cubic"}]
    status = figure_status(
        config, "A1", _combined({"up": ["Vegas"], "down": ["Cubic"]}, missing), None
    )
    assert status.kind == "not run"
    # a selection: B5.12 shows one flow at B = 20 of B5.10's grid (14 variants in the paper)
    b510 = _combined(
        {"variant": ["NewReno", "Hybla"], "flows": [1, 2], "buffer": [20], "rate": ["50Mbps"]}
    )
    facts = {"recorded": True, "panels_drawn": 1, "selection": {"buffer": [20], "flows": [1]}}
    status = figure_status(config, "B5.12", b510, facts)
    assert (status.cells_run, status.cells_paper) == (2, 14)
    # the drawing said it drew nothing; or the build skipped the figure
    assert figure_status(config, "B5.11", b510, {"recorded": True, "panels_drawn": 0}).kind == (
        "not run"
    )
    excluded = figure_status(config, "X1", None, None, excluded="emulation=exclude")
    assert excluded.text() == "excluded: emulation=exclude"
    assert not excluded.included


def test_tier_line_states_the_dataset_and_the_papers_values():
    from tcprepro.paper import figure_status, tier_line

    config = _config()
    ds = _combined(
        {"up": ["NewReno", "Vegas"], "down": ["NewReno", "Cubic"]},
        reps=1,
        duration_s=30.0,
        warmup_s=10.0,
        backend="ns3",
    )
    status = figure_status(config, "A1", ds, None)
    line = tier_line(config, "A1", "smoke", ds, status)
    assert line.startswith("This build: smoke tier, ns-3, 30 s simulated per run (10 s warm-up)")
    assert "1 repetition, 4 of 16 cells." in line
    # the paper's values come from the config's paper tier: 800 s with 200 s warm-up, 10 reps
    paper = config.tier_settings("A1", "paper")
    assert f"{paper['repetitions']} repetitions" in line
    assert "Paper: 800 s (200 s warm-up), 10 repetitions, 16 cells." in line
    # a paper tier whose values are our choice says so
    d3 = _combined({"delay": ["10ms"]}, duration_s=10.0, warmup_s=2.0, backend="ns3")
    line = tier_line(config, "D3", "smoke", d3, figure_status(config, "D3", d3, None))
    assert config.tier_settings("D3", "paper")["note"] in line


def test_one_repetition_never_promises_a_standard_deviation():
    from tcprepro.figures.common import spread_statement

    assert "standard deviation" not in spread_statement(1)
    assert "no error bars" in spread_statement(1)
    assert "±1 standard deviation over 3 repetitions" in spread_statement(3)


def test_verdict_totals_count_every_verdict_the_csvs_hold(tmp_path):
    """A verdict the code does not know (e.g. inconclusive) is counted, not dropped."""
    from tcprepro.paper import _glance, read_verdicts

    rows = {
        "A": [("A-c1", "reproduced"), ("A-c2", "inconclusive"), ("A-c3", "reproduced")],
        "B": [("B-c1", "not reproduced"), ("B-c2", "undecided by coin")],
    }
    paths = []
    for study, claims in rows.items():
        path = tmp_path / f"{study}.csv"
        lines = ["claim,paper,reproduced,verdict,cells,coverage"]
        lines += [f"{claim},p,r,{verdict},1 of 2 cells,B=100 not run" for claim, verdict in claims]
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    verdicts = read_verdicts(paths)
    assert [r["verdict"] for r in verdicts].count("inconclusive") == 1
    config = _config()
    text = _glance(config, "smoke", [], {}, {}, verdicts)
    totals = re.search(r"^total & (.*) \\\\$", text, re.M)[1].split(" & ")
    assert totals == ["2", "1", "1", "1", "5"]  # reproduced, not rep., inconclusive, other
    assert "undecided by coin" in text
    assert r"\pageref{claim:B-c2}" in text
    # each claim's coverage: the cells of the claim that ran, then what is missing
    row = next(line for line in text.splitlines() if line.startswith("A-c2 &"))
    assert row.split(" & ")[3] == "ran 1 of 2 cells; B=100 not run"
    # and what the claim says, beside its id
    assert row.split(" & ")[1].startswith("A CUBIC download")


def test_overfull_boxes_are_attributed_to_the_generated_file():
    from tcprepro.paper import overfull_boxes

    log = "\n".join(
        [
            "Overfull \\hbox (3.0pt too wide) in paragraph at lines 1--2",
            "<<generated generated/body.tex>>",
            "(./generated/claims_A.tex",
            "<<generated generated/claims_A.tex>>",
            "Overfull \\hbox (14.5pt too wide) in alignment at lines 5--9",
            " []\\T1/lmr/m/n/10 (unbalanced text",
            "<<end generated generated/claims_A.tex>>)",
            "Overfull \\hbox (11.0pt too wide) in paragraph at lines 30--31",
            "<<end generated generated/body.tex>>",
        ]
    )
    boxes = overfull_boxes(log)
    assert [(name, width) for name, width, _ in boxes] == [
        ("", 3.0),
        ("generated/claims_A.tex", 14.5),
        ("generated/body.tex", 11.0),
    ]


@pytest.mark.needs_latex
def test_build_check_fails_on_a_lost_caption_a_missing_id_and_an_overfull_generated_box(
    tmp_path,
):
    """What happened to D3 (a float taller than the page, its caption never printed), a
    catalogue id in neither a caption nor the at-a-glance table, and a generated table
    wider than the text: each is a problem of the build check."""

    from tcprepro.campaign import WorkflowConfig
    from tcprepro.paper import check_build

    data = yaml.safe_load((ROOT / "workflow/config.yaml").read_text())
    data["figures"] = {f: data["figures"][f] for f in ("A1", "D3", "B5.2")}
    config = WorkflowConfig(data)
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated/glance.tex").write_text(
        "\\section{At a glance}\n"
        "\\begin{longtable}{ll}\\caption{Artefacts.}\\label{tab:glance}\\\\\n"
        "A1 & full \\\\\nD3 & full \\\\\n\\end{longtable}\n"
        "\\noindent\\begin{tabular}{l}" + "x" * 200 + "\\end{tabular}\n"
    )
    body = (
        "\\reproinput{generated/glance.tex}\n"
        "\\begin{figure}[!htbp]\\centering\\rule{1cm}{5cm}"
        "\\caption{\\textbf{A1.} Fits.}\\label{fig:A1}\\end{figure}\n"
        "\\begin{figure}[!htbp]\\centering\\rule{1cm}{40cm}"
        "\\caption{\\textbf{D3.} Too tall.}\\label{fig:D3}\\end{figure}"
    )
    compile_latex(tmp_path, body, runs=2, halt=False)  # twice: the labels' pages
    problems = check_build(config, tmp_path / "t.pdf", tmp_path / "t.log", tmp_path / "t.aux")
    text = "\n".join(problems)
    assert "generated/glance.tex: Overfull" in text
    assert "Float too large" in text
    assert "D3: its caption is not on page" in text
    assert "B5.2: neither captioned nor in the at-a-glance table" in text
    assert not any(p.startswith("A1") for p in problems)


def test_the_provenance_says_which_runs_came_from_an_imported_bundle():
    import numpy as np
    import xarray as xr

    from tcprepro.claims.glossary import wording_problems
    from tcprepro.paper import _provenance

    def combined(keys, created):
        ds = xr.Dataset(
            {
                name: ("rep", np.array(values, dtype=object))
                for name, values in {
                    "run_cache_key": keys,
                    "run_created": created,
                    "run_git_commit": ["abc"] * len(keys),
                    "run_git_dirty": ["0"] * len(keys),
                    "run_kernel": ["6.1"] * len(keys),
                }.items()
            },
            attrs={"n_runs": len(keys), "tcprepro_version": "0.1.0", "ns3_version": "3.44"},
        )
        return ds

    here = _provenance({"D1": combined(["k1", "k2"], ["2026-01-01", "2026-01-02"])})
    assert "Every run was made by this build's workflow" in here
    assert "2026-01-01 to 2026-01-02" in here
    assert r"& here \\" in here
    # runs of one day: one date, not a range with equal ends
    one_day = _provenance({"D1": combined(["k1", "k2"], ["2026-01-02", "2026-01-02"])})
    assert "6.1; 2026-01-02 &" in one_day
    assert not wording_problems(one_day)
    source = {
        "bundle": "paper.tar",
        "tier": "paper",
        "manifest_sha256": "f" * 64,
        "exported_by": {"host": "node1", "cpu": "x", "cores": "64"},
        "software": {"tcprepro": "0.1.0", "ns3": "3.44"},
        # k2 was simulated here again after the import: same key, another date
        "runs": {"k1": "2026-01-01", "k2": "2025-12-31", "k3": "2025-12-31"},
        "verify": None,
    }
    text = _provenance(
        {
            "D1": combined(["k1", "k2"], ["2026-01-01", "2026-01-02"]),
            "D3": combined(["k3"], ["2025-12-31"]),
        },
        source,
    )
    assert "2 of the 3 runs were imported from the trace bundle paper.tar" in text
    assert "1 were simulated here" in text
    assert "f" * 64 in text
    assert "was not verified on this machine" in text
    assert r"& bundle 1, here 1 \\" in text
    assert r"& bundle \\" in text
    source["verify"] = {"date": "d", "seed": 4, "sampled": 5, "identical": 4, "different": ["x"]}
    text = _provenance({"D3": combined(["k3"], ["2025-12-31"])}, source)
    assert "4 of 5 runs drawn at random (seed 4) were re-simulated here bit-identical" in text
    assert "DIFFERENT: x" in text


def test_the_verify_section_sets_the_verify_verdicts_next_to_this_builds(tmp_path):
    """Issue 14's table: claim, this build's verdict, the verify verdict, cells, time."""
    from tcprepro.paper import _verify_section, read_verdicts, verify_cost

    config = _config()
    # no verify build: one line that says so
    assert "No verify-tier results" in _verify_section(config, "quick", [], [])
    here = tmp_path / "B.csv"
    here.write_text("claim,paper,reproduced,verdict,cells\nB-c1,p,r,inconclusive,1 cell\n")
    verify = tmp_path / "verify" / "B.csv"
    verify.parent.mkdir()
    verify.write_text("claim,paper,reproduced,verdict,cells\nB-c1,p,r,reproduced,1 cell\n")
    text = _verify_section(config, "quick", read_verdicts([here]), read_verdicts([verify]))
    row = next(line for line in text.splitlines() if line.startswith("B-c1 &"))
    cells = row.split(" & ")
    assert cells[1] == r"\textcolor{BurntOrange}{inconclusive}"
    assert cells[2] == r"\textcolor{ForestGreen}{reproduced}"
    assert cells[3] == "1 cell"
    # the simulated time is the paper tier's: its cells x repetitions x duration
    paper = config.figure_scenario("B5.1", "paper")
    reps = int(config.tier_settings("B5.1", "paper")["repetitions"])
    n_cells = len(config.claim_cells("B5.1", ["B-c1"]))
    cost = (n_cells * reps, n_cells * reps * paper.duration)
    assert verify_cost(config, ["B-c1"]) == {"B-c1": cost}
    assert f"({n_cells * reps} runs)" in row
    assert r"\toprule Claim & quick verdict & verify verdict" in text
    # a claim judged on some of its cells: the runs of those cells, not of all the claim's
    # (A-c7 read 14 of its 32 cells in a verify build: 140 runs, not 320)
    verify.write_text(
        "claim,paper,reproduced,verdict,cells\nA-c7,p,r,inconclusive,14 of 32 cells (A1: 8/16)\n"
    )
    text = _verify_section(config, "quick", [], read_verdicts([verify]))
    row = next(line for line in text.splitlines() if line.startswith("A-c7 &"))
    runs, seconds = verify_cost(config, ["A-c7"])["A-c7"]
    assert runs == 320
    assert "(140 runs)" in row
    assert f"{seconds * 14 / 32 / 3600:.1f} h" in row


@pytest.mark.needs_latex
def test_the_verify_section_compiles_and_prints_its_row(tmp_path):

    from tcprepro.paper import _verify_section, overfull_boxes, verify_cost

    here = [{"claim": "B-c1", "study": "B", "verdict": "inconclusive", "cells": "", "coverage": ""}]
    verify = [dict(here[0], verdict="not reproduced", cells="1 cell")]
    body = _verify_section(_config(), "quick", here, verify)
    compile_latex(
        tmp_path,
        "\\typeout{<<generated generated/glance.tex>>}" + body + "\\par"
        "\\typeout{<<end generated generated/glance.tex>>}",
    )
    text = pdf_text(tmp_path / "t.pdf")
    row = next(line for line in text.splitlines() if line.strip().startswith("B-c1"))
    assert row.split()[1:5] == ["inconclusive", "not", "reproduced", "1"]
    runs, _ = verify_cost(_config(), ["B-c1"])["B-c1"]
    assert f"({runs} runs)" in row
    log = (tmp_path / "t.log").read_text(errors="replace")
    assert [box for box in overfull_boxes(log) if box[1] > 1.0] == []


@pytest.mark.needs_latex
def test_the_what_if_table_sets_a_knob_trace_beside_the_verify_verdict(tmp_path):
    """A what-if's and a knob trace's verdicts (data/claims/whatif/<id>/) print beside the
    verify verdict of the same claim, and a what-if that decided nothing prints no row."""
    from tcprepro.paper import _verify_section, overfull_boxes

    verify = [{"claim": "A-c3", "study": "A", "verdict": "not reproduced", "cells": "8 of 8 cells"}]
    whatif = {
        "knob-a-compound-min-rto": [
            {"claim": "A-c3", "verdict": "reproduced", "value": "largest drop 41 %"},
            # judged on the 2 of its cells the trace ran: not what the trace is for
            {"claim": "A-c1", "verdict": "reproduced", "value": "min 95 %"},
        ],
        "windows-receiver": [{"claim": "A-c1", "verdict": "not run", "value": ""}],
    }
    body = _verify_section(_config(), "quick", [], verify, whatif)
    assert "windows-receiver" not in body
    assert "A-c1" not in body
    log = compile_latex(tmp_path, body)
    text = " ".join(pdf_text(tmp_path / "t.pdf", layout=False).split())
    assert "knob traces" in text
    # the id broken at one of its hyphens, which pdftotext joins back without it
    assert "A-c3 not reproduced knob-a-compound" in text
    assert "rto reproduced: largest drop 41 %" in text
    assert [box for box in overfull_boxes(log) if box[1] > 1.0] == []  # the id breaks


def test_the_verify_section_lists_apart_the_claims_no_verify_run_decided(tmp_path):
    """A restricted verify build judges its study's other claims as pending: they are not
    verify verdicts; this build's undecided claims without one are named, and a verdict
    that changes with the run length says that this tier is too short for it."""
    from tcprepro.paper import _verify_section, read_verdicts

    here = tmp_path / "B.csv"
    here.write_text(
        "claim,paper,reproduced,verdict,cells,confidence\n"
        "B-c1,p,r,inconclusive,1 cell,\n"
        "B-c2,p,r,inconclusive,3 of 3 cells,\n"
        "B-c3,p,r,reproduced,8 of 8 cells,fragile: 10 of 16 resamples agree\n"
        "B-c4,p,r,not reproduced,2 of 2 cells,robust: 27 of 27\n"
    )
    verify = tmp_path / "verify" / "B.csv"
    verify.parent.mkdir()
    verify.write_text(
        "claim,paper,reproduced,verdict,cells\n"
        "B-c1,p,r,reproduced,1 cell\n"
        "B-c2,p,—,not run,0 of 3 cells\n"
        "B-c3,p,—,pending,0 of 8 cells\n"
        "B-c4,p,r,not reproduced,2 of 2 cells\n"
    )
    text = _verify_section(_config(), "quick", read_verdicts([here]), read_verdicts([verify]))
    rows = [line.split(" & ")[0] for line in text.splitlines() if " & " in line]
    assert [r for r in rows if r.startswith("B-")] == ["B-c1", "B-c4"]
    assert "differs from this build's (B-c1), the quick tier is too short" in text
    assert "other 2 claims this build leaves inconclusive or fragile: B-c2, B-c3" in text


def test_the_abstract_counts_ns3_simulations_only():
    """D1.1's dataset holds emulated runs: the abstract's simulation count and simulated
    hours leave them out, while its pending cells still count."""
    import xarray as xr

    from tcprepro.campaign import load_workflow_config
    from tcprepro.paper.inputs import _numbers

    config = load_workflow_config(ROOT / "workflow/config.yaml")
    assert "ns3" not in config.backends("D1.1")
    assert "ns3" in config.backends("D1")
    combined = {
        "D1": xr.Dataset(attrs={"n_runs": 40, "duration_s": 90.0, "missing_cells": "[]"}),
        "D1.1": xr.Dataset(attrs={"n_runs": 6, "duration_s": 60.0, "missing_cells": '["a"]'}),
    }
    statuses = {f: Status(f, "full", 1, 1) for f in combined}
    numbers = _numbers(config, "quick", list(combined), statuses, combined, "")
    assert numbers["nRuns"] == "40"
    assert numbers["simHours"] == f"{40 * 90.0 / 3600:.1f}"
    assert numbers["nPendingCells"] == "1"
    # the abstract names the emulated runs only when the build has some (smoke: none)
    assert "runs with real Linux TCP" in numbers["emulatedRuns"]
    ns3_only = {"D1": combined["D1"]}
    numbers = _numbers(config, "smoke", ["D1"], {"D1": statuses["D1"]}, ns3_only, "")
    assert numbers["emulatedRuns"] == " (no emulated figure: this build left them out)"
