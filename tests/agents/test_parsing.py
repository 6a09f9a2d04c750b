"""Reply parsing: code/JSON blocks kept whole, bare WAIT/DONE/FAIL, coordinate mapping, action structs."""
import ast

import pytest

from desktop_env.agents.parsing import (ParseError, ScreenMapping, action_struct, extract_actions, fit_screen,
                                        map_action, parse_size, substitute_tags)

FULL_HD_TO_720 = ScreenMapping((1280, 720), (1920, 1080))


def block(code, lang="python"):
    return f"```{lang}\n{code}\n```"


def test_typewrite_with_semicolon_and_newline_escape_stays_one_action():
    code = 'pyautogui.typewrite("a; b\\nc")'
    assert extract_actions("I will type.\n" + block(code), "pyautogui") == [code]
    assert action_struct(code)["text"] == "a; b\nc"


def test_sql_with_semicolons_and_newlines_inside_strings_is_not_split():
    code = ("pyautogui.write('''SELECT name FROM t WHERE note = 'x; y';\n"
            "INSERT INTO t VALUES ('a;b', \"c\\nd\");''')\npyautogui.press('enter')")
    actions = extract_actions(block(code), "pyautogui")
    assert actions == [code]
    struct = action_struct(actions[0])
    assert struct["type"] == "PYAUTOGUI" and struct["keys"] == ["enter"]
    assert struct["text"] == "SELECT name FROM t WHERE note = 'x; y';\nINSERT INTO t VALUES ('a;b', \"c\nd\");"


def test_several_blocks_give_several_actions_in_order_and_done_statement_splits_by_ast():
    reply = (block("pyautogui.click(10, 20)") + "\nthen\n" + block("pyautogui.write('x;DONE'); DONE"))
    assert extract_actions(reply, "pyautogui") == ["pyautogui.click(10, 20)", "pyautogui.write('x;DONE')", "DONE"]


@pytest.mark.parametrize("reply,expected", [
    ("The task is finished.\nDONE", ["DONE"]),
    ("Cannot be done:\n`FAIL`", ["FAIL"]),
    ("Loading...\n```\nWAIT\n```", ["WAIT"]),
])
def test_bare_specials(reply, expected):
    assert extract_actions(reply, "pyautogui") == expected


def test_word_done_inside_a_sentence_is_not_an_action():
    with pytest.raises(ParseError, match="no action found"):
        extract_actions("I am not DONE yet, let me think", "pyautogui")


def test_invalid_python_block_is_a_parse_error_naming_the_line():
    with pytest.raises(ParseError, match="not valid Python"):
        extract_actions(block("pyautogui.click(10,"), "pyautogui")


def test_json_actions_object_list_and_bare():
    reply = block('[{"action_type": "CLICK", "x": 10, "y": 20}, {"action_type": "TYPING", "text": "a; b"}]', "json")
    assert extract_actions(reply, "computer_13", (1280, 720)) == [
        {"action_type": "CLICK", "x": 10, "y": 20}, {"action_type": "TYPING", "text": "a; b"}]
    assert extract_actions('{"action_type": "press", "key": "enter"}', "computer_13") == [
        {"action_type": "PRESS", "key": "enter"}]
    assert extract_actions(block('{"action_type": "HOTKEY", "keys": ["ctrl", "s"]}', "json") + "\nDONE",
                           "computer_13") == [{"action_type": "HOTKEY", "keys": ["ctrl", "s"]}]


def test_json_errors():
    with pytest.raises(ParseError, match="does not parse"):
        extract_actions(block('{"action_type": "CLICK", "x": 1,', "json"), "computer_13")
    with pytest.raises(ParseError, match="unknown action_type 'TELEPORT'"):
        extract_actions(block('{"action_type": "TELEPORT"}', "json"), "computer_13")
    with pytest.raises(ParseError, match="off screen"):
        extract_actions(block('{"action_type": "CLICK", "x": 1300, "y": 5}', "json"), "computer_13", (1280, 720))


def test_fit_screen_and_parse_size():
    assert fit_screen((1920, 1080), (1280, 720)) == (1280, 720)
    assert fit_screen((1920, 1200), (1280, 720)) == (1152, 720)
    assert fit_screen((1024, 768), (1280, 720)) == (960, 720)
    assert fit_screen((800, 600), (1280, 720)) == (800, 600)  # never enlarged
    assert parse_size("1280x720") == (1280, 720)
    with pytest.raises(ValueError, match="WIDTHxHEIGHT"):
        parse_size("1280")


