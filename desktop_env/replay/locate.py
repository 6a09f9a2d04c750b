"""Finding what a GUI step acts on, read-only: elements of the accessibility tree (desktop apps),
elements of a page's DOM over the DevTools protocol (pages in Chromium), windows by title, files,
open tabs, and whether the desktop is idle. Nothing here changes the guest: acting is
:mod:`desktop_env.replay.gui`'s.

A page element's screen position is its box in the page plus where the page's viewport sits on the
screen (the window's position and its frame, read from the page's ``window``), at the page zoom of
1 that this desktop uses.
"""
from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass, field

from desktop_env.tasks.solution import Condition, Target

log = logging.getLogger(__name__)

#: The in-VM server's time budget for one walk of the accessibility tree when locating: a spreadsheet's
#: visible cells are read one by one, and under emulation the server's default (20 s) stops a Calc walk
#: around row 12.
A11Y_WALK_S = 120.0
#: Seconds of the CPU-use sample behind each ``idle`` check, and the busy fraction below which the guest is idle.
IDLE_SAMPLE_S = 2.0
IDLE_BUSY_BELOW = 0.5

# Finds the target's matches in a page; returns what it saw and, for the chosen match, its box,
# whether its centre is in the viewport, what covers that point, and the window's geometry.
_DOM_QUERY = """
({css, text, index}) => {
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim().toLowerCase();
  const own = e => norm(e.innerText || e.value || e.getAttribute('aria-label') || e.getAttribute('title') || '');
  // How a reason names an element: its tag and first class ('div.jp-StatusBar').
  const name = el => el.tagName.toLowerCase() +
    (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/)[0] : '');
  let els = Array.from(document.querySelectorAll(css || '*'));
  if (text !== null) {
    const want = norm(text);
    els = els.filter(e => own(e).includes(want));
    if (!css) els = els.filter(e => !els.some(o => o !== e && e.contains(o)));
  }
  els = els.filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; });
  const win = [window.screenX, window.screenY, window.outerWidth, window.outerHeight,
               window.innerWidth, window.innerHeight, window.devicePixelRatio];
  const front = document.visibilityState === 'visible';
  const href = location.href;
  if (els.length <= index) return {count: els.length, front, win, box: null, href};
  const e = els[index];
  const r = e.getBoundingClientRect();
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
  let inView = cx >= 0 && cy >= 0 && cx < window.innerWidth && cy < window.innerHeight;
  let below = cy >= window.innerHeight, scrollAt = null, clipped = null, covered = null;
  const hit = inView ? document.elementFromPoint(cx, cy) : null;
  const elsewhere = hit !== null && hit !== e && !e.contains(hit);  // the window shows something else there
  // What the window shows at its centre is not the element itself: a container that scrolls its own content
  // (a notebook's panel, a list) may hide it there, under a status bar or over the page's blank rest. Then the
  // wheel over the container's visible centre scrolls it. (An element shown at its centre is not clipped,
  // whatever its containers: a popup escapes their overflow.)
  for (let a = e.parentElement; elsewhere && a && a !== document.body &&
       a !== document.documentElement; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (!/(auto|scroll|hidden|clip)/.test(s.overflowX + ' ' + s.overflowY)) continue;
    const c = a.getBoundingClientRect();
    if (cy < c.top || cy >= c.bottom) {
      inView = false;
      below = cy >= c.bottom;
      const top = Math.max(c.top, 0), bottom = Math.min(c.bottom, window.innerHeight);
      const left = Math.max(c.left, 0), right = Math.min(c.right, window.innerWidth);
      scrollAt = [(left + right) / 2, (top + bottom) / 2];
      break;
    }
    if (cx < c.left || cx >= c.right) {
      clipped = name(a);
      break;
    }
  }
  if (inView && !clipped && elsewhere && !hit.contains(e)) {
    covered = name(hit);
  }
  // A finite animation or transition on it or a container, running or paused before it starts (a dialog
  // zooming open; Ant Design holds a dialog paused at its first frame, shrunk, until the zoom starts):
  // its box is not where it will be. Endless ones (spinners) are left out.
  let moving = null;
  for (let a = e; a && !moving; a = a.parentElement) {
    if (a.getAnimations && a.getAnimations().some(x => (x.playState === 'running' || x.playState === 'paused') &&
        x.effect && x.effect.getComputedTiming().iterations !== Infinity)) {
      moving = name(a);
    }
  }
  return {count: els.length, front, win, href, box: [r.left, r.top, r.width, r.height], inView, covered, moving,
          clipped, below, scrollAt, label: own(e).slice(0, 80)};
}
"""


