"""Abstract values the interpreter computes for Python expressions.

A `TensorValue` stands for one tensor object. Tensors that share one version counter (a base
and its views, `detach()`, returns-self calls, `nn.Parameter(x)`) carry the same
`version_counter` id: an in-place change of any of them bumps the version that autograd
checks for all of them.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterator, TypeVar

import libcst as cst


class Tri(Enum):
    """Three-valued truth: known yes, known no, or unknown."""

    YES = "yes"
    NO = "no"
    MAYBE = "maybe"

    @staticmethod
    def of(flag: bool) -> Tri:
        return Tri.YES if flag else Tri.NO

    def __or__(self, other: Tri) -> Tri:
        if Tri.YES in (self, other):
            return Tri.YES
        if Tri.MAYBE in (self, other):
            return Tri.MAYBE
        return Tri.NO

    def __and__(self, other: Tri) -> Tri:
        if Tri.NO in (self, other):
            return Tri.NO
        if Tri.MAYBE in (self, other):
            return Tri.MAYBE
        return Tri.YES

    def join(self, other: Tri) -> Tri:
        return self if self is other else Tri.MAYBE


T = TypeVar("T")


def shallow(value: T) -> T:
    """A shallow copy of a (slot-less) dataclass instance: its fields, not `copy.copy`'s reduce protocol."""
    copied = object.__new__(type(value))
    copied.__dict__.update(value.__dict__)
    return copied


def evolved(value: T, **changes: object) -> T:
    """`dataclasses.replace(value, **changes)` for the analysis's dataclasses (slot-less, frozen or
    not, without `__post_init__`), copying fields rather than running `__init__`: several times
    faster, and a scan makes hundreds of thousands of such copies."""
    copied = shallow(value)
    copied.__dict__.update(changes)
    return copied


def output(element: Value, index: int) -> Value:
    """The `index`-th of the elements `element` stands for: an output of a multi-output view op
    (`chunk`, `unbind`) knows which it is (torch's error names it); anything else is `element`."""
    if isinstance(element, TensorValue) and element.multi_output_view is not None and index >= 0 \
            and element.later_view is None:
        return evolved(element, output_index=index)
    return element


_ids = itertools.count(1)


def new_version_counter() -> int:
    """A fresh version-counter id (one per newly allocated tensor)."""
    return next(_ids)


@dataclass(frozen=True)
class Origin:
    """Where a tensor came from, in the user's words: `the output of torch.sigmoid`."""

    description: str
    node: cst.CSTNode | None = None


# A tensor indexed by a value the analysis lost (`p[c]`, `c` from `labels.unique()`): an int or a slice
# makes a view, a tensor of several indices a copy.
UNKNOWN_INDEX_VIEW = "an indexed view (or copy: the index is not known)"


@dataclass(frozen=True)
class LaterView:
    """A view taken of an output of a multi-output view op, restricted as that output is: `node` is the
    autograd node torch names in its error (`Permute`; None where unknown), `of` how the output was made."""

    node: str | None
    of: str


@dataclass(frozen=True, eq=False)
class TensorValue:
    """One tensor object as far as autograd's in-place checks are concerned."""

    version_counter: int
    requires_grad: Tri
    is_leaf: bool
    origin: Origin
    alias_certain: bool = True
    view_of_leaf: bool = False
    multi_output_view: str | None = None
    output_index: int | None = None  # which of its multi-output view op's outputs it is, where known (`q, k = ...`)
    later_view: LaterView | None = None  # a view of a multi-output view's output (which is `multi_output_view`)
    is_view: bool = False  # an autograd view of another tensor (`x[0]`, `x.t()`), which `detach_()` refuses
    transposed: bool = False  # its dimensions reordered (`transpose`, `permute`, `.mT`): `contiguous()` copies it
    no_grad_view: bool = False
    function_view: str | None = None  # a view a custom autograd Function returned: that Function's class
    storage_of: int | None = None
    history: frozenset[int] = frozenset()
    may_alias: frozenset[int] = frozenset()  # for one name bound to either of two tensors: their counters
    graph_known: bool = True  # False when it was computed from values the analysis lost: `history` is partial
    from_argument: bool = False  # an argument of unknown type used as a tensor (it may be a list after all)
    # joined with a value that is not a tensor (a number, None, one the analysis lost): the name holds
    # this tensor or that; a backward from it runs from this tensor, a change through it may change nothing
    maybe_other: bool = False
    low_precision: bool = False  # computed in autocast's lower precision (bf16, fp16): `.float()` copies it
    # a leaf's `register_post_accumulate_grad_hook(hook)`s: each runs once a backward accumulated its grad
    grad_hooks: tuple[Value, ...] = ()
    # a clone's: the storage it copied (version counter), the counts of changes recorded and of backward
    # passes run, and the serial of the next save, then: copied back (`p.data.copy_(backup)`) it restores those values
    snapshot: tuple[int, int, int, int] | None = None

    @property
    def storage(self) -> int:
        """The version counter naming the storage it writes to (`.data`'s: its tensor's)."""
        return self.version_counter if self.storage_of is None else self.storage_of

    def fresh_view(self, origin: Origin, *, certain: bool = True, grad_enabled: Tri = Tri.YES,
                   node: str | None = None) -> TensorValue:
        """A view (or returns-self alias) of this tensor: same version counter; `node` is its autograd node."""
        later = None if self.multi_output_view is None else \
            LaterView(node, self.later_view.of if self.later_view is not None else self.origin.description)
        return evolved(
            self,
            origin=origin,
            is_leaf=False if self.requires_grad is Tri.YES else self.is_leaf,
            alias_certain=self.alias_certain and certain,
            view_of_leaf=self.view_of_leaf or (self.is_leaf and self.requires_grad is Tri.YES),
            no_grad_view=self.no_grad_view or grad_enabled is Tri.NO,
            later_view=later,
            is_view=True,
        )


