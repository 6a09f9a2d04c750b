"""Test-suite options: the default run is quick; ``--full`` (what CI runs) adds VM and slow tests."""
import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true",
                     help="also run tests marked vm and slow (builds the base image if it is not cached)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason="needs --full (marked vm or slow)")
    for item in items:
        if "vm" in item.keywords or "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _time_scale_kept():
    """Every test ends with ``$DESKTOP_ENV_TIME_SCALE`` as it found it: a test that exports a time scale (as
    ``RunConfig.apply_time_scale`` does for a run's workers) does not stretch the limits of the tests after it."""
    from desktop_env.limits import SCALE_ENV

    before = os.environ.get(SCALE_ENV)
    yield
    if os.environ.get(SCALE_ENV) != before:
        if before is None:
            os.environ.pop(SCALE_ENV, None)
        else:
            os.environ[SCALE_ENV] = before


@pytest.fixture(scope="session")
def smoke_results(request, tmp_path_factory):
    """The smoke suite verified once per session (oracle and noop, 2 VMs): a VerifyTable.

    Its ``result_dirs["oracle"]`` / ``["noop"]`` are run.py result folders; ``rows`` hold each
    task's scores and verdict. Skips unless ``--full``. Shared so CI runs the suite only once.
    """
    if not request.config.getoption("--full"):
        pytest.skip("needs --full (runs the smoke suite in VMs)")
    from pathlib import Path

    from desktop_env.image.builder import ensure_image
    from desktop_env.verify import verify

    image = ensure_image("base")
    suite = Path(__file__).resolve().parents[1] / "evaluation_examples" / "test_smoke.json"
    return verify(suite, tmp_path_factory.mktemp("smoke_verify"), num_envs=2, path_to_vm=image.name)
