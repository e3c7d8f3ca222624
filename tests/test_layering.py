"""The package's house plan: lower layers never import higher ones, and no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tcprepro"

#: layers that hold the model of an experiment and its data: they import nothing above them
LOW = (
    *("models", "store", "scenario", "variants", "units"),
    *("scenario_io", "traffic", "topology", "installation", "provenance", "metrics", "latex"),
    "testbeds",
)
#: what sits above: derived numbers, drawings, verdicts, the campaign, the backends, the CLI
HIGH = ("analysis", "figures", "claims", "campaign", "ns3", "emulation", "cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every tcprepro module a file imports, at any depth (deferred imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tcprepro")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tcprepro"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges = {}
    for name, path in modules.items():
        targets = {t for t in imports_of(path) if t in modules and t != name}
        edges[name] = targets
    return edges


def top(name: str) -> str:
    """The role of a module: ``tcprepro.analysis.study_b`` -> ``analysis``."""
    return name.split(".")[1] if "." in name else name


def test_the_graph_is_read():
    edges = graph()
    assert "tcprepro.analysis.study_b" in edges
    assert "tcprepro.metrics" in edges["tcprepro.analysis.study_b"]


@pytest.mark.parametrize("layer", LOW)
def test_low_layers_import_nothing_above_them(layer):
    upward = sorted(
        f"{source} -> {target}"
        for source, targets in graph().items()
        if top(source) == layer
        for target in targets
        if top(target) in HIGH
    )
    assert not upward, "upward imports: " + "; ".join(upward)


def test_analysis_never_imports_figures_or_claims_and_notebooks_import_no_claims():
    offending = sorted(
        f"{source} -> {target}"
        for source, targets in graph().items()
        if top(source) in ("analysis", "models")
        for target in targets
        if top(target) in ("figures", "claims", "campaign", "cli")
    )
    assert not offending, "; ".join(offending)
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    for notebook in notebooks.glob("*.ipynb"):
        text = notebook.read_text()
        for forbidden in ("tcprepro.claims", "tcprepro.campaign", "tcprepro.paper"):
            assert forbidden not in text, f"{notebook.name} imports {forbidden}"


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import cycle of the graph (a list of modules), or [] when there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_no_import_cycle():
    # a package's __init__ re-exporting its modules is not a cycle of the modules themselves
    edges = {
        source: {t for t in targets if not (source.startswith(t + ".") or t.startswith(source))}
        for source, targets in graph().items()
    }
    cycle = find_cycle(edges)
    assert not cycle, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_no_module_is_over_800_lines():
    # a room of one purpose: past 800 lines a module holds several, split along their seams
    limit = 800
    long = sorted(
        f"{path.relative_to(PACKAGE.parent)}: {count} lines"
        for path in PACKAGE.rglob("*.py")
        if (count := len(path.read_text().splitlines())) > limit
    )
    assert not long, f"modules over {limit} lines: " + "; ".join(long)