@dataclass(frozen=True, eq=False)
class ArgumentValue:
    """A function parameter of unknown type; it becomes a tensor when used as one."""

    name: str


@dataclass(frozen=True)
class ConstValue:
    """A Python literal (number, string, bool, None). `default_of` names the parameter whose default
    it is, in an analysis no caller gives that parameter to: one possible value, not its value."""

    value: object
    default_of: str | None = field(default=None, compare=False)


@dataclass(frozen=True, eq=False)
class ImportRef:
    """A name bound to something imported: its qualified name, e.g. `torch.nn.functional`."""

    qualname: str


@dataclass(frozen=True)
class StringPattern:
    """A string built from known parts and unknown ones (`f"bias_hh_l{i}"`, None for a hole)."""

    parts: tuple[str | None, ...]

    def matches(self, text: str) -> bool:
        return re.fullmatch("".join(".*" if p is None else re.escape(p) for p in self.parts), text) is not None


@dataclass(frozen=True)
class IntValue:
    """An integer whose value is not known (a loop index, a length)."""


@dataclass(frozen=True)
class NumberValue:
    """A Python number whose value is not known, never a tensor: `float(os.environ.get("LR", 1e-3))`."""


@dataclass(frozen=True)
class BuiltinRef:
    """A builtin function (`zip`, `range`, `sum` ...) not shadowed by a name of the program."""

    name: str


@dataclass(eq=False)
class SequenceValue:
    """A tuple or list of values; `repeated` stands for an unknown number of like elements.

    A list (`mutable`) is one object: `append` and `lst[i] = t` change it for every holder.
    """

    items: tuple[Value, ...] = ()
    repeated: Value | None = None
    mutable: bool = False
    known_length: bool = True  # False once changed where the number of changes is not known (a loop, a branch)

    def item(self, index: int) -> Value:
        if self.repeated is not None:
            return output(self.repeated, index)
        if -len(self.items) <= index < len(self.items):
            return self.items[index]
        return UNKNOWN


@dataclass(frozen=True)
class TensorKey:
    """A dict's key that is a tensor (a hand-written optimizer's `state[p]`): one object, the tensor of
    that version counter made there (`nn.Parameter(w)` of a parameter `w` is another)."""

    version_counter: int
    origin: Origin
    tensor: TensorValue = field(compare=False, repr=False)

    @staticmethod
    def of(value: Value) -> object | None:
        """The key `d[value]` stores under: a constant's value, a tensor's `TensorKey`; None for another value."""
        if isinstance(value, ConstValue):
            return value.value
        if isinstance(value, TensorValue) and value.is_leaf and not value.is_view and not value.maybe_other:
            return TensorKey(value.version_counter, value.origin, value)  # (views of one base share both)
        return None

    @staticmethod
    def value_of(key: object) -> Value:
        """What iterating the dict gives for `key`."""
        return key.tensor if isinstance(key, TensorKey) else ConstValue(key)


class _AnyKey:
    """The key a dict holds what it was given under keys not known (`cache[(id(m), shape)] = v`)."""

    def __repr__(self) -> str:
        return "ANY_KEY"

    def __reduce__(self) -> str:
        return "ANY_KEY"  # unpickled as the one `ANY_KEY`


ANY_KEY = _AnyKey()


@dataclass(eq=False)
class DictValue:
    """A dict keyed by constants or tensors (`TensorKey`); `complete` is false once a key not known
    was stored (what was stored under such keys is joined under `ANY_KEY`)."""

    entries: dict[object, Value] = field(default_factory=dict)
    complete: bool = True
    factory: Value | None = None  # a `defaultdict`'s: what a missing key's `d[key]` stores and gives


