"""The accessibility tree (AT-SPI, through pyatspi) as XML, and terminal text.

The XML follows the layout agents already parse: one element per accessible,
its tag the role name with spaces as dashes, ``name`` as an attribute, the text
as element text, and namespaced attributes for states (``st:``), object
attributes (``attr:``), geometry (``cp:screencoord="(x, y)"``, ``cp:size="(w, h)"``),
values (``val:``) and actions (``act:``).

Applications appear only if the AT-SPI bus was running in their session before
they started and toolkit accessibility is on (GTK: ``NO_AT_BRIDGE`` unset;
Chromium: ``--force-renderer-accessibility``).
"""
from __future__ import annotations

import logging
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from .a11y_xml import NAMESPACES, STATE_PREFIX as _STATE_PREFIX, BoundedStore  # noqa: F401
from .a11y_xml import clean as _clean, q as _q, tag as _tag
from .a11y_cells import visible_cells
from .errors import DisplayUnavailable, Timeout
from .pagetree import PageReader, PageUnavailable, append_items

logger = logging.getLogger(__name__)

MAX_WIDTH = 1024  # children per node, as the original server
MAX_TEXT_CHARS = 200_000  # text kept per node
_HUGE_TABLE = 4096  # tables with more children are read as their visible cells only
#: Objects whose role and actions are kept between reads (see A11yReader._role, _actions).
_CACHE_MAX = 50_000
#: Roles whose text can be long (a terminal's scrollback, a text editor's or a document's body): their
#: text is read up to MAX_TEXT_CHARS; other objects' text is read whole in one call (see _text).
_LONG_TEXT_ROLES = frozenset({"terminal", "text", "document text", "document frame", "document email",
                              "document presentation", "document spreadsheet", "editbar"})
#: Roles of menu entries: one that is not showing belongs to a closed menu (see A11yReader._node).
_MENU_ROLES = frozenset({"menu", "menu item", "check menu item", "radio menu item", "separator", "tearoff menu item"})


@dataclass
class _Walk:
    max_depth: int
    max_nodes: int
    deadline: float
    cells: bool = True  # read spreadsheets' cells (after everything else)
    devtools: bool = True  # read Chromium's pages over DevTools when it has a port (see A11yReader._page)
    nodes: int = 0
    pages: int = 0  # documents read over DevTools
    documents: int = 0  # showing documents with an area on screen
    stubs: int = 0  # showing documents of no area
    hidden: int = 0  # elements written without their subtree: not showing
    deferred: list = field(default_factory=list)  # (table, element, depth): cells read at the end
    truncated: set = field(default_factory=set)

    def mark(self) -> dict:
        """The counts so far (and how many tables wait for their cells), for :meth:`rewind`."""
        return {"nodes": self.nodes, "hidden": self.hidden, "pages": self.pages, "documents": self.documents,
                "stubs": self.stubs, "deferred": len(self.deferred)}

    def rewind(self, mark: dict) -> None:
        """Forget what was counted since ``mark`` (a subtree to walk again), except the stubs seen."""
        self.nodes, self.hidden, self.pages, self.documents = (mark[k] for k in ("nodes", "hidden", "pages",
                                                                                  "documents"))
        del self.deferred[mark["deferred"]:]

    def allow(self) -> bool:
        if self.nodes >= self.max_nodes:
            self.truncated.add("nodes")
            return False
        if time.monotonic() > self.deadline:
            self.truncated.add("time")
            return False
        return True


def _key(acc) -> tuple | None:
    """What an accessible object is known by between reads: (bus name, object path); None when its
    application cannot be told (such an object is read, never kept)."""
    try:
        return acc.app.bus_name, acc.path
    except Exception:  # noqa: BLE001 - an object without its application
        return None


def _has_area(elem: ET.Element) -> bool:
    """Whether ``elem``'s ``cp:size`` is a box of some area (no size, or a zero side, is none)."""
    try:
        width, height = (int(v) for v in elem.get(_q("cp", "size"), "").strip("()").split(","))
    except ValueError:
        return False
    return width > 0 and height > 0


