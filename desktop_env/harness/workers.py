"""Worker processes: one environment (VM) each, taking jobs from a queue until told to stop.

A worker turns SIGTERM and SIGINT into a clean stop (the VM is closed, the job's status says
``interrupted``) and SIGALRM into :class:`TaskTimeout`. What it leaves behind (a QEMU whose start was
interrupted) is killed on the way out.
"""
from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

from desktop_env.harness.jobs import run_job
from desktop_env.harness.layout import RUNTIME_LOG
from desktop_env.harness.status import TaskTimeout

log = logging.getLogger(__name__)


def agent_options(args) -> dict:
    """The keyword options ``create_agent`` gets from the run's options."""
    return dict(action_space=args.action_space, observation_type=args.observation_type,
                max_trajectory_length=args.max_trajectory_length, a11y_tree_max_tokens=args.a11y_tree_max_tokens,
                temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                model_screen=args.model_screen_size, base_url=args.base_url, api_key_env=args.api_key_env,
                seed=args.seed, agent=getattr(args, "agent", "prompted"),
                **({"tool_version": args.tool_version} if getattr(args, "tool_version", None) else {}),
                **({"coords": args.coords} if getattr(args, "coords", None) else {}))


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


def worker(args, jobs, results) -> None:
    """One process, one environment: takes jobs until None; SIGTERM/SIGINT close the VM and exit.

    Puts ``{"event": "started", domain, task_id, trial}`` and ``{"event": "finished", "status": ...}``
    on ``results`` for each job, and ``{"event": "stop", "message"}`` before it exits when the model
    API refused the run's key (the parent then stops every worker).
    """
    from desktop_env.agents import create_agent
    from desktop_env.envs import DesktopEnv

    log_file = getattr(args, "worker_log", None)  # tasks verify keeps worker logs in its run.log
    configure_logging(getattr(args, "log_level", "INFO"), log_file)

    def on_stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt(f"signal {signum}")

    def on_alarm(signum, frame):
        raise TaskTimeout(f"task attempt exceeded --task_timeout {args.task_timeout:g} s")

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGALRM, on_alarm)
    screen = (args.screen_width, args.screen_height) if args.screen_width else None
    env_box: list = [None]

    def new_env():
        return DesktopEnv(provider_name=args.provider_name, path_to_vm=args.path_to_vm, action_space=args.action_space,
                          screen_size=screen, require_a11y_tree=args.observation_type != "screenshot",
                          max_steps=args.max_steps, cache_dir=args.cache_dir,
                          download_mirror=getattr(args, "download_mirror", None),
                          snapshot_name=getattr(args, "snapshot_name", None) or "init_state",
                          **({"hosts": args.hosts} if args.hosts else {}))

    agent = None
    try:
        agent = create_agent(args.model, **agent_options(args))
        while True:
            job = jobs.get()
            if job is None:
                return
            results.put({"event": "started", **{k: job[k] for k in ("domain", "task_id", "trial")}})
            Path(job["folder"]).mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(Path(job["folder"]) / RUNTIME_LOG, mode="a")
            handler.setLevel(logging.getLogger().level)
            handler.setFormatter(logging.Formatter(LOG_FORMAT))
            logging.getLogger().addHandler(handler)
            try:
                status = run_job(job, args, agent, env_box, new_env)
            finally:
                logging.getLogger().removeHandler(handler)
                handler.close()
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