def test_pyautogui_coordinates_mapped_positional_keyword_tuple_scroll_relative():
    code = ("pyautogui.click(640, 360)\npyautogui.moveTo(x=100, y=50.5, duration=0.2)\n"
            "pyautogui.dragTo((1279, 719), button='left')\npyautogui.scroll(-3, 10, 10)\n"
            "pyautogui.moveRel(-10, 10)\npyautogui.write('click(1, 2)')\npyautogui.click()")
    mapped = map_action(code, FULL_HD_TO_720)
    assert mapped.splitlines() == [
        "pyautogui.click(960, 540)", "pyautogui.moveTo(x=150, y=76, duration=0.2)",
        "pyautogui.dragTo((1918, 1078), button='left')", "pyautogui.scroll(-3, 15, 15)",
        "pyautogui.moveRel(-15, 15)", "pyautogui.write('click(1, 2)')", "pyautogui.click()"]
    # unchanged code keeps its exact text (no re-formatting when nothing maps)
    assert map_action("pyautogui.write( 'a' )", FULL_HD_TO_720) == "pyautogui.write( 'a' )"


def test_mapping_round_trip_stays_within_a_pixel_and_on_screen():
    m = ScreenMapping((1152, 720), (1920, 1200))
    for x, y in [(0, 0), (1919, 1199), (333, 777), (960, 600)]:
        back = m.to_screen(*m.to_model(x, y))
        assert abs(back[0] - x) <= 2 and abs(back[1] - y) <= 2
    assert m.to_screen(5000, -4) == (1919, 0)
    dict_action = map_action({"action_type": "CLICK", "x": 576, "y": 360}, m)
    assert dict_action == {"action_type": "CLICK", "x": 960, "y": 600}
    assert map_action("DONE", m) == "DONE"


def test_action_struct_kinds():
    assert action_struct({"action_type": "DRAG_TO", "x": 5, "y": 6})["path"] == [[5, 6]]
    assert action_struct({"action_type": "PRESS", "key": "enter"})["keys"] == ["enter"]
    assert action_struct({"command": "ls -l", "shell": True}) == {
        "type": "COMMAND", "x": None, "y": None, "path": None, "text": "ls -l", "keys": None}
    assert action_struct("pyautogui.hotkey('ctrl', 'c')")["keys"] == ["ctrl", "c"]
    click = action_struct("pyautogui.doubleClick(3, 4)")
    assert (click["type"], click["x"], click["y"]) == ("DOUBLE_CLICK", 3, 4)
    drag = action_struct("pyautogui.moveTo(1, 2); pyautogui.dragTo(30, 40)")
    assert drag["type"] == "PYAUTOGUI" and drag["path"] == [[1, 2], [30, 40]]
    assert action_struct("FAIL")["type"] == "FAIL"
    assert action_struct("import os")["type"] == "PYAUTOGUI"


def test_tags_substituted_then_mapped():
    tags = {3: (100, 50)}
    actions = extract_actions(block("pyautogui.click(tag_3)"), "pyautogui", (1280, 720), tags)
    assert ast.dump(ast.parse(actions[0])) == ast.dump(ast.parse("pyautogui.click((100, 50))"))
    assert map_action(actions[0], FULL_HD_TO_720) == "pyautogui.click((150, 75))"
    assert extract_actions(block('{"action_type": "CLICK", "tag": 3}', "json"), "computer_13", (1280, 720),
                           tags) == [{"action_type": "CLICK", "x": 100, "y": 50}]
    with pytest.raises(ParseError, match="tag_9"):
        substitute_tags("pyautogui.click(tag_9)", tags)


def test_blocks_in_other_languages_are_not_actions():
    reply = "In a shell you would run\n```bash\nmkdir -p x; ls\n```\nbut here:\n" + block("pyautogui.press('enter')")
    assert extract_actions(reply, "pyautogui") == ["pyautogui.press('enter')"]
    with pytest.raises(ParseError, match="no action found"):
        extract_actions("```bash\nls\n```", "pyautogui")
