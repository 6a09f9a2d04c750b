"""A Chromium page's content for the accessibility tree, read over the DevTools protocol.

Walking a page's AT-SPI subtree costs about six D-Bus calls per element, each a round trip to
Chromium: 4-10 s for the data tools' pages under emulation. Chromium started with a
remote-debugging port (as the image's ``google_chrome_browser`` step starts it) answers one
``Runtime.evaluate`` instead: a script walks the page's rendered DOM (the flat tree, into open
shadow roots and same-origin frames) and returns the elements on screen with a role, a name, their
text, states and box. :class:`PageReader` finds the page target that a showing ``document web``
accessible stands for and turns that list into the server's XML elements, in the same vocabulary
(AT-SPI role names, ``st:``/``attr:``/``cp:`` attributes, screen coordinates).

Only the standard library is used: the guest has no websocket package, so :class:`WebSocket` is a
minimal RFC 6455 client (text frames, pings, fragmentation; no extensions), enough for DevTools on
the loopback interface.
"""
from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import os
import re
import socket
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

from .a11y_xml import BoundedStore, clean, q, tag

logger = logging.getLogger(__name__)

_WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_PORT_FLAG = re.compile(r"^--remote-debugging-port=(\d+)$")
_USER_DATA_FLAG = re.compile(r"^--user-data-dir=(.+)$")


class PageUnavailable(Exception):
    """The page could not be read over DevTools (no port, no matching target, a protocol error)."""


def _mask(payload: bytes, key: bytes) -> bytes:
    """``payload`` XORed with the 4-byte ``key`` repeated (RFC 6455 masking, its own inverse)."""
    n = len(payload)
    if not n:
        return payload
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


class WebSocket:
    """A blocking websocket client for one DevTools target (``ws://host:port/devtools/...``).

    Args:
        url: the target's ``webSocketDebuggerUrl``.
        timeout_s: connect and per-read timeout.

    Raises:
        PageUnavailable: the connection or the opening handshake failed.
    """

    def __init__(self, url: str, timeout_s: float):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "ws" or not parts.hostname or not parts.port:
            raise PageUnavailable(f"not a ws://host:port/ address: {url!r}")
        try:
            self._sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout_s)
        except OSError as exc:
            raise PageUnavailable(f"could not connect to {url}: {exc}") from exc
        self._buf = b""
        key = base64.b64encode(os.urandom(16))
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        request = (f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key.decode()}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        try:
            self._sock.sendall(request.encode())
            while b"\r\n\r\n" not in self._buf:
                self._fill()
        except OSError as exc:
            self.close()
            raise PageUnavailable(f"websocket handshake with {url} failed: {exc}") from exc
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        accept = base64.b64encode(hashlib.sha1(key + _WS_GUID).digest()).decode()  # noqa: S324 - RFC 6455
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if " 101 " not in lines[0] + " " or headers.get("sec-websocket-accept") != accept:
            self.close()
            raise PageUnavailable(f"{url} refused the websocket upgrade: {lines[0]!r}")

    def _fill(self) -> None:
        chunk = self._sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the DevTools connection closed")
        self._buf += chunk

    def _read(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._fill()
        data, self._buf = self._buf[:n], self._buf[n:]
        return data

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        header = bytearray([0x80 | opcode])
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header.append(0x80 | 126)
            header += n.to_bytes(2, "big")
        else:
            header.append(0x80 | 127)
            header += n.to_bytes(8, "big")
        mask = os.urandom(4)
        header += mask
        self._sock.sendall(bytes(header) + _mask(payload, mask))

    def send_text(self, text: str) -> None:
        """Send one text message."""
        self._send_frame(0x1, text.encode("utf-8"))

    def recv_text(self) -> str:
        """The next text message (pings answered, fragments joined).

        Raises:
            ConnectionError: the peer closed the connection.
            OSError: the socket timed out or failed.
        """
        parts = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._read(2), "big")
            elif n == 127:
                n = int.from_bytes(self._read(8), "big")
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = _mask(payload, mask)
            if opcode == 0x8:
                raise ConnectionError("the DevTools connection was closed by Chromium")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode("utf-8", "replace")

    def settimeout(self, timeout_s: float) -> None:
        self._sock.settimeout(max(timeout_s, 0.05))

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass


