"""File and command getters: local_file, vm_file, cache_file, vm_script_output, vm_command_line/error."""
from __future__ import annotations

import logging
from pathlib import Path, PurePosixPath

from desktop_env.session import SetupContext
from desktop_env.configs.steps import script_command
from desktop_env.errors import GuestServerError, TaskConfigError
from desktop_env.evaluators.reasons import MISSING_RESULT, explain
from desktop_env.evaluators.values import GuestText
from desktop_env.limits import execute_limited
from desktop_env.registry import GETTERS
from desktop_env.tasks import is_remote_url

logger = logging.getLogger(__name__)


@GETTERS.register(host_paths=("path",))
def get_local_file(ctx: SetupContext, path: str, dest: str | None = None) -> Path:
    """A task file on the host (a gold CSV, a notebook, ...) as a local path.

    Args:
        path: relative to the suite root or the task folder, or an http(s) URL (fetched into
            the cache as ``dest``).
        dest: cache file name for a fetched URL.
    """
    if is_remote_url(path):
        from desktop_env.configs.steps import fetch_bytes
        target = ctx.cache_path(dest or PurePosixPath(path).name or "download")
        target.write_bytes(fetch_bytes(path, ctx))
        return target
    return ctx.resolve(path)


@GETTERS.register(host_paths=("path",))
def get_cloud_file(ctx: SetupContext, path, dest, multi: bool = False, gives=None):
    """A gold file fetched by URL on the host (through the download mirror when one is given), as a
    local path in the cache.

    Args:
        path: the URL (a task-relative path also works); a list of them when ``multi``.
        dest: cache file name; a list parallel to ``path`` when ``multi``.
        multi: fetch several files.
        gives: with ``multi``, the indices to return (default ``[0]``); one index gives one path,
            several give a list.
    """
    from desktop_env.configs.steps import fetch_bytes

    def one(url: str, name: str) -> Path:
        target = ctx.cache_path(name)
        target.write_bytes(fetch_bytes(url, ctx))
        return target

    return one(path, dest) if not multi else _fetch_many("cloud_file", one, path, dest, gives)


def _fetch_many(getter: str, one, path, dest, gives):
    """``multi``: fetch each of the parallel lists ``path`` and ``dest``, return the ``gives`` ones."""
    if not isinstance(path, list) or not isinstance(dest, list) or len(path) != len(dest):
        raise TaskConfigError(f"{getter} with multi needs parallel lists 'path' and 'dest'",
                              field="path" if not isinstance(path, list) else "dest")
    fetched = [one(p, d) for p, d in zip(path, dest)]
    gives = [0] if gives is None else (gives if isinstance(gives, list) else [gives])
    picked = [fetched[i] for i in gives]
    return picked[0] if len(picked) == 1 else picked


def fetch_vm_file(ctx: SetupContext, vm_path: str, dest: str) -> Path | None:
    """Copy the guest's ``vm_path`` to the cache as ``dest``; None (logged) when it is missing."""
    try:
        data = ctx.controller.get_file(vm_path)
    except (GuestServerError, FileNotFoundError) as exc:
        logger.info("VM file %s could not be fetched (scored as missing): %s", vm_path, exc)
        explain(MISSING_RESULT, f"the file {vm_path} does not exist in the VM" if getattr(exc, "status", None) == 404
                else f"the file {vm_path} could not be fetched from the VM: {exc}")
        return None
    if data is None:
        explain(MISSING_RESULT, f"the file {vm_path} is not in the VM")
        return None
    target = ctx.cache_path(dest)
    target.write_bytes(data)
    return target


@GETTERS.register()
def get_vm_file(ctx: SetupContext, path, dest, multi: bool = False, gives=None):
    """Copy a file out of the VM into the cache and return its local path (None if it is missing).

    Args:
        path: VM path; a list of them when ``multi``.
        dest: cache file name; a list parallel to ``path`` when ``multi``.
        multi: fetch several files.
        gives: with ``multi``, the indices to return (default ``[0]``); one index gives one
            path, several give a list.
    """
    if not multi:
        return fetch_vm_file(ctx, path, dest)
    return _fetch_many("vm_file", lambda p, d: fetch_vm_file(ctx, p, d), path, dest, gives)


@GETTERS.register()
def get_cache_file(ctx: SetupContext, path: str) -> Path | None:
    """A file an earlier step saved in the session's cache folder (e.g. ``execute``'s ``stdout``)."""
    p = ctx.cache_path(path)
    if not p.exists():
        explain(MISSING_RESULT, f"no file {path} was saved in the session's cache by an earlier step")
        return None
    return p


@GETTERS.register(host_paths=("src",))
def get_vm_script_output(ctx: SetupContext, src: str, dest: str, shell: bool = True,
                         timeout_s: float | None = None) -> GuestText:
    """Copy a script (usually ``eval.sh``) into the VM, run it with bash in its folder, return its stdout."""
    data = ctx.resolve(src).read_bytes()
    folder = str(PurePosixPath(dest).parent)
    if folder not in ("", ".", "/"):
        ctx.controller.execute(["mkdir", "-p", folder], shell=False)
    ctx.controller.upload_file(data, dest)
    reply = execute_limited(ctx.controller, script_command(dest, shell), shell=shell, name="evaluator.command",
                            base_s=timeout_s, what=f"vm_script_output {src}")
    if reply.get("returncode") not in (0, None):
        logger.info("script %s exited with %s; stderr tail: %s", dest, reply.get("returncode"),
                    (reply.get("error") or "")[-500:])
    return GuestText(reply.get("output") or "")


@GETTERS.register()
def get_vm_command_line(ctx: SetupContext, command, shell: bool = False, timeout_s: float | None = None) -> GuestText:
    """Run a command in the VM and return its stdout."""
    return GuestText(execute_limited(ctx.controller, command, shell=shell, name="evaluator.command",
                                     base_s=timeout_s).get("output") or "")


@GETTERS.register()
def get_vm_command_error(ctx: SetupContext, command, shell: bool = False, timeout_s: float | None = None) -> GuestText:
    """Run a command in the VM and return its stderr."""
    return GuestText(execute_limited(ctx.controller, command, shell=shell, name="evaluator.command",
                                     base_s=timeout_s).get("error") or "")

