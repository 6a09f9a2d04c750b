"""Fixtures for fault tests: the cached base image, one environment per module, a private runtime folder."""
import logging

import pytest

from desktop_env.paths import RUNTIME_ENV


@pytest.fixture(scope="session")
def base_image():
    """The base image for the current recipe; builds it when it is not cached."""
    from desktop_env.image.builder import ensure_image

    logging.getLogger("desktop_env").setLevel(logging.INFO)
    return ensure_image("base")


@pytest.fixture
def private_runtime(tmp_path, monkeypatch):
    """A runtime folder (VM folders, port locks) only this test uses; images still come from the shared cache.

    Set in the environment, so subprocesses (run.py) inherit it.
    """
    run_dir = tmp_path / "runtime"
    run_dir.mkdir()
    monkeypatch.setenv(RUNTIME_ENV, str(run_dir))
    return run_dir


@pytest.fixture(scope="module")
def env(base_image, request):
    """One DesktopEnv per module, reset once; its keyword arguments come from the module's ``ENV_KWARGS``."""
    from desktop_env.envs import DesktopEnv

    kwargs = {"require_a11y_tree": False, **getattr(request.module, "ENV_KWARGS", {})}
    environment = DesktopEnv(path_to_vm=base_image.name, **kwargs)
    try:
        environment.reset()
        yield environment
    finally:
        environment.close()
