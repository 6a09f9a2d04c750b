"""The accessibility tree's XML vocabulary: namespaces, tags from role names, text XML can carry.

Shared by the AT-SPI walk (:mod:`vm_server.a11y`) and the DevTools page reader
(:mod:`vm_server.pagetree`), so that both write the same elements; and the bounded store both
keep what they learned between reads in.
"""
from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET

#: Namespaces of the attribute groups, as existing agents' parsers expect them.
NAMESPACES = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}
for _prefix, _uri in NAMESPACES.items():
    ET.register_namespace(_prefix, _uri)


def q(prefix: str, name: str) -> str:
    """The qualified attribute name ``{namespace}name`` of ``prefix:name``."""
    return f"{{{NAMESPACES[prefix]}}}{name}"


#: What every state attribute's qualified name starts with.
STATE_PREFIX = q("st", "")


@functools.lru_cache(maxsize=4096)  # roles and attribute names: a few hundred distinct ones
def tag(role: str) -> str:
    """An element tag for a role or attribute name: spaces as dashes, only XML name characters."""
    out = (role.strip() or "unknown").replace(" ", "-")
    out = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in out)
    return out if out[0].isalpha() or out[0] == "_" else "tag" + out


#: U+FFFC stands for embedded objects, U+FFFD for undecodable bytes; and control characters XML 1.0
#: cannot carry (tab, newline and carriage return stay).
DROPPED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffc\ufffd]")


def clean(text: str) -> str:
    """``text`` without the characters of ``DROPPED``."""
    return DROPPED.sub("", text)


class BoundedStore(dict):
    """A dict that starts again (is cleared) when it holds ``limit`` entries and one more is put.

    What the readers learn between reads (an object's role, a process's DevTools port) stays true
    for the object's or process's life, and objects come and go: clearing now and then keeps the
    store's size bounded without tracking their lives.
    """

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def put(self, key, value):
        """Store ``value`` under ``key`` (clearing the store first when it is full); returns ``value``."""
        if len(self) >= self.limit and key not in self:
            self.clear()
        self[key] = value
        return value
