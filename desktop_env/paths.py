"""Where the library keeps its caches, images and runtime state, and what a file occupies on disk."""
from __future__ import annotations

import os
from pathlib import Path

#: Environment variable that overrides the cache directory.
CACHE_ENV = "DESKTOP_ENV_CACHE"
#: Environment variable that moves the runtime state (VM folders, port locks) out of the cache,
#: e.g. to give one run a private folder while it still uses the shared images.
RUNTIME_ENV = "DESKTOP_ENV_RUNTIME_DIR"


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """Return the cache directory: ``override``, else ``$DESKTOP_ENV_CACHE``,
    else ``$XDG_CACHE_HOME/desktop-env``, else ``~/.cache/desktop-env``."""
    if override:
        return Path(override).expanduser().resolve()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(invoking_user_home() / ".cache")
    return Path(xdg).expanduser().resolve() / "desktop-env"


def invoking_user_home() -> Path:
    """The home of the user who ran the command: under ``sudo``, the user who called sudo (so
    ``sudo desktop-env image build`` puts the image where that user's runs look), else ``~``."""
    if hasattr(os, "geteuid") and os.geteuid() == 0 and os.environ.get("SUDO_USER"):
        import pwd

        try:
            return Path(pwd.getpwnam(os.environ["SUDO_USER"]).pw_dir)
        except KeyError:
            pass
    return Path.home()


def sudo_caller() -> tuple[int, int] | None:
    """(uid, gid) of the user who ran this command through ``sudo``, or None when not under sudo."""
    if hasattr(os, "geteuid") and os.geteuid() == 0 and os.environ.get("SUDO_UID", "").isdigit():
        return int(os.environ["SUDO_UID"]), int(os.environ.get("SUDO_GID", os.environ["SUDO_UID"]))
    return None


def runtime_dir(override: str | os.PathLike | None = None) -> Path:
    """Per-host runtime state (VM sockets, overlays, port locks): ``$DESKTOP_ENV_RUNTIME_DIR``
    when set, else ``run/`` under the cache directory (``override`` or the default)."""
    if os.environ.get(RUNTIME_ENV):
        path = Path(os.environ[RUNTIME_ENV]).expanduser().resolve()
    else:
        path = cache_dir(override) / "run"
    path.mkdir(parents=True, exist_ok=True)
    return path


def ports_dir(override: str | os.PathLike | None = None) -> Path:
    """Port lock files, ``run/ports`` under the cache directory. Ports are a host-wide resource, so
    unlike the rest of the runtime state this folder does not move with ``$DESKTOP_ENV_RUNTIME_DIR``:
    runs with private runtime folders still see each other's reservations."""
    path = cache_dir(override) / "run" / "ports"
    path.mkdir(parents=True, exist_ok=True)
    return path


def repo_root() -> Path:
    """The source tree root (the folder holding ``desktop_env/`` and ``vm_server/``)."""
    return Path(__file__).resolve().parent.parent


def allocated(path: Path) -> int:
    """Bytes ``path`` occupies on disk: less than its size when it is sparse (a mapped state's RAM file)."""
    return path.stat().st_blocks * 512
