"""Which files `gradguard check` reads: Python files under the given paths that mention torch."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

SKIPPED_FOLDERS = frozenset({
    ".venv", "venv", ".git", ".hg", ".svn", "build", "dist", "__pycache__", "node_modules", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", ".cache",
})


def python_files(paths: list[Path]) -> Iterator[Path]:
    """Python files under `paths` (explicit files are always included), in a stable order."""
    for path in paths:
        if path.is_file():
            yield path
            continue
        if not path.is_dir():
            yield path  # reported as unreadable
            continue
        for folder, subfolders, files in os.walk(path):
            subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS and not d.endswith(".egg-info"))
            for name in sorted(files):
                if name.endswith((".py", ".pyi")):
                    yield Path(folder) / name


def mentions_torch(text: str) -> bool:
    """Files that never mention torch have nothing for gradguard to check."""
    return "torch" in text
