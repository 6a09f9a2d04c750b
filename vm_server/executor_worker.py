"""Worker process of the persistent Python executor (run as a script, not imported).

Protocol, one JSON object per line: on the inherited stdin it reads requests
``{"code", "mode", "stdout", "stderr"}`` (the two paths are files the parent
created); on the inherited stdout it answers ``{"returncode"}``. The code's own
output goes to those files through file descriptors 1 and 2, so programs the
code starts write there too. At start it imports pyautogui and reports
``{"ready": true, "pid"}`` or ``{"ready": false, "error"}``.
"""
import builtins
import json
import os
import sys
import threading
import time
import traceback


def _watch_parent(parent_pid):
    # The code being run may block forever; leave when the server is gone.
    while True:
        if os.getppid() != parent_pid:
            os._exit(0)
        time.sleep(1.0)


def _send(channel, obj):
    channel.write((json.dumps(obj) + "\n").encode("utf-8"))
    channel.flush()


def _lost_display(exc):
    """True when ``exc`` means the X connection is gone (X restarted): the worker must be replaced."""
    try:
        from Xlib import error as xerror
    except ImportError:
        return False
    return isinstance(exc, (xerror.ConnectionClosedError, xerror.DisplayConnectionError))


def _keysym(ch):
    """X keysym of one character: Latin-1 keysyms are the code point, the rest 0x01000000 + it."""
    code = ord(ch)
    return code if 0x20 <= code <= 0x7e or 0xa0 <= code <= 0xff else 0x01000000 + code


def _remap(d, first, mapping, rows):
    """Set the keysyms of several keycodes (``rows``: keycode -> keysyms) in one request.

    Every request sends each client a MappingNotify, on which window managers re-grab their key
    bindings; one request per keycode (hundreds for CJK text) kept the desktop busy for seconds.
    """
    if rows:
        low, high = min(rows), max(rows)
        d.change_keyboard_mapping(low, [rows.get(k, mapping[k - first]) for k in range(low, high + 1)])
        d.sync()


def _type_any_character(pyautogui):
    """Make pyautogui.write/typewrite type characters its key table lacks (é, €, 中) instead of skipping them.

    pyautogui's X11 backend presses only characters it found in the keymap at import and silently
    does nothing for the rest. Here each missing character of a message is bound to a spare
    keycode and added to that table for the call, then released. Binding them all before typing
    keeps the keymap stable while keys go out (see ``desktop_env/actions.py`` for why that matters).
    """
    try:
        from pyautogui import _pyautogui_x11 as x11
        from Xlib import X
    except ImportError:  # another platform backend, or no Xlib: leave pyautogui as it is
        return
    # pyautogui keeps, per character, the first keycode carrying its keysym and adds Shift for
    # "shift characters". On a pc105 keymap the first keycode with 'less' is the ISO key, whose
    # shifted level is 'greater', so '<' came out as '>'. Take a keycode with the keysym on the
    # level pyautogui will press; a character without one is bound to a spare keycode when typed.
    for c in [k for k in x11.keyboardMapping if len(k) == 1 and k.isprintable()]:
        level = 1 if pyautogui.isShiftCharacter(c) else 0
        codes = sorted(code for code, index in x11._display.keysym_to_keycodes(_keysym(c)) if index == level)
        x11.keyboardMapping[c] = codes[0] if codes else None
    original = pyautogui.typewrite

    def typewrite(message, *args, **kwargs):
        missing = ([c for c in dict.fromkeys(message) if c.isprintable() and not x11.keyboardMapping.get(c)]
                   if isinstance(message, str) else [])
        if not missing:
            return original(message, *args, **kwargs)
        d = x11._display
        first = d.display.info.min_keycode
        mapping = d.get_keyboard_mapping(first, d.display.info.max_keycode - first + 1)
        width = len(mapping[0])
        spare = [first + i for i, syms in enumerate(mapping) if not any(syms)]
        if not spare:
            return original(message, *args, **kwargs)
        start = 0
        while start < len(message):
            # The longest piece whose missing characters fit in the spare keycodes.
            need, end = [], start
            while end < len(message):
                c = message[end]
                if c in missing and c not in need:
                    if len(need) == len(spare):
                        break
                    need.append(c)
                end += 1
            bound = dict(zip(spare, need))
            _remap(d, first, mapping, {keycode: [_keysym(c)] * width for keycode, c in bound.items()})
            x11.keyboardMapping.update({c: keycode for keycode, c in bound.items()})
            if need:
                time.sleep(0.05)  # clients apply the new mapping (MappingNotify) before the keys arrive
            try:
                original(message[start:end], *args, **kwargs)
            finally:
                if need:
                    time.sleep(0.05)
                _remap(d, first, mapping, {keycode: [X.NoSymbol] * width for keycode in bound})
                for c in need:
                    x11.keyboardMapping.pop(c, None)
            start = end

    typewrite.__doc__ = original.__doc__
    pyautogui.typewrite = pyautogui.write = typewrite


def _run(code, mode, pyautogui, defaults):
    """Execute ``code`` in fresh globals; return (exit status, whether the worker must restart)."""
    pyautogui.FAILSAFE = False
    pyautogui.PAUSE = defaults["PAUSE"]
    scope = {"__name__": "__main__", "__builtins__": builtins}
    if mode == "pyautogui":
        import time as time_module
        scope.update(pyautogui=pyautogui, time=time_module)
    try:
        exec(compile(code, "<code>", "exec"), scope)  # noqa: S102 - running agent code is the job
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0, False
        print(exc.code, file=sys.stderr)
        return 1, False
    except BaseException as exc:  # noqa: B902 - any failure of the agent's code is reported, not fatal
        # Leave out this frame: the traceback should start in the agent's code.
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
        return 1, _lost_display(exc)
    return 0, False


def main():
    """Serve requests until the parent closes the channel."""
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # stray output between requests goes nowhere, never into the channel
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    try:
        import pyautogui
    except BaseException:  # noqa: B902 - report why the import failed (no display, missing package)
        _send(replies, {"ready": False, "error": traceback.format_exc()})
        return 1
    _type_any_character(pyautogui)
    defaults = {"PAUSE": pyautogui.PAUSE}
    _send(replies, {"ready": True, "pid": os.getpid()})

    saved_err = os.dup(2)
    for line in requests:
        request = json.loads(line)
        out_fd = os.open(request["stdout"], os.O_WRONLY | os.O_TRUNC)
        err_fd = os.open(request["stderr"], os.O_WRONLY | os.O_TRUNC)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.close(out_fd)
        os.close(err_fd)
        restart = False
        try:
            returncode, restart = _run(request["code"], request.get("mode", "python"), pyautogui, defaults)
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001 - the code may have closed or replaced it
                    pass
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(null, 1)
            os.dup2(saved_err, 2)
        _send(replies, {"returncode": returncode, "restart": restart})
        if restart:  # pyautogui's X connection is dead; a new worker opens a new one
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
