"""Typing any text into the focused X window through XTest: every character, in order, whatever the load.

Used by the executor worker (imported by name: the worker runs as a script from this folder) for
``pyautogui.write``/``typewrite``, which is also what a computer_13 TYPING action runs. Three
hazards make keys go missing or come out doubled when the guest is slow, and each is removed here:

- **X autorepeat.** A key held longer than the repeat delay (500 ms) repeats. Under emulation
  the typing process can stall that long between a key's press and its release, and the
  application then sees the letter 17 times. Typing runs with autorepeat off (the image also
  turns it off for the whole session; this covers images that do not).
- **Keymap changes racing the application.** A character missing from the keymap is typed by
  binding its keysym to a spare keycode. A client reads the new binding only when it handles
  the MappingNotify, in order with the key events, and it reads the keymap *as it is then*.
  Reverting a binding right after typing (what xdotool does per character, and what this code
  did with a 50 ms pause) loses every key a lagging client has not reached yet. Bindings are
  therefore kept: a keycode is rebound only when every spare keycode is taken, least recently
  used first, and then only after a pause that lets the clients catch up.
- **Hidden per-call state.** The bindings live in this process for as long as the worker
  does, and a new worker adopts the ones it finds, so the spare keycodes are never leaked.

And typing waits, before it starts and before it returns, until the application in front has
read its input (its CPU use has settled, see ``wait_until_read``). Before: a key sent just
earlier (the ``right`` of the step before) must be handled before typing rebinds keycodes and
turns autorepeat off; LibreOffice Calc under emulation otherwise handled that ``right`` after
the whole text, so every entry landed one column to the left. After: a busy application that
acts on the next action's shortcut before the text typed ahead of it would lose that text.
"""
from __future__ import annotations

import os
import time
from collections import OrderedDict

#: Seconds to leave clients to catch up before a bound keycode is given another character.
REBIND_PAUSE_S = 1.0


def keysym_of(ch: str) -> int:
    """X keysym of one character: Latin-1 keysyms are the code point, the rest 0x01000000 + it."""
    code = ord(ch)
    return code if 0x20 <= code <= 0x7e or 0xa0 <= code <= 0xff else 0x01000000 + code


def _char_of(keysym: int) -> str | None:
    if 0x20 <= keysym <= 0x7e or 0xa0 <= keysym <= 0xff:
        return chr(keysym)
    if 0x01000100 <= keysym <= 0x0110FFFF:
        return chr(keysym - 0x01000000)
    return None


class SpareKeys:
    """Spare keycodes bound to the characters the keymap lacks, kept bound, reused least recently used first.

    Args:
        display: an ``Xlib.display.Display``.
    """

    def __init__(self, display):
        self.display = display
        self.first = display.display.info.min_keycode
        count = display.display.info.max_keycode - self.first + 1
        mapping = display.get_keyboard_mapping(self.first, count)
        self.width = len(mapping[0])
        self.bound: OrderedDict[str, int] = OrderedDict()  # character -> keycode, least recently used first
        self.free: list[int] = []
        for i, syms in enumerate(mapping):
            keycode = self.first + i
            if not any(syms):
                self.free.append(keycode)
            elif (len({s for s in syms if s}) == 1 and syms[0] and (ch := _char_of(syms[0])) is not None
                  and not ch.isascii() and ch not in self.bound):
                # one non-ASCII keysym on every level it fills: a binding an earlier worker made (the
                # server keeps it on the first levels only); keymaps do not look like this
                self.bound[ch] = keycode
        self.spare_count = len(self.free) + len(self.bound)

    def bind(self, chars) -> dict[str, int]:
        """Bind each of ``chars`` (at most ``spare_count`` distinct ones) to a keycode; returns char -> keycode.

        Already bound characters keep their keycode; new ones take a free keycode, else the least
        recently used binding of a character not in ``chars`` (after ``REBIND_PAUSE_S``).

        Raises:
            ValueError: more distinct characters than spare keycodes.
        """
        wanted = list(dict.fromkeys(chars))
        if len(wanted) > self.spare_count:
            raise ValueError(f"{len(wanted)} characters to bind but only {self.spare_count} spare keycodes")
        rows: dict[int, list[int]] = {}
        evicted = False
        for ch in wanted:
            if ch in self.bound:
                self.bound.move_to_end(ch)
                continue
            if self.free:
                keycode = self.free.pop(0)
            else:
                victim = next(c for c in self.bound if c not in wanted)
                keycode = self.bound.pop(victim)
                evicted = True
            self.bound[ch] = keycode
            rows[keycode] = [keysym_of(ch)] * self.width
        if rows:
            if evicted:
                time.sleep(REBIND_PAUSE_S)  # keys already sent on these keycodes must be read first
            low, high = min(rows), max(rows)
            current = self.display.get_keyboard_mapping(low, high - low + 1)
            # One request for the whole span: each request makes every client re-read the keymap (and
            # window managers re-grab their keys), so one per character kept the desktop busy for seconds.
            self.display.change_keyboard_mapping(low, [rows.get(k, list(current[k - low])) for k in range(low, high + 1)])
            self.display.sync()
        return {ch: self.bound[ch] for ch in wanted}


