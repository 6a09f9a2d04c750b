"""Prove a suite's tasks: the oracle solves each one, and the untouched start state (noop) does not.

``desktop-env tasks verify --suite evaluation_examples/test_smoke.json --num_envs 2`` runs
the oracle and the noop agent over the suite with the harness (as ``run.py --model oracle`` and
``run.py --model noop`` would, each into its own result folder under ``--result_dir``), then reads
every task's ``result.txt`` and prints one row per task:

================================  ==============================================
verdict                           meaning
================================  ==============================================
proven                            oracle scores 1.0, noop scores 0.0
infeasible ok                     the same, for a task whose right answer is FAIL
oracle fails                      oracle scored below 1.0 (or crashed: no score)
start state already passes        noop scored above 0.0: the evaluator accepts the
                                  untouched start state
solved without its GUI steps      a ``cli+gui`` task scored above 0.0 when its solution
                                  was replayed without the items marked ``essential``
not scored                        a run did not produce result.txt (see the detail)
no reference solution             the task has none (its own, a solution.sh, or one
                                  this project keeps for it): not run, not failed
cannot run here                   something stops it from running offline here
                                  (Docker, the internet...: run.py leaves it out),
                                  or its file does not load (e.g. it names a file
                                  its suite lacks)
================================  ==============================================

Only the tasks that have a reference solution and can run here are run; the other two verdicts are
reported and do not fail the verification. Tasks of another suite (the public data-science suite) find the
solutions this project keeps for them by id (:mod:`desktop_env.tasks.references`).

A ``cli+gui`` task gets a third run, ``oracle_without_essential`` (the solution without its
essential GUI items); it must score 0.0, or break (a later step cannot run without them).

Both runs resume: run.py skips tasks whose ``result.txt`` is non-empty, so rerunning the
command completes only what is missing. The exit status is 0 only when every task is
proven (or infeasible ok).
"""
from __future__ import annotations

import datetime
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from desktop_env.errors import TaskConfigError
from desktop_env.harness.config import RunConfig, RunConfigError
from desktop_env.harness.layout import RESULT_FILE, RUNTIME_LOG, STATUS_FILE, model_dir
from desktop_env.tasks.references import solution_source
from desktop_env.tasks.solution import interface_of

log = logging.getLogger(__name__)

PROVEN = "proven"
INFEASIBLE_OK = "infeasible ok"
ORACLE_FAILS = "oracle fails"
NOOP_PASSES = "start state already passes"
ESSENTIAL_NOT_NEEDED = "solved without its GUI steps"
NOT_SCORED = "not scored"
NO_SOLUTION = "no reference solution"
NOT_RUNNABLE = "cannot run here"
#: Verdicts that count as proven.
GOOD_VERDICTS = (PROVEN, INFEASIBLE_OK)
#: Verdicts of tasks that are not run: reported, never failed.
SKIP_VERDICTS = (NO_SOLUTION, NOT_RUNNABLE)
MODELS = ("oracle", "noop")
#: The third run, for ``cli+gui`` tasks only: the oracle without the solution's essential GUI items.
ABLATED = "oracle_without_essential"


@dataclass
class RunScore:
    """One model's outcome on one task, read from its result folder.

    Attributes:
        score: the float in ``result.txt``; None when there is none (not run, or crashed).
        status: ``status`` from ``status.json`` when run.py wrote one, else None.
        detail: a short reason when there is no score (status.json's error, or the last
            ERROR line of runtime.log).
        seconds: how long the task took (status.json's ``duration_s``: setup, agent and scoring), None
            when unknown.
    """

    score: float | None = None
    status: str | None = None
    detail: str = ""
    seconds: float | None = None

    @classmethod
    def read(cls, folder: Path) -> "RunScore":
        """Read ``result.txt`` (and ``status.json`` / ``runtime.log`` for failure detail) in ``folder``."""
        out = cls()
        result = folder / RESULT_FILE
        if result.is_file():
            text = result.read_text().strip()
            if text:
                try:
                    out.score = float(text)
                except ValueError:
                    out.detail = f"unreadable result.txt: {text[:60]!r}"
        status_file = folder / STATUS_FILE
        if status_file.is_file():
            try:
                status = json.loads(status_file.read_text())
                out.status = status.get("status")
                if isinstance(status.get("duration_s"), (int, float)):
                    out.seconds = float(status["duration_s"])
                if out.score is None and not out.detail:
                    out.detail = str(status.get("error") or status.get("detail") or out.status or "")
            except (ValueError, AttributeError):
                out.detail = out.detail or "unreadable status.json"
        if out.score is None and not out.detail:
            out.detail = _last_error(folder / RUNTIME_LOG) or (
                "no result.txt" if folder.is_dir() else "not run")
        return out


