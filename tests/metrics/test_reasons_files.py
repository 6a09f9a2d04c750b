"""Reasons of the file, notebook, database, SQL and Snowflake metrics, read with ``judge`` on real files:
every metric passes a right answer with ``passed``, and fails wrong or missing ones with a kind and a text
that names the difference (the line, the key path, the cell, the table and row, the file)."""
from __future__ import annotations

import base64
import io
import json
import sqlite3

import duckdb
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from PIL import Image, ImageDraw

from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.evaluator import judge
from desktop_env.evaluators.metrics.differences import first_line_difference, json_difference
from desktop_env.evaluators.metrics.sql import plain_sql
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.reasons import (MISSING_RESULT, PASSED, RULE_FAILED, STRUCTURE_MISMATCH,
                                            THRESHOLD_NOT_MET, UNREADABLE_RESULT, VALUE_MISMATCH)
from desktop_env.evaluators.values import GuestText
from desktop_env.registry import METRICS
from desktop_env.tasks import TaskSpec

#: the modules whose metrics this file covers
MODULES = ("files", "files_python", "notebook", "database", "sql", "snowflake")
MINE = sorted(name for name in METRICS if METRICS.get(name).func.__module__.rsplit(".", 1)[-1] in MODULES)


def verdict(name, result, expected, **options):
    return judge(name, METRICS.get(name).func, result, expected, **options)


def write(folder, name, text):
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- real files of each kind

def notebook(folder, name, cells):
    path = folder / name
    nbformat.write(new_notebook(cells=cells), str(path))
    return path


def code(source, out=None, count=None, data=None):
    outputs = [] if out is None else [new_output("stream", name="stdout", text=out)]
    if data is not None:
        outputs.append(new_output("execute_result", data=data, execution_count=count))
    return new_code_cell(source, outputs=outputs, execution_count=count)


def png(kind):
    """A small PNG, base64 as a notebook stores it: a red disc on white, or a blue bar on yellow."""
    im = Image.new("RGB", (120, 90), "white" if kind == "disc" else "yellow")
    draw = ImageDraw.Draw(im)
    if kind == "disc":
        draw.ellipse((20, 10, 90, 80), fill="red")
    else:
        draw.rectangle((10, 30, 110, 60), fill="blue")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


SCHEMA = ["CREATE TABLE customers (id INTEGER, name VARCHAR)",
          "CREATE TABLE orders (id INTEGER, customer_id INTEGER, amount DOUBLE)",
          "CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 10"]
ROWS = ["INSERT INTO customers VALUES (1, 'ann'), (2, 'bob')", "INSERT INTO orders VALUES (1, 1, 5.0), (2, 2, 20.0)"]


def database(folder, name, kind, statements):
    path = folder / name
    con = sqlite3.connect(path) if kind == "sqlite3" else duckdb.connect(str(path))
    for statement in statements:
        con.execute(statement)
    if kind == "sqlite3":
        con.commit()
    con.close()
    return str(path)


TEST_SUITE = """\
from answer import double

def test():
    return double(2) == 4

def partly():
    return 0.25 if double(2) == 4 else 0.0

def crash():
    raise RuntimeError("boom")
"""

TIMEDATECTL = ("               Local time: Thu 2024-01-25 12:56:06 {abbr}\n"
               "                Time zone: {zone}\n"
               "System clock synchronized: yes\n")
SETTINGS = '// user settings\n{\n  "editor.fontSize": 14, /* big */\n  "files.autoSave": "afterDelay",\n}\n'
BINDINGS = ('// Place your key bindings in this file\n'
            '[{"key": "f5", "command": "run"}, {"key": "ctrl+j", "command": "workbench.action.togglePanel"}]')
THEME = '{\n    "workbench.colorTheme": "Visual Studio Dark"\n}\n'  # the public settings task's expected text
SNOWMAN = {"NAME": "SNOWMAN", "LOGIN_NAME": "SNOWSTORM", "EMAIL": "snow.storm@snowflake.com",
           "MUST_CHANGE_PASSWORD": "false", "ROLE": ["SYSADMIN", "PUBLIC"]}
STAGE_SQL = "SELECT $1, $2 FROM @stage/file.csv (FILE_FORMAT => 'csv')"