class A11yReader:
    """Reads the AT-SPI tree; calls are serialized (libatspi is not thread safe).

    Args:
        call_timeout_s: D-Bus timeout for one AT-SPI call (a hung application
            costs at most this much per call).
    """

    def __init__(self, call_timeout_s: float = 3.0):
        self._lock = threading.Lock()
        self._call_timeout_ms = int(call_timeout_s * 1000)
        self._pyatspi = None
        self._bus_enabled = False
        #: (bus name, object path) -> role name (see _role)
        self._roles = BoundedStore(_CACHE_MAX)
        #: (bus name, object path, role, states) -> ((name, description, key binding), ...)
        self._actions_cache = BoundedStore(_CACHE_MAX)
        #: application bus name -> toolkit name (see _is_chromium)
        self._toolkits = BoundedStore(256)
        #: Atspi.StateType -> pyatspi's name of it (see _state_name)
        self._state_names: dict = {}
        self._pages = PageReader()

    def _atspi(self):
        if self._pyatspi is None:
            try:
                import pyatspi
                from gi.repository import Atspi
            except Exception as exc:  # noqa: BLE001 - ImportError or GLib errors at init
                raise DisplayUnavailable(f"AT-SPI is not available ({exc}); install python3-pyatspi "
                                         "and run at-spi2-core in the session") from exc
            Atspi.set_timeout(self._call_timeout_ms, max(self._call_timeout_ms, 15000))
            self._pyatspi = pyatspi
        return self._pyatspi

    def enable_toolkit_accessibility(self) -> bool:
        """Set the AT-SPI bus's ``org.a11y.Status.IsEnabled`` to true (once; later calls are free).

        Applications read this flag at start-up: with it, Chromium and other toolkits
        register with AT-SPI even when started without ``--force-renderer-accessibility``
        or ``ACCESSIBILITY_ENABLED=1`` (e.g. by the agent from a menu).

        Returns:
            True when the flag is (now) set; False when the session bus is not reachable.
        """
        if self._bus_enabled:
            return True
        try:
            from gi.repository import Gio, GLib

            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            bus.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties", "Set",
                          GLib.Variant("(ssv)", ("org.a11y.Status", "IsEnabled", GLib.Variant("b", True))),
                          None, Gio.DBusCallFlags.NONE, self._call_timeout_ms, None)
        except Exception as exc:  # noqa: BLE001 - ImportError, GLib.Error: no session bus yet
            logger.debug("could not turn toolkit accessibility on (will retry): %s", exc)
            return False
        self._bus_enabled = True
        logger.info("toolkit accessibility turned on (org.a11y.Status.IsEnabled = true)")
        return True

    def bus_address(self) -> str | None:
        """The AT-SPI bus's address, as ``org.a11y.Bus.GetAddress`` on the session bus gives it (this
        starts the bus if it is not running), or None when the session bus does not answer."""
        try:
            from gi.repository import Gio

            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            reply = bus.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None, None,
                                  Gio.DBusCallFlags.NONE, self._call_timeout_ms, None)
        except Exception as exc:  # noqa: BLE001 - ImportError, GLib.Error: no session bus yet
            logger.debug("could not read the AT-SPI bus address: %s", exc)
            return None
        return reply.unpack()[0] or None

    def publish_bus_address(self, display_name: str) -> bool:
        """Put the AT-SPI bus's address on the X root window as ``AT_SPI_BUS`` (once it is right,
        later calls only compare).

        The bus launcher does this itself only when it starts with a display; started by D-Bus
        activation before X (as in the image, where the server turns accessibility on early), it
        does not. Qt 5 applications need the property: without it their bridge asks the session
        bus for the address and registers before the answer arrives, so they never join the tree
        (Qt logs "Error in contacting registry ... Not connected to D-Bus server"). GTK and
        Chromium read the address from the session bus either way.

        Returns:
            True when the property holds the bus's address; False when the session bus or the
            display is not reachable yet.
        """
        address = self.bus_address()
        if not address:
            return False
        from . import display

        try:
            display.set_root_property(display_name, "AT_SPI_BUS", address)
        except DisplayUnavailable as exc:
            logger.debug("could not publish the AT-SPI bus address yet: %s", exc)
            return False
        return True

    def _desktop(self):
        pyatspi = self._atspi()
        try:
            return pyatspi.Registry.getDesktop(0)
        except Exception as exc:  # noqa: BLE001 - GLib.Error when the bus is missing
            raise DisplayUnavailable(f"the accessibility bus is not reachable: {exc}") from exc

    def _acquire(self, timeout_s: float) -> None:
        if not self._lock.acquire(timeout=timeout_s):
            raise Timeout(f"another accessibility request held the reader for {timeout_s:g} s")

    # -- tree ---------------------------------------------------------------------------------

    def tree_xml(self, max_depth: int, max_nodes: int, timeout_s: float, cells: bool = True,
                 devtools: bool = True) -> tuple[str, dict]:
        """The whole desktop's accessibility tree as an XML string.

        Args:
            max_depth: deepest level included (the desktop is level 0).
            max_nodes: most elements in the reply.
            timeout_s: time budget; when it runs out the tree built so far is returned.
            cells: read the visible cells of spreadsheets (huge tables). They are read after the
                rest of the tree, so that a budget spent on a sheet's thousand cells never hides a
                dialog; without them a table element says ``cells="not-read"``.
            devtools: read the content of pages shown by a Chromium that has a remote-debugging port
                from the page itself, over DevTools (see :meth:`_page`); False walks their AT-SPI
                subtrees as for any other application.

        Returns:
            (xml, stats) where stats has ``nodes``, ``hidden`` (elements written without their
            subtree, see :meth:`_node`), ``truncated`` (list of the limits hit: ``depth``,
            ``nodes``, ``time``), ``pages`` (documents read over DevTools) and ``elapsed_s``.

        Raises:
            DisplayUnavailable: AT-SPI or its bus is not available.
        """
        started = time.monotonic()
        self._acquire(timeout_s)
        try:
            self.enable_toolkit_accessibility()
            desktop = self._desktop()
            walk = _Walk(max_depth=max_depth, max_nodes=max_nodes, deadline=started + timeout_s, cells=cells,
                         devtools=devtools)
            root = self._node(desktop, 0, walk)
            for table, elem, depth in walk.deferred:
                for cell in visible_cells(self._pyatspi, table, walk.allow):
                    if not walk.allow():
                        break
                    if cell is not None:
                        elem.append(self._node(cell, depth + 1, walk, cell=True))
        finally:
            self._lock.release()
        if walk.truncated:
            logger.info("accessibility tree truncated (%s) at %d nodes", ",".join(sorted(walk.truncated)),
                        walk.nodes)
        stats = {"nodes": walk.nodes, "hidden": walk.hidden, "truncated": sorted(walk.truncated),
                 "pages": walk.pages, "elapsed_s": round(time.monotonic() - started, 3)}
        return ET.tostring(root, encoding="unicode"), stats

    def _node(self, acc, depth: int, walk: _Walk, cell: bool = False, prune: bool = False) -> ET.Element:
        """One element and (within the walk's limits) its subtree.

        Below the applications, an element that is not showing and either visible or a menu entry
        (a closed menu's items, a page's content scrolled out of view, a window's hidden tab) is
        written with its role, name and states only, without its subtree: nothing in it is on
        screen to look at or act on, and reading it was most of the cost (a Calc window's closed
        menus hold about two thousand entries, a long page thousands of sections). In Chromium
        (``prune``) so is an element with neither state: an invisible view (the toolbar's hidden
        buttons, empty panels) is never drawn, and its subtree was a quarter of the window's
        elements. Elsewhere such elements are walked, but without their details (attributes, text,
        value, actions): LibreOffice's formula bar ("Input line") reports neither state yet shows
        its text in a showing child. A spreadsheet ``cell`` gets its role, name, states, geometry
        and text, not its attributes and actions, which are the same for every cell.
        """
        walk.nodes += 1
        key = _key(acc)
        role = self._role(acc, key)
        attrs: dict[str, str] = {}
        try:
            attrs["name"] = _clean(acc.name or "")
        except Exception:  # noqa: BLE001
            attrs["name"] = ""
        elem = ET.Element(_tag(role), attrs)
        try:
            states = [self._state_name(s) for s in acc.get_state_set().get_states()]
        except Exception:  # noqa: BLE001
            states = []
        for state in states:
            if state:
                elem.set(_q("st", state.replace(" ", "_")), "true")
        if depth >= 2 and "showing" not in states and ("visible" in states or role in _MENU_ROLES or prune):
            walk.hidden += 1
            return elem
        page = role == "document web" and depth >= 2 and "showing" in states
        if page and walk.devtools and self._page(acc, elem, walk):
            walk.documents += 1
            return elem
        if depth < 2 or "showing" in states:
            self._add_details(acc, elem, "visible" in states and "showing" in states, cell, key)
        if page and _has_area(elem):
            walk.documents += 1
        elif page:
            walk.stubs += 1
        if depth >= walk.max_depth:
            walk.truncated.add("depth")
            return elem
        if depth == 1 and key is not None and self._is_chromium(key[0], acc):
            self._children_of_chromium(acc, elem, depth, walk)
        else:
            self._children(acc, elem, role, depth, walk, prune)
        return elem

    def _children(self, acc, elem: ET.Element, role: str, depth: int, walk: _Walk, prune: bool) -> None:
        """Append ``acc``'s children (a huge table's cells are left for the end of the walk, see tree_xml)."""
        try:
            count = acc.childCount
        except Exception:  # noqa: BLE001
            return
        if role == "table" and count > _HUGE_TABLE:  # a spreadsheet: its cells come last (tree_xml)
            if walk.cells:
                walk.deferred.append((acc, elem, depth))
            else:
                elem.set("cells", "not-read")
            return
        children = (acc.getChildAtIndex(i) for i in range(min(count, MAX_WIDTH)))
        try:
            for child in children:
                if not walk.allow():
                    break
                if child is None:
                    continue
                elem.append(self._node(child, depth + 1, walk, prune=prune))
        except Exception as exc:  # noqa: BLE001 - keep what we have of a misbehaving app
            logger.debug("error while reading children of a %s: %s", role, exc)

    def _children_of_chromium(self, app, elem: ET.Element, depth: int, walk: _Walk) -> None:
        """Append the windows of Chromium's application ``app``, its invisible views without their subtree.

        While a page loads, Chromium can show its document as an empty stub of no area; a settings page
        (``chrome://settings``) stayed so for minutes when the invisible views were never walked. So
        when the application shows documents but none with an area (Chromium always has a few
        stubs: its pop-ups' pages), it is walked again with them.
        """
        before = walk.mark()
        self._children(app, elem, "application", depth, walk, prune=True)
        if walk.stubs == before["stubs"] or walk.documents > before["documents"]:
            return
        logger.debug("a page of Chromium is a stub of no area: its invisible views are walked")
        for child in list(elem):
            elem.remove(child)
        walk.rewind(before)
        self._children(app, elem, "application", depth, walk, prune=False)

    def _page(self, acc, elem: ET.Element, walk: _Walk) -> bool:
        """Fill ``elem``, a showing ``document web`` of Chromium, from the page over DevTools.

        The page's elements on screen become ``elem``'s subtree in the walk's vocabulary (AT-SPI
        role names, states, attributes and screen boxes; see :mod:`vm_server.pagetree`) and
        ``elem`` says ``reader="devtools"``. One script run in the page replaces about six AT-SPI
        calls per element. Elements scrolled out of view are not written (the AT-SPI walk writes
        them without their content).

        Returns:
            False when the page cannot be read that way (Chromium has no remote-debugging port, no
            page target matches, the script failed): the caller walks the AT-SPI subtree instead.
        """
        try:
            pid = acc.get_process_id()
            ext = acc.queryComponent().getExtents(self._pyatspi.XY_SCREEN)
            extents = (ext[0], ext[1], ext[2], ext[3])
        except Exception as exc:  # noqa: BLE001 - a dying object or no Component interface
            logger.debug("document without process or extents, walked over AT-SPI: %s", exc)
            return False
        remaining_s = walk.deadline - time.monotonic()
        if remaining_s <= 0.5 or walk.nodes >= walk.max_nodes:
            return False
        try:
            page = self._pages.read(pid, elem.get("name", ""), extents, walk.max_nodes - walk.nodes, remaining_s)
        except PageUnavailable as exc:
            logger.debug("page %r read over AT-SPI: %s", elem.get("name"), exc)
            return False
        self._set_attributes(acc, elem)
        elem.set(_q("cp", "screencoord"), str(extents[:2]))
        elem.set(_q("cp", "size"), str(extents[2:]))
        elem.set("reader", "devtools")
        walk.nodes += append_items(elem, page["items"])
        walk.pages += 1
        if page.get("truncated"):
            walk.truncated.add(page["truncated"])
        return True

    def _role(self, acc, key: tuple | None) -> str:
        """``acc``'s role name, read once per object (``unknown`` when it cannot be read).

        The role was the costliest read of a web page's walk (about 40% of its time in
        Chromium), and an object keeps its role for its life in the toolkits here (GTK,
        LibreOffice, Qt; Chromium gives an element whose role changes a new object), so it is kept
        per bus name and object path, up to ``_CACHE_MAX`` objects (the cache starts again when
        full; ``key`` is the object's, see :func:`_key`). libatspi's own cache is not used: with it
        on, a blocking call dispatches incoming messages whose handlers make blocking calls of their
        own, which deadlocks libdbus.
        """
        role = self._roles.get(key) if key is not None else None
        if role is not None:
            return role
        try:
            role = acc.getRoleName()
        except Exception:  # noqa: BLE001 - the object died or its app hung
            return "unknown"
        if key is not None:
            self._roles.put(key, role)
        return role

    def _is_chromium(self, bus_name: str, app) -> bool:
        """Whether the application ``app`` (on ``bus_name``) is Chromium (or an Electron app): its toolkit
        name, kept per bus name."""
        toolkit = self._toolkits.get(bus_name)
        if toolkit is None:
            try:
                toolkit = self._toolkits.put(bus_name, app.get_toolkit_name() or "")
            except Exception:  # noqa: BLE001 - the application died or hung
                return False
        return toolkit == "Chromium"

    def _state_name(self, state) -> str:
        """pyatspi's name of an ``Atspi.StateType`` ("showing", "multi line"), looked up once per state.

        pyatspi's own ``StateSet.getStates()`` asks the set about each of the 40-odd states in turn,
        which cost a tenth of a web page's walk under emulation; ``get_states()`` lists the set's
        states in one go.
        """
        name = self._state_names.get(state)
        if name is None:
            name = self._state_names[state] = self._pyatspi.stateToString(state)
        return name

    @staticmethod
    def _text(text_iface, tag: str) -> str:
        """An object's text: in one call (offsets 0 to -1, "to the end" in AT-SPI), or, for roles whose
        text can be long (``_LONG_TEXT_ROLES``), its length first and then at most ``MAX_TEXT_CHARS``.

        Asking for the length first was a third of the calls of a web page's text reads.
        """
        if tag.replace("-", " ") in _LONG_TEXT_ROLES:
            return text_iface.getText(0, min(text_iface.characterCount, MAX_TEXT_CHARS))
        return text_iface.getText(0, -1)[:MAX_TEXT_CHARS]

    @staticmethod
    def _set_attributes(acc, elem: ET.Element) -> None:
        """``acc``'s object attributes as ``attr:`` attributes of ``elem`` (none when they cannot be read)."""
        try:
            for key, value in (acc.get_attributes() or {}).items():
                if key:
                    elem.set(_q("attr", _tag(key)), _clean(str(value)))
        except Exception:  # noqa: BLE001
            pass

    def _add_details(self, acc, elem: ET.Element, on_screen: bool, cell: bool = False,
                     key: tuple | None = None) -> None:
        pyatspi = self._pyatspi
        if not cell:  # a cell's attributes and actions are skipped (see _node)
            self._set_attributes(acc, elem)
        if on_screen:
            try:
                ext = acc.queryComponent().getExtents(pyatspi.XY_SCREEN)
                elem.set(_q("cp", "screencoord"), str((ext[0], ext[1])))
                elem.set(_q("cp", "size"), str((ext[2], ext[3])))
            except Exception:  # noqa: BLE001 - NotImplementedError when the interface is absent
                pass
        try:
            text_iface = acc.queryText()
        except Exception:  # noqa: BLE001 - NotImplementedError when the interface is absent
            text_iface = None
        if text_iface is not None:
            try:
                text = self._text(text_iface, elem.tag)
                if text:
                    elem.text = _clean(text)
            except Exception:  # noqa: BLE001
                pass
        if cell:
            return
        for iface, flag in (("queryImage", "image"), ("querySelection", "selection")):
            try:
                getattr(acc, iface)()
                elem.set(flag, "true")
            except Exception:  # noqa: BLE001 - NotImplementedError when the interface is absent
                pass
        try:
            value = acc.queryValue()
        except Exception:  # noqa: BLE001 - NotImplementedError when the interface is absent
            value = None
        if value is not None:
            for key, getter in (("value", "currentValue"), ("min", "minimumValue"),
                                ("max", "maximumValue"), ("step", "minimumIncrement")):
                try:
                    elem.set(_q("val", key), str(getattr(value, getter)))
                except Exception:  # noqa: BLE001
                    pass
        for name, description, key_binding in self._actions(acc, elem, key):
            name = _tag(name.replace(" ", "-"))
            elem.set(_q("act", f"{name}_desc"), _clean(description))
            elem.set(_q("act", f"{name}_kb"), _clean(key_binding))

    def _actions(self, acc, elem: ET.Element, key: tuple | None) -> tuple:
        """``acc``'s actions as (name, description, key binding), kept per object, role and states.

        Reading them is a call for the count and three per action (a web page's links and buttons
        made a third of its walk), and an object's actions follow from its role and states (a
        check box's "check" turns "uncheck" with its checked state), so they are read once per
        object path, role and state set, and kept (up to ``_CACHE_MAX`` entries; the cache starts
        again when full).
        """
        if key is not None:
            key = (*key, elem.tag, tuple(k for k in elem.attrib if k.startswith(_STATE_PREFIX)))
        if key is not None and key in self._actions_cache:
            return self._actions_cache[key]
        try:
            action = acc.queryAction()
        except Exception:  # noqa: BLE001 - NotImplementedError when the interface is absent
            return ()
        try:
            actions = tuple((action.getName(i) or f"action{i}", action.getDescription(i) or "",
                             action.getKeyBinding(i) or "") for i in range(action.nActions))
        except Exception:  # noqa: BLE001 - a dying object: nothing kept
            return ()
        if key is not None:
            self._actions_cache.put(key, actions)
        return actions

    # -- terminal -----------------------------------------------------------------------------

    def terminal_text(self, timeout_s: float = 10.0) -> str | None:
        """Text of the focused terminal widget (of the active window when possible).

        Looks through every application for accessibles with the ``terminal`` role
        (xfce4-terminal, gnome-terminal, ... all use VTE). Preference: focused in an
        active window, then focused, then in an active window, then the first found.

        Returns:
            The text with trailing whitespace removed, or None when no terminal is open.
        """
        pyatspi_deadline = time.monotonic() + timeout_s
        self._acquire(timeout_s)
        try:
            desktop = self._desktop()
            pyatspi = self._pyatspi
            best = None
            best_rank = -1
            for app_index in range(desktop.childCount):
                app = desktop.getChildAtIndex(app_index)
                if app is None:
                    continue
                for frame_index in range(min(app.childCount, MAX_WIDTH)):
                    frame = app.getChildAtIndex(frame_index)
                    if frame is None:
                        continue
                    try:
                        active = frame.getState().contains(pyatspi.STATE_ACTIVE)
                    except Exception:  # noqa: BLE001
                        active = False
                    for term in self._find_role(frame, "terminal", pyatspi_deadline):
                        try:
                            focused = term.getState().contains(pyatspi.STATE_FOCUSED)
                        except Exception:  # noqa: BLE001
                            focused = False
                        rank = 2 * focused + active
                        if rank > best_rank:
                            best, best_rank = term, rank
            if best is None:
                return None
            text_iface = best.queryText()
            return _clean(text_iface.getText(0, text_iface.characterCount)).rstrip()
        finally:
            self._lock.release()

    @staticmethod
    def _find_role(acc, role: str, deadline: float, max_depth: int = 16, max_nodes: int = 5000):
        stack = [(acc, 0)]
        seen = 0
        while stack and seen < max_nodes and time.monotonic() < deadline:
            node, depth = stack.pop()
            seen += 1
            try:
                if node.getRoleName() == role:
                    yield node
                    continue
                if depth < max_depth:
                    count = min(node.childCount, MAX_WIDTH)
                    stack.extend((node.getChildAtIndex(i), depth + 1) for i in reversed(range(count)))
            except Exception:  # noqa: BLE001 - skip dead or hung subtrees
                continue