def _last_error(log_file: Path) -> str:
    if not log_file.is_file():
        return ""
    lines = [ln for ln in log_file.read_text(errors="replace").splitlines() if " ERROR " in ln]
    return lines[-1].split(" ERROR ", 1)[1][:200] if lines else ""


@dataclass
class TaskVerdict:
    """Oracle and noop outcomes of one task and the verdict drawn from them."""

    domain: str
    task_id: str
    infeasible: bool
    oracle: RunScore
    noop: RunScore
    #: the ``oracle_without_essential`` run of a ``cli+gui`` task, None for other tasks
    ablated: RunScore | None = None
    #: NO_SOLUTION or NOT_RUNNABLE for a task that is not run, with its reason in ``skip_reason``
    skipped: str = ""
    skip_reason: str = ""

    @property
    def ablated_score(self) -> float | None:
        """The ablated run's score; a replay that broke without the essential items counts as 0.0."""
        run = self.ablated
        if run is None:
            return None
        if run.score is None and run.status == "task_error" and "SolutionStepFailed" in run.detail:
            return 0.0
        return run.score

    @property
    def verdict(self) -> str:
        """One of PROVEN, INFEASIBLE_OK, ORACLE_FAILS, NOOP_PASSES, ESSENTIAL_NOT_NEEDED, NOT_SCORED, or
        NO_SOLUTION / NOT_RUNNABLE for a task that is not run."""
        if self.skipped:
            return self.skipped
        if self.oracle.score is not None and self.oracle.score < 1.0:
            return ORACLE_FAILS
        if self.noop.score is not None and self.noop.score > 0.0:
            return NOOP_PASSES
        if self.ablated is not None and (self.ablated_score or 0.0) > 0.0:
            return ESSENTIAL_NOT_NEEDED
        if self.oracle.score is None or self.noop.score is None or (
                self.ablated is not None and self.ablated_score is None):
            return NOT_SCORED
        return INFEASIBLE_OK if self.infeasible else PROVEN

    @property
    def ok(self) -> bool:
        return self.verdict in GOOD_VERDICTS

    @property
    def detail(self) -> str:
        if self.skipped:
            return self.skip_reason
        parts = []
        runs = [("oracle", self.oracle), ("noop", self.noop)] + ([(ABLATED, self.ablated)] if self.ablated else [])
        for name, run in runs:
            if name == ABLATED and self.ablated_score is not None:
                continue
            if run.score is None:
                parts.append(f"{name}: {run.detail}")
            elif run.status and run.status not in ("done", "scored", "ok"):
                parts.append(f"{name}: status {run.status}")
        return "; ".join(parts)


