"""Host port allocation that never collides across processes (flock-held lock files)."""
from __future__ import annotations

import fcntl
import logging
import os
import socket
from pathlib import Path

log = logging.getLogger(__name__)


def try_lock_file(path: Path, owner: str) -> int | None:
    """Take an exclusive ``flock`` on ``path`` without waiting and write ``owner`` into it.

    Returns:
        the open descriptor holding the lock (closing it releases the lock), or None when
        another process holds it.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, owner.encode())
    return fd


class PortLease:
    """A set of loopback TCP ports reserved for one VM.

    Each port is reserved by holding an exclusive ``flock`` on ``<dir>/<port>.lock``;
    the kernel drops the lock when the process dies, so a crash leaves no reservation
    behind (a stale file without a lock holder is reused).
    """

    def __init__(self, lock_dir: Path, count: int, port_range: tuple[int, int] | None = None):
        self.lock_dir = Path(lock_dir)
        self.port_range = port_range
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        self.ports: list[int] = []
        self._fds: list[int] = []
        self._paths: list[Path] = []
        try:
            while len(self.ports) < count:
                self._reserve_one()
        except BaseException:
            self.release()
            raise

    def _candidates(self):
        if self.port_range:
            yield from range(*self.port_range)
            return
        for _ in range(200):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind(("127.0.0.1", 0))
                yield probe.getsockname()[1]

    def _reserve_one(self) -> None:
        for port in self._candidates():
            if port in self.ports:
                continue
            if self.port_range and not _bindable(port):
                continue
            path = self.lock_dir / f"{port}.lock"
            fd = try_lock_file(path, f"{os.getpid()}\n")
            if fd is None:
                continue
            self.ports.append(port)
            self._fds.append(fd)
            self._paths.append(path)
            return
        where = f" in {self.port_range[0]}..{self.port_range[1] - 1}" if self.port_range else " after 200 tries"
        raise OSError(f"could not reserve a free loopback port{where}")

    def release(self) -> None:
        """Drop every reservation and remove the lock files."""
        for fd, path in zip(self._fds, self._paths):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds, self._paths, self.ports = [], [], []

    def __enter__(self) -> "PortLease":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def lock_is_held(path: Path) -> bool:
    """Whether some live process holds the flock on ``path``."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