@dataclass(eq=False)
class ModuleValue:
    """An object with identity: an `nn.Module` instance (a known `torch.nn` class, a container,
    a user class) or, with `is_module` false, an instance of a plain user class (a trainer, an
    agent) whose attributes are in `named_children`. `torch_base` is the `torch.nn` container
    a user class derives from (`Sequential`, `ModuleList`), if any."""

    class_name: str
    node: cst.CSTNode | None
    parameters: dict[str, TensorValue] = field(default_factory=dict)
    children: list[ModuleValue] | None = None
    named_children: dict[str, Value] = field(default_factory=dict)
    inplace: bool = False
    training: Tri = Tri.YES
    user_class: str | None = None
    definitions: Definitions | None = None
    is_module: bool = True
    torch_base: str | None = None
    returns_input: bool = False  # a `torch.nn` module that returns its input as it is (dropout with p=0)
    copies_input: bool = False  # one that works on a copy of its input (`MultiheadAttention(batch_first=True)`)
    renorms_weight: bool = False  # one whose call renormalizes its weight in place (`Embedding(max_norm=...)`)
    forward_hooks: list[Value] = field(default_factory=list)  # `register_forward_hook(f)`: f(module, args, output)
    forward_pre_hooks: list[Value] = field(default_factory=list)  # `register_forward_pre_hook(f)`: f(module, args)
    backward_hooked: bool = False  # `register_full_backward_hook`: its outputs are views of a `BackwardHookFunction`
    buffers: dict[str, TensorValue] = field(default_factory=dict)  # `running_mean`, `register_buffer(...)`
    # the tensors a parametrization (or pruning) computes its tensor from: (function, dotted path, the
    # dotted path of the tensor whose requiring grad makes each forward save it (None: never), what it is)
    saves_originals: tuple[tuple[str, str, str | None, str], ...] = ()
    # an instance of a `dict` or `list` subclass: its items (`ClassInstantier(ACT2CLS)`, `LogitsProcessorList([...])`)
    mapping: DictValue | SequenceValue | None = None
    children_exact: bool = True  # False: `children` stand for a number of modules not known (`ModuleList(gen)`)
    child_names: tuple[str, ...] = ()  # the names of `children` when not their indices (`Sequential(OrderedDict(...))`)
    built_in: str | None = None  # the file whose code constructed it (a `torch.nn` module, a user class's instance)
    compiled: str | None = None  # `torch.compile(module)`, `module.compile()`: the backend its calls run under

    def wrapped(self) -> ModuleValue | None:
        """The module a `DataParallel`/`DistributedDataParallel` wrapper runs (its `.module`), if this is one."""
        inner = self.named_children.get("module") if self.class_name in _WRAPPERS and self.user_class is None else None
        return inner if isinstance(inner, ModuleValue) else None

    def tree(self) -> list[ModuleValue]:
        """This module and every module under it, each once (objects may refer to each other)."""
        found: list[ModuleValue] = []
        visited: set[int] = set()
        pending: list[ModuleValue] = [self]
        while pending:
            module = pending.pop(0)
            if id(module) in visited:
                continue
            visited.add(id(module))
            found.append(module)
            pending.extend(c for c in [*(module.children or []), *module.named_children.values()]
                           if isinstance(c, ModuleValue))
        return found

    def submodules(self) -> tuple[list[ModuleValue], bool]:
        """This module and every module under it (`modules()`), and whether the list is complete."""
        found = self.tree()
        return found, all(m.children is not None or m.class_name not in _CONTAINERS for m in found)

    def holds_parameters(self) -> bool:
        """Whether it is an `nn.ParameterList` or an `nn.ParameterDict` (its `parameters` the tensors it holds)."""
        return self.user_class is None and self.class_name in ("ParameterList", "ParameterDict")

    def all_parameters(self) -> tuple[list[TensorValue], bool]:
        """Every parameter of the module and its children, once (a tied weight under two names is
        one parameter), and whether the list is complete."""
        found: list[TensorValue] = []
        complete = True
        for module in self.tree():
            found.extend(module.parameters.values())
            found.extend(v for v in module.named_children.values()
                         if isinstance(v, TensorValue) and v.is_leaf and v.requires_grad is Tri.YES)
            if (module.children is None and module.class_name in _CONTAINERS) or \
                    (module.holds_parameters() and not module.children_exact):
                complete = False
            if module.user_class and any(not isinstance(v, (ModuleValue, TensorValue, ConstValue))
                                         for v in module.named_children.values()):
                complete = False
        once: dict[object, TensorValue] = {}  # one object (a tied weight), by `TensorKey`
        for p in found:
            once.setdefault(TensorKey.of(p) or id(p), p)
        return list(once.values()), complete

    def named_parameters(self) -> list[tuple[str, TensorValue]]:
        """`named_parameters()`: each parameter with its dotted name, in registration order, once (a
        tied weight by its first name only)."""
        named: list[tuple[str, TensorValue]] = []
        _visit_parameters(self, "", named, set())
        once: dict[object, tuple[str, TensorValue]] = {}  # one object (a tied weight): its first name
        for name, p in named:
            once.setdefault(TensorKey.of(p) or id(p), (name, p))
        return list(once.values())

    def has_trainable_parameters(self) -> Tri:
        params, complete = self.all_parameters()
        if any(p.requires_grad is Tri.YES for p in params):
            return Tri.YES
        return Tri.NO if complete else Tri.MAYBE


