"""Endpoints that run things: commands, launches, pyautogui/Python code, scripts, the clock."""
from __future__ import annotations

import logging
import os
import time

from flask import Blueprint, jsonify

from . import procs
from .errors import ApiError, BadRequest, Timeout
from .webutil import get_bool, get_number, get_str, params, state

logger = logging.getLogger(__name__)

bp = Blueprint("exec", __name__)


def _executor_reply(code: str, mode: str, timeout_s: float) -> dict:
    result = state().executor.run(code, mode=mode, timeout_s=timeout_s)
    body = {"output": result.output, "error": result.error, "returncode": result.returncode,
            "executor_pid": result.pid}
    if result.timed_out:
        raise Timeout(f"the code ran longer than {timeout_s:g} s; the executor was restarted",
                      **body)
    if result.crashed:
        raise ApiError(f"the code ended the executor process (status {result.returncode}); "
                       "it will be restarted on the next call", 500, **body)
    return body


@bp.route("/execute", methods=["POST"])
@bp.route("/setup/execute", methods=["POST"])
def execute():
    """Run a command and wait: {command, shell?, timeout?} -> {status, output, error, returncode}.

    ``python -c CODE`` commands whose code imports pyautogui run in the persistent executor.
    """
    data = params()
    shell = get_bool(data, "shell", False)
    if "command" not in data:
        raise BadRequest("missing field 'command'")
    cfg = state().config
    timeout_s = get_number(data, "timeout", None)
    code = procs.pyautogui_code(data["command"], shell)
    if code is not None:
        body = _executor_reply(code, "python", timeout_s or cfg.pyautogui_timeout_s)
        return jsonify(status="success", **body)
    try:
        command = procs.normalize_command(data["command"], shell)
    except ValueError as exc:
        raise BadRequest(f"bad command: {exc}") from None
    timeout_s = timeout_s or cfg.command_timeout_s
    try:
        result = procs.run_command(command, shell=shell, timeout_s=timeout_s, env=cfg.child_environment())
    except OSError as exc:
        raise BadRequest(f"cannot run {command!r}: {exc}", output="", error=str(exc), returncode=-1) from None
    body = {"output": result.output, "error": result.error, "returncode": result.returncode}
    if result.timed_out:
        raise Timeout(f"the command ran longer than {timeout_s:g} s and was killed", **body)
    return jsonify(status="success", **body)


@bp.route("/setup/launch", methods=["POST"])
def launch():
    """Start a program without waiting: {command, shell?} -> {status, message, pid}."""
    data = params()
    shell = get_bool(data, "shell", False)
    if "command" not in data:
        raise BadRequest("missing field 'command'")
    try:
        command = procs.normalize_command(data["command"], shell)
    except ValueError as exc:
        raise BadRequest(f"bad command: {exc}") from None
    try:
        pid = procs.launch(command, shell=shell, env=state().config.child_environment(),
                           cgroup=state().launch_cgroup)
    except OSError as exc:
        raise BadRequest(f"cannot launch {command!r}: {exc}") from None
    shown = command if isinstance(command, str) else " ".join(command)
    return jsonify(status="success", message=f"{shown} launched successfully", pid=pid)


@bp.route("/pyautogui", methods=["POST"])
def pyautogui():
    """Run pyautogui code in the persistent executor: {code, timeout_s?} -> {status, output, error, returncode}.

    ``pyautogui`` and ``time`` are already bound in the code's (fresh) globals.
    """
    data = params()
    code = get_str(data, "code")
    timeout_s = get_number(data, "timeout_s", None) or get_number(data, "timeout", None)
    body = _executor_reply(code, "pyautogui", timeout_s or state().config.pyautogui_timeout_s)
    return jsonify(status="success", **body)


@bp.route("/run_python", methods=["POST"])
def run_python():
    """Run Python code in the executor with fresh globals: {code, timeout?} -> {status, output, error, returncode}.

    ``status`` is "error" when the code raised or exited non-zero (HTTP 200 still:
    the server did its job); ``message`` holds output and error together and
    ``return_code`` repeats ``returncode``, as older clients read them.
    """
    data = params()
    code = get_str(data, "code")
    timeout_s = get_number(data, "timeout", None) or get_number(data, "timeout_s", None)
    body = _executor_reply(code, "python", timeout_s or state().config.pyautogui_timeout_s)
    message = body["output"] + (("\n" if body["output"] else "") + body["error"] if body["error"] else "")
    return jsonify(status="success" if body["returncode"] == 0 else "error", message=message,
                   return_code=body["returncode"], **body)


@bp.route("/run_bash_script", methods=["POST"])
def run_bash_script():
    """Run a bash script: {script, timeout?, working_dir?} -> {status, output, error, returncode}.

    stdout and stderr arrive interleaved in ``output`` (``error`` is empty), as the
    original server did; ``status`` is "error" for a non-zero exit.
    """
    data = params()
    script = get_str(data, "script")
    cfg = state().config
    timeout_s = get_number(data, "timeout", cfg.command_timeout_s)
    working_dir = get_str(data, "working_dir", required=False)
    if working_dir is not None:
        working_dir = os.path.expanduser(working_dir)
        if not os.path.isdir(working_dir):
            raise BadRequest(f"working directory does not exist: {working_dir}", output="", error="",
                             returncode=-1)
    result = procs.run_command(["/bin/bash", "-c", script], timeout_s=timeout_s, cwd=working_dir,
                               env=cfg.child_environment(), merge_stderr=True)
    body = {"output": result.output, "error": "", "returncode": result.returncode}
    if result.timed_out:
        raise Timeout(f"the script ran longer than {timeout_s:g} s and was killed", **body)
    return jsonify(status="success" if result.returncode == 0 else "error", **body)


@bp.route("/setup/set_clock", methods=["POST"])
def set_clock():
    """Set the guest clock: {epoch} -> {status, returncode, output, error, method}.

    With ``clock_settime`` the server sets the clock itself (``method: "settime"``: a system
    call, where the ``sudo`` of ``clock_command`` took 0.5-1.5 s of each restore under
    emulation); otherwise, or when that is refused, it runs the configured ``clock_command``
    with the epoch seconds appended (``method: "command"``). The host calls this after each
    snapshot restore, since a restored guest's clock is stale.
    """
    data = params()
    epoch = get_number(data, "epoch")
    if epoch is None:
        raise BadRequest("missing field 'epoch' (seconds since 1970, a number)")
    cfg = state().config
    if cfg.clock_settime:
        try:
            time.clock_settime(time.CLOCK_REALTIME, epoch)
        except OSError as exc:
            logger.warning("setting the clock in the server was refused (%s): running %r instead", exc,
                           cfg.clock_command)
        else:
            logger.info("clock set to %.3f", epoch)
            return jsonify(status="success", returncode=0, output="", error="", method="settime")
    command = list(cfg.clock_command) + [f"{epoch:.6f}"]
    try:
        result = procs.run_command(command, timeout_s=30, env=cfg.child_environment())
    except OSError as exc:
        raise ApiError(f"cannot run clock command {command!r}: {exc}", 500) from None
    body = {"returncode": result.returncode, "output": result.output, "error": result.error}
    if result.timed_out or result.returncode != 0:
        raise ApiError(f"clock command {command!r} failed (status {result.returncode}): "
                       f"{result.error.strip()[-500:]}", 500, **body)
    logger.info("clock set to %.3f", epoch)
    return jsonify(status="success", **body, method="command")
