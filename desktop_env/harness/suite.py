"""A whole run: plan the jobs, start the workers, follow their progress, write the manifest and summary.

:func:`run_suite` is what ``python run.py`` does after parsing its flags, and what
``desktop-env tasks verify`` calls for the oracle and noop runs. It does not print: each progress
line goes to ``report`` (run.py prints them; verify logs them and keeps them in ``run.log``).
"""
from __future__ import annotations

import logging
import multiprocessing
import queue
import signal
import time
from dataclasses import dataclass, replace
from typing import Callable

from desktop_env.harness.config import RunConfig
from desktop_env.harness.jobs import Job, model_folder, plan_jobs, split_by_image
from desktop_env.harness.layout import SUMMARY_FILE, now_iso, write_json_atomic
from desktop_env.harness.progress import progress_line, read_back, started_line
from desktop_env.harness.summary import earlier_image, format_summary, image_key, image_state, summarize, write_manifest
from desktop_env.harness.workers import agent_options, stop_workers, worker

log = logging.getLogger(__name__)

#: ``report(line, error=False)``: one human-readable line of progress (``error``: it belongs on stderr).
Report = Callable[..., None]


@dataclass
class RunOutcome:
    """How a run ended.

    Attributes:
        exit_code: 0 when every planned task has a scored final status; 1 when some are infrastructure,
            task or evaluator errors or did not run; 2 when the run could not start; 130 when interrupted.
        summary: summary.json's content (None when the run could not start).
    """

    exit_code: int
    summary: dict | None = None


def _log_report(line: str, error: bool = False) -> None:
    log.log(logging.ERROR if error else logging.INFO, "%s", line)


def run_suite(config: RunConfig, report: Report = _log_report) -> RunOutcome:
    """Run ``config.model`` over the suite ``config.test_all_meta_path`` into ``config.result_dir``; resumable.

    Args:
        config: the run's settings (run.py's flags through :func:`desktop_env.harness.options.parse_args`, or
            made directly); its ``time_scale``, when set, is exported to this process and its workers
            (:meth:`RunConfig.apply_time_scale`).
        report: receives each progress line (default: this module's logger).
    """
    from desktop_env.agents import create_agent
    from desktop_env.errors import DesktopEnvError

    started = now_iso()
    config.apply_time_scale()
    try:
        create_agent(config.model, **agent_options(config)).close()
        plan = plan_jobs(config)
    except DesktopEnvError as exc:
        report(f"error: {exc}", error=True)
        return RunOutcome(2)
    if plan.needing_account:
        report(f"{plan.needing_account} tasks need a cloud account: their setup and evaluator reach the vendor from "
               "this host with your settings files, but the guest has no route to the internet in this release "
               "(docs/image.md), so an agent cannot reach the vendor from the VM; --exclude_account skips them")
    if plan.excluded_offline:
        from desktop_env.tasks.offline import counts_text

        report(f"{sum(plan.excluded_offline.values())} tasks cannot run offline here and are left out "
               f"({counts_text(plan.excluded_offline)}); `desktop-env tasks check "
               f"{config.test_all_meta_path}` gives each one's reasons, --include_unrunnable runs them anyway")
    todo, records = plan.todo, plan.records
    try:
        image = image_state(config)
    except DesktopEnvError as exc:
        if todo:
            report(f"error: {exc}", error=True)
            return RunOutcome(2)
        image = {"error": str(exc)}
    folder = model_folder(config)
    done = sum(1 for r in records.values() if r.get("final"))
    before = earlier_image(folder, image) if done else None
    if before:
        report(f"error: {folder} holds {done} results made on the image {before!r} (its manifest.json) "
               f"and this run uses {image_key(image)!r}: results of two images do not mix, and a task done on "
               "one is not done on the other. Give another --result_dir (or remove that folder to start over).",
               error=True)
        return RunOutcome(2)
    todo, wrong_image = split_by_image(todo, image)
    for need, n in sorted(wrong_image.items()):
        report(f"{n} task runs need the {need!r} image (their \"snapshot\") and the image is "
               f"{image.get('name')!r} (profile {image.get('profile')!r}): skipped; run them with "
               f"--path_to_vm {need} (build it with `desktop-env image build --profile {need}`)")
    try:
        warm = prepare_warm_states(config, todo, report)
    except DesktopEnvError as exc:
        report(f"error: {exc}", error=True)
        return RunOutcome(2)
    if warm:
        image["warm_states"] = warm
    if todo and not config.ray:  # a cluster's nodes advertise the slots their memory holds
        config = cap_to_memory(config, len(todo), sorted(warm), report)
    total = len(todo) + done
    skipped = f", {plan.excluded} needing an account skipped" if plan.excluded else ""
    if plan.excluded_offline:
        skipped += f", {sum(plan.excluded_offline.values())} that cannot run offline left out"
    report(f"{total} tasks: {total - len(todo)} already done, {len(todo)} to run on "
           f"{min(config.num_envs, len(todo)) or config.num_envs} environment(s){skipped}")
    write_manifest(folder, config, image, started, None)

    interrupted = False
    if todo and config.ray:
        from desktop_env.harness.ray_jobs import run_jobs_on_ray

        interrupted = run_jobs_on_ray(config, todo, records, report, config.ray)
    elif todo:
        interrupted = _run_jobs(config, todo, records, report)
    not_run = [job for job in todo if job.key not in records]
    summary = summarize(config, list(records.values()), not_run, plan.excluded, wrong_image, plan.excluded_offline)
    write_json_atomic(folder / SUMMARY_FILE, summary)
    write_manifest(folder, config, image, started, now_iso(), interrupted)
    report("\n" + format_summary(summary))
    if interrupted:
        return RunOutcome(130, summary)
    failed = summary["infra_errors"] or summary["task_errors"] or summary["evaluator_errors"] or not_run
    return RunOutcome(1 if failed else 0, summary)


