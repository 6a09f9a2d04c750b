"""Getters that read the VM's desktop: terminal, accessibility tree, sizes, wallpaper, directory listing."""
from __future__ import annotations

from pathlib import Path

from desktop_env.session import SetupContext
from desktop_env.registry import GETTERS


@GETTERS.register()
def get_vm_terminal_output(ctx: SetupContext) -> str | None:
    """The text of the focused terminal in the VM."""
    return ctx.controller.terminal_output()


@GETTERS.register()
def get_accessibility_tree(ctx: SetupContext) -> str:
    """The VM's accessibility tree (XML)."""
    return ctx.controller.accessibility_tree()


@GETTERS.register()
def get_vm_screen_size(ctx: SetupContext):
    """The VM's screen size as the server reports it."""
    return ctx.controller.screen_size()


@GETTERS.register()
def get_vm_window_size(ctx: SetupContext, app_class_name: str):
    """The size of the window of ``app_class_name``."""
    return ctx.controller.window_size(app_class_name)


@GETTERS.register()
def get_vm_wallpaper(ctx: SetupContext, dest: str = "wallpaper.png") -> Path | None:
    """The current wallpaper image, saved in the cache; returns its local path (None if there is none)."""
    data = ctx.controller.wallpaper()
    if not data:
        return None
    target = ctx.cache_path(dest)
    target.write_bytes(data)
    return target


@GETTERS.register()
def get_list_directory(ctx: SetupContext, path: str):
    """The directory tree under ``path`` in the VM."""
    return ctx.controller.list_directory(path)
