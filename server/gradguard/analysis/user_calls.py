"""Calls of the project's own functions and methods, interpreted with the caller's arguments and saves."""

from __future__ import annotations

import sys
from typing import Callable, TypeVar

import libcst as cst

from gradguard.analysis import budget
from gradguard.analysis.budget import OverBudget
from gradguard.analysis.code_facts import CodeFacts, code_facts
from gradguard.analysis.names import dotted_name, is_torch_name, normalise_torch_name
from gradguard.analysis.shared import CHANGED_OBJECT, RETURNED, GeneratorRun, Part, Returns
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    ConstValue,
    Definitions,
    DictValue,
    FunctionRef,
    GeneratorValue,
    ImportRef,
    IntValue,
    NumberValue,
    ModuleValue,
    OptimizerValue,
    ParametersValue,
    PartialValue,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Value,
    contents,
    evolved,
    new_version_counter,
)
from gradguard.knowledge import modules as module_facts
from gradguard.source.walk import descendants, in_same_scope, in_statements

_MAX_CALL_DEPTH = 6
_LIBRARY_DEPTH = 4  # more, for calls into a library's code (factories call factories: `create_model` → `_create_resnet` → ...)
_REENTRIES = 1  # calls of a function already on the stack followed in one stack (`_reentered`)
MAX_FOLLOWED_CALLS = 800  # calls followed per analysed function (and per module level)


_CARRIERS = (TensorValue, ModuleValue, ParametersValue, OptimizerValue, GeneratorValue)


def _carries_tensors(value: Value | None, arguments: bool = True) -> bool:
    """Whether `value` holds tensors, modules, their parameters, an optimizer of them or a generator
    (of batches: what it yields is known once iterated), in containers too (or, with `arguments`,
    values that may be tensors)."""
    return any(isinstance(item, _CARRIERS) or (arguments and isinstance(item, ArgumentValue))
               for item in contents(value, dicts=True))


def _holds_code(value: Value | None) -> bool:
    """Whether `value` is, or holds, a class whose call builds an object or a function: a `torch.nn`
    module's (`ACTS = {"relu": nn.ReLU}`), or a class, function or lambda of the project's (a
    registry a factory picks from by name: `POSTPROC = {"sigmoid": lambda t: t.sigmoid_()}`)."""
    registry = isinstance(value, (DictValue, SequenceValue))  # (a function itself: any call of another one)
    return value is not None and any(
        (isinstance(item, ImportRef) and is_torch_name(item.qualname)
         and normalise_torch_name(item.qualname).removeprefix("torch.nn.") in module_facts.MODULES)
        or (isinstance(item, FunctionRef) and (registry or isinstance(item.node, cst.ClassDef)))
        for item in contents(value, dicts=True))


_SEQUENCES = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "MutableSequence", "Iterable", "Iterator",
                        "ModuleList"})
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "ModuleDict"})


def _annotated_kind(annotation: cst.BaseExpression) -> str | None:
    """"sequence" or "mapping" for `list[Tensor]`, `tuple[...]`, `Dict[str, Tensor]` ..."""
    if isinstance(annotation, cst.BinaryOperation) or (  # `list | None` may be None: nothing is decided
            isinstance(annotation, cst.Subscript) and (dotted_name(annotation.value) or "").endswith("Optional")):
        return None
    if isinstance(annotation, cst.Subscript):
        annotation = annotation.value
    name = (dotted_name(annotation) or "").rsplit(".", 1)[-1]
    if name in _SEQUENCES:
        return "sequence"
    if name in _MAPPINGS:
        return "mapping"
    return None


_BUILDS = frozenset({"Sequential", "ModuleList", "ModuleDict", "Parameter", "torch", "nn", *module_facts.MODULES})


_PARSES = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args"})


def _may_build(facts: CodeFacts) -> bool:
    """Whether a function called without tensors may still build modules or tensors (a factory:
    `def mlp(sizes): return nn.Sequential(...)`, `def make_act(): return nn.Sigmoid()`, a generator
    of batches), or the script's options: it returns (or yields) something and names `torch`,
    `torch.nn` or one of its modules, or parses a command line (`return parser.parse_args()`)."""
    return facts.returns_value and not (_BUILDS.isdisjoint(facts.names) and _BUILDS.isdisjoint(facts.attributes)
                                        and _PARSES.isdisjoint(facts.attributes))


