"""The project's interpreter: the Python whose torch `verify` runs the user's code under, and
whose installed libraries (timm, torchvision, transformers) `check` reads.

gradguard itself may run anywhere (pipx, `uv tool`, a venv of its own, without torch); the
project's interpreter is found, in this order:

1. `--python PATH` (the editor: `gradguard.interpreter`), an executable or an environment's folder;
2. `VIRTUAL_ENV`, the activated virtual environment, unless it is the environment gradguard itself
   runs from (pre-commit's hook environment, which pre-commit activates; pipx's, `uv tool`'s):
   that one comes after the project's `.venv`;
3. a `.venv` in the file's folder or above it, up to the project's root (the folder holding
   `pyproject.toml` or `.git`);
4. `CONDA_PREFIX`, the activated conda environment;
5. the editor's interpreter (VS Code: the Python extension's active one);
6. the interpreter gradguard runs under, when torch is installed there (`pip install
   gradguard[verify]` into the project's own environment);
7. `python3` on `PATH`.

Only an interpreter that exists is taken; whether it has torch is the child's to say.

Where its installed libraries are (`site_packages`) is read from files (a venv's `pyvenv.cfg`, a
conda prefix, an installation's `lib/pythonX.Y`): no interpreter is run for it, so `check` on a
cloned repository runs none of its code.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


class InterpreterError(Exception):
    """No interpreter can be found, or the one named does not exist."""


@dataclass(frozen=True)
class Interpreter:
    """An executable and where it was found (`--python`, `VIRTUAL_ENV`, ...), as messages name it."""

    executable: str
    source: str

    def describe(self) -> str:
        return f"{self.executable} (from {self.source})"


def _in_environment(folder: Path) -> Path | None:
    """The Python of a virtual or conda environment's folder, if it has one."""
    for name in ("bin/python", "bin/python3", "Scripts/python.exe"):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def named_interpreter(path: str, source: str = "--python") -> Interpreter:
    """The interpreter at `path` (an executable, a name on PATH, or an environment's folder)."""
    given = Path(os.path.expanduser(path))
    if given.is_dir():
        found = _in_environment(given)
        if found is None:
            raise InterpreterError(f"{source} {path}: the folder holds no bin/python")
        return Interpreter(str(found.absolute()), source)
    if given.is_file():
        if not os.access(given, os.X_OK):
            raise InterpreterError(f"{source} {path}: not executable")
        return Interpreter(str(given.absolute()), source)
    on_path = _which(path) if os.sep not in path else None
    if on_path is None:
        raise InterpreterError(f"{source} {path}: no such interpreter")
    return Interpreter(on_path, source)


def _folder_of(path: Path) -> Path:
    """`path` itself when it is a folder, else the folder that holds it."""
    return path.absolute() if path.is_dir() else path.absolute().parent


def project_root(path: Path) -> Path | None:
    """The nearest folder at or above `path` (a file's folder, or a folder) holding `pyproject.toml` or `.git`."""
    folder = _folder_of(path)
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file() or (candidate / ".git").exists():
            return candidate
    return None


def _local_venv(path: Path) -> Path | None:
    """`.venv/bin/python` in `path` (a file's folder, or a folder) or a folder above it, up to its
    project's root."""
    folder = _folder_of(path)
    root = project_root(path)
    for candidate in (folder, *folder.parents):
        found = _in_environment(candidate / ".venv") if (candidate / ".venv").is_dir() else None
        if found is not None:
            return found
        if candidate == root:
            return None
    return None


def _which(name: str, path: str | None = None) -> str | None:
    """`name` found on `path` (default: `PATH`)."""
    import shutil  # it imports bz2 and lzma: not for a cached `check`'s start, which finds an interpreter first

    return shutil.which(name, path=path)


def _torch_here() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def find_interpreter(path: Path, python: str | None = None, editor: str | None = None,
                     environ: Mapping[str, str] | None = None, named_by: str = "--python") -> Interpreter:
    """The interpreter of the project that holds `path`, a file or a folder (see the module's
    docstring for the order); `named_by` says where `python` came from (`--python`, the editor's
    `gradguard.interpreter`)."""
    environ = os.environ if environ is None else environ
    if python:
        return named_interpreter(python, named_by)
    activated = _activated(environ)
    if activated is not None and not _is_own_environment(activated):
        return activated
    if (found := _local_venv(path)) is not None:
        return Interpreter(str(found), f".venv of {found.parent.parent.parent}")
    if activated is not None:
        return activated
    if environ.get("CONDA_PREFIX") and (found := _in_environment(Path(environ["CONDA_PREFIX"]))) is not None:
        return Interpreter(str(found), "CONDA_PREFIX")
    if editor:
        try:
            return named_interpreter(editor, "the editor's interpreter")
        except InterpreterError:
            pass
    if sys.executable and _torch_here():
        return Interpreter(sys.executable, "gradguard's own interpreter, which has torch")
    on_path = _which("python3", environ.get("PATH"))
    if on_path is None:
        raise InterpreterError("no Python interpreter found (no --python, VIRTUAL_ENV, .venv, CONDA_PREFIX "
                               "or python3 on PATH)")
    return Interpreter(on_path, "python3 on PATH")