@dataclass
class Box:
    """A located element: its box in screen pixels and what it is."""

    x: float
    y: float
    w: float
    h: float
    label: str = ""

    def point(self, at: tuple[float, float] = (0.5, 0.5)) -> tuple[int, int]:
        """The screen point at fractions ``at`` of the box (default its centre)."""
        return int(round(self.x + self.w * at[0])), int(round(self.y + self.h * at[1]))

    def to_json(self) -> dict:
        return {"x": round(self.x), "y": round(self.y), "w": round(self.w), "h": round(self.h), "label": self.label}


@dataclass
class Found:
    """The outcome of one look for a target.

    Attributes:
        box: where to act, when the target is there and can be acted on now.
        exists: the target is there (it may still be out of view or covered).
        reason: why ``box`` is None (for the error message when the step gives up).
        scroll: wheel clicks that would bring it into view (negative: down), 0 when none would.
        scroll_at: the screen point to scroll over (the page's centre).
        read: the look read what it searched (the tab's page, the whole accessibility tree). False when it
            could not (DevTools did not answer, the page was navigating, the tree could not be read or the
            server's walk was cut short): then the target's absence proves nothing, and a wait for it to
            go away goes on looking.
    """

    box: Box | None = None
    exists: bool = False
    reason: str = ""
    scroll: int = 0
    scroll_at: tuple[int, int] | None = None
    read: bool = True


#: Counts the HTML5 drag events a page sees from the moment it is armed: ``start`` (dragstart anywhere) and
#: ``over`` (dragover on the drop target: an element matching ``drop``'s css and text when armed), listened for
#: in the capture phase so the page's own handlers cannot hide them.
_DRAG_EVENTS = """
({arm, drop}) => {
  if (arm) {
    const norm = s => (s || '').replace(/\\s+/g, ' ').trim().toLowerCase();
    const drops = Array.from(document.querySelectorAll(drop.css || '*')).filter(e => drop.text === null ||
      norm(e.innerText || e.value || e.getAttribute('aria-label') || e.getAttribute('title')).includes(norm(drop.text)));
    window.__desktopEnvDrag = {start: 0, over: 0, drops};
    if (!window.__desktopEnvDragArmed) {
      window.__desktopEnvDragArmed = true;
      document.addEventListener('dragstart', () => { if (window.__desktopEnvDrag) window.__desktopEnvDrag.start++; },
                                true);
      document.addEventListener('dragover', e => {
        const d = window.__desktopEnvDrag;
        if (d && d.drops.some(el => el.contains(e.target))) d.over++;
      }, true);
    }
  }
  const d = window.__desktopEnvDrag || {start: 0, over: 0};
  return {href: location.href, front: document.visibilityState === 'visible', start: d.start, over: d.over};
}
"""