# --------------------------------------------------------------------------- right answers: passed
# name -> build(tmp_path) -> (result, expected, options)
PASSES = {
    "check_direct_json_object": lambda t: ({"from": "NYC", "to": "LAX", "extra": 1},
                                           {"expected": {"from": "NYC", "to": "LAX"}}, {}),
    "check_list": lambda t: (write(t, "ls.txt", "Inbox\nBills\nOld Receipts\n"),
                             {"expect": [r"^Bills$", "Receipts"], "unexpect": ["Junk"]}, {}),
    "match_in_list": lambda t: (GuestText("Bing"), {"expected": ["Microsoft Bing", "Bing"]}, {}),
    "is_in_list": lambda t: (["/opt/x", "/home/user/ext"], {"expected": "/home/user/ext"}, {}),
    "check_json_settings": lambda t: (write(t, "settings.json", SETTINGS), {"expected": {"editor.fontSize": 14}}, {}),
    "check_json_keybindings": lambda t: (write(t, "keybindings.json", BINDINGS),
                                         {"expected": {"key": "ctrl+j", "command": "workbench.action.togglePanel"}},
                                         {}),
    "compare_config": lambda t: (write(t, "settings.json", THEME), {"expected": THEME}, {}),
    "file_contains": lambda t: (write(t, "r.txt", "code AX-1234, folder tmp42\n"), {"expected": ["AX-1234", "tmp42"]},
                                {}),
    "compare_python_pure_text": lambda t: (write(t, "a.py", "#!/usr/bin/env python3\ndef f(x):\n\treturn x\n"),
                                           write(t, "gold.py", "def f(x):\n    return x\n"), {}),
    "check_line_number": lambda t: (write(t, "log.txt", "12:01:33 start\nno time\n23:59:59 end\n"),
                                    {"expected": 2}, {}),
    "compare_result_files": lambda t: (write(t, "r.txt", "The median is 42.5"), write(t, "gold.txt", "42.5\n"), {}),
    "check_moved_jpgs": lambda t: ({"name": "cpjpg", "children": [{"name": "a.jpg"}, {"name": "b.jpg"}]},
                                   {"expected": ["b.jpg", "a.jpg"]}, {}),
    "is_utc_0": lambda t: (GuestText(TIMEDATECTL.format(abbr="UTC", zone="Etc/UTC (UTC, +0000)")), None, {}),
    "check_python_file_by_test_suite": lambda t: (write(t, "answer.py", "def double(x):\n    return 2 * x\n"),
                                                  write(t, "test_suite.py", TEST_SUITE), {}),
    "compare_notebook_outputs": lambda t: (  # sources and execution counts are not compared
        notebook(t, "a.ipynb", [new_markdown_cell("# T"), code("print(2)", "2\n", 7)]),
        notebook(t, "g.ipynb", [new_markdown_cell("# T"), code("print(1+1)", "2\n", 1)]), {}),
    "compare_notebook_cells": lambda t: (notebook(t, "a.ipynb", [new_markdown_cell("# T"), code("x = 1", "", 3)]),
                                         notebook(t, "g.ipynb", [new_markdown_cell("# T"), code("x = 1")]), {}),
    "compare_ipynb_files": lambda t: (notebook(t, "a.ipynb", [code("x = 1", "ok\n", 1)]),
                                      notebook(t, "g.ipynb", [code("x = 1", "ok\n", 1)]), {}),
    "is_jupyter_cell_executed": lambda t: (notebook(t, "a.ipynb", [new_markdown_cell("x"), code("a", "1", 1)]),
                                           {"expected": []}, {}),
    "are_jupyter_outputs_cleared": lambda t: (notebook(t, "a.ipynb", [code("a"), code("b")]), {"expected": []}, {}),
    "check_local_database": lambda t: (database(t, "a.db", "sqlite3", SCHEMA + ROWS),
                                       database(t, "b.db", "sqlite3", SCHEMA + ROWS[::-1]),
                                       {"db_type": "sqlite3", "check_type": ["table-schema-content",
                                                                             "view-schema-content"]}),
    "compare_sql": lambda t: ("select  Name,\n sum(Amount) as TOTAL -- the total\nfrom Orders group by name",
                              write(t, "gold.sql", "SELECT name, SUM(amount) AS total FROM orders GROUP BY name;"),
                              {}),
    "is_snowflake_user_created": lambda t: ({**{k: v for k, v in SNOWMAN.items()}},
                                            {"email": "snow.storm@snowflake.com", "MUST_CHANGE_PASSWORD": False,
                                             "role": "sysadmin"}, {}),
    "check_snowflake_log_message": lambda t: ({"severity": "INFO", "message": "Logging from Python function."},
                                              {"severity": "INFO", "message": "Logging from Python function."}, {}),
}


def test_every_metric_of_these_modules_has_cases():
    assert MINE == sorted(PASSES)
    assert set(MINE) == {case[1] for case in FAILS}


@pytest.mark.parametrize("name", sorted(PASSES))
def test_right_answer_passes(name, tmp_path):
    result, expected, options = PASSES[name](tmp_path)
    v = verdict(name, result, expected, **options)
    assert v == 1.0 and v.reason.kind == PASSED, v.reason


