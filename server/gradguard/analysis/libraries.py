"""Installed libraries, as the project's interpreter sees them.

Names that leave the project (`import timm`, `from transformers.activations import ACT2FN`) are
found on the module search path of the project's interpreter (`check` finds it as `verify` does:
`project_python.find_interpreter`; the editor's setting names it in the server): its `site-packages`,
read from files (its virtual or conda environment's, else its installation's), for gradguard's own
its `sys.path`; no interpreter is ever run for them. Their files are then read
like the project's own (`ProjectIndex`), so a library module's `forward` is interpreted by the same
interpreter as a project module's.

Three things are not found by interpreting a file's top level, so each package's source is
indexed for them once per package version, and the index kept in the user's cache directory
(`$XDG_CACHE_HOME/gradguard`, else `~/.cache/gradguard`), shared by every project: model
registries filled by a decorator (`@register_model` in timm and torchvision: a function whose name
starts with `register` decorating a `def`); where each top-level class and function is
defined, for names re-exported through star imports and lazy modules (`from transformers import
GPT2Config`); and which top-level classes derive from `nn.Module`, by their class statements
(transformers' `PreTrainedModel(nn.Module, ...)`: a base in another file, which a library's
top level does not read).

What reading a library file's top level found is kept there too (`Reading`: its tree and its
`Definitions`, keyed by package, version, the file's hash and place; an entry that another
gradguard, libcst or Python wrote is read again and replaced), so that a second run, or a second
editor session, neither parses nor interprets it again. Definitions
are kept only when they are `self_contained` and depend on nothing beyond the file and its package
(`ProjectIndex` judges); else the tree alone is kept.

torch itself is never read: the op table and `knowledge/modules.py` describe it.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import sys
from dataclasses import dataclass, fields, is_dataclass
from functools import cached_property, lru_cache
from importlib import metadata
from pathlib import Path

import libcst as cst

from gradguard import PYTHON_VARIABLE
from gradguard.analysis.values import (
    Definitions,
    DistributionValue,
    OptimizerValue,
    ParametersValue,
    SavedRecord,
    TensorValue,
)
from gradguard.knowledge import modules as module_facts
from gradguard.project_python import runs_here, site_packages
from gradguard.source.parser import collector_paused
from gradguard.stamp import source_stamp

#: Installed packages that are never read: torch is described by the knowledge, the others define
#: no layers (the standard library aside: `sys.stdlib_module_names`).
NEVER_READ = frozenset({
    "torch", "numpy", "einops", "scipy", "PIL", "huggingface_hub", "safetensors", "typing_extensions",
    "tokenizers", "packaging", "filelock", "requests", "tqdm", "yaml", "regex", "jinja2", "sympy", "networkx",
    "fsspec", "triton", "functorch",
})

_FORMAT = 4  # of the cache's entries
_PER_PROCESS = (TensorValue, ParametersValue, OptimizerValue, DistributionValue, SavedRecord)
_DEFINED = re.compile(r"^(class|def)[ \t]+(\w+)(?:[ \t]*\(([^)]*)\))?", re.MULTILINE)  # a class's bases, to a `)`
_BASE_NAME = re.compile(r"[A-Za-z_][\w.]*")
_DECORATED = re.compile(r"^[ \t]*@(?:[\w.]+\.)?(register\w*)\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*def[ \t]+(\w+)",
                        re.MULTILINE)


def cache_folder() -> Path:
    """gradguard's folder in the user's cache directory (shared by projects)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gradguard"


