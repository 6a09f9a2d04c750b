"""Grader corrections (desktop_env.tasks.corrections): the merge patch, the table's errors, loading with and
without them, what the results say, and the kept correction scored on real workbooks in both directions."""
from __future__ import annotations

import json
import os
from pathlib import Path

import openpyxl
import pytest

from desktop_env.errors import TaskConfigError
from desktop_env.tasks import corrections as corr
from desktop_env.tasks import load_task

DEV = os.environ.get("DESKTOP_ENV_PUBLIC_SUITE_DEV")
TASK = {"id": "task-1", "instruction": "make hello.txt", "config": [],
        "evaluator": {"func": "check_include_exclude",
                      "result": {"type": "vm_command_line", "command": "cat hello.txt"},
                      "expected": {"type": "rule", "rules": {"include": ["hello"]}}}}
PATCH = {"evaluator": {"expected": {"rules": {"include": ["hello world"]}}}}


@pytest.fixture
def table(tmp_path, monkeypatch):
    """table(entries) writes a correction table into a fresh folder that the lookups use."""
    root = tmp_path / "corrections"
    root.mkdir()
    monkeypatch.setattr(corr, "CORRECTIONS_DIR", root)

    def write(entries, name="suite.json"):
        (root / name).write_text(json.dumps(entries))
        corr._read_all.cache_clear()
        return root / name
    yield write
    corr._read_all.cache_clear()


def test_merge_patch_follows_rfc_7396():
    target = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    assert corr.merge_patch(target, {"a": {"b": None, "c": [3]}, "e": {"f": 1}}) == {
        "a": {"c": [3]}, "d": 1, "e": {"f": 1}}
    assert target == {"a": {"b": 1, "c": [1, 2]}, "d": 1}  # the task's own data is not touched
    assert corr.merge_patch(target, [1]) == [1]


def test_corrections_are_applied_only_when_asked_and_the_task_says_so(suite, table):
    table([{"ids": ["task-1"], "finding": "the rule wants the wrong word", "evidence": "hello.txt says hello world",
            "patch": PATCH}])
    path = suite("os", TASK)
    plain = load_task(path)
    assert plain.correction is None and plain.evaluator.expecteds[0].fields["rules"] == {"include": ["hello"]}
    fixed = load_task(path, grader_corrections=True)
    assert fixed.correction == "the rule wants the wrong word"
    assert fixed.evaluator.expecteds[0].fields["rules"] == {"include": ["hello world"]}
    other = load_task(suite("os", dict(TASK, id="task-2")), grader_corrections=True)
    assert other.correction is None


@pytest.mark.parametrize("entry, field, words", [
    ({"ids": [], "finding": "f", "evidence": "e", "patch": PATCH}, "[0].ids", "non-empty list"),
    ({"ids": ["t"], "finding": " ", "evidence": "e", "patch": PATCH}, "[0].finding", "non-empty string"),
    ({"ids": ["t"], "finding": "f", "evidence": "e", "patch": {}}, "[0].patch", "JSON merge patch"),
    ({"ids": ["t"], "finding": "f", "patch": PATCH}, "[0]", "missing key(s) evidence"),
    ({"ids": ["t"], "finding": "f", "evidence": "e", "patch": PATCH, "why": "x"}, "[0]", "unknown key(s) why"),
])
def test_a_malformed_table_names_its_file_and_entry(table, entry, field, words):
    path = table([entry])
    with pytest.raises(TaskConfigError) as err:
        corr.grader_corrections()
    assert str(path) in str(err.value) and field in str(err.value) and words in str(err.value)


def test_a_task_corrected_twice_is_refused(table):
    table([{"ids": ["t"], "finding": "f", "evidence": "e", "patch": PATCH}], "a.json")
    second = table([{"ids": ["t"], "finding": "g", "evidence": "e", "patch": PATCH}], "b.json")
    with pytest.raises(TaskConfigError) as err:
        corr.grader_corrections()
    assert str(second) in str(err.value) and "corrected twice" in str(err.value)


def test_the_results_say_whether_corrections_were_on():
    from desktop_env.harness.config import RunConfig
    from desktop_env.harness.summary import format_summary, summarize

    record = {"domain": "excel", "task_id": "t", "trial": 1, "status": "success", "final": True, "score": 1.0,
              "steps": 3, "duration_s": 10.0, "grader_corrections": True, "grader_correction": "the gold is wrong",
              "tags": [], "reason": {"kind": "passed"}}
    on = summarize(RunConfig(model="noop", grader_corrections=True), [record], [], 0)
    assert on["grader_corrections"] is True
    assert on["corrected"] == [{"domain": "excel", "task_id": "t", "trial": 1, "grader_correction": "the gold is wrong"}]
    assert "grader corrections: on (1 task run(s) scored by a corrected grader: excel/t)" in format_summary(on)
    off = summarize(RunConfig(model="noop"), [dict(record, grader_corrections=False, grader_correction=None)], [], 0)
    assert off["grader_corrections"] is False and off["corrected"] == []
    assert "grader corrections" not in format_summary(off)