# --------------------------------------------------------------------------- wrong answers: kind and text
# (id, name, build(tmp_path) -> (result, expected, options), score, kind, substrings of the text)
FAILS = [
    # -- JSON objects and lists
    ("json-value", "check_direct_json_object",
     lambda t: ({"from": "NYC", "to": "SFO"}, {"expected": {"from": "NYC", "to": "LAX"}}, {}),
     0.0, VALUE_MISMATCH, ["key 'to': expected 'LAX', got 'SFO'"]),
    ("json-missing-key", "check_direct_json_object",
     lambda t: ({"from": "NYC"}, {"expected": {"from": "NYC", "to": "LAX"}}, {}),
     0.0, STRUCTURE_MISMATCH, ["key 'to' is missing (expected 'LAX')"]),
    ("json-candidates", "check_direct_json_object",
     lambda t: ({"pic1": "Everest", "pic2": "K2"}, {"expect_in_result": True,
                                                    "expected": {"pic1": ["Everest"], "pic2": ["Hua", "Huashan"]}}, {}),
     0.0, RULE_FAILED, ["key 'pic2': expected one of ['Hua', 'Huashan'], got 'K2'"]),
    ("json-list-order", "check_direct_json_object",
     lambda t: ({"m": ["c", "a"]}, {"expected": {"m": ["a", "b", "c"]}, "ignore_list_order": True}, {}),
     0.0, VALUE_MISMATCH, ["key 'm': expected ['a', 'b', 'c'] in any order, got ['c', 'a']"]),
    ("json-not-json", "check_direct_json_object",
     lambda t: (GuestText("Traceback: no such file"), {"expected": {"k": 1}}, {}),
     0.0, UNREADABLE_RESULT, ["not JSON", "Traceback: no such file"]),
    ("json-gold-failed", "check_direct_json_object",
     lambda t: ({"k": 1}, {"expected": {"k": "__EVALUATION_FAILED__"}}, {}),
     0.0, MISSING_RESULT, ["key 'k' could not be computed"]),
    ("list-expect", "check_list",
     lambda t: (write(t, "ls.txt", "Inbox\nBills 2\nReceipts\n"), {"expect": [r"^Bills$"]}, {}),
     0.0, RULE_FAILED, ["expect pattern '^Bills$' matches no line"]),
    ("list-unexpect", "check_list",
     lambda t: (write(t, "ls.txt", "Inbox\nBills\nJunk mail\n"), {"unexpect": ["Junk"]}, {}),
     0.0, RULE_FAILED, ["unexpect pattern 'Junk' matches line 3: 'Junk mail'"]),
    ("match-in-list", "match_in_list", lambda t: ("Google", {"expected": ["Microsoft Bing", "Bing"]}, {}),
     0.0, VALUE_MISMATCH, ["expected one of ['Microsoft Bing', 'Bing'], got 'Google'"]),
    ("is-in-list", "is_in_list", lambda t: (["/home/user/other"], {"expected": "/home/user/ext"}, {}),
     0.0, RULE_FAILED, ["'/home/user/ext' is not in the 1 items ['/home/user/other']"]),
    ("is-in-list-not-a-list", "is_in_list", lambda t: (42, {"expected": "x"}, {}),
     0.0, UNREADABLE_RESULT, ["neither a list nor text: 42"]),
    # -- VS Code JSON files
    ("settings-value", "check_json_settings",
     lambda t: (write(t, "settings.json", SETTINGS), {"expected": {"editor.fontSize": 12}}, {}),
     0.0, VALUE_MISMATCH, ["setting 'editor.fontSize': expected 12, got 14"]),
    ("settings-unset", "check_json_settings",
     lambda t: (write(t, "settings.json", SETTINGS), {"expected": {"editor.wordWrap": "on"}}, {}),
     0.0, STRUCTURE_MISMATCH, ["setting 'editor.wordWrap' is not set (expected 'on')"]),
    ("settings-bad-json", "check_json_settings",
     lambda t: (write(t, "broken.json", '{"a": 1,,}'), {"expected": {"a": 1}}, {}),
     0.0, UNREADABLE_RESULT, ["broken.json is not valid JSON", "line 1"]),
    ("settings-not-object", "check_json_settings",
     lambda t: (write(t, "list.json", "[1, 2]"), {"expected": {"a": 1}}, {}),
     0.0, STRUCTURE_MISMATCH, ["list.json holds [1, 2], not an object"]),
    ("keybinding-other-key", "check_json_keybindings",
     lambda t: (write(t, "keybindings.json", BINDINGS),
                {"expected": {"key": "ctrl+k", "command": "workbench.action.togglePanel"}}, {}),
     0.0, VALUE_MISMATCH, ["command 'workbench.action.togglePanel': 'key' expected 'ctrl+k', got 'ctrl+j'"]),
    ("keybinding-extra-field", "check_json_keybindings",
     lambda t: (write(t, "keybindings.json", '[{"key": "ctrl+j", "command": "c", "when": "editorFocus"}]'),
                {"expected": {"key": "ctrl+j", "command": "c"}}, {}),
     0.0, STRUCTURE_MISMATCH, ["the binding with command 'c' also has 'when': 'editorFocus'"]),
    ("keybinding-absent", "check_json_keybindings",
     lambda t: (write(t, "keybindings.json", BINDINGS), {"expected": {"key": "ctrl+q", "command": "quit"}}, {}),
     0.0, RULE_FAILED, ["no binding {'key': 'ctrl+q', 'command': 'quit'} among the 2 bindings"]),
    ("config-line", "compare_config",
     lambda t: (write(t, "settings.json", THEME.replace("Dark", "Light")), {"expected": THEME}, {}),
     0.0, VALUE_MISMATCH, ["line 2: expected '    \"workbench.colorTheme\": \"Visual Studio Dark\"', "
                           "got '    \"workbench.colorTheme\": \"Visual Studio Light\"'"]),
    ("config-final-newline", "compare_config",
     lambda t: (write(t, "settings.json", THEME.rstrip("\n")), {"expected": THEME}, {}),
     0.0, VALUE_MISMATCH, ["line endings differ", "}\\n', it ends", "}'"]),
    ("config-extra-settings-exact", "compare_config",
     lambda t: (write(t, "settings.json", '{\n    "workbench.colorTheme": "Visual Studio Dark",\n'
                                          '    "editor.fontSize": 14\n}\n'), {"expected": THEME}, {}),
     0.0, VALUE_MISMATCH, ["line 2:"]),
    ("config-contains-value", "compare_config",
     lambda t: (write(t, "settings.json", '{"editor.fontSize": 14, "workbench.colorTheme": "Default Light+"}'),
                {"expected": THEME}, {"containment_ok": True}),
     0.0, VALUE_MISMATCH, ["key path 'workbench.colorTheme': expected 'Visual Studio Dark', got 'Default Light+'"]),
    ("config-contains-missing-key", "compare_config",
     lambda t: (write(t, "settings.json", '{"editor.fontSize": 14}'), {"expected": THEME}, {"containment_ok": True}),
     0.0, STRUCTURE_MISMATCH, ["key path 'workbench.colorTheme' is missing (expected 'Visual Studio Dark')"]),
    ("config-contains-text", "compare_config",
     lambda t: (write(t, "gitconfig", "[user]\n\tname = Ann\n"), {"expected": "name = Bob"}, {"containment_ok": True}),
     0.0, RULE_FAILED, ["the file is not JSON, so it was looked for as text: the file does not contain 'name = Bob'"]),
    # -- text files
    ("contains", "file_contains",
     lambda t: (write(t, "r.txt", "code AX-1234\n"), {"expected": ["AX-1234", "tmp43", "x9"]}, {}),
     0.0, RULE_FAILED, ["the file does not contain 'tmp43' (2 of the 3 strings are missing)"]),
    ("python-line", "compare_python_pure_text",
     lambda t: (write(t, "a.py", "def f(x):\n\n    return x + 2\n"),
                write(t, "gold.py", "def f(x):\n    return x + 1\n"), {}),
     0.0, VALUE_MISMATCH, ["line 3 (gold line 2): expected '    return x + 1', got '    return x + 2'"]),  # blanks kept
    ("python-indent", "compare_python_pure_text",
     lambda t: (write(t, "a.py", "def f(x):\n  return x\n"), write(t, "gold.py", "def f(x):\n    return x\n"), {}),
     0.0, VALUE_MISMATCH, ["line 2 (gold line 2), column 1: the lines differ in blanks only: expected 4 spaces, "
                           "got 2 spaces there ('return x')"]),
    ("python-shorter", "compare_python_pure_text",
     lambda t: (write(t, "a.py", "def f(x):\n"), write(t, "gold.py", "def f(x):\n    return x + 1\n"), {}),
     0.0, VALUE_MISMATCH, ["ends after 1 non-blank lines; expected gold line 2: '    return x + 1'"]),
    ("line-count", "check_line_number",
     lambda t: (write(t, "log.txt", "12:01:33 start\n25:00:00 not a time\n"), {"expected": 2}, {}),
     0.0, THRESHOLD_NOT_MET, ["1 line with a time of day HH:MM:SS, expected exactly 2"]),
    ("answer-number", "compare_result_files",
     lambda t: (write(t, "r.txt", "41"), write(t, "gold.txt", "42.5\n"), {}),
     0.0, VALUE_MISMATCH, ["expected the answer 42.5", "got '41'"]),
    ("answer-text", "compare_result_files",
     lambda t: (write(t, "r.txt", "Lyon\n"), write(t, "gold.txt", "Paris\n"), {}),
     0.0, VALUE_MISMATCH, ["line 1: expected 'Paris', got 'Lyon'"]),
    # -- desktop state
    ("jpgs", "check_moved_jpgs",
     lambda t: ({"name": "cpjpg", "children": [{"name": "a.jpg"}, {"name": "d.jpg"}]},
                {"expected": ["a.jpg", "c.jpg"]}, {}),
     0.0, STRUCTURE_MISMATCH, ["'cpjpg' lacks ['c.jpg'] and holds unexpected ['d.jpg']"]),
    ("jpgs-no-listing", "check_moved_jpgs", lambda t: ({"error": "no such folder"}, {"expected": ["a.jpg"]}, {}),
     0.0, UNREADABLE_RESULT, ["not a folder listing"]),
    ("utc-offset", "is_utc_0",
     lambda t: (GuestText(TIMEDATECTL.format(abbr="CET", zone="Europe/Paris (CET, +0100)")), None, {}),
     0.0, VALUE_MISMATCH, ["Europe/Paris (CET, +0100)", "expected the offset +0000, got +0100"]),
    ("utc-no-line", "is_utc_0", lambda t: (GuestText("Failed to connect to bus"), None, {}),
     0.0, UNREADABLE_RESULT, ["no 'Time zone: ... (NAME, +HHMM)' line", "Failed to connect to bus"]),
    # -- a test suite run on the agent's code
    ("suite-false", "check_python_file_by_test_suite",
     lambda t: (write(t, "answer.py", "def double(x):\n    return x + 1\n"), write(t, "test_suite.py", TEST_SUITE), {}),
     0.0, RULE_FAILED, ["the test test_suite.py:test() returned a score of 0"]),
    ("suite-partial", "check_python_file_by_test_suite",
     lambda t: (write(t, "answer.py", "def double(x):\n    return 2 * x\n"), write(t, "test_suite.py", TEST_SUITE),
                {"test_function_name": "partly"}),
     0.25, RULE_FAILED, ["test_suite.py:partly() returned a score of 0.25"]),
    ("suite-crash", "check_python_file_by_test_suite",
     lambda t: (write(t, "answer.py", "def double(x):\n    return 2 * x\n"), write(t, "test_suite.py", TEST_SUITE),
                {"test_function_name": "crash"}),
     0.0, RULE_FAILED, ["test_suite.py:crash() failed (exit 1)", "RuntimeError: boom"]),
    ("suite-import-error", "check_python_file_by_test_suite",
     lambda t: (write(t, "answer.py", "def double(x:\n"), write(t, "test_suite.py", TEST_SUITE), {}),
     0.0, RULE_FAILED, ["test_suite.py:test() failed (exit 1)", "SyntaxError"]),
    # -- notebooks
    ("nb-output", "compare_notebook_outputs",
     lambda t: (notebook(t, "a.ipynb", [new_markdown_cell("# T"), code("print(1+2)", "3\n", 1)]),
                notebook(t, "g.ipynb", [new_markdown_cell("# T"), code("print(1+1)", "2\n", 1)]), {}),
     0.0, VALUE_MISMATCH, ["cells[1] outputs: output 0: stdout differs at line 1: expected '2', got '3'"]),
    ("nb-unrun", "compare_notebook_outputs",
     lambda t: (notebook(t, "a.ipynb", [code("print(1+1)")]), notebook(t, "g.ipynb", [code("print(1+1)", "2\n", 1)]),
                {}),
     0.0, VALUE_MISMATCH, ["cells[0] outputs: 0 outputs, expected 1: output 0 should be stdout '2\\n'"]),
    ("nb-result", "compare_notebook_outputs",
     lambda t: (notebook(t, "a.ipynb", [code("df", count=1, data={"text/plain": "   a\n0  1\n1  5"})]),
                notebook(t, "g.ipynb", [code("df", count=1, data={"text/plain": "   a\n0  1\n1  2"})]), {}),
     0.0, VALUE_MISMATCH, ["cells[0] outputs: output 0: text/plain differs at line 3: expected '1  2', got '1  5'"]),
    ("nb-image", "compare_notebook_outputs",
     lambda t: (notebook(t, "a.ipynb", [code("plot()", count=1, data={"image/png": png("disc"), "text/plain": "<F>"})]),
                notebook(t, "g.ipynb", [code("plot()", count=1, data={"image/png": png("bar"), "text/plain": "<F>"})]),
                {"ignore_images": False}),
     0.0, VALUE_MISMATCH, ["cells[0] outputs: output 0: image/png looks different: similarity", "< threshold 0.95"]),
    ("nb-cell-type", "compare_notebook_outputs",
     lambda t: (notebook(t, "a.ipynb", [code("# T")]), notebook(t, "g.ipynb", [new_markdown_cell("# T")]), {}),
     0.0, STRUCTURE_MISMATCH, ["cells[0] is a code cell, expected a markdown cell"]),
    ("nb-cell-count", "compare_notebook_outputs",
     lambda t: (notebook(t, "a.ipynb", [code("x")]), notebook(t, "g.ipynb", [code("x"), code("y")]), {}),
     0.0, STRUCTURE_MISMATCH, ["the notebook has 1 cells, expected 2"]),
    ("nb-unreadable", "compare_notebook_outputs",
     lambda t: (write(t, "a.ipynb", "not a notebook"), notebook(t, "g.ipynb", [code("x")]), {}),
     0.0, UNREADABLE_RESULT, ["the result notebook a.ipynb is not a readable notebook"]),
    ("cells-source", "compare_notebook_cells",
     lambda t: (notebook(t, "a.ipynb", [new_markdown_cell("# T"), code("x = 2")]),
                notebook(t, "g.ipynb", [new_markdown_cell("# T"), code("x = 1")]), {}),
     0.0, VALUE_MISMATCH, ["cells[1] source differs at line 1: expected 'x = 1', got 'x = 2'"]),
    ("cells-type", "compare_notebook_cells",
     lambda t: (notebook(t, "a.ipynb", [new_markdown_cell("x = 1")]), notebook(t, "g.ipynb", [code("x = 1")]), {}),
     0.0, STRUCTURE_MISMATCH, ["cells[0] is a markdown cell, expected a code cell"]),
    ("ipynb-output", "compare_ipynb_files",
     lambda t: (notebook(t, "a.ipynb", [code("x = 1", "ko\n", 1)]), notebook(t, "g.ipynb", [code("x = 1", "ok\n", 1)]),
                {}),
     0.0, VALUE_MISMATCH, ["key path 'cells[0].outputs[0].text", "expected 'ok\\n', got 'ko\\n'"]),
    ("ipynb-not-json", "compare_ipynb_files",
     lambda t: (write(t, "a.ipynb", "{oops"), notebook(t, "g.ipynb", [code("x")]), {}),
     0.0, UNREADABLE_RESULT, ["the result notebook a.ipynb is not JSON"]),
    ("executed", "is_jupyter_cell_executed",
     lambda t: (notebook(t, "a.ipynb", [new_markdown_cell("x"), code("a", "1", 1), code("b")]), {"expected": []}, {}),
     0.0, RULE_FAILED, ["cells[2] is not executed", "the code cells not executed are [2], expected []"]),
    ("cleared", "are_jupyter_outputs_cleared",
     lambda t: (notebook(t, "a.ipynb", [code("a"), code("b", "out", 3)]), {"expected": []}, {}),
     0.0, RULE_FAILED, ["cells[1] is holding outputs (1 outputs, execution count 3)"]),
    # -- databases
    ("db-missing-table", "check_local_database",
     lambda t: (database(t, "a.db", "sqlite3", SCHEMA[:1]), database(t, "b.db", "sqlite3", SCHEMA),
                {"db_type": "sqlite3", "check_type": ["table"]}),
     0.0, STRUCTURE_MISMATCH, ["table 'orders' is missing from the result database"]),
    ("db-extra-table", "check_local_database",
     lambda t: (database(t, "a.db", "duckdb", SCHEMA + ["CREATE TABLE scratch (x INTEGER)"]),
                database(t, "b.db", "duckdb", SCHEMA), {"check_type": ["table"]}),
     0.0, STRUCTURE_MISMATCH, ["table 'main.scratch' in the result database is not expected"]),
    ("db-missing-view", "check_local_database",
     lambda t: (database(t, "a.db", "duckdb", SCHEMA[:2]), database(t, "b.db", "duckdb", SCHEMA), {}),
     0.0, STRUCTURE_MISMATCH, ["view 'main.big_orders' is missing from the result database"]),
    ("db-column-type", "check_local_database",
     lambda t: (database(t, "a.db", "sqlite3", ["CREATE TABLE customers (id INTEGER, name INTEGER)"]),
                database(t, "b.db", "sqlite3", ["CREATE TABLE customers (id INTEGER, name VARCHAR)"]),
                {"db_type": "sqlite3", "check_type": ["table-schema"]}),
     0.0, STRUCTURE_MISMATCH, ["table 'customers': column 'name': type expected 'VARCHAR', got 'INTEGER'"]),
    ("db-column-missing", "check_local_database",
     lambda t: (database(t, "a.db", "duckdb", ["CREATE TABLE customers (id INTEGER)"]),
                database(t, "b.db", "duckdb", ["CREATE TABLE customers (id INTEGER, name VARCHAR)"]),
                {"check_type": ["table-schema"]}),
     0.0, STRUCTURE_MISMATCH, ["table 'main.customers': 1 columns, expected 2: column 'name' is missing"]),
    ("db-row-value", "check_local_database",
     lambda t: (database(t, "a.db", "sqlite3", SCHEMA[:2] + ROWS[:1] + ["INSERT INTO orders VALUES (1, 1, 5.0), "
                                                                        "(2, 2, 21.0)"]),
                database(t, "b.db", "sqlite3", SCHEMA[:2] + ROWS),
                {"db_type": "sqlite3", "check_type": ["table-schema-content"]}),
     0.0, VALUE_MISMATCH, ["table 'orders': row 2 (rows sorted: their order is not compared): "
                           "expected (2, 2, 20.0), got (2, 2, 21.0)"]),
    ("db-extra-row", "check_local_database",
     lambda t: (database(t, "a.db", "duckdb", SCHEMA + ROWS + ["INSERT INTO orders VALUES (3, 1, 1.0)"]),
                database(t, "b.db", "duckdb", SCHEMA + ROWS), {"check_type": ["table-schema-content"]}),
     0.0, STRUCTURE_MISMATCH, ["table 'main.orders': 3 rows, expected 2; row 3", "is not expected: got (3, 1, 1.0)"]),
    ("db-row-order", "check_local_database",
     lambda t: (database(t, "a.db", "sqlite3", SCHEMA[:1] + ["INSERT INTO customers VALUES (2, 'bob'), (1, 'ann')"]),
                database(t, "b.db", "sqlite3", SCHEMA[:1] + ROWS[:1]),
                {"db_type": "sqlite3", "check_type": ["table-schema-content"], "ordered": True}),
     0.0, VALUE_MISMATCH, ["table 'customers': row 1: expected (1, 'ann'), got (2, 'bob')"]),
    ("db-schema", "check_local_database",
     lambda t: (database(t, "a.db", "duckdb", SCHEMA[:1]),
                database(t, "b.db", "duckdb", ["CREATE SCHEMA stg", "CREATE TABLE stg.t (x INTEGER)"]),
                {"check_type": ["table"], "schema_name": "stg"}),
     0.0, STRUCTURE_MISMATCH, ["schema 'stg' is missing from the result database"]),
    ("db-garbage", "check_local_database",
     lambda t: (str(write(t, "garbage.db", "not a database at all" * 100)), database(t, "b.db", "sqlite3", SCHEMA),
                {"db_type": "sqlite3"}),
     0.0, UNREADABLE_RESULT, ["the result database", "garbage.db cannot be read"]),
    ("db-garbage-duckdb", "check_local_database",
     lambda t: (str(write(t, "garbage.duckdb", "not a database at all" * 100)), database(t, "b.db", "duckdb", SCHEMA),
                {}),
     0.0, UNREADABLE_RESULT, ["the result database garbage.duckdb is not a duckdb database"]),
    # -- SQL
    ("sql-statement", "compare_sql",
     lambda t: ("SELECT name FROM customers", write(t, "gold.sql", "SELECT name FROM orders"), {}),
     0.0, VALUE_MISMATCH, ["statement 1 (normalised): expected 'SELECT name FROM orders', "
                           "got 'SELECT name FROM customers'"]),
    ("sql-count", "compare_sql", lambda t: ("SELECT 1; SELECT 2", {"expected": "SELECT 1"}, {}),
     0.0, STRUCTURE_MISMATCH, ["2 statements, expected 1"]),
    ("sql-unparsable-result", "compare_sql", lambda t: ("SELEC name FROMM", {"expected": "SELECT name FROM t"}, {}),
     0.0, UNREADABLE_RESULT, ["sqlglot could not parse the result SQL", "expected 'SELECT name FROM t', "
                              "got 'SELEC name FROMM'"]),
    ("sql-other-stage-query", "compare_sql",
     lambda t: (STAGE_SQL.replace("file.csv", "other.csv"), {"expected": STAGE_SQL}, {}),
     0.0, VALUE_MISMATCH, ["could not parse the result SQL nor the expected SQL", "texts were compared",
                           f"they differ at line 1: expected {STAGE_SQL!r}, "
                           f"got {STAGE_SQL.replace('file.csv', 'other.csv')!r}"]),
    # -- Snowflake (what its getters read)
    ("snow-property", "is_snowflake_user_created",
     lambda t: (dict(SNOWMAN), {"EMAIL": "other@snowflake.com"}, {}),
     0.0, VALUE_MISMATCH, ["user property EMAIL: expected 'other@snowflake.com', got 'snow.storm@snowflake.com'"]),
    ("snow-role", "is_snowflake_user_created", lambda t: (dict(SNOWMAN), {"ROLE": ["PUBLIC", "ANALYST"]}, {}),
     0.0, RULE_FAILED, ["role 'ANALYST' is not granted to the user (granted: ['PUBLIC', 'SYSADMIN'])"]),
    ("snow-no-login", "is_snowflake_user_created",
     lambda t: ({"EMAIL": "x"}, {"PASSWORD": "secret"}, {}),
     0.0, RULE_FAILED, ["no LOGIN_NAME or NAME"]),
    ("snow-severity", "check_snowflake_log_message",
     lambda t: ({"severity": "WARN", "message": "m"}, {"severity": "INFO", "message": "m"}, {}),
     0.0, VALUE_MISMATCH, ["the log record's severity: expected 'INFO', got 'WARN'"]),
]


