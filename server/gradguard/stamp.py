"""A stamp of gradguard's own code and data, for the caches that hold what it computed."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache


@lru_cache(maxsize=1)
def source_stamp() -> str:
    """Changes whenever gradguard's own code or data changes (an editable install included):
    the name, modification time and size of each of its `.py` and `.json` files."""
    package = os.path.dirname(os.path.realpath(__file__))
    stamps = []
    for folder, subfolders, files in os.walk(package):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".json")):
                status = os.stat(os.path.join(folder, name))
                stamps.append(f"{os.path.relpath(os.path.join(folder, name), package)}:{status.st_mtime_ns}:{status.st_size}")
    return hashlib.sha256("\n".join(sorted(stamps)).encode()).hexdigest()
