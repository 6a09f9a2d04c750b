"""X11 access: waiting for the display, screenshots with the cursor, windows.

Every call opens its own connection (python-xlib connections are not thread
safe), so concurrent requests never share state.
"""
from __future__ import annotations

import array
import contextlib
import io
import logging
import os
import time

from .errors import ApiError, DisplayUnavailable

logger = logging.getLogger(__name__)

try:  # the server still answers /health and file endpoints without python-xlib
    from Xlib import X
    from Xlib import display as xdisplay
    from Xlib import error as xerror
except ImportError:  # pragma: no cover - python3-xlib is a hard dependency in the guest
    X = xdisplay = xerror = None


def xlib_problem() -> str | None:
    """Why the python-xlib in use cannot serve screenshots with cursors, or None when it can.

    PyPI's ``python3-Xlib`` 0.15 (a dependency pyautogui declares) installs an
    ``Xlib`` package without XFixes cursor support that shadows Debian's python3-xlib.
    """
    if xdisplay is None:
        return "python-xlib is not installed (apt-get install python3-xlib)"
    import importlib.util

    import Xlib

    if importlib.util.find_spec("Xlib.ext.xfixes") is None:
        return (f"the Xlib package at {os.path.dirname(Xlib.__file__)} has no XFixes support (PyPI's "
                "python3-Xlib 0.15?); screenshots will lack the cursor. Remove it from the venv "
                "(pip uninstall python3-xlib) and install vm_server/requirements.txt with --no-deps")
    return None


def _connect(name: str):
    if xdisplay is None:
        raise DisplayUnavailable("python-xlib is not installed (apt-get install python3-xlib)")
    return xdisplay.Display(name)


@contextlib.contextmanager
def connection(name: str, wait_s: float = 0.0):
    """Open a connection to display ``name``, retrying for up to ``wait_s`` seconds.

    Raises:
        DisplayUnavailable: the display did not accept a connection in time.
    """
    deadline = time.monotonic() + wait_s
    delay = 0.05
    while True:
        try:
            disp = _connect(name)
            break
        except DisplayUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - Xlib raises many types (DisplayError, OSError, ...)
            if time.monotonic() + delay > deadline:
                raise DisplayUnavailable(f"X display {name} is not ready ({exc}); it may still be "
                                         "starting, try again shortly") from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
    try:
        yield disp
    finally:
        try:
            disp.close()
        except Exception:  # noqa: BLE001 - closing a broken connection must not mask the real error
            pass


def is_available(name: str) -> bool:
    """True when display ``name`` accepts a connection right now."""
    try:
        with connection(name):
            return True
    except DisplayUnavailable:
        return False


def screen_size(name: str, wait_s: float = 0.0) -> tuple[int, int]:
    """(width, height) of the default screen in pixels."""
    with connection(name, wait_s) as disp:
        screen = disp.screen()
        return screen.width_in_pixels, screen.height_in_pixels


def set_root_property(name: str, prop: str, value: str) -> bool:
    """Set the root window's string property ``prop`` to ``value`` on display ``name``.

    Returns:
        True when the property was changed; False when it already held ``value``.
    """
    from Xlib import Xatom

    with connection(name) as disp:
        root = disp.screen().root
        atom = disp.intern_atom(prop)
        current = root.get_full_property(atom, Xatom.STRING)
        if current is not None and bytes(current.value) == value.encode():
            return False
        root.change_property(atom, Xatom.STRING, 8, value.encode())
        disp.sync()
    logger.info("root window property %s set to %s", prop, value)
    return True


def cursor_position(name: str, wait_s: float = 0.0) -> tuple[int, int]:
    """Pointer position on the root window."""
    with connection(name, wait_s) as disp:
        pointer = disp.screen().root.query_pointer()
        return pointer.root_x, pointer.root_y


def _grab_root(disp):
    from PIL import Image

    root = disp.screen().root
    geom = root.get_geometry()
    raw = root.get_image(0, 0, geom.width, geom.height, X.ZPixmap, 0xFFFFFFFF)
    formats = {f.depth: f.bits_per_pixel for f in disp.display.info.pixmap_formats}
    if raw.depth != 24 or formats.get(24) != 32:
        raise ApiError(f"unsupported X visual: depth {raw.depth}, {formats.get(raw.depth)} bits per pixel "
                       "(need depth 24 stored in 32 bits)", 500)
    return Image.frombytes("RGB", (geom.width, geom.height), raw.data, "raw", "BGRX")


def _draw_cursor(disp, image) -> bool:
    """Composite the current cursor image (XFixes) onto ``image``; False when unavailable."""
    from PIL import Image

    if not disp.has_extension("XFIXES"):
        return False
    disp.xfixes_query_version()  # XFixes requires the version handshake before other requests
    cur = disp.xfixes_get_cursor_image(disp.screen().root)
    if not cur.width or not cur.height:
        return False
    # ARGB words, premultiplied alpha; "BGRa" unpacks little-endian words to straight RGBA.
    pixels = array.array("I", cur.cursor_image)
    if pixels.itemsize != 4:  # pragma: no cover - 'I' is 32-bit on every Linux target
        pixels = array.array("L", cur.cursor_image)
    sprite = Image.frombytes("RGBA", (cur.width, cur.height), pixels.tobytes(), "raw", "BGRa")
    image.paste(sprite, (cur.x - cur.xhot, cur.y - cur.yhot), sprite)
    return True


def screenshot_png(name: str, wait_s: float = 0.0, with_cursor: bool = True) -> bytes:
    """PNG bytes of the whole screen, with the mouse cursor drawn in.

    Raises:
        DisplayUnavailable: the display is not reachable.
    """
    with connection(name, wait_s) as disp:
        image = _grab_root(disp)
        if with_cursor:
            try:
                _draw_cursor(disp, image)
            except Exception as exc:  # noqa: BLE001 - a missing cursor must not cost the screenshot
                logger.warning("could not draw the cursor: %s", exc)
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=3)
    return buf.getvalue()


def find_window_size(name: str, app_class_name: str, wait_s: float = 0.0) -> tuple[int, int] | None:
    """(width, height) of the first managed window whose WM_CLASS matches, case-insensitively."""
    wanted = app_class_name.lower()
    with connection(name, wait_s) as disp:
        root = disp.screen().root
        prop = root.get_full_property(disp.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        for window_id in (prop.value if prop is not None else []):
            try:
                window = disp.create_resource_object("window", window_id)
                wm_class = window.get_wm_class()
                if wm_class and wanted in (c.lower() for c in wm_class):
                    geom = window.get_geometry()
                    return geom.width, geom.height
            except xerror.XError:  # the window vanished while we looked
                continue
    return None


def output_names(name: str) -> list[str]:
    """Names of the RandR outputs (e.g. ``Virtual-1``); empty when RandR is missing."""
    try:
        with connection(name) as disp:
            if not disp.has_extension("RANDR"):
                return []
            root = disp.screen().root
            resources = root.xrandr_get_screen_resources()
            names = []
            for output in resources.outputs:
                info = disp.xrandr_get_output_info(output, resources.config_timestamp)
                names.append(info.name)
            return names
    except Exception as exc:  # noqa: BLE001 - only used to guess wallpaper property names
        logger.debug("could not list RandR outputs: %s", exc)
        return []
