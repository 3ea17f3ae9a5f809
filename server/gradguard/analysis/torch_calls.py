"""Calls of the torch API by qualified name: grad modes, backward, `nn.Parameter`, `nn.init`, optimizers, `F.*`."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from gradguard.analysis.names import normalise_torch_name, qualname_of
from gradguard.analysis import pruning
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    Compiler,
    ConstValue,
    CustomOp,
    DictValue,
    DistributionValue,
    FunctionRef,
    GradScalerValue,
    ModuleValue,
    OptimizerValue,
    Origin,
    ParametersValue,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    contents,
    evolved,
    new_version_counter,
)
from gradguard.knowledge import modules as module_facts
from gradguard.knowledge import ops
from gradguard.knowledge import surface

_FUNCTIONAL = "torch.nn.functional."
_INIT = "torch.nn.init."
_OPTIM = "torch.optim."
_DISTRIBUTIONS = "torch.distributions."
#: Python namespaces whose functions are the ATen ops of the same name with a prefix: `torch.linalg.norm` → `linalg_norm`.
_ATEN_NAMESPACES = ("linalg", "special", "fft")


class TorchCalls(Part):
    """The interpreter's part that calls `torch.*`, `torch.nn.functional.*`, `torch.linalg/special/fft.*` and grad-mode constructs."""

    def checkpointed(self, function: Value, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                     state: State) -> Value:
        """`checkpoint(function, *args)`: `function(*args)` run keeping none of its saves (backward runs
        it again), its output in the arguments' graph; `checkpoint` saves its tensor arguments (a
        change of one before backward raises; a change of the output does not). With
        `use_reentrant=False` the function runs in the caller's grad mode (a view or leaf changed in
        it raises as anywhere), its own saves kept by hooks that no change can break."""
        passed = {k: v for k, v in kwargs.items() if k not in surface.CHECKPOINT_OPTIONS}
        reentrant = kwargs.get("use_reentrant")
        hooked = isinstance(reentrant, ConstValue) and reentrant.value is False
        grad_enabled, state.grad_enabled = state.grad_enabled, state.grad_enabled if hooked else Tri.NO
        self.run.unchecked_saves += hooked
        try:
            result = self.parts.calls.call_value(function, args, passed, node, state)
        finally:
            state.grad_enabled = grad_enabled
            self.run.unchecked_saves -= hooked
        requires_grad = function.has_trainable_parameters() if isinstance(function, ModuleValue) else Tri.NO
        for value in args:
            requires_grad = requires_grad | self.parts.tensor_ops.requires_grad_of(value)
        recorded = requires_grad & state.grad_enabled
        if recorded is Tri.NO:
            return result
        first_serial = self.run.next_serial
        for value in args:
            if isinstance(value, TensorValue):
                self.parts.saved_tensors.save(value, SavedRecord("checkpoint", "checkpoint", "input", node,
                                                                 recorded is Tri.YES and value.alias_certain), state)
        return self.parts.tensor_ops.with_history(_in_graph(result, recorded), args, first_serial, state)

    def autocast_of(self, node: cst.BaseExpression, state: State) -> Tri | None:
        """Whether a `with` item opens an autocast region that lowers precision: YES, NO
        (`enabled=False`, or `dtype=torch.float32`: the region runs in full precision), MAYBE (a flag
        not known: `enabled=args.amp`); None when it is no autocast."""
        if not isinstance(node, cst.Call):
            return None
        name = qualname_of(self.parts.expressions.eval(node.func, state))
        name = normalise_torch_name(name) if name is not None else None
        if name not in surface.AUTOCASTS:
            return None
        device_first = name in ("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast")
        positional = [a.value for a in node.args if a.keyword is None and not a.star]

        def argument(keyword: str, position: int) -> cst.BaseExpression | None:
            return next((a.value for a in node.args if a.keyword is not None and a.keyword.value == keyword),
                        positional[position] if len(positional) > position else None)

        dtype = argument("dtype", 1)
        if dtype is not None and qualname_of(self.parts.expressions.eval(dtype, state)) in surface.FULL_PRECISION:
            return Tri.NO
        enabled = argument("enabled", 2 if device_first else 0)
        if enabled is None:
            return Tri.YES
        flag = self.parts.expressions.eval(enabled, state)
        return Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE

    def unchecks_saves(self, node: cst.BaseExpression, state: State) -> bool:
        """Whether a `with` item opens a region whose saves autograd does not check for in-place
        changes (`torch.autograd.graph.saved_tensors_hooks(pack, unpack)`, `save_on_cpu()`)."""
        if not isinstance(node, cst.Call):
            return False
        name = qualname_of(self.parts.expressions.eval(node.func, state))
        return name is not None and normalise_torch_name(name) in surface.UNCHECKED_SAVES

    def grad_mode_of(self, node: cst.BaseExpression, state: State) -> Tri | None:
        """The grad mode a `with` item or decorator sets, or None if it is not a grad-mode construct."""
        call = node if isinstance(node, cst.Call) else None
        target = call.func if call is not None else node
        name = qualname_of(self.parts.expressions.eval(target, state))
        if name is None:
            return None
        name = normalise_torch_name(name)
        if name not in surface.GRAD_MODES:
            return None
        fixed = surface.GRAD_MODES[name]
        first = call.args[0].value if call is not None and call.args else None
        flag = self.parts.expressions.eval(first, state) if first is not None else None
        if "inference_mode" in name:
            if isinstance(flag, ConstValue) and flag.value is False:
                return state.grad_enabled
            return Tri.NO if flag is None or isinstance(flag, ConstValue) else Tri.MAYBE
        if fixed is not None:
            return Tri.of(fixed)
        if isinstance(flag, ConstValue):
            return Tri.of(bool(flag.value))
        return Tri.MAYBE

    def compiled_by(self, decorators: Sequence[cst.Decorator], state: State) -> str | None:
        """The backend a `@torch.compile`, `@torch.compile(...)` or `@torch._dynamo.optimize(...)`
        decorator (or one bound to a compiler) compiles the function for, if one of them does."""
        for decorator in decorators:
            call = decorator.decorator if isinstance(decorator.decorator, cst.Call) else None
            applied = self.parts.expressions.eval(call.func if call is not None else decorator.decorator, state)
            name = qualname_of(applied)
            if name is not None and normalise_torch_name(name) in surface.COMPILERS:
                args = [self.parts.expressions.eval(a.value, state) for a in call.args if a.keyword is None] if call else []
                kwargs = {a.keyword.value: self.parts.expressions.eval(a.value, state)
                          for a in call.args if a.keyword} if call else {}
                return compile_backend(normalise_torch_name(name), args, kwargs)
            if isinstance(applied, Compiler) and call is None:
                return applied.backend
        return None

    def call_qualified(self, name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                       state: State) -> Value:
        if name in surface.COMPILERS:
            backend = compile_backend(name, args, kwargs)
            code = args[0] if args and name == "torch.compile" else kwargs.get("model")
            return compiled(code, backend) if code is not None else Compiler(backend)
        if name in surface.GRAD_MODES:
            if name.endswith("set_grad_enabled") and args:
                flag = args[0]
                state.grad_enabled = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE
            return UNKNOWN
        if name in surface.BACKWARD_FUNCTIONS:
            outputs = args[0] if args else kwargs.get("tensors", kwargs.get("outputs", UNKNOWN))
            if name != "torch.autograd.grad":
                self.parts.saved_tensors.run_backward(outputs, kwargs, state, kwargs.get("inputs"), node)
                return UNKNOWN
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
            self.parts.saved_tensors.run_backward(outputs, kwargs, state, inputs, node)
            return self.gradients(outputs, inputs, kwargs, node, state)
        if name == "torch.library.register_autograd" and args and isinstance(args[0], ConstValue):
            for op in (v for v in (*state.env.values(), *state.globals.values()) if isinstance(v, CustomOp)):
                if op.name == args[0].value:  # `register_autograd("mylib::swish", backward, setup_context=...)`
                    op.setup = kwargs.get("setup_context", ConstValue(None))
            return ConstValue(None)
        if name in surface.RETURNS_ARGUMENT or name in surface.VECTORISING_MAPS:
            return args[0] if args else kwargs.get("func", UNKNOWN)
        if name in surface.FUNCTIONAL_CALLS:
            return self.parts.module_calls.functional_call(args, kwargs, node, state)
        if name in surface.STACK_MODULE_STATES:
            return self.stacked_state(args[0] if args else kwargs.get("models", UNKNOWN), node)
        if name in surface.CHECKPOINTS and args:
            return self.checkpointed(args[0], args[1:], kwargs, node, state)
        if name == "torch.autograd.Variable":  # a new leaf over the same data
            flag = args[1] if len(args) > 1 else kwargs.get("requires_grad", ConstValue(False))
            rg = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE
            return TensorValue(new_version_counter(), rg, True, Origin("a `Variable`", node))
        if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            base = args[0] if args else kwargs.get("data", UNKNOWN)
            flag = args[1] if len(args) > 1 else kwargs.get("requires_grad", ConstValue(True))
            rg = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE
            vc = base.version_counter if isinstance(base, TensorValue) else new_version_counter()
            return TensorValue(vc, rg, True, Origin("an `nn.Parameter`", node))
        if name.startswith(_INIT):
            if args and isinstance(args[0], TensorValue) and name.endswith("_"):
                saved_mode = state.grad_enabled
                state.grad_enabled = Tri.NO
                self.parts.saved_tensors.mutate(args[0], node, None, f"`{name.removeprefix('torch.')}`", state)
                state.grad_enabled = saved_mode
            return args[0] if args else UNKNOWN
        if name in surface.GRAD_SCALERS:
            return GradScalerValue()
        if name.startswith(_OPTIM) and name.rsplit(".", 1)[-1] in surface.OPTIMIZERS or name == surface.ANY_OPTIMIZER:
            params = args[0] if args else kwargs.get("params", UNKNOWN)
            return OptimizerValue(name.rsplit(".", 1)[-1], optimized_tensors(params))
        if name.startswith(_DISTRIBUTIONS):
            return self.distribution(name, args, kwargs, node, state)
        if name in module_facts.PARAMETRIZATIONS:
            return self.parametrize(name, args, kwargs, node, state)
        if name in module_facts.PRUNING_METHODS or name in (module_facts.GLOBAL_PRUNING, module_facts.PRUNING_REMOVAL):
            return self._prune(name, args, kwargs, node)
        if name in surface.MODULE_WRAPPERS:
            inner = args[0] if args else kwargs.get("module", UNKNOWN)
            if not isinstance(inner, ModuleValue):
                return UNKNOWN
            return ModuleValue(name.rsplit(".", 1)[-1], node, children=[], named_children={"module": inner})
        if name.startswith("torch.nn.") and name.count(".") == 2:
            built = self.parts.module_objects.construct_module(name.rsplit(".", 1)[-1], args, kwargs, node, state)
            if isinstance(built, ModuleValue):  # its construction is where a change it makes is reported, in its file only
                built.built_in = self.run.current_file()
            return built
        if name.startswith("torch.Tensor.") and args:
            receiver = args[0]
            if isinstance(receiver, ArgumentValue):
                receiver = self.parts.bindings.promote(receiver, state)
            if isinstance(receiver, TensorValue):
                method = name.removeprefix("torch.Tensor.")
                return self.parts.tensor_ops.call_tensor_method(receiver, method, args[1:], kwargs, node, state, bound=False)
            return UNKNOWN
        namespace, _, function = name.removeprefix("torch.").partition(".")
        if name.startswith("torch.") and namespace in _ATEN_NAMESPACES and function.isidentifier():
            if args and isinstance(args[0], ArgumentValue):
                args[0] = self.parts.bindings.promote(args[0], state)
            return self.parts.tensor_ops.apply_aten(f"{namespace}_{function}", args, kwargs, node, state, None)
        if name.startswith(_FUNCTIONAL):
            return self.call_functional(name.removeprefix(_FUNCTIONAL), args, kwargs, node, state)
        if name.startswith("torch.") and name.count(".") == 1:
            function = name.removeprefix("torch.")
            args, kwargs = ops.by_position(name, args, kwargs)
            if function in surface.FUNCTIONAL_DROPOUT:
                return self.call_functional(function, args, kwargs, node, state)
            if function in surface.FACTORIES:
                flag = kwargs.get("requires_grad")
                rg = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else (Tri.NO if flag is None else Tri.MAYBE)
                if function == "clone" and args and isinstance(args[0], TensorValue):
                    return self.parts.tensor_ops.clone_of(args[0], node, state)
                return TensorValue(new_version_counter(), rg, True, Origin(f"`torch.{function}`", node))
            if function in surface.MAYBE_RETURNS_SELF and args and isinstance(args[0], TensorValue):
                alias = args[0].fresh_view(Origin(f"`torch.{function}`", node), certain=False)
                return evolved(alias, no_grad_view=args[0].no_grad_view)  # itself or a copy: no new view
            if args and isinstance(args[0], ArgumentValue):
                args[0] = self.parts.bindings.promote(args[0], state)
            return self.parts.tensor_ops.apply_aten(function, args, kwargs, node, state, None)
        return UNKNOWN

    def stacked_state(self, models: Value, node: cst.Call) -> Value:
        """`torch.func.stack_module_state(models)`: `(params, buffers)`, `params` a dict of new leaves
        (one per parameter name, requiring grad as the models' do), `buffers` not known."""
        first = next(iter(self.parts.containers.elements(models) or ()), None)
        named = first.named_parameters() if isinstance(first, ModuleValue) and first.all_parameters()[1] else None
        if not named:
            return SequenceValue((UNKNOWN, UNKNOWN))
        stacked = DictValue({name: TensorValue(new_version_counter(), p.requires_grad, True,
                                               Origin(f"the stacked `{name}` of `stack_module_state`", node))
                             for name, p in named})
        return SequenceValue((stacked, UNKNOWN))

    def parametrize(self, name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call, state: State) -> Value:
        """`nn.utils.weight_norm(module)` and the like: the module, its tensor replaced by the parameters
        it is computed from, and itself a tensor that requires grad and is no leaf (read as `module.weight`).
        A parametrization of the user's (`register_parametrization(m, "weight", Symmetric())`) runs on
        the original (`owner.parameters[leaf]`, the last one made) at once, as torch runs it to check it."""
        module = args[0] if args else kwargs.get("module", UNKNOWN)
        given = args[1] if len(args) > 1 else kwargs.get("name", kwargs.get("tensor_name", ConstValue("weight")))
        if not (isinstance(module, ModuleValue) and isinstance(given, ConstValue) and isinstance(given.value, str)):
            return module
        tensor = given.value
        replaced = module.parameters.pop(tensor, None)
        if replaced is None:
            return module
        function = name.rsplit(".", 1)[-1]
        for original in module_facts.PARAMETRIZATIONS[name]:
            path, _, leaf = original.format(name=tensor).rpartition(".")
            owner = module  # `parametrizations.weight.original0`: a `ModuleDict` of `ParametrizationList`s
            for part in path.split(".") if path else ():
                child = owner.named_children.get(part)
                if not isinstance(child, ModuleValue):
                    child = owner.named_children[part] = ModuleValue(
                        "ModuleDict" if part == "parametrizations" else "ParametrizationList", node, children=[])
                owner = child
            owner.parameters[leaf] = TensorValue(  # (requiring grad as the tensor did: a frozen weight's do not)
                new_version_counter(), replaced.requires_grad, True,
                Origin(f"the {tensor} of `{module.class_name}` before `{function}`", node))
        if name in module_facts.PARAMETRIZATIONS_SAVING:
            module.saves_originals += tuple((function, original.format(name=tensor), original.format(name=tensor), "original")
                                            for original in module_facts.PARAMETRIZATIONS[name])
        module.buffers[tensor] = TensorValue(new_version_counter(), replaced.requires_grad, False,
                                             Origin(f"the {tensor} `{function}` computes", node))
        user = args[2] if len(args) > 2 else kwargs.get("parametrization", UNKNOWN)
        if isinstance(user, ModuleValue) and user.user_class is not None:
            # (its result is not kept: torch computes the tensor again at each read; a check, not a caller:
            # what the forward's own analysis finds for those reads stands)
            entered = set(self.run.entered)
            self.parts.module_calls.call_module(user, [owner.parameters[leaf]], {}, node, state, node)
            self.run.entered.intersection_update(entered)
        return module

    def _prune(self, name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call) -> Value:
        """`prune.l1_unstructured(module, "weight", ...)` (returns the module), `prune.remove(module,
        "weight")`, `prune.global_unstructured([(module, "weight"), ...])` (`pruning.py`)."""
        module = args[0] if args else kwargs.get("module", UNKNOWN)
        pairs = [(module, args[1] if len(args) > 1 else kwargs.get("name", UNKNOWN))]
        if name == module_facts.GLOBAL_PRUNING:
            module = ConstValue(None)
            given = self.parts.containers.elements(args[0] if args else kwargs.get("parameters", UNKNOWN)) or ()
            pairs = [pair.items[:2] for pair in given if isinstance(pair, SequenceValue) and len(pair.items) >= 2]
        for owner, tensor in pairs:
            if isinstance(owner, ModuleValue) and isinstance(tensor, ConstValue) and isinstance(tensor.value, str):
                if name == module_facts.PRUNING_REMOVAL:
                    pruning.remove(owner, tensor.value)
                else:
                    pruning.prune(owner, tensor.value, node)
        return module

    def gradients(self, outputs: Value, inputs: Value, kwargs: dict[str, Value], node: cst.Call,
                  state: State) -> SequenceValue:
        """What `torch.autograd.grad(outputs, inputs, ...)` returns: one gradient per input. With
        `create_graph=True` each is in a graph that reuses what the graph of `outputs` saved (a later
        backward through it needs those saves); otherwise it requires no grad."""
        create_graph = self.flag([], kwargs, 0, "create_graph", False) & state.grad_enabled
        history = frozenset()
        if create_graph is not Tri.NO:
            history = frozenset().union(*(t.history for t in contents(outputs) if isinstance(t, TensorValue)))
        origin = Origin("a gradient from `torch.autograd.grad`", node)
        if isinstance(inputs, SequenceValue) and inputs.repeated is None:
            return SequenceValue(tuple(self.parts.tensor_ops.fresh_result(create_graph, origin, history) for _ in inputs.items))
        if isinstance(inputs, SequenceValue) or inputs is UNKNOWN:
            return SequenceValue(repeated=self.parts.tensor_ops.fresh_result(create_graph, origin, history))
        return SequenceValue((self.parts.tensor_ops.fresh_result(create_graph, origin, history),))

    def call_functional(self, function: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                        state: State) -> Value:
        args, kwargs = ops.by_position(f"{_FUNCTIONAL}{function}", args, kwargs)
        if args and isinstance(args[0], ArgumentValue):
            args[0] = self.parts.bindings.promote(args[0], state)
        source = args[0] if args else kwargs.get("input", UNKNOWN)
        if function in surface.FUNCTIONAL_DROPOUT:
            training_at, inplace_at = surface.FUNCTIONAL_DROPOUT[function]
            training = self.flag(args, kwargs, training_at, "training", True)
            inplace = self.flag(args, kwargs, inplace_at, "inplace", False)
            probability = args[1] if len(args) > 1 else kwargs.get("p")
            if training is Tri.NO or (isinstance(probability, ConstValue) and probability.value == 0):
                return source if isinstance(source, TensorValue) else UNKNOWN
            if not isinstance(source, TensorValue):
                return UNKNOWN
            if inplace is Tri.YES and training is Tri.YES:
                written = node.args[0].value if node.args else None
                self.parts.saved_tensors.mutate(source, node, written, "`F.dropout(..., inplace=True)`", state)
                return source
            return self.parts.tensor_ops.fresh_result(source.requires_grad & state.grad_enabled, Origin(f"`F.{function}`", node),
                                                      source.history)
        if function in surface.FUNCTIONAL_INPLACE:
            position, inplace_op = surface.FUNCTIONAL_INPLACE[function]
            if self.flag(args, kwargs, position, "inplace", False) is Tri.YES:
                verb = f"`F.{function}(..., inplace=True)`"
                return self.parts.tensor_ops.apply_aten(inplace_op, args[:1], {}, node, state, verb, label=f"F.{function}")
        if function == "adaptive_avg_pool2d" and len(args) > 1 and isinstance(args[1], ConstValue) and args[1].value == 1:
            if not isinstance(source, TensorValue):
                return UNKNOWN
            mean = Origin("a mean", node)
            return self.parts.tensor_ops.fresh_result(source.requires_grad & state.grad_enabled, mean, source.history)
        return self.parts.tensor_ops.apply_aten(function, args, kwargs, node, state, None, label=f"F.{function}")

    def distribution(self, name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                     state: State) -> Value:
        """`torch.distributions.Normal(mu, std)` and the like (a class: a distribution, nesting ones it
        wraps; a function such as `kl_divergence`: a tensor in the graph of what it is given)."""
        given = [self.parts.bindings.promote(v, state) if isinstance(v, ArgumentValue) else v for v in (*args, *kwargs.values())]
        parameters = tuple(t for value in given for item in contents(value)
                           for t in (item.parameters if isinstance(item, DistributionValue) else (item,))
                           if isinstance(t, TensorValue))
        short = name.rsplit(".", 1)[-1]
        if short[:1].isupper():
            return DistributionValue(short, parameters)
        return self.computed_by(parameters, Origin(f"`{short}`", node), state)

    def distribution_method(self, distribution: DistributionValue, method: str, args: list[Value],
                            node: cst.CSTNode, state: State) -> Value:
        """`dist.log_prob(a)`, `dist.rsample()`, `dist.mean`: in the graph of its parameters (and of
        `a`); `dist.sample()`: a new tensor that requires no grad; `dist.expand(...)`: the distribution."""
        if method in surface.DISTRIBUTION_DRAWS:
            return TensorValue(new_version_counter(), Tri.NO, True, Origin(f"`{distribution.class_name}.{method}()`", node))
        if method == "expand":
            return distribution
        given = (*distribution.parameters, *(a for a in args if isinstance(a, TensorValue)))
        return self.computed_by(given, Origin(f"`{distribution.class_name}.{method}`", node), state)

    def computed_by(self, tensors: tuple[TensorValue, ...], origin: Origin, state: State) -> TensorValue:
        """A new tensor computed from `tensors` (what it saves is internal: nothing the user can change)."""
        requires_grad, history = Tri.NO, frozenset()
        for tensor in tensors:
            requires_grad, history = requires_grad | tensor.requires_grad, history | tensor.history
        return self.parts.tensor_ops.fresh_result(requires_grad & state.grad_enabled, origin, history)

    @staticmethod
    def flag(args: list[Value], kwargs: dict[str, Value], position: int, keyword: str, default: bool) -> Tri:
        value = args[position] if len(args) > position else kwargs.get(keyword)
        if value is None:
            return Tri.of(default)
        if isinstance(value, ConstValue):
            return Tri.of(bool(value.value))
        return Tri.MAYBE


