"""One episode: reset to the task, let the agent act until it ends, record every step, score.

Every action the agent gives is carried out by ``agent.act(env, action, deadline)``: ``env.step`` for
every agent but the oracle, whose steps (its reference solution's, :mod:`desktop_env.replay`) may be
shell steps and GUI steps too. For an agent that replays the task's reference solution
(``agent.replays_solution``) a failing step stops the episode as a broken task.
"""
from __future__ import annotations

import datetime
import json
import logging
import time
from pathlib import Path

from desktop_env.harness.config import RunConfig
from desktop_env.harness.layout import RECORDING_FILE, RESULT_FILE, TRAJECTORY_FILE, now_iso, write_atomic
from desktop_env.harness.status import TaskTimeout, infra_errors
from desktop_env.replay import step_failure

log = logging.getLogger(__name__)


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def recorded(action):
    """An action as traj.jsonl records it: a typed step of a reference solution as its ``to_action()``
    (``{"command", "shell"}``, ``{"gui_step", "index"}`` or the action), any other action as it is."""
    to_action = getattr(action, "to_action", None)
    return to_action() if callable(to_action) else action


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
                new_obs, reward, terminated, truncated, info = agent.act(env, action, deadline)
                obs = obs if new_obs is None else new_obs  # a shell step observes nothing
                if config.sleep_after_execution:
                    time.sleep(config.sleep_after_execution)
                shot = f"step_{step}_{stamp()}.png"
                (folder / shot).write_bytes(env.screenshot_png())
                as_json = recorded(action)
                last_type = action_struct(as_json)["type"]
                record(as_json, response, turn, i == 0, reward, terminated or truncated, info, shot)
                failure = step_failure(info) if replays_solution else None
                if failure:
                    index = getattr(action, "index", i)
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
