"""The shape of the package, held by tests: imports form no circle, between folders or inside one, and nothing outside
core/ computes attention: no exp or matrix product above core (the homework room's keys and the students' own numbers
are core's kernels under carried rounding)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "attntrace"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("attntrace", include_external_packages=False)


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """the strongly connected groups of more than one node (Tarjan's algorithm): each is a circle of imports"""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _room(module: str) -> str:
    """the folder a module stands in (a top-level module is its own room); a package's __init__ is its folder's"""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_no_module_imports_itself_round_a_circle(graph: grimp.ImportGraph) -> None:
    edges = {m: {i for i in graph.find_modules_directly_imported_by(m) if i != m} for m in graph.modules}
    assert _circles(edges) == []


def test_no_folder_imports_itself_round_a_circle(graph: grimp.ImportGraph) -> None:
    edges: dict[str, set[str]] = {}
    for m in graph.modules:
        for i in graph.find_modules_directly_imported_by(m):
            if _room(m) != _room(i) and _room(m) != "attntrace.__init__" and _room(i) != "attntrace":
                edges.setdefault(_room(m), set()).add(_room(i))
    assert _circles(edges) == []


def _arithmetic_in(path: Path, names: frozenset[str] = frozenset({"exp"}), products: bool = True) -> list[str]:
    """where a file computes attention itself: a call of one of names, or (products) a matrix product"""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if products and isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.append(f"{path.name}:{node.lineno} @")
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in names:
                found.append(f"{path.name}:{node.lineno} {name}()")
    return sorted(found)


@pytest.mark.parametrize("folder", ["homework", "views", "render", "explore", "cli"])
def test_attention_is_computed_in_core_only(folder: str) -> None:
    assert [where for path in sorted((PACKAGE / folder).rglob("*.py")) for where in _arithmetic_in(path)] == []


def test_real_models_call_the_kernels() -> None:  # their linear layers multiply matrices: that is not attention
    names = frozenset({"exp", "softmax", "sunk"})
    assert [where for path in sorted((PACKAGE / "checkpoints").rglob("*.py"))
            for where in _arithmetic_in(path, names, products=False)] == []


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import numpy as np\ny = np.exp(x) @ v\nw = softmax(z)\n", encoding="utf-8")
    assert _arithmetic_in(sample) == ["sample.py:2 @", "sample.py:2 exp()"]
    assert _arithmetic_in(sample, frozenset({"softmax"})) == ["sample.py:2 @", "sample.py:3 softmax()"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
