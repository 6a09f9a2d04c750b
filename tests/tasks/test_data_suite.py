"""The committed data-image suite (test_data.json): its shape, and that its generators reproduce it."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.tasks import CATEGORIES, load_tasks_from_index

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "evaluation_examples"
GENERATORS = sorted(p.name for p in (EXAMPLES / "generators").glob("data_batch*.py")) + ["base_counterparts.py", "account_tasks.py"]


@pytest.fixture(scope="module")
def tasks():
    return load_tasks_from_index(EXAMPLES / "test_data.json")


def test_every_task_needs_the_data_image_and_has_a_linked_twin(tasks):
    ids = {t.id: t for t in tasks}
    assert len(tasks) >= 60
    for t in tasks:
        assert t.snapshot == "data", t.id
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


def test_generators_reproduce_the_committed_tasks(tmp_path):
    """Rerunning the generators in a copy of the tree writes the same files (xlsx compared by cell values)."""
    copy = tmp_path / "repo"
    shutil.copytree(EXAMPLES, copy / "evaluation_examples")
    profile_files = "desktop_env/image/profiles/data/files"
    shutil.copytree(ROOT / profile_files, copy / profile_files)
    before = {p.relative_to(copy): p.read_bytes() for p in (copy / "evaluation_examples").rglob("*") if p.is_file()}
    for script in GENERATORS:
        out = subprocess.run([sys.executable, script], cwd=copy / "evaluation_examples/generators",
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
    after = {p.relative_to(copy): p for p in (copy / "evaluation_examples").rglob("*") if p.is_file()}
    assert set(after) == set(before), set(after) ^ set(before)
    for rel, path in after.items():
        if rel.suffix == ".xlsx":
            assert _xlsx_values(path) == _xlsx_values(EXAMPLES.parent / rel), rel
        else:
            assert path.read_bytes() == before[rel], f"{rel} changed when its generator was rerun"