@dataclass
class VerifyTable:
    """The verdict of every task of a suite, plus when and on which image it was taken."""

    suite: Path
    rows: list[TaskVerdict] = field(default_factory=list)
    date: str = ""
    image: str = ""
    recipe_hash: str = ""
    result_dirs: dict[str, Path] = field(default_factory=dict)
    #: whether the runs applied the project's grader corrections (``--grader_corrections``)
    grader_corrections: bool = False

    @property
    def run_rows(self) -> list[TaskVerdict]:
        """The rows of tasks that are run (those with a reference solution that can run here)."""
        return [r for r in self.rows if not r.skipped]

    @property
    def all_proven(self) -> bool:
        """Every task that is run is proven, and there is at least one (the tasks not run do not count)."""
        rows = self.run_rows
        return bool(rows) and all(r.ok for r in rows)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out

    def to_text(self) -> str:
        """A plain-text table for the terminal."""
        def fmt(s, run=None):
            text = "-" if s is None else f"{s:.2f}"
            return text + (f" ({run.seconds:.0f} s)" if run is not None and run.seconds is not None else "")
        head = ("DOMAIN", "TASK", "ORACLE", "NOOP", "W/O ESSENTIAL", "VERDICT")
        body = [(r.domain, r.task_id, fmt(r.oracle.score, r.oracle), fmt(r.noop.score, r.noop),
                 fmt(r.ablated_score, r.ablated), r.verdict) for r in self.rows]
        widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [head, *body]]
        for r in self.rows:
            if not r.ok and r.detail:
                lines.append(f"  {r.domain}/{r.task_id}: {r.detail}")
        proven = sum(r.ok for r in self.rows)
        lines.append(f"{proven}/{len(self.run_rows)} tasks proven"
                     + (f" on image {self.image} (recipe hash {self.recipe_hash})" if self.image else "")
                     + self._skipped_text()
                     + ("; grader corrections on" if self.grader_corrections else ""))
        return "\n".join(lines)

    def _skipped_text(self) -> str:
        counts = self.counts()
        phrases = {NO_SOLUTION: "with no reference solution", NOT_RUNNABLE: "that cannot run here"}
        parts = [f"{counts[v]} {phrases[v]}" for v in SKIP_VERDICTS if counts.get(v)]
        return f"; not run: {', '.join(parts)}" if parts else ""

    def to_markdown(self) -> str:
        """The table for ``docs/task_verification.md``: task, oracle, noop (each with its time), verdict, date,
        recipe hash; a task that is not run has its reason in the verdict column."""
        def fmt(s, run, row):
            if run is None or row.skipped:
                return "-"
            text = "unverified" if s is None else f"{s:.1f}"
            return text + (f" ({run.seconds:.0f} s)" if run.seconds is not None else "")
        lines = [f"Suite `{self.suite.name}`, image `{self.image or '?'}`, verified {self.date}"
                 + (", with the project's grader corrections on." if self.grader_corrections else "."), "",
                 "| domain | task | oracle | noop | without essential steps | verdict | date | image recipe hash |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            verdict = f"{r.verdict}: {r.skip_reason}" if r.skipped else r.verdict
            lines.append(f"| {r.domain} | `{r.task_id}` | {fmt(r.oracle.score, r.oracle, r)} | "
                         f"{fmt(r.noop.score, r.noop, r)} | {fmt(r.ablated_score, r.ablated, r)} | "
                         f"{verdict} | {self.date} | `{self.recipe_hash or '?'}` |")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        return {"suite": str(self.suite), "date": self.date, "image": self.image, "recipe_hash": self.recipe_hash,
                "grader_corrections": self.grader_corrections,
                "tasks": [{"domain": r.domain, "task_id": r.task_id, "infeasible": r.infeasible,
                           "oracle": r.oracle.score, "noop": r.noop.score,
                           "without_essential": r.ablated_score, "verdict": r.verdict,
                           "seconds": {name: run.seconds for name, run in
                                       (("oracle", r.oracle), ("noop", r.noop), (ABLATED, r.ablated))
                                       if run is not None and run.seconds is not None},
                           "detail": r.detail} for r in self.rows]}


def result_folder(result_dir: Path, model: str, domain: str, task_id: str,
                  action_space: str = "pyautogui", observation_type: str = "screenshot") -> Path:
    """Where a run puts one task's results (the harness's layout, COMPAT section 1)."""
    return model_dir(result_dir, action_space, observation_type, model) / domain / task_id


def collect(suite: str | os.PathLike, result_dirs: dict[str, Path], examples_dir: str | os.PathLike | None = None,
            action_space: str = "pyautogui", observation_type: str = "screenshot") -> VerifyTable:
    """Build the table from existing result folders (no VM is started).

    Args:
        suite: the index file (``test_*.json``).
        result_dirs: ``{"oracle": DIR, "noop": DIR, ABLATED: DIR}``, each a run.py ``--result_dir``
            (the third is read for ``cli+gui`` tasks only).
        examples_dir: the folder holding ``<app>/<uuid>/`` (default: ``examples/`` beside the index).

    Raises:
        TaskConfigError: the index is malformed, or a listed task has no file (a task file that does not load
            is a row of its own, NOT_RUNNABLE with the error).
    """
    from desktop_env.tasks import load_index, load_task, task_file_for

    suite = Path(suite)
    examples = Path(examples_dir) if examples_dir else suite.parent / "examples"
    table = VerifyTable(suite=suite, result_dirs=dict(result_dirs))
    for domain, ids in load_index(suite).items():
        for i, task_id in enumerate(ids):
            path = task_file_for(examples, domain, task_id)
            if path is None:
                raise TaskConfigError(f"task {task_id!r} is listed but has no file under {examples / domain}",
                                      str(suite), f"{domain}[{i}]")
            try:
                task = load_task(path)
            except TaskConfigError as exc:  # e.g. it names a file its suite lacks: listed, not run
                table.rows.append(TaskVerdict(domain, task_id, False, RunScore(detail="not run"),
                                              RunScore(detail="not run"), None, NOT_RUNNABLE,
                                              f"does not load: {exc}"))
                continue
            models = MODELS + ((ABLATED,) if interface_of(task) == "cli+gui" and ABLATED in result_dirs else ())
            runs = {m: RunScore.read(result_folder(result_dirs[m], m, domain, task_id, action_space,
                                                   observation_type)) for m in models}
            skipped, reason = not_run_because(task)
            table.rows.append(TaskVerdict(domain, task_id, task.infeasible, runs["oracle"], runs["noop"],
                                          runs.get(ABLATED), skipped, reason))
    return table


def not_run_because(task) -> tuple[str, str]:
    """``(NO_SOLUTION or NOT_RUNNABLE, why)`` for a task verification does not run, else ``("", "")``.

    A task with no reference solution (its own ``solution``, a ``solution.sh``, or one this project keeps
    for its id) is not run; nor is one that cannot run offline here for a reason other than a cloud account
    (the rule run.py leaves tasks out by: :func:`desktop_env.tasks.offline.offline_blockers`).

    Raises:
        TaskConfigError: a kept solution's file is malformed.
    """
    from desktop_env.tasks.offline import ACCOUNT, offline_blockers

    blockers = [b for b in offline_blockers(task) if b.kind != ACCOUNT]
    if blockers:
        return NOT_RUNNABLE, "; ".join(map(str, blockers))
    if solution_source(task).kind == "none":
        return NO_SOLUTION, ("none in the task, and this project keeps none for its id "
                             "(desktop_env/tasks/reference_solutions/)")
    return "", ""


def runnable_tasks(suite: Path, examples_dir: Path | None = None):
    """Yield ``(domain, task_id, task)`` for each task of ``suite`` that verification runs (it loads, and
    :func:`not_run_because` finds no reason not to run it); :func:`collect` lists the others."""
    from desktop_env.tasks import load_index, load_task, task_file_for

    examples = examples_dir or suite.parent / "examples"
    for domain, ids in load_index(suite).items():
        for task_id in ids:
            path = task_file_for(examples, domain, task_id)
            if path is None:
                continue
            try:
                task = load_task(path)
            except TaskConfigError:
                continue  # collect lists it as not loading
            if not not_run_because(task)[0]:
                yield domain, task_id, task


def _runnable(suite: Path, examples_dir: Path | None, runnable: list | None):
    """``runnable`` when the caller has read the runnable tasks already, else :func:`runnable_tasks`."""
    return runnable if runnable is not None else runnable_tasks(suite, examples_dir)


def write_index(suite: Path, out: Path, examples_dir: Path | None = None, cli_gui_only: bool = False,
                runnable: list | None = None) -> int:
    """Write to ``out`` the index of ``suite``'s tasks that verification runs (:func:`runnable_tasks`, or
    ``runnable``, a list of them already read), only its ``cli+gui`` ones (what the ablated run replays) with
    ``cli_gui_only``; returns how many there are."""
    index: dict[str, list[str]] = {}
    for domain, task_id, task in _runnable(suite, examples_dir, runnable):
        if not cli_gui_only or interface_of(task) == "cli+gui":
            index.setdefault(domain, []).append(task_id)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(index, indent=1) + "\n")
    return sum(len(v) for v in index.values())


