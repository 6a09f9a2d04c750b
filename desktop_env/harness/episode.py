"""One episode: reset to the task, let the agent act until it ends, record every step, score.

Every agent action goes through ``env.step``. An agent that replays the task's reference solution
(``agent.replays_solution``: the oracle) may also give shell steps (``{"command", "shell"}``); they go
through :meth:`DesktopEnv.run_command`, the one way to a guest shell, and GUI steps
(``{"gui_step": ...}``), which :mod:`desktop_env.replay.gui` locates and acts through
``env.step``; a failing one stops the episode as a broken task. Any other agent's ``{"command": ...}``
or ``{"gui_step": ...}`` is an ordinary, invalid action.
"""
from __future__ import annotations

import datetime
import json
import logging
import time
from pathlib import Path

from desktop_env.harness.config import RunConfig
from desktop_env.replay.gui import run_gui_step
from desktop_env.harness.layout import RECORDING_FILE, RESULT_FILE, TRAJECTORY_FILE, now_iso, write_atomic
from desktop_env.harness.status import TaskTimeout, infra_errors

log = logging.getLogger(__name__)

#: Characters of a command step's stdout and stderr kept in traj.jsonl (the end of each).
OUTPUT_TAIL_CHARS = 4000


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def _tail(text, limit: int = OUTPUT_TAIL_CHARS) -> str:
    text = text or ""
    return text if len(text) <= limit else "[...]" + text[-limit:]


def run_command_step(env, action: dict, deadline: float) -> dict:
    """Run a reference solution's shell step (``{"command", "shell"}``) through ``env.run_command``.

    Returns:
        the step's ``info`` for traj.jsonl: the command, its exit status, the tails of its
        stdout and stderr, its duration, and ``time_limit`` (the message) when it was killed
        at the limit ``oracle.command`` or at the task's deadline.
    """
    from desktop_env.limits import TimeLimitExceeded, limit

    command = action["command"]
    seconds = max(1.0, min(limit("oracle.command"), deadline - time.monotonic() + 5))
    info: dict = {"command": _tail(command if isinstance(command, str) else " ".join(command), 1000)}
    t0 = time.monotonic()
    reply = env.run_command(command, shell=action.get("shell", False), timeout_s=seconds)
    if reply["timed_out"]:
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


def call_agent(what: str, fn, *args):
    """``fn(*args)``, a call into the agent's own code; what it raises is the agent's (:class:`AgentError`),
    except a time limit, an interrupt, a model API error and an infrastructure failure under it, which
    the harness classifies itself (docs/agents.md, "Errors and statuses").

    Raises:
        AgentError: the agent's code raised anything else.
    """
    import traceback

    from desktop_env.errors import AgentError

    try:
        return fn(*args)
    except (TaskTimeout, KeyboardInterrupt):
        raise
    except infra_errors():  # includes ModelAPIError
        raise
    except Exception as exc:
        tail = "".join(traceback.format_exc().splitlines(keepends=True)[-25:])
        raise AgentError(what, exc, tail) from exc


