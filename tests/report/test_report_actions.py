"""Structured actions derived from raw pyautogui code and computer_13 dicts."""
from desktop_env.report.actions import action_parts, parse_pyautogui, summarize


def test_click_drag_type_and_keys_in_one_code_string():
    cursor = [None, None]
    parts = parse_pyautogui("pyautogui.click(100, 200)\npyautogui.dragTo(300, 400, duration=1)\n"
                            "pyautogui.write('hi', interval=0.1); pyautogui.hotkey('ctrl', 's')", cursor)
    assert [p["type"] for p in parts] == ["CLICK", "DRAG_TO", "TYPING", "HOTKEY"]
    assert (parts[0]["x"], parts[0]["y"]) == (100, 200)
    assert parts[1]["path"] == [[100, 200], [300, 400]]
    assert parts[2]["text"] == "hi" and parts[3]["keys"] == ["ctrl", "s"]
    assert cursor == [300, 400]


def test_keyword_tuple_and_relative_coordinates():
    cursor = [10, 10]
    parts = parse_pyautogui("pyautogui.moveTo((50, 60)); pyautogui.moveRel(5, -5); pyautogui.click(x=7, y=8)", cursor)
    assert [(p["x"], p["y"]) for p in parts] == [(50, 60), (55, 55), (7, 8)]


def test_click_without_coordinates_happens_at_the_pointer():
    parts = parse_pyautogui("pyautogui.moveTo(1, 2)\npyautogui.doubleClick()")
    assert parts[1] == {"type": "DOUBLE_CLICK", "x": 1, "y": 2}


def test_typewrite_list_press_list_and_other_calls():
    parts = parse_pyautogui("pyautogui.typewrite(['a', 'b']); pyautogui.press(['tab', 'enter']); "
                            "pyautogui.screenshot()")
    assert parts[0] == {"type": "TYPING", "text": "ab"}
    assert parts[1] == {"type": "PRESS", "keys": ["tab", "enter"]}
    assert parts[2]["type"] == "PYAUTOGUI" and "screenshot" in parts[2]["text"]


def test_code_that_does_not_parse_is_kept_whole():
    assert parse_pyautogui("pyautogui.click(") == [{"type": "PYAUTOGUI", "text": "pyautogui.click("}]


def test_computer13_specials_and_commands():
    cursor = [None, None]
    assert action_parts({"action_type": "CLICK", "x": 5, "y": 6}, cursor) == [{"type": "CLICK", "x": 5, "y": 6}]
    assert action_parts({"action_type": "DRAG_TO", "x": 9, "y": 9}, cursor)[0]["path"] == [[5, 6], [9, 9]]
    assert action_parts({"action_type": "HOTKEY", "keys": ["ctrl", "c"]})[0]["keys"] == ["ctrl", "c"]
    assert action_parts({"action_type": "PRESS", "key": "enter"})[0]["keys"] == ["enter"]
    assert action_parts("DONE") == [{"type": "DONE"}] and action_parts("fail") == [{"type": "FAIL"}]
    assert action_parts({"command": "ls -l", "shell": True}) == [{"type": "COMMAND", "text": "ls -l"}]
    assert action_parts(None) == [{"type": "NONE"}]


def test_summary_of_several_parts():
    s = summarize(parse_pyautogui("pyautogui.click(1, 2); pyautogui.write('x'); pyautogui.press('enter')"))
    assert s["type"] == "PYAUTOGUI" and (s["x"], s["y"]) == (1, 2)
    assert s["text"] == "x" and s["keys"] == ["enter"] and len(s["parts"]) == 3
    assert summarize([{"type": "DONE"}]) == {"type": "DONE"}
