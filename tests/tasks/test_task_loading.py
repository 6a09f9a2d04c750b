"""Loading task files of both spellings, validation errors with file/field/did-you-mean, paths, index files."""
from __future__ import annotations

import json
import logging

import pytest

from task_samples import BAD, GOOD, IDS, bad_task, good_task
from desktop_env.errors import TaskConfigError
from desktop_env.registry import UnknownNameError
from desktop_env.tasks import (
    SPELLING_FUNC, SPELLING_TYPE, TaskFileNotFound, TaskSpec, find_task_files, load_index, load_task,
    load_tasks_from_index,
)

TID = "11111111-2222-4333-8444-555555555555"


def minimal(**over):
    task = {"id": TID, "instruction": "Do it.", "config": [], "evaluator": {"func": "infeasible"}}
    task.update(over)
    return task


class TestGoodSamples:
    def test_type_parameters_spelling(self):
        t = load_task(good_task("dbt"))
        assert t.spelling == SPELLING_TYPE
        assert t.id == IDS["dbt"] and t.app == "dbt"
        assert [s.name for s in t.config] == ["google_chrome_browser", "copyfile_from_host_to_guest",
                                              "script_and_execute", "launch", "sleep"]
        assert t.evaluator.funcs == ["check_include_exclude"]
        assert t.evaluator.results[0].type == "vm_script_output"
        assert t.evaluator.expecteds[0].fields == {"rules": {"include": ["succeed"], "exclude": ["failed"]}}
        assert t.suite_root == GOOD.resolve()
        assert t.verbose_instruction.startswith("1. Open the terminal")
        assert (t.interface, t.guidance, t.category, t.needs_account) == ("cli", "verbose", "data_transformation", False)
        assert t.action_number == 4 and t.source and t.related_apps[0] == "dbt"

    def test_func_arguments_spelling_flat_layout(self):
        t = load_task(good_task("jupyter"))
        assert t.spelling == SPELLING_FUNC and t.evaluator is None
        assert t.evaluation.name == "compare_csv" and t.evaluation.params["ignore_order"] is True
        assert [(s.name, s.spelling) for s in t.config] == [("upload_file", SPELLING_FUNC), ("launch", SPELLING_FUNC)]
        assert t.app == "jupyter" and t.interface == "cli+gui" and t.verbose_instruction is None

    def test_list_form_evaluator(self):
        t = load_task(good_task("excel"))
        ev = t.evaluator
        assert ev.listed and ev.funcs == ["compare_table", "compare_csv"] and ev.conj == "and"
        assert [r.type for r in ev.results] == ["vm_file", "vm_file"]
        assert ev.options[1] == {"strict": False}
        assert ev.postconfig[0].name == "activate_window"

    def test_account_task_loads_and_says_so(self):
        t = load_task(good_task("bigquery"))
        assert t.needs_account
        statuses = t.name_statuses()
        assert statuses[("setup step", "bigquery_init")] == "account"
        assert statuses[("getter", "bigquery_table_to_csv")] == "account"

    def test_load_from_folder(self):
        assert load_task(good_task("os").parent).id == IDS["os"]

    def test_placeholder_counterpart_warns(self, caplog):
        with caplog.at_level(logging.WARNING, logger="desktop_env.tasks"):
            t = load_task(good_task("dbt"))
        assert t.counterpart == "xxxxxx-xxxxxx-xxxxxx"
        assert any("placeholder" in w for w in t.warnings)
        assert "placeholder" in caplog.text

    @pytest.mark.parametrize("app", sorted(IDS))
    def test_round_trip(self, app):
        path = good_task(app)
        t = load_task(path)
        assert t.to_json() == json.loads(path.read_text())
        again = TaskSpec.from_json(t.to_json(), path=path)
        assert again.to_json() == t.to_json()

    def test_find_task_files_skips_data_and_index_files(self):
        files = find_task_files(GOOD)
        assert sorted(f.stem for f in files) == sorted(IDS.values())


