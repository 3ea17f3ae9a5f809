"""jedi, asked where a name is defined when Python's module-path rules cannot place it (a root other
than the file's own package, dynamic imports): slow on its first query, so asked only for those, and
by an editor in a process of its own."""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from gradguard.analysis.libraries import NEVER_READ, Environment
from gradguard.project_python import project_root
from gradguard.source.parser import collector_paused

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor


class JediLookup:
    """Places names with jedi for a `ProjectIndex`, on the project interpreter's search path."""

    def __init__(self, environment: Environment, located: dict[tuple[str, str], tuple[Path, str] | None]) -> None:
        self._environment = environment
        self._located = located  # the index's placed names, which an answer in the background fills in
        self._on_answer: Callable[[], None] | None = None  # set: jedi is asked in the background
        self._asked: set[tuple[str, str]] = set()
        self._process: ProcessPoolExecutor | None = None

    @property
    def in_background(self) -> bool:
        """Whether jedi is asked in a process of its own (never during an analysis)."""
        return self._on_answer is not None

    def answer_in_background(self, on_answer: Callable[[], None]) -> None:
        """From now on jedi is never asked during an analysis: names only it can place are asked in
        a process of its own (its first query takes seconds), and `on_answer()` is called, from
        another thread, when one is found; they are unknown until then."""
        self._on_answer = on_answer

    def close(self) -> None:
        """Stop jedi's process, if one was started."""
        if self._process is not None:
            self._process.shutdown(wait=False, cancel_futures=True)
            self._process = None

    def ask_in_background(self, key: tuple[str, str]) -> None:
        """Ask jedi, in its process, to place `key` (the file importing, the name): the answer goes to
        the index's placed names, and `on_answer()` is called if it places the name."""
        if key in self._asked:
            return
        self._asked.add(key)
        question = self._question(Path(key[0]), key[1])
        if question is None:
            self._located[key] = None
            return
        if self._process is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._process = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        try:
            future = self._process.submit(jedi_goto, *question, self._search_path())
        except RuntimeError:  # shut down
            return
        future.add_done_callback(lambda done: self._answered(key, done))

    def _answered(self, key: tuple[str, str], done: Future) -> None:
        try:
            names = done.result()
        except Exception:  # a broken process or environment: the name stays unknown
            names = []
        self._located[key] = located = self._placed(names)
        if located is not None and self._on_answer is not None:
            self._on_answer()

    def locate(self, from_path: Path, qualname: str) -> tuple[Path, str] | None:
        """(file defining it, name in that file) as jedi places `qualname` imported in `from_path`, now."""
        question = self._question(from_path, qualname)
        return self._placed(jedi_goto(*question, self._search_path())) if question is not None else None

    def _search_path(self) -> list[str]:
        return [str(folder) for folder in self._environment.search_path]

    def _question(self, from_path: Path, qualname: str) -> tuple[str, str] | None:
        """(source, path) of the jedi query that places `qualname`, or None for names it cannot place
        (an attribute of a global of an installed module file: `transformers.modeling_utils.
        ALL_ATTENTION_FUNCTIONS.get_interface` is no module to import from; a module installed
        nowhere and in no folder of the project)."""
        if qualname.startswith(".") or not from_path.is_file():
            return None
        module, _, attribute = qualname.rpartition(".")
        parts = module.split(".")
        if not module or parts[0] in NEVER_READ or parts[0] in sys.stdlib_module_names:
            return None
        if any((found := self._environment.locate(parts[:k])) is not None and found.name != "__init__.py"
               for k in range(1, len(parts))):
            return None
        installed = self._environment.locate(parts[:1]) is not None
        if not installed and not _in_project(from_path, parts[0], package=len(parts) > 1):
            return None  # installed nowhere, in no folder of the project: jedi cannot place it either (`deepspeed`)
        if installed and self._environment.locate(parts) is None:
            return None  # no module of the package that is installed: an attribute (`transformers.generation.GenerationConfig`)
        return f"from {module} import {attribute}\n", str(from_path)

    def _placed(self, names: list[tuple[str, str]]) -> tuple[Path, str] | None:
        for path, name in names:
            if Path(path).suffix != ".py":
                continue
            package = self._environment.package_of(Path(path).resolve())
            if (package is None and not _installed(Path(path))) or (package is not None and package[0] not in NEVER_READ):
                return Path(path), name
        return None


def jedi_goto(source: str, path: str, search_path: list[str]) -> list[tuple[str, str]]:
    """(file, name) of what jedi says the import in `source` (as if written in `path`) names, found
    in the project's folders, then `search_path` (the project interpreter's `site-packages`), then
    the standard library. jedi is handed no interpreter of the project and reads no
    `.jedi/project.json`: it inspects compiled modules in a process of gradguard's own interpreter,
    only those on that interpreter's own search path, so nothing of the project runs."""
    import jedi

    try:
        folder = Path(path).parent
        project = jedi.Project(project_root(folder) or folder, sys_path=[*search_path, *_standard_library()])
        with collector_paused():  # parso enables the collector after loading its cache
            names = jedi.Script(source, path=path, project=project, environment=_own_environment()).goto(
                1, len(source) - 2, follow_imports=True)
    except Exception:  # jedi fails on broken environments; the name then stays unknown
        return []
    return [(str(name.module_path), name.name) for name in names if name.module_path is not None]


@lru_cache(maxsize=1)
def _own_environment() -> object:
    """jedi's environment of the interpreter running gradguard (never `VIRTUAL_ENV`'s, which jedi's
    default would run)."""
    import jedi

    return jedi.create_environment(sys.executable, safe=False)


def _standard_library() -> list[str]:
    """The folders of this interpreter's standard library."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["stdlib"], paths["platstdlib"], os.path.join(paths["platstdlib"], "lib-dynload")]))


def _in_project(from_path: Path, name: str, package: bool = False) -> bool:
    """Whether a module or package `name` (a `package`: one that has modules of its own, so not a
    file: `onnx.checker` is not `timm/utils/onnx.py`'s) lies in the folder of `from_path` or one
    above it, up to its project's root (where jedi looks beside the search path)."""
    folder = from_path.parent
    root = project_root(folder)
    for candidate in (folder, *folder.parents):
        if (candidate / name).is_dir() or (not package and (candidate / f"{name}.py").is_file()):
            return True
        if root is None or candidate == root:
            return False
    return False


def _installed(path: Path) -> bool:
    """Installed packages and the standard library are not the user's project."""
    parts = set(path.parts)
    return bool(parts & {"site-packages", "dist-packages"}) or path.is_relative_to(sys.base_prefix)
