"""The project index: what a name imported from another file of the project is.

`from .blocks import Block` inside the project, or `from timm.layers import Mlp` from an installed
library (found on the project interpreter's search path: `libraries.Environment`), is resolved to
the file that defines it; that file's top level (imports, functions, classes and what each
class's `__init__` builds) is interpreted once and cached (an installed file's reading also in the
user's cache, for later runs: `libraries.Reading`), following re-exports through `__init__.py`
files, so a library's code is interpreted like the project's own. Names the module-path rules
(`module_paths.py`) cannot place (a root other than the file's own package, dynamic imports) are
asked of jedi (`jedi_lookup.py`), which is slow on its first query and so is asked only for those
(by an editor, in a process of its own: `answer_in_background`); star imports of installed
packages are placed with the package's index. The files each analysis read are recorded, so a
cache can be invalidated when any of them changes.
"""

from __future__ import annotations

import os
import re
import sys
from collections import OrderedDict
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import libcst as cst

from gradguard.analysis import budget
from gradguard.analysis.jedi_lookup import JediLookup
from gradguard.analysis.libraries import NEVER_READ, Environment, Reading
from gradguard.analysis.module_paths import ModulePaths, package_root
from gradguard.analysis.names import is_torch_name
from gradguard.analysis.values import UNKNOWN, Definitions, ImportRef, Value
from gradguard.findings import Span
from gradguard.source.blocks import BlockTree
from gradguard.source.files import read_source
from gradguard.source.parser import parse_module
from gradguard.source.positions import WholeModule
from gradguard.source.skeleton import is_skeleton, parse_skeleton

_MAX_REEXPORT_DEPTH = 6

TopLevelReader = Callable[[cst.Module, str, "ProjectIndex", str], Definitions]
"""Interprets a file's top level for the files that import it (the interpreter's `read_top_level`)."""


@dataclass
class _Reading:
    """A file whose top level is being read, and whether what it binds depends on nothing but its
    text and its package (see `ProjectIndex._consulted`)."""

    file: Path
    self_contained: bool = True
    cost: dict[str, int] = field(default_factory=dict)  # the steps of the files it needed (`Definitions.reading_cost`)
    allowance: dict[str, int] | None = None  # the tally its needs are charged to (`Budget.own_allowance`)


class ReadingInterrupted(Exception):
    """Reading a file stopped for more urgent work (see `ProjectIndex.interruptible`)."""