class TestErrors:
    def test_misspelled_metric_in_list(self):
        with pytest.raises(UnknownNameError) as ei:
            load_task(bad_task(1))
        e = ei.value
        assert e.field == "evaluator.func[1]" and e.path.endswith(f"{bad_task(1).name}")
        assert e.suggestions[0] == "compare_table"
        assert "did you mean 'compare_table'" in str(e) and bad_task(1).name in str(e)

    def test_truncated_file(self):
        with pytest.raises(TaskConfigError, match=r"malformed JSON at line 5 .*truncated") as ei:
            load_task(bad_task(2))
        assert ei.value.path.endswith(bad_task(2).name)

    def test_unknown_setup_step(self):
        with pytest.raises(UnknownNameError, match="did you mean 'google_chrome_browser'") as ei:
            load_task(bad_task(3))
        assert ei.value.field == "config[0].type"

    def test_missing_task_file_lists_what_was_tried(self):
        with pytest.raises(TaskFileNotFound) as ei:
            load_task(bad_task(4))
        e = ei.value
        assert e.field == "config[0].parameters.src"
        root = (BAD).resolve()
        assert e.tried[0] == root / f"evaluation_examples/examples/dbt/{bad_task(4).stem}/init.sh"
        assert all(str(p) in str(e) for p in e.tried) and len(e.tried) >= 2

    def test_missing_required_field(self):
        with pytest.raises(TaskConfigError) as ei:
            load_task(bad_task(5))
        assert ei.value.field == "instruction"

    def test_unknown_getter(self):
        with pytest.raises(UnknownNameError, match="did you mean 'vm_file'") as ei:
            load_task(bad_task(6))
        assert ei.value.field == "evaluator.result.type"

    def test_unknown_evaluation_func(self):
        with pytest.raises(UnknownNameError, match="compare_csv") as ei:
            load_task(bad_task(7))
        assert ei.value.field == "evaluation.func"

    def test_missing_required_getter_field(self):
        task = minimal(evaluator={"func": "compare_csv", "result": {"type": "vm_file", "path": "/x"},
                                  "expected": {"type": "rule", "rules": {}}})
        with pytest.raises(TaskConfigError, match="needs field 'dest'") as ei:
            TaskSpec.from_json(task)
        assert ei.value.field == "evaluator.result.dest"

    def test_missing_required_setup_parameter(self):
        task = minimal(config=[{"type": "copyfile_from_host_to_guest", "parameters": {"dest": "/x"}}])
        with pytest.raises(TaskConfigError) as ei:
            TaskSpec.from_json(task)
        assert ei.value.field == "config[0].parameters.src"

    def test_list_lengths_must_match(self):
        task = minimal(evaluator={"func": ["exact_match", "exact_match"], "result": [{"type": "rule", "rules": 1}]})
        with pytest.raises(TaskConfigError) as ei:
            TaskSpec.from_json(task)
        assert ei.value.field == "evaluator.result"

    def test_both_or_neither_evaluator(self):
        with pytest.raises(TaskConfigError, match="evaluator"):
            TaskSpec.from_json({"id": TID, "instruction": "x", "config": []})
        with pytest.raises(TaskConfigError, match="not both"):
            TaskSpec.from_json(minimal(evaluation={"func": "infeasible", "arguments": {}}))

    def test_bad_conj(self):
        with pytest.raises(TaskConfigError) as ei:
            TaskSpec.from_json(minimal(evaluator={"func": "infeasible", "conj": "xor"}))
        assert ei.value.field == "evaluator.conj"

    def test_step_without_name(self):
        with pytest.raises(TaskConfigError) as ei:
            TaskSpec.from_json(minimal(config=[{"parameters": {}}]))
        assert ei.value.field == "config[0].type"

    def test_unknown_metric_option_is_an_error_with_suggestion(self):
        """An option the metric does not take would be ignored and change what it scores: it fails to load."""
        task = minimal(evaluator={"func": "compare_text_file", "result": {"type": "rule", "rules": "a"},
                                  "expected": {"type": "rule", "rules": "a"}, "options": {"ignore_blank": True}})
        with pytest.raises(TaskConfigError, match="ignore_blanks") as err:
            TaskSpec.from_json(task)
        assert err.value.field == "evaluator.options.ignore_blank"

    def test_unknown_metric_option_in_a_list_names_its_index(self):
        task = minimal(evaluator={"func": ["exact_match", "compare_text_file"], "conj": "and",
                                  "result": [{"type": "rule", "rules": "a"}, {"type": "rule", "rules": "a"}],
                                  "expected": [{"type": "rule", "rules": "a"}, {"type": "rule", "rules": "a"}],
                                  "options": [{}, {"ignore_casing": True}]})
        with pytest.raises(TaskConfigError) as err:
            TaskSpec.from_json(task)
        assert err.value.field == "evaluator.options[1].ignore_casing"

    def test_unknown_step_parameter_only_warns(self):
        task = minimal(config=[{"type": "sleep", "parameters": {"seconds": 1, "secs": 2}}])
        t = TaskSpec.from_json(task)
        assert any("secs" in w for w in t.warnings)

    def test_empty_object_in_an_expected_list_means_no_expected_value(self):
        task = minimal(evaluator={"func": ["check_file_existence", "exact_match"], "conj": "and",
                                  "result": [{"type": "rule", "rules": "a"}, {"type": "rule", "rules": "a"}],
                                  "expected": [{}, {"type": "rule", "rules": "a"}]})
        t = TaskSpec.from_json(task)
        assert t.evaluator.expecteds[0] is None and t.evaluator.expecteds[1].type == "rule"
        assert t.to_json()["evaluator"]["expected"][0] is None

    def test_a_runtime_cache_path_is_not_reported_missing(self, tmp_path):
        """``cache/<task id>/x`` names a file an earlier step downloads during the run."""
        task = minimal(config=[{"type": "upload_file", "parameters": {"files": [
            {"local_path": f"cache/{TID}/in.csv", "path": "/home/user/in.csv"}]}}])
        t = TaskSpec.from_json(task, path=tmp_path / "t.json")
        assert t.config[0].name == "upload_file"


