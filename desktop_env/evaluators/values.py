"""What getters hand to metrics: host files as ``Path`` objects, text that came out of the guest as ``GuestText``."""
from __future__ import annotations


class GuestText(str):
    """Text the guest produced (a command's or script's output, a page's text).

    It is only ever text: a metric never treats it as the path of a host file, whatever it
    says, so nothing the guest prints can make the host read its own files. Host files that
    getters fetch or resolve are handed over as ``pathlib.Path`` objects instead.
    """

    __slots__ = ()
