"""Every setup step, getter and metric name of the general computer-use suite resolves here.

The names are those of ``tests/data/osworld_names.md`` (a copy of the suite's name list). For each
name a task file in the suite's flat layout (``examples/<app>/<uuid>.json``, "type/parameters"
spelling) uses it, and ``desktop-env tasks check`` must report it as supported, needing an account,
or not runnable here *with a reason*, never as unknown.

Names not implemented yet are listed in :data:`PENDING`: each is expected to be unknown (a strict
xfail), so implementing one without removing it from the list fails the test, and the list is the
honest count of what is left.
"""
from __future__ import annotations

import io
import json
import re
import uuid
from pathlib import Path

import pytest

from desktop_env import registry as reg
from desktop_env.cli_tasks import check

NAMES_FILE = Path(__file__).resolve().parent.parent / "data" / "osworld_names.md"
SECTIONS = {"setup step types": "setup", "getter types": "getter", "metric names": "metric"}

#: Names the suite uses that no registry holds yet (see the issue on the general suite); each is a
#: strict xfail, so one implemented must leave this set. Every name resolves today.
PENDING: set[tuple[str, str]] = set()


def suite_names() -> list[tuple[str, str]]:
    """(kind, name) for every name of the list, in its order."""
    out, kind = [], None
    for line in NAMES_FILE.read_text(encoding="utf-8").splitlines():
        head = re.match(r"# (.+?) \(uses\)$", line)
        if head:
            kind = SECTIONS.get(head.group(1))
            continue
        if kind and line.strip():
            out += [(kind, re.sub(r"\s+\d+$", "", item.strip())) for item in line.split(",")]
            kind = None
    return out


def task_using(kind: str, name: str) -> dict:
    """A task file of the general suite's shape whose ``kind`` slot names ``name``."""
    task = {"id": str(uuid.uuid4()), "snapshot": "chrome", "instruction": f"uses {name}",
            "source": "", "config": [], "related_apps": ["chrome"],
            "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "true"},
                          "expected": {"type": "rule", "rules": {"expected": ""}}}}
    if kind == "setup":
        task["config"] = [{"type": name, "parameters": {}}]
    elif kind == "getter":
        task["evaluator"]["result"] = {"type": name}
    else:
        task["evaluator"]["func"] = name
    return task


def test_the_list_is_complete():
    """The parser reads all three sections (13 setup steps, 47 getters, 111 metrics)."""
    names = suite_names()
    counts = {k: sum(1 for kind, _ in names if kind == k) for k in SECTIONS.values()}
    assert counts == {"setup": 13, "getter": 47, "metric": 111}
    assert PENDING <= set(names), sorted(PENDING - set(names))


@pytest.mark.parametrize("kind,name", [
    pytest.param(k, n, marks=pytest.mark.xfail(strict=True, reason="not implemented yet"))
    if (k, n) in PENDING else (k, n)
    for k, n in suite_names()], ids=lambda v: v)
def test_name_resolves(tmp_path, kind, name):
    task = task_using(kind, name)
    folder = tmp_path / "evaluation_examples" / "examples" / "chrome"
    folder.mkdir(parents=True)
    (folder / f"{task['id']}.json").write_text(json.dumps(task))
    out = io.StringIO()
    check(tmp_path, as_json=True, out=out)
    report = json.loads(out.getvalue())
    registry_kind = {"setup": reg.SETUP_STEPS.kind, "getter": reg.GETTERS.kind, "metric": reg.METRICS.kind}[kind]
    [entry] = [e for e in report["names"] if e["kind"] == registry_kind and e["name"] == name]
    assert entry["status"] != "unknown", f"{kind} {name!r} is unknown to tasks check"
    if entry["status"] == reg.UNAVAILABLE:
        table = {r.kind: r for r in reg.ALL_REGISTRIES}[registry_kind]
        assert table.entries[name].note, f"{kind} {name!r} is registered as unavailable without a reason"
