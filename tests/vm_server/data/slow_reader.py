"""A test X client that reads its key events late or slowly, as a busy application does, and writes what it typed.

It maps a focused window, signals readiness by creating READY, waits until GO exists plus
LAG seconds, then drains its event queue the way Xlib clients do: a MappingNotify makes it
re-read the keymap *as it is then*, and each KeyPress is looked up in the keymap it holds
and then costs BUSY_MS of CPU (an application doing work per key). OUT holds the characters
read so far, rewritten after each key; it is final when no event has come for QUIET seconds
(default 1) after the first key (a reader starved of CPU may see GO long before the typist, who
waits for it to look idle, sends anything). A key without a character (an arrow, Escape) is written as its name in brackets,
``[Right]``, followed by ``+`` when key presses were already queued behind it as it was read:
keys sent after it before the application had handled it.
"""
import os
import sys
import time

from Xlib import X, XK, Xatom, display

out, ready, go, lag = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
busy_s = float(sys.argv[5]) / 1000 if len(sys.argv) > 5 else 0.0
quiet_s = float(sys.argv[6]) if len(sys.argv) > 6 else 1.0


def save(chars):
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write("".join(chars))
    os.replace(out + ".tmp", out)
d = display.Display()
screen = d.screen()
win = screen.root.create_window(0, 0, 400, 200, 0, screen.root_depth,
                                event_mask=X.KeyPressMask | X.KeyReleaseMask | X.StructureNotifyMask)
win.set_wm_name("slow-reader")
win.change_property(d.intern_atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [os.getpid()])  # as toolkits set it
win.map()
d.sync()
while d.next_event().type != X.MapNotify:
    pass
win.set_input_focus(X.RevertToParent, X.CurrentTime)
d.sync()
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.05)
time.sleep(lag)
typed, last, backlog, keyed = [], time.monotonic(), [], False
while not keyed or time.monotonic() - last < quiet_s:
    if not backlog and not d.pending_events():
        time.sleep(0.05)
        continue
    ev = backlog.pop(0) if backlog else d.next_event()
    last = time.monotonic()
    if ev.type == X.MappingNotify:
        d.refresh_keyboard_mapping(ev)
    elif ev.type == X.KeyPress:
        keyed = True
        index = 1 if ev.state & X.ShiftMask else 0
        sym = d.keycode_to_keysym(ev.detail, index) or d.keycode_to_keysym(ev.detail, 0)
        if sym == XK.XK_Return:
            typed.append("\n")
        elif 0x20 <= sym <= 0xff:
            typed.append(chr(sym))
        elif sym > 0x01000000:
            typed.append(chr(sym - 0x01000000))
        elif sym and not 0xffe1 <= sym <= 0xffee:  # not a modifier (Shift, Control, ...)
            time.sleep(0.2)  # let keys sent right after it arrive
            while d.pending_events():
                backlog.append(d.next_event())
            queued = any(e.type == X.KeyPress for e in backlog)
            name = next((n[3:] for n in dir(XK) if n.startswith("XK_") and getattr(XK, n) == sym), hex(sym))
            typed.append(f"[{name}]" + ("+" if queued else ""))
        spin = time.process_time() + busy_s
        while time.process_time() < spin:
            pass
        save(typed)
save(typed)
