"""Settings from `[tool.gradguard]` in pyproject.toml (and, later, from editors): one typed shape."""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from gradguard.findings import Severity

TYPE_CHECKING = False  # typing is not imported for this: a run the cache answers never needs it
if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


class ConfigError(ValueError):
    """A setting that gradguard cannot use."""


@functools.cache
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


def _matching(prefixes: tuple[str, ...]) -> frozenset[str]:
    return frozenset(code for code in known_codes() if code.startswith(prefixes))


@dataclass(frozen=True)
class RuleSelection:
    """One source's choice of rules: the defaults, a configuration file, the command line."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def apply(self, enabled: frozenset[str]) -> frozenset[str]:
        """The rules enabled after this source, given those `enabled` before it, as Ruff resolves
        them: a `select` starts afresh (without one, the earlier sources' rules carry over), then
        each selector in order of specificity (`GG` before `GG0`… before `GG001`, a select before
        an ignore of the same), so the more specific one wins."""
        chosen: dict[str, bool] = {}
        selectors = [(p, True) for p in (*(self.select or ()), *self.extend_select)] + [(p, False) for p in self.ignore]
        for prefix, on in sorted(selectors, key=lambda selector: (len(selector[0]), not selector[1])):
            chosen.update(dict.fromkeys(_matching((prefix,)), on))
        carried = enabled if self.select is None else frozenset()
        return frozenset(c for c in carried if chosen.get(c, True)) | {c for c, on in chosen.items() if on}


DEFAULT_SELECT = ("GG0",)  # every rule but GG100 (unused noqa), off unless selected as Ruff's RUF100
DEFAULT_RULES = RuleSelection(select=DEFAULT_SELECT)


@dataclass(frozen=True)
class Settings:
    """Which rules run, where, and how loud they are."""

    select: tuple[str, ...] = DEFAULT_SELECT  # the enabled rules' codes (or prefixes), once every source is applied
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severities: tuple[tuple[str, Severity], ...] = ()
    exclude: tuple[str, ...] = ()  # relative to `root`
    extend_exclude: tuple[str, ...] = ()  # the command line's, relative to `cwd`
    root: Path | None = field(default=None, compare=False)
    cwd: Path | None = field(default=None, compare=False, repr=False)
    path: Path | None = field(default=None, compare=False, repr=False)  # the file they were read from

    def rules(self) -> tuple[str, ...]:
        """The codes of the enabled rules, sorted."""
        return tuple(sorted(_matching(self.select)))

    def enabled(self, code: str, filename: str) -> bool:
        """Whether `code` is reported in `filename` (prefixes match: `GG00` selects GG001…)."""
        if not code.startswith(self.select):
            return False
        if not self.per_file_ignores:
            return True
        relative = self.relative(filename)
        return not any(
            fnmatch.fnmatch(relative, pattern) and code.startswith(codes)
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
        """Whether `exclude` (relative to `root`) or the command line's patterns (relative to `cwd`)
        cover `path` (a file, or a folder when `folder`): gitignore's patterns (pathspec's `gitwildmatch`)."""
        if self.exclude and _covers(self._exclude_spec, _relative(path, self.root), folder):
            return True
        return bool(self.extend_exclude) and _covers(self._extend_exclude_spec, _relative(path, self.cwd), folder)

    @functools.cached_property
    def _exclude_spec(self) -> GitIgnoreSpec:
        return _gitignore_spec(self.exclude)

    @functools.cached_property
    def _extend_exclude_spec(self) -> GitIgnoreSpec:
        return _gitignore_spec(self.extend_exclude)

    def relative(self, filename: str) -> str:
        """`filename` relative to `root` (as given when it is outside, or without a root)."""
        return _relative(filename, self.root)

    def describe(self) -> list[str]:
        """These settings as TOML `key = value` lines, as `check --show-settings` prints them."""
        def table(pairs: Iterable[tuple[str, object]]) -> str:
            return "{" + ", ".join(f"{json.dumps(key)} = {json.dumps(value)}" for key, value in pairs) + "}"

        return [f"rules = {json.dumps(list(self.rules()))}",
                f"per-file-ignores = {table((glob, list(codes)) for glob, codes in self.per_file_ignores)}",
                f"severities = {table((code, level.value) for code, level in self.severities)}",
                f"exclude = {json.dumps(list(self.exclude))}",
                *([f"extend-exclude = {json.dumps(list(self.extend_exclude))}"] if self.extend_exclude else []),
                *([f"root = {json.dumps(str(self.root))}"] if self.root is not None else [])]

    def with_overrides(self, overrides: Overrides) -> Settings:
        """These settings with the command line's on top."""
        per_file = overrides.per_file_ignores if overrides.per_file_ignores is not None else self.per_file_ignores
        rules = overrides.rules()
        select = self.select if rules == RuleSelection() else tuple(sorted(rules.apply(_matching(self.select))))
        extend_exclude = (*(overrides.exclude or ()), *overrides.extend_exclude)
        return replace(self, select=select, per_file_ignores=per_file + tuple(overrides.extend_per_file_ignores),
                       exclude=self.exclude if overrides.exclude is None else (), extend_exclude=extend_exclude,
                       cwd=Path(os.path.realpath(Path.cwd())) if extend_exclude else None)


