"""The runtime cache: the one folder the project owns for installed runtimes (and the Node some of them need),
never in git. Its own module so that a runtime's home (home.py) and its install (install.py) both find it
without importing each other."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("COMPACTION_HARNESS_RUNTIMES") or Path.home() / ".cache/compaction-harness/runtimes")
