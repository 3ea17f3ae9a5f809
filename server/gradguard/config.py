"""Settings from `[tool.gradguard]` in pyproject.toml (and, later, from editors): one typed shape."""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gradguard.findings import Severity


class ConfigError(ValueError):
    """A setting that gradguard cannot use."""


def known_codes() -> tuple[str, ...]:
    """Every rule code, sorted, from the rule modules' names (`rules/gg001_….py`): no rule is imported."""
    folder = Path(__file__).with_name("rules")
    return tuple(sorted(f.name.split("_", 1)[0].upper() for f in folder.glob("gg[0-9][0-9][0-9]_*.py")))


def check_codes(codes: tuple[str, ...] | list[str], where: str) -> None:
    """Refuse a code that is neither a rule's code nor a prefix of one (`GG`, `GG0`, `GG00`, `GG001`)."""
    if not codes:
        return
    known = known_codes()
    for code in codes:
        if not code or not any(k.startswith(code.upper()) for k in known):
            raise ConfigError(f"unknown rule code {code!r} in {where} (known codes: {', '.join(known)})")


@dataclass(frozen=True)
class Settings:
    """Which rules run, where, and how loud they are."""

    select: tuple[str, ...] = ("GG",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severities: tuple[tuple[str, Severity], ...] = ()
    exclude: tuple[str, ...] = ()
    root: Path | None = field(default=None, compare=False)

    def enabled(self, code: str, filename: str) -> bool:
        """Whether `code` is reported in `filename` (prefixes match: `GG00` selects GG001…)."""
        if not any(code.startswith(prefix) for prefix in self.select):
            return False
        if any(code.startswith(prefix) for prefix in self.ignore):
            return False
        if not self.per_file_ignores:
            return True
        relative = self.relative(filename)
        return not any(
            fnmatch.fnmatch(relative, pattern) and any(code.startswith(p) for p in codes)
            for pattern, codes in self.per_file_ignores
        )

    def severity(self, code: str, default: Severity) -> Severity:
        """The configured severity of `code`: the longest matching code or prefix wins."""
        best: tuple[str, Severity] | None = None
        for prefix, level in self.severities:
            if code.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, level)
        return default if best is None else best[1]

    def excluded(self, path: str | Path, *, folder: bool = False) -> bool:
        """Whether `exclude` covers `path` (a file, or a folder when `folder`), gitignore-like.

        A pattern without a `/` matches any one component of the path relative to `root` (a folder
        name or the file name); one with a `/` is matched (fnmatch) against that relative path and
        each folder above it. A trailing `/` restricts a pattern to folders; a leading `/` or `./`
        only anchors it to `root`.
        """
        if not self.exclude:
            return False
        parts = PurePosixPath(self.relative(str(path))).parts
        if not parts:  # root itself
            return False
        return any(_exclude_matches(pattern, parts, folder) for pattern in self.exclude)

    def relative(self, filename: str) -> str:
        path = Path(filename)
        if self.root is not None:
            try:
                return Path(os.path.realpath(path)).relative_to(self.root).as_posix()
            except ValueError:
                pass
        return path.as_posix()

    def with_overrides(self, overrides: Overrides) -> Settings:
        """These settings with the command line's on top."""
        per_file = overrides.per_file_ignores if overrides.per_file_ignores is not None else self.per_file_ignores
        return Settings(
            (tuple(overrides.select) if overrides.select else self.select) + tuple(overrides.extend_select),
            self.ignore + tuple(overrides.ignore),
            per_file + tuple(overrides.extend_per_file_ignores),
            self.severities,
            self.exclude,
            self.root,
        )


@dataclass(frozen=True)
class Overrides:
    """The command line's rule settings, applied on top of every project's (`per_file_ignores`
    replaces the projects' table; the `extend_` ones add to it)."""

    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()


def _exclude_matches(pattern: str, parts: tuple[str, ...], folder: bool) -> bool:
    folders_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    anchored = "/" in pattern
    pattern = pattern.removeprefix("./").lstrip("/")
    if not pattern:
        return False
    # Candidates: each folder above the path, then the path itself (unless a folders-only pattern meets a file).
    last = len(parts) if folder or not folders_only else len(parts) - 1
    for end in range(1, last + 1):
        candidate = "/".join(parts[:end]) if anchored else parts[end - 1]
        if fnmatch.fnmatch(candidate, pattern):
            return True
    return False