def _visit_parameters(owner: ModuleValue, prefix: str, named: list[tuple[str, TensorValue]], visited: set[int]) -> None:
    if id(owner) in visited:
        return
    visited.add(id(owner))
    named.extend((prefix + k, v) for k, v in owner.parameters.items())
    for key, child in owner.named_children.items():
        if isinstance(child, TensorValue) and child.is_leaf and child.requires_grad is Tri.YES:
            named.append((prefix + key, child))
        elif isinstance(child, ModuleValue):
            _visit_parameters(child, f"{prefix}{key}.", named, visited)
    for index, child in enumerate(owner.children or []):
        _visit_parameters(child, f"{prefix}{index}.", named, visited)


@dataclass(frozen=True, eq=False)
class ParametersValue:
    """The result of `module.parameters()`."""

    tensors: tuple[TensorValue, ...]
    complete: bool


@dataclass(frozen=True, eq=False)
class GradScalerValue:
    """A `torch.amp.GradScaler`: `scale(loss)` is the loss times its scale, in the loss's graph;
    `step(optimizer)` runs `optimizer.step()`."""


@dataclass(eq=False)
class ArgumentParserValue:
    """An `argparse.ArgumentParser`, its options added so far: each destination's default, marked
    as the default of its flag (`default_of="--lr"`); a default not known is `UNKNOWN`."""

    options: dict[str, Value] = field(default_factory=dict)  # each destination's default (its first option's)
    flags: dict[str, tuple[str, str]] = field(default_factory=dict)  # option string -> (destination, how it reads)
    positionals: list[tuple[str, str]] = field(default_factory=list)  # (destination, how it reads), in order
    defaults: dict[str, Value] = field(default_factory=dict)  # `set_defaults(...)`'s


@dataclass(frozen=True, eq=False)
class HookHandle:
    """What `register_post_accumulate_grad_hook(hook)` or a module's `register_forward_hook(hook)`
    (`register_forward_pre_hook`) returns: its `remove()` takes `hook` off the tensors, or `module`."""

    hook: Value
    module: ModuleValue | None = None
    others: tuple[HookHandle, ...] = ()  # the handles of the same hook on other modules it stands for too (a join)


@dataclass(frozen=True, eq=False)
class OptimizerValue:
    """A `torch.optim` optimizer: `step()` changes its parameters in place, unless its `zero_grad()`
    (`set_to_none=True`, the default) left them no grad and no backward may have run since: torch's
    optimizers skip a parameter whose grad is None. `cleared_at`: the run's count of backward passes
    and of hand-overs to code not followed (which may run one) at that `zero_grad()`."""

    class_name: str
    parameters: tuple[TensorValue, ...]
    cleared_at: tuple[int, int] | None = None


@dataclass(frozen=True, eq=False)
class DistributionValue:
    """A `torch.distributions` object: what it computes (`log_prob`, `entropy`, `rsample`, `.mean`) is
    in the graph of the tensors it was built from; what it draws with `sample()` is in no graph."""

    class_name: str
    parameters: tuple[TensorValue, ...]


@dataclass(frozen=True, eq=False)
class FunctionRef:
    """A function or class defined in an analysed file (`definitions` is that file's)."""

    name: str
    node: cst.FunctionDef | cst.ClassDef = field(repr=False)
    definitions: Definitions = field(repr=False)
    bound_self: ModuleValue | None = field(default=None, repr=False)
    closure: dict[str, Value] | None = field(default=None, repr=False)  # the enclosing function's names
    compiled: str | None = None  # `torch.compile(fn)`: the backend its calls run under (a decorator: `compiled_by`)


@dataclass(frozen=True, eq=False)
class Compiler:
    """`torch.compile(backend=...)` without the code, `torch._dynamo.optimize(...)`: a call of it
    (or a decorator) compiles its argument for `backend`."""

    backend: str