#: Seconds an attempt gets besides its solution's steps (the reset, the task's setup, scoring), see
#: :func:`default_task_timeout`.
ATTEMPT_MARGIN_S = 600.0


def default_task_timeout(suite: Path, examples_dir: Path | None = None, time_scale: float | None = None,
                         runnable: list | None = None) -> float:
    """Seconds per attempt when ``--task_timeout`` is not given: run.py's default (1800 s), or, when longer,
    :data:`ATTEMPT_MARGIN_S` plus the limit ``verify.step`` (desktop_env/limits.py) for each step of the
    longest reference solution among the tasks verification runs (:func:`runnable_tasks`, or ``runnable``, a
    list of them already read), times ``time_scale`` (default: the current ``$DESKTOP_ENV_TIME_SCALE``). Logs
    which task set it when it is above the default.

    Raises:
        TaskConfigError: a kept solution's file is malformed.
    """
    from desktop_env.harness.config import RunConfig
    from desktop_env.limits import LIMITS, scale
    from desktop_env.tasks.references import solution_source

    default = RunConfig.__dataclass_fields__["task_timeout"].default
    longest = max(((len(solution_source(task).items or ()), f"{domain}/{task_id}")
                   for domain, task_id, task in _runnable(suite, examples_dir, runnable)), default=(0, ""))
    factor = time_scale if time_scale is not None else scale()
    needed = (ATTEMPT_MARGIN_S + longest[0] * LIMITS["verify.step"][0]) * factor
    if needed <= default:
        return default
    log.info("attempts may take %.0f s: %s's reference solution has %d steps (verify.step %g s each, plus %g s; "
             "--task_timeout sets another limit)", needed, longest[1], longest[0], LIMITS["verify.step"][0],
             ATTEMPT_MARGIN_S)
    return needed


