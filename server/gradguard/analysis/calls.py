"""Calls dispatched by what is called: a builtin, a torch or library name, a module, a class, a
function of the project, a partial, one of a few functions; method calls by their receiver."""

from __future__ import annotations

import json
import operator

import libcst as cst

from gradguard.analysis.command_line import parser_method
from gradguard.analysis.events import PICKED_CODE
from gradguard.analysis.containers import MAX_UNROLLED_ELEMENTS
from gradguard.analysis.custom_functions import ctx_method
from gradguard.analysis.names import decorated_as, dotted_name, is_static_method, is_torch_name, normalise_torch_name, qualname_of
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.torch_calls import compiled, optimized_tensors
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentParserValue,
    ArgumentValue,
    BuiltinRef,
    Compiler,
    ConstValue,
    CustomOp,
    DictValue,
    DistributionValue,
    EitherCode,
    FunctionApply,
    FunctionCtx,
    FunctionRef,
    GradScalerValue,
    HookHandle,
    ImportRef,
    LostValue,
    ModuleValue,
    OptimizerValue,
    PartialValue,
    SequenceValue,
    SuperValue,
    TensorValue,
    Tri,
    Value,
    evolved,
    join_values,
    lost_from,
)
from gradguard.knowledge import surface
from gradguard.knowledge.ops import TorchVersion

_VERSION_PARSERS = frozenset({"packaging.version.parse", "packaging.version.Version", "distutils.version.LooseVersion"})


