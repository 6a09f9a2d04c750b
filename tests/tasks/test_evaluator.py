"""The evaluator driver on tasks whose getters stay on the host: combination, FAIL and infeasible rules."""
from __future__ import annotations

import pytest

from desktop_env.session import SetupContext
from desktop_env.evaluators.evaluator import clamp_score, combine, evaluate, is_fail
from desktop_env.tasks import load_task

TID = "44444444-2222-4333-8444-555555555555"
GOLD = "name,total\na,1\nb,2\n"


def task(suite, evaluator=None, evaluation=None, files=None, config=None):
    t = {"id": TID, "instruction": "x", "config": config or []}
    if evaluator is not None:
        t["evaluator"] = evaluator
    if evaluation is not None:
        t["evaluation"] = evaluation
    return load_task(suite("excel", t, files=files))


def ctx_for(t, tmp_path):
    return SetupContext(controller=None, task=t, cache_dir=tmp_path / "cache")


def csv_pair(result_text):
    return ({"type": "local_file", "path": "result.csv"}, {"type": "local_file", "path": "gold.csv"},
            {"result.csv": result_text, "gold.csv": GOLD})


def list_evaluator(conj, good_csv: bool, good_list: bool, **extra):
    res, exp, files = csv_pair(GOLD if good_csv else "name,total\na,9\n")
    ev = {"func": ["compare_csv", "exact_match"], "conj": conj,
          "result": [res, {"type": "list", "list": [1, 2] if good_list else [2, 1]}],
          "expected": [exp, {"type": "rule", "rules": {"expected": [1, 2]}}], **extra}
    return ev, files


@pytest.mark.parametrize("conj,good_csv,good_list,score", [
    ("and", True, True, 1.0), ("and", True, False, 0.0), ("and", False, False, 0.0),
    ("or", True, False, 1.0), ("or", False, True, 1.0), ("or", False, False, 0.0),
])
def test_conj(suite, tmp_path, conj, good_csv, good_list, score):
    ev, files = list_evaluator(conj, good_csv, good_list)
    t = task(suite, ev, files=files)
    assert evaluate(t, ctx_for(t, tmp_path), last_action="DONE") == score


def test_partial_scores_average_under_and(suite, tmp_path):
    files = {"a.txt": "1\n2\n3\n4\n", "b.txt": "1\n2\n3\n5\n"}
    ev = {"func": ["diff_text_file", "exact_match"],
          "result": [{"type": "local_file", "path": "a.txt"}, {"type": "rule", "rules": 1}],
          "expected": [{"type": "local_file", "path": "b.txt"}, {"type": "rule", "rules": 1}]}
    t = task(suite, ev, files=files)
    assert evaluate(t, ctx_for(t, tmp_path)) == pytest.approx((0.75 + 1.0) / 2)


def test_fail_on_feasible_task_scores_zero_without_running(suite, tmp_path):
    ev, files = list_evaluator("and", True, True,
                               postconfig=[{"type": "launch", "parameters": {"command": "would-need-a-vm"}}])
    t = task(suite, ev, files=files)
    assert evaluate(t, ctx_for(t, tmp_path), last_action="FAIL") == 0.0
    assert evaluate(t, ctx_for(t, tmp_path), last_action={"action_type": "FAIL"}) == 0.0


def test_postconfig_runs_before_scoring(suite, tmp_path):
    ev, files = list_evaluator("and", True, True, postconfig=[{"type": "sleep", "parameters": {"seconds": 0}}])
    t = task(suite, ev, files=files)
    assert evaluate(t, ctx_for(t, tmp_path), last_action="DONE") == 1.0
    # a failing postconfig step is recorded and scoring goes on, as in the suites' own harnesses
    ev2, _ = list_evaluator("and", True, True, postconfig=[{"type": "sleep", "parameters": {"seconds": -1}},
                                                          {"type": "sleep", "parameters": {"seconds": 0}}])
    t2 = task(suite, ev2, files=files)
    verdict = evaluate(t2, ctx_for(t2, tmp_path), last_action="DONE")
    assert verdict == 1.0 and len(verdict.postconfig_errors) == 1
    assert verdict.postconfig_errors[0].startswith("evaluator.postconfig[0] (sleep):")
    assert "non-negative" in verdict.postconfig_errors[0]