@dataclass(frozen=True, eq=False)
class PartialValue:
    """`functools.partial(func, *args, **kwargs)`: a call of it calls `func` with `args` before the
    call's own and with `kwargs`, the call's keywords overriding them."""

    func: Value
    args: tuple[Value, ...]
    kwargs: dict[str, Value]


@dataclass(frozen=True, eq=False)
class KeywordHook(PartialValue):
    """A forward hook or pre-hook registered `with_kwargs=True`: it is given the call's keywords
    too (`hook(module, args, kwargs, output)`, `pre_hook(module, args, kwargs)`)."""


@dataclass(frozen=True, eq=False)
class GeneratorValue:
    """A call of a generator function (`def` with `yield`), whose body has not run: iterating it
    runs the body, and gives the values it yields (`enumerated`: `enumerate(gen)`, index first)."""

    func: FunctionRef
    args: tuple[Value, ...]
    kwargs: dict[str, Value]
    node: cst.CSTNode = field(repr=False)
    report: str = "caller-saves"
    enumerated: bool = False


@dataclass(eq=False)
class Definitions:
    """One file's top-level names: the globals its functions see, and its classes."""

    path: str | None
    module: cst.Module | None = field(default=None, repr=False)
    globals: dict[str, Value] = field(default_factory=dict, repr=False)
    classes: dict[str, tuple[cst.ClassDef, ModuleValue | None]] = field(default_factory=dict, repr=False)

    bases: dict[str, tuple[Value, ...]] = field(default_factory=dict, repr=False)
    class_attributes: dict[str, dict[str, Value]] = field(default_factory=dict, repr=False)
    star_imports: list[str] = field(default_factory=list, repr=False)  # `from .activations import *`: the modules
    syntax_facts: dict[tuple[cst.CSTNode, object], object] = field(default_factory=dict, repr=False)  # `syntax_fact`
    # an imported file's: the steps of reading it and of each file its reading needed (`Budget.charge`)
    reading_cost: dict[str, int] = field(default_factory=dict, repr=False)
    unread: frozenset[str] = field(default=frozenset(), repr=False)  # the imported files its reading left unread
    text: str | None = field(default=None, repr=False)  # the text `module` was parsed from, when at hand
    methods: dict[str, tuple[cst.ClassDef, dict[str, cst.FunctionDef]]] = field(default_factory=dict, repr=False)  # `methods_of`

    def __getstate__(self) -> dict[str, object]:
        """What a stored reading keeps: not the facts later analyses found about its nodes, nor its text."""
        return {**self.__dict__, "syntax_facts": {}, "text": None, "methods": {}}

    def mentions(self, word: str) -> bool:
        """Whether `word` may be in the file's code: False only when its text is at hand without it
        (no `yield` in the text: none of its functions is a generator, no walk needed to tell)."""
        return self.text is None or word in self.text

    def start(self, module: cst.Module) -> None:
        """Bind nothing yet, for a run of `module`'s top level (new containers: those of a run
        before stay as they were, `TopLevel`)."""
        self.module, self.globals, self.classes, self.bases = module, {}, {}, {}
        self.class_attributes, self.star_imports = {}, []

    def mro(self, class_name: str, depth: int = 0) -> Iterator[tuple[Definitions, str]]:
        """The class and its bases of the project, in the order Python searches them (depth first)."""
        if class_name not in self.classes or depth > 16:
            return
        yield self, class_name
        for base in self.bases.get(class_name, ()):
            if isinstance(base, FunctionRef) and isinstance(base.node, cst.ClassDef):
                yield from base.definitions.mro(base.name, depth + 1)

    def linearised(self, class_name: str) -> list[tuple[Definitions, str]]:
        """The class and its bases of the project in Python's method resolution order (C3: a mixin's
        `super()` reaches the class after it in its instance's class, not its own base)."""
        if class_name not in self.classes:
            return []
        return _c3(self, class_name, {}, 0) or list(self.mro(class_name))

    def class_attribute(self, class_name: str, attribute: str) -> Value | None:
        """A name assigned in the body of class `class_name` or of one of its bases (`SIZES = ...`)."""
        return next((found for definitions, name in self.mro(class_name)
                     if (found := definitions.class_attributes.get(name, {}).get(attribute)) is not None), None)

    def method(self, class_name: str, method: str, *, after: bool = False) -> tuple[cst.FunctionDef, Definitions] | None:
        """The method `method` of class `class_name` as Python finds it (`after`: as `super()` in
        that class finds it, in its bases), with the file defining it."""
        for definitions, name in itertools.islice(self.mro(class_name), 1 if after else 0, None):
            found = definitions.methods_of(name).get(method)
            if found is not None:
                return found, definitions
        return None

    def methods_of(self, class_name: str) -> dict[str, cst.FunctionDef]:
        """The methods defined in the body of this file's class `class_name`, by name (the first
        of a name): walked once for each version of the class statement."""
        node = self.classes[class_name][0]
        held = self.methods.get(class_name)
        if held is None or held[0] is not node:
            methods: dict[str, cst.FunctionDef] = {}
            for statement in node.body.body:
                if isinstance(statement, cst.FunctionDef):
                    methods.setdefault(statement.name.value, statement)
            held = self.methods[class_name] = (node, methods)
        return held[1]

    def owner_of(self, function: cst.FunctionDef) -> str | None:
        """The class of this file whose body defines `function`, if it is a method."""
        for name, (node, _) in self.classes.items():
            if isinstance(node.body, cst.IndentedBlock) and function in node.body.body:
                return name
        return None