class Calls(Part):
    """Evaluates a call's arguments and dispatches it to the part that knows its callee or receiver."""

    def eval_call(self, node: cst.Call, state: State) -> Value:
        self.run.budget.step()
        func = node.func
        receiver: Value | None = None
        if isinstance(func, cst.Attribute):
            receiver = self.parts.expressions.eval(func.value, state)
            method = func.attr.value
            if isinstance(receiver, ImportRef):
                callee: Value = ImportRef(f"{receiver.qualname}.{method}")
            else:
                callee = UNKNOWN
        elif isinstance(func, cst.Name) and func.value == "super" and state.lookup("super") is None:
            explicit = [self.parts.expressions.eval(a.value, state) for a in node.args[:2]] if len(node.args) == 2 else None
            return self.parts.module_objects.super_of(state, explicit)
        else:
            method = None
            callee = self.parts.expressions.eval(func, state)
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        for arg in node.args:
            value = self.parts.expressions.eval(arg.value, state)
            if arg.star == "*":
                if isinstance(value, SequenceValue) and value.repeated is None:
                    args.extend(value.items)
                elif isinstance(value, SequenceValue) and isinstance(value.repeated, ModuleValue):
                    args.append(value.repeated)  # `nn.Sequential(*[Block() for _ in range(depth)])`
                else:
                    args.append(UNKNOWN)
                    kwargs["*"] = UNKNOWN
            elif arg.star == "**":
                if isinstance(value, DictValue) and value.complete and all(isinstance(k, str) for k in value.entries):
                    kwargs.update(value.entries)  # `cls(**{"min": -10})`
                else:
                    kwargs["**"] = UNKNOWN
            elif arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            else:
                args.append(value)
        if isinstance(receiver, ModuleValue) and method in receiver.named_children:
            callee, method = receiver.named_children[method], None
        if isinstance(receiver, FunctionRef) and isinstance(receiver.node, cst.ClassDef) and method is not None:
            callee, method = self.parts.expressions.class_member(receiver, method), None
        if method is not None and receiver is not None and not isinstance(receiver, ImportRef):
            return self.call_method(receiver, method, args, kwargs, node, state)
        return self.call_value(callee, args, kwargs, node, state)

    def call_value(self, callee: Value, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                   state: State) -> Value:
        """A call of `callee` (`f(x)`, also `map(f, xs)`'s calls): a builtin, a torch or library name, a
        module, a class, a function of the project, a partial."""
        if isinstance(callee, EitherCode):
            return self.call_either(callee, args, kwargs, node, state)
        if isinstance(callee, PartialValue):  # `act(x)` for `act = partial(F.relu, inplace=True)`
            callee, args, kwargs = callee.func, [*callee.args, *args], {**callee.kwargs, **kwargs}
        if isinstance(callee, BuiltinRef):
            return self.parts.containers.call_builtin(callee.name, args, kwargs, node, state)
        if isinstance(callee, ImportRef) and not is_torch_name(callee.qualname) \
                and not (self.run.library and not self.run.call_stack):
            callee = self.parts.custom_functions.function_apply(callee) or callee  # `Fn.apply(x)` for `Fn` of another file
        if isinstance(callee, FunctionApply):
            return self.parts.custom_functions.apply_function(callee, args, kwargs, node, state)
        if isinstance(callee, CustomOp):
            return self.parts.custom_functions.call_custom_op(callee, args, kwargs, node, state)
        if isinstance(callee, Compiler):  # `torch._dynamo.optimize("inductor")(fn)`
            return compiled(args[0], callee.backend) if args else UNKNOWN
        if isinstance(callee, FunctionRef) and callee.compiled is not None:
            with self.run.compiling(callee.compiled, node):
                return self.call_value(evolved(callee, compiled=None), args, kwargs, node, state)
        name = qualname_of(callee)
        if name == "functools.partial":
            return _partial(args, kwargs)
        if name == "functools.reduce" and len(args) >= 2:
            return self.reduced(args[0], args[1], args[2] if len(args) > 2 else kwargs.get("initial"), node, state)
        if name in surface.OPERATOR_METHODS and len(args) == 2:
            return self.operator_call(surface.OPERATOR_METHODS[name], args, node, state)
        if name in ("os.environ.get", "os.getenv") and len(args) == 2 and isinstance(args[0], ConstValue) \
                and isinstance(args[1], ConstValue) and not any(map(self.run.definitions.mentions, _SETS_ENVIRONMENT)):
            return ConstValue(args[1].value, default_of=f"${args[0].value}")  # as run without it set (a file setting
            # variables itself, `os.environ["ACT"] = ...`, may read what it set)
        if name in _VERSION_PARSERS and len(args) == 1 and isinstance(args[0], ConstValue) and isinstance(args[0].value, str):
            return ConstValue(TorchVersion(args[0].value))  # `version.parse(torch.__version__) >= version.parse("2.1")`
        if name == "argparse.ArgumentParser":
            return ArgumentParserValue()
        if name == "json.loads" and args and isinstance(args[0], ConstValue) and isinstance(args[0].value, str):
            return _from_json(args[0].value)  # a configuration written in the code
        if name in ("copy.deepcopy", "copy.copy") and args:
            return self.parts.module_objects.copy_object(args[0])
        if name == "itertools.repeat" and len(args) == 2 and isinstance(args[1], ConstValue) \
                and isinstance(args[1].value, int) and 0 <= args[1].value <= MAX_UNROLLED_ELEMENTS:
            return SequenceValue((args[0],) * args[1].value)  # `tuple(repeat(block, 4))`
        if name == "collections.OrderedDict":
            return self.parts.containers.call_builtin("dict", args, kwargs, node, state)
        if name == "collections.defaultdict":  # `defaultdict(list)`: `d[key]` of a missing key stores a new list
            made = self.parts.containers.call_builtin("dict", args[1:], kwargs, node, state)
            return evolved(made, factory=args[0]) if isinstance(made, DictValue) and args else made
        if name is not None and not is_torch_name(name):
            if self.run.library and not self.run.call_stack:
                return UNKNOWN  # a library's module-level call into another file (`get_logger(__name__)`)
            callee, name = self.parts.user_calls.resolve_import(callee), None
        if name is not None:
            return self.parts.torch_calls.call_qualified(normalise_torch_name(name), args, kwargs, node, state)
        if isinstance(callee, ModuleValue):
            return self.parts.module_calls.call_module(callee, args, kwargs, node, state, report_node=node)
        if isinstance(callee, FunctionRef) and isinstance(callee.node, cst.ClassDef):
            return self.parts.module_objects.instantiate(callee, args, kwargs, node, state)
        elif isinstance(callee, FunctionRef) and self.run.library and not self.run.call_stack:
            return UNKNOWN  # a library's module-level call of its functions (`default_cfgs = generate(...)`)
        elif isinstance(callee, FunctionRef) and callee.bound_self is None and \
                (entry := self.parts.user_calls.registered_entry(callee, args)) is not None:
            user_calls = self.parts.user_calls
            return user_calls.summarised(entry.node, entry.definitions, [], kwargs, state, lambda: (
                user_calls.call_user_function(entry.node, entry.definitions, None, [], kwargs, node, state)))
        elif isinstance(callee, FunctionRef) and callee.bound_self is None and callee.closure is not None:
            return self.parts.user_calls.call_user_function(callee.node, callee.definitions, None, args, kwargs, node, state,
                                                            closure=callee.closure)
        elif isinstance(callee, FunctionRef) and callee.bound_self is None:
            user_calls = self.parts.user_calls
            return user_calls.summarised(callee.node, callee.definitions, args, kwargs, state, lambda: (
                user_calls.call_user_function(callee.node, callee.definitions, None, args, kwargs, node, state)))
        elif isinstance(callee, FunctionRef):
            return self.parts.user_calls.call_user_function(callee.node, callee.definitions, callee.bound_self, args, kwargs,
                                                            node, state)
        self.parts.saved_tensors.hand_over([*args, *kwargs.values()])
        return lost_from([*args, *kwargs.values()]) if callee is UNKNOWN else UNKNOWN

    def call_either(self, callee: EitherCode, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                    state: State) -> Value:
        """A call of one of a few functions (`func(params)` for `func = _single if foreach else _multi`):
        each runs from the same state; the states and results after them are joined."""
        result: Value | None = None
        after: State | None = None
        outer = self.run.assuming
        self.run.assuming = outer or PICKED_CODE  # which one runs is not known: what each changes may not happen
        try:
            for alternative in callee.alternatives:
                branch = state.copy()
                returned = self.call_value(alternative, list(args), dict(kwargs), node, branch)
                if result is None or after is None:
                    result, after = returned, branch
                    continue
                after = after.join(branch)
                if isinstance(result, TensorValue) and isinstance(returned, TensorValue) and \
                        result.version_counter != returned.version_counter:
                    result = after.merge(result, returned)
                else:
                    result = join_values(result, returned)
        finally:
            self.run.assuming = outer
        if after is not None:
            state.become(after)
        return UNKNOWN if result is None else result

    def scaler_method(self, method: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                      state: State) -> Value:
        """`scaler.scale(loss)`: the loss times the scale (nothing saved that a change could meet);
        `scaler.step(optimizer, ...)`: `optimizer.step(...)`; the rest change no tensor of the graph."""
        if method == "scale" and args and isinstance(args[0], TensorValue):
            return self.parts.tensor_ops.apply_aten("mul", [args[0], ConstValue(65536.0)], {}, node, state, None,
                                                    label="scaler.scale")
        if method == "scale" and args:
            return lost_from(args)
        if method == "step" and args and isinstance(args[0], OptimizerValue):
            return self.call_method(args[0], "step", args[1:], kwargs, node, state)
        return UNKNOWN

    def call_method(self, receiver: Value, method: str, args: list[Value], kwargs: dict[str, Value],
                    node: cst.Call, state: State) -> Value:
        if isinstance(receiver, ConstValue) and isinstance(receiver.value, str):
            if method == "join" and len(args) == 1 and not kwargs:
                parts = self.parts.containers.elements(args[0])
                if parts is not None and all(isinstance(p, ConstValue) and isinstance(p.value, str) for p in parts):
                    return ConstValue(receiver.value.join(p.value for p in parts))  # type: ignore[union-attr]
                return UNKNOWN
            if method in _STRING_METHODS | _STRING_SPLITS and not kwargs and all(isinstance(a, ConstValue) for a in args):
                try:
                    result = getattr(receiver.value, method)(*(a.value for a in args))
                except (TypeError, ValueError):
                    return UNKNOWN
                if method in _STRING_SPLITS:  # `name.rsplit(".", 1)`: a list (a tuple for `partition`) of strings
                    return SequenceValue(tuple(ConstValue(part) for part in result), mutable=isinstance(result, list))
                return ConstValue(result)
            return UNKNOWN
        if isinstance(receiver, SuperValue):
            return self.parts.module_objects.call_super(receiver, method, args, kwargs, node, state)
        if isinstance(receiver, FunctionCtx):
            return ctx_method(receiver, method, args)
        if isinstance(receiver, ModuleValue) and receiver.definitions is not None and receiver.user_class is not None:
            found = self.parts.module_objects.find_method(receiver.definitions, receiver.user_class, method)
            summarised = self.parts.pretrained.method(receiver, method, found, args, node, state)
            if summarised is not None:
                return summarised
            if found is not None and decorated_as(found[0], "property"):  # `self.loss_fn(x)`: the property's value, called
                value = self.parts.user_calls.call_user_function(found[0], found[1], receiver, [], {}, node, state)
                return self.call_value(value, args, kwargs, node, state)
            defined = receiver.definitions.classes.get(receiver.user_class)
            if found is not None and defined is not None and decorated_as(found[0], "classmethod"):  # `cls`: the class
                cls = FunctionRef(receiver.user_class, defined[0], receiver.definitions)
                return self.parts.user_calls.call_user_function(found[0], found[1], None, [cls, *args], kwargs, node, state)
            if found is not None:
                bound = None if is_static_method(found[0]) else receiver
                return self.parts.user_calls.call_user_function(found[0], found[1], bound, args, kwargs, node, state)
            if isinstance(receiver.mapping, SequenceValue):  # a `list` subclass's own list method (`processors.append(p)`)
                return self.parts.containers.call_container_method(receiver.mapping, method, args, kwargs, state)
        if isinstance(receiver, ModuleValue):
            result = self.parts.module_calls.call_module_method(receiver, method, args, kwargs, node, state)
            given = [*args, *kwargs.values()]
            if result is UNKNOWN and receiver.user_class is not None and any(isinstance(v, (TensorValue, LostValue))
                                                                             for v in given):
                self.parts.saved_tensors.hand_over(given)  # a method of a base not read (`self.compute_loss(logits, labels)`)
                return lost_from(given)
            return result
        if isinstance(receiver, OptimizerValue):
            closure = args[0] if args else kwargs.get("closure")
            now = (self.run.backward_runs, self.run.hand_overs)
            if method == "zero_grad" and receiver.cleared_at != now and \
                    self.parts.torch_calls.flag(args, kwargs, 0, "set_to_none", True) is Tri.YES:
                self.parts.bindings.replace_object(state, receiver, evolved(receiver, cleared_at=now))
            if method == "step" and (closure is not None or receiver.cleared_at != now):  # (a closure's backward)
                self.run_step_closure(closure, node, state)
                for parameter in receiver.parameters:
                    saved_mode = state.grad_enabled
                    state.grad_enabled = Tri.NO
                    self.parts.saved_tensors.mutate(parameter, node, None, f"`{dotted_name(node.func)}()`", state)
                    state.grad_enabled = saved_mode
            if method == "add_param_group" and args:  # `{"params": head.parameters(), "lr": ...}`
                added = evolved(receiver, parameters=receiver.parameters + optimized_tensors(SequenceValue((args[0],))))
                self.parts.bindings.replace_object(state, receiver, added)
            return UNKNOWN
        if isinstance(receiver, GradScalerValue):
            return self.scaler_method(method, args, kwargs, node, state)
        if isinstance(receiver, CustomOp):  # `op.register_autograd(backward, setup_context=setup)`, `@op.register_fake`
            if method == "register_autograd":
                receiver.setup = kwargs.get("setup_context", ConstValue(None))
            return args[0] if args and method != "register_autograd" else ConstValue(None)
        if isinstance(receiver, HookHandle):
            for handle in (receiver, *receiver.others) if method == "remove" and receiver.module is not None else ():
                for hooks in (handle.module.forward_hooks, handle.module.forward_pre_hooks):  # type: ignore[union-attr]
                    if (at := next((i for i, h in enumerate(hooks) if h is handle.hook), None)) is not None:
                        del hooks[at]  # (one registration: the hook may have several)
                        break
            if method == "remove" and receiver.module is None:
                self.parts.saved_tensors.remove_grad_hook(receiver.hook, state)
            return ConstValue(None)
        if isinstance(receiver, ArgumentParserValue):
            return parser_method(receiver, method, args, kwargs)
        if isinstance(receiver, DistributionValue):
            return self.parts.torch_calls.distribution_method(receiver, method, args, node, state)
        if isinstance(receiver, (SequenceValue, DictValue)):
            return self.parts.containers.call_container_method(receiver, method, args, kwargs, state)
        if isinstance(receiver, ArgumentValue):
            if method in surface.NOT_TENSORS or not self.parts.tensor_ops.is_tensor_method(method) or any(
                    isinstance(a, ConstValue) and isinstance(a.value, str) for a in args):
                self.parts.saved_tensors.hand_over([*args, *kwargs.values()])  # `outputs.append(h)`: the caller's list keeps it
                return UNKNOWN  # `s.split("_")`, `d.pop("key")`: not a tensor
            receiver = self.parts.bindings.promote(receiver, state)
        if isinstance(receiver, LostValue):
            if method == "backward":
                self.parts.saved_tensors.run_backward(receiver, kwargs, state, node=node)
            else:
                self.parts.saved_tensors.hand_over([*args, *kwargs.values()])
            return receiver  # `criterion(out, y).mean()`: as lost, from the same tensors
        if not isinstance(receiver, TensorValue):
            self.parts.saved_tensors.hand_over([*args, *kwargs.values()])
            if receiver is UNKNOWN:
                return lost_from([*args, *kwargs.values()])  # `self.loss_fn(out, y)`, `trainer.criterion(out, y)`
            return UNKNOWN
        return self.parts.tensor_ops.call_tensor_method(receiver, method, args, kwargs, node, state)

    def reduced(self, function: Value, iterable: Value, initial: Value | None, node: cst.Call, state: State) -> Value:
        """`functools.reduce(function, iterable[, initial])`: `function` called on the running value
        and each known element in turn (elements not known one by one: a call not followed)."""
        items = self.parts.containers.elements(iterable) if not isinstance(iterable, TensorValue) else None
        if items is None or len(items) > MAX_UNROLLED_ELEMENTS:  # one element may be all: as a call not followed
            given = [function, iterable, *([initial] if initial is not None else [])]
            self.parts.saved_tensors.hand_over(given)
            return lost_from(given)
        elements = list(items) if initial is None else [initial, *items]
        if not elements:
            return UNKNOWN
        value = elements[0]
        for item in elements[1:]:
            value = self.call_value(function, [value, item], {}, node, state)
        return value

    def operator_call(self, method: str, args: list[Value], node: cst.Call, state: State) -> Value:
        """`operator.imul(a, b)` (`a *= b`), `operator.add(a, b)`: the tensor method on `a`, when it
        is a tensor; on numbers, the number; otherwise as a call not followed."""
        arithmetic = _ARITHMETIC.get(method.rstrip("_"))
        if arithmetic is not None and all(isinstance(a, ConstValue) and isinstance(a.value, (int, float)) for a in args):
            try:  # `functools.reduce(operator.mul, x.shape, 1)`
                return ConstValue(arithmetic(args[0].value, args[1].value))  # type: ignore[union-attr]
            except ArithmeticError:
                return UNKNOWN
        receiver = self.parts.bindings.promote(args[0], state) if isinstance(args[0], ArgumentValue) else args[0]
        if not isinstance(receiver, TensorValue):  # `operator.mul(2.0, t)`: as a call not followed
            self.parts.saved_tensors.hand_over(args)
            return lost_from(args)
        return self.parts.tensor_ops.call_tensor_method(receiver, method, [args[1]], {}, node, state, bound=False)

    def run_step_closure(self, closure: Value | None, node: cst.Call, state: State) -> None:
        """`optimizer.step(closure)` calls the closure first, with grad enabled (LBFGS needs it)."""
        if not isinstance(closure, FunctionRef) or not isinstance(closure.node, cst.FunctionDef):
            return
        saved_mode, state.grad_enabled = state.grad_enabled, Tri.YES
        self.parts.user_calls.call_user_function(closure.node, closure.definitions, closure.bound_self, [], {}, node, state,
                                                 closure=closure.closure)
        state.grad_enabled = saved_mode


