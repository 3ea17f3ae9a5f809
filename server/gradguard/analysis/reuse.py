"""When a function's analysis from the previous version of a file still holds after an edit of
the module-level code (a notebook's training-loop cell, a script's main block).

A function or method is analysed on its own with the module's globals as the module-level code
leaves them at its end (and, for a method, with its class's instance, built where the class
statement ran, reading the globals as they were there). After an edit of the module-level code,
its previous result (`Unit`) stands when:

- the top-level statements holding its code, and the code of every function it followed a call
  into, are the same (the same nodes: unchanged blocks keep theirs);
- every class statement that code names (its own class included) ran before the first statement
  the edit changed, so it built what it built before;
- every global that code, or the code of the classes and functions of this file it names, reads
  is bound as before: to the same import, builtin, constant, or class or function of this file,
  or to the very same object (a frozen value a checkpoint kept, such as a tensor bound above the
  edit). A list, dict or module the module level built again is never the same.

A result whose analysis changed what later analyses see (`Unit.shares`), or which would not fit
in the file's budget, is not reused; nor is any when an analysis stopped following a call, or
the file's star imports changed.
"""

from __future__ import annotations

import re
import symtable
from typing import Callable, Iterator, Sequence

import libcst as cst

from gradguard.analysis.events import StatementFacts, Unit
from gradguard.analysis.values import (
    BuiltinRef,
    ConstValue,
    Definitions,
    FunctionRef,
    ImportRef,
    IntValue,
    NumberValue,
    PartialValue,
    StringPattern,
    Value,
)

_ABSENT = object()


