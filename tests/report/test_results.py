"""Reading result folders: status.json when present, derived statuses for the older layout."""
import json

import pytest

from desktop_env.report import ResultsError, load_results, load_runs
from report_fixtures import (CAT_T, T_CALC_FAIL, T_CALC_OK, T_OS_INFRA, T_OS_LEGACY_NORESULT, T_OS_PARSE,
                                   T_OS_TIMEOUT, T_OS_TRIALS)


def _by(results, model):
    return {(r.task_id, r.trial): r for r in results if r.model == model}


def test_status_json_fields_are_read(fake_results):
    a = _by(load_results(fake_results), "agentA")
    assert len(a) == 7
    assert {k[0]: r.status for k, r in a.items() if k[1] == 1} == {
        T_CALC_OK: "success", T_CALC_FAIL: "agent_fail", T_OS_TIMEOUT: "timeout", T_OS_PARSE: "parse_error",
        T_OS_TRIALS: "success", T_OS_INFRA: "infra_error"}
    assert a[(T_OS_TRIALS, 2)].status == "wrong_result" and a[(T_OS_TRIALS, 2)].trial == 2
    ok = a[(T_CALC_OK, 1)]
    assert (ok.domain, ok.score, ok.steps, ok.duration_s, ok.category) == ("calc", 1.0, 3, 12.5,
                                                                          "data_analysis_and_visualization")
    assert a[(T_OS_INFRA, 1)].score is None and "qemu" in a[(T_OS_INFRA, 1)].error
    assert [s.action_struct["type"] for s in ok.trajectory] == ["CLICK", "DRAG_TO", "TYPING"]


def test_old_layout_is_derived_from_result_txt_and_the_trajectory(fake_results):
    old = _by(load_results(fake_results), "legacy")
    assert old[(T_OS_TIMEOUT, 1)].status == "success" and old[(T_OS_TIMEOUT, 1)].derived
    assert old[(T_OS_TRIALS, 1)].status == "agent_fail"  # score 0 and the last action was FAIL
    assert old[(T_OS_LEGACY_NORESULT, 1)].status == "timeout" and old[(T_OS_LEGACY_NORESULT, 1)].score is None
    first = old[(T_OS_TIMEOUT, 1)].trajectory[0]
    assert first.action_struct["type"] == "PYAUTOGUI"
    assert [p["type"] for p in first.parts] == ["CLICK", "DRAG_TO"]
    assert first.parts[1]["path"] == [[100, 100], [500, 400]]
    # duration from the screenshots' time stamps: step_0 at :00, step_2 at :04
    assert old[(T_OS_TIMEOUT, 1)].duration_s == 4.0
    assert old[(T_OS_TIMEOUT, 1)].tags == []  # no status.json and no --tasks: no tags


def test_tags_come_from_the_task_files_when_results_lack_them(fake_results, fake_suite):
    old = _by(load_results(fake_results, tasks_root=fake_suite), "legacy")
    assert old[(T_OS_TIMEOUT, 1)].category == CAT_T
    assert old[(T_OS_TIMEOUT, 1)].instruction == "instruction of 3"


def test_runs_are_labelled_by_model_and_disambiguated(fake_results):
    labels = {r.run for r in load_runs([fake_results])}
    assert labels == {"agentA", "legacy"}
    twice = load_runs([fake_results, fake_results / "pyautogui" / "screenshot" / "agentA"])
    assert any(":" in r.run for r in twice)


def test_errors_name_the_folder_and_file(tmp_path, fake_results):
    with pytest.raises(ResultsError, match="does not exist"):
        load_results(tmp_path / "nope")
    with pytest.raises(ResultsError, match="no task results"):
        load_results(tmp_path)
    bad = tmp_path / "pyautogui" / "screenshot" / "m" / "os" / "t1"
    bad.mkdir(parents=True)
    (bad / "status.json").write_text("{not json")
    with pytest.raises(ResultsError, match=r"status\.json: malformed JSON"):
        load_results(tmp_path)
    (bad / "status.json").write_text(json.dumps({"status": "exploded"}))
    with pytest.raises(ResultsError, match="'exploded'"):
        load_results(tmp_path)


def test_a_torn_trajectory_line_is_skipped(tmp_path):
    f = tmp_path / "pyautogui" / "screenshot" / "m" / "os" / "t1"
    f.mkdir(parents=True)
    (f / "traj.jsonl").write_text(json.dumps({"step_num": 1, "action": "DONE"}) + "\n{\"step_num\": 2, \"act")
    (f / "result.txt").write_text("0.0")
    (r,) = load_results(tmp_path)
    assert len(r.trajectory) == 1 and r.status == "wrong_result"
