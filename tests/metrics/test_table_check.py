"""check_table_options: compare_table options that would raise when scoring are refused when the task
is loaded, with the dotted field inside the options; and TaskSpec reports them as task errors."""
from __future__ import annotations

import pytest

from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.metrics.table import RULE_TYPES, check_table_options
from desktop_env.evaluators.metrics.utils import OptionError, check_rule_method, match_value_to_rule
from desktop_env.registry import METRICS
from desktop_env.tasks import TaskSpec

PAIR = {"sheet_idx0": 0, "sheet_idx1": "EI0"}
ONE_OF_EACH = [
    {"type": "sheet_name"},
    {"type": "sheet_data", **PAIR, "precision": 2},
    {"type": "sheet_print", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1", "ignore_case": True},
    {"type": "sheet_fuzzy", **PAIR, "rules": [
        {"range": ["A1:A6", "D1:D6"], "type": "exact_match", "trim_leadings": " ", "trim_trailings": " "},
        {"range": ["B1:B6"], "type": "fuzzy_match", "threshold": 85, "normalization": [["Rd", "Road"]],
         "ignore_case": True},
        {"range": "C1:C6", "type": "includes", "ignore_chars": " ()-"}]},
    {"type": "sparkline", **PAIR},
    {"type": "chart", **PAIR, "chart_props": ["type", "title", "direction"]},
    {"type": "pivot_table", "sheet_idx0": "RNSheet2", "sheet_idx1": "ENSheet2",
     "pivot_props": ["col_fields", "filter", "row_fields", "data_fields"]},
    {"type": "style", **PAIR, "props": ["font_color", "bgcolor"]},
    {"type": "freeze", **PAIR},
    {"type": "row_props", **PAIR, "props": ["hidden"]},
    {"type": "col_props", **PAIR, "props": ["width", "hidden"]},
    {"type": "filter", **PAIR},
    {"type": "zoom", "sheet_idx": 0, "method": "lt", "ref": 260},
    {"type": "data_validation", "sheet_idx": 0, "dv_props": [
        {"formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
         "ranges": {"method": "spreadsheet_range", "ref": ["D2:D29", "D1:D1048576"]},
         "type": {"method": "eq", "ref": "list"}}]},
    {"type": "check_cell", "sheet_idx": "RNSheet2", "coordinate": "B1",
     "props": {"merge": {"method": "eq", "ref": True}, "value": {"method": "re.I", "ref": "^total"}}},
]


def rejected(rules) -> OptionError:
    with pytest.raises(OptionError) as ei:
        check_table_options({"rules": rules})
    return ei.value


def test_the_suite_rule_shapes_pass():
    check_table_options({"rules": ONE_OF_EACH})
    assert {r["type"] for r in ONE_OF_EACH} == set(RULE_TYPES)


def test_registered_as_the_metric_check():
    assert METRICS.get("compare_table").check is check_table_options


class TestRejects:
    def test_unknown_rule_type_with_suggestion(self):
        e = rejected([{"type": "sheet_name"}, {"type": "sheet_fuzy", **PAIR, "rules": []}])
        assert e.field == "rules[1].type"
        assert "did you mean 'sheet_fuzzy'" in str(e) and "sparkline" in str(e)

    def test_unknown_method_with_suggestion(self):
        rules = [{"type": "check_cell", "sheet_idx": 0, "coordinate": "A1",
                  "props": {"value": {"method": "aprox:0.1", "ref": 1}}}]
        e = rejected(rules)
        assert e.field == "rules[0].props.value.method"
        assert "did you mean 'approx'" in str(e) and "range.XY" in str(e)

    @pytest.mark.parametrize("method", ["re.Q", "range.le", "range", "approx:x"])
    def test_bad_method_argument(self, method):
        e = rejected([{"type": "zoom", "sheet_idx": 0, "method": method, "ref": [1, 2]}])
        assert e.field == "rules[0].method"

    @pytest.mark.parametrize("method,ref", [("re", "(unclosed"), ("range.te", 5), ("str_set_eq", "a,b"),
                                            ("spreadsheet_range", "not a range"), ("approx:1", "x")])
    def test_bad_ref(self, method, ref):
        e = rejected([{"type": "data_validation", "sheet_idx": 0, "dv_props": [{"formula1": {"method": method,
                                                                                             "ref": ref}}]}])
        assert e.field == "rules[0].dv_props[0].formula1.ref"

    @pytest.mark.parametrize("rule,field", [
        ({"type": "sheet_data", "sheet_idx0": 0}, "rules[0].sheet_idx1"),
        ({"type": "sheet_fuzzy", **PAIR}, "rules[0].rules"),
        ({"type": "sheet_fuzzy", **PAIR, "rules": [{"range": "A1:A2"}]}, "rules[0].rules[0].type"),
        ({"type": "check_cell", "sheet_idx": 0, "props": {}}, "rules[0].coordinate"),
        ({"type": "data_validation", "sheet_idx": 0}, "rules[0].dv_props"),
        ({"type": "row_props", **PAIR}, "rules[0].props"),
        ({"type": "zoom", "sheet_idx": 0, "method": "eq"}, "rules[0].ref"),
        ({"sheet_idx0": 0}, "rules[0].type"),
        ({"type": ["sheet_data"], **PAIR}, "rules[0].type"),
    ])
    def test_missing_field(self, rule, field):
        assert rejected([rule]).field == field

    @pytest.mark.parametrize("ref", ["XX0", "EIx", "RN", 1.5, True, None])
    def test_bad_sheet_reference(self, ref):
        e = rejected([{"type": "freeze", "sheet_idx0": ref, "sheet_idx1": "EI0"}])
        assert e.field == "rules[0].sheet_idx0"
        assert "sheet reference" in str(e) or "sheet index" in str(e)

    @pytest.mark.parametrize("rule,field,word", [
        ({"type": "chart", **PAIR, "chart_props": ["type", "titel"]}, "rules[0].chart_props[1]", "'title'"),
        ({"type": "pivot_table", **PAIR, "pivot_props": ["row_field"]}, "rules[0].pivot_props[0]", "'row_fields'"),
        ({"type": "style", **PAIR, "props": ["font_bolt"]}, "rules[0].props[0]", "'font_bold'"),
        ({"type": "col_props", **PAIR, "props": ["widht"]}, "rules[0].props[0]", "'width'"),
        ({"type": "check_cell", "sheet_idx": 0, "coordinate": "A1", "props": {"valeu": {"ref": 1}}},
         "rules[0].props.valeu", "'value'"),
        ({"type": "data_validation", "sheet_idx": 0, "dv_props": [{"formula_1": {"ref": "x"}}]},
         "rules[0].dv_props[0].formula_1", "'formula1'"),
        ({"type": "sheet_fuzzy", **PAIR, "rules": [{"range": "A1", "type": "fuzzy"}]}, "rules[0].rules[0].type",
         "'fuzzy_match'"),
    ])
    def test_unknown_property_with_suggestion(self, rule, field, word):
        e = rejected([rule])
        assert e.field == field and f"did you mean {word}" in str(e)

    @pytest.mark.parametrize("rule,field", [
        ({"type": "check_cell", "sheet_idx": 0, "coordinate": "1A", "props": {"value": {"ref": 1}}},
         "rules[0].coordinate"),
        ({"type": "sheet_fuzzy", **PAIR, "rules": [{"range": "A1:??", "type": "exact_match"}]},
         "rules[0].rules[0].range"),
        ({"type": "sheet_fuzzy", **PAIR, "rules": [{"range": "A1", "type": "exact_match", "normalization": ["Rd"]}]},
         "rules[0].rules[0].normalization"),
        ({"type": "sheet_data", **PAIR, "precision": "4"}, "rules[0].precision"),
        ({"type": "sheet_print", **PAIR, "ignore_case": "yes"}, "rules[0].ignore_case"),
    ])
    def test_bad_values(self, rule, field):
        assert rejected([rule]).field == field

    def test_rules_must_be_a_non_empty_list_of_objects(self):
        for options, field in (({}, "rules"), ({"rules": []}, "rules"), ({"rules": ["sheet_data"]}, "rules[0]")):
            with pytest.raises(OptionError) as ei:
                check_table_options(options)
            assert ei.value.field == field


@pytest.mark.parametrize("method,ref", [("eq", 1), ("re", "x"), ("re.I.S", "x"), ("approx", 1), ("approx:0.5", 1),
                                        ("range.te", [1, 2]), ("str_list_eq", ["a"]), ("str_set_eq", ["a"]),
                                        ("spreadsheet_range", "A1"), ("spreadsheet_range", ["A1", "A:A"]),
                                        ("none", None), ("in", [1])])
def test_what_check_accepts_scores_without_error(method, ref):
    rule = {"method": method, "ref": ref}
    check_rule_method(rule, "rules[0]")
    assert match_value_to_rule("A1" if method == "spreadsheet_range" else 1, rule) in (True, False)


def _task(options):
    return {"id": "0a1b2c3d-0000-4000-8000-00000000abcd", "instruction": "Fix the sheet.",
            "evaluator": {"func": "compare_table", "result": {"type": "vm_file", "path": "/home/user/a.xlsx",
                                                              "dest": "a.xlsx"},
                          "expected": {"type": "rule", "rules": {}}, "options": options}}


def test_task_with_a_bad_method_fails_to_load_naming_the_field():
    options = {"rules": [{"type": "sheet_name"}, {"type": "check_cell", "sheet_idx": 0, "coordinate": "A1",
                                                  "props": {"value": {"method": "regex", "ref": "x"}}}]}
    with pytest.raises(TaskConfigError) as ei:
        TaskSpec.from_json(_task(options))
    assert ei.value.field == "evaluator.options.rules[1].props.value.method"
    assert "unknown rule method 'regex'" in str(ei.value)


def test_task_with_good_rules_loads():
    task = TaskSpec.from_json(_task({"rules": ONE_OF_EACH}))
    assert task.evaluator.funcs == ["compare_table"]
