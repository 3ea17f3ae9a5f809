"""Settings from `[tool.gradguard]` in pyproject.toml (and, later, from editors): one typed shape."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gradguard.findings import Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class ConfigError(ValueError):
    """A setting that gradguard cannot use."""


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
        relative = self.relative(filename)
        return not any(
            fnmatch.fnmatch(relative, pattern) and any(code.startswith(p) for p in codes)
            for pattern, codes in self.per_file_ignores
        )

    def severity(self, code: str, default: Severity) -> Severity:
        return dict(self.severities).get(code, default)

    def relative(self, filename: str) -> str:
        path = Path(filename)
        if self.root is not None:
            try:
                return path.resolve().relative_to(self.root).as_posix()
            except ValueError:
                pass
        return path.as_posix()

    def with_overrides(self, select: list[str] | None, ignore: list[str] | None) -> Settings:
        return Settings(
            tuple(select) if select else self.select,
            self.ignore + tuple(ignore or ()),
            self.per_file_ignores,
            self.severities,
            self.exclude,
            self.root,
        )


def _codes(value: object, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value.upper(),)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.upper() for v in value)
    raise ConfigError(f"[tool.gradguard] {key} must be a list of rule codes")


def settings_from_table(table: dict, root: Path | None = None) -> Settings:
    """Build `Settings` from a `[tool.gradguard]` table (or the same keys from an editor)."""
    known = {"select", "ignore", "per-file-ignores", "severities", "exclude"}
    unknown = set(table) - known - {"verify"}
    if unknown:
        raise ConfigError(f"unknown [tool.gradguard] keys: {', '.join(sorted(unknown))}")
    for key, kind in (("severities", dict), ("per-file-ignores", dict), ("exclude", list)):
        if key in table and not isinstance(table[key], kind):
            raise ConfigError(f"[tool.gradguard] {key} must be a {'table' if kind is dict else 'list'}")
    severities = []
    for code, level in dict(table.get("severities", {})).items():
        try:
            severities.append((code.upper(), Severity(level)))
        except (ValueError, TypeError) as error:
            raise ConfigError(f"[tool.gradguard.severities] {code}: use error, warning or info") from error
    per_file = tuple((pattern, _codes(codes, "per-file-ignores"))
                     for pattern, codes in dict(table.get("per-file-ignores", {})).items())
    return Settings(
        select=_codes(table.get("select", ["GG"]), "select"),
        ignore=_codes(table.get("ignore", []), "ignore"),
        per_file_ignores=per_file,
        severities=tuple(severities),
        exclude=tuple(str(p) for p in table.get("exclude", [])),
        root=root,
    )


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start`."""
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for folder in (current, *current.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_settings(start: Path) -> Settings:
    """Settings from the nearest pyproject.toml's `[tool.gradguard]`, or the defaults."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        return Settings()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: {error}") from error
    table = data.get("tool", {}).get("gradguard")
    if table is None:
        return Settings(root=pyproject.parent)
    return settings_from_table(table, root=pyproject.parent)
