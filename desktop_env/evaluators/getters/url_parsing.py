"""URL parsers of the Chromium page getters (``active_tab_url_parse``, ``url_dashPart``, ``url_path_parse``):
plain functions of a URL, so that they are tested on their own."""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def query_values(url: str, parse_keys: list[str], replace: dict | None = None, split_list: bool = False) -> dict:
    """The first value of each query parameter of ``parse_keys`` (``""`` when absent), renamed by
    ``replace`` (``{old: new}``), each split at commas into a list with ``split_list``."""
    params = parse_qs(urlsplit(url).query, keep_blank_values=True)
    out: dict[str, Any] = {key: params.get(key, [""])[0] for key in parse_keys}
    for old, new in (replace or {}).items():
        out[new] = out.pop(old, "")
    if split_list:
        out = {key: value.split(",") for key, value in out.items()}
    return out


def url_part(url: str, index: int, need_delete_id: bool = False) -> str | None:
    """The ``index``-th part of ``url`` split at ``/`` (``https:``, ``""``, the host, then the path's parts);
    with ``need_delete_id`` the part loses what follows a ``?``. None when the URL has fewer parts."""
    parts = url.split("/")
    if not -len(parts) <= index < len(parts):
        return None
    part = parts[index]
    return part.split("?")[0] if need_delete_id else part


#: A facet key in a shop's path (``Men_regular_size_t``, ``Price_discount_range``): capitalised, with underscores.
_FACET_KEY = re.compile(r"^[A-Z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$")
_DISCOUNT = re.compile(r"^(\d+)_PERCENT_ off & more$")


def path_facets(url: str) -> dict[str, str]:
    """The filters a shop writes into its URL's path as ``/Key1,Key2/value1,value2`` (Macy's does: ``/shop/
    mens-clothing/Men_regular_size_t,Sleeve_length/L,Short%20Sleeve``): key -> value, percent-decoded. A
    value of several choices keeps them joined by ``|``. Empty when the path has no such pair of parts."""
    parts = [unquote(p) for p in urlsplit(url).path.strip("/").split("/")]
    for keys, values in zip(parts, parts[1:]):
        names = [k.strip() for k in keys.split(",")]
        vals = [v.strip() for v in values.split(",")]
        if len(names) == len(vals) and all(_FACET_KEY.match(k) for k in names):
            return dict(zip(names, vals))
    return {}


def discount_choice(value: str | None) -> str | None:
    """A discount filter's choices (``|``-separated) as the one range they show together: ranges
    ``N_PERCENT_ off & more`` add up to the one of the lowest N; other choices are kept as written."""
    if not value:
        return None
    choices = [c.strip() for c in value.split("|") if c.strip()]
    found = [(_DISCOUNT.match(c), c) for c in choices]
    if len(choices) > 1 and all(m for m, _ in found):
        return min(found, key=lambda mc: int(mc[0].group(1)))[1]
    return "|".join(choices)


def url_path_values(url: str, parse_keys: list[str]) -> dict:
    """The values a shop's product-list URL selects (the suite's task reads a Macy's URL).

    Always ``mens_clothing`` (True when a part of the path is ``mens-clothing``), ``shirts`` (the path holds
    ``shirts``, or ``Product_department``/``Top_style`` is shirts) and ``short_sleeve`` (the path holds
    ``short-sleeve``, or ``Sleeve_length`` is short sleeve), each True or None; then each of
    ``parse_keys`` that is not one of those: its path filter (:func:`path_facets`; None when not set),
    ``Price_discount_range`` as the single range its choices show (:func:`discount_choice`).
    """
    path = unquote(urlsplit(url).path).lower()
    facets = path_facets(url)
    lowered = {k: (v or "").lower() for k, v in facets.items()}
    derived = {
        "mens_clothing": "mens-clothing" in path.split("/"),
        "shirts": "shirts" in path or any(lowered.get(k) in ("shirt", "shirts") for k in ("Product_department",
                                                                                          "Top_style")),
        "short_sleeve": "short-sleeve" in path or lowered.get("Sleeve_length", "").replace(" ", "-") == "short-sleeve",
    }
    out: dict[str, Any] = {k: (True if v else None) for k, v in derived.items()}
    for key in parse_keys:
        if key in out:
            continue
        value = facets.get(key) or None
        out[key] = discount_choice(value) if key == "Price_discount_range" else value
    return out
