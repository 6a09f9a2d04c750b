"""Errors classified by where they come from (docs/agents.md): the agent's own exception is agent_error (final,
counted as a failure); the model API refusing the key stops the run with one message; a request rejected for its
content or size is the agent's failure; a transient API failure is an infrastructure error, retried on resume.
Run through the harness's real run_job, with the real LLM agent against a local server speaking the OpenAI wire
format (tests/agents/fake_api.py)."""
import json
import sys
from pathlib import Path

import pytest

from desktop_env.evaluators.evaluator import evaluate
from desktop_env.harness.jobs import Job, run_job
from desktop_env.harness.options import parse_args
from desktop_env.harness.summary import format_summary, summarize
from desktop_env.session import SetupContext

sys.path.insert(0, str(Path(__file__).parent / "agents"))
from fake_api import FakeModelAPI  # noqa: E402

TASK = {"id": "t-1", "snapshot": "base", "instruction": "Say 42.", "config": [],
        "evaluator": {"func": "exact_match", "result": {"type": "rule", "rules": "41"},
                      "expected": {"type": "rule", "rules": {"expected": "42"}}}}


class HostEnv:
    """The env contract run_job uses; scores with the real evaluator on a task whose getters stay on the host."""

    def __init__(self, cache_dir):
        self.cache_dir, self.task = cache_dir, None

    def reset(self, options=None):
        if options:
            self.task = options["task_config"]
        return {"screenshot": None, "accessibility_tree": "", "error": ""}, {}

    def screenshot_png(self):
        return b"\x89PNG\r\n\x1a\n"

    def step(self, action):
        verdict = evaluate(self.task, SetupContext(controller=None, task=self.task, cache_dir=self.cache_dir),
                           last_action=action)
        return {}, float(verdict), True, False, {"reason": verdict.reason.to_json()}

    def close(self):
        pass


class CrashingAgent:
    """An agent whose own code has a bug."""

    last_turn = None

    def reset(self, task, env):
        pass

    def predict(self, instruction, obs):
        return {}["missing-key"]


@pytest.fixture
def job(tmp_path):
    path = tmp_path / "t-1.json"
    path.write_text(json.dumps(TASK))
    return Job("os", "t-1", 1, path, tmp_path / "results/os/t-1")


def args_for(tmp_path, *extra):
    return parse_args(["--model", "gpt-test", "--observation_type", "a11y_tree", "--result_dir",
                       str(tmp_path / "results"), *extra])


def test_an_exception_in_the_agent_s_code_is_agent_error_counted_as_a_failure(tmp_path, job):
    args = args_for(tmp_path)
    status = run_job(job, args, CrashingAgent(), [HostEnv(tmp_path / "cache")], None)
    assert status["status"] == "agent_error" and status["final"] and status["score"] == 0.0
    assert "predict raised KeyError" in status["error"] and "missing-key" in status["traceback"]
    written = json.loads((job.folder / "status.json").read_text())
    assert written["status"] == "agent_error" and "KeyError" in written["traceback"]
    assert (job.folder / "result.txt").read_text().strip() == "0.0"
    summary = summarize(args, [{**job.meta(), **written}], [], 0)
    assert summary["overall"]["runs"] == 1 and summary["overall"]["success_rate"] == 0.0  # not left out
    assert summary["agent_errors"][0]["task_id"] == "t-1"
    assert "agent errors (counted as failures):" in format_summary(summary)


def test_a_wrong_answer_records_its_reason(tmp_path, job, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    from desktop_env.agents import create_agent

    with FakeModelAPI(["DONE"]) as api:
        agent = create_agent("gpt-test", base_url=api.openai_url, observation_type="a11y_tree")
        status = run_job(job, args_for(tmp_path), agent, [HostEnv(tmp_path / "cache")], None)
    assert status["status"] == "wrong_result"
    assert status["reason"]["kind"] == "value_mismatch" and "41" in status["reason"]["text"]
    traj = [json.loads(x) for x in (job.folder / "traj.jsonl").read_text().splitlines()]
    assert traj[-1]["info"]["reason"] == status["reason"]


@pytest.mark.parametrize("reply,outcome", [
    ({"status": 401, "message": "invalid x-api-key"}, "stop"),
    ({"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"}, "agent_error"),
    ({"status": 503}, "infra_error"),
])
def test_model_api_failures_by_kind(tmp_path, job, monkeypatch, reply, outcome):
    monkeypatch.setenv("MY_KEY", "sk-test")
    from desktop_env.agents import create_agent

    args = args_for(tmp_path, "--api_key_env", "MY_KEY")
    with FakeModelAPI([reply]) as api:
        agent = create_agent("gpt-test", base_url=api.openai_url, observation_type="a11y_tree", api_key_env="MY_KEY",
                             api_attempts=2, api_backoff_s=0.01)
        status = run_job(job, args, agent, [HostEnv(tmp_path / "cache")], None)
    written = json.loads((job.folder / "status.json").read_text())
    assert "stop_run" not in written
    if outcome == "stop":  # no request will do: the run stops at once, naming the key's variable
        assert status["status"] == "infra_error" and not status["final"]
        assert "MY_KEY" in status["stop_run"] and "401" in status["stop_run"]
        assert len(api.requests) == 1  # not retried
    elif outcome == "agent_error":  # this request's size: the agent's failure, final and scored 0
        assert status["status"] == "agent_error" and status["final"] and status["score"] == 0.0
        assert "too long" in status["error"] and "stop_run" not in status
    else:  # transient: retried with backoff, then an infrastructure error a rerun repeats
        assert status["status"] == "infra_error" and not status["final"] and "stop_run" not in status
        assert len(api.requests) == 2 * (args.retries + 1)
