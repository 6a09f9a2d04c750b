"""Named time limits for setup steps, reference solutions and evaluators, all scaled by one setting.

Every wait on the guest that can take long under emulation has a name here and a default
sized for a busy 2-core host running two emulated VMs. On a slower host, one setting
stretches them all: ``DESKTOP_ENV_TIME_SCALE`` (``run.py --time_scale`` and
``desktop-env tasks verify --time_scale`` set it). When a limit expires the error names it,
its value and the setting that raises it.
"""
from __future__ import annotations

import logging
import os

from desktop_env.errors import DesktopEnvError

logger = logging.getLogger(__name__)

#: Environment variable holding the factor every limit is multiplied by (default 1).
SCALE_ENV = "DESKTOP_ENV_TIME_SCALE"

#: name -> (default seconds, what it bounds)
LIMITS: dict[str, tuple[float, str]] = {
    "setup.command": (600.0, "one execute/command/script_and_execute step (a task's own timeout_s is scaled too)"),
    "setup.until": (300.0, "how long execute keeps retrying a command until its `until` condition holds"),
    "setup.download": (300.0, "one download the host fetches for a task"),
    "setup.chromium": (300.0, "Chromium's remote-debugging port answering after google_chrome_browser starts it"),
    "setup.cdp_connect": (180.0, "Playwright connecting to the guest's Chromium over CDP"),
    "setup.service_start": (600.0, "a web UI a setup step opens answering at all (connections refused: its tool still "
                                   "starting; Dagster takes 70-400 s under emulation beside a suite's editor windows)"),
    "setup.page_load": (300.0, "a web UI's page loading in the guest's Chromium, once it answers (until its load "
                               "event)"),
    "setup.open_window": (420.0, "a file opened by the open step showing its window (LibreOffice needs minutes "
                                 "under load)"),
    "setup.open_render": (120.0, "the window the open step showed drawing its content (not one flat colour, seen "
                          "from the host); a window still blank then is logged and the task starts"),
    "setup.page_render": (300.0, "the pages a setup step opened in Chromium showing their content (text, steady)"),
    "oracle.command": (1200.0, "one shell command of a reference solution"),
    "oracle.locate": (180.0, "a GUI step of a reference solution finding its target (its own timeout_s is scaled too)"),
    "oracle.wait": (300.0, "a `wait` GUI step of a reference solution (its own timeout_s is scaled too)"),
    # 45 s: the Demographic Profile pair's 140 GUI steps (26eb0940/30e3e107) took 26 s each on average (3624 s) with
    # two VMs on two cores under TCG (up to 140 s while the pivot layout dialog is open: the tree has 1100+
    # elements); run.py's 1800 s cut their oracles off at steps 83 and 86
    "verify.step": (45.0, "each step of a reference solution, in the time `tasks verify` gives an attempt when "
                          "--task_timeout is not given (600 s plus this per step of the longest solution, if that "
                          "is more than run.py's 1800 s)"),
    "oracle.drag": (60.0, "a page drag of a reference solution waiting for the page to start the drag, then "
                          "for the drop target to see it (HTML5 drag and drop; each, then it goes on regardless)"),
    "action.code": (300.0, "one pyautogui action (code run in the guest's executor)"),
    "action.typing": (120.0, "typing: this long plus action.typing_per_char for each character"),
    "action.typing_per_char": (0.6, "typing: the time allowed per character (typing it, and the application "
                                    "reading it), on top of action.typing"),
    # 1200 s: the public suite's dbt-test grader (49f981ee/bbaa03ef) runs `dbt test` eleven times, a minute each
    # under emulation; at 600 s its oracle ended in evaluator_error
    "evaluator.command": (1200.0, "one command or script an evaluator runs in the guest (vm_script_output, ...)"),
    "evaluator.cdp": (180.0, "Chromium's DevTools endpoint answering an evaluator's getter (listing the open tabs, "
                             "or showing Chromium runs before a page getter opens its tab; a refused connection "
                             "is read at once as no browser)"),
    "vm.exit": (5.0, "a VM whose in-VM server stopped answering being seen gone: a killed QEMU closes its sockets "
                     "before the kernel reaps it (past this, the VM counts as running)"),
    "pool.reset": (3600.0, "one reset of a Ray pool's environment: starting its actor where a slot is free, the VM's "
                           "first start or a warm state's first build, and the task's setup"),
    "pool.step": (1800.0, "one step of a Ray pool's environment: the action, and scoring when it ends the episode"),
    "evaluator.page_load": (180.0, "a page an evaluator's getter opens in the guest's Chromium loading (page_info, "
                                   "pdf_from_url, info_from_website; until its load event)"),
}


class TimeLimitExceeded(DesktopEnvError):
    """A named time limit expired.

    Attributes:
        name: the limit's name (a key of ``LIMITS``).
        seconds: the limit that expired, scaled.
        what: what was running.
    """

    def __init__(self, name: str, seconds: float, what: str):
        self.name = name
        self.seconds = seconds
        self.what = what
        super().__init__(f"time limit {name} ({seconds:g} s at {SCALE_ENV}={scale():g}) expired: {what}; "
                         f"on a slower host raise {SCALE_ENV} (run.py --time_scale)")


def scale() -> float:
    """The factor every limit is multiplied by: ``$DESKTOP_ENV_TIME_SCALE``, default 1.

    Raises:
        DesktopEnvError: the variable is not a number above 0.
    """
    raw = os.environ.get(SCALE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise DesktopEnvError(f"{SCALE_ENV}={raw!r} is not a number; use e.g. 2 for a host twice as slow") from None
    if not value > 0:
        raise DesktopEnvError(f"{SCALE_ENV}={raw!r} must be above 0")
    return value


def limit(name: str, base_s: float | None = None) -> float:
    """The limit ``name`` in seconds, scaled; ``base_s`` replaces its default (a task's own ``timeout_s``).

    Raises:
        KeyError: an unknown limit name (a bug in the caller).
    """
    default, _ = LIMITS[name]
    return (default if base_s is None else float(base_s)) * scale()


def typing_limit(text: str) -> float:
    """The time allowed for typing ``text`` (action.typing plus action.typing_per_char per character)."""
    return limit("action.typing") + limit("action.typing_per_char") * len(text)


def execute_limited(controller, command, *, shell: bool = False, name: str, base_s: float | None = None,
                    what: str | None = None) -> dict:
    """Run ``command`` in the guest under the limit ``name`` (``base_s`` replaces its default).

    Returns:
        the server's reply ``{status, output, error, returncode}``.

    Raises:
        TimeLimitExceeded: the command ran past the limit (the guest killed it).
        GuestServerError: any other failure of the in-VM server.
    """
    from desktop_env.errors import GuestServerError

    seconds = limit(name, base_s)
    try:
        return controller.execute(command, shell=shell, timeout_s=seconds)
    except GuestServerError as exc:
        if exc.status != 504:
            raise
        err = TimeLimitExceeded(name, seconds, what or f"command {_short(command)}")
        logger.error("%s", err)
        raise err from exc


def _short(command, limit_chars: int = 200) -> str:
    text = command if isinstance(command, str) else " ".join(map(str, command))
    text = " ".join(text.split())
    return repr(text if len(text) <= limit_chars else text[:limit_chars] + "...")