def _image_identity(path_to_vm: str | None, cache_dir: str | None) -> tuple[str, str]:
    from desktop_env.errors import DesktopEnvError
    from desktop_env.image.current import resolve

    try:
        image = resolve(path_to_vm or "base", Path(cache_dir) if cache_dir else None)
    except DesktopEnvError as exc:
        log.warning("cannot name the image for the table: %s", exc)
        return "", ""
    return image.name, str(image.meta.get("assembly_hash", ""))


def default_result_dir(suite: Path, cache_dir: str | None = None, image: str = "") -> Path:
    """``<cache>/verify/<suite name>/<image name>``: outside the repository, kept between runs, one
    folder per image (a task proven on one image is not proven on the next)."""
    from desktop_env.paths import cache_dir as cache

    return cache(cache_dir) / "verify" / suite.stem / (image or "unnamed-image")


def run_config(model: str, suite: Path, result_dir: Path, num_envs: int = 1, path_to_vm: str | None = None,
               cache_dir: str | None = None, settings: Mapping[str, Any] | None = None,
               examples_base: Path | None = None) -> RunConfig:
    """The settings of one verification run: ``model`` over ``suite`` into ``result_dir`` (as ``run.py --model
    MODEL`` would run it), its workers logging to ``result_dir/run.log``.

    Args:
        settings: more :class:`RunConfig` fields (e.g. ``{"task_timeout": 900}``).

    Raises:
        RunConfigError: a setting that cannot work.
    """
    return RunConfig(model=model, test_all_meta_path=suite, test_config_base_dir=examples_base or suite.parent,
                     result_dir=result_dir, num_envs=num_envs, path_to_vm=path_to_vm, cache_dir=cache_dir,
                     worker_log=result_dir / "run.log", **dict(settings or {}))


