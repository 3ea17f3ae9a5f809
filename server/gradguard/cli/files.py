"""Which files `gradguard check` reads: Python files under the given paths that mention torch."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

from gradguard.source.files import is_regular_file

SKIPPED_FOLDERS = frozenset({
    ".venv", "venv", ".git", ".hg", ".svn", "build", "dist", "__pycache__", "node_modules", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", ".cache",
})


def python_files(paths: list[Path], skip_folder: Callable[[Path], bool] = lambda folder: False) -> Iterator[Path]:
    """Python files under `paths`, in a stable order.

    Explicit files are always included. Folders are walked, never descending into SKIPPED_FOLDERS
    or into a folder for which `skip_folder` (the configuration's `exclude`) is true.
    """
    for path in paths:
        if path.is_file():
            yield path
            continue
        if not path.is_dir():
            yield path  # reported as unreadable
            continue
        if skip_folder(path):
            continue
        for folder, subfolders, files in os.walk(path):
            subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS and not d.endswith(".egg-info")
                                   and not skip_folder(Path(folder) / d))
            for name in sorted(files):
                file = Path(folder) / name
                if name.endswith((".py", ".pyi")) and (is_regular_file(file) or os.path.islink(file)):
                    yield file  # a FIFO or device is no source file; a broken or looping link is reported


def mentions_torch(raw: bytes) -> bool:
    """Files that never mention torch have nothing for gradguard to check (read undecoded: a
    file in another encoding that never mentions torch is no concern of gradguard's)."""
    return b"torch" in raw