class TestPaths:
    def test_suite_root_first_then_task_folder(self, suite):
        path = suite("dbt", minimal(config=[{"type": "copyfile_from_host_to_guest",
                                             "parameters": {"src": "init.sh", "dest": "/tmp/init.sh"}}]),
                     files={"init.sh": "echo task folder"})
        t = load_task(path)
        root = path.parents[4]
        assert t.suite_root == root
        assert t.resolve_path("init.sh") == path.parent / "init.sh"  # only in the task folder
        (root / "init.sh").write_text("echo suite root")
        assert t.resolve_path("init.sh") == root / "init.sh"  # the suite root wins

    def test_suite_relative_path(self, suite):
        src = f"evaluation_examples/examples/dbt/{TID}/init.sh"
        path = suite("dbt", minimal(config=[{"type": "script_and_execute", "parameters": {"src": src, "dest": "/i.sh"}}]),
                     files={"init.sh": "true"})
        assert load_task(path).resolve_path(src) == path.parent / "init.sh"

    def test_file_url_and_absolute_paths(self, suite, tmp_path):
        abs_file = tmp_path / "abs.txt"
        abs_file.write_text("x")
        path = suite("os", minimal(config=[{"type": "upload_file", "parameters": {
            "files": [{"local_path": f"file://{abs_file}", "path": "/a"}, {"local_path": str(abs_file), "path": "/b"}]}}]))
        t = load_task(path)
        assert t.resolve_path(f"file://{abs_file}") == abs_file

    def test_download_urls_are_not_checked_but_relative_paths_are(self, suite):
        ok = minimal(config=[{"type": "download", "parameters": {"files": [
            {"url": "https://example.invalid/data.csv", "path": "/home/user/data.csv"}]}}])
        load_task(suite("os", ok))
        bad = dict(ok, id="22222222-2222-4333-8444-555555555555",
                   config=[{"type": "download", "parameters": {"files": [{"url": "data.csv", "path": "/d.csv"}]}}])
        with pytest.raises(TaskFileNotFound) as ei:
            load_task(suite("os", bad))
        assert ei.value.field == "config[0].parameters.files[0].url"

    def test_account_settings_copied_into_the_guest_make_an_account_task_not_a_load_error(self, suite):
        """The public suite's Snowflake tasks copy their settings file into the guest; only its template ships."""
        from desktop_env.session import AccountRequired, SetupContext

        settings = "evaluation_examples/settings/snowflake/settings.json"
        task = minimal(config=[{"type": "copyfile_from_host_to_guest",
                                "parameters": {"src": settings, "dest": "/home/user/settings.json"}}])
        t = load_task(suite("snowflake", task))
        assert t.settings_needed == [settings] and t.needs_account
        with pytest.raises(AccountRequired, match="settings.json.template") as ei:
            SetupContext(controller=None, task=t, cache_dir=t.path.parent / "cache").resolve(settings)
        assert ei.value.settings_file == settings
        # a missing file that has no template is still a broken task, found when it is loaded
        other = dict(task, id="22222222-2222-4333-8444-555555555555",
                     config=[{"type": "copyfile_from_host_to_guest",
                              "parameters": {"src": "evaluation_examples/settings/snowflake/other.json",
                                             "dest": "/tmp/x"}}])
        with pytest.raises(TaskFileNotFound):
            load_task(suite("snowflake", other))

    def test_no_suite_root(self, tmp_path):
        p = tmp_path / "task.json"
        p.write_text(json.dumps(minimal(config=[{"type": "upload_file", "parameters": {
            "files": [{"local_path": "x.bin", "path": "/x"}]}}])))
        with pytest.raises(TaskFileNotFound) as ei:
            load_task(p)
        assert ei.value.tried == [tmp_path / "x.bin"]


