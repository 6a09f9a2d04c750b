"""The short content hash that keys the image's layers, locks and caches."""
from __future__ import annotations

import hashlib
import json


def json_digest(payload) -> str:
    """First 16 hex digits of the SHA-256 of ``payload`` as canonical JSON (keys sorted)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
