"""``run.py --ray ADDRESS``: a run's jobs on a Ray cluster's environments, with the results layout of a local run.

Each environment is a :class:`JobWorker` actor (one slot of :data:`~desktop_env.distributed.pool.SLOT_RESOURCE`).
It runs jobs one at a time as run.py's local workers do (:func:`desktop_env.harness.jobs.run_job`: the agent, the
task's time limit, retries after a VM failure), in a folder of its node's own, and sends the folder's files
(status.json, result.txt, traj.jsonl, screenshots, runtime.log, recording.mp4) back through Ray; the driver writes
them into the run's result folder, status.json last, so nodes need no shared filesystem and an interrupted run
resumes like a local one.

A job whose actor died (its process, or its node) is reported as ``infra_error`` and retried on a new actor
(``--retries`` more times), placed wherever a slot is free but never on a node whose raylet no longer answers: the
cluster notices a dead node only after its health checks fail (tens of seconds), and an actor placed there meanwhile
would die too and use up the job's retries. Jobs go to live idle actors first; once no job is left to start, idle
actors stop their VMs and give their slots back (a retried job's new actor may need one). The run ends when every
job has a status. Ctrl-C or SIGTERM kills every actor, and with it its VM (started with the parent-death signal).

The nodes run the driver's image by its exact name, and each actor checks before its first VM that its node holds
the driver's build of it (:mod:`desktop_env.distributed.images`): a node without it stops the run with an error
naming the node and how to copy the image there; the jobs not run keep no status, so a rerun runs them.
"""
from __future__ import annotations

import collections
import logging
import os
import shutil
import signal
import socket
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from desktop_env.distributed.images import NodeImageError, check_node_image, driver_image
from desktop_env.distributed.pool import SLOT_RESOURCE, actor_options, first_line, unreachable_nodes
from desktop_env.harness.config import RunConfig
from desktop_env.harness.jobs import Job
from desktop_env.harness.layout import RESULT_FILE, STATUS_FILE, now_iso, write_json_atomic
from desktop_env.harness.progress import progress_line, read_back, started_line

log = logging.getLogger(__name__)

#: Seconds a job may take beyond its attempts' time limits (``--task_timeout`` each) before its actor is killed:
#: the VM's first start or a warm state's first build, and closing a VM after a failure.
JOB_MARGIN_S = 1800.0