_SETS_ENVIRONMENT = ("environ[", "setdefault", "environ.update", "putenv")  # text of a file that may set variables

_STRING_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace",
                             "removeprefix", "removesuffix", "isdigit"})
_STRING_SPLITS = frozenset({"split", "rsplit", "partition", "rpartition"})


_ARITHMETIC = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}


def _from_json(text: str) -> Value:
    """The value of a JSON text: dicts, lists and constants (unknown when it does not parse, or is too long)."""
    if len(text) > MAX_JSON:
        return UNKNOWN
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return UNKNOWN

    def value(data: object) -> Value:
        if isinstance(data, dict):
            return DictValue({key: value(item) for key, item in data.items()})
        if isinstance(data, list):
            return SequenceValue(tuple(value(item) for item in data), mutable=True)
        return ConstValue(data)

    return value(parsed)


MAX_JSON = 100_000  # characters of a JSON literal read

_CALLABLES = (ImportRef, FunctionRef, ModuleValue, BuiltinRef)


def _partial(args: list[Value], kwargs: dict[str, Value]) -> Value:
    """`functools.partial(func, *args, **kwargs)` (a partial of a partial: one over the inner
    function, as Python builds it); UNKNOWN for a function not known or arguments not all known."""
    if not args or "*" in kwargs:
        return UNKNOWN
    func, bound = args[0], args[1:]
    if isinstance(func, PartialValue):
        return PartialValue(func.func, (*func.args, *bound), {**func.kwargs, **kwargs})
    return PartialValue(func, tuple(bound), dict(kwargs)) if isinstance(func, _CALLABLES) else UNKNOWN
