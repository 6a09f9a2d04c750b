"""Run an agent over a task suite: `python run.py --model oracle --test_all_meta_path evaluation_examples/test_smoke.json`.

Models: built-in agents `oracle` (replays each task's reference solution), `noop` (DONE at
once), `random` (random computer_13 actions, --seed) and `human` (you, through noVNC);
any other name is a chat model: `claude-*` through the Anthropic SDK (ANTHROPIC_API_KEY),
everything else through the OpenAI SDK (OPENAI_API_KEY, or --api_key_env; --base_url for
vLLM, Ollama, LM Studio or another compatible server). Models see the screen resized to
--model_screen and their coordinates are mapped back to the real screen.

Results go to <result_dir>/<action_space>/<observation_type>/<model>/<domain>/<task_id>/
(with --trials K > 1: .../<task_id>/trial_<k>/): traj.jsonl, step_<n>_<timestamp>.png,
result.txt (the score), status.json (status, score, steps, times, attempts), runtime.log,
recording.mp4 (--record); manifest.json and summary.json in the model folder. Rerunning
the same command resumes: tasks with a final status are skipped, infrastructure failures
are retried. Ctrl-C or SIGTERM stops the VMs and keeps finished tasks.
"""
from __future__ import annotations

import argparse
import errno
import datetime
import json
import logging
import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

log = logging.getLogger("run")
ROOT = Path(__file__).resolve().parent

#: Host-side errors (full or read-only disk, I/O error) that are infrastructure failures, not task errors.
HOST_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)
#: Statuses a rerun does not repeat; ``infra_error`` is the only one it retries.
FINAL_STATUSES = ("success", "agent_fail", "wrong_result", "parse_error", "timeout", "task_error", "evaluator_error")
#: Final statuses that carry no score and stay out of the success rate: the task or its grader is at fault.
UNSCORED_STATUSES = ("task_error", "evaluator_error")
BUILTIN_HELP = "oracle, noop, random, human"