@pytest.mark.parametrize("case_id, name, build, score, kind, texts", FAILS, ids=[c[0] for c in FAILS])
def test_wrong_answer_says_where(case_id, name, build, score, kind, texts, tmp_path):
    result, expected, options = build(tmp_path)
    v = verdict(name, result, expected, **options)
    assert (float(v), v.reason.kind) == (score, kind), v.reason
    for text in texts:
        assert text in v.reason.text, v.reason.text


# --------------------------------------------------------------------------- missing results
# name -> build(tmp_path) -> (expected, options), for the metrics that take a result file (or a getter's value)
MISSING = {
    "check_direct_json_object": lambda t: ({"expected": {"k": 1}}, {}),
    "check_list": lambda t: ({"expect": ["x"]}, {}),
    "match_in_list": lambda t: ({"expected": ["x"]}, {}),
    "is_in_list": lambda t: ({"expected": "x"}, {}),
    "check_json_settings": lambda t: ({"expected": {"a": 1}}, {}),
    "check_json_keybindings": lambda t: ({"expected": {"key": "x"}}, {}),
    "compare_config": lambda t: ({"expected": THEME}, {"containment_ok": True}),
    "file_contains": lambda t: ({"expected": "x"}, {}),
    "compare_python_pure_text": lambda t: (write(t, "gold.py", "x = 1\n"), {}),
    "check_line_number": lambda t: ({"expected": 1}, {}),
    "compare_result_files": lambda t: (write(t, "gold.txt", "1\n"), {}),
    "check_moved_jpgs": lambda t: ({"expected": ["a.jpg"]}, {}),
    "is_utc_0": lambda t: (None, {}),
    "check_python_file_by_test_suite": lambda t: (write(t, "test_suite.py", TEST_SUITE), {}),
    "compare_notebook_outputs": lambda t: (notebook(t, "g.ipynb", [code("x")]), {}),
    "compare_notebook_cells": lambda t: (notebook(t, "g.ipynb", [code("x")]), {}),
    "compare_ipynb_files": lambda t: (notebook(t, "g.ipynb", [code("x")]), {}),
    "is_jupyter_cell_executed": lambda t: ({"expected": []}, {}),
    "are_jupyter_outputs_cleared": lambda t: ({"expected": []}, {}),
    "check_local_database": lambda t: (database(t, "g.db", "sqlite3", SCHEMA), {"db_type": "sqlite3"}),
    "compare_sql": lambda t: ({"expected": "SELECT 1"}, {}),
    "is_snowflake_user_created": lambda t: ({"NAME": "SNOWMAN"}, {}),
    "check_snowflake_log_message": lambda t: ({"severity": "INFO", "message": "m"}, {}),
}
#: the metrics whose result is a file: a path that does not exist is named in the reason
TAKES_FILES = ["check_list", "check_json_settings", "check_json_keybindings", "compare_config", "file_contains",
               "compare_python_pure_text", "check_line_number", "compare_result_files",
               "check_python_file_by_test_suite", "compare_notebook_outputs", "compare_notebook_cells",
               "compare_ipynb_files", "is_jupyter_cell_executed", "are_jupyter_outputs_cleared",
               "check_local_database", "compare_sql"]


