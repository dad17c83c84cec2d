"""The import rules of docs/architecture.md hold: every import-linter contract is kept, and
no import cycle runs through more than one app."""

import subprocess
import sys
from pathlib import Path

import grimp

PROJECT_DIR = Path(__file__).resolve().parents[2]
APPS = (
    "accounts", "api", "attnquiz", "authoring", "courses", "exams", "exercises", "explorations",
    "grading", "instructor", "lti", "mastery", "review",
)


def test_every_import_contract_is_kept():
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(linter), "--no-cache"], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def _cycles(graph, modules) -> list[set[str]]:
    """The import cycles among ``modules`` (strongly connected sets of two or more)."""
    imports = {module: graph.find_modules_directly_imported_by(module) & modules for module in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports[child]))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_import_cycle_runs_through_two_apps(monkeypatch):
    monkeypatch.syspath_prepend(str(PROJECT_DIR))
    graph = grimp.build_graph(*APPS, cache_dir=None)
    modules = {module for module in graph.modules if ".tests" not in module and ".migrations" not in module}
    across_apps = [
        sorted(cycle) for cycle in _cycles(graph, modules) if len({module.split(".")[0] for module in cycle}) > 1
    ]
    assert across_apps == []
