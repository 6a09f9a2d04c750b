"""Setup steps run through the real dispatcher against the in-VM server on a real X display."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import uuid

import pytest
from PIL import Image
from vmsrv_harness import wait_until

from desktop_env.configs import steps
from desktop_env.session import SetupError
from desktop_env.configs.dispatch import run_config, run_step, run_steps
from desktop_env.errors import GuestServerError
from desktop_env.evaluators.evaluator import run_getter
from desktop_env.tasks import GetterSpec, StepSpec

pytestmark = pytest.mark.xvfb

APP = "os"


def _task(config: list, tid: str | None = None) -> dict:
    return {"id": tid or str(uuid.uuid4()), "instruction": "set the desktop up", "config": config,
            "evaluator": {"func": "infeasible"}}


def _rel(task_id: str, name: str, app: str = APP) -> str:
    """A task file named as existing task files do: relative to the suite root."""
    return f"evaluation_examples/examples/{app}/{task_id}/{name}"


# -- files in ------------------------------------------------------------------------------------

def test_copyfile_from_host_to_guest(suite, context, guest):
    tid = str(uuid.uuid4())
    payload = bytes(range(256)) * 40 + b"\r\n\x00end"
    settings = {"name": "caf\u00e9", "nested": {"n": [1, 2, 3]}}
    dest = guest / "deep" / "er" / "payload.bin"  # parent folders do not exist yet
    dest_json = guest / "settings.json"
    task = suite(APP, _task([
        {"type": "copyfile_from_host_to_guest", "parameters": {"src": _rel(tid, "payload.bin"), "dest": str(dest)}},
        {"type": "copyfile_from_host_to_guest",
         "parameters": {"src": "settings.json", "dest": str(dest_json), "json_encode": True}},  # task-folder relative
    ], tid), files={"payload.bin": payload, "settings.json": json.dumps(settings, indent=4)})
    run_config(context(task))
    assert dest.read_bytes() == payload
    assert dest_json.read_text(encoding="utf-8") == json.dumps(settings, ensure_ascii=False)


def test_copyfile_json_encode_refuses_bad_json(suite, context, guest):
    tid = str(uuid.uuid4())
    task = suite(APP, _task([{"type": "copyfile_from_host_to_guest", "parameters": {
        "src": _rel(tid, "bad.json"), "dest": str(guest / "bad.json"), "json_encode": True}}], tid),
        files={"bad.json": "{not json"})
    with pytest.raises(SetupError, match="not valid JSON") as err:
        run_config(context(task))
    assert err.value.where == "config[0]"
    assert not (guest / "bad.json").exists()


def test_script_and_execute_runs_init_sh_in_its_folder(suite, context, guest):
    tid = str(uuid.uuid4())
    init = ("#!/bin/bash\nset -e\n"
            "mkdir -p project\n"
            "printf 'cwd=%s\\n' \"$(pwd)\" > project/created.txt\n"
            "echo init-done\n")
    dest = guest / "scripts" / "init.sh"
    task = suite(APP, _task([{"type": "script_and_execute",
                              "parameters": {"src": _rel(tid, "init.sh"), "dest": str(dest)}}], tid),
                 files={"init.sh": init})
    reply = run_step(context(task), task.config[0])
    assert reply["returncode"] == 0 and "init-done" in reply["output"]
    assert dest.read_text() == init
    assert (guest / "scripts" / "project" / "created.txt").read_text() == f"cwd={guest / 'scripts'}\n"


def test_script_and_execute_without_shell_also_runs_in_its_folder(suite, context, guest):
    """shell: false passes the folder and script as arguments: a space or `;` in the path is not interpreted."""
    tid = str(uuid.uuid4())
    dest = guest / "odd dir; touch pwned" / "init.sh"
    task = suite(APP, _task([{"type": "script_and_execute", "parameters": {
        "src": _rel(tid, "init.sh"), "dest": str(dest), "shell": False}}], tid),
        files={"init.sh": "printf 'cwd=%s\\n' \"$(pwd)\" > here.txt\n"})
    reply = run_step(context(task), task.config[0])
    assert reply["returncode"] == 0, reply
    assert (dest.parent / "here.txt").read_text() == f"cwd={dest.parent}\n"
    assert not list(guest.rglob("pwned"))


def test_script_and_execute_failure_does_not_stop_setup(suite, context, guest):
    tid = str(uuid.uuid4())
    task = suite(APP, _task([
        {"type": "script_and_execute", "parameters": {"src": _rel(tid, "init.sh"), "dest": str(guest / "init.sh")}},
        {"type": "execute", "parameters": {"command": ["touch", str(guest / "after.txt")]}},
    ], tid), files={"init.sh": "echo half >&2\nexit 3\n"})
    ctx = context(task)
    reply = run_step(ctx, task.config[0])
    assert reply["returncode"] == 3 and "half" in reply["error"]
    run_config(ctx)  # a failing init.sh is logged, as in the suites the format comes from
    assert (guest / "after.txt").exists()


def test_execute_logs_a_command_that_failed(suite, context, caplog):
    """A failing command does not stop setup (the suites' setups pkill what may not run), but is logged."""
    task = suite(APP, _task([{"type": "execute", "parameters": {
        "command": ["sh", "-c", "echo no-such-window >&2; exit 4"]}}]))
    with caplog.at_level("INFO", logger="desktop_env.configs.steps"):
        run_config(context(task))
    assert any("exited 4" in r.getMessage() and "no-such-window" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level("INFO", logger="desktop_env.configs.steps"):
        run_config(context(suite(APP, _task([{"type": "execute", "parameters": {"command": ["true"]}}]))))
    assert not any("exited" in r.getMessage() for r in caplog.records)


# -- windows -------------------------------------------------------------------------------------

def _kill_windows(xsession, title: str) -> None:
    out = xsession.run("xdotool", "search", "--name", f"^{title}$", check=False).stdout.split()
    for wid in out:
        pid = xsession.run("xdotool", "getwindowpid", wid, check=False).stdout.strip()
        if pid.isdigit():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(int(pid), signal.SIGKILL)


def test_launch_activate_close_a_real_terminal(suite, context, xsession):
    first, second = (f"setup-{uuid.uuid4().hex[:8]}" for _ in range(2))
    term = ["xfce4-terminal", "--disable-server", "--geometry", "60x10", "--title"]
    task = suite(APP, _task([
        {"type": "launch", "parameters": {"command": [*term, first, "-x", "bash", "--norc"]}},
        {"type": "launch", "parameters": {"command": " ".join([*term, second, "-x", "bash", "--norc"]),
                                          "shell": True}},
    ]))
    ctx = context(task)
    try:
        run_config(ctx)
        wait_until(lambda: {first, second} <= set(xsession.window_titles()), 30, "both launched terminals")

        def active() -> str:
            return xsession.run("xdotool", "getactivewindow", "getwindowname", check=False).stdout.strip()

        for title in (first, second, first):
            run_step(ctx, StepSpec.from_json({"type": "activate_window",
                                              "parameters": {"window_name": title, "strict": True}}))
            wait_until(lambda t=title: active() == t, 10, f"{title} to become the active window")

        with pytest.raises(SetupError) as err:  # strict wants the whole title
            run_steps(ctx, [StepSpec.from_json({"type": "activate_window",
                                                "parameters": {"window_name": first[:9], "strict": True}})])
        assert err.value.where == "config[0]"
        assert isinstance(err.value.__cause__, GuestServerError) and err.value.__cause__.status == 404

        run_step(ctx, StepSpec.from_json({"type": "close_window", "parameters": {"window_name": first,
                                                                                  "strict": True}}))
        wait_until(lambda: first not in xsession.window_titles(), 15, f"{first} to close")
        assert second in xsession.window_titles()
        # by_class closes the first xfce4-terminal: the only one left
        run_step(ctx, StepSpec.from_json({"type": "close_window",
                                          "parameters": {"window_name": "xfce4-terminal", "by_class": True}}))
        wait_until(lambda: second not in xsession.window_titles(), 15, f"{second} to close")
    finally:
        _kill_windows(xsession, first)
        _kill_windows(xsession, second)


# -- commands ------------------------------------------------------------------------------------

def test_execute_saves_stdout_and_stderr_in_the_cache(suite, context, guest):
    task = suite(APP, _task([
        {"type": "execute", "parameters": {"command": ["bash", "-c", "echo out-$((6*7)); echo err-1 >&2"],
                                           "stdout": "logs/out.txt", "stderr": "logs/err.txt"}},
        {"type": "command", "parameters": {"command": f"echo alias > {guest}/alias.txt", "shell": True}},
    ]))
    ctx = context(task)
    run_config(ctx)
    assert (ctx.cache_dir / "logs" / "out.txt").read_text() == "out-42\n"
    assert (ctx.cache_dir / "logs" / "err.txt").read_text() == "err-1\n"
    assert (guest / "alias.txt").read_text() == "alias\n"
    assert run_getter(ctx, GetterSpec.from_json({"type": "cache_file", "path": "logs/out.txt"})) == \
        ctx.cache_path("logs/out.txt")


def test_execute_until_retries_until_the_condition_holds(suite, context, guest, monkeypatch):
    monkeypatch.setattr(steps, "UNTIL_POLL_S", 0.05)
    counter = guest / "count"
    bump = f"n=$(($(cat {counter} 2>/dev/null || echo 0) + 1)); echo $n > {counter}; echo run$n; [ $n -ge 3 ]"
    task = suite(APP, _task([{"type": "execute", "parameters": {
        "command": bump, "shell": True, "until": {"returncode": 0, "stdout": "run3"}}}]))
    reply = run_step(context(task), task.config[0])
    assert reply["output"] == "run3\n" and reply["returncode"] == 0
    assert counter.read_text() == "3\n"


def test_execute_until_gives_up_at_the_deadline(suite, context, monkeypatch):
    monkeypatch.setattr(steps, "UNTIL_POLL_S", 0.05)
    from desktop_env import limits
    monkeypatch.setitem(limits.LIMITS, "setup.until", (0.5, "test"))
    task = suite(APP, _task([{"type": "execute", "parameters": {
        "command": ["echo", "not yet"], "until": {"stdout": "ready"}}}]))
    with pytest.raises(SetupError, match="never met") as err:
        run_config(context(task))
    assert err.value.where == "config[0]" and "not yet" in str(err.value)


def test_sleep(suite, context):
    task = suite(APP, _task([{"type": "sleep", "parameters": {"seconds": 0.4}}]))
    started = time.monotonic()
    run_config(context(task))
    assert time.monotonic() - started >= 0.4
    with pytest.raises(SetupError, match="non-negative"):
        run_step(context(task), StepSpec.from_json({"type": "sleep", "parameters": {"seconds": -1}}))


# -- downloads and uploads -----------------------------------------------------------------------

def test_download_from_file_url_task_path_and_http(suite, context, guest, tmp_path, http_root):
    www, base_url = http_root
    tid = str(uuid.uuid4())
    host_file = tmp_path / "host-only.bin"
    host_file.write_bytes(b"\x00from file url\xff")
    (www / "sub").mkdir()
    (www / "sub" / "served.csv").write_bytes(b"a,b\n1,2\n")
    task = suite(APP, _task([{"type": "download", "parameters": {"files": [
        {"url": host_file.as_uri(), "path": str(guest / "dl" / "one.bin")},
        {"url": "data/task-file.txt", "path": str(guest / "dl" / "two.txt")},
        {"url": _rel(tid, "data/task-file.txt"), "path": str(guest / "dl" / "three.txt")},
        {"url": f"{base_url}/sub/served.csv", "path": str(guest / "dl" / "web" / "four.csv")},
    ]}}], tid), files={"data/task-file.txt": "shipped with the task\n"})
    ctx = context(task)
    run_config(ctx)
    assert (guest / "dl" / "one.bin").read_bytes() == b"\x00from file url\xff"
    assert (guest / "dl" / "two.txt").read_text() == "shipped with the task\n"
    assert (guest / "dl" / "three.txt").read_text() == "shipped with the task\n"
    assert (guest / "dl" / "web" / "four.csv").read_bytes() == b"a,b\n1,2\n"

    missing = StepSpec.from_json({"type": "download", "parameters": {"files": [
        {"url": f"{base_url}/nope.csv", "path": str(guest / "dl" / "nope.csv")}]}})
    with pytest.raises(SetupError, match="could not fetch .*nope.csv"):
        run_steps(ctx, [missing])
    assert not (guest / "dl" / "nope.csv").exists()


def test_download_long_urls_sharing_a_prefix_get_their_own_bytes(suite, context, guest, http_root):
    """Downloads are cached by URL: two long URLs that differ only at the end must not share an entry."""
    www, base_url = http_root
    deep = www / "/".join(["a-rather-long-folder-name"] * 8)
    deep.mkdir(parents=True)
    (deep / "part-1.csv").write_text("first\n")
    (deep / "part-2.csv").write_text("second\n")
    prefix = f"{base_url}/{deep.relative_to(www).as_posix()}"
    assert len(prefix) > 200
    task = suite(APP, _task([{"type": "download", "parameters": {"files": [
        {"url": f"{prefix}/part-1.csv", "path": str(guest / "p1.csv")},
        {"url": f"{prefix}/part-2.csv", "path": str(guest / "p2.csv")},
    ]}}]))
    run_config(context(task))
    assert (guest / "p1.csv").read_text() == "first\n"
    assert (guest / "p2.csv").read_text() == "second\n"


def test_upload_file(suite, context, guest):
    tid = str(uuid.uuid4())
    blob = os.urandom(300_000)
    task = suite(APP, _task([{"type": "upload_file", "parameters": {"files": [
        {"local_path": "blob.bin", "path": str(guest / "up" / "blob.bin")},
        {"local_path": _rel(tid, "notes.md"), "path": str(guest / "notes.md")},
    ]}}], tid), files={"blob.bin": blob, "notes.md": "# notes\n"})
    run_config(context(task))
    assert (guest / "up" / "blob.bin").read_bytes() == blob
    assert (guest / "notes.md").read_text() == "# notes\n"


# -- open and wallpaper --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def text_handler(xsession, tmp_path_factory):
    """Make a script the session's default application for text/plain; returns the log it appends to."""
    base = tmp_path_factory.mktemp("handler")
    log = base / "opened.log"
    handler = base / "open-text.sh"
    # it shows a window titled with the file's name, as an application does (xmessage, from x11-utils),
    # except for a file named no-window*, which it only logs
    handler.write_text(f"#!/bin/sh\necho \"$1\" >> '{log}'\n"
                       "case \"$(basename \"$1\")\" in no-window*) exit 0;; esac\n"
                       "exec xmessage -title \"$(basename \"$1\")\" \"opened $1\"\n")
    handler.chmod(0o755)
    apps_dir = xsession.home / ".local" / "share" / "applications"
    apps_dir.mkdir(parents=True, exist_ok=True)
    (apps_dir / "setup-live-text.desktop").write_text(
        "[Desktop Entry]\nType=Application\nName=Setup live text opener\n"
        f"Exec={handler} %f\nMimeType=text/plain;\nNoDisplay=true\n")
    config = xsession.home / ".config"
    config.mkdir(exist_ok=True)
    (config / "mimeapps.list").write_text("[Default Applications]\ntext/plain=setup-live-text.desktop\n")
    return log


def test_open_runs_the_default_application_and_returns_once_its_window_shows(suite, context, guest, text_handler,
                                                                              xsession):
    import subprocess

    doc = guest / "report.txt"
    doc.write_text("plain text to open\n")
    task = suite(APP, _task([{"type": "open", "parameters": {"path": str(doc)}}]))
    run_config(context(task))
    assert str(doc) in text_handler.read_text().splitlines()
    windows = subprocess.run(["wmctrl", "-l"], capture_output=True, text=True, env=xsession.env).stdout
    assert "report.txt" in windows  # the first observation after the setup shows the file
    subprocess.run(["wmctrl", "-c", "report.txt"], env=xsession.env)


def _flat_png(client) -> bytes:
    """A screenshot of the live screen's size in one flat colour: a window listed but not drawn yet."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(client.screenshot())) as real:
        size = real.size
    out = io.BytesIO()
    Image.new("RGB", size, (240, 240, 240)).save(out, "PNG")
    return out.getvalue()


def test_open_waits_until_the_window_has_drawn_its_content(suite, context, guest, text_handler, client, xsession,
                                                           caplog):
    """Host-side screenshots that show the window one flat colour (as Calc under emulation, before it draws the
    sheet) hold the step; the real screen, where xmessage has drawn its text, ends it."""
    import logging
    import subprocess

    flat, calls = _flat_png(client), []

    def screenshot():
        calls.append(time.monotonic())
        return flat if len(calls) <= 3 else client.screenshot()

    doc = guest / "slow-draw.txt"
    doc.write_text("drawn late\n")
    ctx = context(suite(APP, _task([{"type": "open", "parameters": {"path": str(doc)}}])))
    ctx.screenshot = screenshot
    with caplog.at_level(logging.INFO, logger="desktop_env.configs.steps"):
        run_config(ctx)
    assert len(calls) == 4 and calls[-1] - calls[0] >= 1.0, calls
    assert any("slow-draw.txt drawn" in r.getMessage() for r in caplog.records), caplog.text
    subprocess.run(["wmctrl", "-c", "slow-draw.txt"], env=xsession.env)


def test_open_starts_the_task_when_the_window_stays_blank(suite, context, guest, text_handler, client, xsession,
                                                          monkeypatch, caplog):
    import logging
    import subprocess

    monkeypatch.setenv("DESKTOP_ENV_TIME_SCALE", "0.02")  # setup.open_render: 120 s -> 2.4 s
    flat = _flat_png(client)
    doc = guest / "never-drawn.txt"
    doc.write_text("never drawn\n")
    ctx = context(suite(APP, _task([{"type": "open", "parameters": {"path": str(doc)}}])))
    ctx.screenshot = lambda: flat
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="desktop_env.configs.steps"):
        run_config(ctx)  # the window exists: the step did what it says, the task starts
    assert 2.0 < time.monotonic() - t0 < 30
    assert any("still one flat colour" in r.getMessage() and "setup.open_render" in r.getMessage()
               for r in caplog.records), caplog.text
    subprocess.run(["wmctrl", "-c", "never-drawn.txt"], env=xsession.env)


def test_window_drawn_tells_a_flat_window_from_a_drawn_one():
    import io

    from PIL import Image, ImageDraw

    from desktop_env.configs.steps import window_drawn

    def png(draw_content: bool) -> bytes:
        img = Image.new("RGB", (1920, 1080), (30, 30, 60))  # the desktop
        d = ImageDraw.Draw(img)
        d.rectangle((0, 20, 1919, 1079), fill=(246, 245, 244))  # the window, not drawn yet
        d.rectangle((0, 20, 1919, 45), fill=(220, 220, 220))  # its title bar
        d.text((900, 25), "SalesRep.xlsx - LibreOffice Calc", fill=(0, 0, 0))
        if draw_content:
            for row in range(90, 1079, 18):  # a sheet's grid
                d.line((0, row, 1919, row), fill=(200, 200, 200))
            for col in range(0, 1919, 80):
                d.line((col, 90, col, 1079), fill=(200, 200, 200))
        out = io.BytesIO()
        img.save(out, "PNG")
        return out.getvalue()

    box = (0, 20, 1920, 1060)
    assert not window_drawn(png(False), box)
    assert window_drawn(png(True), box)
    assert window_drawn(png(False), (5000, 5000, 100, 100)), "a window off the screen is not waited for"


def test_open_fails_when_no_window_shows_the_file(suite, context, guest, text_handler, monkeypatch):
    monkeypatch.setenv("DESKTOP_ENV_TIME_SCALE", "0.02")  # setup.open_window: 420 s -> 8.4 s
    doc = guest / "no-window.txt"
    doc.write_text("opened by a program that shows nothing\n")
    task = suite(APP, _task([{"type": "open", "parameters": {"path": str(doc)}}]))
    t0 = time.monotonic()
    with pytest.raises(SetupError, match="no window showing no-window.txt appeared") as err:
        run_config(context(task))
    assert time.monotonic() - t0 < 60 and "setup.open_window" in str(err.value)
    assert err.value.where == "config[0]"


def test_open_a_missing_file_fails_clearly(suite, context, guest):
    missing = guest / "nowhere.txt"
    task = suite(APP, _task([{"type": "open", "parameters": {"path": str(missing)}}]))
    with pytest.raises(SetupError) as err:
        run_config(context(task))
    assert err.value.where == "config[0]"
    assert "file not found" in str(err.value) and str(missing) in str(err.value)
    assert isinstance(err.value.__cause__, GuestServerError) and err.value.__cause__.status == 404


def test_change_wallpaper_and_read_it_back(suite, context, guest, tmp_path):
    tid = str(uuid.uuid4())
    colour = (200, 30, 110)
    image = tmp_path / "wall.png"
    Image.new("RGB", (40, 30), colour).save(image)
    in_guest = guest / "pictures" / "wall.png"
    task = suite(APP, _task([
        {"type": "copyfile_from_host_to_guest", "parameters": {"src": _rel(tid, "wall.png"), "dest": str(in_guest)}},
        {"type": "change_wallpaper", "parameters": {"path": str(in_guest)}},
    ], tid), files={"wall.png": image.read_bytes()})
    ctx = context(task)
    run_config(ctx)
    local = run_getter(ctx, GetterSpec.from_json({"type": "vm_wallpaper", "dest": "wallpaper/current.png"}))
    assert local == ctx.cache_path("wallpaper/current.png")
    with Image.open(local) as got:
        assert got.size == (40, 30) and got.convert("RGB").getpixel((5, 5)) == colour


# -- failed setups that do not say so (desktop_env/configs/setup_watch.py) -------------------------

#: An init.sh in the public suite's style: it sources conda and activates an environment, silences everything
#: and ends on an echo, so it exits 0 whatever failed.
SILENT_INIT = """#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate dagster
cd /tmp
dagster dev > /dev/null 2>&1 &
sleep 1
echo "init done"
"""


def test_a_silenced_init_script_that_cannot_source_conda_is_a_failed_setup(suite, context, guest):
    tid = str(uuid.uuid4())
    task = suite(APP, _task([{"type": "script_and_execute", "parameters": {
        "src": _rel(tid, "init.sh"), "dest": str(guest / "init.sh")}}], tid), files={"init.sh": SILENT_INIT})
    with pytest.raises(SetupError) as err:
        run_config(context(task))
    message = str(err.value)
    assert err.value.where == "config[0]" and "needs what this VM lacks" in message
    assert "init.sh:2: `source /home/user/anaconda3/etc/profile.d/conda.sh` failed (exit 1)" in message
    assert "`conda activate dagster` was not found" in message


def test_an_init_script_with_harmless_failures_still_sets_up(suite, context, guest):
    tid = str(uuid.uuid4())
    script = "#!/bin/bash\npkill -f no-such-program-running\nfalse\ngrep -q nothing /dev/null || true\n" \
             f"echo ready > {guest / 'ready.txt'}\n"
    task = suite(APP, _task([{"type": "script_and_execute", "parameters": {
        "src": _rel(tid, "init.sh"), "dest": str(guest / "init.sh")}}], tid), files={"init.sh": script})
    run_config(context(task))
    assert (guest / "ready.txt").read_text() == "ready\n"


@pytest.mark.parametrize("command,shell,says", [
    (["bash", "-c", "sleep 1; exit 3"], False, "exited with 3"),
    (["gnome-terminal-not-installed", "--maximize"], False, "was not found during the setup (exit 127)"),
    ("source /no/conda.sh && conda activate jupyter && jupyter lab", True, "exited with 1"),
])
def test_a_launched_program_that_dies_during_the_setup_fails_it(suite, context, command, shell, says):
    task = suite(APP, _task([{"type": "sleep", "parameters": {"seconds": 0}},
                             {"type": "launch", "parameters": {"command": command, "shell": shell}},
                             {"type": "sleep", "parameters": {"seconds": 3}}]))
    with pytest.raises(SetupError, match="during the setup") as err:
        run_config(context(task))
    assert err.value.where == "config[1]" and says in str(err.value)


def test_a_launched_program_that_runs_on_or_hands_over_and_exits_0_is_fine(suite, context, guest):
    marker = guest / "still-running.pid"
    task = suite(APP, _task([
        {"type": "launch", "parameters": {"command": ["bash", "-c", f"echo $$ > {marker}; exec sleep 300"]}},
        {"type": "launch", "parameters": {"command": ["true"]}},
        {"type": "sleep", "parameters": {"seconds": 2}}]))
    try:
        run_config(context(task))
    finally:
        if marker.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(marker.read_text().strip() or 0), signal.SIGKILL)