def config(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse run.py's flags (``argv`` defaults to the command line)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env = p.add_argument_group("environment")
    env.add_argument("--path_to_vm", default=None, help="image name, profile or image folder (default: newest base)")
    env.add_argument("--provider_name", default="qemu", help="VM provider (default: qemu)")
    env.add_argument("--hosts", default=None, help="libvirt provider: URI[#N],... hosts to spread environments over "
                                                   "(N: capacity, default from each host's CPUs and memory); a host "
                                                   "that fails leaves rotation and its tasks are retried elsewhere")
    env.add_argument("--headless", action="store_true", help="accepted for compatibility: VMs never open a window")
    env.add_argument("--action_space", default="pyautogui", choices=["pyautogui", "computer_13"],
                     help="pyautogui code strings or computer_13 action dicts (default pyautogui)")
    env.add_argument("--observation_type", default="screenshot",
                     choices=["screenshot", "a11y_tree", "screenshot_a11y_tree", "som"],
                     help="what a model sees: the screenshot, the accessibility tree (as a table), both, or "
                          "set-of-marks (numbered boxes from the tree drawn on the screenshot plus their table)")
    env.add_argument("--screen_width", type=int, default=None, help="must match the image (default: the image's)")
    env.add_argument("--screen_height", type=int, default=None, help="must match the image (default: the image's)")
    env.add_argument("--sleep_after_execution", type=float, default=0.0, help="seconds to wait after each action")
    env.add_argument("--max_steps", type=int, default=15, help="actions per task (default 15); a turn whose reply "
                                                               "does not parse counts as one")
    env.add_argument("--cache_dir", default=None, help="image and runtime cache (default ~/.cache/desktop-env)")
    env.add_argument("--record", action="store_true", help="record each task's screen into recording.mp4 "
                                                           "(host-side frames; costs CPU)")
    agent = p.add_argument_group("agent")
    agent.add_argument("--model", default="oracle",
                       help=f"built-in agent ({BUILTIN_HELP}) or a model name: claude-* via the Anthropic SDK, "
                            "anything else via the OpenAI SDK (default oracle)")
    agent.add_argument("--base_url", default=None,
                       help="API base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1) or of an "
                            "Anthropic endpoint; without it the vendor's public API is used")
    agent.add_argument("--api_key_env", default=None,
                       help="environment variable holding the API key (default OPENAI_API_KEY, or ANTHROPIC_API_KEY "
                            "for claude-*); with --base_url and no key set, a placeholder key is sent")
    agent.add_argument("--max_trajectory_length", type=int, default=3,
                       help="past turns (observation and reply) kept in the prompt (default 3)")
    agent.add_argument("--a11y_tree_max_tokens", type=int, default=10000,
                       help="token budget for the accessibility tree / set-of-marks table; whole lines are kept, "
                            "tokens estimated as characters/4 (default 10000)")
    agent.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    agent.add_argument("--top_p", type=float, default=None,
                       help="nucleus sampling; not sent unless given (recent Claude models refuse it with "
                            "temperature)")
    agent.add_argument("--max_tokens", type=int, default=1500, help="most tokens per model reply (default 1500)")
    agent.add_argument("--model_screen", default="1280x720",
                       help="largest screen size the model is shown, WIDTHxHEIGHT (default 1280x720; the real "
                            "screen's aspect ratio is kept, coordinates are mapped back)")
    agent.add_argument("--seed", type=int, default=0, help="seed of the random agent (default 0)")
    suite = p.add_argument_group("suite and results")
    suite.add_argument("--domain", default="all", help="run only this app's tasks (default all)")
    suite.add_argument("--test_config_base_dir", default="evaluation_examples", help="folder holding examples/")
    suite.add_argument("--test_all_meta_path", default="evaluation_examples/test_smoke.json",
                       help="index file {app: [task ids]}")
    suite.add_argument("--exclude_account", action="store_true",
                       help="skip tasks that need a cloud account (tagged `account`, or using account-only steps, "
                            "getters or metrics)")
    suite.add_argument("--result_dir", default="./results", help="where results go (default ./results)")
    suite.add_argument("--num_envs", type=int, default=1, help="environments (VMs, one process each) run in parallel")
    suite.add_argument("--trials", type=int, default=1,
                       help="runs per task (default 1); with more, each goes to <task_id>/trial_<k>/ and the summary "
                            "gives the mean and pass@k")
    suite.add_argument("--task_timeout", type=float, default=1800.0,
                       help="seconds per task attempt; past it the task scores 0 with status timeout (default 1800)")
    suite.add_argument("--retries", type=int, default=1,
                       help="extra attempts on a fresh VM after an infrastructure failure (default 1)")
    suite.add_argument("--time_scale", type=float, default=None,
                       help="multiply every named time limit of setup steps, reference solutions and evaluators "
                            "(desktop_env/limits.py) by this, for a slower host (default: $DESKTOP_ENV_TIME_SCALE or 1)")
    agent.add_argument("--rag", action="store_true",
                       help="add the documentation chunks that best match the instruction to the task text the agent "
                            "sees (index: desktop-env docs build)")
    agent.add_argument("--rag_topk", type=int, default=3, help="chunks added with --rag (default 3)")
    args = p.parse_args(argv)
    if (args.screen_width is None) != (args.screen_height is None):
        p.error("give both --screen_width and --screen_height, or neither")
    if args.num_envs < 1:
        p.error("--num_envs must be at least 1")
    if args.trials < 1:
        p.error("--trials must be at least 1")
    if args.retries < 0:
        p.error("--retries must be 0 or more")
    if args.time_scale is not None:
        if not args.time_scale > 0:
            p.error("--time_scale must be above 0")
        from desktop_env.limits import SCALE_ENV

        os.environ[SCALE_ENV] = repr(args.time_scale)  # workers inherit it
    from desktop_env.agents.parsing import parse_size

    try:
        args.model_screen_size = parse_size(args.model_screen)
    except ValueError as exc:
        p.error(f"--model_screen: {exc}")
    if args.model == "human" and args.num_envs != 1:
        p.error("--model human takes one task at a time: use --num_envs 1")
    if args.rag_topk < 1:
        p.error("--rag_topk must be at least 1")
    if args.rag:
        from desktop_env.rag import default_index_path

        if not default_index_path(args.cache_dir).is_file():
            p.error(f"--rag: no documentation index at {default_index_path(args.cache_dir)}; "
                    "build it with: desktop-env docs build")
    return args


def agent_options(args) -> dict:
    """The keyword options ``create_agent`` gets from the flags."""
    return dict(action_space=args.action_space, observation_type=args.observation_type,
                max_trajectory_length=args.max_trajectory_length, a11y_tree_max_tokens=args.a11y_tree_max_tokens,
                temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                model_screen=args.model_screen_size, base_url=args.base_url, api_key_env=args.api_key_env,
                seed=args.seed)


# -- layout -----------------------------------------------------------------------------------
def model_dir(args) -> Path:
    return Path(args.result_dir) / args.action_space / args.observation_type / args.model.replace("/", "_")


def task_dir(args, domain: str, task_id: str, trial: int = 1) -> Path:
    """A task's (or trial's) result folder; one trial keeps the classic layout."""
    folder = model_dir(args) / domain / task_id
    return folder / f"trial_{trial}" if args.trials > 1 else folder


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json_atomic(path: Path, obj) -> None:
    write_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def read_status(folder: Path) -> dict | None:
    """The folder's status.json; for a legacy folder with only a non-empty result.txt, a final
    status derived from the score; None when the task has not run (or status.json is unreadable)."""
    try:
        return json.loads((folder / "status.json").read_text())
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        log.warning("%s/status.json is unreadable (%s): the task runs again", folder, exc)
        return None
    result = folder / "result.txt"
    if result.exists() and result.read_text().strip():
        try:
            score = float(result.read_text())
        except ValueError:
            return None
        traj = folder / "traj.jsonl"
        steps = sum(1 for line in traj.read_text().splitlines() if line.strip()) if traj.exists() else 0
        return {"status": "success" if score >= 1.0 else "wrong_result", "final": True, "score": score,
                "steps": steps, "duration_s": None, "legacy": True}
    return None


def classify(score: float, last_action_type: str | None, last_turn_parse_error: bool, feasible: bool) -> str:
    """The status of a scored episode.

    score 1 -> success; FAIL as the last action of a feasible task -> agent_fail; a lower
    score after a last turn whose reply did not parse -> parse_error; otherwise wrong_result.
    """
    if score >= 1.0:
        return "success"
    if last_action_type == "FAIL" and feasible:
        return "agent_fail"
    if last_turn_parse_error:
        return "parse_error"
    return "wrong_result"


# -- one episode ------------------------------------------------------------------------------
class TaskTimeout(Exception):
    """The attempt ran past --task_timeout."""


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


#: Characters of a command step's stdout and stderr kept in traj.jsonl (the end of each).
OUTPUT_TAIL_CHARS = 4000


def _tail(text, limit: int = OUTPUT_TAIL_CHARS) -> str:
    text = text or ""
    return text if len(text) <= limit else "[...]" + text[-limit:]


def run_command_step(env, action: dict, deadline: float) -> dict:
    """Run a command action (``{"command", "shell"}``, the oracle's shell steps) in the guest.

    Returns:
        the step's ``info`` for traj.jsonl: the command, its exit status, the tails of its
        stdout and stderr, its duration, and ``time_limit`` (the message) when it was killed
        at the limit ``oracle.command`` or at the task's deadline.
    """
    from desktop_env.errors import GuestServerError
    from desktop_env.limits import TimeLimitExceeded, limit

    command = action["command"]
    seconds = max(1.0, min(limit("oracle.command"), deadline - time.monotonic() + 5))
    info: dict = {"command": _tail(command if isinstance(command, str) else " ".join(command), 1000)}
    t0 = time.monotonic()
    try:
        reply = env.controller.execute(command, shell=action.get("shell", False), timeout_s=seconds)
    except GuestServerError as exc:
        if exc.status != 504:
            raise
        reply = exc.body if isinstance(exc.body, dict) else {}
        reply = {**reply, "returncode": None}
        info["time_limit"] = str(TimeLimitExceeded("oracle.command", seconds, f"command {info['command'][:200]!r}"))
        log.error("%s", info["time_limit"])
    info.update(command_returncode=reply.get("returncode"), command_stdout=_tail(reply.get("output")),
                command_stderr=_tail(reply.get("error")), command_s=round(time.monotonic() - t0, 2))
    return info


def step_failure(info: dict) -> str | None:
    """Why a step failed, from its ``info`` (a time limit, a non-zero exit, an action error), or None."""
    if info.get("time_limit"):
        return info["time_limit"]
    if "command_returncode" in info and info["command_returncode"] != 0:
        stderr = " ".join((info.get("command_stderr") or "").split())[-600:]
        return f"command {info.get('command', '')[:200]!r} exited with {info['command_returncode']}" + \
            (f"; stderr: {stderr}" if stderr else "")
    if info.get("error"):
        return str(info["error"])[:800]
    return None


def run_episode(env, agent, task, args, folder: Path, deadline: float) -> dict:
    """Run one episode into ``folder`` (trajectory and screenshots); returns score, steps and how it ended.

    Raises:
        TaskTimeout: past ``deadline`` (time.monotonic()).
        DesktopEnvError and others: from the environment (the caller classifies them).
    """
    from desktop_env.agents.parsing import action_struct
    from desktop_env.errors import SolutionStepFailed

    for stale in [*folder.glob("step_*.png"), folder / "traj.jsonl", folder / "result.txt",
                  folder / "recording.mp4"]:
        stale.unlink(missing_ok=True)
    obs, _info = env.reset(options={"task_config": task})
    agent.reset(task, env)
    if args.record:
        env.start_recording(folder / "recording.mp4")
    stamp = lambda: datetime.datetime.now().strftime("%Y%m%d@%H%M%S%f")  # noqa: E731
    (folder / f"step_0_{stamp()}.png").write_bytes(env.screenshot_png())
    step, done, score = 0, False, None
    last_type, last_parse_error = None, False
    instruction = task.instruction
    if getattr(args, "rag", False):
        from desktop_env.rag import augment_instruction, default_index_path

        instruction = augment_instruction(task.instruction, args.rag_topk, default_index_path(args.cache_dir))

    def check_time():
        if time.monotonic() > deadline:
            raise TaskTimeout(f"task attempt exceeded --task_timeout {args.task_timeout:g} s")

    with open(folder / "traj.jsonl", "w") as traj:
        def record(action, response, turn, first, reward, is_done, info, shot, parse_error=None):
            mapping = getattr(agent, "screen_mapping", None)
            traj.write(json.dumps({
                "step_num": step, "timestamp": now_iso(), "action": action, "action_struct": action_struct(action),
                "response": response, "parse_error": parse_error,
                "tokens_in": turn.tokens_in if first else None, "tokens_out": turn.tokens_out if first else None,
                "latency_s": turn.latency_s if first else None,
                "reward": reward, "done": is_done, "info": {k: v for k, v in info.items() if _jsonable(v)},
                "screenshot_file": shot, "screen_mapping": mapping.to_json() if mapping is not None else None,
            }, ensure_ascii=False) + "\n")
            traj.flush()

        while not done and step < args.max_steps:
            check_time()
            response, actions = agent.predict(instruction, obs)
            turn = agent.last_turn
            if not actions:
                step += 1
                last_parse_error = True
                record(None, response, turn, True, 0.0, False, {}, None,
                       turn.parse_error or "the agent gave no action")
                continue
            last_parse_error = False
            for i, action in enumerate(actions):
                step += 1
                if isinstance(action, dict) and "command" in action:
                    info = run_command_step(env, action, deadline)
                    reward, terminated, truncated = 0.0, False, False
                else:
                    obs, reward, terminated, truncated, info = env.step(action)
                if args.sleep_after_execution:
                    time.sleep(args.sleep_after_execution)
                shot = f"step_{step}_{stamp()}.png"
                (folder / shot).write_bytes(env.screenshot_png())
                last_type = action_struct(action)["type"]
                record(action, response, turn, i == 0, reward, terminated or truncated, info, shot)
                failure = step_failure(info) if getattr(agent, "replays_solution", False) else None
                if failure:
                    raise SolutionStepFailed(f"the reference solution's step failed: {failure}",
                                             path=str(task.path) if task.path else task.id, field=f"solution[{i}]")
                if terminated or truncated:
                    done, score = True, float(reward)
                    break
                check_time()
                if step >= args.max_steps:
                    break
    if args.record:
        try:
            env.end_recording()
        except Exception:  # a failed encoder must not cost the score
            log.exception("ending the recording")
    if score is None:
        score = float(env.evaluate())
    return {"score": score, "steps": step, "last_type": last_type, "last_parse_error": last_parse_error}


# -- workers ----------------------------------------------------------------------------------
def _infra_errors() -> tuple[type, ...]:
    import requests

    from desktop_env.agents.llm import ModelAPIError
    from desktop_env.errors import GuestServerError, HostToolMissing, SnapshotError, VMError, VMLaunchError

    return (VMError, GuestServerError, VMLaunchError, SnapshotError, HostToolMissing, ModelAPIError,
            ConnectionError, requests.RequestException)


def run_job(job: dict, args, agent, env_box: list, new_env) -> dict:
    """One task (one trial) with retries; writes status.json (and result.txt when final); returns the status."""
    from desktop_env.agents.llm import ModelAPIError
    from desktop_env.errors import EvaluatorError, TaskConfigError
    from desktop_env.tasks import load_task

    folder = Path(job["folder"])
    folder.mkdir(parents=True, exist_ok=True)
    status = {"task_id": job["task_id"], "domain": job["domain"], "model": args.model, "trial": job["trial"],
              "action_space": args.action_space, "observation_type": args.observation_type,
              "status": "infra_error", "final": False, "score": None, "steps": 0, "duration_s": 0.0,
              "attempts": 0, "error": None, "started": now_iso(), "finished": None,
              "tags": job.get("tags", []), "related_apps": job.get("related_apps", [])}
    t0 = time.monotonic()
    infra = _infra_errors()

    def close_env():
        if env_box[0] is not None:
            try:
                env_box[0].close()
            except Exception:
                log.exception("closing the environment")
            env_box[0] = None

    try:
        task = load_task(job["path"])
        status["tags"], status["related_apps"] = list(task.tags), list(task.related_apps)
        feasible = task.evaluator is None or "infeasible" not in task.evaluator.funcs
        for attempt in range(args.retries + 1):
            status["attempts"] = attempt + 1
            try:
                if env_box[0] is None:
                    env_box[0] = new_env()
                    env_box[0].reset()  # boots the VM: not counted in the task's time
                deadline = time.monotonic() + args.task_timeout
                signal.setitimer(signal.ITIMER_REAL, args.task_timeout)
                episode = run_episode(env_box[0], agent, task, args, folder, deadline)
                signal.setitimer(signal.ITIMER_REAL, 0)
                status.update(score=episode["score"], steps=episode["steps"], final=True, error=None,
                              status=classify(episode["score"], episode["last_type"], episode["last_parse_error"],
                                              feasible))
                break
            except TaskTimeout as exc:
                signal.setitimer(signal.ITIMER_REAL, 0)
                status.update(status="timeout", final=True, score=0.0, error=str(exc), steps=_steps(folder))
                log.error("task %s: %s", job["task_id"], exc)
                close_env()  # the VM may be mid-action: start the next task on a fresh one
                break
            except TaskConfigError as exc:
                signal.setitimer(signal.ITIMER_REAL, 0)
                status.update(status="task_error", final=True, error=f"{type(exc).__name__}: {exc}")
                log.error("task %s is broken: %s", job["task_id"], exc)
                break
            except EvaluatorError as exc:
                # a grader bug: no score, so it never looks like the agent's failure
                signal.setitimer(signal.ITIMER_REAL, 0)
                status.update(status="evaluator_error", final=True, score=None, error=str(exc),
                              traceback=exc.traceback_tail, steps=_steps(folder))
                log.error("task %s: the evaluator failed (not scored): %s\n%s", job["task_id"], exc,
                          exc.traceback_tail)
                break
            except infra as exc:
                signal.setitimer(signal.ITIMER_REAL, 0)
                status.update(status="infra_error", final=False, score=None, error=f"{type(exc).__name__}: {exc}",
                              steps=_steps(folder))
                log.error("task %s attempt %d: infrastructure failure:\n%s", job["task_id"], attempt + 1,
                          traceback.format_exc())
                if not isinstance(exc, ModelAPIError):  # the VM is fine when only the model API failed
                    close_env()
            except OSError as exc:
                if exc.errno not in HOST_ERRNOS:
                    raise
                # The host's disk is full or read-only: not the task's fault; a rerun retries it.
                signal.setitimer(signal.ITIMER_REAL, 0)
                status.update(status="infra_error", final=False, score=None, error=f"host: {exc}",
                              steps=_steps(folder))
                log.error("task %s: host failure, not retried now: %s", job["task_id"], exc)
                break
            except Exception as exc:  # a setup step or evaluator that cannot work: the task is broken
                signal.setitimer(signal.ITIMER_REAL, 0)
                status.update(status="task_error", final=True, error=f"{type(exc).__name__}: {exc}",
                              steps=_steps(folder))
                log.error("task %s failed:\n%s", job["task_id"], traceback.format_exc())
                break
    except TaskConfigError as exc:
        status.update(status="task_error", final=True, error=f"{type(exc).__name__}: {exc}")
        log.error("task %s cannot run: %s", job["task_id"], exc)
    except KeyboardInterrupt:
        signal.setitimer(signal.ITIMER_REAL, 0)
        status.update(status="infra_error", final=False, score=None, error="interrupted; rerun to complete",
                      steps=_steps(folder))
        raise
    finally:
        status["duration_s"] = round(time.monotonic() - t0, 2)
        status["finished"] = now_iso()
        try:
            if status["final"] and status["score"] is not None:
                write_atomic(folder / "result.txt", f"{status['score']}\n")
            write_json_atomic(folder / "status.json", status)
        except OSError as exc:  # e.g. the results disk is full: nothing half-written counts as done
            (folder / "result.txt").unlink(missing_ok=True)
            log.error("task %s: could not write its results in %s: %s", job["task_id"], folder, exc)
            status.update(status="infra_error", final=False, score=None, error=f"results not written: {exc}")
    return status


def _steps(folder: Path) -> int:
    traj = folder / "traj.jsonl"
    return sum(1 for line in traj.read_text().splitlines() if line.strip()) if traj.exists() else 0


def worker(args, jobs, results) -> None:
    """One process, one environment: takes jobs until None; SIGTERM/SIGINT close the VM and exit."""
    from desktop_env.agents import create_agent
    from desktop_env.envs import DesktopEnv

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

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
            handler = logging.FileHandler(Path(job["folder"]) / "runtime.log", mode="a")
            handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
            logging.getLogger().addHandler(handler)
            try:
                status = run_job(job, args, agent, env_box, new_env)
            finally:
                logging.getLogger().removeHandler(handler)
                handler.close()
            results.put({"event": "finished", "status": status})
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
        _kill_children(os.getpid())


def _kill_children(pid: int) -> None:
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


# -- manifest and summary ---------------------------------------------------------------------
def git_state() -> dict:
    def git(*cmd):
        try:
            return subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def image_state(args) -> dict:
    if args.provider_name != "qemu":
        return {"path_to_vm": args.path_to_vm}
    from desktop_env.image.store import resolve_image

    image = resolve_image(args.path_to_vm or "base", Path(args.cache_dir) if args.cache_dir else None)
    meta = image.meta
    return {"name": image.name, "profile": meta.get("profile"), "assembly_hash": meta.get("assembly_hash"),
            "package_hash": meta.get("package_hash"), "created": meta.get("created"), "screen": list(image.screen)}


def write_manifest(args, image: dict, started: str, finished: str | None, interrupted: bool = False) -> Path:
    from desktop_env.agents.prompts import PROMPT_VERSION

    path = model_dir(args) / "manifest.json"
    previous = []
    try:
        old = json.loads(path.read_text())
        if old.get("started") != started:
            previous = old.pop("previous_runs", []) + [old]
        else:
            previous = old.get("previous_runs", [])
    except (OSError, ValueError):
        pass
    params = {k: v for k, v in vars(args).items() if k != "model_screen_size"}
    manifest = {"model": args.model, "git": git_state(), "image": image, "parameters": params,
                "prompt_version": PROMPT_VERSION, "argv": sys.argv, "python": sys.version.split()[0],
                "started": started, "finished": finished, "interrupted": interrupted, "previous_runs": previous}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, manifest)
    return path


