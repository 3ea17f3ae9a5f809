"""`gradguard.printDebugInformation`: what the server runs with, as text for a bug report (Ruff's
`ruff.printDebugInformation`): its interpreter and the versions of what it uses, the project's
interpreter and its torch, the editor's settings, the resolved rule settings of each workspace
folder, and the documents open."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, fields
from importlib import metadata
from pathlib import Path

import gradguard
from gradguard.config import Settings
from gradguard.lsp.settings import EditorSettings

COMMAND = "gradguard.printDebugInformation"
PACKAGES = ("gradguard", "pygls", "lsprotocol", "libcst", "jedi", "torch")


@dataclass(frozen=True)
class Snapshot:
    """What the text reports, read from the server at one moment."""

    client: str
    position_encoding: str
    pulls_diagnostics: bool
    project_python: str | None
    project_search_path: tuple[Path, ...]
    editor: EditorSettings
    folders: dict[str, Settings]  # workspace folder -> its resolved settings
    documents: dict[str, int | None]  # uri -> version
    notebooks: dict[str, int]  # uri -> the server's count of its changes


def version_in(name: str, search_path: tuple[Path, ...] | None = None) -> str:
    """The installed version of distribution `name` (in the folders of `search_path`, else here)."""
    found = metadata.distributions(name=name, path=[str(p) for p in search_path]) \
        if search_path is not None else metadata.distributions(name=name)
    return next((dist.version for dist in found), "not installed")


def settings_lines(settings: Settings) -> list[str]:
    """Each field of `settings` as `name = value`."""
    return [f"    {field.name.replace('_', '-')} = {getattr(settings, field.name)!r}" for field in fields(settings)]


def debug_information(snapshot: Snapshot) -> str:
    """The report, one section after another."""
    editor = snapshot.editor
    lines = [
        f"gradguard {version_in('gradguard')} language server, from {Path(gradguard.__file__).parent}",
        f"Server's Python: {sys.executable} ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.platform()})",
        "Versions: " + ", ".join(f"{name} {version_in(name)}" for name in PACKAGES),
        f"Client: {snapshot.client}; position encoding {snapshot.position_encoding}; diagnostics "
        f"{'pulled' if snapshot.pulls_diagnostics else 'pushed'}",
        f"Project's interpreter (its libraries are read): {snapshot.project_python or 'the server’s own'}; "
        f"torch there: {version_in('torch', snapshot.project_search_path)}",
        f"Editor settings: rules {'from the editor' if editor.rules is not None else 'from pyproject.toml'}; "
        f"trusted {editor.verify.trusted}; interpreter {editor.verify.interpreter}; "
        f"active interpreter {editor.verify.active_interpreter}; verify device {editor.verify.device}, "
        f"timeout {editor.verify.timeout}",
    ]
    for folder, settings in snapshot.folders.items() or {"(no workspace folder)": None}.items():
        lines.append(f"Workspace folder {folder}:")
        lines += settings_lines(settings) if settings is not None else []
    lines.append(f"Open documents ({len(snapshot.documents)}):")
    lines += [f"    {uri} (version {version})" for uri, version in sorted(snapshot.documents.items())]
    lines.append(f"Open notebooks ({len(snapshot.notebooks)}):")
    lines += [f"    {uri} ({changes} changes)" for uri, changes in sorted(snapshot.notebooks.items())]
    return "\n".join(lines)
