"""Typed text arrives complete and in order when the application lags or the typist stalls (real Xvfb)."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from vmsrv_harness import wait_until

pytestmark = pytest.mark.xvfb
READER = Path(__file__).resolve().parent / "data" / "slow_reader.py"


def _start_reader(xsession, server_python, tmp_path, lag_s, busy_ms=0, prefix=(), quiet_s=1.0):
    paths = {k: tmp_path / k for k in ("out", "ready", "go")}
    proc = subprocess.Popen([*prefix, server_python, str(READER), str(paths["out"]), str(paths["ready"]),
                             str(paths["go"]), str(lag_s), str(busy_ms), str(quiet_s)], env=xsession.env)
    wait_until(lambda: paths["ready"].exists(), 30, "the slow reader's window")
    return proc, paths


def _read_when_write_returns(client, xsession, paths, text: str, before: str = "") -> str | None:
    """Focus the reader, let it start, run ``before`` then type ``text``, and return what the reader had read
    when write() returned."""
    xsession.run("xdotool", "search", "--name", "slow-reader", "windowactivate", "--sync")
    paths["go"].touch()
    reply = client.run_pyautogui(f"{before}pyautogui.write({text!r})", timeout_s=120)
    assert reply["returncode"] == 0, reply
    return paths["out"].read_text(encoding="utf-8") if paths["out"].exists() else None


def test_a_client_that_reads_its_keys_late_gets_every_non_ascii_character(client, xsession, server_python,
                                                                          tmp_path):
    """The client reads the keymap when it reaches the MappingNotify, seconds after the typing ended: the
    bindings of the characters the keymap lacks must still be there (they were reverted 50 ms after typing)."""
    proc, paths = _start_reader(xsession, server_python, tmp_path, lag_s=3.0)
    try:
        text = "Grüße ½ naïve – ℃ Ωμέγα 中文 end"
        reply = client.run_pyautogui(f"pyautogui.write({text!r})", timeout_s=60)
        assert reply["returncode"] == 0, reply
        paths["go"].touch()
        proc.wait(timeout=60)
        assert paths["out"].read_text(encoding="utf-8") == text
    finally:
        proc.kill()


def test_a_typist_that_stalls_between_press_and_release_types_each_key_once(client, xsession, server_python,
                                                                            tmp_path):
    """With X autorepeat on (as on a stock desktop), a stall longer than the repeat delay between a key's press
    and release would repeat it; typing runs with autorepeat off, then restores it."""
    xsession.run("xset", "r", "on", "r", "rate", "200", "20")
    proc, paths = _start_reader(xsession, server_python, tmp_path, lag_s=0.0)
    try:
        stall = ("import time\nfrom pyautogui import _pyautogui_x11 as x11\n_up = x11._keyUp\n"
                 "def _slow_up(key):\n    time.sleep(0.6 if key == 'b' else 0)\n    _up(key)\n"
                 "x11._keyUp = _slow_up\ntry:\n    pyautogui.write('abc')\nfinally:\n    x11._keyUp = _up\n")
        paths["go"].touch()
        reply = client.run_pyautogui(stall, timeout_s=60)
        assert reply["returncode"] == 0, reply
        proc.wait(timeout=60)
        assert paths["out"].read_text(encoding="utf-8") == "abc"
        assert "auto repeat:  on" in xsession.run("xset", "q").stdout  # restored
    finally:
        proc.kill()
        xsession.run("xset", "r", "off", check=False)


def test_a_new_executor_adopts_the_bindings_it_finds(client, xsession, server_python, tmp_path):
    """A restarted worker does not leak spare keycodes: it reuses the keycodes earlier workers bound."""
    code = ("from pyautogui import _pyautogui_x11 as x11\nimport xkeys\nk = xkeys.SpareKeys(x11._display)\n"
            "print(k.spare_count, len(k.free), sorted(k.bound))")
    before = client.run_pyautogui(code, timeout_s=60)["output"].split(None, 2)
    client.run_pyautogui("pyautogui.write('ŷŵ')", timeout_s=60)
    after = client.run_pyautogui(code, timeout_s=60)["output"].split(None, 2)
    assert after[0] == before[0]  # the same number of spare keycodes in all
    assert "'ŵ'" in after[2] and "'ŷ'" in after[2]


def test_typing_returns_once_a_busy_application_has_read_every_key(client, xsession, server_python, tmp_path):
    """An application that spends CPU on each key falls behind the X server; the next action (a shortcut)
    must not overtake the text, so typing returns only once the application in front has read it all."""
    proc, paths = _start_reader(xsession, server_python, tmp_path, lag_s=0.0, busy_ms=40)
    try:
        text = "the quick brown fox jumps over the lazy dog " * 4
        assert _read_when_write_returns(client, xsession, paths, text) == text
    finally:
        proc.kill()


def test_typing_waits_for_an_idle_application_that_has_not_read_its_keys(client, xsession, server_python, tmp_path):
    """An application blocked on something else uses no CPU while its keys wait unread on its X connection:
    typing returns only once it has read them, not as soon as it looks idle."""
    proc, paths = _start_reader(xsession, server_python, tmp_path, lag_s=4.0)
    try:
        text = "typed while the reader sleeps"
        assert _read_when_write_returns(client, xsession, paths, text) == text
    finally:
        proc.kill()


def test_typing_waits_for_a_busy_application_that_gets_almost_no_cpu(client, xsession, server_python, tmp_path):
    """On a host short of CPU a busy application gets little CPU time and looks idle by that measure; it is
    runnable all the while, so typing still waits until it has read every key. Here the reader runs at nice 19
    on one CPU beside a process spinning at nice 0 (about 1.5% of that CPU)."""
    hog = subprocess.Popen(["taskset", "-c", "0", server_python, "-c", "while True: pass"])
    proc, paths = _start_reader(xsession, server_python, tmp_path, lag_s=0.0, busy_ms=5,
                                prefix=("taskset", "-c", "0", "nice", "-n", "19"))
    try:
        text = "starved but busy"
        assert _read_when_write_returns(client, xsession, paths, text) == text
    finally:
        proc.kill()
        hog.kill()


def test_a_key_sent_before_typing_is_handled_before_the_text(client, xsession, server_python, tmp_path):
    """Calc under emulation handled the ``right`` sent just before a TYPING action after the whole text (every
    entry landed one column to the left): typing starts only once the application has handled what came
    before it, so no typed key is queued behind the ``right`` when the application reads it."""
    proc, paths = _start_reader(xsession, server_python, tmp_path, lag_s=3.0, quiet_s=4.0)
    try:
        text = "Grüße =SUM(A1:A3)"
        assert _read_when_write_returns(client, xsession, paths, text, "pyautogui.press('right')\n") == "[Right]" + text
    finally:
        proc.kill()
