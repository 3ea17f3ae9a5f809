"""Entry points that cannot change a tensor in place: no code they may run has a line that could.

Every finding is an in-place change the interpreter meets, at a line of a few kinds
(`code_facts.py`), or at the call of a module built in place (`ReLU(inplace=True)`,
`Embedding(max_norm=...)`) or with hooks. Most entry points meet none: a model's
`forward_features`, `reset_classifier`, a config helper. Their analysis, which follows every call
of theirs, finds nothing, and it is most of a scan's time spent on functions.

`QuietEntries.over` tells, without running an entry point, whether any code its analysis could
reach has such a line: the code reachable from its body through the names it refers to (this
file's globals, what they import), the methods of every class whose objects it may meet (its
module's tree, the classes it names) named by an attribute it uses, their `forward`s and dunder
methods. It over-approximates what the interpreter follows: a name the interpreter can resolve,
it resolves the same way, from the files read so far (a file not read yet counts as a change).

An entry point found quiet is not interpreted (`Interpreter`); the functions of this file it may
run are kept (`Unit.quiet_over`): those whose own analysis finds something are analysed through
it after all, where its calls would have stood for theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ContextManager, Iterable

import libcst as cst

from gradguard.analysis.code_facts import POSITIONAL_INPLACE, SITE_KEYWORDS, CodeFacts, is_site_name, renamed_site
from gradguard.analysis.names import is_torch_name
from gradguard.analysis.values import (
    Definitions, DictValue, EitherCode, FunctionRef, GeneratorValue, ImportRef, ModuleValue, PartialValue,
    SequenceValue, Value,
)

__all__ = ["QuietEntries"]

# methods the interpreter runs without their name written (a module's call, an object's call or
# item); those it runs when an object is built
_IMPLICIT = frozenset({"forward", "__call__", "__getitem__"})
_CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__"})
_MAX_VALUES = 2000  # values looked into for one entry point: past it, it is not taken for quiet


class _MayChange(Exception):
    """Some code the entry point may run could change a tensor in place."""


Code = tuple[cst.CSTNode, Definitions]  # a function (or lambda, or class statement) of a file


@dataclass(frozen=True)
class _Leads:
    """What a value or a function's code leads to, whatever calls it: code that may run, classes
    whose objects it may meet (`True`: that it may build), and attribute names it uses."""

    code: tuple[Code, ...] = ()
    classes: tuple[tuple[Definitions, str, bool], ...] = ()
    attributes: frozenset[str] = frozenset()


class QuietEntries:
    """Tells whether an entry point's analysis could meet an in-place change (see the module's
    docstring). What values and functions lead to is kept for the file's run: most entry points
    are methods of a few classes, and call the same functions."""

    def __init__(self, definitions: Definitions, resolve: Callable[[Value], Value],
                 facts: Callable[[cst.CSTNode, Definitions], CodeFacts],
                 without_reading: Callable[[], ContextManager[set[Path]]] | None) -> None:
        self._definitions = definitions
        self._resolve = resolve
        self._without_reading = without_reading
        self._facts = facts
        self._kept: list[object] = []  # what an `id` below keys, alive for as long as the key
        self._values: dict[int, _Leads | None] = {}  # None: it may change a tensor
        self._code: dict[int, _Leads | None] = {}
        self._classes: dict[tuple[int, str], tuple[dict[str, list[Code]], _Leads | None]] = {}
        self._imports: dict[str, Value] = {}

    def forget_values(self) -> None:
        """An analysis changed objects of the module level: what values, code and classes lead to is found again."""
        self._values.clear()
        self._code.clear()
        self._classes.clear()

    def over(self, function: cst.FunctionDef, template: ModuleValue | None) -> frozenset[cst.FunctionDef] | None:
        """None when `function`'s analysis (with `template` as `self`) may meet an in-place change;
        else the functions of this file it may run."""
        try:
            return _Reach(self).functions(function, template)
        except _MayChange:
            return None

    def code_leads(self, code: Code) -> _Leads:
        """What calling `code` leads to (raises `_MayChange`)."""
        key = id(code[0])
        if key not in self._code:
            self._kept.append(code[0])
            self._code[key] = None
            try:
                self._code[key] = self._find_code(*code)
            except _MayChange:
                pass
        found = self._code[key]
        if found is None:
            raise _MayChange
        return found

    def value_leads(self, value: Value) -> _Leads:
        """What calling, or using the objects of, `value` leads to (raises `_MayChange`)."""
        key = id(value)
        if key not in self._values:
            self._kept.append(value)
            self._values[key] = None
            try:
                found = _ValueWalk(self)
                found.value(value)
                self._values[key] = _Leads(tuple(found.code), tuple(found.classes))
            except _MayChange:
                pass
        leads = self._values[key]
        if leads is None:
            raise _MayChange
        return leads

    def class_members(self, definitions: Definitions, name: str) -> tuple[dict[str, list[Code]], _Leads]:
        """The methods of a class and of its bases, by name, and what its class attributes lead to."""
        key = (id(definitions), name)
        if key not in self._classes:
            self._kept.append(definitions)
            methods: dict[str, list[Code]] = {}
            attributes: list[Value] = []
            for owner_definitions, owner in definitions.mro(name):  # a base's too: `super().forward(x)`
                for method, node in owner_definitions.methods_of(owner).items():
                    methods.setdefault(method, []).append((node, owner_definitions))
                attributes.extend(owner_definitions.class_attributes.get(owner, {}).values())
            try:
                walk = _ValueWalk(self)
                for value in attributes:
                    walk.value(value)
                leads: _Leads | None = _Leads(tuple(walk.code), tuple(walk.classes))
            except _MayChange:
                leads = None
            self._classes[key] = (methods, leads)
        methods, leads = self._classes[key]
        if leads is None:
            raise _MayChange
        return methods, leads

    def resolved(self, qualname: str) -> Value:
        """What an imported name is, from the files read so far: one whose file is not read yet
        may change a tensor (reading it here would cost more than interpreting the entry point)."""
        if qualname not in self._imports:
            if self._without_reading is None:
                return self._resolve(ImportRef(qualname))
            with self._without_reading() as unread:
                value = self._resolve(ImportRef(qualname))
            if unread:
                raise _MayChange
            self._imports[qualname] = value
        return self._imports[qualname]

    def _find_code(self, node: cst.CSTNode, definitions: Definitions) -> _Leads:
        facts = self._facts(node, definitions)
        if facts.changes or facts.declares_global:
            raise _MayChange
        for root in facts.roots:  # an object of the module level changed: later analyses would see it
            if isinstance(definitions.globals.get(root), (ModuleValue, DictValue, SequenceValue)):
                raise _MayChange
        walk = _ValueWalk(self)
        for name in facts.names:
            value = definitions.globals.get(name)
            if value is None:
                continue
            if is_site_name(name) or (isinstance(value, ImportRef) and is_torch_name(value.qualname)
                                       and renamed_site(name, value.qualname)):
                raise _MayChange
            walk.value(value)
            if isinstance(value, ImportRef) and not is_torch_name(value.qualname):
                prefix = name + "."
                for chain in facts.chains:
                    if chain.startswith(prefix):
                        walk.value(self.resolved(value.qualname + chain[len(name):]))
        return _Leads(tuple(walk.code), tuple(walk.classes), facts.attributes)


class _ValueWalk:
    """The code and classes values lead to, each value looked into once."""

    def __init__(self, quiet: QuietEntries) -> None:
        self.quiet = quiet
        self.code: list[Code] = []
        self.classes: list[tuple[Definitions, str, bool]] = []
        self.seen: set[int] = set()

    def values(self, values: Iterable[Value]) -> None:
        for value in values:
            self.value(value)

    def value(self, value: Value) -> None:
        if id(value) in self.seen:
            return
        self.seen.add(id(value))
        if len(self.seen) > _MAX_VALUES:
            raise _MayChange
        if isinstance(value, ImportRef):
            if not is_torch_name(value.qualname):
                self.value(self.quiet.resolved(value.qualname))
        elif isinstance(value, FunctionRef):
            if isinstance(value.node, cst.ClassDef):
                self.classes.append((value.definitions, value.name, True))
            else:
                self.code.append((value.node, value.definitions))
            if value.bound_self is not None:
                self.value(value.bound_self)
            self.values((value.closure or {}).values())
        elif isinstance(value, ModuleValue):
            if value.inplace or value.renorms_weight or value.forward_hooks or value.forward_pre_hooks:
                raise _MayChange
            if value.user_class is not None and value.definitions is not None:
                self.classes.append((value.definitions, value.user_class, False))
            self.values(value.children or ())
            self.values(value.named_children.values())
            if value.mapping is not None:
                self.value(value.mapping)
        elif isinstance(value, PartialValue):  # `partial(nn.ReLU, inplace=True)`: what it builds is in no body
            if SITE_KEYWORDS & value.kwargs.keys() or (value.args and isinstance(value.func, ImportRef)
                                                        and value.func.qualname.rpartition(".")[2] in POSITIONAL_INPLACE):
                raise _MayChange
            self.values((value.func, *value.args, *value.kwargs.values()))
        elif isinstance(value, GeneratorValue):
            self.values((value.func, *value.args, *value.kwargs.values()))
        elif isinstance(value, EitherCode):
            self.values(value.alternatives)
        elif isinstance(value, SequenceValue):
            self.values((*value.items, *((value.repeated,) if value.repeated is not None else ())))
        elif isinstance(value, DictValue):
            self.values(value.entries.values())


class _Reach:
    """The code one entry point may run, grown until nothing new is found: the code and classes
    what it runs leads to, and the methods of those classes named by an attribute it uses."""

    def __init__(self, quiet: QuietEntries) -> None:
        self.quiet = quiet
        self.code: dict[int, Code] = {}
        self.pending: list[Code] = []
        self.classes: dict[tuple[int, str], bool] = {}  # whether it may build the class's objects
        self.attributes: set[str] = set(_IMPLICIT)
        self.waiting: dict[str, list[Code]] = {}  # methods of its classes, by a name no code it runs uses yet

    def functions(self, function: cst.FunctionDef, template: ModuleValue | None) -> frozenset[cst.FunctionDef]:
        own = self.quiet._definitions
        self._code((function, own))  # most entry points that may change a tensor do it in their own body
        owner = own.owner_of(function)
        if owner is not None:
            self._class(own, owner, False)
        if template is not None:
            self._leads(self.quiet.value_leads(template))
        while self.pending:
            self._code(self.pending.pop())
        return frozenset(node for node, definitions in self.code.values()
                         if definitions is own and isinstance(node, cst.FunctionDef))

    def _code(self, code: Code) -> None:
        if id(code[0]) not in self.code:
            self.code[id(code[0])] = code
            self._leads(self.quiet.code_leads(code))

    def _leads(self, leads: _Leads) -> None:
        self.pending.extend(c for c in leads.code if id(c[0]) not in self.code)
        for attribute in leads.attributes - self.attributes:
            self.attributes.add(attribute)
            self.pending.extend(self.waiting.pop(attribute, ()))
        for definitions, name, builds in leads.classes:
            self._class(definitions, name, builds)

    def _class(self, definitions: Definitions, name: str, builds: bool) -> None:
        key = (id(definitions), name)
        known = self.classes.get(key)
        if known is not None and (known or not builds):
            return
        self.classes[key] = builds
        methods, leads = self.quiet.class_members(definitions, name)
        for method, code in methods.items():
            if builds and method in _CONSTRUCTION:
                self.pending.extend(code)
            elif known is None:
                if method in self.attributes:
                    self.pending.extend(code)
                else:
                    self.waiting.setdefault(method, []).extend(code)
        if known is None:
            self._leads(leads)
