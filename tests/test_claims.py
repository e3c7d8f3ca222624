"""The claims checker on synthetic combined datasets with known answers: checks can fail."""

import json

import pytest

from synthetic import synthetic_run
from tcprepro import claims
from tcprepro.claims import Claim, ClaimResult, check_claims, explainer, format_table, write_tex
from tcprepro.store import combine_runs

VARIANTS = ["NewReno", "Cubic", "Vegas"]


def a_figure(figure, utilisation, rtt_s=0.25, reps=2):
    """A combined A1/A2-like dataset; utilisation[(up, down)] = (up %, down %)."""
    values = {"up": VARIANTS, "down": VARIANTS}
    runs = []
    for (up, down), (up_pct, down_pct) in utilisation.items():
        for rep in range(reps):
            jitter = 1 + 0.01 * rep
            runs.append(
                synthetic_run(
                    goodput_bps=(9.6e6 * down_pct / 100 * jitter, 1.92e6 * up_pct / 100 * jitter),
                    rtt_s=(rtt_s, rtt_s),
                    attrs={
                        "figure": figure,
                        "sweep": json.dumps({"up": up, "down": down}),
                        "sweep_values": json.dumps(values),
                        "rep": rep,
                    },
                )
            )
    return combine_runs(runs)


def grid(default, **cells):
    out = {(u, d): default for u in VARIANTS for d in VARIANTS}
    for key, value in cells.items():
        up, down = key.split("_")
        out[(up, down)] = value
    return out


def by_id(results):
    return {r.claim.id: r for r in results}


def test_a_claims_reproduced_and_not_reproduced_on_known_data():
    sized = a_figure(
        "A1",
        grid(
            (60, 98),
            Vegas_Vegas=(60, 30),
            NewReno_Vegas=(80, 20),
            Cubic_Vegas=(80, 20),
            NewReno_Cubic=(38, 99),
            Cubic_Cubic=(40, 99),
            Vegas_Cubic=(40, 99),
        ),
    )
    oversized = a_figure(
        "A2",
        grid(
            (95, 40),
            NewReno_Vegas=(95, 10),
            Cubic_Vegas=(95, 10),
            Vegas_NewReno=(40, 95),
            Vegas_Cubic=(40, 96),
            Vegas_Vegas=(40, 30),
        ),
        rtt_s=0.7,
    )
    results = by_id(check_claims({"A1": sized, "A2": oversized}, study="A"))
    assert results["A-c1"].verdict == "reproduced"
    assert results["A-c3"].verdict == "reproduced"  # 60 % -> 38-40 %: a 33-37 % drop
    assert results["A-c4"].verdict == "reproduced"
    assert results["A-c5"].verdict == "reproduced"
    assert results["A-c6"].verdict == "reproduced"
    assert results["A-c2"].verdict == "pending"  # no Compound in this data
    assert results["A-c8"].verdict == "pending"  # no A3/A4

    # the same checks fail when the data disagrees
    bad = a_figure("A2", grid((70, 70)), rtt_s=0.7)
    results = by_id(check_claims({"A1": sized, "A2": bad}, study="A"))
    assert results["A-c5"].verdict == "not reproduced"
    assert results["A-c6"].verdict == "not reproduced"
    assert "up 70" in results["A-c5"].value
    low = a_figure("A1", grid((60, 80)))
    assert by_id(check_claims({"A1": low}, study="A"))["A-c1"].verdict == "not reproduced"


def test_rtt_claim_parts_are_checked_and_reported():
    sized = a_figure("A1", grid((60, 98)), rtt_s=0.33)
    oversized = a_figure("A2", grid((95, 40)), rtt_s=0.7)
    result = by_id(check_claims({"A1": sized, "A2": oversized}, study="A"))["A-c7"]
    assert result.verdict == "not reproduced"
    assert "(a) A1 non-Vegas 330 to 330 ms (outside)" in result.value


def test_explanations_accompany_disagreements_only(tmp_path):
    registry = [
        Claim(
            id="T-1",
            study="T",
            text="t",
            paper="p",
            tolerance="tol",
            check="always_fails",
            explain="why_it_fails",
            explain_args={"queue": 42},
        ),
        Claim(
            id="T-2",
            study="T",
            text="t",
            paper="p",
            tolerance="tol",
            check="always_passes",
            explain="why_it_fails",
        ),
    ]

    @claims.check
    def always_fails(data):
        return ClaimResult("1", "not reproduced")

    @claims.check
    def always_passes(data):
        return ClaimResult("2", "reproduced")

    @explainer
    def why_it_fails(data, queue):
        return f"the queue held {queue} packets"

    results = check_claims({}, study="T", registry=registry)
    assert results[0].explanation == "the queue held 42 packets"
    assert results[1].explanation == ""
    text = format_table(results)
    assert "why: the queue held 42 packets" in text
    write_tex(results, tmp_path / "c.tex", caption="x")
    tex = (tmp_path / "c.tex").read_text()
    assert r"\item[T-1] the queue held 42 packets" in tex
    assert r"\item[T-2]" not in tex


def test_verdict_values_are_restricted():
    with pytest.raises(ValueError, match="verdict must be one of"):
        ClaimResult("x", "sort of")
