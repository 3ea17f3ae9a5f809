"""Python's module-path rules, without importing: the file that defines a dotted name, and a
relative import's name made absolute."""

from __future__ import annotations

import os
from pathlib import Path

from gradguard.analysis.libraries import Environment


class ModulePaths:
    """Places dotted names in files: the project's files first, then the installed libraries."""

    def __init__(self, environment: Environment) -> None:
        self._environment = environment
        self._packages: dict[Path, tuple[str, ...]] = {}  # folder -> its dotted package name
        self._folders: dict[str, Path] = {}  # file -> the real folder it is in
        self._roots: dict[str, Path] = {}  # file -> `package_root`

    def _folder(self, from_path: str | Path) -> Path:
        """The real folder of `from_path` (asked at every import the files read resolve)."""
        key = str(from_path)
        if key not in self._folders:
            self._folders[key] = Path(os.path.realpath(from_path)).parent
        return self._folders[key]

    def locate(self, from_path: Path, qualname: str) -> tuple[Path, str] | None:
        """(file defining it, name in that file) by Python's module-path rules, without importing:
        the project's files first, then the installed libraries."""
        level = len(qualname) - len(qualname.lstrip("."))
        parts = qualname.lstrip(".").split(".")
        if len(parts) < 1 or not parts[-1]:
            return None
        if level:
            base = self._folder(from_path)
            for _ in range(level - 1):
                base = base.parent
            roots = [base]
        else:
            key = str(from_path)
            if key not in self._roots:
                self._roots[key] = package_root(from_path)
            roots = [self._roots[key]]
        for root in roots:
            module_parts, attribute = parts[:-1], parts[-1]
            candidate = _module_file(root, module_parts)
            if candidate is not None:
                return candidate, attribute
        if not level:
            installed = self._environment.locate(parts[:-1])
            if installed is not None:
                return installed, parts[-1]
        return None

    def absolute(self, from_path: str, qualname: str) -> str:
        """A relative import's name made absolute (`.mlp.Mlp` in `timm/layers/__init__.py` →
        `timm.layers.mlp.Mlp`), so that it means the same in any file it flows to; unchanged when
        the file is not in a package deep enough."""
        level = len(qualname) - len(qualname.lstrip("."))
        if not level:
            return qualname
        folder = self._folder(from_path)
        if folder not in self._packages:
            parts: list[str] = []
            inside = folder
            while (inside / "__init__.py").is_file() and inside.parent != inside:
                parts.insert(0, inside.name)
                inside = inside.parent
            self._packages[folder] = tuple(parts)
        package = self._packages[folder]
        if level - 1 >= len(package):
            return qualname
        rest = qualname[level:]
        return ".".join([*package[:len(package) - (level - 1)], *([rest] if rest else [])])


def package_root(path: Path) -> Path:
    """The folder on `sys.path` for the package that holds `path` (the parent of its top package)."""
    folder = Path(os.path.realpath(path)).parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
    return folder


def _module_file(root: Path, parts: list[str]) -> Path | None:
    target = root.joinpath(*parts) if parts else root
    if parts and target.with_suffix(".py").is_file():
        return target.with_suffix(".py")
    if (target / "__init__.py").is_file():
        return target / "__init__.py"
    return None
