"""The import graph of every module of the Python packages has no cycle.

Every import statement counts, including those inside functions (a deferred import hides a
cycle from Python but not from a reader). ``from pkg import name`` is an edge to ``pkg.name``
when that is a module, else to ``pkg``; a parent package's ``__init__`` is not an implied edge
(as in grimp / import-linter).

Run alone: ``make test PYTEST_ARGS="tests/test_import_graph.py"``.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "maes_common": ROOT / "src/maes_common",
    "maes_sim": ROOT / "src/maes_sim",
    "maes_controller": ROOT / "src/maes_controller",
    "maes_bringup": ROOT / "src/maes_bringup",
}


def _modules() -> dict[str, Path]:
    """Dotted name -> file of every module of the packages (tests excluded)."""
    found = {}
    for pkg, root in PACKAGES.items():
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere in its body); a copy of
    :func:`_parsed_graph`, which reads the sources once per test run."""
    return {module: set(targets) for module, targets in _parsed_graph().items()}


@functools.cache
def _parsed_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for target in targets:
                while target and target not in modules:  # `import a.b.c` of a non-module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_graph_covers_the_packages():
    graph = import_graph()
    assert {
        "maes_sim.core.neighbors",
        "maes_sim.core.kernels.los",
        "maes_bringup.experiments.batch",
        "maes_bringup.experiments.aggregate",
        "maes_controller.navigation",
        "maes_controller.navigation.navigator",
        "maes_controller.nodes.navigator_node",
        "maes_bringup.runners.direct",
        "maes_bringup.stack.launch_plan",
    } <= set(graph)
    # Relative and deferred imports are resolved: these edges exist in the source.
    assert "maes_sim.core.kernels.los" in graph["maes_sim.core.neighbors"]
    assert "maes_bringup.experiments.aggregate" in graph["maes_bringup.experiments.batch"]
    assert "maes_controller.navigation" in graph["maes_controller.nodes.navigator_node"]
    assert "maes_controller._checks" in graph["maes_controller.navigation.planning"]


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(import_graph()) == []


#: What other packages may import from maes_sim: the core's and the kernels' public API; and of
#: the ROS adapter its node (the embedded runner composes it) and the switches of the live view
#: and recording (docs/live_view.md), which every runner shares; the web page (maes_sim.watch's
#: __init__: its server and feeds, which maes-replay --serve uses). What the simulator shares with
#: the controller and the navigator (names, frames, QoS, lockstep, process, jit, the
#: one-run-per-domain check) is maes_common.
PUBLIC_SIM = {
    "maes_sim.core",
    "maes_sim.core.kernels",
    "maes_sim.ros.sim_node",
    "maes_sim.ros.outputs",
    "maes_sim.watch",
}


def test_other_packages_use_only_the_public_core_api():
    graph = import_graph()
    reaching = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if not module.startswith("maes_sim")
        for target in targets
        if target.startswith("maes_sim") and target not in PUBLIC_SIM
    )
    assert reaching == []


def _reaching(graph: dict[str, set[str]], source: str, target: str) -> list[str]:
    """The edges from modules under ``source`` to modules under ``target`` (dotted prefixes)."""

    def under(module: str, prefix: str) -> bool:
        return module == prefix or module.startswith(prefix + ".")

    return sorted(
        f"{module} -> {t}"
        for module, targets in graph.items()
        if under(module, source)
        for t in targets
        if under(t, target)
    )


#: The layers (docs/architecture.md): no module under the first prefix imports one under the
#: second. maes_common knows none of the others; a controller (and the built-in navigator)
#: installs without the simulator, so maes_controller never imports maes_sim. The core and the
#: pure navigator know nothing of ROS nodes or of how a run is started; the launch's pure data
#: knows nothing of the runners or the experiments; the runners know nothing of the experiments
#: built on them.
FORBIDDEN = [
    ("maes_common", "maes_sim"),
    ("maes_common", "maes_controller"),
    ("maes_common", "maes_bringup"),
    ("maes_controller", "maes_sim"),
    ("maes_sim", "maes_controller"),
    ("maes_sim", "maes_bringup"),
    ("maes_sim.core", "maes_sim.ros"),
    ("maes_sim.core", "maes_common.qos"),  # these two import rclpy
    ("maes_sim.core", "maes_common.process"),
    ("maes_controller", "maes_bringup"),
    ("maes_controller.navigation", "maes_controller.nodes"),
    ("maes_controller.navigation", "maes_controller.frontier"),
    ("maes_controller.navigation", "maes_controller.logic"),
    ("maes_controller.navigation", "maes_controller.algorithms"),
    ("maes_bringup.stack", "maes_bringup.runners"),
    ("maes_bringup.stack", "maes_bringup.experiments"),
    ("maes_bringup.runners", "maes_bringup.experiments"),
]


@pytest.mark.parametrize(("source", "target"), FORBIDDEN)
def test_layers(source, target):
    assert _reaching(import_graph(), source, target) == []


def test_the_layer_rule_sees_an_edge():
    assert _reaching({"a.b.c": {"d.e"}, "a.bc": {"d"}}, "a.b", "d") == ["a.b.c -> d.e"]


def test_the_navigator_is_used_through_its_package():
    """Outside ``maes_controller.navigation`` its modules are reached through its ``__init__``."""
    graph = import_graph()
    reaching = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if not module.startswith("maes_controller.navigation")
        for target in targets
        if target.startswith("maes_controller.navigation.")
    )
    assert reaching == []


def test_the_controller_package_does_not_depend_on_the_simulator():
    """A controller installs without the simulator: no run-time dependency in its manifest."""
    import xml.etree.ElementTree as ET

    root = ET.parse(ROOT / "src/maes_controller/package.xml").getroot()
    runtime = {e.text for tag in ("depend", "exec_depend") for e in root.iter(tag)}
    assert "maes_common" in runtime
    assert "maes_sim" not in runtime