class TestIndex:
    def test_load_index_and_tasks(self):
        index_path = GOOD / "evaluation_examples" / "test_all.json"
        assert load_index(index_path)["dbt"] == [IDS["dbt"]]
        tasks = load_tasks_from_index(index_path)
        assert sorted(t.id for t in tasks) == sorted(IDS.values())
        assert [t.id for t in load_tasks_from_index(index_path, apps=["excel"])] == [IDS["excel"]]

    def test_unknown_app_suggests(self):
        with pytest.raises(TaskConfigError, match="did you mean 'excel'"):
            load_tasks_from_index(GOOD / "evaluation_examples" / "test_all.json", apps=["exel"])

    def test_listed_task_without_file(self, tmp_path):
        (tmp_path / "examples").mkdir()
        idx = tmp_path / "test_one.json"
        idx.write_text(json.dumps({"excel": [TID]}))
        with pytest.raises(TaskFileNotFound) as ei:
            load_tasks_from_index(idx)
        assert ei.value.field == "excel[0]"

    def test_malformed_index(self, tmp_path):
        idx = tmp_path / "test_all.json"
        idx.write_text(json.dumps({"excel": "not-a-list"}))
        with pytest.raises(TaskConfigError) as ei:
            load_index(idx)
        assert ei.value.field == "excel"


def test_func_arguments_spelling_checks_metric_options_at_load():
    """The flowbook spelling's file evaluators run the metric's own option check too."""
    task = {"id": TID, "instruction": "x", "evaluation": {"func": "compare_table", "arguments": {
        "vm_result": "/home/user/a.xlsx", "rules": [{"type": "check_cel", "sheet_idx": 0}]}}}
    with pytest.raises(TaskConfigError, match="did you mean 'check_cell'") as err:
        TaskSpec.from_json(task)
    assert err.value.field == "evaluation.arguments.rules[0].type"


class TestWhatCallersAsk:
    """One answer per question, on the spec: every caller (harness, evaluator, verify) reads these."""

    def test_infeasible_only_when_infeasible_is_the_only_metric(self):
        assert TaskSpec.from_json(minimal()).infeasible
        assert TaskSpec.from_json(minimal(evaluator={"func": ["infeasible", "infeasible"]})).infeasible
        mixed = minimal(evaluator={"func": ["infeasible", "exact_match"], "result": [{}, {"type": "rule", "rules": "a"}],
                                   "expected": [{}, {"type": "rule", "rules": "a"}]})
        assert not TaskSpec.from_json(mixed).infeasible
        func_spelling = {"id": TID, "instruction": "Do it.", "config": [], "evaluation": {"func": "infeasible"}}
        assert TaskSpec.from_json(func_spelling).infeasible

    def test_a_mixed_list_is_scored_like_any_feasible_task(self, tmp_path):
        from desktop_env.session import SetupContext
        from desktop_env.evaluators.evaluator import evaluate

        mixed = TaskSpec.from_json(minimal(evaluator={
            "func": ["infeasible", "exact_match"], "conj": "or",
            "result": [{}, {"type": "rule", "rules": "a"}], "expected": [{}, {"type": "rule", "rules": "a"}]}))
        ctx = SetupContext(controller=None, task=mixed, cache_dir=tmp_path)
        assert evaluate(mixed, ctx, last_action="FAIL") == 0.0   # FAIL is wrong on a feasible task
        assert evaluate(mixed, ctx, last_action="DONE") == 1.0   # exact_match holds, conj "or"

    @pytest.mark.parametrize("snapshot,profile", [("data", "data"), ("base", "base"), ("libreoffice_calc", None),
                                                  (None, None)])
    def test_image_profile_is_a_snapshot_naming_one_of_our_profiles(self, snapshot, profile):
        assert TaskSpec.from_json(minimal(snapshot=snapshot)).image_profile == profile

    def test_solution_kind(self, tmp_path):
        command, action = {"command": "true"}, {"action": "DONE"}
        assert TaskSpec.from_json(minimal(solution=[command])).solution_kind == "commands"
        assert TaskSpec.from_json(minimal(solution=[action])).solution_kind == "gui"
        assert TaskSpec.from_json(minimal(solution=[command, action])).solution_kind == "mixed"
        assert TaskSpec.from_json(minimal()).solution_kind is None
        folder = tmp_path / TID
        folder.mkdir()
        (folder / "solution.sh").write_text("true\n")
        (folder / f"{TID}.json").write_text(json.dumps(minimal()))
        assert load_task(folder).solution_kind == "commands"