def _c3(definitions: Definitions, name: str, known: dict[tuple[int, str], list[tuple[Definitions, str]] | None],
        depth: int) -> list[tuple[Definitions, str]] | None:
    """C3's order of class `name` of `definitions` (None: Python refuses the class, or too deep);
    `known` holds the orders of the bases merged so far."""
    if (id(definitions), name) in known:
        return known[id(definitions), name]
    bases = [(b.definitions, b.name) for b in definitions.bases.get(name, ())
             if isinstance(b, FunctionRef) and isinstance(b.node, cst.ClassDef) and b.name in b.definitions.classes]
    orders = [_c3(d, n, known, depth + 1) for d, n in bases] if depth <= 16 else [None]
    result: list[tuple[Definitions, str]] | None = [(definitions, name)]
    if any(order is None for order in orders):
        result = None
    else:
        pending = [[(id(d), n, d) for d, n in order] for order in (*orders, bases)]  # type: ignore[union-attr]
        while result is not None and any(pending):
            head = next((seq[0] for seq in pending if seq and not any(
                seq[0][:2] in [k[:2] for k in other[1:]] for other in pending)), None)
            if head is None:
                result = None  # no consistent order
            else:
                result.append((head[2], head[1]))
                pending = [[k for k in seq if k[:2] != head[:2]] for seq in pending]
    known[id(definitions), name] = result
    return result


@dataclass(frozen=True)
class TopLevel:
    """What a file's `Definitions` held when an interpretation of it ended. An open document keeps
    one `Definitions` from version to version (what its values refer to stays the same object,
    so a checkpoint's values need no new one); each run starts from this, the last finished run's."""

    module: cst.Module | None
    globals: dict[str, Value]
    classes: dict[str, tuple[cst.ClassDef, ModuleValue | None]]
    bases: dict[str, tuple[Value, ...]]
    class_attributes: dict[str, dict[str, Value]]
    star_imports: list[str]

    @classmethod
    def of(cls, definitions: Definitions) -> TopLevel:
        return cls(definitions.module, definitions.globals, definitions.classes, definitions.bases,
                   definitions.class_attributes, definitions.star_imports)

    def put_into(self, definitions: Definitions) -> None:
        definitions.module, definitions.globals, definitions.classes = self.module, self.globals, self.classes
        definitions.bases, definitions.class_attributes = self.bases, self.class_attributes
        definitions.star_imports = self.star_imports


@dataclass(frozen=True, eq=False)
class SuperValue:
    """`super()` in a method of `class_name` (of `definitions`) called on `instance`."""

    instance: ModuleValue
    class_name: str
    definitions: Definitions


_CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")
_WRAPPERS = ("DataParallel", "DistributedDataParallel")


class _Unknown:
    """A value the analysis cannot follow: nothing is concluded from it."""

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:
        return "UNKNOWN"  # unpickled as the one `UNKNOWN`, which the analysis compares by identity


UNKNOWN = _Unknown()


@dataclass(frozen=True, eq=False)
class LostValue:
    """A value a call the analysis did not follow returned, from arguments holding tensors: what it
    is stays unknown, but its graph, if it has one, may hold the saves of theirs (`history`), and
    no others the analysis knows of (`loss = criterion(out, y)`: `loss.backward()` may reach `out`'s)."""

    history: frozenset[int]

@dataclass(frozen=True, eq=False)
class EitherCode:
    """One of a few functions, picked by a test the analysis does not know (`func = _single if
    foreach else _multi`): a call runs each of them, and its outcome is their join."""

    alternatives: tuple[Value, ...]


@dataclass(frozen=True, eq=False)
class FunctionApply:
    """`Fn.apply` of a custom `torch.autograd.Function` class: a call runs its `forward`."""

    function: FunctionRef


@dataclass(eq=False)
class CustomOp:
    """A function `@torch.library.custom_op` made an operator: a call runs it with grad off, and its
    output is one node of the graph saving what the `setup_context` given to `register_autograd` saves."""

    function: FunctionRef
    setup: Value | None = None
    name: str | None = None  # its qualified name (`"mylib::swish"`), which `torch.library.register_autograd` is given


