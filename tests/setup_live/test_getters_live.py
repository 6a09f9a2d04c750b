"""Getters run through the evaluator's dispatch (``run_getter``) against the in-VM server on a real X display."""
from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET

import pytest
from PIL import Image
from vmsrv_harness import SCREEN, Apps, wait_until

from desktop_env.session import SetupError
from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.evaluator import run_getter
from desktop_env.tasks import GetterSpec

pytestmark = pytest.mark.xvfb

APP = "os"


def _get(ctx, side: str = "result", **spec):
    return run_getter(ctx, GetterSpec.from_json(spec), side)


@pytest.fixture
def ctx(suite, context):
    tid = str(uuid.uuid4())
    task = suite(APP, {"id": tid, "instruction": "read the VM", "config": [], "evaluator": {"func": "infeasible"}},
                 files={"eval.sh": EVAL_SH})
    return context(task)


EVAL_SH = """#!/bin/bash
# prints succeed when answer.txt (beside the script) says 42
if [ "$(cat answer.txt 2>/dev/null)" = "42" ]; then echo succeed; else echo failed; fi
echo "ran in $(pwd)"
echo "to stderr" >&2
"""


# -- files ---------------------------------------------------------------------------------------

def test_vm_file_single(ctx, guest):
    data = b"col\n\xe2\x9c\x93\n" * 100
    (guest / "out.csv").write_bytes(data)
    local = _get(ctx, type="vm_file", path=str(guest / "out.csv"), dest="fetched/out.csv")
    assert local == ctx.cache_path("fetched/out.csv")
    with open(local, "rb") as fh:
        assert fh.read() == data
    # a missing result file is scored as missing (None), not an error
    assert _get(ctx, type="vm_file", path=str(guest / "absent.csv"), dest="absent.csv") is None
    assert not ctx.cache_path("absent.csv").exists()


def test_vm_file_multi_and_gives(ctx, guest):
    for name in ("a.txt", "b.txt", "c.txt"):
        (guest / name).write_text(f"content of {name}\n")
    paths = [str(guest / n) for n in ("a.txt", "b.txt", "c.txt")]
    dests = ["m/a.txt", "m/b.txt", "m/c.txt"]

    def read(p):
        with open(p) as fh:
            return fh.read()

    default = _get(ctx, type="vm_file", path=paths, dest=dests, multi=True)
    assert read(default) == "content of a.txt\n"  # gives defaults to [0]: one path
    one = _get(ctx, type="vm_file", path=paths, dest=dests, multi=True, gives=[1])
    assert read(one) == "content of b.txt\n"
    two = _get(ctx, type="vm_file", path=paths, dest=dests, multi=True, gives=[2, 0])
    assert [read(p) for p in two] == ["content of c.txt\n", "content of a.txt\n"]
    holes = _get(ctx, type="vm_file", path=[paths[0], str(guest / "gone.txt")], dest=["h/a.txt", "h/gone.txt"],
                 multi=True, gives=[0, 1])
    assert read(holes[0]) == "content of a.txt\n" and holes[1] is None
    with pytest.raises(TaskConfigError, match="parallel lists"):
        _get(ctx, "expected", type="vm_file", path=paths, dest=dests[:2], multi=True)


def test_list_directory(ctx, guest):
    (guest / "tree" / "sub").mkdir(parents=True)
    (guest / "tree" / "sub" / "inner.txt").write_text("x")
    (guest / "tree" / "top.txt").write_text("y")
    assert _get(ctx, type="list_directory", path=str(guest / "tree")) == {
        "type": "directory", "name": "tree", "children": [
            {"type": "directory", "name": "sub", "children": [{"type": "file", "name": "inner.txt"}]},
            {"type": "file", "name": "top.txt"}]}


def test_cache_file(ctx):
    ctx.cache_path("saved/by-step.txt").write_text("cached")
    assert _get(ctx, type="cache_file", path="saved/by-step.txt") == ctx.cache_path("saved/by-step.txt")
    assert _get(ctx, type="cache_file", path="saved/never.txt") is None
    with pytest.raises(SetupError, match="escapes the cache folder"):
        _get(ctx, type="cache_file", path="../outside.txt")