def test_every_metric_has_a_missing_case():
    assert sorted(MISSING) == MINE


@pytest.mark.parametrize("name", sorted(MISSING))
def test_none_result_is_missing(name, tmp_path):
    expected, options = MISSING[name](tmp_path)
    v = verdict(name, None, expected, **options)
    assert (float(v), v.reason.kind) == (0.0, MISSING_RESULT), v.reason
    assert "None" in v.reason.text, v.reason.text


@pytest.mark.parametrize("name", TAKES_FILES)
def test_absent_result_file_is_named(name, tmp_path):
    expected, options = MISSING[name](tmp_path)
    absent = tmp_path / "absent" / "answer.file"
    v = verdict(name, absent, expected, **options)
    assert (float(v), v.reason.kind) == (0.0, MISSING_RESULT), v.reason
    assert str(absent) in v.reason.text and "does not exist" in v.reason.text, v.reason.text


def test_a_folder_is_not_a_result_file(tmp_path):
    v = verdict("file_contains", tmp_path, {"expected": "x"})
    assert v.reason.kind == MISSING_RESULT and f"{tmp_path} is a folder, not a file" in v.reason.text


def test_missing_expected_notebook_is_named(tmp_path):
    v = verdict("compare_notebook_cells", notebook(tmp_path, "a.ipynb", [code("x")]), tmp_path / "gold.ipynb")
    assert v.reason.kind == MISSING_RESULT and "expected notebook" in v.reason.text and "gold.ipynb" in v.reason.text


