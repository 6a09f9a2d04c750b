"""A Ray cluster of several nodes on this one host, for trying the pool and ``run.py --ray`` out (and for their tests
and benchmark): a head and worker nodes, each a separate ``ray start`` on loopback with its environment slots, CPUs
and object-store memory set explicitly, and a folder of its own for temporary files (the jobs' scratch folders).

Everything it starts carries a tag in its environment (raylets, their workers, the VMs those start), so
:meth:`LocalCluster.stop` finds and stops all of it, and :meth:`LocalCluster.leftovers` says what survived.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from desktop_env.distributed.pool import SLOT_RESOURCE
from desktop_env.errors import DesktopEnvError

log = logging.getLogger(__name__)

#: The environment variable that tags every process of a local cluster.
TAG_ENV = "DESKTOP_ENV_CLUSTER_TAG"
#: Prefix of the custom resource that names a node (``local_node_head``, ``local_node_worker1``: one unit each).
NODE_RESOURCE = "local_node_"


class ClusterError(DesktopEnvError):
    """A node of a local cluster did not start (the message holds ``ray start``'s output)."""


@dataclass
class Node:
    """One node: its name, slots, scratch folder and (once started) its Ray node id."""

    name: str
    slots: int
    scratch: Path
    node_id: str | None = None
    env: dict = field(default_factory=dict)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tagged(tag: str, name: str = TAG_ENV) -> list[int]:
    """PIDs of the live processes whose environment holds ``name=tag``: all that a process started with that
    variable started in turn, however deep (a child inherits its parent's environment), even detached ones."""
    marker = f"{name}={tag}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:  # gone, or not ours to read
            continue
    return pids


def stop_tagged(tag: str, name: str = TAG_ENV, grace_s: float = 30.0) -> list[int]:
    """SIGTERM every process :func:`tagged` finds, then SIGKILL after ``grace_s``; returns those still alive after
    both (none, normally)."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        for pid in tagged(tag, name):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while tagged(tag, name) and time.monotonic() < deadline:
            time.sleep(0.2)
    return tagged(tag, name)


class LocalCluster:
    """A head and ``len(worker_slots)`` worker nodes on this host.

    Args:
        head_slots: environment slots (:data:`SLOT_RESOURCE`) the head advertises.
        worker_slots: one entry per worker node: its slots.
        cpus: Ray CPUs per node (environments take none; this is for Ray's own tasks).
        object_store_mb: each node's object store.
        root: where the nodes' folders go (default: a new temporary folder, removed by :meth:`stop`).
    """

    def __init__(self, head_slots: int = 1, worker_slots: tuple[int, ...] = (1,), cpus: int = 1,
                 object_store_mb: int = 256, root: Path | None = None):
        self.tag = uuid.uuid4().hex
        self._own_root = root is None
        # short: Ray's unix sockets live under it (at most 107 characters)
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))
        self.cpus = cpus
        self.object_store_mb = object_store_mb
        self.port = _free_port()
        #: Ray's authentication mode, the same for every node and the driver (a token left in ~/.ray by an earlier
        #: ``ray.init`` would otherwise turn it on for the head alone). Off: a cluster of one host's own processes
        #: for trying things out; a real cluster uses tokens (docs/distributed.md). The driver reads it when Ray
        #: first starts in its process, so a process that already used Ray keeps the mode it read then.
        self.auth_env = {"RAY_AUTH_MODE": "disabled"}
        self._saved_env: dict[str, str | None] = {}
        self.nodes = [Node("head", head_slots, self.root / "head")]
        self.nodes += [Node(f"worker{i + 1}", n, self.root / f"worker{i + 1}") for i, n in enumerate(worker_slots)]

    @property
    def address(self) -> str:
        """The head's GCS address (``ray.init(address=...)``, ``run.py --ray``)."""
        return f"127.0.0.1:{self.port}"

    def _ray_start(self, node: Node, head: bool) -> None:
        node.scratch.mkdir(parents=True, exist_ok=True)
        node.env = {**os.environ, **self.auth_env, TAG_ENV: self.tag, "TMPDIR": str(node.scratch),
                    "RAY_USAGE_STATS_ENABLED": "0"}
        resources = json.dumps({SLOT_RESOURCE: node.slots, NODE_RESOURCE + node.name: 1})
        cmd = ["ray", "start", "--node-ip-address", "127.0.0.1", "--num-cpus", str(self.cpus), "--num-gpus", "0",
               "--resources", resources, "--object-store-memory", str(self.object_store_mb << 20),
               "--disable-usage-stats", "--dashboard-agent-listen-port", str(_free_port()),
               "--metrics-export-port", str(_free_port())]
        if head:
            cmd += ["--head", "--port", str(self.port), "--include-dashboard", "false",
                    "--temp-dir", str(self.root / "ray")]
        else:
            cmd += ["--address", self.address]
        log.info("starting Ray node %s: %s", node.name, " ".join(cmd))
        done = subprocess.run(cmd, env=node.env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise ClusterError(f"`{' '.join(cmd)}` failed ({done.returncode}):\n{done.stdout[-2000:]}"
                               f"\n{done.stderr[-2000:]}")

    def start(self, timeout_s: float = 300.0) -> "LocalCluster":
        """Start the head, then the workers; returns once every node is alive in the cluster."""
        import ray

        try:
            for key, value in self.auth_env.items():  # this process is the cluster's driver
                self._saved_env.setdefault(key, os.environ.get(key))
                os.environ[key] = value
            self._ray_start(self.nodes[0], head=True)
            for node in self.nodes[1:]:
                self._ray_start(node, head=False)
            deadline = time.monotonic() + timeout_s
            while True:
                alive = {}
                ray.init(address=self.address, logging_level=logging.WARNING) if not ray.is_initialized() else None
                for entry in ray.nodes():
                    names = [k[len(NODE_RESOURCE):] for k in entry.get("Resources", {}) if k.startswith(NODE_RESOURCE)]
                    if entry.get("Alive"):
                        for name in names:
                            alive[name] = entry["NodeID"]
                if all(node.name in alive for node in self.nodes):
                    for node in self.nodes:
                        node.node_id = alive[node.name]
                    return self
                if time.monotonic() > deadline:
                    raise ClusterError(f"nodes {[n.name for n in self.nodes if n.name not in alive]} did not join "
                                       f"the cluster at {self.address} within {timeout_s:g} s")
                time.sleep(1)
        except BaseException:
            self.stop()
            raise

    def node(self, name: str) -> Node:
        """The node called ``name`` (``head``, ``worker1``, ...)."""
        return next(n for n in self.nodes if n.name == name)

    def processes(self, name: str | None = None) -> list[tuple[int, list[bytes]]]:
        """``(pid, argv)`` of every live process of the cluster, or of node ``name`` only (those with its scratch
        folder as TMPDIR)."""
        marker = f"TMPDIR={self.node(name).scratch}".encode() if name is not None else None
        out = []
        for pid in tagged(self.tag):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if marker is None or marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                    out.append((pid, argv))
            except OSError:
                continue
        return out

    def raylet_pid(self, name: str) -> int:
        """The PID of the raylet of node ``name``."""
        for pid, argv in self.processes(name):
            if argv[0].endswith(b"/raylet"):
                return pid
        raise ClusterError(f"no raylet of node {name} is running")

    def kill_node(self, name: str) -> list[int]:
        """Kill node ``name``'s Ray processes outright (SIGKILL), as when its machine dies: its raylet first, then
        every other process of the node (its workers, their children) except its VMs. A worker would exit on its
        own once it noticed its raylet gone, but it can still finish a short episode and hand its result to the
        driver first; a dead machine returns nothing. The VMs are left to die of their owner's death (the
        environment's ``die_with_owner``), which is what a test of a node's loss checks. Returns the PIDs killed."""
        raylet = self.raylet_pid(name)
        os.kill(raylet, signal.SIGKILL)
        killed = [raylet]
        for pid, argv in self.processes(name):
            if b"qemu-system" in argv[0]:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
        return killed

    def leftovers(self) -> list[str]:
        """``pid command`` of every process of this cluster still running."""
        return [f"{pid} {b' '.join(argv).decode(errors='replace')[:200]}" for pid, argv in self.processes()]

    def stop(self, grace_s: float = 30.0) -> list[str]:
        """Disconnect, stop every process of the cluster (SIGTERM, then SIGKILL after ``grace_s``); returns what
        was still running after both (nothing, normally)."""
        import ray

        if ray.is_initialized():
            ray.shutdown()
        stop_tagged(self.tag, grace_s=grace_s)
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
        left = self.leftovers()
        if self._own_root and not left:
            shutil.rmtree(self.root, ignore_errors=True)
        return left

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