def evaluate(ws_url: str, expression: str, timeout_s: float):
    """The value of ``expression`` evaluated in the page of ``ws_url`` (``Runtime.evaluate``, by value).

    Raises:
        PageUnavailable: the connection failed, timed out, or the expression threw.
    """
    deadline = time.monotonic() + timeout_s
    ws = WebSocket(ws_url, timeout_s)
    try:
        ws.send_text(json.dumps({"id": 1, "method": "Runtime.evaluate",
                                 "params": {"expression": expression, "returnByValue": True,
                                            "timeout": int(timeout_s * 1000)}}))
        while True:
            ws.settimeout(deadline - time.monotonic())
            message = json.loads(ws.recv_text())
            if message.get("id") == 1:
                break
    except (OSError, ValueError) as exc:
        raise PageUnavailable(f"Runtime.evaluate on {ws_url} failed: {exc}") from exc
    finally:
        ws.close()
    if "error" in message:
        raise PageUnavailable(f"Runtime.evaluate on {ws_url}: {message['error'].get('message')}")
    result = message.get("result", {})
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        text = (details.get("exception") or {}).get("description") or details.get("text")
        raise PageUnavailable(f"the page script threw in {ws_url}: {text}")
    return result.get("result", {}).get("value")


def devtools_port(pid: int) -> int | None:
    """The remote-debugging port of the Chromium whose browser process is ``pid``, or None.

    Read from its command line (``--remote-debugging-port=N``); for ``N = 0`` (a port Chromium
    chose) from the ``DevToolsActivePort`` file in its ``--user-data-dir``.
    """
    try:
        import psutil

        cmdline = psutil.Process(pid).cmdline()
    except Exception:  # noqa: BLE001 - ImportError, NoSuchProcess, AccessDenied: no port known
        return None
    port = None
    user_data = None
    for arg in cmdline:
        if m := _PORT_FLAG.match(arg):
            port = int(m.group(1))
        elif m := _USER_DATA_FLAG.match(arg):
            user_data = m.group(1)
    if port == 0 and user_data:
        try:
            with open(os.path.join(user_data, "DevToolsActivePort"), encoding="utf-8") as fh:
                port = int(fh.readline().strip())
        except (OSError, ValueError):
            return None
    return port or None


