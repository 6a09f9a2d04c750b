"""Setup steps that run against the VM with no cloud account: copy, run, launch, open, download, windows."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shlex
import time
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

from desktop_env.session import SetupContext, SetupError, execute_checked
from desktop_env.limits import LIMITS, execute_limited, limit
from desktop_env.registry import SETUP_STEPS
from desktop_env.tasks import is_remote_url, strip_file_scheme

logger = logging.getLogger(__name__)

UNTIL_POLL_S = 2.0  # seconds between the tries of ``execute``'s ``until`` (the window is setup.until)


def _mkdir_parent(ctx: SetupContext, guest_path: str, step: str) -> None:
    parent = str(PurePosixPath(guest_path).parent)
    if parent not in ("", ".", "/"):
        execute_checked(ctx, ["mkdir", "-p", parent], step=step)


@SETUP_STEPS.register(host_paths=("src",))
def copyfile_from_host_to_guest(ctx: SetupContext, src: str, dest: str, json_encode: bool = False) -> None:
    """Copy a task file into the VM.

    Args:
        src: host path, relative to the suite root or the task folder.
        dest: absolute path in the VM (parent folders are created).
        json_encode: the file is JSON; check it decodes and upload it re-encoded (UTF-8, compact).
    """
    path = ctx.resolve(src)
    data = path.read_bytes()
    if json_encode:
        try:
            data = json.dumps(json.loads(data.decode("utf-8")), ensure_ascii=False).encode("utf-8")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SetupError(f"{path} is not valid JSON but json_encode is set: {exc}",
                             step="copyfile_from_host_to_guest") from exc
    _mkdir_parent(ctx, dest, "copyfile_from_host_to_guest")
    ctx.controller.upload_file(data, dest)
    logger.info("copied %s -> VM:%s (%d bytes)", path, dest, len(data))


def script_command(dest: str, shell: bool):
    """The command that runs the bash script ``dest`` in the VM from its own folder.

    With ``shell`` it is one ``/bin/sh`` string; without, an argv list that passes the
    folder and the script to bash as positional arguments, so nothing in them is
    interpreted by a shell and the script still starts in its folder.
    """
    folder = str(PurePosixPath(dest).parent) or "."
    if shell:
        return f"cd {shlex.quote(folder)} && bash {shlex.quote(dest)}"
    return ["bash", "-c", 'cd -- "$1" && exec bash "$2"', "bash", folder, dest]


@SETUP_STEPS.register(host_paths=("src",))
def script_and_execute(ctx: SetupContext, src: str, dest: str, shell: bool = True,
                       timeout_s: float | None = None) -> dict:
    """Copy a script (usually ``init.sh``) into the VM and run it with bash, waiting for it.

    A non-zero exit is logged with the script's output and does not stop setup, as in the
    suites this format comes from (their init scripts often end on a harmless failure). A command
    the script runs that is not found or not executable, or a file it sources that cannot be read,
    fails the setup even when the script exits 0 (:mod:`desktop_env.configs.setup_watch`).

    Returns:
        the server's reply ``{status, output, error, returncode}``.

    Raises:
        SetupError: the script ran a command it could not find or run, or sourced a missing file.
    """
    from desktop_env.configs.setup_watch import script_failures, watched_script

    copyfile_from_host_to_guest(ctx, src, dest)
    command, errors = watched_script(ctx, script_command(dest, shell))
    reply = execute_limited(ctx.controller, command, shell=shell, name="setup.command",
                            base_s=timeout_s, what=f"script_and_execute {src}")
    code = reply.get("returncode")
    if code not in (0, None):
        logger.warning("script %s exited with %s; stderr tail: %s", dest, code, (reply.get("error") or "")[-1000:])
    failed = script_failures(ctx, errors)
    if failed:  # the script went on and may have exited 0, but the start state it builds is not there
        raise SetupError(f"{src} needs what this VM lacks: {'; '.join(failed[:5])}"
                         + (f" (and {len(failed) - 5} more)" if len(failed) > 5 else ""), step="script_and_execute")
    return reply


@SETUP_STEPS.register()
def launch(ctx: SetupContext, command, shell: bool = False) -> None:
    """Start a program in the VM and do not wait for it. If it exits with an error before the task's setup
    has ended (a program that is not installed, a start command that dies), the setup fails
    (:func:`desktop_env.configs.setup_watch.check_launched`)."""
    from desktop_env.configs.setup_watch import launch_watched

    _check_command(command, "launch")
    launch_watched(ctx, command, shell, ctx.state.get("step_where", "config"))


#: bash, run in the guest: exit 0 once a window whose title holds $1 or $2 (the file's name without its
#: extension: some applications drop it) is listed, 1 with the window list on stderr after $3 seconds.
_WINDOW_WAIT = r"""
deadline=$((SECONDS + $3))
while [ "$SECONDS" -lt "$deadline" ]; do
    wmctrl -l 2>/dev/null | grep -qF -e "$1" -e "$2" && exit 0
    sleep 0.5