#: Waiting for the application to read what was typed: sampling window and CPU share under which it is idle.
IDLE_SAMPLE_S = 0.3
IDLE_CPU_SHARE = 0.1
IDLE_SAMPLES = 2
RUNNABLE_PROBE_S = 0.05
#: Longest wait for the application: this much per character typed, plus IDLE_WAIT_BASE_S.
IDLE_WAIT_PER_CHAR_S = 0.5
IDLE_WAIT_BASE_S = 10.0


def focused_pid(display) -> int | None:
    """PID of the process owning the active window (``_NET_ACTIVE_WINDOW``'s ``_NET_WM_PID``), or None."""
    from Xlib import X

    try:
        root = display.screen().root
        active = root.get_full_property(display.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
        if not active or not active.value or not active.value[0]:
            return None
        window = display.create_resource_object("window", int(active.value[0]))
        pid = window.get_full_property(display.intern_atom("_NET_WM_PID"), X.AnyPropertyType)
        return int(pid.value[0]) if pid and len(pid.value) else None
    except Exception:  # noqa: BLE001 - a window gone meanwhile, no window manager: nothing to wait for
        return None


def _cpu_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def _runnable(pid: int) -> bool:
    """Whether a thread of ``pid`` is running or waiting for a CPU now (state R): on a host short of
    CPU a busy application can get almost no CPU time and still not be idle."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "R":
                        return True
            except (OSError, IndexError):
                continue
    except OSError:
        pass
    return False


_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY = 4, 20
_UDIAG_SHOW_NAME, _UDIAG_SHOW_PEER, _UDIAG_SHOW_RQLEN = 0x01, 0x04, 0x10
_UNIX_DIAG_NAME, _UNIX_DIAG_PEER, _UNIX_DIAG_RQLEN = 0, 2, 4
_ESTABLISHED = 1 << 1  # socket state bit (TCP_ESTABLISHED) in unix_diag_req.udiag_states


def _unix_sockets() -> dict[int, tuple[str, int, int]]:
    """Every connected unix socket of the machine: inode -> (bound name, peer inode, bytes unread).

    One ``sock_diag`` netlink dump (what ``ss -x`` reads); an accepted socket carries the name of the
    socket it was accepted on, so a client's peer names the server it talks to.
    """
    import socket
    import struct

    request = struct.pack("=BBHIIIII", socket.AF_UNIX, 0, 0, _ESTABLISHED, 0,
                          _UDIAG_SHOW_NAME | _UDIAG_SHOW_PEER | _UDIAG_SHOW_RQLEN, 0xFFFFFFFF, 0xFFFFFFFF)
    header = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, 0x1 | 0x300, 1, 0)  # REQUEST|DUMP
    found: dict[int, tuple[str, int, int]] = {}
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as nl:
        nl.send(header + request)
        while True:
            data, offset = nl.recv(1 << 16), 0
            while offset < len(data):
                length, kind = struct.unpack_from("=IH", data, offset)
                if kind == 3:  # NLMSG_DONE
                    return found
                if kind == 2:  # NLMSG_ERROR
                    raise OSError("sock_diag dump failed")
                body = data[offset + 16:offset + length]
                inode = struct.unpack_from("=I", body, 4)[0]
                name, peer, unread, at = "", 0, 0, 16
                while at + 4 <= len(body):
                    size, attr = struct.unpack_from("=HH", body, at)
                    value = body[at + 4:at + size]
                    if attr == _UNIX_DIAG_NAME:
                        name = value.replace(b"\0", b"@").decode("utf-8", "replace")
                    elif attr == _UNIX_DIAG_PEER:
                        peer = struct.unpack_from("=I", value)[0]
                    elif attr == _UNIX_DIAG_RQLEN:
                        unread = struct.unpack_from("=I", value)[0]
                    at += (size + 3) & ~3
                found[inode] = (name, peer, unread)
                offset += (length + 3) & ~3


def unread_x_events(pid: int) -> int | None:
    """Bytes the X server has sent ``pid`` that it has not read yet (events and replies on its X
    connections), or None when that cannot be told (the process is gone, or no netlink)."""
    try:
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
        sockets = _unix_sockets()
    except OSError:
        return None
    return sum(unread for inode, (_, peer, unread) in sockets.items()
               if inode in inodes and ".X11-unix/X" in sockets.get(peer, ("",))[0])


def wait_until_read(display, timeout_s: float) -> bool:
    """Wait until the application in front has worked through its input: nothing the X server sent it
    is left unread on its connection, and for ``IDLE_SAMPLES`` windows of ``IDLE_SAMPLE_S`` its CPU use
    stays under ``IDLE_CPU_SHARE`` and none of its threads is seen waiting for a CPU (sampled every
    ``RUNNABLE_PROBE_S``). Returns whether it did in time.

    Typing returns once the X server has every key, but a busy application may read them minutes
    later, and some act on a shortcut (``ctrl+s``) before the text typed ahead of it: LibreOffice
    under emulation saved a sheet without the 73 cells typed just before the save. Waiting here
    makes the next action start where the agent believes the application is. An application that
    is idle while its keys wait unread (blocked on something else) is waited for too.
    """
    pid = focused_pid(display)
    if pid is None:
        return True
    hz = os.sysconf("SC_CLK_TCK")
    limit_ticks = IDLE_CPU_SHARE * IDLE_SAMPLE_S * hz
    deadline = time.monotonic() + timeout_s
    quiet, last = 0, _cpu_ticks(pid)
    while last is not None and time.monotonic() < deadline:
        window_end, runnable = time.monotonic() + IDLE_SAMPLE_S, False
        while (left := window_end - time.monotonic()) > 0:
            time.sleep(min(RUNNABLE_PROBE_S, left))
            runnable = runnable or _runnable(pid)
        now = _cpu_ticks(pid)
        if now is None:
            return True  # the application exited
        idle = now - last <= limit_ticks and not runnable and not unread_x_events(pid)
        quiet = quiet + 1 if idle else 0
        last = now
        if quiet >= IDLE_SAMPLES:
            return True
    return last is None


class AutorepeatOff:
    """Context manager: X autorepeat off inside, restored to what it was on exit."""

    def __init__(self, display):
        self.display = display
        self.was_on = False

    def __enter__(self):
        from Xlib import X

        self.was_on = bool(self.display.get_keyboard_control().global_auto_repeat)
        if self.was_on:
            self.display.change_keyboard_control(auto_repeat_mode=X.AutoRepeatModeOff)
            self.display.sync()
        return self

    def __exit__(self, *exc):
        from Xlib import X

        if self.was_on:
            self.display.change_keyboard_control(auto_repeat_mode=X.AutoRepeatModeOn)
            self.display.sync()
        return False


def patch_pyautogui(pyautogui) -> None:
    """Make ``pyautogui.write``/``typewrite`` type every character, exactly and in order, under any load.

    pyautogui's X11 backend presses only characters it found in the keymap at import and silently
    skips the rest; here the missing ones are bound to spare keycodes (kept bound, see the module
    docstring), typing runs with autorepeat off, and it starts and returns only once the application
    in front has read its input. A no-op on other backends.
    """
    try:
        from pyautogui import _pyautogui_x11 as x11
    except ImportError:  # another platform backend, or no Xlib: leave pyautogui as it is
        return
    display = x11._display
    # pyautogui keeps, per character, the first keycode carrying its keysym and adds Shift for
    # "shift characters". On a pc105 keymap the first keycode with 'less' is the ISO key, whose
    # shifted level is 'greater', so '<' came out as '>'. Take a keycode with the keysym on the
    # level pyautogui will press; a character without one is bound to a spare keycode when typed.
    for c in [k for k in x11.keyboardMapping if len(k) == 1 and k.isprintable()]:
        level = 1 if pyautogui.isShiftCharacter(c) else 0
        codes = sorted(code for code, index in display.keysym_to_keycodes(keysym_of(c)) if index == level)
        x11.keyboardMapping[c] = codes[0] if codes else None
    keys = SpareKeys(display)
    native = {c for c, code in x11.keyboardMapping.items() if len(c) == 1 and code}
    x11.keyboardMapping.update(keys.bound)
    original = pyautogui.typewrite

    def bind(chars) -> None:
        keys.bind(chars)
        for c in [c for c in x11.keyboardMapping if len(c) == 1 and c not in native and c not in keys.bound]:
            del x11.keyboardMapping[c]  # its keycode now types another character
        x11.keyboardMapping.update(keys.bound)

    def typewrite(message, *args, **kwargs):
        if not isinstance(message, str):
            return original(message, *args, **kwargs)
        wait_until_read(display, IDLE_WAIT_BASE_S)  # what was sent before is handled before the text
        _type(message, *args, **kwargs)
        wait_until_read(display, IDLE_WAIT_BASE_S + IDLE_WAIT_PER_CHAR_S * len(message))
        return None

    def _type(message, *args, **kwargs):
        with AutorepeatOff(display):
            missing = [c for c in dict.fromkeys(message) if c.isprintable() and c not in native]
            if len(missing) <= keys.spare_count or not keys.spare_count:
                bind(missing[:keys.spare_count])
                original(message, *args, **kwargs)
                return
            start = 0  # more distinct characters than spare keycodes: type in pieces that fit
            while start < len(message):
                need, end = [], start
                while end < len(message):
                    c = message[end]
                    if c in missing and c not in need:
                        if len(need) == keys.spare_count:
                            break
                        need.append(c)
                    end += 1
                bind(need)
                original(message[start:end], *args, **kwargs)
                start = end

    typewrite.__doc__ = original.__doc__
    pyautogui.typewrite = pyautogui.write = typewrite