class Environment:
    """The module search path of the project's interpreter, and what its installed packages hold."""

    def __init__(self, python: str | None = None, cache: Path | None = None) -> None:
        self.python = python or os.environ.get(PYTHON_VARIABLE) or None
        self.cache = cache if cache is not None else cache_folder()
        self._indexes: dict[Path, PackageIndex] = {}
        self._versions: dict[Path, str] = {}
        self._packages: dict[Path, tuple[str, Path] | None] = {}  # file -> its package (see `package_of`)

    @cached_property
    def search_path(self) -> tuple[Path, ...]:
        """The folders of installed packages the interpreter imports from: this interpreter's
        `sys.path` when it is the project's, else its `site-packages` read from files (its virtual
        or conda environment's, its installation's), never by running it; `site-packages` and
        `dist-packages` only, so that the project's own folders (on `PYTHONPATH`, an editable
        install) stay the project's."""
        entries: list[str] = list(sys.path)
        if self.python is not None and not runs_here(self.python):
            entries = [str(folder) for folder in site_packages(self.python)]
        folders: list[Path] = []
        for entry in entries:
            if not entry or not os.path.isdir(entry):
                continue
            folder = Path(entry).resolve()
            if folder.name not in ("site-packages", "dist-packages") or folder in folders:
                continue
            folders.append(folder)
        return tuple(folders)

    def locate(self, parts: list[str]) -> Path | None:
        """The file of the installed module `parts` (a package's `__init__.py`), or None."""
        if not parts or parts[0] in NEVER_READ or parts[0] in sys.stdlib_module_names:
            return None
        for root in self.search_path:
            target = root.joinpath(*parts)
            if target.with_suffix(".py").is_file():
                return target.with_suffix(".py")
            if (target / "__init__.py").is_file():
                return target / "__init__.py"
        return None

    def package_of(self, file: Path) -> tuple[str, Path] | None:
        """(top-level package name, its folder) of an installed file, or None for other files."""
        if file not in self._packages:
            self._packages[file] = next(((top.removesuffix(".py"), root / top) for root in self.search_path
                                         if file.is_relative_to(root) and file != root
                                         for top in [file.relative_to(root).parts[0]]), None)
        return self._packages[file]

    def registered(self, file: Path, name: str) -> tuple[Path, str] | None:
        """The function registered as `name` (timm's `"resnet18"`, a tag after a dot ignored) in
        the package that holds `file`: (its file, its name)."""
        index = self._index_of(file)
        found = index.registered.get(name.split(".", 1)[0]) if index is not None else None
        return (index.folder / found, name.split(".", 1)[0]) if found is not None else None

    def defined(self, package_file: Path, name: str, *, exact: bool = False) -> Path | None:
        """The one file below the folder of `package_file` (a package's `__init__.py`) whose top level
        defines class or function `name`, or None (none, or several). `exact`: `package_file`
        itself, if it defines `name`."""
        index = self._index_of(package_file)
        if index is None:
            return None
        if exact:
            relative = package_file.relative_to(index.folder).as_posix()
            return package_file if relative in index.defined.get(name, ()) else None
        below = package_file.parent.relative_to(index.folder).as_posix()
        prefix = "" if below == "." else below + "/"
        files = [f for f in index.defined.get(name, ()) if f.startswith(prefix)]
        if len(files) > 1:  # transformers' `modular_*.py` sources repeat what `modeling_*.py` define
            files = [f for f in files if not f.rsplit("/", 1)[-1].startswith("modular_")]
        return index.folder / files[0] if len(files) == 1 else None

    def derives_from_module(self, package_file: Path, name: str) -> bool:
        """Whether a top-level class `name` of the package holding `package_file` derives from
        `nn.Module` by its class statement (through the package's own classes, by name)."""
        index = self._index_of(package_file)
        return index is not None and name in index.modules

    def stored_reading(self, file: Path, text: str) -> Reading | None:
        """What a run kept of reading the installed `file` with this very `text` (`keep_reading`), or
        None. Its definitions name `file` as their path, wherever the run that kept them found it."""
        entry = self._reading_entry(file, text)
        if entry is None:
            return None
        try:
            data = entry.read_bytes()
            if not data.startswith(_writer()):
                return None  # kept by another gradguard, libcst or Python
            with collector_paused():
                reading = pickle.loads(memoryview(data)[len(_writer()):])
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, TypeError,
                ValueError, RecursionError, MemoryError):
            return None  # not kept yet, or not ours
        if not isinstance(reading, Reading) or not isinstance(reading.module, cst.Module) or (
                reading.definitions is not None and reading.definitions.module is not reading.module):
            return None
        if reading.definitions is not None:
            reading.definitions.path = str(file)
        return reading

    def keep_reading(self, file: Path, text: str, reading: Reading) -> None:
        """Keep `reading` of the installed `file` for later runs (its definitions only when they are
        `self_contained`; a cache that cannot be written is left as it is)."""
        entry = self._reading_entry(file, text)
        if entry is None:
            return
        if reading.definitions is not None and not self_contained(reading.definitions):
            reading = Reading(reading.module, None)
        try:
            with collector_paused():
                try:
                    data = pickle.dumps(reading, protocol=pickle.HIGHEST_PROTOCOL)
                except (pickle.PicklingError, TypeError, AttributeError):  # a value pickle cannot write
                    data = pickle.dumps(Reading(reading.module, None), protocol=pickle.HIGHEST_PROTOCOL)
            entry.parent.mkdir(parents=True, exist_ok=True)
            temporary = entry.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_bytes(_writer() + data)
            os.replace(temporary, entry)
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError, MemoryError):
            pass  # read again next time

    def _reading_entry(self, file: Path, text: str) -> Path | None:
        """Where the reading of installed `file` with `text` is kept: by package and version, then by
        the hash of the text and the file's place in its package (one entry, which the code that
        reads it next replaces when another wrote it: `_writer`); None for a file of no package."""
        package = self.package_of(file)
        if package is None:
            return None
        place = file.relative_to(package[1].parent).as_posix()
        digest = hashlib.sha256(f"{place}:".encode() + text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.cache / "readings" / f"{package[0]}-{self._version(package[1])}" / f"{digest}.pickle"

    def _version(self, folder: Path) -> str:
        if folder not in self._versions:
            self._versions[folder] = _version(folder)
        return self._versions[folder]

    def indexed(self, file: Path) -> bool:
        """Whether the index of the package holding `file` is in memory (or `file` is in none)."""
        package = self.package_of(file)
        return package is None or package[1] in self._indexes

    def index(self, file: Path) -> None:
        """Load (or build) the index of the package holding `file`."""
        self._index_of(file)

    def _index_of(self, file: Path) -> PackageIndex | None:
        package = self.package_of(file)
        if package is None or not package[1].is_dir():
            return None
        name, folder = package
        if folder in self._indexes:
            return self._indexes[folder]
        key = hashlib.sha256(f"{_FORMAT}:{folder}:{self._version(folder)}".encode()).hexdigest()[:24]
        entry = self.cache / "packages" / f"{name}-{key}.json"
        try:
            stored = json.loads(entry.read_text(encoding="utf-8"))
            index = PackageIndex(folder, stored["registered"], stored["defined"], frozenset(stored["modules"]))
        except (OSError, ValueError, TypeError, KeyError):
            index = _index_package(folder)
            try:
                entry.parent.mkdir(parents=True, exist_ok=True)
                temporary = entry.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(json.dumps({"registered": index.registered, "defined": index.defined,
                                                 "modules": sorted(index.modules)}), encoding="utf-8")
                os.replace(temporary, entry)
            except OSError:  # a read-only cache: indexed again next time
                pass
        self._indexes[folder] = index
        return index


@dataclass
class Reading:
    """An installed file's tree and what its top level binds for the files that import it
    (`read_top_level`; None when that was not kept)."""

    module: cst.Module
    definitions: Definitions | None


def self_contained(definitions: Definitions) -> bool:
    """Whether `definitions` can be kept for another run: they refer to no other file's definitions
    and hold no tensor, optimizer or saved record (version counters are numbered per process)."""
    pending: list[object] = [definitions.globals, definitions.classes, definitions.bases,
                             definitions.class_attributes]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if isinstance(item, (cst.CSTNode, str, int, float, bool, type(None))) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, _PER_PROCESS) or (isinstance(item, Definitions) and item is not definitions):
            return False
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending.extend(item)
        elif is_dataclass(item) and not isinstance(item, Definitions):
            pending.extend(getattr(item, f.name) for f in fields(item))
    return True