def group_stats(records: list[dict]) -> dict:
    """Mean score, success rate, pass@k, mean steps and time over ``records`` (final runs only)."""
    scored = [r for r in records
              if r.get("final") and r.get("status") not in UNSCORED_STATUSES and r.get("score") is not None]
    by_task: dict = {}
    for r in scored:
        by_task.setdefault((r["domain"], r["task_id"]), []).append(r)
    steps = [r["steps"] for r in scored if isinstance(r.get("steps"), int)]
    times = [r["duration_s"] for r in scored if isinstance(r.get("duration_s"), (int, float))]
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
    return {"tasks": len(by_task), "runs": len(scored), "mean_score": mean([r["score"] for r in scored]),
            "success_rate": mean([1.0 if r["status"] == "success" else 0.0 for r in scored]),
            "pass_at_k": mean([1.0 if any(r["status"] == "success" for r in rs) else 0.0 for rs in by_task.values()]),
            "mean_steps": mean(steps), "mean_duration_s": mean(times)}


def split_by_image(todo: list[dict], image: dict) -> tuple[list[dict], dict[str, int]]:
    """(jobs this image can run, {profile: number of jobs skipped because they need it}).

    A task whose ``snapshot`` names one of this repository's image profiles needs that
    profile or one extending it (a ``data`` task does not run on ``base``; a ``base``
    task runs on ``data``). Other snapshot names (those of imported suites) are not checked.
    """
    from desktop_env.image.recipe import Recipe

    profile = image.get("profile")
    if not profile:
        return todo, {}
    known = set(Recipe.available())
    provided, name = set(), profile
    while name and name not in provided and name in known:
        provided.add(name)
        name = Recipe.load(name).extends
    runnable, skipped = [], {}
    for job in todo:
        need = job.get("snapshot")
        if need in known and need not in provided:
            skipped[need] = skipped.get(need, 0) + 1
        else:
            runnable.append(job)
    return runnable, skipped


