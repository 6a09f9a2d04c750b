"""The office profile's `code` (VS Code's command on code-server in a Chromium app window), run on the
host under Xvfb with the code-server the office image installs (the node app in the cache; the test
skips when no office image was built here)."""
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from desktop_env import paths

CODE = Path(__file__).resolve().parents[2] / "desktop_env/image/profiles/office/files/usr/local/bin/code"


def _code_server_app() -> Path | None:
    root = paths.cache_dir() / "node-apps"
    apps = sorted(root.glob("code-server-*/.complete")) if root.is_dir() else []
    return apps[-1].parent if apps else None


APP = _code_server_app()
pytestmark = [
    pytest.mark.skipif(APP is None, reason="no code-server node app in the cache: build the office image first "
                                           "(desktop-env image build --profile office)"),
    pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xwininfo") and os.path.exists(
        "/usr/lib/chromium/chromium")), reason="needs Xvfb, xwininfo and Chromium"),
]


@pytest.fixture
def desktop(tmp_path):
    """An X display, a home, and launchers for code-server and Chromium (as root Chromium needs --no-sandbox)."""
    display = ":" + str(90 + os.getpid() % 9)
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    home = tmp_path / "home"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "code-server").write_text(
        f'#!/bin/sh\nexec {APP}/node/bin/node {APP}/node_modules/code-server/out/node/entry.js "$@"\n')
    (bin_dir / "chromium").write_text('#!/bin/sh\nexec /usr/lib/chromium/chromium --no-sandbox "$@"\n')
    for launcher in bin_dir.iterdir():
        launcher.chmod(0o755)
    port = str(14000 + os.getpid() % 1000)
    env = {**os.environ, "HOME": str(home), "DISPLAY": display, "DESKTOP_ENV_CODE_PORT": port,
           "DESKTOP_ENV_CODE_SERVER": str(bin_dir / "code-server"), "DESKTOP_ENV_CODE_CHROMIUM": str(bin_dir / "chromium"),
           "DESKTOP_ENV_CODE_REUSE_WAIT": "240"}
    project = home / "projects/demo"
    project.mkdir(parents=True)
    (project / "assets.py").write_text("print('assets')\n")
    (project / "README.md").write_text("# demo\n")
    yield env, project
    subprocess.run(["pkill", "-f", f"--user-data-dir={home}/.config/Code"], check=False)
    subprocess.run(["pkill", "-f", f"--bind-addr 127.0.0.1:{port}"], check=False)
    xvfb.terminate()
    xvfb.wait(timeout=30)


def editor_windows(env) -> list[str]:
    """Titles of the editor's mapped top-level windows."""
    tree = subprocess.run(["xwininfo", "-root", "-children"], env=env, capture_output=True, text=True).stdout
    return re.findall(r'"([^"]*Visual Studio Code)":', tree)


def wait_for(predicate, seconds: float):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(2)
    return predicate()


def test_files_after_a_folder_open_as_tabs_in_its_window_not_new_windows(desktop):
    """The suite's setups run `code PROJECT`, then `code PROJECT/file` once per file, at once. VS Code adds
    the files to the folder's window; a window per call is a workbench and an extension host per call, which
    a small guest under emulation cannot load in time. The files come before the window has loaded: they
    are queued and `code` returns, and the window takes them in order (the last is the active tab)."""
    env, project = desktop
    run = lambda *args: subprocess.run([str(CODE), *map(str, args)], env=env, capture_output=True, text=True,
                                       timeout=400)
    for path in (project, project / "assets.py", project / "README.md"):
        opened = run(path)
        assert opened.returncode == 0, opened.stderr
    titles = wait_for(lambda: [t for t in editor_windows(env) if t.startswith("README.md")], 300)
    assert titles, f"README.md is not the open editor's title: {editor_windows(env)}"
    time.sleep(5)  # a second window, if one were opened, shows by now
    assert len(editor_windows(env)) == 1, editor_windows(env)
    data = Path(env["HOME"]) / ".config/Code"
    assert wait_for(lambda: not (data / "code-open.queue").exists(), 30), "files are still queued"
    log = data / "code-open.log"
    assert not log.exists() or "new window" not in log.read_text(), log.read_text()


def test_a_file_with_no_window_open_gets_a_window_on_its_folder(desktop):
    env, project = desktop
    opened = subprocess.run([str(CODE), str(project / "assets.py")], env=env, capture_output=True, text=True,
                            timeout=400)
    assert opened.returncode == 0, opened.stderr
    titles = wait_for(lambda: [t for t in editor_windows(env) if t.startswith("assets.py")], 240)
    assert titles, f"assets.py is not open: {editor_windows(env)}"
