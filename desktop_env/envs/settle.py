"""Is the desktop settled? The guest's CPU use and how much of the screen changed between two looks:
what warm-state builds and the ``idle`` wait of GUI solutions poll."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def guest_busy(controller, interval_s: float) -> float:
    """Fraction of the guest's CPU time spent busy over ``interval_s`` (from /proc/stat), 1.0 if unreadable."""
    probe = f"head -1 /proc/stat; sleep {interval_s:g}; head -1 /proc/stat"
    try:
        out = controller.execute(["sh", "-c", probe], shell=False, timeout_s=interval_s + 30).get("output", "")
        first, second = [list(map(int, line.split()[1:])) for line in out.strip().splitlines()[-2:]]
    except Exception as exc:  # an answer we cannot read counts as busy
        log.debug("reading the guest's CPU use failed: %s", exc)
        return 1.0
    delta = [b - a for a, b in zip(first, second)]
    total = sum(delta) or 1
    idle = delta[3] + (delta[4] if len(delta) > 4 else 0)  # idle + iowait
    return 1.0 - idle / total


#: Pixels that may change between two checks of a settled screen: a ticking clock or an auto-refresh
#: countdown (Dagster's, 8x10 pixels) never stops; a loading spinner or a page still drawing is larger.
SETTLE_PIXELS = 400


def screen_pixels(png: bytes | None):
    """A screenshot's pixels as an RGB array (height x width x 3), None for no image."""
    if not png:
        return None
    import io

    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        return np.asarray(img.convert("RGB"))


def changed_pixels(a, b) -> int:
    """How many pixels differ between two screens (all of them when their sizes differ)."""
    if a.shape != b.shape:
        return a.shape[0] * a.shape[1]
    return int((a != b).any(axis=2).sum())