# --------------------------------------------------------------------------- compare_config: containment_ok

class TestCompareConfigContainment:
    """``containment_ok`` (the public suite's settings tasks): the expected JSON held by the file, or the
    expected text in it; without it, the whole text must be equal, as before."""

    def test_settings_beside_the_expected_one_pass_only_with_containment(self, tmp_path):
        path = write(tmp_path, "settings.json", '// written by VS Code\n{\n  "editor.fontSize": 14,\n'
                                                '  "workbench.colorTheme": "Visual Studio Dark",\n}\n')
        assert verdict("compare_config", path, {"expected": THEME}, containment_ok=True) == 1.0
        assert verdict("compare_config", path, {"expected": THEME}) == 0.0
        assert verdict("compare_config", path, {"expected": THEME}, containment_ok=False) == 0.0

    def test_nested_objects_are_subsets_lists_must_be_equal(self, tmp_path):
        path = write(tmp_path, "w.json", json.dumps({"folders": [{"path": "a"}, {"path": "b"}],
                                                     "settings": {"x": 1, "y": {"z": 2, "w": 3}}}))
        assert verdict("compare_config", path, {"expected": '{"settings": {"y": {"z": 2}}}'},
                       containment_ok=True) == 1.0
        v = verdict("compare_config", path, {"expected": '{"settings": {"y": {"z": 3}}}'}, containment_ok=True)
        assert v.reason.kind == VALUE_MISMATCH and "key path 'settings.y.z': expected 3, got 2" in v.reason.text
        v = verdict("compare_config", path, {"expected": '{"folders": [{"path": "a"}]}'}, containment_ok=True)
        assert v == 0.0 and v.reason.kind == STRUCTURE_MISMATCH and "'folders': 2 items, expected 1" in v.reason.text

    def test_text_that_is_not_json_is_looked_for_as_text(self, tmp_path):
        path = write(tmp_path, "gitconfig", "[user]\n\tname = Ann\n\temail = ann@example.com\n")
        assert verdict("compare_config", path, {"expected": "  name = Ann\n"}, containment_ok=True) == 1.0
        assert verdict("compare_config", path, {"expected": "name = Ann"}) == 0.0
        json_file = write(tmp_path, "s.json", '{"a": 1}')
        v = verdict("compare_config", json_file, {"expected": "a = 1"}, containment_ok=True)
        assert v.reason.kind == RULE_FAILED and "the expected text is not JSON" in v.reason.text

    def test_option_must_be_a_bool(self, tmp_path):
        with pytest.raises(MetricError, match="containment_ok"):
            METRICS.get("compare_config").func(write(tmp_path, "s", "x"), {"expected": "x"}, containment_ok="yes")

    @staticmethod
    def task(options):
        return {"id": "982d12a5-beab-424f-8d38-d2a48429e511", "config": [],
                "instruction": "Set the color theme of VS Code to Visual Studio Dark.", "evaluator": {
                    "func": "compare_config",
                    "result": {"type": "vm_file", "path": "/home/user/.config/Code/User/settings.json",
                               "dest": "settings.json"},
                    "expected": {"type": "rule", "rules": {"expected": THEME}},
                    "options": options}}

    def test_a_task_passing_it_loads(self):
        spec = TaskSpec.from_json(self.task({"containment_ok": True}))
        assert spec.evaluator.funcs == ["compare_config"]
        assert spec.evaluator.options[0] == {"containment_ok": True}

    @pytest.mark.parametrize("options, field", [({"containment_ok": "yes"}, "evaluator.options.containment_ok"),
                                                ({"containment": True}, "evaluator.options.containment")])
    def test_a_task_with_a_bad_option_does_not_load(self, options, field):
        with pytest.raises(TaskConfigError) as info:
            TaskSpec.from_json(self.task(options))
        assert info.value.field == field