class ProjectIndex:
    """Resolves imported names to definitions in other files; caches the files it read."""

    def __init__(self, reader: TopLevelReader, capacity: int = 128, use_jedi: bool = True,
                 environment: Environment | None = None) -> None:
        self._reader = reader
        self.environment = environment if environment is not None else Environment()
        self._definitions: OrderedDict[Path, Definitions | None] = OrderedDict()
        self._short: dict[Path, object] = {}  # read short (out of time): kept for the analysis (its budget) that read it
        self._capacity = capacity
        self._loading: set[Path] = set()
        self._use_jedi = use_jedi
        self._positions: dict[Path, WholeModule] = {}  # whole files' positions
        self._blocks: dict[Path, BlockTree] = {}  # files placed block by block
        self._texts: dict[Path, str] = {}
        self._star_sources: dict[Path, tuple[frozenset[str], tuple[Path, ...]]] = {}  # `_defines`' readings
        self._analysed: set[Path] = set()  # files this process analyses too: read whole, their tree reused (`parsed`)
        self._located: dict[tuple[str, str], tuple[Path, str] | None] = {}
        self._text_hashes: dict[Path, int] = {}
        self._clock = 0
        self._changed_at: dict[str, int] = {}  # file -> the tick its text last changed
        self.dependencies: dict[str, set[str]] = {}
        self._not_read: set[Path] | None = None  # while `without_reading`: the files left unread
        self._interrupted: Callable[[], bool] | None = None  # while `interruptible`
        self._libraries: dict[str, bool] = {}  # file -> `is_library` (asked at every followed call)
        self._index_wanted: set[Path] = set()  # files whose reading loads their package's index first
        self._paths = ModulePaths(self.environment)
        self._jedi = JediLookup(self.environment, self._located)
        self._readings: list[_Reading] = []  # the files whose top level is being read, innermost last
        self.installed_files_read = 0  # how many installed files' top levels this index has read
        self.evicted = 0  # how many readings it let go of (its capacity)

    def resolve(self, from_path: str, qualname: str, depth: int = 0) -> Value:
        """The value `qualname` (as imported in `from_path`) names, or UNKNOWN."""
        if depth > _MAX_REEXPORT_DEPTH:
            return UNKNOWN
        key = (from_path, qualname)
        if key not in self._located:
            located = self._paths.locate(Path(from_path), qualname)
            if located is None and self._use_jedi and self._jedi.in_background:
                self._jedi.ask_in_background(key)  # an editor: jedi answers in a process of its own, later
                return UNKNOWN
            if located is None and self._use_jedi:
                current = budget.active()
                if current is not None and not current.may_read():
                    return UNKNOWN  # asked again by a later analysis, with time left
                with current.reading() if current is not None else nullcontext():
                    located = self._jedi.locate(Path(from_path), qualname)
            self._located[key] = located
        located = self._located[key]
        self._consulted(located[0] if located is not None else None, qualname)
        if located is None:
            return UNKNOWN
        file, attribute = located
        self.dependencies.setdefault(from_path, set()).add(str(file))
        definitions = self.definitions_of(file)
        if definitions is None:
            return UNKNOWN
        value = definitions.globals.get(attribute, UNKNOWN)
        if value is UNKNOWN and definitions.star_imports and (
                found := self.star_imported(str(file), definitions.star_imports, attribute)) is not None:
            return self.resolve(str(file), found, depth + 1)  # `from .resnet import *`
        if value is UNKNOWN and file.name == "__init__.py" and self._index_ready(file) and (
                defining := self.environment.defined(file, attribute)) is not None:
            return self.resolve(str(file), _module_name(defining, file, attribute), depth + 1)  # a lazy module
        if isinstance(value, ImportRef) and not is_torch_name(value.qualname):
            return self.resolve(str(file), value.qualname, depth + 1)
        return value

    @contextmanager
    def without_reading(self) -> Iterator[set[Path]]:
        """Within, names from files not read yet stay unknown (a miss, never a false alarm): a
        first answer that does not wait for the imports. The set lists the files left unread (a
        use inside another adds them to the outer one's: the outer one goes on after it)."""
        outer = self._not_read
        self._not_read = not_read = set()
        try:
            yield not_read
        finally:
            self._not_read = outer
            if outer is not None:
                outer.update(not_read)

    @contextmanager
    def interruptible(self, interrupted: Callable[[], bool]) -> Iterator[None]:
        """Within, each file about to be read (those its imports lead to included) first asks
        `interrupted()`; when it answers True, `ReadingInterrupted` is raised. The files read
        completely by then stay read; the others are read again when next asked for."""
        self._interrupted = interrupted
        try:
            yield
        finally:
            self._interrupted = None

    def definitions_of(self, file: Path) -> Definitions | None:
        """The top-level definitions of `file` (interpreted once; None if unreadable, or past the
        analysis's `IMPORT_STEPS`: charged the same whether read now or before)."""
        current = budget.active()
        if file in self._definitions and self._short.get(file, current) is current:
            self._definitions.move_to_end(file)
            return self._charged(file, self._definitions[file], current)
        if self._not_read is not None:
            self._not_read.add(file)
            return None
        if file in self._loading:
            return None
        if self._interrupted is not None and self._interrupted():
            raise ReadingInterrupted(str(file))
        if current is not None and not current.may_read():
            current.unread.add(str(file))
            return None  # read by a later analysis, with steps left
        self._loading.add(file)
        try:
            with current.reading() if current is not None else nullcontext(), \
                    current.own_allowance() if current is not None else nullcontext():
                if file in self._index_wanted:  # left for this reading by an editor's first answer
                    self.environment.index(file)
                    self._index_wanted.discard(file)
                def stopped_short() -> bool:  # out of time
                    return current is not None and current.out_of_time()

                definitions = self._interpret(file, stopped_short)
                short = stopped_short()
        finally:
            self._loading.discard(file)
        if short:  # stopped short: good for this analysis only, read again by the next
            self._short[file] = current
            if current is not None:
                current.short_reads = True
        else:
            self._short.pop(file, None)
        self._definitions[file] = definitions
        if len(self._definitions) > self._capacity:
            self._evict()
        return self._charged(file, definitions, current)

    def _charged(self, file: Path, definitions: Definitions | None,
                 current: budget.Budget | None) -> Definitions | None:
        """`definitions` once the analysis under way is charged for reading them (None past its
        `IMPORT_STEPS`); the readings under way needed them, and what they needed in turn."""
        if definitions is None or current is None:
            return definitions
        if not current.charge(str(file), definitions.reading_cost, definitions.unread):
            return None
        for reading in self._readings:  # those charged to the same allowance (a refused reading's needs are none of theirs)
            if reading.allowance is current.charged and str(file) not in reading.cost:  # else recorded with all it needed
                reading.cost.update(definitions.reading_cost)
        return definitions

    def _evict(self) -> None:
        evicted, _ = self._definitions.popitem(last=False)
        self.evicted += 1
        self._short.pop(evicted, None)
        self._texts.pop(evicted, None)
        self._forget_positions(evicted)

    def _forget_positions(self, file: Path) -> None:
        self._positions.pop(file, None)
        self._blocks.pop(file, None)

    def read_by(self, filename: str) -> set[str]:
        """Every file the analysis of `filename` read, directly or through re-exports."""
        seen: set[str] = set()
        todo = [filename]
        while todo:
            for dependency in self.dependencies.get(todo.pop(), ()):
                if dependency not in seen:
                    seen.add(dependency)
                    todo.append(dependency)
        return seen

    def dependencies_changed_at(self, filename: str) -> int:
        """The latest tick at which a file that `filename`'s analysis read changed (0: never)."""
        return max((self._changed_at.get(f, 0) for f in self.read_by(filename)), default=0)

    def _note_text(self, file: Path, text_hash: int) -> None:
        if self._text_hashes.get(file, text_hash) != text_hash:
            self._clock += 1
            self._changed_at[str(file)] = self._clock
            self._star_sources.clear()  # (what a file binds may have moved to or from this one)
        self._text_hashes[file] = text_hash

    def parsed(self, filename: str, text: str) -> cst.Module | None:
        """The tree of `filename` if the index holds it whole for this very text (no second parse)."""
        file = Path(os.path.realpath(filename))
        definitions = self._definitions.get(file)
        if definitions is None or self._text_hashes.get(file) != hash(text) or (
                definitions.module is not None and is_skeleton(definitions.module)):
            return None
        return definitions.module

    def will_analyse(self, filenames: Iterable[str]) -> None:
        """This process analyses `filenames` too: when one is read for the files importing it
        before, it is parsed whole, and its analysis reuses that tree (`parsed`). Others are
        read as skeletons: the bodies of their functions parsed only if a followed call runs them."""
        self._analysed.update(Path(os.path.realpath(f)) for f in filenames)

    def register(self, filename: str, text: str, definitions: Definitions, reads: dict[str, int]) -> None:
        """Keep what analysing `filename` found at its top level, for the files that import it;
        `reads`: the cost of the files its module-level code used (`ScopeResult.module_reads`), charged with its own
        to them as if they read it."""
        file = Path(os.path.realpath(filename))
        definitions.reading_cost = {**reads, str(file): budget.READ_STEPS_PER_LINE * (text.count("\n") + 1)}
        self._definitions[file] = definitions
        self._short.pop(file, None)
        self._definitions.move_to_end(file)
        self._note_text(file, hash(text))
        self._texts[file] = text
        self._forget_positions(file)
        if len(self._definitions) > self._capacity:
            self._evict()

    def locate(self, node: cst.CSTNode, file_hint: str | None = None,
               scope: cst.CSTNode | None = None) -> tuple[str, Span] | None:
        """The file and range of a node of one of the files this index read (`file_hint` first,
        placed block by block, the block of `scope`, the function it lies in, first; then the
        other files, whole)."""
        hint = Path(os.path.realpath(file_hint)) if file_hint is not None else None
        if hint is not None and (span := self._locate_in_blocks(hint, node, scope)) is not None:
            return str(hint), span
        for file, definitions in self._definitions.items():
            if definitions is None or definitions.module is None:
                continue
            positions = self._positions.get(file)
            if positions is None:
                positions = self._positions[file] = WholeModule(definitions.module)
            if (span := positions.get(node)) is not None:
                return str(file), span
        return None

    def _locate_in_blocks(self, file: Path, node: cst.CSTNode, scope: cst.CSTNode | None) -> Span | None:
        definitions = self._definitions.get(file)
        text = self._texts.get(file)
        if definitions is None or definitions.module is None or text is None:
            return None
        blocks = self._blocks.get(file)
        if blocks is None:
            blocks = self._blocks[file] = BlockTree(str(file))
            blocks.update(text, definitions.module)
        try:
            return blocks.span(node, scope)
        except KeyError:
            return None

    def _interpret(self, file: Path, stopped_short: Callable[[], bool]) -> Definitions | None:
        """`file`'s top level read; an installed file's reading comes from, and goes to, the user's
        cache (`Environment.stored_reading`): kept whole unless it `stopped_short()` or looked
        beyond its own package, else its tree only."""
        try:
            text = read_source(file).text
        except (OSError, ValueError):
            return None
        self._note_text(file, hash(text))
        self._texts[file] = text
        installed = self.environment.package_of(file) is not None
        if installed:
            self.installed_files_read += 1
        stored = self.environment.stored_reading(file, text) if installed else None
        if stored is not None and stored.definitions is not None:
            stored.definitions.text = text
            return stored.definitions
        try:
            module = stored.module if stored is not None else \
                parse_module(text) if file in self._analysed else parse_skeleton(text)
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            return None
        with self.recording(str(file)) as reading:
            try:
                definitions = self._reader(module, str(file), self, text)
            except RecursionError:
                definitions = None
        if definitions is not None:
            definitions.reading_cost = {**reading.cost, str(file): budget.READ_STEPS_PER_LINE * (text.count("\n") + 1)}
        kept = definitions if reading.self_contained and not stopped_short() else None
        if installed and (stored is None or kept is not None):
            self.environment.keep_reading(file, text, Reading(module, kept))
        return definitions

    @contextmanager
    def recording(self, file: str | Path) -> Iterator[_Reading]:
        """Within, `file`'s top level runs: the files whose definitions it uses are recorded, with
        their reading cost (`_charged`), and whether it consults anything beyond its package."""
        current = budget.active()
        reading = _Reading(Path(file), allowance=current.charged if current is not None else None)
        self._readings.append(reading)
        try:
            yield reading
        finally:
            self._readings.pop()

    def _consulted(self, file: Path | None, qualname: str, *, indexed: bool = False) -> None:
        """The readings under way looked `qualname` up and found it in `file` (None: in no file;
        `indexed`: in their package's index only). What they bind then depends on more than their
        own text and package: they are not kept for later runs."""
        if file is None and (qualname.startswith(".") or qualname.split(".")[0] in NEVER_READ
                             or qualname.split(".")[0] in sys.stdlib_module_names):
            return  # the package's own structure, torch or the standard library: the same in every run
        for reading in self._readings:
            if file == reading.file or (indexed and file is not None and self.environment.package_of(file)
                                        == self.environment.package_of(reading.file)):
                continue
            reading.self_contained = False

    def registered(self, file: str, name: str) -> Value:
        """The function a library's registry decorator (`@register_model`) registered as `name` in
        the package that holds `file` (`timm.create_model("resnet18")`), or UNKNOWN."""
        if not self._index_ready(Path(file)):
            return UNKNOWN
        found = self.environment.registered(Path(file), name)
        if found is None:
            return UNKNOWN
        self._consulted(found[0], name)
        self.dependencies.setdefault(file, set()).add(str(found[0]))
        definitions = self.definitions_of(found[0])
        return UNKNOWN if definitions is None else definitions.globals.get(found[1], UNKNOWN)

    def derives_from_module(self, qualname: str) -> bool:
        """Whether the installed class `qualname` (absolute: `transformers.modeling_utils.PreTrainedModel`)
        derives from `nn.Module`, by its package's index (its file not read)."""
        top, _, rest = qualname.partition(".")
        package = self.environment.locate([top]) if rest else None
        if package is None or package.name != "__init__.py" or not self._index_ready(package):
            return False
        self._consulted(package, qualname, indexed=True)
        return self.environment.derives_from_module(package, qualname.rsplit(".", 1)[-1])

    def absolute(self, from_path: str, qualname: str) -> str:
        """A relative import's name made absolute (`ModulePaths.absolute`)."""
        return self._paths.absolute(from_path, qualname)

    def star_imported(self, from_path: str, modules: list[str], name: str) -> str | None:
        """The absolute name of `name` when one of `modules` (star-imported by `from_path`) defines
        it at its top level (from the package's index; a project's file from its text, its own star
        imports followed: `from .schemes import *` in a package's `__init__.py`), else None."""
        for module in modules:
            located = self._paths.locate(Path(from_path), f"{module}.{name}")
            self._consulted(located[0] if located is not None else None, module, indexed=True)
            if located is None:
                continue
            if not self.is_library(str(located[0])):
                if _defines(located[0], name, self._star_sources):
                    return f"{module}.{name}"
                continue
            if located[0].name == "__init__.py":
                continue
            if self._index_ready(located[0]) and self.environment.defined(located[0], name, exact=True) is not None:
                return f"{module}.{name}"
        return None

    def _index_ready(self, file: Path) -> bool:
        """Whether the package index for `file` may be used now: while reading is off (an editor's
        first answer), a package not indexed yet is left for the file's reading in the background."""
        if self._not_read is None or self.environment.indexed(file):
            return True
        self._not_read.add(file)
        self._index_wanted.add(file)
        return False

    def is_library(self, file: str) -> bool:
        """Whether `file` belongs to an installed package (not to the project)."""
        known = self._libraries.get(file)
        if known is None:
            known = self._libraries[file] = self.environment.package_of(Path(file)) is not None
        return known

    def answer_in_background(self, on_answer: Callable[[], None]) -> None:
        """From now on jedi is never asked during an analysis (`JediLookup.answer_in_background`)."""
        self._jedi.answer_in_background(on_answer)

    def close(self) -> None:
        """Stop jedi's process, if one was started."""
        self._jedi.close()