done
echo "windows now open:" >&2
wmctrl -l >&2
exit 1
"""


@SETUP_STEPS.register()
def open(ctx: SetupContext, path: str) -> None:  # noqa: A001 - the JSON name is "open"
    """Open a file in the VM with its default application, and return once a window showing it is listed
    (its title holds the file's name, or that name without its extension), within the time limit
    ``setup.open_window``: an agent's first observation then shows the file, as in the suites' own VMs.

    Raises:
        SetupError: no such window appeared in time (the message lists the windows that did).
    """
    ctx.controller.open_file(path)
    name = PurePosixPath(path).name
    stem = PurePosixPath(name).stem or name
    seconds = limit("setup.open_window")
    # the guest's own kill comes 30 s after the script's deadline, so the script reports the windows it saw
    reply = execute_limited(ctx.controller, ["bash", "-c", _WINDOW_WAIT, "bash", name, stem, str(int(seconds))],
                            name="setup.open_window", base_s=LIMITS["setup.open_window"][0] + 30,
                            what=f"open {path}: its window showing")
    if reply.get("returncode") != 0:
        raise SetupError(f"no window showing {name} appeared within {seconds:g} s after opening {path} (time limit "
                         f"setup.open_window); {' '.join((reply.get('error') or '').split())[-600:]}", step="open")
    logger.info("open: %s shows its window", path)
    _wait_drawn(ctx, name, stem, path)


#: A window counts as drawn when no single colour covers more than this share of it (below its top strip).
_BLANK_SHARE = 0.97


def _window_box(ctx: SetupContext, name: str, stem: str) -> tuple[int, int, int, int] | None:
    """(x, y, width, height) of the first window whose title holds ``name`` or ``stem`` (``wmctrl -lG``)."""
    reply = ctx.controller.execute(["wmctrl", "-lG"])
    for line in (reply.get("output") or "").splitlines():
        fields = line.split(None, 7)
        if len(fields) == 8 and (name in fields[7] or stem in fields[7]):
            try:
                x, y, width, height = (int(v) for v in fields[2:6])
            except ValueError:
                return None
            return x, y, width, height
    return None


def window_drawn(png: bytes, box: tuple[int, int, int, int]) -> bool:
    """Whether the window at ``box`` in the screenshot ``png`` shows content: below its top strip (title bar,
    frame: 40 px or a quarter of it), no single colour covers more than 97% of it. An application that has
    listed its window but not drawn it yet (LibreOffice loading a document under emulation) shows one flat
    colour there."""
    import io

    from PIL import Image

    x, y, width, height = box
    with Image.open(io.BytesIO(png)) as img:
        left, top = max(x, 0), max(y, 0) + min(40, height // 4)
        right, bottom = min(x + width, img.width), min(y + height, img.height)
        if right - left < 8 or bottom - top < 8:
            return True  # nothing to judge: off screen or tiny
        region = img.convert("RGB").crop((left, top, right, bottom))
        thumb = region.resize((max(1, region.width // 4), max(1, region.height // 4)), Image.NEAREST)
        colours = thumb.getcolors(thumb.width * thumb.height) or []
        return max(colours)[0] <= _BLANK_SHARE * thumb.width * thumb.height


def _wait_drawn(ctx: SetupContext, name: str, stem: str, path: str) -> None:
    """Wait (up to ``setup.open_render``) until the window ``open`` found has drawn its content, judged on
    host-side screenshots; returns at once when the provider takes none. A window still blank then is logged
    and the task starts (the window exists: the step did what it says)."""
    if ctx.screenshot is None:
        return
    box = _window_box(ctx, name, stem)
    if box is None:
        return
    started = time.monotonic()
    deadline = started + limit("setup.open_render")
    while True:
        png = ctx.screenshot()
        if not png:
            return
        if window_drawn(png, box):
            logger.info("open: %s drawn %.1f s after its window showed", path, time.monotonic() - started)
            return
        if time.monotonic() >= deadline:
            logger.warning("open: %s's window was still one flat colour %.0f s after it showed (time limit "
                           "setup.open_render); the task starts anyway", path, time.monotonic() - started)
            return
        time.sleep(0.5)


def _check_command(command, step: str) -> None:
    if isinstance(command, str):
        if not command.strip():
            raise SetupError("empty command", step=step)
    elif not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
        raise SetupError(f"command must be a string or a non-empty list of strings, got {command!r}", step=step)


def _until_met(reply: dict, until: dict) -> bool:
    if "returncode" in until and reply.get("returncode") != until["returncode"]:
        return False
    if "stdout" in until and str(until["stdout"]) not in (reply.get("output") or ""):
        return False
    if "stderr" in until and str(until["stderr"]) not in (reply.get("error") or ""):
        return False
    return True


@SETUP_STEPS.register(aliases=("command",))
def execute(ctx: SetupContext, command, shell: bool = False, stdout: str = "", stderr: str = "",
            until: dict | None = None, timeout_s: float | None = None) -> dict:
    """Run a command in the VM and wait for it.

    Args:
        command: argv list or a shell string.
        shell: run through the shell.
        stdout / stderr: cache file names (under the session's cache folder) to save the output to.
        until: retry (every few seconds, for the time limit ``setup.until``) until the reply
            matches ``{"returncode": int, "stdout": substring, "stderr": substring}``.
        timeout_s: limit for one run (default: the time limit ``setup.command``; scaled either way).

    Returns:
        the last reply ``{status, output, error, returncode}``.

    Raises:
        SetupError: ``until`` was never met by the deadline.
    """
    _check_command(command, "execute")
    window_s = limit("setup.until")
    deadline = time.monotonic() + window_s
    while True:
        reply = execute_limited(ctx.controller, command, shell=shell, name="setup.command", base_s=timeout_s,
                                what=f"execute {command!r}"[:300])
        if not until or _until_met(reply, until):
            break
        if time.monotonic() > deadline:
            raise SetupError(f"command {command!r} never met {until!r} within the time limit setup.until "
                             f"({window_s:g} s); last reply: {reply!r}", step="execute")
        time.sleep(UNTIL_POLL_S)
    if reply.get("returncode") not in (0, None) and not until:
        # the suites' setups often run commands that may fail harmlessly (pkill of nothing), so this
        # is not an error; but a step that silently did nothing is the first thing to look for
        logger.info("setup execute %s exited %s: %s", str(command)[:200], reply.get("returncode"),
                    (reply.get("error") or reply.get("output") or "").strip()[-300:])
    if stdout:
        ctx.cache_path(stdout).write_text(reply.get("output") or "", encoding="utf-8")
    if stderr:
        ctx.cache_path(stderr).write_text(reply.get("error") or "", encoding="utf-8")
    return reply


@SETUP_STEPS.register()
def sleep(ctx: SetupContext, seconds: float) -> None:
    """Wait a fixed time, as the task asks (a task-level pause, not a readiness wait)."""
    if not isinstance(seconds, (int, float)) or seconds < 0:
        raise SetupError(f"seconds must be a non-negative number, got {seconds!r}", step="sleep")
    time.sleep(seconds)


@SETUP_STEPS.register()
def activate_window(ctx: SetupContext, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    """Raise and focus a window by title (or class)."""
    ctx.controller.activate_window(window_name, strict=strict, by_class=by_class)


@SETUP_STEPS.register()
def close_window(ctx: SetupContext, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    """Close a window by title (or class)."""
    ctx.controller.close_window(window_name, strict=strict, by_class=by_class)


@SETUP_STEPS.register()
def change_wallpaper(ctx: SetupContext, path: str) -> None:
    """Set the desktop wallpaper to an image already in the VM."""
    ctx.controller.change_wallpaper(path)


# --------------------------------------------------------------------------- host-side fetching
def fetch_bytes(url: str, ctx: SetupContext | None = None, task=None, timeout_s: float | None = None) -> bytes:
    """Fetch ``url`` on the host: http(s)/ftp, ``file:///abs``, or a path the task names.

    Remote downloads are cached under ``ctx.cache_dir/downloads`` when a context is given; with a
    download mirror in the context they are served from it instead, and nothing is downloaded.

    Args:
        url: the URL or path.
        ctx: the session context (for the cache and path resolution), or None.
        task: the task, to resolve relative paths when there is no context.
        timeout_s: socket timeout (default: the time limit ``setup.download``).

    Raises:
        SetupError: the fetch failed (HTTP error, unreachable host, ...); a
            ``desktop_env.configs.mirror.MirrorError`` when the mirror lacks the URL or its file changed.
        desktop_env.tasks.TaskFileNotFound: a relative path resolves nowhere.
    """
    if is_remote_url(url) and ctx is not None and ctx.download_mirror is not None:
        return ctx.download_mirror.read(url)
    if is_remote_url(url):
        cached = None
        if ctx is not None:
            # a readable prefix plus a digest of the whole URL: long URLs sharing their first
            # characters (one folder, several files) must not share a cache entry
            digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
            name = f"{urllib.parse.quote(url, safe='')[:150]}-{digest}"
            cached = ctx.cache_path(f"downloads/{name}")
            if cached.is_file() and cached.stat().st_size > 0:
                return cached.read_bytes()
        try:
            with urllib.request.urlopen(url, timeout=timeout_s or limit("setup.download")) as resp:  # noqa: S310 - task-given URL
                data = resp.read()
        except OSError as exc:  # URLError, HTTPError, timeouts
            raise SetupError(f"could not fetch {url}: {exc}", step="download") from exc
        if cached is not None:
            # Written aside and renamed: an interrupted write never leaves a truncated cache entry.
            partial = cached.with_name(cached.name + ".partial")
            partial.write_bytes(data)
            os.replace(partial, cached)
        return data
    task = task if task is not None else (ctx.task if ctx is not None else None)
    plain = strip_file_scheme(url)
    if task is None:
        path = Path(plain)
    else:
        path = task.resolve_path(plain, suite_root=None if ctx is None else ctx.suite_root)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SetupError(f"could not read {path}: {exc}", step="download") from exc


def _check_files(files, keys: tuple[str, str], step: str) -> None:
    if not isinstance(files, list) or not files:
        raise SetupError("files must be a non-empty list", step=step)
    for i, f in enumerate(files):
        if not isinstance(f, dict) or any(not isinstance(f.get(k), str) or not f.get(k) for k in keys):
            raise SetupError(f"files[{i}] must be an object with {keys[0]!r} and {keys[1]!r}, got {f!r}", step=step)


@SETUP_STEPS.register(host_paths=("files[].url",))
def download(ctx: SetupContext, files: list) -> None:
    """Fetch files on the host and put them in the VM.

    Args:
        files: ``[{"url": http(s) URL | file:///path | task-relative path, "path": VM path}]``.
    """
    _check_files(files, ("url", "path"), "download")
    for f in files:
        data = fetch_bytes(f["url"], ctx)
        _mkdir_parent(ctx, f["path"], "download")
        ctx.controller.upload_file(data, f["path"])
        logger.info("downloaded %s -> VM:%s (%d bytes)", f["url"], f["path"], len(data))


@SETUP_STEPS.register(host_paths=("files[].local_path",))
def upload_file(ctx: SetupContext, files: list) -> None:
    """Copy host files into the VM.

    Args:
        files: ``[{"local_path": host path (task-relative allowed), "path": VM path}]``.
    """
    _check_files(files, ("local_path", "path"), "upload_file")
    for f in files:
        src = ctx.resolve(f["local_path"])
        _mkdir_parent(ctx, f["path"], "upload_file")
        ctx.controller.upload_file(src.read_bytes(), f["path"])
