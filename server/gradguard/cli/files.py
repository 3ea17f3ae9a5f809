"""Which files `gradguard check` reads: Python files and Jupyter notebooks (`.ipynb`, as Ruff
walks them by default) under the given paths that mention torch.

A walk inside a git repository skips what git ignores, as Ruff's does: the patterns of every
`.gitignore` from the repository's top (the folder holding `.git`) down, and `.git/info/exclude`,
read with pathspec's implementation of git's rules (a deeper file's pattern wins, `!` re-includes).
A file named on the command line is always checked, and so is all of a folder named there
that git ignores (as ripgrep and Ruff walk it).
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Callable, Iterator

from gradguard.source.files import NOTEBOOK_SUFFIX, is_regular_file

TYPE_CHECKING = False  # typing is not imported for this: a run the cache answers never needs it
if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

SOURCE_SUFFIXES = (".py", ".pyi", NOTEBOOK_SUFFIX)
SKIPPED_FOLDERS = frozenset({
    ".venv", "venv", ".git", ".hg", ".svn", "build", "dist", "__pycache__", "node_modules", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", ".cache",
    ".ipynb_checkpoints",  # Jupyter's autosaved copies of the notebooks beside it
})


class GitIgnored:
    """Whether git ignores a path, by the ignore files of the folders above it (each read once)."""

    def __init__(self) -> None:
        self._specs: dict[Path, GitIgnoreSpec | None] = {}
        self._tops: dict[Path, Path | None] = {}

    def __call__(self, path: Path, folder: bool = False) -> bool:
        path = Path(os.path.abspath(path))
        top = self._top(path.parent)
        if top is None:
            return False  # outside a repository, as git (and ripgrep) see it, nothing is ignored
        for holder in path.parents:  # the deepest decisive pattern wins
            spec = self._spec(holder, is_top=holder == top)
            if spec is not None:
                relative = path.relative_to(holder).as_posix() + ("/" if folder else "")
                include = spec.check_file(relative).include
                if include is not None:
                    return include
            if holder == top:
                break
        return False

    def _top(self, folder: Path) -> Path | None:
        """The repository's top at or above `folder` (None outside one)."""
        if folder not in self._tops:
            self._tops[folder] = folder if (folder / ".git").exists() else \
                None if folder.parent == folder else self._top(folder.parent)
        return self._tops[folder]

    def _spec(self, folder: Path, is_top: bool) -> GitIgnoreSpec | None:
        if folder not in self._specs:
            lines: list[str] = []
            for name in ((".gitignore", ".git/info/exclude") if is_top else (".gitignore",)):
                try:
                    lines += (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    pass
            if lines:
                from pathspec import GitIgnoreSpec  # 40 ms to import: only where a .gitignore is

                self._specs[folder] = GitIgnoreSpec.from_lines(lines)
            else:
                self._specs[folder] = None
        return self._specs[folder]


def _nothing_ignored(path: Path, folder: bool = False) -> bool:
    return False


def python_files(paths: list[Path], skip_folder: Callable[[Path], bool] = lambda folder: False,
                 respect_gitignore: bool = True) -> Iterator[Path]:
    """Python files and notebooks under `paths`, in a stable order.

    Explicit files are always included. Folders are walked, never descending into SKIPPED_FOLDERS,
    into a folder for which `skip_folder` (the configuration's `exclude`) is true, or (with
    `respect_gitignore`) into what git ignores.
    """
    ignored = GitIgnored() if respect_gitignore else _nothing_ignored
    for path in paths:
        if path.is_file():
            yield path
            continue
        if not path.is_dir():
            yield path  # reported as unreadable
            continue
        if skip_folder(path):
            continue
        walk_ignored = _nothing_ignored if ignored(path, True) else ignored
        for folder, subfolders, files in os.walk(path):
            subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS and not d.endswith(".egg-info")
                                   and not skip_folder(Path(folder) / d) and not walk_ignored(Path(folder) / d, True))
            for name in sorted(files):
                file = Path(folder) / name
                if name.endswith(SOURCE_SUFFIXES) and (is_regular_file(file) or os.path.islink(file)) \
                        and not walk_ignored(file):
                    yield file  # a FIFO or device is no source file; a broken or looping link is reported


def mentions_torch(raw: bytes) -> bool:
    """Files that never mention torch have nothing for gradguard to check (read undecoded: a
    file in another encoding that never mentions torch is no concern of gradguard's)."""
    return b"torch" in raw
