"""CSV summaries checked against the result files they were computed from."""
import csv
import json
from collections import defaultdict
from pathlib import Path

from report_fixtures import CAT_A, CAT_T, T_OS_LEGACY_NORESULT, T_OS_TIMEOUT, T_OS_TRIALS


def _csv(report, stem):
    with open(report.csv[stem], newline="") as f:
        return list(csv.DictReader(f))


def _truth(results_root: Path) -> list[dict]:
    """status/score/steps/duration straight from the status.json files (agentA only)."""
    out = []
    for p in sorted(results_root.rglob("status.json")):
        out.append(json.loads(p.read_text()))
    return out


def test_task_rows_match_each_status_file(fake_report, fake_results):
    rows = {(r["model"], r["task_id"], r["trial"]): r for r in _csv(fake_report, "tasks")}
    truth = _truth(fake_results)
    assert len(truth) == 7
    for t in truth:
        row = rows[(t["model"], t["task_id"], str(t["trial"]))]
        assert row["status"] == t["status"]
        assert row["score"] == ("" if t["score"] is None else str(t["score"]))
        assert int(row["steps"]) == t["steps"]
        assert float(row["duration_s"]) == t["duration_s"]
        assert row["failure_kind"] == ("" if t["status"] == "success" else t["status"])
        assert row["reason_kind"] == ((t.get("reason") or {}).get("kind") or "")
        assert ((t.get("reason") or {}).get("text") or "") in row["reason"]
    assert len(rows) == 7 + 3  # plus the three old-layout folders


def test_old_layout_rows_use_result_txt(fake_report, fake_results):
    rows = {(r["model"], r["task_id"]): r for r in _csv(fake_report, "tasks")}
    for tid in (T_OS_TIMEOUT, T_OS_TRIALS):
        score = float((fake_results / "pyautogui/screenshot/legacy/os" / tid / "result.txt").read_text())
        assert float(rows[("legacy", tid)]["score"]) == score
    assert rows[("legacy", T_OS_TIMEOUT)]["status"] == "success"
    assert rows[("legacy", T_OS_TRIALS)]["status"] == "agent_fail"
    assert rows[("legacy", T_OS_LEGACY_NORESULT)]["status"] == "timeout"
    assert rows[("legacy", T_OS_LEGACY_NORESULT)]["category"] == CAT_T  # from --tasks


def test_group_tables_agree_with_the_status_files(fake_report, fake_results):
    truth = _truth(fake_results)
    per_app, per_cat, per_guidance = defaultdict(list), defaultdict(list), defaultdict(list)
    for t in truth:
        per_app[t["domain"]].append(t)
        per_cat[next(x for x in t["tags"] if x in (CAT_A, CAT_T))].append(t)
        per_guidance[next(x for x in t["tags"] if x in ("verbose", "abstract"))].append(t)
    for stem, col, groups in (("by_app", "app", per_app), ("by_category", "category", per_cat),
                              ("by_guidance", "guidance", per_guidance)):
        rows = {r[col]: r for r in _csv(fake_report, stem) if r["run"] == "agentA"}
        assert set(rows) == set(groups)
        for name, ts in groups.items():
            ok = sum(t["status"] == "success" for t in ts)
            assert int(rows[name]["tasks"]) == len(ts)
            assert int(rows[name]["successes"]) == ok
            assert abs(float(rows[name]["success_rate"]) - ok / len(ts)) < 1e-3
            durations = [t["duration_s"] for t in ts]
            assert abs(float(rows[name]["mean_duration_s"]) - sum(durations) / len(durations)) < 1e-3
            for kind in ("agent_fail", "timeout", "parse_error", "infra_error", "wrong_result"):
                assert int(rows[name][f"n_{kind}"]) == sum(t["status"] == kind for t in ts)
    overall = {r["run"]: r for r in _csv(fake_report, "overall")}
    assert int(overall["agentA"]["tasks"]) == 7 and int(overall["agentA"]["successes"]) == 2
    assert int(overall["legacy"]["tasks"]) == 3 and int(overall["legacy"]["successes"]) == 1


def test_failure_profile_counts_and_examples(fake_report, fake_results):
    rows = {(r["run"], r["failure_kind"]): r for r in _csv(fake_report, "failures")}
    truth = _truth(fake_results)
    for kind in ("agent_fail", "timeout", "parse_error", "infra_error", "wrong_result"):
        hits = [t for t in truth if t["status"] == kind]
        row = rows[("agentA", kind)]
        assert int(row["count"]) == len(hits)
        assert f"{hits[0]['domain']}/{hits[0]['task_id']}" in row["example_tasks"].split()
    assert ("agentA", "task_error") not in rows  # kinds with no task are left out
