"""One-way arrows and small library contracts of the hardening issue.

- The store imports nothing from the runner (at any level, also inside functions).
- The store never imports the scoring stage or what scoring needs (answers, formats, embeddings,
  providers, item validation): it keeps the score rows its callers compute.
- No import cycle anywhere in ``eduart_core`` (function-level imports included), between modules nor
  between packages read as one room each; ``runner.launch`` and ``runner.progress`` do not import each other.
- Extraction validation does not ask for an item id; the inspector can list unanswered items.
- Missing values are tested with `math.isnan` or `pd.isna`, never by comparing a value with itself.
"""
from __future__ import annotations

import ast
from pathlib import Path

from eduart_core.items import check_item

PACKAGE = Path(__file__).resolve().parents[2] / "eduart_core"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path], *, top_level_only: bool) -> set[str]:
    """Modules of ``eduart_core`` that ``name`` imports (absolute names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    nodes = []
    if top_level_only:
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                nodes.append(node)
            elif isinstance(node, ast.If):  # TYPE_CHECKING blocks count: they are arrows too
                nodes.extend(n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    else:
        nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    targets: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
            continue
        base = package[: len(package) - node.level + 1] if node.level else []
        module = ".".join(base + ([node.module] if node.module else []))
        targets.add(module)
        targets.update(f"{module}.{a.name}" for a in node.names)
    return {t for t in targets if t in modules and t != name}


def test_store_imports_nothing_from_the_runner_or_above():
    modules = _modules()
    above = ("eduart_core.runner", "eduart_core.views", "eduart_core.analysis", "eduart_core.commands",
             "eduart_core.cli", "eduart_core.report", "eduart_core.charts")
    offenders = {name: sorted(t for t in _imports(name, path, modules, top_level_only=False) if t.startswith(above))
                 for name, path in modules.items() if name.startswith("eduart_core.store")}
    assert {k: v for k, v in offenders.items() if v} == {}


#: What scoring needs and the store must not: the parser, the formats, the scoring stage, the embedding
#: models, the providers and item validation.
SCORING_SIDE = ("eduart_core.answers", "eduart_core.formats", "eduart_core.scoring", "eduart_core.embeddings",
                "eduart_core.providers", "eduart_core.items")


def test_store_never_imports_the_scoring_stage_or_what_it_needs():
    """A write transaction never waits on a parser, a scorer or an embedding request: scoring happens above."""
    modules = _modules()
    offenders = {name: sorted(t for t in _imports(name, path, modules, top_level_only=False)
                              if any(t == side or t.startswith(side + ".") for side in SCORING_SIDE))
                 for name, path in modules.items() if name.startswith("eduart_core.store")}
    assert {k: v for k, v in offenders.items() if v} == {}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of nodes that reach each other (Tarjan's strongly connected components, size > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in graph:
        if name not in index:
            visit(name)
    return cycles


def _room(module: str) -> str:
    """The room a module stands in: its top-level package under ``eduart_core``, or itself."""
    return ".".join(module.split(".")[:2])


def test_no_import_cycles_between_modules():
    """Counting imports inside functions too: a lazy import hides a cycle, it does not remove it."""
    modules = _modules()
    graph = {name: _imports(name, path, modules, top_level_only=False) for name, path in modules.items()}
    assert "eduart_core.runner.launch" not in _imports("eduart_core.runner.progress",
                                                       modules["eduart_core.runner.progress"], modules,
                                                       top_level_only=False)
    assert _cycles(graph) == []


def test_no_import_cycles_between_the_librarys_rooms():
    """Read by rooms (a package such as ``team`` or ``views`` is one room), the arrows still run one way:
    a package low in the house (``team``: who acts) never imports one that uses it (the demo, review,
    the benchmarks), even through a module of its own that others do not import."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph.setdefault(_room(name), set()).update(
            _room(t) for t in _imports(name, path, modules, top_level_only=False) if _room(t) != _room(name))
    assert _cycles(graph) == []


