"""The in-VM server's accessibility tree as a list of on-screen elements: what the model-facing tables
(desktop_env.agents.a11y) and the reference solutions' element locator (desktop_env.replay.locate) both read."""
from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

log = logging.getLogger(__name__)

_NS_COMPONENT = "https://accessibility.ubuntu.example.org/ns/component"
_NS_STATE = "https://accessibility.ubuntu.example.org/ns/state"
_PAIR = re.compile(r"\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)")

#: Roles a person can act on: these get a set-of-marks number.
INTERACTIVE_ROLES = frozenset({
    "push-button", "button", "toggle-button", "check-box", "radio-button", "combo-box", "entry", "text",
    "password-text", "spin-button", "slider", "link", "menu", "menu-item", "check-menu-item", "radio-menu-item",
    "page-tab", "list-item", "tree-item", "table-cell", "icon", "document-web", "terminal", "scroll-bar",
    "tool-bar-item", "heading", "paragraph", "label", "image", "section", "list", "tree", "table", "tree-table",
})


@dataclass
class Element:
    """One on-screen accessible: role tag, name, text, and its box in real screen pixels."""

    tag: str
    name: str
    text: str
    x: int
    y: int
    w: int
    h: int
    states: frozenset

    @property
    def centre(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y + self.h // 2


def parse_elements(xml: str, screen: tuple[int, int] | None = None) -> list[Element]:
    """The visible elements of an accessibility tree (the in-VM server's XML), in document order.

    An element is kept when it is showing/visible, has a positive size, lies at least
    partly on ``screen`` (when given), and has a name or text or an interactive role.
    An empty or malformed tree gives an empty list (logged).
    """
    if not xml or not xml.strip():
        return []
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        log.warning("accessibility tree does not parse (%s); the model gets no tree", exc)
        return []
    out = []
    for node in root.iter():
        coord = node.get(f"{{{_NS_COMPONENT}}}screencoord")
        size = node.get(f"{{{_NS_COMPONENT}}}size")
        if not coord or not size:
            continue
        states = frozenset(k.split("}", 1)[1] for k, v in node.attrib.items()
                           if k.startswith(f"{{{_NS_STATE}}}") and v == "true")
        if "showing" not in states and "visible" not in states:
            continue
        mc, ms = _PAIR.search(coord), _PAIR.search(size)
        if not mc or not ms:
            continue
        x, y, w, h = int(mc.group(1)), int(mc.group(2)), int(ms.group(1)), int(ms.group(2))
        if w <= 0 or h <= 0:
            continue
        if screen is not None and (x + w <= 0 or y + h <= 0 or x >= screen[0] or y >= screen[1]):
            continue
        tag = node.tag.split("}", 1)[-1]
        name = (node.get("name") or "").strip()
        text = " ".join((node.text or "").split())
        if not (name or text or tag in INTERACTIVE_ROLES):
            continue
        out.append(Element(tag, name, text, x, y, w, h, states))
    return out