def _activated(environ: Mapping[str, str]) -> Interpreter | None:
    """The Python of the activated virtual environment (`VIRTUAL_ENV`), if it has one."""
    folder = environ.get("VIRTUAL_ENV")
    found = _in_environment(Path(folder)) if folder else None
    return None if found is None else Interpreter(str(found), "VIRTUAL_ENV")


def _is_own_environment(interpreter: Interpreter) -> bool:
    """Whether `interpreter` belongs to the environment gradguard runs from (a tool's own
    environment, such as the one pre-commit activates for its hook), read from paths, never run."""
    prefix = Path(interpreter.executable).parent.parent
    return os.path.realpath(prefix) == os.path.realpath(sys.prefix)


def runs_here(executable: str) -> bool:
    """Whether `executable` is the interpreter running gradguard (another name for it in the same
    environment included: `.venv/bin/python3` beside `.venv/bin/python`)."""
    path = Path(executable).absolute()
    if path == Path(sys.executable).absolute():
        return True
    try:
        return path.parent.parent == Path(sys.prefix).absolute() and os.path.samefile(path, sys.executable)
    except OSError:
        return False


def site_packages(python: str) -> list[Path]:
    """The `site-packages` folders that `python` (an executable, or an environment's folder)
    imports installed packages from, read from files, never by running it: a virtual environment's
    (`pyvenv.cfg`), a conda prefix's, else those of the installation its executable (symbolic links
    followed) belongs to."""
    given = Path(os.path.expanduser(python)).absolute()
    prefix = given if given.is_dir() else given.parent.parent
    config = _pyvenv_cfg(prefix / "pyvenv.cfg")
    if config is not None:
        version = config.get("version_info") or config.get("version")
        folders = _site_folders(prefix, version)
        if config.get("include-system-site-packages", "").lower() == "true" and config.get("home"):
            folders += _site_folders(Path(config["home"]).parent, version)
        return folders
    if (prefix / "conda-meta").is_dir() or given.is_dir():
        return _site_folders(prefix, None)
    return _installation_folders(Path(os.path.realpath(given)))


def _installation_folders(executable: Path) -> list[Path]:
    """The `site-packages` of the installation holding `executable` (`PREFIX/bin/pythonX.Y`), as its
    `site` module adds them: the user's (`~/.local/lib/pythonX.Y/site-packages`, when the version
    is in the executable's name), then the prefix's, Debian's `dist-packages` included."""
    prefix = executable.parent.parent
    minor = re.fullmatch(r"python(\d+\.\d+)", executable.name)
    user = Path(os.environ.get("PYTHONUSERBASE") or "~/.local").expanduser() / f"lib/python{minor[1]}/site-packages" \
        if minor else None
    pattern = f"python{minor[1]}" if minor else "python3*"
    found = [folder for place in (f"lib/{pattern}/site-packages", f"local/lib/{pattern}/dist-packages",
                                  f"lib/{pattern}/dist-packages", "lib/python3/dist-packages")
             for folder in sorted(prefix.glob(place)) if folder.is_dir()]
    return ([user] if user is not None and user.is_dir() else []) + found


def _pyvenv_cfg(path: Path) -> dict[str, str] | None:
    """A virtual environment's `pyvenv.cfg` (`key = value` lines), or None without one."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return {key.strip().lower(): value.strip() for key, sep, value in (line.partition("=") for line in lines) if sep}


def _site_folders(prefix: Path, version: str | None) -> list[Path]:
    """`lib/pythonX.Y/site-packages` under `prefix` (every `python3*` when the version is not known),
    and Windows' `Lib/site-packages`, those that exist."""
    minor = ".".join(version.split(".")[:2]) if version else None
    pattern = f"python{minor}" if minor else "python3*"
    found = sorted(p for p in prefix.glob(f"lib/{pattern}/site-packages") if p.is_dir())
    return found + ([prefix / "Lib" / "site-packages"] if (prefix / "Lib" / "site-packages").is_dir() else [])