#: The page script: elements on screen, in document order, as
#: [parent index, role, name, text, x, y, w, h, states, attributes] (CSS pixels of the viewport).
#: __MAX__ and __BUDGET_MS__ are replaced before it is sent.
_WALKER = r"""(() => {
const MAX = __MAX__, T0 = performance.now(), BUDGET = __BUDGET_MS__;
const NAME_MAX = 200, TEXT_MAX = 4000, CLASS_MAX = 80;
const out = []; let truncated = "";
const INPUT = {text: "entry", email: "entry", search: "entry", url: "entry", tel: "entry", number: "spin button",
  password: "password text", checkbox: "check box", radio: "radio button", range: "slider", button: "push button",
  submit: "push button", reset: "push button", image: "push button", file: "push button", color: "push button",
  date: "date editor", "datetime-local": "date editor", month: "date editor", week: "date editor", time: "date editor"};
const TAGS = {BUTTON: "push button", TEXTAREA: "entry", SELECT: "combo box", H1: "heading", H2: "heading",
  H3: "heading", H4: "heading", H5: "heading", H6: "heading", IMG: "image", P: "paragraph", UL: "list", OL: "list",
  DL: "description list", DT: "description term", DD: "description value", LI: "list item", TABLE: "table",
  TR: "table row", TD: "table cell", TH: "table column header", LABEL: "label", FORM: "form", NAV: "landmark",
  MAIN: "landmark", ASIDE: "landmark", DIALOG: "dialog", IFRAME: "internal frame", CANVAS: "canvas",
  VIDEO: "video", AUDIO: "audio", HR: "separator", SUMMARY: "push button", DETAILS: "panel", PROGRESS: "progress bar",
  METER: "level bar", OPTION: "list item", FIELDSET: "panel", LEGEND: "label", CAPTION: "caption",
  BLOCKQUOTE: "block quote", ARTICLE: "article", FIGURE: "panel"};
const ARIA = {button: "push button", link: "link", checkbox: "check box", switch: "toggle button",
  radio: "radio button", textbox: "entry", searchbox: "entry", combobox: "combo box", listbox: "list box",
  option: "list item", list: "list", listitem: "list item", heading: "heading", img: "image", image: "image",
  tab: "page tab", tablist: "page tab list", tabpanel: "panel", menu: "menu", menubar: "menu bar",
  menuitem: "menu item", menuitemcheckbox: "check menu item", menuitemradio: "radio menu item", dialog: "dialog",
  alertdialog: "alert", alert: "notification", tooltip: "tool tip", tree: "tree", treeitem: "tree item",
  grid: "table", treegrid: "tree table", table: "table", row: "table row", cell: "table cell",
  gridcell: "table cell", columnheader: "column header", rowheader: "row header", progressbar: "progress bar",
  slider: "slider", spinbutton: "spin button", separator: "separator", navigation: "landmark", main: "landmark",
  banner: "landmark", contentinfo: "landmark", complementary: "landmark", region: "landmark", search: "landmark",
  form: "form", toolbar: "tool bar", status: "status bar", article: "article", group: "panel",
  paragraph: "paragraph", document: "document frame", application: "embedded", log: "log", marquee: "marquee",
  math: "math", note: "comment", figure: "panel", feed: "panel", definition: "definition", term: "description term",
  generic: "", presentation: "", none: ""};
const NAME_FROM_CONTENT = new Set(["link", "push button", "toggle button", "heading", "page tab", "menu item",
  "check menu item", "radio menu item", "list item", "table cell", "column header", "row header",
  "table column header", "tree item", "label", "check box", "radio button", "tool tip", "caption"]);
const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE", "BASE"]);
const squash = (s, n) => { s = (s || "").replace(/\s+/g, " ").trim(); return s.length > n ? s.slice(0, n) : s; };
const deepActive = () => { let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a; };
const active = deepActive();
function roleOf(el, tag, pointer) {
  const role = baseRole(el, tag, pointer);
  return role === "push button" && el.hasAttribute("aria-pressed") ? "toggle button" : role;
}
function baseRole(el, tag, pointer) {
  const aria = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
  if (aria && aria in ARIA) return ARIA[aria];
  if (tag === "A") return el.hasAttribute("href") || pointer || el.hasAttribute("tabindex") ? "link" : "";
  if (tag === "svg") return el.hasAttribute("aria-label") || el.querySelector(":scope > title") ? "image" : "";
  if (tag === "INPUT") { const t = (el.type || "text").toLowerCase(); return t === "hidden" ? null : (INPUT[t] || "entry"); }
  if (tag === "TH") return el.getAttribute("scope") === "row" ? "row header" : "table column header";
  if (el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable)) return "entry";
  return TAGS[tag] || TAGS[el.localName] || "";
}
function labelledBy(el) {
  const ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
  const root = el.getRootNode();
  return ids.map(id => { const r = root.getElementById ? root.getElementById(id) : document.getElementById(id);
    return r ? r.textContent : ""; }).join(" ");
}
function nameOf(el, tag, role) {
  let n = squash(labelledBy(el), NAME_MAX) || squash(el.getAttribute("aria-label"), NAME_MAX);
  if (n) return n;
  if (el.labels && el.labels.length) { n = squash(Array.from(el.labels, l => l.textContent).join(" "), NAME_MAX); if (n) return n; }
  if (tag === "IMG" || (tag === "INPUT" && el.type === "image")) { n = squash(el.getAttribute("alt"), NAME_MAX); if (n) return n; }
  if (tag === "INPUT" && ["button", "submit", "reset"].includes(el.type)) { n = squash(el.value, NAME_MAX); if (n) return n; }
  if (tag === "svg") { const t = el.querySelector(":scope > title"); if (t) return squash(t.textContent, NAME_MAX); }
  if (NAME_FROM_CONTENT.has(role) && !(tag === "INPUT")) {
    n = squash(el.innerText !== undefined ? el.innerText : el.textContent, NAME_MAX); if (n) return n;
    // an icon's label or an image's alt text, as Chromium names a link or button from its content
    const labels = Array.from(el.querySelectorAll("[aria-label]:not([aria-hidden=true]), img[alt], svg > title"),
      d => d.getAttribute("aria-label") || d.getAttribute("alt") || d.textContent);
    n = squash(labels.slice(0, 4).join(" "), NAME_MAX); if (n) return n;
  }
  return squash(el.getAttribute("title") || el.getAttribute("placeholder") || "", NAME_MAX);
}
function ownText(el) {
  let s = "";
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 3) s += c.data;
  return squash(s, TEXT_MAX);
}
function childrenOf(node) {
  if (node.shadowRoot) return node.shadowRoot.children;
  if (node.localName === "slot") { const a = node.assignedElements({flatten: true}); return a.length ? a : node.children; }
  return node.children;
}
function walk(el, parent, clip, ox, oy, parentPointer) {
  if (out.length >= MAX) { truncated = "nodes"; return; }
  if ((out.length & 63) === 0 && performance.now() - T0 > BUDGET) { truncated = "time"; return; }
  const tag = el.tagName;
  if (SKIP.has(tag) || el.getAttribute("aria-hidden") === "true") return;
  const cs = getComputedStyle(el);
  if (cs.display === "none") return;
  const r = el.getBoundingClientRect();
  const x = r.left + ox, y = r.top + oy, w = r.width, h = r.height;
  const fixed = cs.position === "fixed";
  const c = fixed ? [ox, oy, ox + innerWidth, oy + innerHeight] : clip;
  const onScreen = w > 0 && h > 0 && x < c[2] && y < c[3] && x + w > c[0] && y + h > c[1]
    && cs.visibility !== "hidden" && cs.visibility !== "collapse";
  const clips = cs.overflowX !== "visible" || cs.overflowY !== "visible";
  if (!onScreen && clips && w > 0 && h > 0) return;
  const pointer = cs.cursor === "pointer";
  let role = roleOf(el, tag, pointer);
  if (role === null) return;
  const text = (tag === "INPUT" || tag === "TEXTAREA") ? "" : ownText(el);
  let emit = onScreen && (role || text || (pointer && !parentPointer) || el.hasAttribute("tabindex")
    || el.hasAttribute("aria-label"));
  let index = parent;
  if (emit) {
    if (!role) role = cs.display.startsWith("inline") ? "static" : "section";
    const st = ["visible", "showing"];
    const disabled = el.disabled === true || el.getAttribute("aria-disabled") === "true";
    if (!disabled) st.push("enabled", "sensitive");
    if (el.tabIndex >= 0 || el.isContentEditable) st.push("focusable");
    if (el === active) st.push("focused");
    const checked = el.checked === true || el.getAttribute("aria-checked") === "true" || el.getAttribute("aria-pressed") === "true";
    if (checked) st.push("checked");
    if (tag === "INPUT" && (el.type === "checkbox" || el.type === "radio")) st.push("checkable");
    if (el.selected === true || el.getAttribute("aria-selected") === "true") st.push("selected");
    const exp = el.getAttribute("aria-expanded");
    if (exp === "true") st.push("expandable", "expanded"); else if (exp === "false") st.push("expandable", "collapsed");
    let value = "";
    if (tag === "INPUT" || tag === "TEXTAREA") {
      if (!el.readOnly && !disabled) st.push("editable");
      st.push(tag === "TEXTAREA" ? "multi_line" : "single_line");
      value = el.type === "password" ? "\u2022".repeat(el.value.length) : el.value;
      if (el.readOnly) st.push("read_only");
      if (el.required) st.push("required");
    } else if (el.isContentEditable) { st.push("editable", "multi_line"); value = el.innerText; }
    else if (tag === "SELECT") value = el.selectedOptions.length ? el.selectedOptions[0].text : "";
    const attrs = {tag: el.localName};
    if (el.id) attrs.id = el.id.slice(0, CLASS_MAX);
    const cls = typeof el.className === "string" ? el.className : (el.getAttribute("class") || "");
    if (cls) attrs.class = cls.slice(0, CLASS_MAX);
    if (el.getAttribute("role")) attrs["xml-roles"] = el.getAttribute("role");
    if (role === "heading") attrs.level = tag.length === 2 && tag[0] === "H" ? tag[1] : (el.getAttribute("aria-level") || "2");
    if (el.getAttribute("placeholder")) attrs["placeholder-text"] = squash(el.getAttribute("placeholder"), NAME_MAX);
    if (role === "link" && el.href) attrs.href = String(el.href).slice(0, 300);
    index = out.length;
    out.push([parent, role, nameOf(el, tag, role), value ? squash(value, TEXT_MAX) : text,
              Math.round(x * 100) / 100, Math.round(y * 100) / 100, Math.round(w * 100) / 100,
              Math.round(h * 100) / 100, st, attrs]);
  }
  const inner = clips && w > 0 && h > 0
    ? [Math.max(c[0], x), Math.max(c[1], y), Math.min(c[2], x + w), Math.min(c[3], y + h)] : c;
  if (tag === "IFRAME") {
    let doc = null; try { doc = el.contentDocument; } catch (e) { doc = null; }
    if (doc && doc.documentElement) {
      const b = el.clientLeft, t = el.clientTop;
      walk(doc.documentElement, index, inner, x + b, y + t, false);
    }
    return;
  }
  if (tag === "SELECT" || (tag === "svg" && role)) return;
  for (const child of childrenOf(el)) { walk(child, index, inner, ox, oy, pointer); if (truncated) return; }
}
walk(document.documentElement, -1, [0, 0, innerWidth, innerHeight], 0, 0, false);
return {items: out, truncated: truncated, width: innerWidth, height: innerHeight, dpr: devicePixelRatio,
        title: document.title, url: location.href, visible: document.visibilityState,
        elapsed_ms: Math.round(performance.now() - T0)};
})()"""

