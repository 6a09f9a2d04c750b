"""The job plan (which task trials a run still owes) and one job's attempts, retries and final status."""
from __future__ import annotations

import logging
import signal
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_env.harness.config import RunConfig
from desktop_env.harness.episode import run_episode
from desktop_env.harness.layout import (RESULT_FILE, STATUS_FILE, count_steps, model_dir, now_iso, task_dir,
                                        write_atomic, write_json_atomic)
from desktop_env.harness.status import (HOST_ERRNOS, Status, TaskTimeout, UnreadableStatus, classify, infra_errors,
                                        read_status)

if TYPE_CHECKING:
    from desktop_env.tasks import TaskSpec

log = logging.getLogger(__name__)


def model_folder(config: RunConfig) -> Path:
    """The run's model folder under ``config.result_dir``."""
    return model_dir(config.result_dir, config.action_space, config.observation_type, config.model)


def job_folder(config: RunConfig, domain: str, task_id: str, trial: int = 1) -> Path:
    """One (task, trial)'s result folder in this run."""
    return task_dir(model_folder(config), domain, task_id, trial, config.trials)


@dataclass
class Job:
    """One unit of a run's work: one trial of one task, which a worker process takes from a queue (so plain,
    picklable fields).

    Attributes:
        domain, task_id, trial: which task and which of its ``trials`` (from 1).
        path: the task file.
        folder: the trial's result folder.
        task: the loaded task, None when its file did not load (the worker records that as task_error).
    """

    domain: str
    task_id: str
    trial: int
    path: Path
    folder: Path
    task: TaskSpec | None = None

    @property
    def tags(self) -> list[str]:
        """The task's tags ([] when it did not load)."""
        return list(self.task.tags) if self.task is not None else []

    @property
    def related_apps(self) -> list[str]:
        """The task's related apps ([] when it did not load)."""
        return list(self.task.related_apps) if self.task is not None else []

    @property
    def image_profile(self) -> str | None:
        """The image profile the task needs (``TaskSpec.image_profile``); None for any, or when it did not load."""
        return self.task.image_profile if self.task is not None else None

    @property
    def key(self) -> tuple[str, str, int]:
        """``(domain, task_id, trial)``: how a run's records are keyed."""
        return self.domain, self.task_id, self.trial

    def meta(self) -> dict:
        """What a record of this job holds besides its status: domain, task_id, trial, tags, related_apps and
        image_profile."""
        return {"domain": self.domain, "task_id": self.task_id, "trial": self.trial, "tags": self.tags,
                "related_apps": self.related_apps, "image_profile": self.image_profile}


@dataclass
class Plan:
    """What a run must do.

    Attributes:
        todo: the jobs to run.
        records: known statuses by ``(domain, task_id, trial)`` (final ones are not run again), each with the
            job's :meth:`Job.meta`.
        excluded: tasks skipped because they need a cloud account (``exclude_account``).
        excluded_offline: tasks left out because something other than an account stops them from running
            offline here (:func:`desktop_env.tasks.offline.offline_blockers`), by the kind of their first
            reason: ``{"docker": 10, "astro": 22}``; none with ``include_unrunnable``.
        needing_account: tasks in the plan that need a cloud account.
    """

    todo: list[dict] = field(default_factory=list)
    records: dict = field(default_factory=dict)
    excluded: int = 0
    excluded_offline: dict[str, int] = field(default_factory=dict)
    needing_account: int = 0


def plan_jobs(config: RunConfig) -> Plan:
    """The jobs of ``config.test_all_meta_path`` this run still owes.

    A (task, trial) with a final status (or a legacy non-empty result.txt) is not run again;
    one with ``infra_error`` or no status is. A task that cannot run offline here (Docker, the Astro CLI,
    a fetch from the internet...: :func:`desktop_env.tasks.offline.offline_blockers`) is left out unless
    ``config.include_unrunnable``; one that needs a cloud account is governed by ``config.exclude_account``.

    Raises:
        TaskConfigError: the index is malformed or lists a task with no file.
    """
    from desktop_env.errors import TaskConfigError
    from desktop_env.tasks import load_index, load_task, task_file_for
    from desktop_env.tasks.offline import ACCOUNT, offline_blockers

    index = load_index(config.test_all_meta_path)
    examples = config.test_config_base_dir / "examples"
    plan = Plan()
    for domain, ids in index.items():
        if config.domain != "all" and domain != config.domain:
            continue
        for task_id in ids:
            path = task_file_for(examples, domain, task_id)
            if path is None:
                raise TaskConfigError(f"task {domain}/{task_id} has no file under {examples} (folder or flat "
                                      "layout); fix the index or --test_config_base_dir",
                                      str(config.test_all_meta_path), domain)
            task = None
            try:
                task = load_task(path, grader_corrections=config.grader_corrections)
                if config.exclude_account and task.needs_account:
                    plan.excluded += 1
                    continue
                if not config.include_unrunnable:
                    # an account is the user's to give (settings files), so it alone does not leave a task out
                    blockers = [b for b in offline_blockers(task, config.download_mirror is not None)
                                if b.kind != ACCOUNT]
                    if blockers:
                        kind = blockers[0].kind
                        plan.excluded_offline[kind] = plan.excluded_offline.get(kind, 0) + 1
                        continue
                if task.needs_account:
                    plan.needing_account += 1
            except TaskConfigError:
                pass  # the worker records it as task_error
            feasible = None if task is None else not task.infeasible
            for trial in range(1, config.trials + 1):
                job = Job(domain, task_id, trial, Path(path), job_folder(config, domain, task_id, trial), task)
                try:
                    status = read_status(job.folder, feasible)
                except UnreadableStatus as exc:
                    log.warning("%s: the task runs again", exc)
                    status = None
                if status is not None:
                    plan.records[job.key] = {**job.meta(), **status, "trial": trial}
                if status is not None and status.get("final"):
                    continue
                plan.todo.append(job)
    return plan