def test_extraction_records_validate_without_an_item_id():
    record = {"type": "multiple_choice_radio", "question_text": "Which invented colour?",
              "choices": [{"id": "A", "text": "ochre"}, {"id": "B", "text": "teal"}],
              "answers": [{"id": "A", "description": "ochre"}], "language": "en", "has_image": False, "image": None}
    assert check_item(record, require_id=False)[1] == []
    assert any("item_id" in p for p in check_item(record)[1])  # gold items still need one


def test_inspector_list_holds_items_nobody_answered_yet(store):
    """An imported dataset is browsable before any model answers it."""
    from runner_items import fill_store

    from eduart_core import views
    from eduart_core.cli import main
    from eduart_core.selection import Selection

    records = fill_store(store, dataset="fresh")
    listed = views.item_list(views.Source.of(store), Selection(dataset="fresh"))
    assert list(listed["item_id"]) == [r["item_id"] for r in records]
    assert (listed["n_models"] == 0).all() and listed["mean_score"].isna().all()
    assert main(["run", "--db", str(store.path), "--model", "chance", "--dataset", "fresh", "--items",
                 "type=multiple_choice_radio", "--quiet"]) == 0
    # chance is a baseline: it answers, but counts as an examinee only when switched in
    off = views.item_list(views.Source.of(store), Selection(dataset="fresh")).set_index("item_id")
    assert len(off) == len(records) and (off["n_models"] == 0).all()
    listed = views.item_list(views.Source.of(store), Selection(dataset="fresh", baselines=True)).set_index("item_id")
    assert len(listed) == len(records) and listed.loc["0001", "n_models"] == 1
    assert (listed.drop(index="0001")["n_models"] == 0).all()


def test_no_import_runs_back_up_from_the_bottom_rooms():
    """The item model, the answer formats and the vocabulary are the bottom of the tree: they import
    nothing from the services and rooms that use them (embeddings, providers, the store, ...)."""
    modules = _modules()
    bottom = ("eduart_core.formats", "eduart_core.vocab", "eduart_core.text", "eduart_core.answers",
              "eduart_core.paper", "eduart_core.errors")
    above = ("eduart_core.embeddings", "eduart_core.providers", "eduart_core.store", "eduart_core.runner",
             "eduart_core.views", "eduart_core.panels", "eduart_core.analysis", "eduart_core.charts",
             "eduart_core.report", "eduart_core.commands", "eduart_core.cli", "eduart_core.extraction",
             "eduart_core.importers", "eduart_core.scoring", "eduart_core.demo", "eduart_core.api")
    offenders = {name: sorted(t for t in _imports(name, path, modules, top_level_only=False) if t.startswith(above))
                 for name, path in modules.items() if name.startswith(bottom)}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_missing_values_are_tested_by_name_never_by_comparing_a_value_with_itself():
    """``x != x`` reads as a typo and fails on pandas' NA; the library says ``math.isnan`` or ``pd.isna``."""
    found = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq)
                    and ast.dump(node.left) == ast.dump(node.comparators[0])):
                found.append(f"{name}:{node.lineno}")
    assert not found


def _streamlit_imports(source: str) -> list[int]:
    """Lines of ``source`` that import Streamlit: an import statement at any depth (inside functions
    too), or ``importlib.import_module`` / ``__import__`` given a literal name."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("__import__", "import_module")))):
            names = [node.args[0].value]
        if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
            lines.append(node.lineno)
    return lines


def test_the_library_never_imports_streamlit():
    """Pages and the page benchmarks (``benchmarks/``) import Streamlit; no module of ``eduart_core`` does,
    not even inside a function (read from the source, so nothing is imported to check it)."""
    offenders = {name: lines for name, path in _modules().items()
                 if (lines := _streamlit_imports(path.read_text(encoding="utf-8")))}
    assert offenders == {}


def test_the_streamlit_check_sees_every_way_of_importing_it():
    planted = ("import os\nimport streamlit as st\n"
               "def f():\n    from streamlit.testing.v1 import AppTest\n"
               "def g():\n    import importlib\n    return importlib.import_module('streamlit.logger')\n"
               "x = '.streamlit/secrets.toml'\nimport streamlit_extras_not_streamlit\n")
    assert _streamlit_imports(planted) == [2, 4, 7]