#: Which of the page targets a document stands for: asked of each candidate before the walk.
_PROBE = ("({visible: document.visibilityState, width: innerWidth, height: innerHeight, "
          "dpr: devicePixelRatio, title: document.title})")


class PageReader:
    """Reads the page a ``document web`` accessible of Chromium shows, over its DevTools port.

    Args:
        http_timeout_s: timeout of the DevTools HTTP endpoint (``/json/list``).
    """

    def __init__(self, http_timeout_s: float = 2.0):
        self._http_timeout_s = http_timeout_s
        #: browser process -> its DevTools port (None: none)
        self._ports = BoundedStore(256)
        #: (port, title, width, height) -> the page target last found for such a document (see read)
        self._targets_found = BoundedStore(256)

    def port_of(self, pid: int) -> int | None:
        """The DevTools port of the browser process ``pid`` (looked up once per process)."""
        if pid not in self._ports:
            self._ports.put(pid, devtools_port(pid))
        return self._ports[pid]

    def _targets(self, port: int) -> list[dict]:
        url = f"http://127.0.0.1:{port}/json/list"
        try:
            with urllib.request.urlopen(url, timeout=self._http_timeout_s) as resp:  # noqa: S310 - loopback
                targets = json.loads(resp.read())
        except (OSError, ValueError) as exc:
            raise PageUnavailable(f"Chromium's DevTools endpoint {url} did not answer: {exc}") from exc
        return [t for t in targets if t.get("type") == "page" and t.get("webSocketDebuggerUrl")]

    def find_target(self, port: int, title: str, size: tuple[int, int], timeout_s: float) -> str:
        """The ``webSocketDebuggerUrl`` of the visible page titled ``title`` whose viewport is ``size``
        screen pixels (the document accessible's extents); candidates with that title are asked first.

        Raises:
            PageUnavailable: no visible page target matches.
        """
        deadline = time.monotonic() + timeout_s
        targets = self._targets(port)
        titled = [t for t in targets if t.get("title") == title]
        ordered = titled + [t for t in targets if t not in titled]
        for target in ordered:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                probe = evaluate(target["webSocketDebuggerUrl"], _PROBE, min(remaining, 3.0))
            except PageUnavailable as exc:
                logger.debug("page target %s did not answer the probe: %s", target.get("url"), exc)
                continue
            if _shows(probe, None if not titled else title, size):
                return target["webSocketDebuggerUrl"]
        raise PageUnavailable(f"no visible page of the {len(targets)} DevTools targets on port {port} matches "
                              f"the document {title!r} of {size[0]}x{size[1]} pixels")

    def read(self, pid: int, title: str, extents: tuple[int, int, int, int], max_nodes: int,
             timeout_s: float) -> dict:
        """The page shown by a Chromium ``document web`` accessible.

        The page target found for a document is kept (per port, title and size) and walked directly
        the next time, as long as the walker's reply still shows that title at that size;
        otherwise the targets are asked again (:meth:`find_target`).

        Args:
            pid: Chromium's browser process (the accessible's application).
            title: the accessible's name (the page's title).
            extents: the accessible's (x, y, width, height) on screen: the page's viewport.
            max_nodes: most elements returned.
            timeout_s: time budget for finding the page and walking it.

        Returns:
            The walker's reply: ``items`` ([parent index, role, name, text, x, y, w, h, states,
            attributes] with boxes in screen pixels), ``truncated`` ("", "nodes" or "time"), ``url``
            and ``elapsed_ms``.

        Raises:
            PageUnavailable: Chromium has no DevTools port, no target matches, or reading failed.
        """
        deadline = time.monotonic() + timeout_s
        port = self.port_of(pid)
        if port is None:
            raise PageUnavailable(f"process {pid} was not started with --remote-debugging-port")
        x0, y0, width, height = extents
        if width <= 0 or height <= 0:
            raise PageUnavailable(f"the document {title!r} has no area on screen ({width}x{height})")
        key = (port, title, width, height)
        page = None
        if key in self._targets_found:  # the target found for this document last time, if it still shows it
            try:
                page = self._walk(self._targets_found[key], max_nodes, deadline)
            except PageUnavailable as exc:
                logger.debug("the page target found before for %r did not answer: %s", title, exc)
            if page is not None and not _shows(page, title, (width, height)):
                page = None
        if page is None:
            self._targets_found.pop(key, None)
            ws_url = self.find_target(port, title, (width, height), max(timeout_s / 2, 0.5))
            page = self._walk(ws_url, max_nodes, deadline)
            if page.get("title") == title:
                self._targets_found.put(key, ws_url)
        scale = (width / page["width"]) if page.get("width") else float(page.get("dpr") or 1)
        for item in page["items"]:  # the enclosing box in screen pixels, as Chromium's own AT-SPI extents
            left, top = item[4] * scale, item[5] * scale
            right, bottom = left + item[6] * scale, top + item[7] * scale
            item[4], item[5] = x0 + math.floor(left), y0 + math.floor(top)
            item[6], item[7] = math.ceil(right) - math.floor(left), math.ceil(bottom) - math.floor(top)
        return page

    @staticmethod
    def _walk(ws_url: str, max_nodes: int, deadline: float) -> dict:
        """The walker's reply for the page target ``ws_url`` (boxes in the page's CSS pixels)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0.1:
            raise PageUnavailable("no time left to walk the page")
        script = (_WALKER.replace("__MAX__", str(max(int(max_nodes), 1)))
                  .replace("__BUDGET_MS__", str(int(remaining * 800))))
        page = evaluate(ws_url, script, remaining)
        if not isinstance(page, dict) or not isinstance(page.get("items"), list):
            raise PageUnavailable(f"the page script returned {type(page).__name__}, not the element list")
        return page


def _shows(probe, title: str | None, size: tuple[int, int]) -> bool:
    """Whether a page that answered ``probe`` (the walker's reply or ``_PROBE``'s) is the visible page of a
    document titled ``title`` (None: any title) whose viewport is ``size`` screen pixels."""
    if not isinstance(probe, dict) or probe.get("visible") != "visible":
        return False
    dpr = probe.get("dpr") or 1
    try:
        fits = abs(probe["width"] * dpr - size[0]) <= 2 * dpr and abs(probe["height"] * dpr - size[1]) <= 2 * dpr
    except (KeyError, TypeError):
        return False
    return fits and (title is None or probe.get("title") == title)


def append_items(parent: ET.Element, items: list) -> int:
    """Write the page reader's ``items`` (see :meth:`PageReader.read`) as ``parent``'s subtree.

    Returns:
        The number of elements written.
    """
    made: list[ET.Element] = []
    for up, role, name, text, x, y, w, h, states, attributes in items:
        child = ET.SubElement(made[up] if 0 <= up < len(made) else parent, tag(role), {"name": clean(name)})
        for state in states:
            child.set(q("st", state), "true")
        for key, value in attributes.items():
            child.set(q("attr", tag(key)), clean(str(value)))
        child.set(q("cp", "screencoord"), f"({x}, {y})")
        child.set(q("cp", "size"), f"({w}, {h})")
        if text:
            child.text = clean(text)
        made.append(child)
    return len(made)