@dataclass
class Locator:
    """Read-only queries on a running guest for the GUI steps of reference solutions.

    Args:
        controller: the guest's :class:`~desktop_env.controllers.python.PythonController`.
        cdp_url: ``http://host:port`` of the guest Chromium's DevTools endpoint, None when not forwarded.
        screen: (width, height) of the guest screen.

    Use as a context manager: a DevTools connection opened by a DOM query is closed on exit. DOM
    queries run in a thread of their own: Playwright's event loop must not sit on the caller's
    thread, where the provider's QMP client runs its own (screenshots between two looks).
    """

    controller: object
    cdp_url: str | None
    screen: tuple[int, int]
    _pw: object = field(default=None, repr=False)
    _browser: object = field(default=None, repr=False)
    _last_shot: object = field(default=None, repr=False)
    _thread: object = field(default=None, repr=False)

    def __enter__(self) -> "Locator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Drop the DevTools connection (the guest's browser and its tabs stay open)."""
        if self._thread is None:
            return
        try:
            self._thread.submit(self._disconnect).result(timeout=60)
        except Exception as exc:  # noqa: BLE001 - closing a dead connection must not hide the result
            log.debug("closing the DevTools connection: %s", exc)
        self._thread.shutdown(wait=False)
        self._thread = None

    def _disconnect(self) -> None:
        for what, closer in (("browser", lambda: self._browser and self._browser.close()),
                             ("playwright", lambda: self._pw and self._pw.stop())):
            try:
                closer()
            except Exception as exc:  # noqa: BLE001 - closing a dead connection must not hide the result
                log.debug("closing the DevTools %s: %s", what, exc)
        self._browser = self._pw = None

    # -- targets -----------------------------------------------------------------------------
    def find(self, target: Target) -> Found:
        """Look for ``target`` once (the caller polls until its deadline)."""
        return self._find_a11y(target) if target.kind == "a11y" else self._find_dom(target)

    def _find_a11y(self, target: Target) -> Found:
        from desktop_env.a11y_tree import parse_elements

        try:
            # A spreadsheet's cells are most of a Calc tree's cost: read only when a cell may be the target.
            xml, stats = self.controller.accessibility_tree_with_stats(timeout_s=A11Y_WALK_S,
                                                                       cells=target.role in (None, "table-cell"))
        except Exception as exc:  # noqa: BLE001 - a tree that cannot be read now may be read on the next look
            return Found(reason=f"the accessibility tree could not be read ({exc})", read=False)
        cut = stats.get("truncated") or []
        cut_short = (f" (the server's walk was cut short by its {' and '.join(cut)} limit after "
                     f"{stats.get('elapsed_s', '?')} s: the rest of the tree was not read)") if cut else ""
        elements = parse_elements(xml, self.screen)
        matches = [e for e in elements if _a11y_matches(e, target)]
        if target.within is not None:
            boxes = [c for c in elements if _a11y_matches(c, target.within)]
            if not boxes:
                return Found(reason=f"nothing matched the container ({target.within.describe()}){cut_short}",
                             read=not cut)
            matches = [e for e in matches if any(_inside(e, c) for c in boxes)]
        if len(matches) > target.index:
            e = matches[target.index]
            return Found(box=Box(e.x, e.y, e.w, e.h, f"{e.tag} {e.name or e.text[:60]!r}"), exists=True)
        if matches:
            return Found(exists=False, read=not cut,
                         reason=f"only {len(matches)} showing element(s) matched, #{target.index} asked{cut_short}")
        same_role = [e for e in elements if target.role is None or e.tag == target.role]
        names = [e.name for e in same_role if e.name]
        want = target.name or target.name_contains or target.text_contains or ""
        close = difflib.get_close_matches(want, names, n=3, cutoff=0.5) if want else names[:3]
        hint = f"; showing {target.role or 'element'}s with close names: {', '.join(map(repr, close))}" if close else (
            f"; {len(same_role)} showing {target.role}(s) with other names" if target.role else "")
        return Found(reason=f"no showing element matched among {len(elements)} in the tree{hint}{cut_short}",
                     read=not cut)

    def _pages(self):
        if self._browser is None:
            if not self.cdp_url:
                raise LookupError("no DevTools port is forwarded to the guest's Chromium (start it with the "
                                  "google_chrome_browser setup step)")
            from playwright.sync_api import sync_playwright

            from desktop_env.limits import limit

            self._pw = sync_playwright().start()
            self._browser = self._pw.chromium.connect_over_cdp(self.cdp_url, timeout=limit("setup.cdp_connect") * 1000)
        return [page for context in self._browser.contexts for page in context.pages]

    def _find_dom(self, target: Target) -> Found:
        return self._on_dom_thread(self._find_dom_here, target)

    def _on_dom_thread(self, fn, *args):
        """``fn(*args)`` on the thread DevTools queries run on (started on first use)."""
        if self._thread is None:
            from concurrent.futures import ThreadPoolExecutor

            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="locate-dom")
        return self._thread.submit(fn, *args).result()

    def _find_dom_here(self, target: Target) -> Found:
        from desktop_env.configs.cdp import same_host

        try:
            pages = self._pages()
        except LookupError as exc:
            return Found(reason=str(exc), read=False)
        except Exception as exc:  # noqa: BLE001 - Chromium may not answer yet; the next look retries
            self._disconnect()
            return Found(reason=f"could not attach to Chromium over DevTools ({exc})", read=False)
        # A tab's URL is read in the page (``location.href``): Playwright's ``page.url`` is the last one it
        # heard of, which can lag behind a single-page app's own navigation (history.pushState).
        prefix = same_host(target.url).rstrip("/") if target.url else None
        reasons, shown, unread = [], 0, 0
        for page in pages:
            try:
                seen = page.evaluate(_DOM_QUERY, {"css": target.css, "text": target.text, "index": target.index})
            except Exception as exc:  # noqa: BLE001 - a page navigating away, a bad selector, DevTools not answering
                reasons.append(f"{page.url}: {str(exc).splitlines()[0][:200]}")
                # its last known URL stands for the one it could not tell: a tab that may show the target
                # was not read, so the target's absence from the others proves nothing
                unread += prefix is None or same_host(page.url).startswith(prefix)
                continue
            if prefix and not same_host(seen["href"]).startswith(prefix):
                continue
            shown += 1
            if not seen["front"]:
                if seen["box"] is not None:
                    reasons.append(f"{seen['href']}: the element is in a tab that is not in front")
                continue
            if seen["box"] is None:
                reasons.append(f"{seen['href']}: {seen['count']} element(s) matched, #{target.index} asked"
                               if seen["count"] else f"{seen['href']}: nothing matched")
                continue
            sx, sy, ow, oh, iw, ih, dpr = seen["win"]
            border = max(0.0, (ow - iw) / 2)
            left, top = sx + border, sy + max(0.0, oh - ih - border)
            bx, by, bw, bh = seen["box"]
            box = Box((left + bx) * dpr, (top + by) * dpr, bw * dpr, bh * dpr, seen.get("label", ""))
            at_x, at_y = seen.get("scrollAt") or (iw / 2, ih / 2)
            if not seen["inView"]:
                where = "the page" if seen.get("scrollAt") is None else "the container that scrolls it"
                return Found(exists=True, reason=f"it is outside the visible part of {where}",
                             scroll=-5 if seen["below"] else 5,
                             scroll_at=(int((left + at_x) * dpr), int((top + at_y) * dpr)))
            if seen.get("clipped"):
                return Found(exists=True, reason=f"its centre is beside the visible part of <{seen['clipped']}>")
            if seen["covered"]:
                return Found(exists=True, reason=f"its centre is covered by <{seen['covered']}>")
            if seen.get("moving"):
                return Found(exists=True, reason=f"an animation is moving it (on <{seen['moving']}>)")
            return Found(box=box, exists=True)
        if prefix and not shown:
            return Found(reason="; ".join([f"no tab shows {target.url}", *reasons]), read=not unread)
        return Found(reason="; ".join(reasons) or "no tab is open", read=not unread)

    def drag_events(self, target: Target, drop: Target, arm: bool = False) -> dict:
        """The HTML5 drag events seen by the tab in front showing ``target``'s URL since it was armed: ``start``
        (dragstarts) and ``over`` (dragovers on ``drop``'s element). ``arm`` resets the counts and finds the drop
        element (and listens, the first time). ``{}`` when no such tab."""
        return self._on_dom_thread(self._drag_events_here, target, drop, arm)

    def _drag_events_here(self, target: Target, drop: Target, arm: bool) -> dict:
        from desktop_env.configs.cdp import same_host

        prefix = same_host(target.url).rstrip("/") if target.url else ""
        for page in self._pages():
            try:
                seen = page.evaluate(_DRAG_EVENTS, {"arm": arm, "drop": {"css": drop.css, "text": drop.text}})
            except Exception as exc:  # noqa: BLE001 - a page navigating away
                log.debug("drag events of %s: %s", page.url, exc)
                continue
            if seen["front"] and same_host(seen["href"]).startswith(prefix):
                return seen
        return {}

    # -- conditions --------------------------------------------------------------------------
    def holds(self, cond: Condition) -> tuple[bool, str]:
        """Whether ``cond`` holds now, and what was seen (for the message when a wait gives up)."""
        if cond.kind in ("appears", "gone"):
            found = self.find(cond.target)
            if cond.kind == "appears":
                return found.exists, found.reason
            if not found.read:  # an unread page or tree is no proof that the target went away
                return False, f"it could not be told whether it is still there: {found.reason}"
            return not found.exists, "it is still there"
        if cond.kind == "window":
            titles = self.window_titles()
            ok = any(re.search(cond.value, t) for t in titles)
            return ok, f"open windows: {', '.join(map(repr, titles[:8])) or 'none'}"
        if cond.kind == "file":
            return self._file_holds(cond.value, cond.contains, cond.lacks)
        if cond.kind == "url_is":
            from desktop_env.configs.cdp import same_host

            urls = self.tab_urls()
            prefix = same_host(cond.value).rstrip("/")
            return any(same_host(u).startswith(prefix) for u in urls), f"tabs: {', '.join(urls[:8]) or 'none'}"
        if cond.kind == "idle":
            return self._idle()
        raise ValueError(f"unknown condition {cond.kind!r}")  # pragma: no cover - Condition.from_json checks

    def _file_holds(self, path: str, contains: str | None, lacks: str | None) -> tuple[bool, str]:
        reply = self.controller.execute(["test", "-e", path], timeout_s=30)
        if reply.get("returncode") != 0:
            return False, "it does not exist"
        if contains is None and lacks is None:
            return True, ""
        try:
            data = self.controller.get_file(path)
        except Exception as exc:  # noqa: BLE001 - being written right now; the next look retries
            return False, f"it could not be read ({exc})"
        if contains is not None and not file_contains(data, contains):
            return False, f"it does not hold {contains!r} yet"
        if lacks is not None and (file_contains(data, lacks) or not _readable(data)):
            return False, f"it still holds {lacks!r}"
        return True, ""

    def window_titles(self) -> list[str]:
        """Titles of the desktop's open windows (``wmctrl -l``)."""
        out = self.controller.execute(["wmctrl", "-l"], timeout_s=30).get("output") or ""
        return [parts[3] if len(parts) > 3 else "" for parts in (line.split(None, 3) for line in out.splitlines())]

    def tab_urls(self) -> list[str]:
        """URLs of Chromium's open tabs (the DevTools HTTP endpoint), empty when it does not answer."""
        if not self.cdp_url:
            return []
        from desktop_env.configs.browser import cdp_http

        try:
            return [t.get("url", "") for t in cdp_http(f"{self.cdp_url}/json/list") if t.get("type") == "page"]
        except Exception as exc:  # noqa: BLE001 - Chromium not up yet
            log.debug("listing Chromium's tabs: %s", exc)
            return []

    def _idle(self) -> tuple[bool, str]:
        from desktop_env.envs.settle import SETTLE_PIXELS, changed_pixels, guest_busy, screen_pixels

        busy = guest_busy(self.controller, IDLE_SAMPLE_S)
        shot = screen_pixels(self.controller.screenshot())
        previous, self._last_shot = self._last_shot, shot
        changed = changed_pixels(previous, shot) if previous is not None and shot is not None else None
        ok = changed is not None and changed <= SETTLE_PIXELS and busy < IDLE_BUSY_BELOW
        return ok, f"CPU {busy:.0%} busy, {'?' if changed is None else changed} pixels changed since the last look"


