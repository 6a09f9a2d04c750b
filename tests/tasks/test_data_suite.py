"""The committed data-image suite (test_data.json): its shape, and that the generators reproduce every
generated task (evaluation_examples/generators)."""
import ast
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.tasks import CATEGORIES, load_tasks_from_index

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "evaluation_examples"
PACKAGE = EXAMPLES / "generators"


@pytest.fixture(scope="module")
def tasks():
    return load_tasks_from_index(EXAMPLES / "test_data.json")


def test_every_task_needs_the_data_image_and_has_a_linked_twin(tasks):
    ids = {t.id: t for t in tasks}
    assert len(tasks) >= 60
    for t in tasks:
        assert t.image_profile == "data", t.id  # "data", or a warm state of it ("data:superset")
        if t.warm_state:
            assert t.snapshot == f"data:{t.warm_state}", t.id
        twin = ids.get(t.counterpart)
        assert twin is not None and twin.counterpart == t.id, f"{t.id}: counterpart {t.counterpart} is not its twin"
        guidance = {g for g in t.tags if g in ("verbose", "abstract")}
        assert len(guidance) == 1 and guidance != {g for g in twin.tags if g in ("verbose", "abstract")}, t.id
        assert len(set(t.tags) & set(CATEGORIES)) == 1, t.id
        assert t.extra.get("solution") and t.source and t.related_apps and t.action_number, t.id


def test_suite_spans_the_categories_apps_and_infeasible_tasks(tasks):
    from desktop_env import verify

    categories = {c for t in tasks for c in t.tags if c in CATEGORIES}
    assert categories == set(CATEGORIES)
    assert len({t.path.parent.parent.name for t in tasks}) >= 10
    assert sum(1 for t in tasks if t.infeasible) >= 6


def test_eval_scripts_exist_and_parse(tasks):
    for t in tasks:
        ev = json.loads(t.path.read_text())["evaluator"]
        result = ev.get("result") or {}
        if result.get("type") != "vm_script_output":
            continue
        script = ROOT / result["src"]
        assert script.is_file(), f"{t.id}: {script} is missing"
        out = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert out.returncode == 0, f"{script}: {out.stderr}"


def _xlsx_values(path: Path) -> list:
    import openpyxl

    wb = openpyxl.load_workbook(path)
    return [(ws.title, [list(r) for r in ws.iter_rows(values_only=True)]) for ws in wb.worksheets]


def _db_dump(path: Path) -> list[str]:
    """A SQLite file's schema and rows (its header bytes name the library version that wrote it)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def _package_list(name: str) -> tuple:
    """The tuple ``name`` of the generators package's __init__.py, read without importing it."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    return next(ast.literal_eval(n.value) for n in tree.body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == name)


def test_the_entry_point_runs_every_generator_module():
    """A module added to the package is run by ``python3 -m evaluation_examples.generators`` (or is a helper)."""
    generators, helpers = _package_list("GENERATORS"), _package_list("HELPERS")
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert len(set(generators)) == len(generators)
    assert set(generators) | set(helpers) == modules and not set(generators) & set(helpers)
    for name in generators:
        tree = ast.parse((PACKAGE / f"{name}.py").read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body), f"{name}.py has no main()"


def test_generators_reproduce_the_committed_tasks(tmp_path):
    """Rerunning every generator in a copy of the tree writes the same files (xlsx compared by cell values,
    SQLite files by their dump) and changes no index file."""
    copy = tmp_path / "repo"
    shutil.copytree(EXAMPLES, copy / "evaluation_examples", ignore=shutil.ignore_patterns("__pycache__"))
    for profile_files in ("desktop_env/image/profiles/data/files", "desktop_env/image/profiles/office/files"):
        shutil.copytree(ROOT / profile_files, copy / profile_files)  # files some tasks start from
    before = {p.relative_to(copy): p.read_bytes() for p in (copy / "evaluation_examples").rglob("*") if p.is_file()}
    out = subprocess.run([sys.executable, "-m", "evaluation_examples.generators"], cwd=copy,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    for name in _package_list("GENERATORS"):
        assert f"== {name}\n" in out.stdout, f"{name} did not run"
    after = {p.relative_to(copy): p for p in (copy / "evaluation_examples").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    assert set(after) == set(before), set(after) ^ set(before)
    for rel, path in after.items():
        if rel.suffix == ".xlsx":
            assert _xlsx_values(path) == _xlsx_values(EXAMPLES.parent / rel), rel
        elif rel.suffix == ".db":
            assert _db_dump(path) == _db_dump(EXAMPLES.parent / rel), rel
        else:
            assert path.read_bytes() == before[rel], f"{rel} changed when its generator was rerun"
