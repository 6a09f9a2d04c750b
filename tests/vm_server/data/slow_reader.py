"""A test X client that reads its key events late, as a busy application does, then writes what it typed.

It maps a focused window, signals readiness by creating READY, waits until GO exists plus
LAG seconds, then drains its event queue the way Xlib clients do: a MappingNotify makes it
re-read the keymap *as it is then*, and each KeyPress is looked up in the keymap it holds.
The characters go to OUT when no event has come for a second.
"""
import os
import sys
import time

from Xlib import X, XK, display

out, ready, go, lag = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
d = display.Display()
screen = d.screen()
win = screen.root.create_window(0, 0, 400, 200, 0, screen.root_depth,
                                event_mask=X.KeyPressMask | X.KeyReleaseMask | X.StructureNotifyMask)
win.set_wm_name("slow-reader")
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
typed, last = [], time.monotonic()
while time.monotonic() - last < 1.0:
    if not d.pending_events():
        time.sleep(0.05)
        continue
    ev = d.next_event()
    last = time.monotonic()
    if ev.type == X.MappingNotify:
        d.refresh_keyboard_mapping(ev)
    elif ev.type == X.KeyPress:
        index = 1 if ev.state & X.ShiftMask else 0
        sym = d.keycode_to_keysym(ev.detail, index) or d.keycode_to_keysym(ev.detail, 0)
        if sym == XK.XK_Return:
            typed.append("\n")
        elif 0x20 <= sym <= 0xff:
            typed.append(chr(sym))
        elif sym > 0x01000000:
            typed.append(chr(sym - 0x01000000))
with open(out, "w", encoding="utf-8") as f:
    f.write("".join(typed))