def prepare_warm_states(config: RunConfig, todo: list[Job], report: Report) -> dict:
    """Build, before the first episode, the warm states the ``todo`` tasks restore (one VM, one state
    at a time; a current state is reused): each task's own, or ``--snapshot_name`` for all of them. Returns ``{state: {"tasks", "reused", "build_s"}}`` for the
    manifest.

    Raises:
        DesktopEnvError: tasks name a ``profile:state`` and the provider cannot restore warm states
            (said at plan time, before any episode), or a state's build failed.
    """
    tasks = [job.task for job in todo if job.task is not None]
    override = config.snapshot_name
    if override == "init_state":  # the default snapshot: each task's own state decides
        override = None
    if not tasks or not (override or any(t.warm_state for t in tasks)):
        return {}
    from desktop_env.envs.warm import build_missing_states, check_without_warm_states, states_needed
    from desktop_env.errors import DesktopEnvError
    from desktop_env.registry import PROVIDERS

    if override:  # --snapshot_name: every task starts from that state, whatever its own snapshot
        if not PROVIDERS[config.provider_name].warm_states:
            raise DesktopEnvError(f"--snapshot_name {override}: the {config.provider_name} provider has no warm "
                                  "states")
        used, missing = {override: len(tasks)}, {}
    elif not PROVIDERS[config.provider_name].warm_states:
        named = check_without_warm_states(tasks, config.provider_name)
        report(f"{len(named)} tasks name a snapshot the {config.provider_name} provider has no warm states for: "
               "they start from init_state")
        return {}
    from desktop_env.image.current import resolve

    image = resolve(config.path_to_vm or "base", config.cache_dir)
    if not override:
        used, missing = states_needed(tasks, image)
    for name, n in sorted(missing.items()):
        report(f"{n} tasks name the snapshot {name!r}, which image {image.name} has no warm state of: they start "
               "from init_state")
    if not used:
        return {}
    report(f"warm states these tasks start from: {', '.join(f'{k} ({v} tasks)' for k, v in sorted(used.items()))}; "
           "those not built yet are built before the first episode")
    built = build_missing_states(image, sorted(used), report, cache_dir=config.cache_dir,
                                 provider_name=config.provider_name)
    return {name: {"tasks": used[name], "reused": row["reused"], "build_s": row["build_s"]}
            for name, row in built.items()}


def cap_to_memory(config: RunConfig, tasks: int, warm_states: list[str], report: Report) -> RunConfig:
    """``config`` with ``num_envs`` lowered to the environments of the run's image that fit in this host's free
    memory (desktop_env.image.capacity), restored from ``init_state`` and ``warm_states``, reporting why; unchanged
    for a provider whose VMs do not run on this host."""
    from desktop_env.registry import PROVIDERS

    wanted = min(config.num_envs, tasks)
    provider = PROVIDERS[config.provider_name]
    if wanted < 2 or not (provider.images and provider.local_memory):
        return config
    from desktop_env.image.capacity import cap_envs, capacity
    from desktop_env.image.current import resolve

    fit = capacity(resolve(config.path_to_vm or "base", config.cache_dir), ["init_state", *warm_states])
    log.info("memory: %s", fit.explain())
    allowed, message = cap_envs(wanted, fit)
    if message:
        report(message)
    return replace(config, num_envs=allowed) if allowed < wanted else config


def _run_jobs(config: RunConfig, todo: list[Job], records: dict, report: Report) -> bool:
    """Run ``todo`` on ``config.num_envs`` workers, adding each status to ``records``; True when interrupted."""
    ctx = multiprocessing.get_context("spawn")
    jobs, results = ctx.Queue(), ctx.Queue()
    for job in todo:
        jobs.put(job)
    n = min(config.num_envs, len(todo))
    for _ in range(n):
        jobs.put(None)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    interrupted = False
    old_term = signal.signal(signal.SIGTERM, on_term)
    procs = [ctx.Process(target=worker, args=(config, jobs, results), daemon=False) for _ in range(n)]
    for proc in procs:
        proc.start()
    t0, finished, wins = time.monotonic(), 0, 0
    stopped = None
    try:
        while finished < len(todo):
            try:
                msg = results.get(timeout=2)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    report("error: every worker exited before the queue was done (see the log above)", error=True)
                    break
                continue
            if msg["event"] == "stop":
                report(f"error: {msg['message']}", error=True)
                stopped = msg["message"]
                stop_workers(procs)
                break
            if msg["event"] == "started":
                report(started_line(config, msg["domain"], msg["task_id"], msg["trial"]))
                continue
            s = msg["status"]
            records[(s["domain"], s["task_id"], s["trial"])] = s
            finished += 1
            wins += s["status"] == "success"
            report(progress_line(config, s, finished, len(todo), wins, time.monotonic() - t0))
    except (KeyboardInterrupt, BrokenPipeError):  # a signal, or whoever reads our output is gone
        interrupted = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            report("interrupted: stopping the environments (finished tasks are kept; rerun to complete)", error=True)
        except OSError:  # stderr is a pipe whose reader died (the usual reason for the signal): stop anyway
            pass
        stop_workers(procs)
    finally:
        for proc in procs:
            proc.join(60)
        # jobs no worker took are dropped: otherwise the queue's feeder thread, blocked on a full pipe
        # that nobody reads any more, held the process at exit forever (after an interrupt, or when
        # every worker had died)
        jobs.cancel_join_thread()
        signal.signal(signal.SIGTERM, old_term)
    read_back(todo, records)  # statuses written by workers that were interrupted after the last message
    return interrupted