class JobWorker:
    """run.py's worker as a Ray actor: one environment; :meth:`run` runs one job and returns its files.

    Ray runs a synchronous actor's methods in its process's main thread, where run_job's SIGALRM time limit works
    and the VM's parent-death signal is tied to a thread that lives as long as the process.
    """

    def __init__(self, config: RunConfig, image=None):
        from desktop_env.harness.workers import alarm_raises, configure_logging

        configure_logging(config.log_level)
        config.apply_time_scale()
        alarm_raises(config.task_timeout)
        self.config = config
        self.image = image  # the driver's ImageIdentity, checked against this node's before the first job
        self.agent = None
        self.env_box: list = [None]
        self.scratch = Path(tempfile.mkdtemp(prefix="desktop-env-ray-jobs-"))

    def where(self) -> dict:
        """This actor's node id, host name and pid."""
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "hostname": socket.gethostname(),
                "pid": os.getpid()}

    def run(self, job: Job) -> dict:
        """Run ``job`` here; returns ``{"status", "files": {relative path: bytes}, "where"}``.

        Raises:
            NodeImageError: this node lacks the driver's image or holds another build of it.
        """
        from desktop_env.agents import create_agent
        from desktop_env.harness.jobs import run_job
        from desktop_env.harness.workers import agent_options, job_log, make_env

        if self.image is not None:
            check_node_image(self.image, self.config.cache_dir)
            self.image = None  # checked once per actor
        if self.agent is None:
            self.agent = create_agent(self.config.model, **agent_options(self.config))
        local = self.scratch / job.domain / job.task_id / f"trial_{job.trial}"
        shutil.rmtree(local, ignore_errors=True)
        local_job = replace(job, folder=local)
        with job_log(local):
            status = run_job(local_job, self.config, self.agent, self.env_box,
                             lambda: make_env(self.config, die_with_owner=True))
        where = self.where()
        if (local / STATUS_FILE).is_file():  # which node ran it, for a user reading a cluster run's results
            status["ray_node"] = where["node_id"]
            write_json_atomic(local / STATUS_FILE, {k: v for k, v in status.items() if k != "stop_run"})
        files = {str(path.relative_to(local)): path.read_bytes() for path in sorted(local.rglob("*"))
                 if path.is_file()}
        shutil.rmtree(local, ignore_errors=True)
        return {"status": status, "files": files, "where": where}

    def close(self) -> None:
        """Stop the VM and the agent."""
        env, self.env_box[0] = self.env_box[0], None
        for what, thing in (("environment", env), ("agent", self.agent)):
            if thing is not None:
                try:
                    thing.close()
                except Exception:
                    log.exception("closing the %s", what)
        self.agent = None
        shutil.rmtree(self.scratch, ignore_errors=True)


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Replace ``folder``'s content with ``files``, each through a temporary file, status.json and result.txt
    last: a crash while writing leaves the job not done (it runs again), never a status without its files."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if old.is_file():
            old.unlink()
    last = (RESULT_FILE, STATUS_FILE)
    for name in sorted(files, key=lambda n: (n in last, last.index(n) if n in last else 0, n)):
        path = folder / name
        if path.resolve().parent != folder.resolve() and folder.resolve() not in path.resolve().parents:
            raise ValueError(f"a job sent a file outside its folder: {name!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(files[name])
        os.replace(tmp, path)


def cluster_slots(ray, slot_resource: str = SLOT_RESOURCE) -> int:
    """Environment slots the cluster's live nodes advertise in all."""
    return int(ray.cluster_resources().get(slot_resource, 0))


def run_jobs_on_ray(config: RunConfig, todo: list[Job], records: dict, report, address: str) -> bool:
    """Run ``todo`` on the Ray cluster at ``address``, adding each status to ``records``; True when interrupted."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, logging_level=logging.WARNING)
    slots = cluster_slots(ray)
    if slots < 1:
        report(f"error: the Ray cluster at {address} advertises no {SLOT_RESOURCE!r} resource, so no environment "
               f"can be placed: start its nodes with ray start --resources '{{\"{SLOT_RESOURCE}\": N}}' "
               "(docs/distributed.md; `desktop-env image fit` says N for a node)", error=True)
        return False
    n = min(config.num_envs, len(todo))
    if n > slots:
        report(f"--num_envs {config.num_envs} lowered to {slots}: the cluster advertises {slots} environment slots")
        n = slots
    from desktop_env.registry import PROVIDERS

    # run.py found this image before (its manifest names it); a provider without cached images has none to check
    image = driver_image(config.path_to_vm, config.cache_dir) if PROVIDERS[config.provider_name].images else None
    if image is not None:  # the nodes run this image by name, whatever their checkout's recipe would pick
        config = replace(config, path_to_vm=image.name)
    remote = ray.remote(JobWorker)
    excluded: set[str] = set()  # nodes found dead: no new actor goes there
    queue = collections.deque((job, 1) for job in todo)
    actors: list = [None] * n  # None: no actor (not started yet, lost, or retired with nothing left to run)
    retiring: list = []  # close() calls of actors retired with nothing left to run
    running: dict = {}  # ref -> (actor index, job, attempt, deadline)
    t0, finished, wins = time.monotonic(), 0, 0
    budget = config.task_timeout * (config.retries + 1) + JOB_MARGIN_S

    def give(index: int) -> None:
        job, attempt = queue.popleft()
        if actors[index] is None:
            actors[index] = remote.options(**actor_options(excluded)).remote(config, image)
        running[actors[index].run.remote(job)] = (index, job, attempt, time.monotonic() + budget)
        report(started_line(config, job.domain, job.task_id, job.trial)
               + (f" (attempt {attempt} after an infrastructure failure)" if attempt > 1 else ""))

    def drop_actor(index: int) -> None:
        try:
            ray.kill(actors[index], no_restart=True)
        except Exception:
            log.debug("killing actor %d", index, exc_info=True)
        actors[index] = None

    def finish(job: Job, status: dict) -> None:
        nonlocal finished, wins
        records[job.key] = {**job.meta(), **status}
        finished += 1
        wins += status["status"] == "success"
        report(progress_line(config, status, finished, len(todo), wins, time.monotonic() - t0))

    def lost(index: int, job: Job, attempt: int, why: str, actor_died: bool = False) -> None:
        drop_actor(index)
        if actor_died:  # perhaps with its node: the next actors avoid the nodes that no longer answer
            excluded.update(unreachable_nodes(ray))
        if attempt <= config.retries:
            report(f"{job.domain}/{job.task_id}: infra_error ({why}); retried on a new environment", error=True)
            queue.appendleft((job, attempt + 1))
            return
        status = {"task_id": job.task_id, "domain": job.domain, "model": config.model, "trial": job.trial,
                  "status": "infra_error", "final": False, "score": None, "reason": None, "steps": 0,
                  "duration_s": 0.0, "attempts": attempt, "error": why, "finished": now_iso(), "tags": job.tags,
                  "related_apps": job.related_apps}
        job.folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(job.folder / STATUS_FILE, status)
        finish(job, status)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, on_term)
    interrupted = False
    try:
        while queue or running:
            busy = {index for index, *_ in running.values()}
            for index in sorted(range(n), key=lambda i: actors[i] is None):  # live idle actors first
                if queue and index not in busy:
                    give(index)
            if not queue:  # nothing left to start: idle actors stop their VMs and give their slots back
                for index in set(range(n)) - {index for index, *_ in running.values()}:
                    if actors[index] is not None:
                        retiring.append(actors[index].close.remote())
                        actors[index] = None  # its last handle: Ray ends the actor once close() returns
            done, _ = ray.wait(list(running), num_returns=1, timeout=2.0)
            for ref in done:
                index, job, attempt, _deadline = running.pop(ref)
                try:
                    reply = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # run_job itself failed: a bug, the job's own failure
                    if isinstance(getattr(exc, "cause", None), NodeImageError):  # no node fixes it but that one
                        report(f"error: {exc.cause}", error=True)
                        queue.clear()
                        running.clear()  # their actors are killed below; the jobs not run keep no status
                        break
                    lost(index, job, config.retries + 1, f"the job raised: {first_line(exc)}")
                    continue
                except ray.exceptions.RayError as exc:  # the actor, its process or its node is gone
                    lost(index, job, attempt, f"its environment's actor died ({type(exc).__name__}): "
                                              f"{first_line(exc)}", actor_died=True)
                    continue
                stop = reply["status"].pop("stop_run", None)
                write_files(job.folder, reply["files"])
                finish(job, reply["status"])
                if stop:  # the model API refuses the run for good: no other job can run either
                    report(f"error: {stop}", error=True)
                    queue.clear()
                    running.clear()  # their actors are killed below
            now = time.monotonic()
            for ref, (index, job, attempt, deadline) in list(running.items()):
                if now >= deadline:
                    running.pop(ref)
                    lost(index, job, attempt, f"no result within {budget:g} s (--task_timeout x attempts + "
                                              f"{JOB_MARGIN_S:g} s): its environment was stopped")
    except KeyboardInterrupt:
        interrupted = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        report("interrupted: stopping the environments (finished tasks are kept; rerun to complete)", error=True)
    finally:
        if not interrupted:
            closing = [actor.close.remote() for actor in actors if actor is not None] + retiring
            if closing:
                ray.wait(closing, num_returns=len(closing), timeout=60)
        for actor in actors:
            if actor is None:
                continue
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                log.debug("killing an actor", exc_info=True)
        signal.signal(signal.SIGTERM, old_term)
    read_back(todo, records)
    return interrupted