@dataclass(eq=False)
class FunctionCtx:
    """The `ctx` a custom Function's `forward` (or `setup_context`) is given: the tensors it saves
    for backward (`save_for_backward`) and those it says it changed in place (`mark_dirty`)."""

    saved: list[Value] = field(default_factory=list)
    dirty: list[Value] = field(default_factory=list)


MAX_ALTERNATIVES = 4  # functions an `EitherCode` holds at most; a join of more is unknown


Value = (TensorValue | ArgumentValue | ConstValue | StringPattern | IntValue | NumberValue | BuiltinRef | ImportRef | SequenceValue | DictValue
         | ModuleValue | ParametersValue | OptimizerValue | GradScalerValue | HookHandle | ArgumentParserValue | DistributionValue | FunctionRef | SuperValue | PartialValue
         | Compiler | GeneratorValue | LostValue | EitherCode | FunctionApply | CustomOp | FunctionCtx | _Unknown)


@dataclass(frozen=True)
class CompiledRegion:
    """Code `torch.compile` compiled, running: the backend it was compiled for, and the call that
    entered it (None: a compiled function analysed without a known caller)."""

    backend: str
    call: cst.CSTNode | None = None


@dataclass(frozen=True)
class SavedRecord:
    """An op saved (a member of) this version counter for backward, at the version it had then."""

    saved_by: str
    aten_op: str
    what: str
    node: cst.CSTNode
    certain: bool
    serial: int = 0
    at_call: bool = True
    run_by: cst.CSTNode | None = None
    file: str | None = None  # the file whose code made the save (None: unknown)
    scope: cst.CSTNode | None = None  # the function whose code made the save (None: module-level code)
    compiled: CompiledRegion | None = None  # the compiled region (`torch.compile`) that made the save
    cast: bool = False  # made under autocast by an op that may cast what it saves (then a copy is saved)


def contents(value: Value, *, dicts: bool = False) -> Iterator[Value]:
    """What `value` holds once lists and tuples (and, with `dicts`, dicts) are opened, each
    container once: a list may hold itself."""
    pending, opened = [value], set()
    while pending:
        item = pending.pop()
        if isinstance(item, SequenceValue) or (dicts and isinstance(item, DictValue)):
            if id(item) not in opened:
                opened.add(id(item))
                pending.extend(item.entries.values() if isinstance(item, DictValue)
                               else (*item.items, *([item.repeated] if item.repeated is not None else [])))
        else:
            yield item


def lost_from(arguments: list[Value]) -> Value:
    """What a call the analysis does not follow returns: lost, from the tensors among its arguments
    (unknown when none holds a save)."""
    history = provenance(SequenceValue(tuple(arguments)))
    saves = history[0] | history[1]
    return LostValue(saves) if saves else UNKNOWN


def provenance(value: Value) -> tuple[frozenset[int], frozenset[int]]:
    """The saves a backward pass from `value` (a tensor, or the tensors a container holds) reaches,
    and those it may reach through calls the analysis did not follow (`LostValue`). A graph that is
    partly lost reaches the saves of its known part and no others; a value with no known
    provenance reaches none."""
    reached: frozenset[int] = frozenset()
    possible: frozenset[int] = frozenset()
    for item in contents(value, dicts=True):
        if isinstance(item, TensorValue):
            reached |= item.history
        elif isinstance(item, LostValue):
            possible |= item.history
    return reached, possible - reached


def reachable_saves(roots: list[Value]) -> frozenset[int]:
    """The saves a backward pass may reach from anything `roots` hold: the tensors themselves, those
    in containers, an object's attributes, parameters and buffers, a closure's or a partial's values
    (`provenance` of each, calls not followed included); each object opened once."""
    found: set[int] = set()
    pending, opened = list(roots), set()
    while pending:
        item = pending.pop()
        if id(item) in opened:
            continue
        opened.add(id(item))
        if isinstance(item, (TensorValue, LostValue)):
            found |= item.history
        elif isinstance(item, SequenceValue):
            pending.extend((*item.items, *([item.repeated] if item.repeated is not None else [])))
        elif isinstance(item, DictValue):
            pending.extend(item.entries.values())
        elif isinstance(item, ModuleValue):
            pending.extend((*item.parameters.values(), *item.buffers.values(), *item.named_children.values(),
                            *(item.children or ()), *item.forward_hooks, *item.forward_pre_hooks,
                            *([item.mapping] if item.mapping else [])))
        elif isinstance(item, (PartialValue, GeneratorValue)):
            pending.extend((*item.args, *item.kwargs.values()))
        elif isinstance(item, FunctionRef) and item.closure is not None:
            pending.extend(item.closure.values())
        elif isinstance(item, DistributionValue):
            pending.extend(item.parameters)
    return frozenset(found)


