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
    import xkeys  # beside this script, which Python runs from its own folder

    xkeys.patch_pyautogui(pyautogui)
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