def split_by_image(todo: list[Job], image: dict) -> tuple[list[Job], dict[str, int]]:
    """(jobs this image can run, {profile: number of jobs skipped because they need it}).

    A job whose task needs an image profile (``TaskSpec.image_profile``) needs that profile or one
    extending it (a ``data`` task does not run on ``base``; a ``base`` task runs on ``data``).
    """
    from desktop_env.tasks.offline import profiles_provided

    profile = image.get("profile")
    if not profile:
        return todo, {}
    provided = profiles_provided(profile)
    runnable, skipped = [], {}
    for job in todo:
        need = job.image_profile
        if need and need not in provided:
            skipped[need] = skipped.get(need, 0) + 1
        else:
            runnable.append(job)
    return runnable, skipped


def run_job(job: Job, config: RunConfig, agent, env_box: list, new_env) -> dict:
    """One task (one trial) with retries; writes status.json (and result.txt when scored); returns the status.

    ``env_box[0]`` is the worker's environment, made with ``new_env()`` when missing and dropped
    (closed) after a failure that may have left the VM in a bad state. The attempt's time limit
    is ``config.task_timeout``, enforced by SIGALRM (the worker turns it into :class:`TaskTimeout`).
    When the model API refuses the run's key for good, the returned status also holds ``stop_run``:
    the message the whole run stops with (not written to status.json; the task stays to be rerun).
    """
    from desktop_env.agents.llm import REFUSED, REJECTED, ModelAPIError
    from desktop_env.errors import AgentError, EvaluatorError, TaskConfigError
    from desktop_env.tasks import load_task

    folder = job.folder
    folder.mkdir(parents=True, exist_ok=True)
    status = {"task_id": job.task_id, "domain": job.domain, "model": config.model, "trial": job.trial,
              "action_space": config.action_space, "observation_type": config.observation_type,
              "status": Status.INFRA_ERROR.value, "final": False, "score": None, "reason": None, "steps": 0,
              "duration_s": 0.0, "attempts": 0, "error": None, "started": now_iso(), "finished": None,
              "tags": job.tags, "related_apps": job.related_apps, "grader_corrections": config.grader_corrections}
    t0 = time.monotonic()
    infra = infra_errors()

    def close_env():
        if env_box[0] is not None:
            try:
                env_box[0].close()
            except Exception:
                log.exception("closing the environment")
            env_box[0] = None

    def stop_alarm():
        signal.setitimer(signal.ITIMER_REAL, 0)

    def ended(outcome: Status, **fields):
        stop_alarm()
        status.update(status=outcome.value, final=outcome.final, steps=count_steps(folder), **fields)

    try:
        # a task that did not load in the plan raises here
        task = job.task or load_task(job.path, grader_corrections=config.grader_corrections)
        status["tags"], status["related_apps"] = list(task.tags), list(task.related_apps)
        if task.correction:
            status["grader_correction"] = task.correction
        feasible = not task.infeasible
        for attempt in range(config.retries + 1):
            status["attempts"] = attempt + 1
            try:
                if env_box[0] is None:
                    env_box[0] = new_env()
                    env_box[0].reset()  # boots the VM: not counted in the task's time
                deadline = time.monotonic() + config.task_timeout
                signal.setitimer(signal.ITIMER_REAL, config.task_timeout)
                episode = run_episode(env_box[0], agent, task, config, folder, deadline)
                stop_alarm()
                outcome = classify(episode["score"], episode["last_type"], episode["last_parse_error"], feasible)
                status.update(score=episode["score"], reason=episode.get("reason"), steps=episode["steps"],
                              final=True, error=None, status=outcome.value)
                if episode.get("postconfig_errors"):
                    status["postconfig_errors"] = episode["postconfig_errors"]
                break
            except TaskTimeout as exc:
                ended(Status.TIMEOUT, score=0.0, error=str(exc))
                log.error("task %s: %s", job.task_id, exc)
                close_env()  # the VM may be mid-action: start the next task on a fresh one
                break
            except AgentError as exc:
                # the agent's own code raised: its failure, scored 0 and counted in the success rate
                ended(Status.AGENT_ERROR, score=0.0, error=str(exc), traceback=exc.traceback_tail)
                log.error("task %s: the agent failed:\n%s", job.task_id, exc.traceback_tail)
                break
            except TaskConfigError as exc:
                ended(Status.TASK_ERROR, error=f"{type(exc).__name__}: {exc}")
                log.error("task %s is broken: %s", job.task_id, exc)
                break
            except EvaluatorError as exc:
                # a grader bug: no score, so it never looks like the agent's failure
                ended(Status.EVALUATOR_ERROR, score=None, error=str(exc), traceback=exc.traceback_tail)
                log.error("task %s: the evaluator failed (not scored): %s\n%s", job.task_id, exc,
                          exc.traceback_tail)
                break
            except ModelAPIError as exc:
                if exc.kind == REJECTED:  # this request's content or size: the agent's failure
                    ended(Status.AGENT_ERROR, score=0.0, error=f"the model API rejected the request: {exc}")
                    log.error("task %s: the model API rejected the agent's request: %s", job.task_id, exc)
                    break
                ended(Status.INFRA_ERROR, score=None, error=f"{type(exc).__name__}: {exc}")
                if exc.kind == REFUSED:  # no request will do: stop the whole run, rerun it once fixed
                    status["stop_run"] = refused_message(config, exc)
                    log.error("task %s: %s", job.task_id, status["stop_run"])
                    break
                log.error("task %s attempt %d: the model API failed after its retries: %s", job.task_id,
                          attempt + 1, exc)  # the VM is fine when only the model API failed
            except infra as exc:
                ended(Status.INFRA_ERROR, score=None, error=f"{type(exc).__name__}: {exc}")
                log.error("task %s attempt %d: infrastructure failure:\n%s", job.task_id, attempt + 1,
                          traceback.format_exc())
                close_env()
            except OSError as exc:
                if exc.errno not in HOST_ERRNOS:
                    raise
                # The host's disk is full or read-only: not the task's fault; a rerun retries it.
                ended(Status.INFRA_ERROR, score=None, error=f"host: {exc}")
                log.error("task %s: host failure, not retried now: %s", job.task_id, exc)
                break
            except Exception as exc:  # a setup step or evaluator that cannot work: the task is broken
                ended(Status.TASK_ERROR, error=_task_error_text(exc, task))
                log.error("task %s failed:\n%s", job.task_id, traceback.format_exc())
                break
    except TaskConfigError as exc:
        status.update(status=Status.TASK_ERROR.value, final=True, error=f"{type(exc).__name__}: {exc}")
        log.error("task %s cannot run: %s", job.task_id, exc)
    except KeyboardInterrupt:
        stop_alarm()
        status.update(status=Status.INFRA_ERROR.value, final=False, score=None,
                      error="interrupted; rerun to complete", steps=count_steps(folder))
        raise
    finally:
        status["duration_s"] = round(time.monotonic() - t0, 2)
        status["finished"] = now_iso()
        try:
            if status["final"] and status["score"] is not None:
                write_atomic(folder / RESULT_FILE, f"{status['score']}\n")
            write_json_atomic(folder / STATUS_FILE, {k: v for k, v in status.items() if k != "stop_run"})
        except OSError as exc:  # e.g. the results disk is full: nothing half-written counts as done
            (folder / RESULT_FILE).unlink(missing_ok=True)
            log.error("task %s: could not write its results in %s: %s", job.task_id, folder, exc)
            status.update(status=Status.INFRA_ERROR.value, final=False, score=None,
                          error=f"results not written: {exc}")
    return status


def refused_message(config, exc) -> str:
    """The one message a run stops with when the model API refuses its key, rights or model name."""
    from desktop_env.agents.llm import default_key_env

    env_name = config.api_key_env or default_key_env(config.model)
    return (f"the model API refused the run ({exc.status or 'no answer'}): {exc}. No task can run: check the key in "
            f"{env_name} (export {env_name}=...), or name another variable with --api_key_env, and that it may use "
            f"the model {config.model!r}; then rerun the same command to resume")


def _task_error_text(exc: Exception, task) -> str:
    """``Type: message`` of a task's failure; a setup step's also names the task file and the step
    (``file F, field config[2]``), as a failing solution step's does."""
    from desktop_env.errors import in_task_file

    where = getattr(exc, "where", None)
    return f"{type(exc).__name__}: " + (in_task_file(str(exc), str(task.path or task.id), where) if where else str(exc))
