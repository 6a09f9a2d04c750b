"""General metrics on real text, JSON and YAML files: pass and fail cases."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_env.evaluators.metrics.general import (
    check_file_existence, check_include_exclude, check_json, check_yaml_file, compare_json_file, compare_text_file,
    diff_text_file, exact_match, infeasible, is_expected_url_pattern_match, is_not_in_list, literal_match,
)
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.values import GuestText


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


class TestCheckIncludeExclude:
    RULES = {"include": ["succeed"], "exclude": ["failed"]}

    def test_pass(self):
        assert check_include_exclude("dbt run: succeed\n", self.RULES) == 1.0

    def test_fail_on_excluded(self):
        assert check_include_exclude("succeed\nthen failed", self.RULES) == 0.0

    def test_fail_on_missing_include(self):
        assert check_include_exclude("done", self.RULES) == 0.0

    def test_none_result(self):
        assert check_include_exclude(None, self.RULES) == 0.0

    def test_reads_a_result_file(self, tmp_path):
        """Getters hand files over as Path objects: their content is scored."""
        assert check_include_exclude(Path(write(tmp_path, "out.txt", "succeed")), self.RULES) == 1.0
        assert check_include_exclude(Path(write(tmp_path, "out.txt", "failed")), self.RULES) == 0.0

    def test_text_naming_a_host_file_is_scored_as_text(self, tmp_path):
        """What the guest prints must never make the host read its own files."""
        secret = write(tmp_path, "host_secret.txt", "succeed")
        assert check_include_exclude(secret, self.RULES) == 0.0
        assert check_include_exclude(GuestText(secret), self.RULES) == 0.0
        assert check_include_exclude(GuestText(secret), {"include": [secret]}) == 1.0

    def test_guest_text_is_never_a_path_for_file_metrics(self, tmp_path):
        gold = write(tmp_path, "gold.txt", "same")
        other = write(tmp_path, "host.txt", "same")
        assert compare_text_file(Path(other), Path(gold)) == 1.0
        assert compare_text_file(GuestText(other), Path(gold)) == 0.0

    def test_bad_rules_are_an_error(self):
        with pytest.raises(MetricError):
            check_include_exclude("x", ["succeed"])


def test_exact_match():
    assert exact_match("abc", {"expected": "abc"}) == 1.0
    assert exact_match("abd", {"expected": "abc"}) == 0.0
    assert exact_match([1, 2], [1, 2]) == 1.0


class TestLiteralMatch:
    def test_str(self):
        assert literal_match(42, {"expected": "42"}) == 1.0
        assert literal_match("Abc", "abc") == 0.0
        assert literal_match("Abc", "abc", ignore_case=True) == 1.0

    def test_list(self):
        assert literal_match(["b", "a"], ["a", "b"], type="list") == 0.0
        assert literal_match(["b", "a"], ["a", "b"], type="list", ignore_order=True) == 1.0
        assert literal_match("a", ["a"], type="list") == 0.0

    def test_unknown_type(self):
        with pytest.raises(MetricError):
            literal_match("a", "a", type="set")


def test_is_not_in_list():
    assert is_not_in_list(["a", "b"], {"exclude": "c"}) == 1.0
    assert is_not_in_list(["a", "b"], {"exclude": "b"}) == 0.0
    assert is_not_in_list(["a", "b"], {"exclude": ["x", "a"]}) == 0.0
    assert is_not_in_list(None, {"exclude": "a"}) == 0.0


def test_is_expected_url_pattern_match():
    rules = {"expected": [r"^https://docs\.getdbt\.com/", "quickstart"]}
    assert is_expected_url_pattern_match({"url": "https://docs.getdbt.com/quickstart"}, rules) == 1.0
    assert is_expected_url_pattern_match("https://docs.getdbt.com/other", rules) == 0.0
    assert is_expected_url_pattern_match(None, rules) == 0.0


def test_infeasible_metric_alone_scores_zero():
    assert infeasible() == 0.0


class TestFiles:
    def test_compare_json_file(self, tmp_path):
        a = write(tmp_path, "a.json", json.dumps({"x": [1, 2], "y": "z"}))
        b = write(tmp_path, "b.json", '{"y": "z", "x": [1, 2]}')
        c = write(tmp_path, "c.json", '{"y": "z", "x": [2, 1]}')
        assert compare_json_file(a, b) == 1.0
        assert compare_json_file(a, c) == 0.0
        assert compare_json_file(write(tmp_path, "bad.json", "{"), b) == 0.0

    def test_compare_text_file(self, tmp_path):
        a = write(tmp_path, "a.txt", "hello  world\n\n")
        b = write(tmp_path, "b.txt", "hello world")
        assert compare_text_file(a, b) == 0.0
        assert compare_text_file(a, b, ignore_blanks=True) == 1.0
        assert compare_text_file(None, b) == 0.0

    def test_diff_text_file(self, tmp_path):
        a = write(tmp_path, "a.txt", "1\n2\n3\n4\n")
        b = write(tmp_path, "b.txt", "1\n2\n3\n5\n")
        assert diff_text_file(a, a) == 1.0
        assert diff_text_file(a, b) == pytest.approx(0.75)
        assert diff_text_file(None, b) == 0.0

    def test_check_file_existence(self, tmp_path):
        assert check_file_existence(write(tmp_path, "a", "x")) == 1.0
        assert check_file_existence(str(tmp_path / "missing")) == 0.0
        assert check_file_existence(None) == 0.0


class TestCheckYaml:
    YAML = """