_TOP_LEVEL_NAME = re.compile(r"^(?:(?:async\s+)?def|class)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=(?!=)", re.M)
_FROM_IMPORT = re.compile(r"^from\s+[.\w]+\s+import\s+(\([^)]*\)|[^\n]*)", re.M)
_STAR_IMPORT = re.compile(r"^from\s+(\.*)([\w.]*)\s+import\s+\*", re.M)


def _defines(file: Path, name: str, sources: dict[Path, tuple[frozenset[str], tuple[Path, ...]]],
             depth: int = 0) -> bool:
    """Whether a project's `file` binds `name` at its top level (a `def`, `class`, assignment or
    `from ... import` at column 0), itself or through the files it star-imports relatively (`from .schemes import *`):
    read from its text, no analysis (`sources` keeps each file's names and star imports)."""
    if file not in sources:
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        imported = (part.split("#")[0].split()[-1] for names in _FROM_IMPORT.findall(text)
                    for part in names.strip("()").replace("\n", ",").split(",") if part.split("#")[0].strip())
        names = frozenset(m.group(1) or m.group(2) for m in _TOP_LEVEL_NAME.finditer(text)) | frozenset(imported)
        package = file.parent
        starred = []
        for dots, dotted in _STAR_IMPORT.findall(text):
            if not dots:
                continue  # an absolute star import: located by the module paths of the one asking
            base = package
            for _ in range(len(dots) - 1):
                base = base.parent
            target = base.joinpath(*dotted.split(".")) if dotted else base
            starred.append(target / "__init__.py" if target.is_dir() else target.with_suffix(".py"))
        sources[file] = names, tuple(starred)
    names, starred = sources[file]
    return name in names or depth < _MAX_REEXPORT_DEPTH and any(
        _defines(other, name, sources, depth + 1) for other in starred if other.is_file())


def _module_name(defining: Path, package_init: Path, attribute: str) -> str:
    """The absolute name of `attribute` in the file `defining`, found below a package's `__init__.py`."""
    root = package_root(package_init)
    return ".".join([*defining.relative_to(root).with_suffix("").parts, attribute])