def join_values(a: Value, b: Value) -> Value:
    """The value of a name after two paths meet. A tensor met by a number, None or an unknown value
    stays the tensor, marked `maybe_other` (`loss = 0` then `loss += t` in a loop: a tensor in `t`'s
    graph, or still the number); a module met by its `DataParallel` wrapper is the wrapper; two other
    values that differ are unknown."""
    if a is b:
        return a
    if isinstance(b, TensorValue) and not isinstance(a, TensorValue):
        a, b = b, a
    if isinstance(a, TensorValue) and (b is UNKNOWN or (isinstance(b, ConstValue) and _number_or_none(b.value))):
        return a if a.maybe_other else evolved(a, maybe_other=True)
    if isinstance(a, TensorValue) and isinstance(b, TensorValue) and a.version_counter == b.version_counter:
        return evolved(
            a,
            requires_grad=a.requires_grad.join(b.requires_grad),
            is_leaf=a.is_leaf and b.is_leaf,
            # a view made under no_grad on one path, not on the other: a view that may be a copy
            alias_certain=a.alias_certain and b.alias_certain and a.no_grad_view == b.no_grad_view,
            view_of_leaf=a.view_of_leaf and b.view_of_leaf,
            multi_output_view=a.multi_output_view if a.multi_output_view == b.multi_output_view else None,
            output_index=a.output_index if a.output_index == b.output_index else None,
            later_view=a.later_view if a.later_view == b.later_view else None,
            is_view=a.is_view and b.is_view,
            no_grad_view=a.no_grad_view or b.no_grad_view,
            history=a.history | b.history,
            graph_known=a.graph_known and b.graph_known,
            maybe_other=a.maybe_other or b.maybe_other,
            low_precision=a.low_precision and b.low_precision,
        )
    if isinstance(a, ConstValue) and isinstance(b, ConstValue) and a.value == b.value:
        return a
    if isinstance(a, _CODE) and isinstance(b, _CODE):
        return _either(a, b)
    if isinstance(a, ModuleValue) and isinstance(b, ModuleValue) and (a.wrapped() is b or b.wrapped() is a):
        return a if a.wrapped() is b else b  # `model` or `nn.DataParallel(model)`: either runs the model
    if isinstance(a, OptimizerValue) and isinstance(b, OptimizerValue) and \
            {p.version_counter for p in a.parameters} == {p.version_counter for p in b.parameters}:
        # either optimizer class (`try: Adam(..., betas=...) except TypeError: ...`): a step changes the
        # same; grads cleared on both paths only
        return a if a.cleared_at == b.cleared_at else evolved(a, cleared_at=None)
    if NumberValue() in (a, b) and all(_a_number(v) for v in (a, b)):
        return NumberValue()  # (two equal values returned above)
    if isinstance(a, IntValue) and isinstance(b, IntValue):
        return a
    if isinstance(a, HookHandle) and isinstance(b, HookHandle) and a.hook is b.hook:
        # the handles of one hook on several tensors or modules (`for h in handles: h.remove()`): each
        return a if a.module is b.module else evolved(a, others=(*a.others, b, *b.others))
    return UNKNOWN


def _a_number(value: Value) -> bool:
    return isinstance(value, (IntValue, NumberValue)) or (
        isinstance(value, ConstValue) and value.value is not None and _number_or_none(value.value))


_CODE = (FunctionRef, ImportRef, PartialValue, EitherCode)


def _either(a: Value, b: Value) -> Value:
    """The join of two functions: either of them (the same function once), unknown past `MAX_ALTERNATIVES`."""
    alternatives: list[Value] = []
    for value in (a, b):
        for alternative in value.alternatives if isinstance(value, EitherCode) else (value,):
            if not any(alternative is known or alternative == known for known in alternatives):
                alternatives.append(alternative)
    if len(alternatives) == 1:
        return alternatives[0]
    return EitherCode(tuple(alternatives)) if len(alternatives) <= MAX_ALTERNATIVES else UNKNOWN


def truth(value: Value) -> bool | None:
    """`bool(value)` where it is known: a constant, a container whose items are known (`if kwargs:`), a class."""
    if isinstance(value, ConstValue):
        return bool(value.value) if isinstance(value.value, (bool, int, float, str, type(None))) else None
    if isinstance(value, DictValue) and value.complete:
        return bool(value.entries)
    if isinstance(value, SequenceValue) and value.repeated is None and (value.items or value.known_length):
        return bool(value.items)
    if isinstance(value, (FunctionRef, BuiltinRef, PartialValue, GeneratorValue, EitherCode)):
        return True
    return None


def _number_or_none(value: object) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
