"""Exception hierarchy shared by every layer of the host library."""
from __future__ import annotations


class DesktopEnvError(Exception):
    """Root of every error this library raises on purpose."""


class HostToolMissing(DesktopEnvError):
    """A program the host needs is not installed.

    Attributes:
        tool: the executable that was looked for.
        package: the Debian package that provides it.
    """

    def __init__(self, tool: str, package: str, purpose: str = ""):
        self.tool = tool
        self.package = package
        why = f" (needed to {purpose})" if purpose else ""
        super().__init__(f"'{tool}' not found on PATH{why}; install it with: apt-get install {package}")


class PrivilegeError(DesktopEnvError):
    """The operation needs a privilege the current process lacks."""


class ImageBuildError(DesktopEnvError):
    """An image build phase failed.

    Attributes:
        phase: the build phase that failed.
        command: the failing command line, if a command failed.
        log_tail: the last lines of that command's log.
        log_path: where the full log lives.
    """

    def __init__(self, phase: str, message: str, command: list[str] | None = None,
                 log_tail: str = "", log_path: str | None = None):
        self.phase = phase
        self.command = command
        self.log_tail = log_tail
        self.log_path = log_path
        parts = [f"image build failed in phase '{phase}': {message}"]
        if command:
            parts.append("command: " + " ".join(command))
        if log_path:
            parts.append(f"full log: {log_path}")
        if log_tail:
            parts.append("last lines of its log:\n" + log_tail)
        super().__init__("\n".join(parts))


class ImageNotFound(DesktopEnvError):
    """No ready image matches what was asked for."""


class VMLaunchError(DesktopEnvError):
    """QEMU failed to start or exited early.

    Attributes:
        command: the QEMU command line.
        exit_code: its exit status, or None if it is still running.
        log_tail: the end of its log.
    """

    def __init__(self, message: str, command: list[str] | None = None,
                 exit_code: int | None = None, log_tail: str = ""):
        self.command = command
        self.exit_code = exit_code
        self.log_tail = log_tail
        parts = [message]
        if exit_code is not None:
            parts.append(f"exit code: {exit_code}")
        if command:
            parts.append("command: " + " ".join(command))
        if log_tail:
            parts.append("log tail:\n" + log_tail)
        super().__init__("\n".join(parts))


class VMError(DesktopEnvError):
    """A running VM misbehaved (QMP error, died, did not become ready)."""


class SnapshotError(DesktopEnvError):
    """A snapshot could not be saved, restored, listed or deleted."""


class ScreenSizeMismatch(DesktopEnvError):
    """The requested screen size differs from the one frozen in the image."""


class GuestServerError(DesktopEnvError):
    """The in-VM server answered with an error or not at all.

    Attributes:
        status: HTTP status code (None when there was no answer).
        body: the reply body (decoded JSON when possible).
    """

    def __init__(self, message: str, status: int | None = None, body=None):
        self.status = status
        self.body = body
        super().__init__(message if status is None else f"{message} (HTTP {status}): {body}")


class TaskConfigError(DesktopEnvError):
    """A task file is malformed or names something unknown.

    Attributes:
        path: the task file.
        field: the offending field, dotted (e.g. ``evaluator.func[1]``).
    """

    def __init__(self, message: str, path: str | None = None, field: str | None = None):
        self.path = path
        self.field = field
        super().__init__(in_task_file(message, path, field))


def in_task_file(message: str, path: str | None = None, field: str | None = None) -> str:
    """``message`` after where in a task file it arose: ``file PATH, field FIELD: message``."""
    where = ", ".join(x for x in (f"file {path}" if path else "", f"field {field}" if field else "") if x)
    return f"{where}: {message}" if where else message


class EvaluatorError(DesktopEnvError):
    """A metric or getter raised an exception it should not have: a grader bug, not the agent's failure.

    The harness records the task as ``evaluator_error`` (no score, left out of the success
    rate) rather than as a wrong result.

    Attributes:
        where: what was running (``metric compare_table``, ``getter vm_file (result)``).
        traceback_tail: the last lines of the traceback.
    """

    def __init__(self, where: str, cause: BaseException, traceback_tail: str = ""):
        self.where = where
        self.traceback_tail = traceback_tail
        super().__init__(f"{where} raised {type(cause).__name__}: {cause}")


class AgentError(DesktopEnvError):
    """The agent's own code raised (in ``reset`` or ``predict``): the agent's failure, not the task's.

    The harness records the attempt as ``agent_error``: final, scored 0 and counted in the success rate.

    Attributes:
        where: what the agent was doing (``predict``, ``reset``).
        traceback_tail: the last lines of the traceback.
    """

    def __init__(self, where: str, cause: BaseException, traceback_tail: str = ""):
        self.where = where
        self.traceback_tail = traceback_tail
        super().__init__(f"the agent's {where} raised {type(cause).__name__}: {cause}")


class SolutionStepFailed(TaskConfigError):
    """A step of a task's reference solution failed (non-zero exit, an action error, a time limit).

    The oracle proves a task solvable; a step that fails means the solution (or the time it
    is given) is wrong, so the harness records ``task_error`` naming the step rather than a
    wrong result.
    """


def infra_error_types() -> tuple[type, ...]:
    """Exception types that mean the infrastructure failed (the VM, its in-VM server, the host's tools or the
    connection to them), not the task: a run retries such a failure on a fresh VM. The harness adds the model
    API's failures (:func:`desktop_env.harness.status.infra_errors`)."""
    import requests

    return (VMError, GuestServerError, VMLaunchError, SnapshotError, HostToolMissing, ConnectionError,
            requests.RequestException)
