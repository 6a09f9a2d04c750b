"""The server before the programs it launches, in CPU (cgroup v2 in a delegated unit).

The image's unit gives the server ten times any other unit's CPU weight and delegates its cgroup
(``Delegate=yes``). At start the server splits that cgroup in two leaves: ``server`` (the server,
the commands it waits for, its executor) and ``apps`` (what ``/setup/launch`` and
``/setup/open_file`` start and leave running: Chromium, editors, viewers), with a hundredth of the
weight of ``server``. After a restore, a warm state's browser busy drawing no longer delays the
server's first answers, which the agent's first screenshot and command wait for; when the server is
idle the launched programs have the whole share.
"""
from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

SERVER_LEAF, APPS_LEAF = "server", "apps"
#: cpu.weight of each leaf (cgroup v2 range 1..10000; 100 is the default of every cgroup)
SERVER_WEIGHT, APPS_WEIGHT = 10000, 100


def own_cgroup(proc_file: str = "/proc/self/cgroup") -> str | None:
    """This process's cgroup v2 path (``/system.slice/x.service``), or None on a cgroup v1 host."""
    try:
        with open(proc_file, encoding="utf-8") as fh:
            for line in fh:
                hierarchy, _, rest = line.rstrip("\n").partition(":")
                controllers, _, path = rest.partition(":")
                if hierarchy == "0" and controllers == "":
                    return path
    except OSError:
        return None
    return None


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(value)


def split(root: str = "/sys/fs/cgroup", cgroup: str | None = None) -> str | None:
    """Move this process into a ``server`` leaf of its cgroup and create an ``apps`` leaf beside it.

    Call before any thread starts. ``server`` gets cpu.weight 10000 and ``apps`` 100, so the server
    and what it waits for come first while both want the CPU.

    Args:
        root: where the cgroup v2 hierarchy is mounted.
        cgroup: this process's cgroup (default: read from /proc/self/cgroup).

    Returns:
        The path of the ``apps`` leaf, for :func:`launch_argv`; None, with a warning logged, when the
        cgroup cannot be split (cgroup v1, or the cgroup is not delegated to this user: the unit
        lacks ``Delegate=yes``). Launched programs then share the server's cgroup.
    """
    cgroup = cgroup if cgroup is not None else own_cgroup()
    if not cgroup or cgroup == "/":
        logger.warning("launched programs share the server's CPU share: no cgroup v2 of its own (%r)", cgroup)
        return None
    base = os.path.join(root, cgroup.lstrip("/"))
    server, apps = os.path.join(base, SERVER_LEAF), os.path.join(base, APPS_LEAF)
    try:
        os.makedirs(server, exist_ok=True)
        _write(os.path.join(server, "cgroup.procs"), str(os.getpid()))
        _write(os.path.join(base, "cgroup.subtree_control"), "+cpu")
        os.makedirs(apps, exist_ok=True)
        _write(os.path.join(server, "cpu.weight"), str(SERVER_WEIGHT))
        _write(os.path.join(apps, "cpu.weight"), str(APPS_WEIGHT))
    except OSError as exc:
        logger.warning("launched programs share the server's CPU share: cannot split its cgroup %s (%s; the "
                       "unit needs Delegate=yes)", base, exc)
        return None
    logger.info("the server runs in %s (cpu.weight %d), the programs it launches in %s (cpu.weight %d)",
                server, SERVER_WEIGHT, apps, APPS_WEIGHT)
    return apps


#: the shell moves itself into the leaf, then becomes the program (same pid, no extra process)
_ENTER = 'echo $$ > "$0/cgroup.procs" || :; exec "$@"'


def launch_argv(command, shell: bool, leaf: str) -> list[str]:
    """``command`` (argv list, or a shell string when ``shell``) as an argv that first enters ``leaf``.

    The program keeps the pid of the process the server started, and starts in the server's leaf
    when it cannot enter ``leaf``.
    """
    argv = ["/bin/sh", "-c", command] if shell else list(command)
    return ["/bin/sh", "-c", _ENTER, leaf, *argv]