# --------------------------------------------------------------------------- compare_sql on SQL sqlglot cannot parse

class TestCompareSqlUnparsable:
    def test_identical_stage_query_passes(self):
        v = verdict("compare_sql", STAGE_SQL, {"expected": STAGE_SQL})
        assert v == 1.0 and v.reason.kind == PASSED

    def test_blanks_and_keyword_case_are_all_that_is_normalised(self):
        spaced = "select  $1, $2\nfrom @stage/file.csv (FILE_FORMAT => 'csv')  "
        assert verdict("compare_sql", spaced, {"expected": STAGE_SQL}) == 1.0
        assert verdict("compare_sql", STAGE_SQL.replace("file.csv", "FILE.csv"), {"expected": STAGE_SQL}) == 0.0
        assert verdict("compare_sql", STAGE_SQL.replace("'csv'", "'CSV'"), {"expected": STAGE_SQL}) == 0.0
        assert verdict("compare_sql", STAGE_SQL + " -- load", {"expected": STAGE_SQL}) == 0.0

    def test_stage_query_files(self, tmp_path):
        gold = write(tmp_path, "gold.sql", STAGE_SQL + "\n")
        same = write(tmp_path, "same.sql", STAGE_SQL.replace("SELECT", "select").replace("FROM", "from"))
        assert verdict("compare_sql", same, gold) == 1.0
        # only the keywords sqlglot knows are case-normalised: FILE_FORMAT is not one
        assert verdict("compare_sql", write(tmp_path, "lower.sql", STAGE_SQL.lower()), gold) == 0.0
        other = write(tmp_path, "other.sql", "SELECT $1 FROM @stage/file.csv (FILE_FORMAT => 'csv')")
        v = verdict("compare_sql", other, gold)
        assert (float(v), v.reason.kind) == (0.0, VALUE_MISMATCH)
        assert "line 1: expected \"SELECT $1, $2 FROM @stage/file.csv" in v.reason.text
        assert 'got "SELECT $1 FROM @stage/file.csv' in v.reason.text

    def test_a_line_comment_keeps_its_line(self):
        gold = "-- load\n" + STAGE_SQL
        assert verdict("compare_sql", "-- load\n   " + STAGE_SQL, {"expected": gold}) == 1.0
        v = verdict("compare_sql", "-- load " + STAGE_SQL, {"expected": gold})  # all of it a comment now
        assert v == 0.0 and v.reason.kind == VALUE_MISMATCH and "the expected SQL" in v.reason.text

    def test_the_dialect_that_parses_it_still_compares_trees(self):
        assert verdict("compare_sql", STAGE_SQL.lower(), {"expected": STAGE_SQL}, dialect="snowflake") == 1.0

    def test_unterminated_string_is_compared_as_text(self):
        assert verdict("compare_sql", "SELECT 'abc", {"expected": "SELECT 'abc"}) == 1.0
        v = verdict("compare_sql", "SELECT 'abd", {"expected": "SELECT 'abc"})
        assert v == 0.0 and "could not parse" in v.reason.text

    def test_unknown_dialect_is_a_task_error(self):
        with pytest.raises(MetricError, match="nosuch"):
            METRICS.get("compare_sql").func("SELECT 1", "SELECT 1", dialect="nosuch")

    def test_plain_sql(self):
        assert plain_sql("  select a ,b\n\tfrom t  ") == "SELECT a ,b FROM t"
        assert plain_sql("select x.date from @st/select") == "SELECT x.date FROM @st/select"


