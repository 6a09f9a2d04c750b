"""The session context that setup steps, getters and the evaluator use to reach the VM, and the setup error family
(a neutral module: configs, evaluators, the env and the harness all use it)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_env.errors import DesktopEnvError

if TYPE_CHECKING:  # pragma: no cover
    from desktop_env.tasks import TaskSpec

logger = logging.getLogger(__name__)


class SetupError(DesktopEnvError):
    """A setup step (or a getter) failed at run time.

    Attributes:
        step: the step or getter name.
    """

    def __init__(self, message: str, step: str | None = None):
        self.step = step
        super().__init__(f"{step}: {message}" if step else message)


class NotSupportedError(SetupError):
    """The step is registered (so tasks load) but this project cannot run it; the message says what is missing."""


class ToolNotInImage(NotSupportedError):
    """The step drives a tool that no image of this project ships.

    Attributes:
        tool: the missing tool.
    """

    def __init__(self, tool: str, step: str | None = None):
        self.tool = tool
        super().__init__(f"{tool} is not installed in any image of this project, so this task cannot "
                         f"be set up; run it on an image that ships {tool}", step=step)


class AccountRequired(SetupError):
    """The step needs a real cloud account, configured in a settings file.

    Attributes:
        settings_file: the settings file that was looked for (relative to the suite root).
        template: the committed template to copy from.
    """

    def __init__(self, message: str, settings_file: str, template: str | None = None, step: str | None = None):
        self.settings_file = settings_file
        self.template = template
        super().__init__(message, step=step)


@dataclass
class SetupContext:
    """What a setup step or getter may touch: the VM, the task and the host-side folders.

    Attributes:
        controller: a ``desktop_env.controllers.python.PythonController`` speaking to the
            in-VM server (``execute``, ``launch``, ``get_file``, ``upload_file``, ...).
        task: the task being set up or evaluated.
        cache_dir: host folder where files fetched from the VM (and downloads) are kept.
        cdp_port_host: host port forwarded to the VM's Chromium remote-debugging listener, or None.
        suite_root: the folder holding ``evaluation_examples/`` (defaults to the task's).
        vm_host: host name or address under which forwarded VM ports are reached.
        state: scratch space shared by the steps of one episode (e.g. the Chromium launch).
        download_mirror: a ``desktop_env.configs.mirror.Mirror`` serving every URL the task
            fetches (no network access), or None to download through the host.
        screenshot: a callable returning the screen as PNG bytes taken from the host (no guest CPU spent),
            or returning None / absent when the provider cannot.
    """

    controller: Any
    task: "TaskSpec"
    cache_dir: Path
    cdp_port_host: int | None = None
    suite_root: Path | None = None
    vm_host: str = "127.0.0.1"
    state: dict = field(default_factory=dict)
    download_mirror: Any = None
    screenshot: Any = None

    def __post_init__(self):
        self.cache_dir = Path(self.cache_dir)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        if self.suite_root is None and self.task is not None:
            self.suite_root = self.task.suite_root
        elif self.suite_root is not None:
            self.suite_root = Path(self.suite_root)

    def resolve(self, rel: str) -> Path:
        """A host path named in the task, resolved against the suite root then the task folder;
        ``cache/<task id>/x`` (or ``cache/x``) is ``x`` in this session's cache folder.

        Raises:
            AccountRequired: it is the user's account settings, missing beside its committed template.
            desktop_env.tasks.TaskFileNotFound: it does not exist (the message lists what was tried).
        """
        from desktop_env.tasks import TaskFileNotFound, runtime_cache_part

        inner = runtime_cache_part(rel, getattr(self.task, "id", None))
        if inner is not None:
            path = self.cache_path(inner)
            if not path.exists():
                raise TaskFileNotFound(f"file {rel!r} is not in the run-time cache (no earlier step made it)",
                                       [path], path=None if self.task.path is None else str(self.task.path))
            return path
        template = self.task.settings_template(rel, suite_root=self.suite_root)
        if template is not None:
            raise AccountRequired(f"this task needs a real account: fill in {rel} (relative to the suite root or the "
                                  f"task folder) from its template {template} with your credentials; it is never "
                                  "committed (see docs/cloud.md)", settings_file=rel, template=str(template))
        return self.task.resolve_path(rel, suite_root=self.suite_root)

    def cache_path(self, name: str) -> Path:
        """A path under ``cache_dir`` for ``name``, refusing names that escape it."""
        path = (self.cache_dir / name).resolve()
        if self.cache_dir.resolve() not in (path, *path.parents):
            raise SetupError(f"cache file name {name!r} escapes the cache folder {self.cache_dir}")
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def execute_checked(ctx: SetupContext, command, *, shell: bool = False, timeout_s: float | None = None,
                    step: str | None = None) -> dict:
    """Run ``command`` in the VM and wait; raise :class:`SetupError` when it exits non-zero.

    Returns:
        the server's reply ``{status, output, error, returncode}``.
    """
    reply = ctx.controller.execute(command, shell=shell, timeout_s=timeout_s)
    code = reply.get("returncode")
    if code not in (0, None):
        tail = (reply.get("error") or reply.get("output") or "")[-2000:]
        raise SetupError(f"command {command!r} exited with {code}: {tail}", step=step)
    return reply
