"""A VM of a cached image profile for a test module: skip when the image is not built, boot, revert."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.image.store import find_image
from desktop_env.providers.qemu.provider import QemuProvider


def cached_image_or_skip(profile: str, build_hint: str):
    """The cached image of ``profile``; skips the test, saying how to build it, when there is none."""
    image = find_image(profile)
    if image is None:
        pytest.skip(f"no `{profile}` image in the cache; build it with: {build_hint}")
    return image


@contextlib.contextmanager
def running(image) -> Iterator[tuple[QemuProvider, PythonController]]:
    """A VM restored from ``image``'s init_state and a controller with its token; stopped on exit."""
    provider = QemuProvider(image=image)
    provider.start()
    try:
        controller = PythonController(provider.server.host, provider.server.port, token=provider.token)
        try:
            yield provider, controller
        finally:
            controller.close()
    finally:
        provider.stop()


def back_to_init_state(provider: QemuProvider, controller: PythonController) -> PythonController:
    """Revert the VM to init_state (nothing ever started in it) and return the controller once it answers."""
    provider.revert_to_snapshot()
    controller.wait_ready(timeout_s=120, require_display=False)
    return controller