@pytest.mark.parametrize("last,score", [("FAIL", 1.0), ({"action_type": "FAIL"}, 1.0), ("DONE", 0.0), (None, 0.0)])
def test_infeasible(suite, tmp_path, last, score):
    t = task(suite, {"func": "infeasible"})
    assert evaluate(t, ctx_for(t, tmp_path), last_action=last) == score
    t2 = task(suite, evaluation={"func": "infeasible", "arguments": {}})
    assert evaluate(t2, ctx_for(t2, tmp_path), last_action=last) == score


def test_missing_result_scores_zero(suite, tmp_path):
    ev = {"func": "compare_csv", "result": {"type": "cache_file", "path": "never-written.csv"},
          "expected": {"type": "local_file", "path": "gold.csv"}}
    t = task(suite, ev, files={"gold.csv": GOLD})
    assert evaluate(t, ctx_for(t, tmp_path)) == 0.0


def test_helpers():
    assert combine([1.0, 0.5], "and") == 0.75 and combine([0.0, 1.0], "and") == 0.0
    assert combine([0.2, 0.5], "or") == 0.5 and combine([], "and") == 0.0
    assert clamp_score(True) == 1.0 and clamp_score(None) == 0.0 and clamp_score(float("nan")) == 0.0
    assert clamp_score(3) == 1.0 and clamp_score(-1) == 0.0 and clamp_score("x") == 0.0
    assert is_fail("fail") and is_fail({"action_type": "FAIL"}) and not is_fail("DONE") and not is_fail(None)


# -- what a crash inside the evaluator becomes --------------------------------------------------
@pytest.fixture
def crashing_metric():
    """A metric with a real bug (a KeyError on its own data), registered for the test only."""
    from desktop_env.registry import METRICS

    def crashing(result, expected) -> float:
        return {"a": 1.0}[result]
    METRICS.register("test_crashing_metric")(crashing)
    yield "test_crashing_metric"
    del METRICS.entries["test_crashing_metric"]


def test_a_metric_that_crashes_is_an_evaluator_error_with_its_traceback(suite, tmp_path, crashing_metric):
    from desktop_env.errors import EvaluatorError

    t = task(suite, {"func": crashing_metric, "result": {"type": "rule", "rules": "b"}})
    with pytest.raises(EvaluatorError, match="metric test_crashing_metric raised KeyError") as ei:
        evaluate(t, ctx_for(t, tmp_path), last_action="DONE")
    assert "KeyError" in ei.value.traceback_tail and "crashing" in ei.value.traceback_tail
    t_ok = task(suite, {"func": crashing_metric, "result": {"type": "rule", "rules": "a"}})
    assert evaluate(t_ok, ctx_for(t_ok, tmp_path), last_action="DONE") == 1.0


def test_a_metric_rejecting_its_options_or_expected_file_is_a_task_error(suite, tmp_path):
    from desktop_env.errors import TaskConfigError

    ev = {"func": "check_yaml_file", "result": {"type": "local_file", "path": "a.yml"},
          "expected": {"type": "rule", "rules": {"rules": "not a list"}}}
    t = task(suite, ev, files={"a.yml": "a: 1\n"})
    with pytest.raises(TaskConfigError, match="check_yaml_file") as ei:
        evaluate(t, ctx_for(t, tmp_path))
    assert ei.value.field == "evaluator.options" and str(t.path) in str(ei.value)


def test_a_missing_or_unreadable_result_scores_zero_and_logs_why(suite, tmp_path, caplog):
    ev = {"func": "compare_csv", "result": {"type": "cache_file", "path": "out.csv"},
          "expected": {"type": "local_file", "path": "gold.csv"}}
    t = task(suite, ev, files={"gold.csv": GOLD})
    ctx = ctx_for(t, tmp_path)
    with caplog.at_level("WARNING"):
        assert evaluate(t, ctx) == 0.0
    assert any("result getter cache_file found nothing" in r.getMessage() for r in caplog.records)
    caplog.clear()
    (ctx.cache_dir / "out.csv").mkdir()  # there, but a folder: unreadable as a CSV
    with caplog.at_level("WARNING"):
        assert evaluate(t, ctx) == 0.0
    assert any("is a folder, not a file" in r.getMessage() for r in caplog.records)
    (ctx.cache_dir / "out.csv").rmdir()
    (ctx.cache_dir / "out.csv").write_text(GOLD)
    assert evaluate(t, ctx) == 1.0
