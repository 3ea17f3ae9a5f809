"""What the editor says: the rule settings (the CLI's `[tool.gradguard]` keys) and what
`gradguard.verify` may do, read once per change of settings into one frozen `EditorSettings`.

They come from `initializationOptions`, `workspace/configuration` (section "gradguard") or
`workspace/didChangeConfiguration`, as a table of the CLI's keys, optionally under "gradguard";
`python` names the project's interpreter, whose installed libraries are read (the CLI's `--python`);
without it, in a trusted workspace, the interpreter verify runs (`interpreter`, else `activeInterpreter`)
is that one too: finding its libraries may run it (the server's `environment_python` finds an
environment for the others, reading its files).
VS Code sends `workspace.isTrusted` as `trusted`; other editors set `"trusted": true`
themselves; `verify.device` and `verify.timeout` (dotted or nested) override
`[tool.gradguard.verify]`. `interpreter` is the project's interpreter the user named (as the CLI's
`--python`), `activeInterpreter` the editor's own choice of one (VS Code: the Python extension's
active interpreter), which comes after the environment's in `project_python.py`'s order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from gradguard.config import ConfigError, ProjectSettings, Settings, settings_from_table
from gradguard.verify.settings import DEVICES

RULE_KEYS = ("select", "ignore", "per-file-ignores", "severities", "exclude")


@dataclass(frozen=True)
class EditorVerify:
    """What the editor says about running code: whether the workspace is trusted, device, timeout,
    and the token it presents (needed over TCP, see `lsp/verify_command.py`)."""

    trusted: bool = False
    device: str | None = None
    timeout: float | None = None
    token: str | None = field(default=None, repr=False)
    interpreter: str | None = None  # the project's interpreter the user named (the CLI's --python)
    active_interpreter: str | None = None  # the editor's own choice (VS Code: the Python extension's)


@dataclass(frozen=True)
class EditorSettings:
    """The editor's settings: `rules` when it sent any of the CLI's keys (else each file's
    pyproject.toml decides), and `verify`."""

    rules: Settings | None = None
    verify: EditorVerify = field(default_factory=EditorVerify)
    python: str | None = None  # the project's interpreter, whose installed libraries are read

    def for_path(self, path: Path, projects: ProjectSettings, workspace_root: Path | None) -> Settings:
        """The settings of the file at `path`: the editor's, relative to its project's root (or the
        workspace's), else its pyproject.toml's."""
        project = projects.for_path(path)
        if self.rules is None:
            return project
        return replace(self.rules, root=project.root or workspace_root)


def read_editor_settings(options: object, previous: EditorSettings) -> tuple[EditorSettings, ConfigError | None]:
    """The settings in `options` (`previous` when it holds no table), and the error in its rule
    settings, if any: those then stay as they were."""
    table = options.get("gradguard", options) if isinstance(options, dict) else None
    if not isinstance(table, dict):
        return previous, None
    rules = {k: v for k, v in table.items() if k in RULE_KEYS}
    verify = _verify(table)
    python = table["python"] if isinstance(table.get("python"), str) and table["python"] else None
    if python is None and verify.trusted:
        python = verify.interpreter or verify.active_interpreter
    try:
        return EditorSettings(settings_from_table(rules) if rules else None, verify, python), None
    except ConfigError as error:
        return replace(previous, verify=verify, python=python), error


def _verify(table: dict) -> EditorVerify:
    nested = table.get("verify") if isinstance(table.get("verify"), dict) else {}
    device = table.get("verify.device", nested.get("device"))
    timeout = table.get("verify.timeout", nested.get("timeout"))
    def path(key: str) -> str | None:
        value = table.get(key)
        return value if isinstance(value, str) and value.strip() else None

    return EditorVerify(
        trusted=table.get("trusted") is True,
        interpreter=path("interpreter"),
        active_interpreter=path("activeInterpreter"),
        token=table["token"] if isinstance(table.get("token"), str) else None,
        device=device if device in DEVICES else None,
        timeout=float(timeout) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
        and math.isfinite(timeout) and timeout > 0 else None)
