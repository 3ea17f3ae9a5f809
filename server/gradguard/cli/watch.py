"""`gradguard check --watch`: check once, then again whenever a Python file, a notebook or a
`pyproject.toml` under the paths changes, as `ruff check --watch` does (watchfiles: the same Rust
`notify` crate Ruff uses). Each run reads the settings afresh; Ctrl-C stops it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

WATCHED_SUFFIXES = (".py", ".pyi", ".ipynb", ".toml")  # Ruff's: sources, notebooks and configuration
WAKE_MS = 200  # how often the watcher wakes when nothing changed: the first wake runs the first check


def notify(message: str) -> None:
    """A line for the user, timestamped as Ruff's watch mode prints them."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def _clear_screen() -> None:
    if sys.stdout.isatty():
        print("\x1b[2J\x1b[H", end="")


def watch(paths: list[Path], check_once: Callable[[], None]) -> int:
    """Run `check_once` now and after each change under `paths`; returns only when interrupted (130)."""
    from watchfiles import DefaultFilter
    from watchfiles import watch as changes

    class Sources(DefaultFilter):
        def __call__(self, change: object, path: str) -> bool:
            return path.endswith(WATCHED_SUFFIXES) and super().__call__(change, path)

    started = False  # the watcher runs before the first check: no change made meanwhile is missed
    for changed in changes(*paths, watch_filter=Sources(), yield_on_timeout=True, rust_timeout=WAKE_MS):
        if started and not changed:
            continue
        _clear_screen()
        notify("File change detected..." if started else "Starting gradguard in watch mode...")
        started = True
        check_once()
    return 130