# --------------------------------------------------------------------------- shared helpers

@pytest.mark.parametrize("got, want, text", [
    ("a\nb\n", "a\nc\n", "line 2: expected 'c', got 'b'"),
    ("a\n", "a\nb\n", "line 2: expected 'b', got the end of the text (1 line)"),
    ("a\nb\nc", "a\n", "line 2: expected the end of the text (1 line), got 'b'"),
    ("a", "a\n", "the lines are equal but the line endings differ: the text should end 'a\\n', it ends 'a'"),
    ("x = 1\n\tif x:", "x = 1\n    if x:", "line 2, column 1: the lines differ in blanks only: expected 4 spaces, "
                                          "got 1 tab there ('if x:')"),
    ("x" * 100 + "abc", "x" * 100 + "abd", f"line 1, column 103: expected '...{'x' * 18}abd', got '...{'x' * 18}abc'"),
])
def test_first_line_difference(got, want, text):
    assert first_line_difference(got, want) == text or first_line_difference(got, want).startswith(text)


def test_json_difference():
    assert json_difference({"a": 1, "b": 2}, {"a": 1}, subset=True) is None
    assert json_difference({"a": 1, "b": 2}, {"a": 1}) == (STRUCTURE_MISMATCH, "key path 'b' is not expected (got 2)")
    assert json_difference({"a": [{"x": 1, "y": 2}]}, {"a": [{"x": 1}]}, subset=True) == (
        STRUCTURE_MISMATCH, "key path 'a[0].y' is not expected (got 2)")
    assert json_difference({"a": {"b": "x"}}, {"a": {"b": "y"}}) == (
        VALUE_MISMATCH, "key path 'a.b': expected 'y', got 'x'")
    assert json_difference([1], {"a": 1}) == (STRUCTURE_MISMATCH, "the top level: expected an object, got [1]")
