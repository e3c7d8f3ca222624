"""The reading rules (R1 ...) the tolerances and the verdict history cite are defined."""

import re

from tcprepro.claims import load_registry, reading_rules
from tcprepro.paper import _glossary
from tcprepro.paper.verify import _history_table


def test_the_terms_define_every_reading_rule_a_claim_cites():
    """Issue 34: "36f66dcd (R1 R13)" and the tolerances' "R1" were never decoded."""
    terms = _glossary()
    defined = re.findall(r"\\item\[(R\d+)\]", terms)
    assert defined == list(reading_rules())
    cited = {rule for claim in load_registry() for rule in claim.rules}
    assert cited <= set(defined)
    assert r"\label{sec:readings}" in terms
    # each rule with its name and what it becomes, as the guide states them
    rule = reading_rules()["R1"]
    assert rf"\item[R1] \emph{{{rule['name']}}}" in terms
    assert "within" in terms.split(r"\item[R1]")[1].split(r"\item[R2]")[0]


def test_the_history_table_points_to_the_rules():
    record = {
        "claim": "B-c1",
        "backend": "ns-3",
        "verdict": "reproduced",
        "reading": "385a0f15",
        "rules": "R1 R13",
        "profile": "ns2-tcp-linux@845855bf",
        "runs_commit": "fd90743",
        "change": "",
        "source": "",
    }
    table = _history_table([record])
    assert "385a0f15 (R1 R13)" in table
    assert r"\ref{sec:readings}" in table.split(r"\label{tab:history}")[0]
