"""Seeing setups fail that do not say so: init scripts that silence themselves and exit 0, launched programs that die.

The public suites' init scripts send their output to /dev/null and end on an ``echo``: their exit status is 0
whatever failed before. Two signs are read instead (docs/tasks.md, "Failed setups"):

- a script run by ``script_and_execute`` runs with ``BASH_ENV`` pointing at an ERR trap that records each
  command that was not found or not executable (exit 126 or 127) and each ``source``/``.`` that failed: the
  start state the task expects was not built (a missing ``conda``, ``conda.sh``, ``gnome-terminal``);
- a program started by ``launch`` runs under a small wrapper that writes its exit status when it ends; one
  that exited with an error (1-127) before the setup ended has died. An exit of 0 is a program handing its
  work to an instance already running, and an exit by a signal (above 128) is a setup stopping it on purpose.
"""
from __future__ import annotations

import logging
import shlex
import uuid
from dataclasses import dataclass

from desktop_env.session import SetupContext, SetupError

logger = logging.getLogger(__name__)

#: Guest folder of the trap, the launch wrappers and what they record.
WATCH_DIR = "/tmp/desktop-env-setup"
#: The ERR trap every init script runs with (through BASH_ENV); it appends ``exit<TAB>where<TAB>command``.
ERR_TRAP = r"""# desktop-env: record what a setup script needs and lacks (desktop_env/configs/setup_watch.py)
set -E
__desktop_env_setup_err() {
    case "$1:$2" in
        126:*|127:*|*:"source "*|*:". "*)
            printf '%s\t%s\t%s\n' "$1" "${BASH_SOURCE[1]:-?}:${BASH_LINENO[0]:-?}" "$2" >> "$DESKTOP_ENV_SETUP_ERRORS" ;;
    esac
}
trap '__desktop_env_setup_err "$?" "$BASH_COMMAND"' ERR
"""
_EXIT_TEXT = {126: "is not executable", 127: "was not found"}


@dataclass
class Launched:
    """A program a ``launch`` step started: where in the task, what, and the guest file of its exit status."""

    where: str
    command: str
    exit_file: str


def _upload(ctx: SetupContext, text: str, name: str) -> str:
    path = f"{WATCH_DIR}/{name}"
    ctx.controller.upload_file(text.encode(), path)
    return path


def watched_script(ctx: SetupContext, command):
    """``command`` (an argv list or a shell string running a script) wrapped to run with the ERR trap; returns
    ``(command, errors file)``: read the file with :func:`script_failures` after the command ran."""
    trap = _upload(ctx, ERR_TRAP, "err-trap.sh")
    errors = f"{WATCH_DIR}/errors-{uuid.uuid4().hex[:12]}.tsv"
    env = {"BASH_ENV": trap, "DESKTOP_ENV_SETUP_ERRORS": errors}
    if isinstance(command, str):
        return "".join(f"export {k}={shlex.quote(v)}; " for k, v in env.items()) + command, errors
    return ["env", *(f"{k}={v}" for k, v in env.items()), *command], errors


def script_failures(ctx: SetupContext, errors: str) -> list[str]:
    """What the ERR trap recorded in ``errors``: one line per failed command, e.g. ``init.sh:3: `conda activate
    dagster` was not found (exit 127)``."""
    reply = ctx.controller.execute(["cat", errors])
    out = []
    for line in (reply.get("output") or "").splitlines() if reply.get("returncode") == 0 else []:
        code, where, command = (line.split("\t", 2) + ["", ""])[:3]
        what = _EXIT_TEXT.get(int(code), f"failed (exit {code})") if code.isdigit() else f"failed ({code})"
        out.append(f"{where}: `{' '.join(command.split())[:200]}` {what}")
    return out


def launch_watched(ctx: SetupContext, command, shell: bool, where: str) -> None:
    """Start ``command`` through a wrapper script (the wrapper's own command line names no program, so a
    ``pgrep -f`` of the program finds only the program) that writes its exit status when it ends."""
    key = uuid.uuid4().hex[:12]
    exit_file = f"{WATCH_DIR}/launch-{key}.exit"
    line = command if isinstance(command, str) else shlex.join(command)
    wrapper = _upload(ctx, f"{line}\necho $? > {exit_file}\n", f"launch-{key}.sh")
    ctx.controller.launch(["bash", wrapper])
    ctx.state.setdefault("launched", []).append(Launched(where, line, exit_file))


def check_launched(ctx: SetupContext) -> None:
    """Fail the setup when a program it launched has exited with an error (1-127) since.

    Raises:
        SetupError: naming the launch step, its command and its exit status.
    """
    launched: list[Launched] = ctx.state.get("launched", [])
    if not launched:
        return
    files = " ".join(shlex.quote(x.exit_file) for x in launched)
    reply = ctx.controller.execute(f"for f in {files}; do [ -f \"$f\" ] && printf '%s %s\\n' \"$f\" \"$(cat \"$f\")\"; "
                                   "done; true", shell=True)
    ended = dict(line.split(" ", 1) for line in (reply.get("output") or "").splitlines() if " " in line)
    for item in launched:
        code = ended.get(item.exit_file, "").strip()
        if code.isdigit() and 0 < int(code) <= 127:
            err = SetupError(f"the program it launched ({item.command[:200]!r}) "
                             f"{_EXIT_TEXT.get(int(code), f'exited with {code}')} during the setup"
                             + (f" (exit {code})" if int(code) in _EXIT_TEXT else ""), step="launch")
            err.where = item.where
            raise err
        logger.debug("launched %r: %s", item.command, f"exited {code}" if code else "running")
