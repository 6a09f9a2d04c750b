"""dbt_profiles (no account: it reads profiles.yml from the guest) against the in-VM server under Xvfb."""
from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path

import pytest

from desktop_env.evaluators.evaluator import run_getter
from desktop_env.tasks import GetterSpec

pytestmark = pytest.mark.xvfb

_LIVE = Path(__file__).resolve().parent.parent / "setup_live" / "conftest.py"


def _load_live_fixtures():
    """The live fixtures of tests/setup_live (in-VM server on the host, a tmp suite), loaded, not copied."""
    spec = importlib.util.spec_from_file_location("_cloud_live_fixtures", _LIVE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_live = _load_live_fixtures()
server_python, xsession, server, client, apps = _live.server_python, _live.xsession, _live.server, _live.client, _live.apps
guest, suite, context = _live.guest, _live.suite, _live.context


def test_dbt_profiles_from_the_guest(suite, context, guest, client):
    tid = str(uuid.uuid4())
    ctx = context(suite("dbt", {"id": tid, "instruction": "x", "config": [], "evaluator": {"func": "infeasible"}}))
    spec = {"type": "dbt_profiles", "dirs": [str(guest / "nowhere"), "$DESKTOP_ENV_NO_SUCH_VAR", str(guest / "proj")],
            "dest": "profiles.yml"}
    assert run_getter(ctx, GetterSpec.from_json(spec)) is None
    (guest / "proj").mkdir()
    (guest / "proj" / "profiles.yml").write_text("jaffle:\n  target: dev\n")
    got = run_getter(ctx, GetterSpec.from_json(spec))
    assert Path(got).read_text() == "jaffle:\n  target: dev\n" and Path(got).parent == ctx.cache_dir
    # a $VARIABLE is expanded by the guest's login shell
    home = client.execute(["bash", "-lc", "echo $HOME"])["output"].strip()
    (Path(home) / ".dbt").mkdir(exist_ok=True)
    (Path(home) / ".dbt" / "profiles.yml").write_text("from_home: {}\n")
    spec["dirs"] = ["$HOME/.dbt", str(guest / "proj")]
    assert Path(run_getter(ctx, GetterSpec.from_json(spec))).read_text() == "from_home: {}\n"