# -- the kept table, against the public suite's real files ---------------------------------------------------
def _dev_task(task_id: str) -> Path:
    if not DEV:
        pytest.skip("DESKTOP_ENV_PUBLIC_SUITE_DEV is not set (.ci/run sets it where the public suite's development "
                    "split is on the machine)")
    return Path(DEV) / "evaluation_examples" / "examples" / "excel" / task_id / f"{task_id}.json"


def test_every_kept_correction_loads_on_its_task():
    entries = corr.grader_corrections()
    assert entries, f"no correction table under {corr.CORRECTIONS_DIR}"
    for task_id, entry in entries.items():
        path = _dev_task(task_id)
        assert entry.evidence and entry.finding
        assert load_task(path, grader_corrections=True).correction == entry.finding


def _answer(task: Path, tmp_path: Path, gross_profit) -> Path:
    """The task's workbook with the answer an agent would save: Sheet2 holding the years and ``gross_profit``."""
    wb = openpyxl.load_workbook(task.parent / "IncomeStatement2.xlsx")
    sheet1 = wb["Sheet1"]
    sheet2 = wb.create_sheet("Sheet2")
    sheet2.append(["Year", "Gross Profit"])
    for row in sheet1.iter_rows(min_row=2, values_only=True):
        year, sales, returns, discounts, _net, materials, labor, overhead = row[:8]
        sheet2.append([year, gross_profit(sales, returns, discounts, materials, labor, overhead)])
    out = tmp_path / f"answer_{gross_profit.__name__}.xlsx"
    wb.save(out)
    return out


def by_definition(sales, returns, discounts, materials, labor, overhead):
    return sales - returns - discounts - (materials + labor + overhead)


def as_the_gold_adds(sales, returns, discounts, materials, labor, overhead):
    return sales + returns + discounts - (materials + labor + overhead)


def test_the_gross_profit_correction_scores_the_definition_and_the_suite_s_grader_does_not(tmp_path):
    """65551792: the suite's grader passes only the sum its gold file holds; the corrected one passes the
    definition and fails that sum (both scored on real workbooks built from the task's own file)."""
    from desktop_env.evaluators.metrics.table import compare_table

    task = _dev_task("65551792-4c32-4904-983d-7c68c189b474")
    gold = task.parent / "3_IncomeStatement2_gt1.xlsx"
    right, wrong = _answer(task, tmp_path, by_definition), _answer(task, tmp_path, as_the_gold_adds)
    theirs = load_task(task).evaluator.options[0]["rules"]
    ours = load_task(task, grader_corrections=True).evaluator.options[0]["rules"]
    assert compare_table(str(right), str(gold), rules=theirs) == 0.0
    assert compare_table(str(wrong), str(gold), rules=theirs) == 1.0
    assert compare_table(str(right), str(gold), rules=ours) == 1.0
    assert compare_table(str(wrong), str(gold), rules=ours) == 0.0


def test_a_run_with_corrections_scores_by_the_corrected_grader_and_its_status_says_so(tmp_path, table):
    """Through the harness's real plan_jobs and run_job (an env that scores on the host): the same answer is
    0.0 by the task's own grader and 1.0 by the corrected one, and status.json says which it was."""
    import sys

    from desktop_env.agents.simple import NoopAgent
    from desktop_env.harness.config import RunConfig
    from desktop_env.harness.jobs import plan_jobs, run_job
    from desktop_env.harness.options import parse_args

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_agent_errors import HostEnv  # noqa: E402

    task = {"id": "t-1", "instruction": "Say 41.", "config": [],
            "evaluator": {"func": "exact_match", "result": {"type": "rule", "rules": "41"},
                          "expected": {"type": "rule", "rules": {"expected": "42"}}}}
    table([{"ids": ["t-1"], "finding": "the expected answer is 42, the instruction asks for 41",
            "evidence": "t-1.json: instruction 'Say 41.', expected rules.expected '42'",
            "patch": {"evaluator": {"expected": {"rules": {"expected": "41"}}}}}])
    examples = tmp_path / "evaluation_examples"
    (examples / "examples" / "os" / "t-1").mkdir(parents=True)
    (examples / "examples" / "os" / "t-1" / "t-1.json").write_text(json.dumps(task))
    (examples / "test_x.json").write_text(json.dumps({"os": ["t-1"]}))
    for flag, score in (([], 0.0), (["--grader_corrections"], 1.0)):
        args = parse_args(["--model", "noop", "--test_config_base_dir", str(examples), "--test_all_meta_path",
                           str(examples / "test_x.json"), "--result_dir", str(tmp_path / f"results{len(flag)}"),
                           *flag])
        config = RunConfig.from_namespace(args)
        [job] = plan_jobs(config).todo
        status = run_job(job, config, NoopAgent(), [HostEnv(tmp_path / "cache")], None)
        written = json.loads((job.folder / "status.json").read_text())
        assert status["score"] == score and written["grader_corrections"] is bool(flag)
        finding = "the expected answer is 42, the instruction asks for 41" if flag else None
        assert written.get("grader_correction") == finding