def optimized_tensors(params: Value) -> tuple[TensorValue, ...]:
    """The tensors an optimizer's `params` name, as far as they are known: `model.parameters()`, a
    list or tuple of tensors or of `parameters()` (`list(a.parameters()) + list(b.parameters())`),
    or parameter groups (dicts whose "params" name them)."""
    found: list[TensorValue] = []
    for item in contents(params):
        if isinstance(item, ParametersValue):
            found.extend(item.tensors)
        elif isinstance(item, TensorValue):
            found.append(item)
        elif isinstance(item, DictValue) and "params" in item.entries:
            found.extend(optimized_tensors(item.entries["params"]))
    return tuple(found)


def compile_backend(name: str, args: list[Value], kwargs: dict[str, Value]) -> str:
    """The backend `torch.compile(..., backend=...)` or `torch._dynamo.optimize(backend)` names
    (a constant string), else torch's default."""
    given = kwargs.get("backend", args[0] if args and name != "torch.compile" else None)
    if isinstance(given, ConstValue) and isinstance(given.value, str):
        return given.value
    return surface.DEFAULT_COMPILE_BACKEND


def compiled(code: Value, backend: str) -> Value:
    """`code` (a function or a module of the project, a `torch.nn` module) compiled for `backend`:
    its calls run as a compiled region. Other values are followed as they are."""
    if (isinstance(code, FunctionRef) and isinstance(code.node, cst.FunctionDef)) or isinstance(code, ModuleValue):
        return evolved(code, compiled=backend)
    return code


def _in_graph(value: Value, recorded: Tri) -> Value:
    """A checkpointed function's result, its tensors nodes of the graph (`recorded`: whether one is)."""
    if isinstance(value, TensorValue):
        return evolved(value, requires_grad=recorded, is_leaf=False, no_grad_view=False)
    if isinstance(value, SequenceValue) and value.repeated is None:
        return SequenceValue(tuple(_in_graph(item, recorded) for item in value.items))
    return value
