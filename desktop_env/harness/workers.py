"""Worker processes: one environment (VM) each, taking jobs from a queue until told to stop.

A worker turns SIGTERM and SIGINT into a clean stop (the VM is closed, the job's status says
``interrupted``) and SIGALRM into :class:`TaskTimeout`. What it leaves behind (a QEMU whose start was
interrupted) is killed on the way out.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from pathlib import Path

from desktop_env.harness.config import RunConfig
from desktop_env.harness.jobs import run_job
from desktop_env.harness.layout import RUNTIME_LOG
from desktop_env.harness.status import TaskTimeout

log = logging.getLogger(__name__)


def agent_options(config: RunConfig) -> dict:
    """The keyword options ``create_agent`` gets from the run's settings."""
    return dict(action_space=config.action_space, observation_type=config.observation_type,
                max_trajectory_length=config.max_trajectory_length, a11y_tree_max_tokens=config.a11y_tree_max_tokens,
                temperature=config.temperature, top_p=config.top_p, max_tokens=config.max_tokens,
                model_screen=config.model_screen_size, base_url=config.base_url, api_key_env=config.api_key_env,
                seed=config.seed, agent=config.agent,
                **({"tool_version": config.tool_version} if config.tool_version else {}),
                **({"coords": config.coords} if config.coords else {}))


def make_env(config: RunConfig, **provider_kwargs):
    """A run's environment, as its settings say (a worker makes one, and a new one after an infrastructure
    failure); ``provider_kwargs`` go to the provider (a Ray actor's ``die_with_owner``)."""
    from desktop_env.envs import DesktopEnv

    return DesktopEnv(provider_name=config.provider_name, path_to_vm=config.path_to_vm,
                      action_space=config.action_space, screen_size=config.screen_size,
                      require_a11y_tree=config.observation_type != "screenshot", max_steps=config.max_steps,
                      cache_dir=config.cache_dir, download_mirror=config.download_mirror,
                      snapshot_name=config.snapshot_name or "init_state",
                      **({"hosts": config.hosts} if config.hosts else {}), **provider_kwargs)


LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def configure_logging(level_name: str, log_file: str | None = None) -> None:
    """The process's logging: the console (or ``log_file``) shows ``level_name`` and up, while the root logger
    passes INFO on (DEBUG at level DEBUG), which each task's runtime.log and a ``log_file`` keep."""
    shown = getattr(logging, str(level_name).upper(), logging.INFO)
    root = logging.getLogger()
    root.setLevel(min(shown, logging.INFO))
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler()
    handler.setLevel(root.level if log_file else shown)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root.addHandler(handler)


@contextlib.contextmanager
def job_log(folder: Path):
    """While a job runs, the process's log also goes to the job folder's runtime.log."""
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / RUNTIME_LOG, mode="a")
    handler.setLevel(logging.getLogger().level)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logging.getLogger().addHandler(handler)
    try:
        yield
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()


def alarm_raises(timeout_s: float) -> None:
    """SIGALRM raises :class:`TaskTimeout` in this process's main thread (run_job arms it per attempt)."""
    def on_alarm(signum, frame):
        raise TaskTimeout(f"task attempt exceeded --task_timeout {timeout_s:g} s")

    signal.signal(signal.SIGALRM, on_alarm)


def worker(config: RunConfig, jobs, results) -> None:
    """One process, one environment: takes jobs (:class:`~desktop_env.harness.jobs.Job`) until None; SIGTERM and
    SIGINT close the VM and exit.

    Puts ``{"event": "started", domain, task_id, trial}`` and ``{"event": "finished", "status": ...}``
    on ``results`` for each job, and ``{"event": "stop", "message"}`` before it exits when the model
    API refused the run's key (the parent then stops every worker).
    """
    from desktop_env.agents import create_agent

    configure_logging(config.log_level, str(config.worker_log) if config.worker_log else None)

    def on_stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    alarm_raises(config.task_timeout)
    env_box: list = [None]

    def new_env():
        return make_env(config)

    agent = None
    try:
        agent = create_agent(config.model, **agent_options(config))
        while True:
            job = jobs.get()
            if job is None:
                return
            results.put({"event": "started", "domain": job.domain, "task_id": job.task_id, "trial": job.trial})
            with job_log(job.folder):
                status = run_job(job, config, agent, env_box, new_env)
            stop = status.pop("stop_run", None)
            results.put({"event": "finished", "status": status})
            if stop:  # the model API refuses the run for good: no other job can run either
                results.put({"event": "stop", "message": stop})
                return
    except KeyboardInterrupt:
        log.warning("stopping: closing the environment")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if env_box[0] is not None:
            try:
                env_box[0].close()
            except Exception:
                log.exception("closing the environment")
        if agent is not None:
            try:
                agent.close()
            except Exception:
                log.exception("closing the agent")
        kill_children(os.getpid())


def kill_children(pid: int) -> None:
    """SIGKILL what is left below ``pid`` (a QEMU whose start was interrupted); our own processes only."""
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        try:
            if "multiprocessing" in " ".join(child.cmdline()) and "resource_tracker" in " ".join(child.cmdline()):
                continue
            log.warning("killing leftover process %d (%s)", child.pid, child.name())
            child.kill()
        except psutil.Error:
            pass


def stop_workers(procs, grace_s: float = 30.0) -> None:
    """SIGTERM each live worker, wait up to ``grace_s`` for all, then kill what remains (and its VM)."""
    for proc in procs:
        if proc.is_alive():
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace_s
    for proc in procs:
        proc.join(max(0.1, deadline - time.monotonic()))
    for proc in procs:
        if proc.is_alive():
            log.error("worker %d did not stop in %.0f s: killing it and its VM", proc.pid, grace_s)
            kill_children(proc.pid)
            proc.kill()
            proc.join(5)