def _writer() -> bytes:
    """The first line of a reading's entry: what wrote it (the entry's format, libcst's and Python's
    versions, gradguard's own code). An entry another one wrote is read again and replaced."""
    return _writer_line(source_stamp())


@lru_cache(maxsize=1)
def _writer_line(stamp: str) -> bytes:
    made_by = f"{_FORMAT}:{metadata.version('libcst')}:{sys.version}:{stamp}"
    return hashlib.sha256(made_by.encode()).hexdigest().encode() + b"\n"


@dataclass
class PackageIndex:
    """What reading an installed package's source found: registered name -> file, top-level class
    or function name -> the files defining it (paths relative to the package's folder), and the
    names of its top-level classes that derive from `nn.Module`."""

    folder: Path
    registered: dict[str, str]
    defined: dict[str, list[str]]
    modules: frozenset[str] = frozenset()


def _version(folder: Path) -> str:
    """The installed version of the package in `folder` (its dist-info's name), or its files' stamp."""
    normalised = folder.name.replace("-", "_").lower()
    for info in folder.parent.glob("*.dist-info"):
        project, _, rest = info.name.partition("-")
        if project.replace("-", "_").lower() == normalised:
            return rest.removesuffix(".dist-info")
    stat = (folder / "__init__.py").stat() if (folder / "__init__.py").exists() else folder.stat()
    return f"mtime-{stat.st_mtime_ns}"


def _index_package(folder: Path) -> PackageIndex:
    """Reads every file of the package once (text only, no parse)."""
    index = PackageIndex(folder, {}, {})
    bases: dict[str, set[str]] = {}
    for file in sorted(folder.rglob("*.py")):
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        relative = file.relative_to(folder).as_posix()
        for match in _DEFINED.finditer(text):
            files = index.defined.setdefault(match.group(2), [])
            if relative not in files:
                files.append(relative)
            if match.group(1) == "class" and match.group(3) is not None:
                bases.setdefault(match.group(2), set()).update(_BASE_NAME.findall(match.group(3)))
        if "@" in text and "register" in text:
            for match in _DECORATED.finditer(text):
                index.registered.setdefault(match.group(2), relative)
    index.modules = _module_classes(bases)
    return index


def _module_classes(bases: dict[str, set[str]]) -> frozenset[str]:
    """The classes (of `bases`: class -> the names in its bases' text) that derive from a `torch.nn`
    module, directly or through others of them (a name defined twice: either definition)."""
    modules = {name for name, named in bases.items() if any(_is_torch_module(base) for base in named)}
    grown = True
    while grown:
        found = {name for name, named in bases.items() if name not in modules
                 and any(base.rsplit(".", 1)[-1] in modules for base in named)}
        modules |= found
        grown = bool(found)
    return frozenset(modules)


def _is_torch_module(base: str) -> bool:
    """Whether a base, as written (`nn.Module`, `torch.nn.Linear`, `Module`), is a `torch.nn` module."""
    prefix, _, name = base.rpartition(".")
    if prefix not in ("", "nn", "torch.nn"):
        return False
    return name == "Module" or (prefix != "" and (name in module_facts.MODULES or name in module_facts.CONTAINERS))
