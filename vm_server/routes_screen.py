"""Endpoints about the screen: screenshots, accessibility, terminal, windows, wallpaper, video."""
from __future__ import annotations

import logging
import os
import platform as platform_module

from flask import Blueprint, Response, jsonify, request, send_file

from . import desktop, display
from .errors import ApiError, BadRequest, NotFound
from .webutil import get_bool, get_number, get_str, guest_path, params, state

logger = logging.getLogger(__name__)

bp = Blueprint("screen", __name__)


def _display():
    cfg = state().config
    return cfg.display_name, cfg.display_wait_s


@bp.route("/screenshot", methods=["GET"])
def screenshot():
    """PNG of the screen with the mouse cursor drawn in (503 while X is not up)."""
    name, wait_s = _display()
    png = display.screenshot_png(name, wait_s)
    return Response(png, mimetype="image/png", headers={"Cache-Control": "no-store"})


@bp.route("/accessibility", methods=["GET"])
def accessibility():
    """AT-SPI tree as XML: ?max_depth=&max_nodes=&timeout_s=&cells=&web= -> {"AT": xml, nodes, hidden, truncated, pages}.

    ``cells=false`` leaves out the cells of spreadsheets (read last otherwise, in what is left of
    the time budget): the quick way to find a dialog's button over a Calc window. ``web=atspi``
    walks the AT-SPI subtree of Chromium's pages too, instead of reading them over DevTools
    (``web=devtools``, the default, when Chromium has a remote-debugging port)."""
    cfg = state().config
    args = request.args.to_dict()
    max_depth = get_number(args, "max_depth", cfg.a11y_max_depth, integer=True)
    max_nodes = get_number(args, "max_nodes", cfg.a11y_max_nodes, integer=True)
    timeout_s = get_number(args, "timeout_s", cfg.a11y_timeout_s)
    cells = get_bool(args, "cells", True)
    web = args.get("web", "devtools")
    if web not in ("devtools", "atspi"):
        raise BadRequest(f"web={web!r}: use devtools (read Chromium's pages over DevTools) or atspi")
    xml, stats = state().a11y.tree_xml(max_depth=max_depth, max_nodes=max_nodes, timeout_s=timeout_s, cells=cells,
                                       devtools=web == "devtools")
    return jsonify(AT=xml, status="success", **stats)


@bp.route("/terminal", methods=["GET"])
def terminal():
    """Text of the focused terminal: {"output": text or null}."""
    output = state().a11y.terminal_text(timeout_s=state().config.a11y_timeout_s)
    return jsonify(output=output, status="success")


@bp.route("/screen_size", methods=["GET", "POST"])
def screen_size():
    """{"width", "height"} of the screen in pixels."""
    name, wait_s = _display()
    width, height = display.screen_size(name, wait_s)
    return jsonify(width=width, height=height)


@bp.route("/window_size", methods=["POST"])
def window_size():
    """Size of the first window whose WM_CLASS matches: form app_class_name -> {"width", "height"}."""
    app_class_name = get_str(params(), "app_class_name")
    name, wait_s = _display()
    size = display.find_window_size(name, app_class_name, wait_s)
    if size is None:
        raise NotFound(f"no window with class {app_class_name!r}")
    return jsonify(width=size[0], height=size[1])


@bp.route("/cursor_position", methods=["GET"])
def cursor_position():
    """{"x", "y"} of the mouse pointer."""
    name, wait_s = _display()
    x, y = display.cursor_position(name, wait_s)
    return jsonify(x=x, y=y)


@bp.route("/platform", methods=["GET"])
def platform():
    """The OS name as plain text ("Linux"), as old clients expect."""
    return Response(platform_module.system(), mimetype="text/plain")


def _window_action(action: str, verb: str):
    data = params()
    window_name = get_str(data, "window_name")
    strict = get_bool(data, "strict", False)
    by_class = get_bool(data, "by_class", False)
    cfg = state().config
    display.screen_size(cfg.display_name, cfg.display_wait_s)  # 503 while X is not up
    proc = desktop.wmctrl(action, window_name, strict, by_class, cfg.child_environment())
    if proc is None:
        raise ApiError("wmctrl is not installed in the guest (apt-get install wmctrl)", 500)
    if proc.returncode != 0:
        raise NotFound(f"no window matches {window_name!r} (strict={strict}, by_class={by_class})")
    return jsonify(status="success", message=f"Window {verb} successfully")


@bp.route("/setup/activate_window", methods=["POST"])
def activate_window():
    """Raise and focus a window: {window_name, strict?, by_class?}; 404 when none matches."""
    return _window_action("a", "activated")


@bp.route("/setup/close_window", methods=["POST"])
def close_window():
    """Close a window gracefully: {window_name, strict?, by_class?}; 404 when none matches."""
    return _window_action("c", "closed")


@bp.route("/wallpaper", methods=["POST", "GET"])
def wallpaper():
    """The current wallpaper image file (404 when none is set)."""
    path = desktop.get_wallpaper(state().config.child_environment())
    if path is None:
        raise NotFound("no wallpaper image is set")
    return send_file(path)


@bp.route("/setup/change_wallpaper", methods=["POST"])
def change_wallpaper():
    """Set the wallpaper: {path} -> {status, message}; 404 when the file is missing."""
    path = guest_path(get_str(params(), "path"))
    if not os.path.isfile(path):
        raise NotFound(f"file not found: {path}")
    cfg = state().config
    methods = desktop.set_wallpaper(os.path.abspath(path), cfg.child_environment(), cfg.display_name)
    if not methods:
        raise ApiError("could not set the wallpaper: neither xfconf-query nor gsettings worked", 500)
    return jsonify(status="success", message="Wallpaper changed successfully", methods=methods)


@bp.route("/start_recording", methods=["POST"])
def start_recording():
    """Start a screen recording -> {status, message, recording_id}. Several may run at once."""
    rid = state().recorder.start()
    return jsonify(status="success", message="Started recording.", recording_id=rid)


@bp.route("/end_recording", methods=["POST"])
def end_recording():
    """Stop a recording and send its mp4: {recording_id?}; without an id, the latest one."""
    data = params() if (request.content_length or request.form or request.args) else {}
    rid = get_str(data, "recording_id", required=False)
    path = state().recorder.stop(rid)
    response = send_file(path, mimetype="video/mp4", as_attachment=True,
                         download_name=os.path.basename(path), conditional=False)
    response.call_on_close(lambda: _unlink_quietly(path))
    return response


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError as exc:
        logger.warning("could not remove %s: %s", path, exc)