def _builds_functions(function: cst.FunctionDef) -> bool:
    """Whether a function returns a value and defines a function or a lambda (`return hook` after
    `def hook(module, args): ...`, `return lambda t: t - delta`, a list of them): a factory of hooks,
    activations or post-processing steps, whose closures the caller calls later."""
    return _returns(function) and any(isinstance(node, (cst.FunctionDef, cst.Lambda))
                                      for node in descendants(function.body))


def _returns(function: cst.FunctionDef) -> bool:
    """Whether a function returns a value somewhere (a library's factory: `create_act_layer("relu")`),
    nested functions included. Only statements are walked: a `return` is never inside an expression."""
    return any(isinstance(node, cst.Return) and node.value is not None
               for node in descendants(function.body, into=in_statements))


FactT = TypeVar("FactT")
FactFunction = TypeVar("FactFunction", bound=Callable[..., object])


def absent_without(word: str, absent: object) -> Callable[[FactFunction], FactFunction]:
    """Marks a syntax fact that is `absent` for every node of a file whose text has no `word`
    (`syntax_fact` then spares the walk: `is_generator` of a function in a file without `yield`)."""
    def mark(fact: FactFunction) -> FactFunction:
        fact.absent_without = (word, absent)  # type: ignore[attr-defined]
        return fact
    return mark


@absent_without("yield", False)
def _yields(callee: cst.CSTNode) -> bool:
    """Whether `callee` is a generator function (not a class)."""
    return isinstance(callee, cst.FunctionDef) and is_generator(callee)


@absent_without("yield", False)
def is_generator(function: cst.FunctionDef) -> bool:
    """Whether `function` is a generator function: a `yield` in its own body."""
    return bool(yield_nodes(function))


@absent_without("yield", frozenset())
def yield_nodes(function: cst.FunctionDef) -> frozenset[cst.Yield]:
    """The `yield`s of `function`'s own body (not of a function, lambda or class defined inside it)."""
    return frozenset(node for node in descendants(function.body, into=in_same_scope) if isinstance(node, cst.Yield))


def _changeable(value: Value | None) -> bool:
    """Whether `value` is an object whose contents code can change (tensors aside: their changes are `touched`)."""
    return isinstance(value, (ModuleValue, DictValue, OptimizerValue)) or (
        isinstance(value, SequenceValue) and value.mutable)


def _holds_older(value: Value, first_new: int) -> bool:
    """Whether `value` holds a tensor made before `first_new` (a global, a parameter of a module made before):
    a copy of it would not be that tensor."""
    pending, seen = [value], set()
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, TensorValue):
            if item.version_counter <= first_new:
                return True
        elif isinstance(item, ModuleValue):
            pending += [*item.parameters.values(), *item.buffers.values(), *(item.children or ()),
                        *item.named_children.values()]
        elif isinstance(item, (SequenceValue, DictValue)):
            pending += contents(item, dicts=True)
        elif isinstance(item, OptimizerValue):
            pending += item.parameters
        elif isinstance(item, PartialValue):
            pending += [item.func, *item.args, *item.kwargs.values()]
    return False


def constant_key(args: list[Value], kwargs: dict[str, Value]) -> tuple[object, ...] | None:
    """What identifies a call whose arguments are all constants (numbers, strings, classes,
    functions, or values not known at all, which carry nothing of the caller's: an argument of
    unknown type, `config` in `Block(config)`, carries only its name), or None when one of them
    is an object or a tensor."""
    key: list[object] = []
    for name, value in [*enumerate(args), *sorted(kwargs.items())]:
        if value is UNKNOWN:
            key.append((name, "?"))
        elif isinstance(value, ArgumentValue):
            key.append((name, "argument", value.name))
        elif isinstance(value, ConstValue) and isinstance(value.value, (int, float, str, bool, type(None))):
            key.append((name, "c", type(value.value).__name__, value.value))
        elif isinstance(value, IntValue):
            key.append((name, "int"))
        elif isinstance(value, NumberValue):
            key.append((name, "number"))
        elif isinstance(value, ImportRef):
            key.append((name, "import", value.qualname))
        elif isinstance(value, FunctionRef) and value.bound_self is None:
            key.append((name, "def", id(value.node)))
        else:
            return None
    return tuple(key)