def summarize(args, records: list[dict], not_run: list[dict], excluded: int,
              wrong_image: dict[str, int] | None = None) -> dict:
    """summary.json's content over every planned (task, trial) of this suite."""
    from desktop_env.tasks import CATEGORIES, GUIDANCES

    groups: dict[str, dict[str, list]] = {"domain": {}, "category": {}, "guidance": {}}
    for r in records:
        groups["domain"].setdefault(r["domain"], []).append(r)
        tags = r.get("tags") or []
        for t in tags:
            if t in CATEGORIES:
                groups["category"].setdefault(t, []).append(r)
            if t in GUIDANCES:
                groups["guidance"].setdefault(t, []).append(r)
    counts: dict[str, int] = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {"model": args.model, "action_space": args.action_space, "observation_type": args.observation_type,
            "trials": args.trials, "k": args.trials, "overall": group_stats(records),
            "by_domain": {k: group_stats(v) for k, v in sorted(groups["domain"].items())},
            "by_category": {k: group_stats(v) for k, v in sorted(groups["category"].items())},
            "by_guidance": {k: group_stats(v) for k, v in sorted(groups["guidance"].items())},
            "statuses": counts,
            "infra_errors": [{k: r.get(k) for k in ("domain", "task_id", "trial", "error")}
                             for r in records if r["status"] == "infra_error"],
            "task_errors": [{k: r.get(k) for k in ("domain", "task_id", "trial", "error")}
                            for r in records if r["status"] == "task_error"],
            "evaluator_errors": [{k: r.get(k) for k in ("domain", "task_id", "trial", "error")}
                                 for r in records if r["status"] == "evaluator_error"],
            "not_run": len(not_run), "excluded_account": excluded,
            "excluded_image": dict(wrong_image or {}), "written": now_iso()}


