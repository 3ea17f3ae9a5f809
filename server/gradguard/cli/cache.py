"""The result cache of `gradguard check`: findings per file, keyed by content hashes.

An entry holds a file's findings with the hash of its text, of the settings it was checked
with, of gradguard itself, and of every file its analysis read from the project (the imports it
followed). It is used only when all of them are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable, Iterable

from gradguard import PYTHON_VARIABLE, __version__
from gradguard.findings import Applicability, Edit, Finding, Fix, Position, Related, Severity, Span
from gradguard.source.files import NOTEBOOK_MAX_BYTES, read_bytes
from gradguard.stamp import source_stamp


def digest(text: str) -> str:
    """A stable hash of a file's text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_digest(path: str) -> str | None:
    """A stable hash of a file's bytes (None when it cannot be read)."""
    try:
        return hashlib.sha256(read_bytes(Path(path), NOTEBOOK_MAX_BYTES)).hexdigest()
    except OSError:
        return None


class Cache:
    """Findings of unchanged files, stored as one JSON file per source file under `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # the op table (ops.json) is in the stamp; the interpreter whose libraries are read, too
        self.tool = digest(f"{__version__}:{source_stamp()}:{os.environ.get(PYTHON_VARIABLE, '')}")
        self._digests: dict[str, str | None] = {}

    def _entry(self, path: str) -> Path:
        return self.folder / f"{digest(os.path.abspath(path))[:32]}.json"

    def _current(self, path: str) -> str | None:
        if path not in self._digests:
            self._digests[path] = file_digest(path)
        return self._digests[path]

    def get(self, path: str, text: str, settings_key: str) -> list[Finding] | None:
        """The cached findings of `path`, if it and everything it read are unchanged."""
        try:
            entry = json.loads(self._entry(path).read_text(encoding="utf-8"))
            if (entry.get("tool") != self.tool or entry.get("text") != digest(text)
                    or entry.get("settings") != settings_key):
                return None
            if any(self._current(dep) != dep_digest for dep, dep_digest in entry.get("dependencies", {}).items()):
                return None
            return [_spelled(finding_from_dict(f), path) for f in entry["findings"]]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):  # unreadable or not ours: a miss
            return None

    def put(self, path: str, text: str, settings_key: str, dependencies: Iterable[str],
            findings: list[Finding]) -> None:
        """Store `path`'s findings, with the digest of each file its analysis read (each file's
        computed once per run), silently skipped when the folder cannot be written."""
        entry = {"tool": self.tool, "text": digest(text), "settings": settings_key,
                 "dependencies": {dependency: self._current(dependency) for dependency in dependencies},
                 "findings": [asdict(_portable(f, path)) for f in findings]}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n", encoding="utf-8")
            temporary = self._entry(path).with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(entry), encoding="utf-8")
            temporary.replace(self._entry(path))
        except OSError:
            pass


_THIS_FILE = ""  # a cached finding's filename for the file it belongs to, however a later run spells it


def _portable(finding: Finding, path: str) -> Finding:
    """`finding` as it is kept: the file it was found in by `_THIS_FILE`, others by absolute paths
    (the next run may spell the file otherwise: `check .` after `cd sub && check train.py`)."""
    return _renamed(finding, lambda filename: _THIS_FILE if filename == path else os.path.abspath(filename))


def _spelled(finding: Finding, path: str) -> Finding:
    """A kept finding for `path` as this run spells it (other files by their absolute paths)."""
    return _renamed(finding, lambda filename: path if filename == _THIS_FILE else filename)


def _renamed(finding: Finding, rename: Callable[[str], str]) -> Finding:
    """`finding` with its file and those of its related places renamed."""
    return replace(finding, filename=rename(finding.filename),
                   related=tuple(replace(r, filename=rename(r.filename)) for r in finding.related))


def _span(data: dict) -> Span:
    return Span(Position(**data["start"]), Position(**data["end"]), data.get("cell"))


def finding_from_dict(data: dict) -> Finding:
    """The inverse of `dataclasses.asdict` on a `Finding`."""
    return Finding(
        code=data["code"],
        severity=Severity(data["severity"]),
        message=data["message"],
        filename=data["filename"],
        span=_span(data["span"]),
        related=tuple(Related(r["filename"], _span(r["span"]), r["message"]) for r in data["related"]),
        fixes=tuple(Fix(f["message"], Applicability(f["applicability"]),
                        tuple(Edit(_span(e["span"]), e["content"]) for e in f["edits"])) for f in data["fixes"]),
        aten_op=data.get("aten_op"),
    )
