"""The package's house plan: lower layers never import higher ones, and no import cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tcprepro"

#: layers that hold the model of an experiment and its data: they import nothing above them
LOW = (
    *("models", "store", "scenario", "variants", "units"),
    *("scenario_io", "traffic", "network_plan", "installation", "provenance", "metrics", "latex"),
    *("testbeds", "yamlfile"),
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


# ---------------------------------------------------------------------------
# The emulation routes: one type per route, and nobody else asks which one it holds

#: the names of the emulation routes (``--route``, ``emulation_route:``, the datasets)
ROUTE_NAMES = frozenset({"native", "uml", "vm"})
#: the route objects and types of tcprepro.emulation.routes
ROUTE_SYMBOLS = frozenset({"NATIVE", "UML", "VM", "NativeRoute", "UmlRoute", "VmRoute"})
#: the only module that may branch on which route it holds, or say which runs in parallel
ROUTE_MODULES = frozenset({"tcprepro.emulation.routes"})
WORKFLOW = PACKAGE.parents[1] / "workflow"


def _route_constants(tree: ast.AST) -> set[str]:
    """Names a module binds to a route's name (``LINUX_ROUTE = "uml"``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_route_name(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def _is_route_name(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in ROUTE_NAMES


def _names_a_route(node: ast.AST, constants: set[str]) -> bool:
    """Whether an operand of a comparison stands for a route's identity."""
    if _is_route_name(node):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_route(element, constants) for element in node.elts)
    if isinstance(node, ast.Name):
        return node.id in ROUTE_SYMBOLS | constants
    if isinstance(node, ast.Attribute):
        if node.attr in ROUTE_SYMBOLS | constants:
            return True
        # route.name, choice.route.name, self.route.name
        return node.attr == "name" and "route" in ast.unparse(node.value).lower()
    return False


def route_identity_checks(path: Path) -> list[str]:
    """Where a module branches on a route's identity: ``==``/``!=``/``is``/``in`` against
    a route's name, a constant holding one, a route object or a route's ``.name``; a
    ``match`` case on one; ``isinstance`` with a route type."""
    tree = ast.parse(path.read_text())
    constants = _route_constants(tree)
    where = path.relative_to(PACKAGE.parent) if PACKAGE in path.parents else path.name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            if any(_names_a_route(o, constants) for o in [node.left, *node.comparators]):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Match):
            subject = _names_a_route(node.subject, constants)
            for case in node.cases:
                patterns = [p for p in ast.walk(case.pattern) if isinstance(p, ast.MatchValue)]
                classes = [p for p in ast.walk(case.pattern) if isinstance(p, ast.MatchClass)]
                if (
                    subject
                    or any(_names_a_route(p.value, constants) for p in patterns)
                    or any(_names_a_route(p.cls, constants) for p in classes)
                ):
                    found.append(f"{where}:{case.pattern.lineno}: case {ast.unparse(case.pattern)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
            and _names_a_route(node.args[1], set())
        ):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


#: a workflow rule comparing a value with a route's name, or a route's ``.name``
SMK_ROUTE_CHECK = re.compile(
    r"""(?:[=!]=|\bis\b|\bin\b)\s*[(\[{]?\s*["'](?:native|uml|vm)["']"""
    r"""|["'](?:native|uml|vm)["']\s*(?:[=!]=|\bin\b)|route\.name\s*(?:[=!]=|\bin\b|\bis\b)"""
)


def test_the_route_finder_finds_planted_checks(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "MY_ROUTE = 'uml'\n"
        "def f(route, choice):\n"
        "    a = route == 'uml'\n"
        "    b = choice.route in ('native', 'vm')\n"
        "    c = route is UML\n"
        "    d = choice.route.name != other\n"
        "    e = route == MY_ROUTE\n"
        "    g = isinstance(route, UmlRoute)\n"
        "    match route:\n"
        "        case 'vm':\n"
        "            pass\n"
        "    h = route == 'auto' or kind == 'kvm' or results['native']\n"
    )
    found = route_identity_checks(planted)
    assert sorted(int(line.split(":")[1]) for line in found) == [3, 4, 5, 6, 7, 8, 10]
    assert SMK_ROUTE_CHECK.search('if EMULATION.route == "uml":')
    assert SMK_ROUTE_CHECK.search("route.name in routes")
    assert not SMK_ROUTE_CHECK.search("route=EMULATION.route if EMULATION.enabled else None")


def test_no_module_but_the_route_types_branches_on_a_route():
    """The route is an object (tcprepro.emulation.routes) that answers what differs from
    one route to another: no other module asks which route it holds."""
    found = [
        check
        for path in sorted(PACKAGE.rglob("*.py"))
        if module_name(path) not in ROUTE_MODULES
        for check in route_identity_checks(path)
    ]
    found += [
        f"{path.relative_to(WORKFLOW.parent)}:{number}: {line.strip()}"
        for path in sorted([*WORKFLOW.rglob("*.smk"), WORKFLOW / "Snakefile"])
        if path.exists()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if SMK_ROUTE_CHECK.search(line)
    ]
    assert not found, "route identity checked outside its type:\n" + "\n".join(found)


def test_only_the_route_types_know_which_route_runs_in_parallel():
    """Whether a route's batches run side by side is the route's answer
    (``runs_in_parallel``): nobody else sets it, and no function about parallelism
    decides it from the route's identity."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if module_name(path) in ROUTE_MODULES:
            continue
        tree = ast.parse(path.read_text())
        constants = _route_constants(tree)
        where = path.relative_to(PACKAGE.parent)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for target in targets:
                name = getattr(target, "id", None) or getattr(target, "attr", None)
                if name == "runs_in_parallel":
                    found.append(f"{where}:{node.lineno}: sets runs_in_parallel")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                "parallel" in node.name
            ):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Compare) and any(
                        _names_a_route(o, constants) for o in [inner.left, *inner.comparators]
                    ):
                        found.append(f"{where}:{inner.lineno}: {node.name}: {ast.unparse(inner)}")
    assert not found, "parallelism decided outside the route types:\n" + "\n".join(found)
    from tcprepro.emulation.routes import REGISTRY

    assert [name for name, route in REGISTRY.items() if route.runs_in_parallel] == ["uml"]


def test_no_module_is_over_800_lines():
    # a room of one purpose: past 800 lines a module holds several, split along their seams
    limit = 800
    long = sorted(
        f"{path.relative_to(PACKAGE.parent)}: {count} lines"
        for path in PACKAGE.rglob("*.py")
        if (count := len(path.read_text().splitlines())) > limit
    )
    assert not long, f"modules over {limit} lines: " + "; ".join(long)