def _note_score(path: Path, score: float, reason: dict | None, postconfig_errors: list[str]) -> None:
    """Add the score, its reason and the failed postconfig steps to the last line of a trajectory scored after
    its loop (the step that ended the episode did not score it: the agent stopped giving actions, or the
    oracle's last step)."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    if not lines:
        return
    try:
        last = json.loads(lines[-1])
    except ValueError:
        return
    info = last.get("info") if isinstance(last.get("info"), dict) else {}
    last["info"] = {**info, "score": score, **({"reason": reason} if reason else {}),
                    **({"postconfig_errors": postconfig_errors} if postconfig_errors else {})}
    write_atomic(path, "\n".join(lines[:-1] + [json.dumps(last, ensure_ascii=False)]) + "\n")


#: The public data-science suite's step-by-step instruction, beside a task file (``--verbose_instruction``).
VERBOSE_INSTRUCTION_FILE = "verbose_instruction.txt"


def task_instruction(task, verbose: bool = False) -> str:
    """What the agent is told: the task's instruction, or with ``verbose`` the step-by-step one that the public
    data-science suite keeps beside the task file (the task's own when it has none)."""
    path = getattr(task, "path", None)
    if verbose and path is not None:
        verbose_file = Path(path).parent / VERBOSE_INSTRUCTION_FILE
        if verbose_file.is_file():
            text = verbose_file.read_text(errors="replace").strip()
            if text:
                return text
    return task.instruction


def run_episode(env, agent, task, config: RunConfig, folder: Path, deadline: float) -> dict:
    """Run one episode into ``folder`` (trajectory and screenshots); returns score, steps and how it ended.

    Args:
        config: the run's settings (``max_steps``, ``record``, ``sleep_after_execution``, ``task_timeout``,
            ``verbose_instruction``, ``rag``/``rag_topk``/``cache_dir``).
        deadline: ``time.monotonic()`` past which the attempt stops.

    Returns:
        ``{"score", "reason", "postconfig_errors", "steps", "last_type", "last_parse_error"}``; ``reason``
        is the score's reason as JSON (``{"kind", "text", "metric"}``; see :mod:`desktop_env.evaluators.reasons`),
        ``postconfig_errors`` the evaluator's postconfig steps that failed (scoring went on).

    Raises:
        TaskTimeout: past ``deadline``.
        AgentError: the agent's own code raised.
        SolutionStepFailed: a step of the reference solution failed (the task is broken).
        DesktopEnvError and others: from the environment (the caller classifies them).
    """
    from desktop_env.agents.parsing import action_struct
    from desktop_env.errors import SolutionStepFailed

    for stale in [*folder.glob("step_*.png"), folder / TRAJECTORY_FILE, folder / RESULT_FILE,
                  folder / RECORDING_FILE]:
        stale.unlink(missing_ok=True)
    obs, _info = env.reset(options={"task_config": task})
    call_agent("reset", agent.reset, task, env)
    if config.record:
        env.start_recording(folder / RECORDING_FILE)
    stamp = lambda: datetime.datetime.now().strftime("%Y%m%d@%H%M%S%f")  # noqa: E731
    (folder / f"step_0_{stamp()}.png").write_bytes(env.screenshot_png())
    step, done, score, reason, postconfig_errors = 0, False, None, None, []
    last_type, last_parse_error = None, False
    replays_solution = bool(getattr(agent, "replays_solution", False))
    max_steps = config.max_steps
    if replays_solution:  # the reference solution is replayed whole: --max_steps is the agents' budget
        max_steps = max(max_steps, len(getattr(agent, "actions", ())) + 1)
    if hasattr(env, "max_steps"):
        env.max_steps = max_steps
    instruction = task_instruction(task, config.verbose_instruction)
    if config.rag:
        from desktop_env.rag import augment_instruction, default_index_path

        instruction = augment_instruction(instruction, config.rag_topk, default_index_path(config.cache_dir))

    def check_time():
        if time.monotonic() > deadline:
            raise TaskTimeout(f"task attempt exceeded --task_timeout {config.task_timeout:g} s")

    with open(folder / TRAJECTORY_FILE, "w") as traj:
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

        while not done and step < max_steps:
            check_time()
            response, actions = call_agent("predict", agent.predict, instruction, obs)
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
                if replays_solution and isinstance(action, dict) and "command" in action:
                    info = run_command_step(env, action, deadline)
                    reward, terminated, truncated = 0.0, False, False
                elif replays_solution and isinstance(action, dict) and "gui_step" in action:
                    obs, reward, terminated, truncated, info = run_gui_step(env, action, deadline)
                else:
                    obs, reward, terminated, truncated, info = env.step(action)
                if config.sleep_after_execution:
                    time.sleep(config.sleep_after_execution)
                shot = f"step_{step}_{stamp()}.png"
                (folder / shot).write_bytes(env.screenshot_png())
                last_type = action_struct(action)["type"]
                record(action, response, turn, i == 0, reward, terminated or truncated, info, shot)
                failure = step_failure(info) if replays_solution else None
                if failure:
                    index = action.get("index", i) if isinstance(action, dict) and "gui_step" in action else i
                    raise SolutionStepFailed(f"the reference solution's step failed: {failure}",
                                             path=str(task.path) if task.path else task.id,
                                             field=f"solution[{index}]")
                if terminated or truncated:
                    done, score, reason = True, float(reward), info.get("reason")
                    postconfig_errors = list(info.get("postconfig_errors") or [])
                    break
                check_time()
                if step >= max_steps:
                    break
    if config.record:
        try:
            env.end_recording()
        except Exception:  # a failed encoder must not cost the score
            log.exception("ending the recording")
    if score is None:
        verdict = env.evaluate()
        score = float(verdict)
        reason = verdict.reason.to_json() if getattr(verdict, "reason", None) is not None else None
        postconfig_errors = list(getattr(verdict, "postconfig_errors", None) or [])
        _note_score(folder / TRAJECTORY_FILE, score, reason, postconfig_errors)
    return {"score": score, "reason": reason, "postconfig_errors": postconfig_errors, "steps": step,
            "last_type": last_type, "last_parse_error": last_parse_error}
