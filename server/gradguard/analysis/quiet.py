"""Entry points that cannot change a tensor in place: no code they may run has a line that could.

Every finding is an in-place change the interpreter meets, at a line of a few kinds
(`code_facts.py`), or at the call of a module built in place (`ReLU(inplace=True)`,
`Embedding(max_norm=...)`) or with hooks. Many entry points meet none: a model's
`forward_features`, `reset_classifier`, a config helper (a third of timm's). Their analysis, which
follows every call of theirs, finds nothing.

`QuietEntries.over` tells, without running an entry point, whether any code its analysis could
reach has such a line: the code reachable from its body through the names it refers to (this
file's globals, what they import), the methods of every class whose objects it may meet (its
module's tree, the classes it names) named by an attribute it uses, and what their objects run
when called or indexed (`forward`, `__call__`, `__getitem__`; for the entry point's own object,
only when `self` is called or given away). It over-approximates what the interpreter follows: a
name the interpreter can resolve, it resolves the same way, from the files read so far (a file
not read yet counts as a change, and so does another file's unparsed body whose text shows a
likely one: reading or parsing them would cost more than interpreting).

An entry point found quiet is not interpreted (`Interpreter`); the functions of this file it may
run are kept (`Unit.quiet_over`): those whose own analysis finds something are analysed through
it after all, where its calls would have stood for theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Container, ContextManager, Iterable

import libcst as cst

from gradguard.analysis.code_facts import (
    POSITIONAL_INPLACE, SITE_KEYWORDS, CodeFacts, is_site_name, may_change_text, renamed_site,
)
from gradguard.analysis.names import is_torch_name
from gradguard.analysis.values import (
    Definitions, DictValue, EitherCode, FunctionRef, GeneratorValue, ImportRef, ModuleValue, PartialValue,
    SequenceValue, Value,
)
from gradguard.source.skeleton import LazyBlock

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
    self_escapes: bool = False  # `self` used otherwise than for an attribute: it may be called


class QuietEntries:
    """Tells whether an entry point's analysis could meet an in-place change (see the module's
    docstring). What values and functions lead to is kept for the file's run: most entry points
    are methods of a few classes, and call the same functions."""

    def __init__(self, definitions: Definitions, resolve: Callable[[Value], Value],
                 facts: Callable[[cst.CSTNode, Definitions], CodeFacts],
                 without_reading: Callable[[], ContextManager[set[Path]]] | None,
                 wrapped: Container[cst.CSTNode] = ()) -> None:
        self._definitions = definitions
        self._wrapped = wrapped  # functions a decorator of the file wrapped: their calls run its wrapper
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
        """None when `function`'s analysis (with `template` as `self`) may meet an in-place change,
        or when it is a nested function; else the functions of this file it may run."""
        try:
            return _Reach(self).functions(function, template)
        except _MayChange:
            return None

    def code_leads(self, code: Code) -> _Leads:
        """What calling `code` leads to (raises `_MayChange`)."""
        return self._kept_leads(self._code, id(code[0]), code[0], lambda: self._find_code(*code))

    def value_leads(self, value: Value) -> _Leads:
        """What calling, or using the objects of, `value` leads to (raises `_MayChange`)."""
        return self._kept_leads(self._values, id(value), value, lambda: _walked((value,), self))

    def parts_leads(self, module: ModuleValue) -> _Leads:
        """What the submodules and attributes of `module` lead to (not its own call: `forward` of the
        entry point's own object runs only when the object is called)."""
        parts = (*(module.children or ()), *module.named_children.values(),
                 *((module.mapping,) if module.mapping is not None else ()))
        return self._kept_leads(self._values, -id(module), module, lambda: _walked(parts, self))

    def _kept_leads(self, table: dict[int, _Leads | None], key: int, kept: object,
                    find: Callable[[], _Leads]) -> _Leads:
        """`find()`, once per key of `table` (None there: it raised `_MayChange`, raised again)."""
        if key not in table:
            self._kept.append(kept)
            table[key] = None
            try:
                table[key] = find()
            except _MayChange:
                pass
        leads = table[key]
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
                leads: _Leads | None = _walked(attributes, self)
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
        if node in self._wrapped:
            raise _MayChange  # its calls run a wrapper (the decorator's code) the walk does not follow
        body = getattr(node, "body", None)
        if isinstance(body, LazyBlock) and (text := body.unparsed_text) is not None and may_change_text(text):
            raise _MayChange  # another file's function no analysis parsed yet, which parsing would only confirm
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
        return _Leads(tuple(walk.code), tuple(walk.classes), facts.attributes, facts.self_escapes)


def _walked(values: Iterable[Value], quiet: QuietEntries) -> _Leads:
    walk = _ValueWalk(quiet)
    walk.values(values)
    return _Leads(tuple(walk.code), tuple(walk.classes))


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
            given = POSITIONAL_INPLACE.get(value.func.qualname.rpartition(".")[2]) \
                if isinstance(value.func, ImportRef) else None
            if SITE_KEYWORDS & value.kwargs.keys() or (given is not None and len(value.args) >= given):
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
    what it runs leads to, the methods of those classes named by an attribute it uses, and those
    their objects run when called or indexed (not the entry point's own object's, unless `self`
    is used otherwise than for its attributes)."""

    def __init__(self, quiet: QuietEntries) -> None:
        self.quiet = quiet
        self.code: dict[int, Code] = {}
        self.pending: list[Code] = []
        self.classes: dict[tuple[int, str], tuple[bool, bool]] = {}  # whether it may build, call its objects
        self.attributes: set[str] = set()
        self.waiting: dict[str, list[Code]] = {}  # methods of its classes, by a name no code it runs uses yet
        self.owner: tuple[Definitions, str] | None = None
        self.template: ModuleValue | None = None

    def functions(self, function: cst.FunctionDef, template: ModuleValue | None) -> frozenset[cst.FunctionDef]:
        own = self.quiet._definitions
        owner = own.owner_of(function)
        if owner is None and (own.module is None or function not in own.module.body):
            raise _MayChange  # a nested function: it sees its enclosing one's names, which are not known here
        # the class's first: its methods share what they lead to, and a walk of the body is then often spared
        if owner is not None:
            self.owner = (own, owner)
            self._class(own, owner, builds=False, called=False)
        self.template = template
        if template is not None:
            self._leads(self.quiet.parts_leads(template))
        self._code((function, own))
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
            self._class(definitions, name, builds=builds, called=True)
        if leads.self_escapes and self.owner is not None:
            if self.template is not None:
                self._leads(self.quiet.value_leads(self.template))  # its own call: hooks, `inplace`
            self._class(*self.owner, builds=False, called=True)

    def _class(self, definitions: Definitions, name: str, *, builds: bool, called: bool) -> None:
        key = (id(definitions), name)
        built, was_called = self.classes.get(key, (False, False))
        known = key in self.classes
        if known and (built or not builds) and (was_called or not called):
            return
        self.classes[key] = (built or builds, was_called or called)
        methods, leads = self.quiet.class_members(definitions, name)
        for method, code in methods.items():
            if (builds and not built and method in _CONSTRUCTION) or (called and not was_called and method in _IMPLICIT):
                self.pending.extend(code)
            elif not known:
                if method in self.attributes:
                    self.pending.extend(code)
                else:
                    self.waiting.setdefault(method, []).extend(code)
        if not known:
            self._leads(leads)