def _codes(value: object, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        check_codes(value, f"[tool.gradguard] {key}")
        return tuple(v.upper() for v in value)
    raise ConfigError(f"[tool.gradguard] {key} must be a list of rule codes")


def settings_from_table(table: dict, root: Path | None = None) -> Settings:
    """Build `Settings` from a `[tool.gradguard]` table (or the same keys from an editor)."""
    known = {"select", "ignore", "per-file-ignores", "severities", "exclude"}
    unknown = set(table) - known - {"verify"}
    if unknown:
        raise ConfigError(f"unknown [tool.gradguard] keys: {', '.join(sorted(unknown))}")
    for key, kind in (("severities", dict), ("per-file-ignores", dict)):
        if key in table and not isinstance(table[key], kind):
            raise ConfigError(f"[tool.gradguard] {key} must be a table")
    exclude = table.get("exclude", [])
    if not (isinstance(exclude, list) and all(isinstance(p, str) for p in exclude)):
        raise ConfigError('[tool.gradguard] exclude must be a list of globs, such as ["legacy", "*_pb2.py"]')
    severities = []
    for code, level in dict(table.get("severities", {})).items():
        check_codes([code], "[tool.gradguard.severities]")
        try:
            severities.append((code.upper(), Severity(level)))
        except (ValueError, TypeError) as error:
            raise ConfigError(f"[tool.gradguard.severities] {code}: use error, warning or info") from error
    per_file = tuple((pattern, _codes(codes, f"per-file-ignores {pattern!r}"))
                     for pattern, codes in dict(table.get("per-file-ignores", {})).items())
    return Settings(
        select=_codes(table.get("select", ["GG"]), "select"),
        ignore=_codes(table.get("ignore", []), "ignore"),
        per_file_ignores=per_file,
        severities=tuple(severities),
        exclude=tuple(exclude),
        root=root,
    )


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start`."""
    current = Path(os.path.realpath(start))
    if current.is_file():
        current = current.parent
    for folder in (current, *current.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_pyproject(pyproject: Path | None) -> Settings:
    """Settings from `pyproject`'s `[tool.gradguard]` (the defaults when there is no file or no table)."""
    if pyproject is None:
        return Settings()
    table = tool_table(load_toml(pyproject), pyproject)
    if table is None:
        return Settings(root=pyproject.parent)
    try:
        return settings_from_table(table, root=pyproject.parent)
    except ConfigError as error:  # say which of the projects' files is wrong
        raise ConfigError(f"{pyproject}: {error}") from error


def load_toml(pyproject: Path) -> dict:
    """A parsed pyproject.toml; `ConfigError` naming it when it cannot be read or parsed."""
    if sys.version_info >= (3, 11):  # imported here: its regular expressions cost a run without config 15 ms
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: {error}") from error


def tool_table(data: dict, pyproject: Path) -> dict | None:
    """`[tool.gradguard]` of a parsed pyproject.toml (None without one); `ConfigError` when
    `tool` or `tool.gradguard` is not a table."""
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{pyproject}: `tool` must be a table, not {type(tool).__name__}")
    table = tool.get("gradguard")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: `tool.gradguard` must be a table, not {type(table).__name__}")
    return table


def load_settings(start: Path) -> Settings:
    """Settings from the nearest pyproject.toml's `[tool.gradguard]`, or the defaults."""
    return read_pyproject(find_pyproject(start))


class ProjectSettings:
    """The settings of each path: those of its nearest pyproject.toml, each file read once.

    `overrides` (the command line's) apply on top of every project's settings;
    with `no_config`, every path gets the defaults.
    """

    def __init__(self, *, no_config: bool = False, overrides: Overrides = Overrides()) -> None:
        self._no_config = no_config
        self._overrides = overrides
        self._pyprojects: dict[Path, Path | None] = {}  # folder → nearest pyproject.toml
        self._settings: dict[Path | None, Settings] = {}  # pyproject.toml → its settings

    def for_path(self, path: Path) -> Settings:
        """The settings for a file or folder."""
        pyproject = None if self._no_config else self._nearest(path)
        if pyproject not in self._settings:
            base = Settings() if pyproject is None else read_pyproject(pyproject)
            self._settings[pyproject] = base.with_overrides(self._overrides)
        return self._settings[pyproject]

    def _nearest(self, path: Path) -> Path | None:
        folder = Path(os.path.realpath(path))
        if not folder.is_dir():
            folder = folder.parent
        walked = []
        found: Path | None = None
        for candidate in (folder, *folder.parents):
            if candidate in self._pyprojects:
                found = self._pyprojects[candidate]
                break
            walked.append(candidate)
            if (candidate / "pyproject.toml").is_file():
                found = candidate / "pyproject.toml"
                break
        for candidate in walked:
            self._pyprojects[candidate] = found
        return found
