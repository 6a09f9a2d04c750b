"""Which built image a profile name means: the one this checkout's recipe builds, when it is built.

An image is named after its recipe's hash, so a cache can hold several images of one profile (built
from other checkouts, or before a change). ``--path_to_vm base`` should run the image of the commit
in use, not whichever was built last.
"""
from __future__ import annotations

import logging
from pathlib import Path

from desktop_env.image.builder import BuildOptions, ImageBuilder
from desktop_env.image.store import ImageInfo, resolve_image

log = logging.getLogger(__name__)


def current_image_name(profile: str, cache: Path | None = None) -> str | None:
    """The name of the image this checkout's recipe of ``profile`` builds (default screen and auth),
    or None when it cannot be worked out (an unknown profile, an unreadable recipe)."""
    try:
        return f"{profile}-{ImageBuilder(BuildOptions(profile=profile, cache_dir=cache)).hashes()[1]}"
    except Exception as exc:  # noqa: BLE001 - only a preference among built images hangs on it
        log.debug("no current image name for profile %s: %s", profile, exc)
        return None


def resolve(ref: str, cache: Path | None = None) -> ImageInfo:
    """:func:`~desktop_env.image.store.resolve_image`, a profile name preferring this checkout's image
    (the newest of the profile, with a warning, when that one is not built)."""
    return resolve_image(ref, cache, prefer=lambda profile: current_image_name(profile, cache))