@dataclass(frozen=True)
class Overrides:
    """The command line's rule settings, applied on top of every project's (`per_file_ignores`
    replaces the projects' table; the `extend_` ones add to it)."""

    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] | None = None  # replaces the projects' `exclude`
    extend_exclude: tuple[str, ...] = ()

    def rules(self) -> RuleSelection:
        """The command line's choice of rules (`--select` starts afresh, as in Ruff)."""
        return RuleSelection(self.select or None, self.extend_select, self.ignore)


def _relative(path: str | Path, root: Path | None) -> str:
    """`path` relative to `root`, with `/` (as given when it is outside `root`, or without one)."""
    if root is not None:
        try:
            return Path(os.path.realpath(path)).relative_to(root).as_posix()
        except ValueError:
            pass
    return Path(path).as_posix()


def _covers(spec: GitIgnoreSpec, relative: str, folder: bool) -> bool:
    if relative in ("", "."):  # the root itself
        return False
    return spec.match_file(relative + "/" if folder else relative)


def _gitignore_spec(patterns: tuple[str, ...]) -> GitIgnoreSpec:
    from pathspec import GitIgnoreSpec  # 40 ms to import: only where `exclude` is set

    return GitIgnoreSpec.from_lines(patterns)


def _codes(value: object, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        check_codes(value, f"[tool.gradguard] {key}")
        return tuple(v.upper() for v in value)
    raise ConfigError(f"[tool.gradguard] {key} must be a list of rule codes")


def settings_from_table(table: dict, root: Path | None = None, path: Path | None = None) -> Settings:
    """Build `Settings` from a `[tool.gradguard]` table (or the same keys from an editor)."""
    known = {"select", "extend-select", "ignore", "per-file-ignores", "severities", "exclude"}
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
    rules = RuleSelection(_codes(table["select"], "select") if "select" in table else None,
                          _codes(table.get("extend-select", []), "extend-select"), _codes(table.get("ignore", []), "ignore"))
    return Settings(
        select=tuple(sorted(rules.apply(DEFAULT_RULES.apply(frozenset())))),
        per_file_ignores=per_file,
        severities=tuple(severities),
        exclude=tuple(exclude),
        root=root,
        path=path,
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


def configures_gradguard(pyproject: Path) -> bool:
    """Whether `pyproject` has a `[tool.gradguard]` table (`ConfigError` when it cannot be parsed)."""
    return tool_table(load_toml(pyproject), pyproject) is not None


def find_config(start: Path) -> Path | None:
    """The closest pyproject.toml at or above `start` that has a `[tool.gradguard]` table: one
    without it is passed over, as Ruff passes over a pyproject.toml without `[tool.ruff]`."""
    current = Path(os.path.realpath(start))
    if current.is_file():
        current = current.parent
    for folder in (current, *current.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and configures_gradguard(candidate):
            return candidate
    return None


def read_config(pyproject: Path | None, root: Path | None = None, inline: dict | None = None) -> Settings:
    """Settings from `pyproject`'s `[tool.gradguard]` (the defaults without a file), the keys of
    `inline` (`--config KEY=VALUE`) replacing its own, its globs relative to `root` (default: the
    file's folder); `ConfigError` when it has no such table."""
    if pyproject is None:
        return settings_from_table(inline, root=root) if inline else Settings()
    table = tool_table(load_toml(pyproject), pyproject)
    if table is None:
        raise ConfigError(f"{pyproject}: no [tool.gradguard] table")
    try:
        return settings_from_table({**table, **(inline or {})}, root=root or pyproject.parent, path=pyproject)
    except ConfigError as error:  # say which of the projects' files is wrong
        raise ConfigError(f"{pyproject}: {error}") from error


def load_toml(pyproject: Path) -> dict:
    """A parsed pyproject.toml; `ConfigError` naming it when it cannot be read or parsed."""
    try:
        return parse_toml(pyproject.read_text(encoding="utf-8"), str(pyproject))
    except OSError as error:
        raise ConfigError(f"{pyproject}: {error}") from error


def parse_toml(text: str, name: str) -> dict:
    """`text` parsed as TOML; `ConfigError` naming it (`name`) when it does not parse."""
    if sys.version_info >= (3, 11):  # imported here: its regular expressions cost a run without config 15 ms
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{name}: {error}") from error


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
    """Settings from the closest pyproject.toml with a `[tool.gradguard]` table, or the defaults."""
    return read_config(find_config(start))


class ProjectSettings:
    """The settings of each path: those of the closest pyproject.toml at or above it that has a
    `[tool.gradguard]` table, each file read once.

    `overrides` (the command line's) apply on top of every project's settings; with `config` (a
    pyproject.toml), every path gets its settings, its globs relative to the current folder (as
    Ruff's `--config`); `inline` keys (`--config KEY=VALUE`) replace a table's own; with
    `no_config`, every path gets the defaults.
    """

    def __init__(self, *, no_config: bool = False, config: Path | None = None, inline: dict | None = None,
                 overrides: Overrides = Overrides()) -> None:
        self._no_config = no_config
        self._config = None if config is None else Path(os.path.abspath(config))
        self._inline = inline or {}
        self._overrides = overrides
        self._configs: dict[Path, Path | None] = {}  # folder → closest pyproject.toml with the table
        self._settings: dict[Path | None, Settings] = {}  # pyproject.toml → its settings

    def for_path(self, path: Path) -> Settings:
        """The settings for a file or folder."""
        config = None if self._no_config else self._config or self._closest(path)
        if config not in self._settings:
            here = config is None or config == self._config  # globs relative to the current folder
            base = read_config(config, Path(os.path.realpath(Path.cwd())) if here else None, self._inline)
            self._settings[config] = base.with_overrides(self._overrides)
        return self._settings[config]

    def _closest(self, path: Path) -> Path | None:
        folder = Path(os.path.realpath(path))
        if not folder.is_dir():
            folder = folder.parent
        walked = []
        found: Path | None = None
        for candidate in (folder, *folder.parents):
            if candidate in self._configs:
                found = self._configs[candidate]
                break
            walked.append(candidate)
            if (candidate / "pyproject.toml").is_file() and configures_gradguard(candidate / "pyproject.toml"):
                found = candidate / "pyproject.toml"
                break
        for candidate in walked:
            self._configs[candidate] = found
        return found