def globals_read(code: str) -> frozenset[str]:
    """The module-level names a top-level statement whose text is `code` reads: those its own code
    refers to (at the top: a class's bases, a decorator) and the globals of the functions and
    classes inside it, as Python's compiler scopes them (`symtable`); every identifier in it when
    CPython cannot compile it."""
    try:
        top = symtable.symtable(code, "<statement>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(re.findall(r"[^\W\d]\w*", code))
    read = {symbol.get_name() for symbol in top.get_symbols() if symbol.is_referenced()}
    tables = list(top.get_children())
    while tables:
        table = tables.pop()
        read.update(symbol.get_name() for symbol in table.get_symbols()
                    if symbol.is_global() or (table.get_type() == "class" and not symbol.is_local()))
        tables.extend(table.get_children())
    return frozenset(read)


def first_changed(body: Sequence[cst.BaseStatement], old_body: Sequence[cst.BaseStatement]) -> int:
    """The index of the first top-level statement of `body` that `old_body` does not have there
    (the same nodes: unchanged blocks keep theirs)."""
    return next((i for i, (a, b) in enumerate(zip(body, old_body)) if a is not b), min(len(body), len(old_body)))


def defined(facts: StatementFacts, statement: cst.CSTNode) -> tuple[cst.FunctionDef | cst.ClassDef, ...]:
    """`defined_in(statement)`, kept in `facts`."""
    found = facts.defines.get(statement)
    if found is None:
        found = facts.defines[statement] = tuple(defined_in(statement))
    return found


def read_ahead(facts: StatementFacts, body: Sequence[cst.BaseStatement],
               source: Callable[[cst.CSTNode], str | None]) -> None:
    """The facts of each definition in `body` whose text `source` gives, known from now on."""
    for statement in body:
        defined(facts, statement)
        if statement not in facts.reads and isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            code = source(statement)
            if code is not None:
                facts.reads[statement] = globals_read(code)


def same_binding(old: object, new: object) -> bool:
    """Whether a global bound to `old` in the previous version and to `new` in this one means the
    same to a function reading it (either may be absent)."""
    if old is new:
        return True
    if type(old) is not type(new):
        return False
    if isinstance(old, (ConstValue, IntValue, NumberValue, StringPattern)):
        return old == new and type(getattr(old, "value", None)) is type(getattr(new, "value", None))
    if isinstance(old, ImportRef):
        return old.qualname == new.qualname  # type: ignore[attr-defined]
    if isinstance(old, BuiltinRef):
        return old.name == new.name  # type: ignore[attr-defined]
    if isinstance(old, FunctionRef):
        return (old.node is new.node and old.name == new.name  # type: ignore[attr-defined]
                and old.bound_self is None and new.bound_self is None  # type: ignore[attr-defined]
                and old.closure is None and new.closure is None)  # type: ignore[attr-defined]
    if isinstance(old, PartialValue):  # `act = partial(F.relu, inplace=True)`
        return (same_binding(old.func, new.func) and len(old.args) == len(new.args)  # type: ignore[attr-defined]
                and all(same_binding(a, b) for a, b in zip(old.args, new.args))  # type: ignore[attr-defined]
                and old.kwargs.keys() == new.kwargs.keys()  # type: ignore[attr-defined]
                and all(same_binding(v, new.kwargs[k]) for k, v in old.kwargs.items()))  # type: ignore[attr-defined]
    return False


class Reuse:
    """Which previous units still hold, for one version whose module-level code changed."""

    def __init__(self, old: dict[str, Value], old_body: tuple[cst.BaseStatement, ...], new: Definitions,
                 facts: StatementFacts, source: Callable[[cst.CSTNode], str | None]) -> None:
        self.old, self.new = old, new  # the previous version's globals, this version's definitions
        self.source = source  # a top-level statement's text, if the document has it at hand
        self.kept = set(old_body)  # the previous version's top-level statements
        body = new.module.body if new.module else ()
        self.position = {statement: index for index, statement in enumerate(body)}
        # the top-level statements before this one ran as they did: what a class statement built
        # when it ran (its instance, by `__init__`, reading the globals as they were then) stands
        self.first_changed = first_changed(body, old_body)
        self.facts, self.names = facts, facts.reads
        self.statement_of = {definition: statement for statement in (new.module.body if new.module else ())
                             for definition in defined(facts, statement)}  # function or class -> top-level statement

    def holds(self, function: cst.FunctionDef, unit: Unit) -> bool:
        """Whether `unit`, the previous analysis of `function`, holds in this version."""
        statements = {self.statement_of.get(f) for f in (function, *unit.entered)} - {None}
        if self.statement_of.get(function) is None or not statements <= self.kept:
            return False  # a statement changed around it (a class whose `__init__` changed builds other modules)
        read, visited = self._read_from(statements)  # type: ignore[arg-type]
        if any(self.position.get(s, self.first_changed) >= self.first_changed and
               any(isinstance(d, cst.ClassDef) for d in defined(self.facts, s)) for s in visited):
            return False  # a class statement that ran again: its instance may be built otherwise
        return all(same_binding(self.old.get(name, _ABSENT), self.new.globals.get(name, _ABSENT))
                   for name in read)

    def _read_from(self, statements: set[cst.CSTNode]) -> tuple[set[str], set[cst.CSTNode]]:
        """The names `statements` read, and those the classes and functions of this file they name
        read; and the top-level statements those are."""
        read: set[str] = set()
        todo, done = list(statements), set(statements)
        while todo:
            statement = todo.pop()
            names = self.names.get(statement)
            if names is None:
                names = self.names[statement] = globals_read(self._code(statement))
            for name in names - read:
                read.add(name)
                value: Value | None = self.new.globals.get(name)
                if isinstance(value, FunctionRef) and value.definitions is self.new:
                    holder = self.statement_of.get(value.node)
                    if holder is not None and holder not in done:
                        done.add(holder)
                        todo.append(holder)
        return read, done

    def _code(self, statement: cst.CSTNode) -> str:
        code = self.source(statement)
        if code is None and self.new.module is not None:
            code = self.new.module.code_for_node(statement)
        return code or ""


def defined_in(node: cst.CSTNode) -> Iterator[cst.FunctionDef | cst.ClassDef]:
    """`node` and the functions, methods and classes defined inside it, at any depth of statements."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        yield node
    body = getattr(node, "body", None)
    statements = getattr(body, "body", body)
    if isinstance(statements, (list, tuple)):
        for statement in statements:
            if isinstance(statement, cst.BaseCompoundStatement):
                yield from defined_in(statement)
    for branch in ("orelse", "finalbody"):
        if (other := getattr(node, branch, None)) is not None:
            yield from defined_in(other)
    for handler in getattr(node, "handlers", ()):
        yield from defined_in(handler)