def run_model(config: RunConfig) -> int:
    """Run ``config`` with the harness; returns the run's exit status (run.py's).

    The run's progress lines, and its workers' logs when ``config.worker_log`` is its ``run.log``, go to
    ``config.result_dir/run.log``; progress lines also go to this logger at INFO.

    Raises:
        KeyboardInterrupt: the run was interrupted (Ctrl-C or SIGTERM); finished tasks are kept.
    """
    from desktop_env.harness.suite import run_suite

    model, result_dir = config.model, config.result_dir
    result_dir.mkdir(parents=True, exist_ok=True)
    log.info("running %s over %s into %s", model, config.test_all_meta_path, result_dir)
    with open(result_dir / "run.log", "a") as out:
        def report(line: str, error: bool = False) -> None:
            out.write(line + "\n")
            out.flush()
            if error or not line.startswith(("started ", "\n")):  # the per-task starts and the summary: run.log only
                log.log(logging.WARNING if error else logging.INFO, "%s: %s", model, line.strip()[:300])

        outcome = run_suite(config, report)
    if outcome.exit_code == 130:
        raise KeyboardInterrupt(f"the {model} run was interrupted")
    return outcome.exit_code


def verify(suite: str | os.PathLike, result_dir: str | os.PathLike | None = None, num_envs: int = 1,
           path_to_vm: str | None = None, cache_dir: str | None = None, settings: Mapping[str, Any] | None = None,
           models: tuple[str, ...] = MODELS, examples_base: str | os.PathLike | None = None) -> VerifyTable:
    """Run the oracle and noop over ``suite`` (resuming what exists) and return the table.

    Args:
        suite: the index file (``evaluation_examples/test_*.json``).
        result_dir: holds ``oracle/``, ``noop/`` and, when the suite has ``cli+gui`` tasks,
            ``oracle_without_essential/`` (run.py result folders); default :func:`default_result_dir` (a folder
            of its own when ``settings`` turn grader corrections on).
        num_envs: VMs per run.
        path_to_vm: image name, profile or folder (default: newest ``base``).
        settings: more :class:`~desktop_env.harness.config.RunConfig` fields for every run (e.g.
            ``{"task_timeout": 900}``).
        models: which runs to (re)start (the ablated run follows when any is started and the suite
            has ``cli+gui`` tasks); the table always reads them all.
        examples_base: the folder holding ``examples/`` (default: the suite's folder), for an index
            written elsewhere (a sample of a suite).

    Raises:
        TaskConfigError: the suite does not load (checked before any VM starts).
        RunConfigError: a setting of the runs cannot work (checked before any VM starts).
    """
    suite = Path(suite).resolve()
    if not suite.is_file():
        raise TaskConfigError("the suite index file does not exist; give --suite evaluation_examples/test_*.json",
                              str(suite))
    image, recipe_hash = _image_identity(path_to_vm, cache_dir)
    corrected = bool(dict(settings or {}).get("grader_corrections"))
    base = Path(result_dir).expanduser().resolve() if result_dir else default_result_dir(
        suite, cache_dir, image + ("+grader-corrections" if corrected else ""))
    dirs = {m: base / m for m in (*MODELS, ABLATED)}
    examples_base = Path(examples_base).resolve() if examples_base else suite.parent
    ablated_index, run_index = base / f"{ABLATED}.index.json", base / "runnable.index.json"
    examples = examples_base / "examples"
    collect(suite, dirs, examples)  # a broken suite is refused before anything boots
    runnable = list(runnable_tasks(suite, examples))  # each task file read once for what follows
    settings = dict(settings or {})
    if settings.get("task_timeout") is None:  # long solutions get the time their steps need
        settings["task_timeout"] = default_task_timeout(suite, examples, settings.get("time_scale"), runnable)
    # every run's settings are checked, as the suite is, before anything boots
    configs = {m: run_config(m, ablated_index if m == ABLATED else run_index, dirs[m], num_envs, path_to_vm,
                             cache_dir, settings, examples_base) for m in dirs}
    crashed = {}
    if not write_index(suite, run_index, runnable=runnable):
        log.warning("no task of %s has a reference solution and can run here: nothing to run", suite)
        models = ()
    if models and write_index(suite, ablated_index, cli_gui_only=True, runnable=runnable):
        models = (*models, ABLATED)
    for model in models:
        rc = run_model(configs[model])
        if rc != 0:
            log.warning("the %s run exited %d (details in %s)", model, rc, dirs[model] / "run.log")
            lines = (dirs[model] / "run.log").read_text(errors="replace").strip().splitlines()
            crashed[model] = f"the run exited {rc}: {lines[-1][:200] if lines else 'no output'}"
    table = collect(suite, dirs, examples)
    for row in table.rows:  # a run.py that died before the task: say why instead of "not run"
        for model, why in crashed.items():
            run = row.ablated if model == ABLATED else getattr(row, model)
            if run is not None and run.score is None and run.detail == "not run":
                run.detail = why
    table.date = datetime.date.today().isoformat()
    table.image, table.recipe_hash = image, recipe_hash
    table.grader_corrections = corrected
    return table


