"""Writing office documents (docx, pptx) so that regenerating gives the same bytes.

python-docx and python-pptx stamp a document with the time it was made (its core properties)
and each zip member with the time it was written; :func:`save_stable` fixes both, so a
regenerated file is byte-identical to the committed one.
"""
from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

#: The time every generated document says it was made and last modified.
STAMP = dt.datetime(2026, 11, 2, 9, 0, 0)


def stable_zip(data: bytes) -> bytes:
    """The zip ``data`` rewritten with every member dated 1980-01-01 (the zip epoch), members in order."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            member = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            member.external_attr = 0o644 << 16
            dst.writestr(member, src.read(info.filename))
    return out.getvalue()


def save_stable(document, path: Path) -> None:
    """Save a python-docx or python-pptx ``document`` to ``path`` with fixed dates (:data:`STAMP`)."""
    props = document.core_properties
    props.created = props.modified = STAMP
    props.last_modified_by = props.author = "desktop-env"
    props.revision = 1
    buf = io.BytesIO()
    document.save(buf)
    path.write_bytes(stable_zip(buf.getvalue()))