# -- commands and scripts ------------------------------------------------------------------------

def test_vm_script_output_runs_eval_sh_in_its_folder(ctx, guest):
    work = guest / "work"
    src = f"evaluation_examples/examples/{APP}/{ctx.task.id}/eval.sh"
    before = _get(ctx, type="vm_script_output", src=src, dest=str(work / "eval.sh"))
    assert before == f"failed\nran in {work}\n"  # stdout only, parent folder created
    (work / "answer.txt").write_text("42")
    after = _get(ctx, type="vm_script_output", src="eval.sh", dest=str(work / "eval.sh"))  # task-folder relative
    assert after == f"succeed\nran in {work}\n"


def test_vm_script_output_without_shell_runs_in_its_folder(ctx, guest):
    work = guest / "no shell"
    (work).mkdir()
    (work / "answer.txt").write_text("42")
    out = _get(ctx, type="vm_script_output", src="eval.sh", dest=str(work / "eval.sh"), shell=False)
    assert out == f"succeed\nran in {work}\n"


def test_vm_command_line_and_error(ctx, guest):
    (guest / "n.txt").write_text("1\n2\n3\n")
    assert _get(ctx, type="vm_command_line", command=["wc", "-l", str(guest / "n.txt")]) == f"3 {guest / 'n.txt'}\n"
    total = f"awk '{{s += $1}} END {{print s}}' {guest}/n.txt"
    assert _get(ctx, type="vm_command_line", command=total, shell=True) == "6\n"
    err = _get(ctx, type="vm_command_error", command=["ls", str(guest / "missing-dir")])
    assert "missing-dir" in err and "No such file" in err
    assert _get(ctx, type="vm_command_error", command=["true"]) == ""


# -- the desktop ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def terminal(server, xsession):
    """(title, marker) of an xfce4-terminal window that printed ``marker``, shared by this module."""
    launched = Apps(server.client, xsession)
    title = f"getters-{uuid.uuid4().hex[:8]}"
    marker = f"marker-{uuid.uuid4().hex[:10]}"
    try:
        launched.terminal(title, shell_command=f"echo {marker}")
        yield title, marker
    finally:
        launched.close_all()


def test_vm_terminal_output(ctx, terminal, client):
    title, marker = terminal
    client.activate_window(title, strict=True)
    text = wait_until(lambda: (lambda t: t if t and marker in t else None)(_get(ctx, type="vm_terminal_output")),
                      30, "the marker in the terminal getter", interval_s=0.5)
    assert isinstance(text, str)


def test_accessibility_tree(ctx, terminal):
    title, _ = terminal

    def frame():
        root = ET.fromstring(_get(ctx, type="accessibility_tree"))
        return next((f for f in root.iter("frame") if title in f.get("name", "")), None)

    found = wait_until(frame, 30, f"a frame named {title!r} in the accessibility tree", interval_s=0.5)
    assert any(True for _ in found.iter("terminal")), "no terminal widget under the frame"


def test_vm_screen_size(ctx):
    assert tuple(_get(ctx, type="vm_screen_size")) == SCREEN


def test_vm_window_size(ctx, terminal, xsession):
    title, _ = terminal
    width, height = _get(ctx, type="vm_window_size", app_class_name="xfce4-terminal")
    wid = xsession.run("xdotool", "search", "--name", f"^{title}$").stdout.split()[0]
    geo = dict(line.split("=", 1) for line in xsession.run("xdotool", "getwindowgeometry", "--shell", wid)
               .stdout.split())
    assert (width, height) == (int(geo["WIDTH"]), int(geo["HEIGHT"]))
    assert _get(ctx, type="vm_window_size", app_class_name="no-such-class") is None


def test_vm_wallpaper(ctx, guest):
    image = guest / "plain.png"
    Image.new("RGB", (16, 16), (1, 2, 3)).save(image)
    ctx.controller.change_wallpaper(str(image))
    local = _get(ctx, type="vm_wallpaper")
    assert local == ctx.cache_path("wallpaper.png")
    with open(local, "rb") as fh:
        assert fh.read() == image.read_bytes()