# -- CLI ----------------------------------------------------------------------------------
def add_arguments(parser) -> None:
    """The flags of ``desktop-env tasks verify``."""
    parser.add_argument("--suite", required=True, help="index file, e.g. evaluation_examples/test_smoke.json")
    parser.add_argument("--num_envs", type=int, default=1, help="VMs per run (default 1)")
    parser.add_argument("--result_dir", default=None,
                        help="results folder, kept between runs (default <cache>/verify/<suite name>/<image name>); "
                             "a folder holding another image's results is refused")
    parser.add_argument("--path_to_vm", default=None, help="image name, profile or folder (default newest base)")
    parser.add_argument("--cache_dir", default=None, help="image and runtime cache (default ~/.cache/desktop-env)")
    parser.add_argument("--task_timeout", type=float, default=None,
                        help="seconds per task attempt (default: run.py's 1800, or more for a long reference "
                             "solution: 600 plus verify.step, 45, per step of the longest one)")
    parser.add_argument("--time_scale", type=float, default=None,
                        help="multiply every named time limit (desktop_env/limits.py) by this, for a slower host")
    parser.add_argument("--grader_corrections", action="store_true",
                        help="apply the project's corrections of other suites' graders (run.py's flag); the table "
                             "says so. Keep such results in their own --result_dir")
    parser.add_argument("--markdown", default=None, help="also write the table as markdown to this file")
    parser.add_argument("--json", default=None, help="also write the table as JSON to this file")
    parser.add_argument("--no-run", dest="run", action="store_false",
                        help="only read existing results (no VM is started)")


def cmd_verify(args) -> int:
    """``tasks verify``: run both models, print the table, exit 0 only when every task is proven."""
    settings = {name: getattr(args, name) for name in ("task_timeout", "time_scale", "grader_corrections")
                if getattr(args, name)}
    try:
        table = verify(args.suite, args.result_dir, args.num_envs, args.path_to_vm, args.cache_dir, settings,
                       models=MODELS if args.run else ())
    except (TaskConfigError, RunConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(table.to_text())
    if args.markdown:
        Path(args.markdown).write_text(table.to_markdown())
        print(f"markdown table written to {args.markdown}")
    if args.json:
        Path(args.json).write_text(json.dumps(table.to_json(), indent=1) + "\n")
    return 0 if table.all_proven else 1