def file_contains(data: bytes, text: str) -> bool:
    """Whether a file's bytes hold ``text`` (UTF-8); for a zip-based document (.xlsx, .ods, .docx ...),
    whether one of its members does."""
    import io
    import zipfile

    needle = text.encode("utf-8")
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                return any(needle in z.read(name) for name in z.namelist())
        except (zipfile.BadZipFile, KeyError, OSError):
            return False  # half written
    return needle in data


def _readable(data: bytes) -> bool:
    """False for a zip-based document caught half written (its absence of a text proves nothing)."""
    import io
    import zipfile

    if data[:4] != b"PK\x03\x04":
        return True
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return z.testzip() is None
    except (zipfile.BadZipFile, OSError):
        return False


def _inside(element, container) -> bool:
    return (container.x <= element.x and container.y <= element.y and element.x + element.w <= container.x + container.w
            and element.y + element.h <= container.y + container.h)


def _a11y_matches(element, target: Target) -> bool:
    if target.role is not None and element.tag != target.role:
        return False
    if target.name is not None and element.name != target.name:
        return False
    if target.name_contains is not None and target.name_contains.lower() not in element.name.lower():
        return False
    if target.text_contains is not None and target.text_contains.lower() not in element.text.lower():
        return False
    return all(state in element.states for state in target.state)
