"""Named time limits (desktop_env/limits.py) against the real in-VM server on the host: scaling, expiry, messages."""
from __future__ import annotations

import time

import pytest

from desktop_env import limits
from desktop_env.errors import DesktopEnvError

pytestmark = pytest.mark.xvfb


def test_every_limit_is_scaled_by_one_setting(monkeypatch):
    monkeypatch.delenv(limits.SCALE_ENV, raising=False)
    base = {name: limits.limit(name) for name in limits.LIMITS}
    monkeypatch.setenv(limits.SCALE_ENV, "2.5")
    assert all(limits.limit(name) == pytest.approx(2.5 * s) for name, s in base.items())
    assert limits.limit("setup.command", 450) == pytest.approx(1125)  # a task's own timeout_s is scaled too
    assert limits.typing_limit("x" * 100) == pytest.approx(2.5 * (120 + 0.6 * 100))


@pytest.mark.parametrize("bad", ["fast", "0", "-1"])
def test_a_bad_scale_says_how_to_set_it(monkeypatch, bad):
    monkeypatch.setenv(limits.SCALE_ENV, bad)
    with pytest.raises(DesktopEnvError, match=limits.SCALE_ENV):
        limits.limit("setup.command")


def test_a_command_past_its_limit_raises_the_named_limit_with_how_to_raise_it(client, monkeypatch, caplog):
    monkeypatch.setitem(limits.LIMITS, "evaluator.command", (1.0, "test"))
    monkeypatch.setenv(limits.SCALE_ENV, "1.5")
    started = time.monotonic()
    with caplog.at_level("ERROR"), pytest.raises(limits.TimeLimitExceeded) as ei:
        limits.execute_limited(client, "sleep 30", shell=True, name="evaluator.command", what="eval.sh of the test")
    assert time.monotonic() - started < 20  # killed at the limit, not after the command's 30 s
    err = ei.value
    assert err.name == "evaluator.command" and err.seconds == pytest.approx(1.5)
    assert "time limit evaluator.command (1.5 s" in str(err) and "eval.sh of the test" in str(err)
    assert "--time_scale" in str(err)
    assert any("time limit evaluator.command" in r.getMessage() for r in caplog.records)


def test_a_command_within_its_limit_returns_the_reply(client, monkeypatch):
    monkeypatch.delenv(limits.SCALE_ENV, raising=False)
    reply = limits.execute_limited(client, "echo out; echo err >&2; exit 3", shell=True, name="setup.command")
    assert (reply["output"], reply["error"], reply["returncode"]) == ("out\n", "err\n", 3)