version: 2
models:
  - name: customers
    columns:
      - name: customer_id
        tests: [unique, not_null]
  - name: orders
    description: "All orders"
"""

    def test_pass(self, tmp_path):
        p = write(tmp_path, "schema.yml", self.YAML)
        rules = [["match", ["version"], 2],
                 ["contain", ["models", ["name", "customers"], "columns", 0, "tests"], "unique"],
                 ["in", ["models", 1, "name"], ["orders", "payments"]],
                 ["not_null", ["models", ["name", "orders"], "description"], None]]
        assert check_yaml_file(p, rules) == 1.0
        assert check_yaml_file(p, {"rules": rules}) == 1.0

    def test_fail(self, tmp_path):
        p = write(tmp_path, "schema.yml", self.YAML)
        assert check_yaml_file(p, [["match", ["version"], 3]]) == 0.0
        assert check_yaml_file(p, [["match", ["models", ["name", "nope"], "name"], "nope"]]) == 0.0
        assert check_yaml_file(write(tmp_path, "bad.yml", "a: [1,"), [["match", ["a"], 1]]) == 0.0

    def test_bad_rule(self, tmp_path):
        p = write(tmp_path, "schema.yml", self.YAML)
        with pytest.raises(MetricError):
            check_yaml_file(p, [["equals", ["version"], 2]])


class TestCheckJson:
    """On the Preferences file Chromium wrote after "Ask where to save each file before downloading" was
    turned on in chrome://settings/downloads (tests/data/chromium)."""

    PREFS = Path(__file__).resolve().parents[1] / "data/chromium/Preferences.ask_where_to_save"
    ASK = {"key": ["download", "prompt_for_download"], "method": "eq", "ref": True}

    def test_the_setting_chromium_saved_passes(self):
        assert check_json(str(self.PREFS), {"expect": [self.ASK]}) == 1.0

    def test_the_setting_off_or_missing_fails(self, tmp_path):
        prefs = json.loads(self.PREFS.read_text())
        prefs["download"]["prompt_for_download"] = False
        off = write(tmp_path, "off.json", json.dumps(prefs))
        assert check_json(off, {"expect": [self.ASK]}) == 0.0
        del prefs["download"]
        assert check_json(write(tmp_path, "none.json", json.dumps(prefs)), {"expect": [self.ASK]}) == 0.0
        assert check_json(str(tmp_path / "absent.json"), {"expect": [self.ASK]}) == 0.0
        assert check_json(write(tmp_path, "bad.json", "{"), {"expect": [self.ASK]}) == 0.0

    def test_unexpect_methods_and_yaml(self, tmp_path):
        prefs = str(self.PREFS)
        assert check_json(prefs, {"unexpect": [self.ASK]}) == 0.0
        assert check_json(prefs, {"expect": [{**self.ASK, "method": "ne", "ref": False}]}) == 1.0
        assert check_json(prefs, {"unexpect": [{"key": ["no", "such", "key"], "ref": 1}]}) == 1.0
        doc = write(tmp_path, "a.yaml", "server:\n  port: 8080\n  hosts: [alpha, beta]\n")
        assert check_json(doc, {"expect": [{"key": ["server", "port"], "method": "ge", "ref": 8000},
                                           {"key": ["server", "hosts", 1], "method": "re", "ref": "^be"}]},
                          is_yaml=True) == 1.0
        assert check_json(doc, {"expect": [{"key": ["server", "port"], "method": "lt", "ref": "8000"}]},
                          is_yaml=True) == 0.0

    def test_bad_rules_are_named(self, tmp_path):
        with pytest.raises(MetricError, match="unknown method 'approx'"):
            check_json(str(self.PREFS), {"expect": [{**self.ASK, "method": "approx"}]})
        with pytest.raises(MetricError, match="expects rules"):
            check_json(str(self.PREFS), [self.ASK])