def _add_saves(saves: dict[int, tuple[SavedRecord, ...]], more: dict[int, tuple[SavedRecord, ...]]) -> None:
    """Add to `saves` the records of `more` it does not have (a certain one replacing its uncertain copy)."""
    for vc, records in more.items():
        held = list(saves.get(vc, ()))
        for record in records:
            if record in held:
                continue
            doubtful = evolved(record, certain=False)
            if record.certain and doubtful in held:
                held[held.index(doubtful)] = record
            else:
                held.append(record)
        saves[vc] = tuple(held)


NodeT = TypeVar("NodeT", bound=cst.CSTNode)


class UserCalls(Part):
    """The interpreter's part that follows calls into the file's and the project's own code."""

    def syntax_fact(self, node: NodeT, fact: Callable[[NodeT], FactT], definitions: Definitions | None = None) -> FactT:
        """`fact(node)`, a fact of the code alone (a walk of `node`), computed once per node: in this
        analysis, or for as long as the index keeps the reading of `definitions`' file (another
        file's, whose functions every file importing it calls); `node` is of `definitions`' file
        (None: this one), whose text may answer for the walk (`absent_without`)."""
        facts = definitions.syntax_facts if definitions is not None and definitions is not self.run.definitions \
            else self.run.syntax_facts
        key = (node, fact)
        if key not in facts:
            word, absent = getattr(fact, "absent_without", (None, None))
            facts[key] = absent if word is not None and not (definitions or self.run.definitions).mentions(word) \
                else fact(node)
        return facts[key]  # type: ignore[return-value]

    def _reentered(self, function: cst.FunctionDef, self_value: ModuleValue | None) -> bool:
        """Whether a call of `function`, already on the call stack, is followed: once in the stack, for
        a function calling itself (a tree's children), or reached again through a method of another
        object (a block's inherited `forward` calling a nested block's, a helper running a block that
        runs the helper); mutual recursion of plain functions is not."""
        stack, selves = self.run.call_stack, self.run.call_selves
        frames = [i for i, f in enumerate(stack) if f is function]
        other_object = self_value is not None and all(selves[i] != id(self_value) for i in frames)
        through_object = any(selves[i] not in (0, selves[frames[-1]]) for i in range(frames[-1] + 1, len(stack)))
        return len(stack) - len(set(stack)) < _REENTRIES and (stack[-1] is function or other_object or through_object)

    def builds_functions(self, function: cst.FunctionDef, definitions: Definitions) -> bool:
        """Whether `function` is a factory of functions (`_builds_functions`), or returns what the
        factories of its file that it names build (`ops.append(make_clipper(v))`)."""
        if not self.syntax_fact(function, _returns, definitions):
            return False
        if self.syntax_fact(function, _builds_functions, definitions):
            return True
        named = (definitions.globals.get(name) for name in self.syntax_fact(function, code_facts, definitions).names)
        return any(isinstance(value, FunctionRef) and value.definitions is definitions
                   and isinstance(value.node, cst.FunctionDef) and value.node is not function
                   and self.syntax_fact(value.node, _builds_functions, definitions) for value in named)

    def summarised(self, callee: cst.CSTNode, definitions: Definitions, args: list[Value], kwargs: dict[str, Value],
                   state: State, run: Callable[[], Value]) -> Value:
        """`run()`'s result, or a copy of what a call of `callee` with the same constant (or unknown)
        arguments returned in this file's analysis (in any of its functions; the functions it ran
        count as run again), when that call had no effect but its result."""
        constants = constant_key(args, kwargs)
        if constants is None or self.syntax_fact(callee, _yields, definitions):
            return run()  # a generator: each call makes a new one, which runs when iterated
        # not the function under analysis (the same call in another gives the same), but what it
        # tells of values of unknown origin: an argument made a tensor inside, an unknown operand
        key = (id(callee), constants, state.grad_enabled, self.parts.bindings.grad_evidence(),
               self.run.in_module_method, self.run.call_site is None, bool(self.run.unchecked_saves))
        # with where it runs: the calls it runs in, and whether anything was saved yet (a tail call
        # of another file's function is followed only then)
        here = (*key, tuple(id(function) for function in self.run.call_stack), bool(state.saves or self.run.pending))
        for held in (key, here):
            if held in self.run.summaries:
                result, entered = self.run.summaries[held]
                self.run.entered |= entered
                return self.parts.module_objects.copy_object(result)
        before, serial, touched = set(self.run.entered), self.run.next_serial, len(self.run.touched)
        cuts, changes, first_new = len(self.run.result.cuts), len(self.run.result.changes), new_version_counter()
        unfollowed, placed, hand_overs = self.run.unfollowed, self.run.placed, self.run.hand_overs
        result = run()
        if self.run.next_serial == serial and len(self.run.result.cuts) == cuts \
                and len(self.run.result.changes) == changes and self.run.hand_overs == hand_overs \
                and all(vc > first_new for vc in self.run.touched[touched:]) and not _holds_older(result, first_new):
            # a result, known or not (a call left unfollowed here, at a tail call, the depth or the count
            # of calls reached, which another call may follow, counts below), nothing cut short, no save made nor handed
            # over, no change recorded (a finding's, reported once), no tensor of before changed (a
            # global's `add_`) nor an object of before (a global module's attribute, a global list),
            # no backward, and a result made by the call alone (not a global tensor it returns): a
            # copy of the result gives the call again; anywhere when every call inside was followed,
            # else, when the calls left unfollowed were those where it ran stopped (the depth, a
            # recursion, a tail call with nothing saved yet, a call's steps), only where it runs
            # the same way
            summary = (self.parts.module_objects.copy_object(result), frozenset(self.run.entered - before))
            if self.run.unfollowed == unfollowed:
                self.run.summaries[key] = summary
            elif result is not UNKNOWN and self.run.unfollowed - unfollowed == self.run.placed - placed:
                # (an unknown result of a call left unfollowed where it ran, a tail call with
                # nothing saved yet, is no answer for the same call that is not the tail)
                self.run.summaries[here] = summary
        return result

    @staticmethod
    def argument(param: cst.Param) -> Value:
        """A parameter whose value no caller gives: what its annotation says it holds (a list,
        tuple or dict of unknown elements), else an argument that becomes a tensor when used as one."""
        optional = param.default is not None and isinstance(param.default, cst.Name) and param.default.value == "None"
        kind = _annotated_kind(param.annotation.annotation) if param.annotation is not None and not optional else None
        name = param.name.value
        if kind == "sequence":
            return SequenceValue(repeated=ArgumentValue(f"{name}[i]"), mutable=True)
        if kind == "mapping":
            return DictValue({}, complete=False)
        return ArgumentValue(name)

    def in_library(self, definitions: Definitions) -> bool:
        """Whether `definitions` are of an installed library's file."""
        return self.run.project is not None and definitions.path is not None and self.run.project.is_library(definitions.path)

    def registered_entry(self, callee: FunctionRef, args: list[Value]) -> FunctionRef | None:
        """For a library factory called with a constant name first (`timm.create_model("resnet18",
        ...)`, `torchvision.models.get_model("resnet18")`): the function its package's registry
        decorator registered under that name, which the factory ends up calling."""
        if self.run.project is None or not args or not isinstance(args[0], ConstValue) \
                or not isinstance(args[0].value, str) or not isinstance(callee.node, cst.FunctionDef) \
                or not self.in_library(callee.definitions):
            return None
        first = [*callee.node.params.posonly_params, *callee.node.params.params][:1]
        if not first or "name" not in first[0].name.value:  # `create_model(model_name, ...)`, `get_model(name)`
            return None
        entry = self.run.project.registered(callee.definitions.path, args[0].value)
        if not isinstance(entry, FunctionRef) or not isinstance(entry.node, cst.FunctionDef) \
                or entry.definitions.path == callee.definitions.path:
            return None
        return entry

    def resolve_import(self, ref: Value) -> Value:
        """What an imported name is, when it is defined in another file of the project."""
        if self.run.project is None or not isinstance(ref, ImportRef) or self.run.definitions.path is None:
            return UNKNOWN
        return self.run.project.resolve(self.run.definitions.path, ref.qualname)

    def imported_constant(self, value: Value) -> Value:
        """A test's value: a constant another file of the project defines, where `value` names it
        (`if not torch_geometric.typing.WITH_PT21:`); else `value` as it is."""
        if isinstance(value, ImportRef) and not is_torch_name(value.qualname) \
                and value.qualname.split(".")[0] not in sys.stdlib_module_names:  # (`typing.TYPE_CHECKING`: no lookup)
            resolved = self.resolve_import(value)
            if isinstance(resolved, ConstValue):
                return resolved
        return value

    def call_user_function(self, function: cst.FunctionDef, definitions: Definitions, self_value: ModuleValue | None,
                           args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode, state: State,
                           *, report: str = "caller-saves", closure: dict[str, Value] | None = None) -> Value:
        """Interpret `function`'s body with the caller's arguments and saves (its summary at this call);
        a generator function's call gives the generator, whose body runs when it is iterated.

        `report` says where the body's changes are reported: "caller-saves", at the call and only
        those hitting what the caller's ops saved (the body's own findings come from its own
        analysis); "every-change", all of them at the call (a function of another file that
        `model.apply` runs); "inside", at the body's own lines (such a function of this file).
        """
        wrapper = self.run.wrappers.get(function)
        if wrapper is not None and not (self.run.call_stack and self.run.call_stack[-1] in self.run.wrapper_code):
            # (called by a wrapper, it is the function itself that runs)
            function, definitions, closure = wrapper.node, wrapper.definitions, wrapper.closure  # type: ignore[assignment]
        if self.syntax_fact(function, is_generator, definitions):
            return GeneratorValue(FunctionRef(function.name.value, function, definitions, bound_self=self_value,
                                              closure=closure), tuple(args), dict(kwargs), node, report)
        return self.run_user_function(function, definitions, self_value, args, kwargs, node, state, report=report,
                                      closure=closure)

    def run_generator(self, generator: GeneratorValue, state: State) -> Value:
        """What one iteration over `generator` (`next(gen)`) binds: its body run here, with the
        caller's saves, each path up to its first `yield`, and the values those give joined; UNKNOWN
        when the body is not followed, a yielded value is not known or a `yield` is not reached (one
        after another: `yield a` then `yield b`).

        Each element runs the body from its start: what runs after a `yield`, which Python runs
        only once the consumer asks for the next element, never runs before the consumer's code."""
        function = generator.func
        run = GeneratorRun(function.node)  # type: ignore[arg-type]
        self.run.generator_runs.append(run)
        try:
            ran = self.run_user_function(function.node, function.definitions,  # type: ignore[arg-type]
                                         function.bound_self, list(generator.args), dict(generator.kwargs),
                                         generator.node, state, report=generator.report, closure=function.closure)
        finally:
            self.run.generator_runs.pop()
        yields = self.syntax_fact(function.node, yield_nodes, function.definitions)  # type: ignore[arg-type]
        if ran is UNKNOWN or not run.yields or len(run.reached) < len(yields):
            return UNKNOWN
        _add_saves(state.saves, run.saves)
        value = self.parts.containers.join_elements(run.yields, state)
        return SequenceValue((IntValue(), value)) if generator.enumerated and value is not UNKNOWN else value

    def yielded(self, node: cst.Yield, value: Value, state: State) -> None:
        """`node` gave `value`: the element of the iteration running the generator (if one does)."""
        if not self.run.call_stack:  # the entry point's own `yield`: what it gives escapes it
            self.run.yielded_here.append(value)
        run = self.run.generator_runs[-1] if self.run.generator_runs else None
        if run is None or not self.run.call_stack or self.run.call_stack[-1] is not run.function:
            return
        run.yields.append(value)
        run.reached.add(node)
        _add_saves(run.saves, state.saves)
        state.dead = True  # the generator stops here until the next element is asked for

    def run_user_function(self, function: cst.FunctionDef, definitions: Definitions, self_value: ModuleValue | None,
                          args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode, state: State,
                          *, report: str = "caller-saves", closure: dict[str, Value] | None = None) -> Value:
        """`call_user_function`'s interpretation of the body, for a function or a generator's iteration."""
        # more for calls into a library's code, or made from it (a module of the project that a
        # library model calls deep in its forward: a LoRA layer put in place of BERT's `query`)
        depth = _MAX_CALL_DEPTH + (_LIBRARY_DEPTH if self.in_library(definitions) or any(
            self.in_library(d) for d in self.run.call_definitions) else 0)
        recursive = function in self.run.call_stack and not self._reentered(function, self_value)
        deep = len(self.run.call_stack) - self.run.super_frames >= depth
        if recursive or deep or "*" in kwargs or function in self.run.cut_calls:
            self.run.unfollowed += 1
            if recursive or deep:
                self.run.placed += 1
            self.parts.saved_tensors.hand_over([self_value, *args, *kwargs.values()])
            return UNKNOWN
        caller = self.run.returns[-1] if self.run.returns else None
        tail = caller is not None and caller.tail and caller.tail_call is node
        if tail and report == "caller-saves" and definitions is not self.run.definitions and not state.saves \
                and not self.run.pending:
            # another file's function, whose result goes straight to the entry point's own `return`
            # (a model factory's `return build_model(...)`), with nothing saved yet that what it changes
            # could meet: it can add no finding here (its own analysis has its own)
            self.run.unfollowed += 1
            self.run.placed += 1
            self.parts.saved_tensors.hand_over([self_value, *args, *kwargs.values()])
            return UNKNOWN
        if self.run.followed >= MAX_FOLLOWED_CALLS:
            self.run.unfollowed += 1
            where = self.run.analysing.name if self.run.analysing is not None else \
                self.run.call_nodes[0] if self.run.call_nodes else node
            self.parts.frames.note_cut("calls", self.run.analysing, where, "calls")
            return UNKNOWN
        here = definitions is self.run.definitions
        if closure is None and not any(_carries_tensors(v, here) for v in (self_value, *args, *kwargs.values())) and not (
                _may_build(self.syntax_fact(function, code_facts, definitions))
                or (here and self.builds_functions(function, definitions))
                or (here and any(isinstance(v, FunctionRef) and v.definitions is definitions for v in args))
                or (self.in_library(definitions) and self.syntax_fact(function, _returns, definitions))
                or (here and any(_carries_tensors(definitions.globals.get(name), False)
                                 for name in self.syntax_fact(function, code_facts, definitions).names))
                or (self.syntax_fact(function, _returns, definitions)
                    and any(_holds_code(definitions.globals.get(name))
                            for name in self.syntax_fact(function, code_facts, definitions).names))):
            # nothing of the caller's graph goes in (into another file's code: no tensor this file's
            # ops saved), nothing comes out of it: nothing to follow (factories aside: the project's
            # own that build `torch.nn` modules, return a function they define (a hook), are given
            # one of this file's functions or classes (a registry's `register(cls)`), or return
            # what a class of a global builds, a registry's pick included, and a library's; a closure, or a function of this file that
            # names its globals holding tensors or modules, may reach them)
            return UNKNOWN
        self.run.followed += 1
        if any(_changeable(definitions.globals.get(root)) for root in self.syntax_fact(function, code_facts, definitions).roots):
            self.run.touched.append(CHANGED_OBJECT)
        params = function.params
        positional = [*params.posonly_params, *params.params]
        env: dict[str, Value] = dict(closure) if closure is not None else {}
        values = ([self_value] if self_value is not None else []) + list(args)
        defaults = State({}, globals=definitions.globals)
        for index, param in enumerate([*positional, *params.kwonly_params]):
            name = param.name.value
            if index < len(positional) and index < len(values):
                value = values[index]
            elif name in kwargs:
                value = kwargs[name]
            elif param.default is not None:
                value = self.parts.expressions.eval(param.default, defaults)
                if isinstance(value, FunctionRef) and isinstance(param.default, cst.Lambda):
                    value = evolved(value, definitions=definitions)  # `post=lambda t: t.mul_(2)`: the callee's file's code
            else:
                value = UNKNOWN
            env[name] = self.argument(param) if value is UNKNOWN else value
        if isinstance(params.star_arg, cst.Param):  # the positional arguments no parameter takes (no `*` of unknown length here)
            env[params.star_arg.name.value] = SequenceValue(tuple(values[len(positional):]))
        if isinstance(params.star_kwarg, cst.Param):  # the keyword arguments no parameter takes
            named = {p.name.value for p in [*positional, *params.kwonly_params]}
            env[params.star_kwarg.name.value] = DictValue(
                {k: v for k, v in kwargs.items() if k not in named and k != "**"}, complete="**" not in kwargs)
        callee_state = State(env, state.saves, state.grad_enabled, globals=definitions.globals)
        for decorator in function.decorators:
            mode = self.parts.torch_calls.grad_mode_of(decorator.decorator, callee_state)
            if mode is not None:
                callee_state.grad_enabled = mode
        outer_site = self.run.call_site
        if outer_site is None and report != "inside" and definitions is not self.run.definitions:
            label = dotted_name(node.func) if isinstance(node, cst.Call) else None
            self.run.call_site = (node, label or function.name.value, report == "every-change")
        elif outer_site is not None and definitions is self.run.definitions:
            self.run.call_site = None  # this file's code again (a hook another file's code runs): its own lines
        self.run.call_stack.append(function)
        self.run.call_selves.append(id(self_value) if self_value is not None else 0)
        self.run.call_definitions.append(definitions)
        self.run.call_nodes.append(node)
        self.run.entered.add(function)
        if "**" in kwargs and function.name.value == "__init__":
            # built from keywords not known (`Block(**config)`): a value a parameter was not given
            # may have been, so the findings of its analysis on its own stand
            self.run.splatted.add(function)
        self.run.returns.append(Returns(tail=tail))
        try:
            with self.run.budget.scope(budget.CALL_STEPS) as depth, \
                    self.run.compiling(self.parts.torch_calls.compiled_by(function.decorators, callee_state), node):
                self.parts.statements.exec_block(function.body.body, callee_state)
        except OverBudget as error:
            if error.depth != depth:
                raise
            self.run.unfollowed += 1
            self.run.placed += 1  # its steps ran out: where it runs the same way, they run out the same way
            self.run.cut_calls.add(function)  # its effects on the caller are unknown: a miss, never a false alarm
            self.parts.frames.note_cut("call", function, function.name if here else self.run.call_nodes[0], error.reason)
            return UNKNOWN
        finally:
            returns = self.run.returns.pop()
            self.run.call_stack.pop()
            self.run.call_selves.pop()
            self.run.call_definitions.pop()
            self.run.call_nodes.pop()
            self.run.call_site = outer_site
            if outer_site is None:
                self.run.callee_records = set()
        callee_state = returns.exit(callee_state)
        state.saves = callee_state.saves
        given = [*zip((p.name.value for p in positional), values),
                 *((p.name.value, kwargs.get(p.name.value)) for p in [*positional[len(values):], *params.kwonly_params])]
        for param, passed in given:
            final = callee_state.env.get(param)
            if isinstance(passed, TensorValue) and isinstance(final, TensorValue) and final is not passed \
                    and final.version_counter == passed.version_counter \
                    and (final.requires_grad, final.is_leaf) != (passed.requires_grad, passed.is_leaf):
                self.parts.bindings.set_flags(state, passed, final)  # `requires_grad_()` inside the callee holds for the caller
        self.run.last_callee_env = callee_state.env
        return callee_state.env.get(RETURNED, ConstValue(None))