def format_summary(summary: dict) -> str:
    """The printed table: one row per group, then infrastructure and task errors apart."""
    k = summary["k"]
    head = f"{'group':<44} {'tasks':>5} {'runs':>5} {'mean':>6} {'success':>8} {f'pass@{k}':>7} {'steps':>6} {'time_s':>7}"
    lines = [head, "-" * len(head)]

    def row(name, s):
        f = lambda v, fmt: format(v, fmt) if v is not None else "-"  # noqa: E731
        lines.append(f"{name[:44]:<44} {s['tasks']:>5} {s['runs']:>5} {f(s['mean_score'], '.3f'):>6} "
                     f"{f(s['success_rate'], '.1%'):>8} {f(s['pass_at_k'], '.1%'):>7} {f(s['mean_steps'], '.1f'):>6} "
                     f"{f(s['mean_duration_s'], '.0f'):>7}")

    row("overall", summary["overall"])
    for title, key in (("domain", "by_domain"), ("category", "by_category"), ("guidance", "by_guidance")):
        for name, s in summary[key].items():
            row(f"  {title}: {name}", s)
    lines.append("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items())))
    for kind in ("infra_errors", "task_errors", "evaluator_errors"):
        if summary.get(kind):
            lines.append(f"{kind.replace('_', ' ')} (not in the scores):")
            lines += [f"  {e['domain']}/{e['task_id']} trial {e['trial']}: {str(e['error'])[:160]}" for e in summary[kind]]
    if summary["not_run"]:
        lines.append(f"not run yet: {summary['not_run']} (rerun the same command to complete)")
    return "\n".join(lines)


# -- main -------------------------------------------------------------------------------------
def plan_jobs(args) -> tuple[list[dict], dict, int]:
    """What this run must do: (jobs to run, known statuses by (domain, task_id, trial), tasks excluded).

    A (task, trial) with a final status (or a legacy non-empty result.txt) is not run again;
    one with ``infra_error`` or no status is.

    Raises:
        TaskConfigError: the index is malformed or lists a task with no file.
    """
    from desktop_env.errors import TaskConfigError
    from desktop_env.tasks import load_index, load_task, task_file_for

    index = load_index(args.test_all_meta_path)
    examples = Path(args.test_config_base_dir) / "examples"
    todo, records, excluded, needing_account = [], {}, 0, 0
    for domain, ids in index.items():
        if args.domain != "all" and domain != args.domain:
            continue
        for task_id in ids:
            path = task_file_for(examples, domain, task_id)
            if path is None:
                raise TaskConfigError(f"task {domain}/{task_id} has no file under {examples} (folder or flat "
                                      "layout); fix the index or --test_config_base_dir", args.test_all_meta_path,
                                      domain)
            meta = {"tags": [], "related_apps": []}
            try:
                task = load_task(path)
                meta = {"tags": list(task.tags), "related_apps": list(task.related_apps), "snapshot": task.snapshot}
                if args.exclude_account and task.needs_account:
                    excluded += 1
                    continue
                if task.needs_account:
                    needing_account += 1
            except TaskConfigError:
                pass  # the worker records it as task_error
            for trial in range(1, args.trials + 1):
                folder = task_dir(args, domain, task_id, trial)
                status = read_status(folder)
                base = {"domain": domain, "task_id": task_id, "trial": trial, **meta}
                if status is not None:
                    records[(domain, task_id, trial)] = {**base, **status, "trial": trial}
                if status is not None and status.get("final"):
                    continue
                todo.append({**base, "path": str(path), "folder": str(folder)})
    if needing_account:
        print(f"{needing_account} tasks need a cloud account: their setup and evaluator reach the vendor from this "
              "host with your settings files, but the guest has no route to the internet in this release "
              "(docs/image.md), so an agent cannot reach the vendor from the VM; --exclude_account skips them",
              flush=True)
    return todo, records, excluded


def _stop_workers(procs, grace_s: float = 30.0) -> None:
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
            print(f"worker {proc.pid} did not stop in {grace_s:.0f} s: killing it and its VM", file=sys.stderr)
            _kill_children(proc.pid)
            proc.kill()
            proc.join(5)


def main(argv: list[str] | None = None) -> int:
    args = config(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    sys.path.insert(0, str(ROOT))
    from desktop_env.agents import create_agent
    from desktop_env.errors import DesktopEnvError

    started = now_iso()
    try:
        create_agent(args.model, **agent_options(args)).close()
        todo, records, excluded = plan_jobs(args)
    except DesktopEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        image = image_state(args)
    except DesktopEnvError as exc:
        if todo:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        image = {"error": str(exc)}
    todo, wrong_image = split_by_image(todo, image)
    for need, n in sorted(wrong_image.items()):
        print(f"{n} task runs need the {need!r} image (their \"snapshot\") and the image is "
              f"{image.get('name')!r} (profile {image.get('profile')!r}): skipped; run them with "
              f"--path_to_vm {need} (build it with `desktop-env image build --profile {need}`)", flush=True)
    total = len(todo) + sum(1 for r in records.values() if r.get("final"))
    skipped = f", {excluded} needing an account skipped" if excluded else ""
    print(f"{total} tasks: {total - len(todo)} already done, {len(todo)} to run on "
          f"{min(args.num_envs, len(todo)) or args.num_envs} environment(s){skipped}", flush=True)
    write_manifest(args, image, started, None)

    interrupted = False
    procs = []
    if todo:
        ctx = multiprocessing.get_context("spawn")
        jobs, results = ctx.Queue(), ctx.Queue()
        for job in todo:
            jobs.put(job)
        n = min(args.num_envs, len(todo))
        for _ in range(n):
            jobs.put(None)

        def on_term(signum, frame):
            raise KeyboardInterrupt

        old_term = signal.signal(signal.SIGTERM, on_term)
        procs = [ctx.Process(target=worker, args=(args, jobs, results), daemon=False) for _ in range(n)]
        for proc in procs:
            proc.start()
        t0, finished, wins = time.monotonic(), 0, 0
        try:
            while finished < len(todo):
                try:
                    msg = results.get(timeout=2)
                except queue.Empty:
                    if not any(p.is_alive() for p in procs):
                        print("error: every worker exited before the queue was done (see the log above)",
                              file=sys.stderr)
                        break
                    continue
                if msg["event"] == "started":
                    trial = f" trial {msg['trial']}" if args.trials > 1 else ""
                    print(f"started {msg['domain']}/{msg['task_id']}{trial}", flush=True)
                    continue
                s = msg["status"]
                records[(s["domain"], s["task_id"], s["trial"])] = s
                finished += 1
                wins += s["status"] == "success"
                elapsed = time.monotonic() - t0
                eta = elapsed / finished * (len(todo) - finished)
                score = f"{s['score']:.2f}" if s["score"] is not None else "-"
                trial = f" trial {s['trial']}" if args.trials > 1 else ""
                print(f"[{finished}/{len(todo)}] success {wins}/{finished} | ETA {eta / 60:.1f} min | "
                      f"{s['domain']}/{s['task_id']}{trial}: {s['status']} {score} ({s['duration_s']:.0f} s)"
                      + (f" {s['error'][:200]}" if s["error"] and s["status"] != "success" else ""), flush=True)
        except (KeyboardInterrupt, BrokenPipeError):  # a signal, or whoever reads our output is gone
            interrupted = True
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                print("interrupted: stopping the environments (finished tasks are kept; rerun to complete)",
                      file=sys.stderr, flush=True)
            except OSError:  # stderr is a pipe whose reader died (the usual reason for the signal): stop anyway
                pass
            _stop_workers(procs)
        finally:
            for proc in procs:
                proc.join(60)
            signal.signal(signal.SIGTERM, old_term)
        # statuses written by workers that were interrupted after the last message
        for job in todo:
            status = read_status(Path(job["folder"]))
            if status is not None:
                records[(job["domain"], job["task_id"], job["trial"])] = {**job, **status}
    not_run = [j for j in todo if (j["domain"], j["task_id"], j["trial"]) not in records]
    summary = summarize(args, list(records.values()), not_run, excluded, wrong_image)
    write_json_atomic(model_dir(args) / "summary.json", summary)
    write_manifest(args, image, started, now_iso(), interrupted)
    print("\n" + format_summary(summary))
    if interrupted:
        return 130
    return 1 if summary["infra_errors"] or summary["task_errors"] or summary["evaluator_errors"] or not_run else 0


if __name__ == "__main__":
    raise SystemExit(main())
