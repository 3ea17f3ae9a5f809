"""`nn.Module`s called: their methods (`train()`, `parameters()`, `apply(f)`, hooks ...) and their forward
(what each layer of the module facts saves, `nn.Sequential` in order, a class's own `forward`)."""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.containers import MAX_UNROLLED_MODULES
from gradguard.analysis.names import dotted_name
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.tensor_ops import TensorOps
from gradguard.analysis.torch_calls import TorchCalls, compile_backend
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    ConstValue,
    Definitions,
    DictValue,
    FunctionRef,
    ImportRef,
    HookHandle,
    KeywordHook,
    LostValue,
    ModuleValue,
    Origin,
    ParametersValue,
    PartialValue,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    evolved,
)
from gradguard.knowledge import modules as module_facts

_RETURNS_PAIR = frozenset({"RNN", "GRU", "LSTM", "LSTMCell", "MultiheadAttention"})  # torch modules returning two values


class ModuleCalls(Part):
    """Calls `nn.Module`s and their methods: what running a layer saves."""

    def run_in_order(self, module: ModuleValue, source: Value, node: cst.CSTNode, state: State) -> Value:
        """`nn.Sequential`'s forward: each child in turn (a subclass's `add_module`s after them)."""
        children = [*(module.children or []),
                    *(c for c in module.named_children.values() if isinstance(c, ModuleValue) and c.is_module)]
        value = source
        for child in children:
            value = self.call_module(child, [value], {}, node, state, report_node=self.reported_at(child, node))
        return value

    def reported_at(self, child: ModuleValue, node: cst.CSTNode) -> cst.CSTNode:
        """Where a change a container's `child` makes is reported: at its construction when this
        file's code built it, else at the container called (`node`'s callee: another file built it)."""
        if child.node is not None and child.built_in == self.run.definitions.path:
            return child.node
        return node.func if isinstance(node, cst.Call) else node

    def call_module_method(self, module: ModuleValue, method: str, args: list[Value], kwargs: dict[str, Value],
                           node: cst.Call, state: State) -> Value:
        if method == "compile":  # compiles the module's calls in place
            module.compiled = compile_backend("torch.compile", [], kwargs)
            return ConstValue(None)
        if method == "parameters":
            params, complete = module.all_parameters()
            return ParametersValue(tuple(params), complete)
        if method == "get_submodule" and len(args) == 1 and isinstance(args[0], ConstValue) \
                and isinstance(args[0].value, str):
            return _submodule(module, args[0].value)
        if method == "named_parameters":
            params, complete = module.all_parameters()
            named = module.named_parameters()
            if not complete or len(named) != len(params):
                return SequenceValue(repeated=SequenceValue((UNKNOWN, self.parts.containers.join_elements(params, state)))) \
                    if params else UNKNOWN
            return SequenceValue(tuple(SequenceValue((ConstValue(n), p)) for n, p in named))
        if method in ("items", "keys", "values") and module.user_class is None and (
                module.class_name == "ModuleDict" or (module.class_name == "ParameterDict" and module.children_exact)):
            entries = [(k, v) for k, v in module.named_children.items() if isinstance(v, ModuleValue)] \
                if module.class_name == "ModuleDict" else list(module.parameters.items())
            if method == "keys":
                return SequenceValue(tuple(ConstValue(k) for k, _ in entries))
            if method == "values":
                return SequenceValue(tuple(v for _, v in entries))
            return SequenceValue(tuple(SequenceValue((ConstValue(k), v)) for k, v in entries))
        if method in ("children", "named_children"):
            children = [(k, v) for k, v in module.named_children.items() if isinstance(v, ModuleValue)] + \
                [(str(i), c) for i, c in enumerate(module.children or [])]
            if method == "children":
                return SequenceValue(tuple(c for _, c in children))
            return SequenceValue(tuple(SequenceValue((ConstValue(k), c)) for k, c in children))
        if method == "named_modules":
            found, complete = module.submodules()
            named = _named_modules(module)
            if len(named) != len(found):
                named = [(None, m) for m in found]
            return SequenceValue(tuple(SequenceValue((UNKNOWN if n is None else ConstValue(n), m)) for n, m in named)) \
                if complete and len(found) <= MAX_UNROLLED_MODULES else UNKNOWN
        if method == "load_state_dict" and TorchCalls.flag(args, kwargs, 1, "strict", True) is Tri.YES \
                and TorchCalls.flag(args, kwargs, 2, "assign", False) is Tri.NO:
            # `param.copy_(loaded)` under no_grad, each parameter and buffer (`assign=True`: put in place)
            saved_mode, state.grad_enabled = state.grad_enabled, Tri.NO
            for tensor in (*module.all_parameters()[0], *(b for m in module.tree() for b in m.buffers.values())):
                self.parts.saved_tensors.mutate(tensor, node, None, f"`{dotted_name(node.func)}(...)`", state)
            state.grad_enabled = saved_mode
            return UNKNOWN
        if method in ("eval", "train"):
            mode = Tri.NO if method == "eval" else TorchCalls.flag(args, kwargs, 0, "mode", True)
            _set_training(module, mode)
            given = ConstValue(mode is Tri.YES) if mode is not Tri.MAYBE else UNKNOWN
            for child, (train, definitions) in _train_overrides(module):  # `nn.Module.train` calls each child's
                self.parts.user_calls.call_user_function(train, definitions, child, [given], {}, node, state)
            return module
        if method in ("to", "cuda", "cpu", "float", "double", "half", "requires_grad_"):
            if method == "requires_grad_":
                flag = TorchCalls.flag(args, kwargs, 0, "requires_grad", True)
                for parameter in module.all_parameters()[0]:
                    self.parts.bindings.set_flags(state, parameter, evolved(parameter, requires_grad=flag), owner=module)
            return module
        if method == "forward":
            return self.call_module(module, args, kwargs, node, state, report_node=node)
        if method == "modules":
            found, complete = module.submodules()
            return SequenceValue(tuple(found)) if complete and len(found) <= MAX_UNROLLED_MODULES else UNKNOWN
        function, bound, keywords = bound_arguments(args[0] if args else None)
        if isinstance(function, ImportRef):
            function = self.parts.user_calls.resolve_import(function)
        if method == "apply" and isinstance(function, FunctionRef) and isinstance(function.node, cst.FunctionDef):
            self.apply_to_submodules(module, function, bound, keywords, node, state)
            return module
        if method == "append" and module.children is not None and args and isinstance(args[0], ModuleValue):
            module.children.append(args[0])
        elif method in ("pop", "insert", "extend") and module.user_class is None and not module.holds_parameters():
            return change_children(module, method, args)
        if module.holds_parameters() and method in ("append", "extend", "update", "__setitem__", "insert", "pop",
                                                      "setdefault", "clear", "popitem", "__delitem__"):
            self.parts.module_objects.change_parameters(module, method, args)
        if method in ("register_full_backward_hook", "register_full_backward_pre_hook"):
            module.backward_hooked = True
        with_kwargs = kwargs.get("with_kwargs", ConstValue(False))  # such a hook is given the call's keywords too
        if method in ("register_forward_hook", "register_forward_pre_hook") and args \
                and isinstance(with_kwargs, ConstValue):
            hook = self.parts.user_calls.resolve_import(args[0]) if isinstance(args[0], ImportRef) else args[0]
            if with_kwargs.value:
                hook = KeywordHook(*bound_arguments(hook))
            (module.forward_hooks if method == "register_forward_hook" else module.forward_pre_hooks).append(hook)
            return HookHandle(hook, module)
        if method == "register_buffer" and len(args) > 1 and isinstance(args[0], ConstValue) \
                and isinstance(args[1], TensorValue):
            module.buffers[str(args[0].value)] = args[1]
        elif method in ("add_module", "register_module", "register_buffer", "register_parameter") and len(args) > 1 \
                and isinstance(args[0], ConstValue):
            module.named_children[str(args[0].value)] = args[1]
            if method in ("add_module", "register_module") and module.user_class is None and module.children is not None \
                    and isinstance(args[1], ModuleValue):
                _add_child(module, str(args[0].value), args[1])  # `nn.Sequential`'s forward runs it last
        return UNKNOWN

    def apply_to_submodules(self, module: ModuleValue, function: FunctionRef, bound: tuple[Value, ...],
                            keywords: dict[str, Value], node: cst.CSTNode, state: State) -> None:
        """`module.apply(fn)` (`partial(init_weights, std=0.02)` too): `fn` followed once per class of
        submodule whose own parameters' flags are alike, on its first instance; what it did to that
        one's flags (`requires_grad_(False)`) is done to the others' parameters of the same names (a
        model's hundred `Linear`s give one finding, not a hundred, and one followed call); a
        submodule whose parameters autograd saved is not alike one whose it did not (what `fn`
        changes in place then meets the saves). An `fn`
        that tells instances of one class apart by other means (`m is model.head`) is read as if
        it did the same to each."""
        found, _ = module.submodules()
        done: dict[tuple[object, ...], dict[str, TensorValue]] = {}
        for submodule in found[:MAX_UNROLLED_MODULES]:
            own = submodule.parameters
            kind = (submodule.class_name, submodule.user_class, id(submodule.definitions), submodule.torch_base,
                    tuple((name, p.requires_grad, p.is_leaf, p.version_counter in state.saves) for name, p in own.items()))
            if kind in done:
                for name, flagged in done[kind].items():
                    parameter = own.get(name)
                    if parameter is not None and (flagged.requires_grad, flagged.is_leaf) != \
                            (parameter.requires_grad, parameter.is_leaf):
                        self.parts.bindings.set_flags(state, parameter, evolved(parameter, requires_grad=flagged.requires_grad,
                                                                                is_leaf=flagged.is_leaf))
                continue
            before = dict(own)
            report = "inside" if function.definitions is self.run.definitions else "every-change"
            self.parts.user_calls.call_user_function(function.node, function.definitions, function.bound_self,
                                                     [*bound, submodule], dict(keywords), node, state, report=report)
            done[kind] = {name: parameter for name, parameter in submodule.parameters.items()
                          if name in before and parameter is not before[name]}

    def functional_call(self, args: list[Value], kwargs: dict[str, Value], node: cst.Call, state: State) -> Value:
        """`torch.func.functional_call(module, tensors, args, kwargs)`: the module called on `args` with
        the tensors named in `tensors` in place of its parameters and buffers of those names (the
        others its own), which it has again after the call; UNKNOWN when they are not known."""
        module = args[0] if args else kwargs.get("module", UNKNOWN)
        given = args[1] if len(args) > 1 else kwargs.get("parameter_and_buffer_dicts", kwargs.get("parameters_and_buffers"))
        passed = args[2] if len(args) > 2 else kwargs.get("args", ConstValue(None))
        if isinstance(passed, ConstValue) and passed.value is None:
            passed = SequenceValue(())
        keywords = args[3] if len(args) > 3 else kwargs.get("kwargs", DictValue({}))
        dicts = [given] if isinstance(given, DictValue) else list(given.items) \
            if isinstance(given, SequenceValue) and given.repeated is None else []
        if not isinstance(module, ModuleValue) or not dicts or not all(
                isinstance(d, DictValue) and d.complete and all(isinstance(k, str) for k in d.entries) for d in dicts) \
                or not isinstance(keywords, DictValue) or not keywords.complete \
                or (isinstance(passed, SequenceValue) and not passed.mutable and passed.repeated is not None):
            return UNKNOWN
        swapped: list[tuple[dict[str, Value], str, Value]] = []
        for name, tensor in ((k, v) for d in dicts for k, v in d.entries.items()):
            path, _, leaf = name.rpartition(".")  # type: ignore[union-attr]
            owner = _submodule(module, path)
            held = next((h for h in (owner.parameters, owner.buffers, owner.named_children) if leaf in h), None) \
                if isinstance(owner, ModuleValue) else None
            if held is not None:
                swapped.append((held, leaf, held[leaf]))
                held[leaf] = tensor
        try:
            tupled = isinstance(passed, SequenceValue) and not passed.mutable  # any other value (a list) is one argument
            return self.call_module(module, list(passed.items) if tupled else [passed],  # type: ignore[union-attr]
                                    {k: v for k, v in keywords.entries.items() if isinstance(k, str)}, node, state, node)
        finally:
            for held, leaf, own in reversed(swapped):
                held[leaf] = own

    def call_module(self, module: ModuleValue, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode,
                    state: State, report_node: cst.CSTNode) -> Value:
        """`module(*args)`: its forward pre-hooks (one that returns a value replaces the arguments:
        a tuple, or the first one), its forward, then its forward hooks (one that returns a value
        replaces the output)."""
        for registered in module.forward_pre_hooks:  # `hook(module, args)`, `args` the tuple given
            keywords = isinstance(registered, KeywordHook)
            ran = self.run_hook(registered, [module, SequenceValue(tuple(args)), *_keywords(kwargs, keywords)], node, state)
            returned = ran[1] if ran is not None else None
            if keywords and isinstance(returned, SequenceValue) and len(returned.items) == 2 and returned.repeated is None:
                given, named = returned.items  # `(args, kwargs)`
                if isinstance(named, DictValue) and named.complete and all(isinstance(k, str) for k in named.entries):
                    kwargs = dict(named.entries)  # type: ignore[arg-type]
                returned = given
            if isinstance(returned, SequenceValue) and returned.repeated is None:
                args = list(returned.items)
            elif isinstance(returned, TensorValue):
                args = [returned]
        with self.run.compiling(module.compiled, report_node), \
                self.parts.output_capture.capturing(module, kwargs) as capture:
            output = self.module_forward(module, args, kwargs, node, state, report_node)
        if capture is not None:
            output = self.parts.output_capture.returned(capture, output)
        self.parts.output_capture.record(module, args, output)
        if module.user_class is None and module.class_name in _RETURNS_PAIR and isinstance(output, TensorValue):
            second = TensorOps.fresh_result(output.requires_grad, Origin(f"the state of `{module.class_name}`", node),
                                            output.history)  # (output, h_n); an LSTM's (output, (h_n, c_n))
            cell = TensorOps.fresh_result(output.requires_grad, Origin("the cell state of `LSTM`", node),
                                          output.history)
            if module.class_name == "MultiheadAttention":
                output, second = self.attention_weights(args, kwargs, output, node, state)
            output = SequenceValue((output, SequenceValue((second, cell)) if module.class_name == "LSTM" else second))
        if module.backward_hooked and state.grad_enabled is not Tri.NO:
            output = _backward_hook_views(output)
        for registered in module.forward_hooks:  # `hook(module, args, output)`
            given = [module, SequenceValue(tuple(args)), *_keywords(kwargs, isinstance(registered, KeywordHook)), output]
            ran = self.run_hook(registered, given, node, state)
            if ran is None:
                continue
            positional, returned = ran
            changed = self.run.last_callee_env.get(positional[-1].name.value) if len(positional) == len(given) else None
            if isinstance(returned, TensorValue):
                output = returned
            elif isinstance(changed, TensorValue) and isinstance(output, TensorValue) \
                    and changed.version_counter == output.version_counter:
                output = changed  # the hook changed the output's flags (`output.requires_grad_()`)
        return output

    def attention_weights(self, args: list[Value], kwargs: dict[str, Value], output: TensorValue, node: cst.CSTNode,
                          state: State) -> tuple[TensorValue, Value]:
        """The output of `nn.MultiheadAttention` and the attention weights it returns beside it: None
        for `need_weights=False`; per head (`average_attn_weights=False`) a view of its softmax's output,
        which the softmax's backward and the product with the values saved (in the output's graph);
        else their mean, a new tensor."""
        if TorchCalls.flag(args, kwargs, 4, "need_weights", True) is Tri.NO:
            return output, ConstValue(None)
        weights = TensorOps.fresh_result(output.requires_grad, Origin("the attention weights of `MultiheadAttention`", node),
                                         output.history)
        averaged = TorchCalls.flag(args, kwargs, 6, "average_attn_weights", True)
        per_head = (Tri.MAYBE if averaged is Tri.MAYBE else Tri.of(averaged is Tri.NO)) & output.requires_grad
        if per_head is Tri.NO:
            return output, weights
        first_serial = self.run.next_serial
        record = SavedRecord("MultiheadAttention", "_softmax", "per-head attention weights", node, per_head is Tri.YES)
        self.parts.saved_tensors.save(weights, record, state)
        return (self.parts.tensor_ops.with_history(output, [output], first_serial, state),
                self.parts.tensor_ops.with_history(weights, [weights], first_serial, state))

    def run_hook(self, registered: Value, given: list[Value], node: cst.CSTNode,
                 state: State) -> tuple[list[cst.Param], Value] | None:
        """A registered hook (a function, a partial of one: `partial(hook, name=name)`, an object with
        `__call__`) called with `given`: the parameters that take them, and what it returned; None when
        it is not a function of the project's. Its names at its end are in `last_callee_env`."""
        hook, bound, keywords = bound_arguments(self.parts.module_objects.called(registered, node))
        if not (isinstance(hook, FunctionRef) and isinstance(hook.node, cst.FunctionDef)):
            return None
        self.run.last_callee_env = {}
        returned = self.parts.user_calls.call_user_function(hook.node, hook.definitions, hook.bound_self,
                                                            [*bound, *given], dict(keywords), node, state,
                                                            closure=hook.closure)
        positional = [*hook.node.params.posonly_params,
                      *hook.node.params.params][(1 if hook.bound_self else 0) + len(bound):]
        return positional, returned

    def module_forward(self, module: ModuleValue, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode,
                       state: State, report_node: cst.CSTNode) -> Value:
        inner = module.wrapped()
        if inner is not None:
            return self.call_module(inner, args, kwargs, node, state, report_node)
        source = args[0] if args else UNKNOWN
        if isinstance(source, ArgumentValue):
            source = self.parts.bindings.promote(source, state)
        if module.class_name == "Sequential" and module.user_class is None:
            if module.children is None:
                return self.module_output(module, source, node, state)
            value = source
            for child in module.children:
                value = self.call_module(child, [value], {}, node, state, report_node=self.reported_at(child, node))
            return value
        if module.user_class is not None and module.definitions is not None:
            forward = module.definitions.method(module.user_class, "forward" if module.is_module else "__call__")
            if forward is not None:
                return self.parts.user_calls.call_user_function(forward[0], forward[1], module, args, kwargs, report_node, state)
            if module.torch_base == "Sequential":
                return self.run_in_order(module, source, node, state)
            if not module.is_module:
                return UNKNOWN
        facts = module_facts.module(module.class_name) if module.user_class is None else None
        others = [v for v in (*args[1:], *kwargs.values()) if isinstance(v, (TensorValue, LostValue))]  # a loss's target
        if facts is None or not isinstance(source, TensorValue):
            return self.module_output(module, source, node, state, others)
        direct = isinstance(report_node, cst.Call) and report_node is node
        run_by = None if direct else node
        label = (dotted_name(report_node.func) if direct else None) or f"nn.{module.class_name}"
        training = module.training
        weight = module.parameters.get("weight")
        if module.renorms_weight and weight is not None:  # `embedding_renorm_`, under no_grad, before the lookup
            saved_mode, state.grad_enabled = state.grad_enabled, Tri.NO
            verb = f"`{label}(...)` (max_norm renormalizes the weight in place)"
            self.parts.saved_tensors.mutate(weight, report_node, None, verb, state)
            state.grad_enabled = saved_mode
        if facts.returns_input or module.returns_input or (facts.returns_input_in_eval and training is Tri.NO):
            return source
        if module.inplace and facts.inplace is not module_facts.InplaceSaves.NO_INPLACE:
            if facts.returns_input_in_eval:  # dropout: `mul_` by the mask, only in train mode
                if training is Tri.YES:
                    self.parts.saved_tensors.mutate(source, report_node, None, f"`{label}(inplace=True)`", state,
                                                    inside_module=module.node)
                return source
            self.parts.saved_tensors.mutate(source, report_node, None, f"`{label}(inplace=True)`", state,
                                            inside_module=module.node)
            first_serial = self.run.next_serial
            recorded = (source.requires_grad | module.has_trainable_parameters()) & state.grad_enabled
            if facts.inplace is module_facts.InplaceSaves.RESULT and recorded is not Tri.NO:
                self.parts.saved_tensors.save(source, SavedRecord(label, f"{facts.op}_", "output", report_node,
                                                                  recorded is Tri.YES and source.alias_certain, run_by=run_by),
                                              state)
            updated = source
            if recorded is not Tri.NO and source.requires_grad is Tri.NO:
                updated = evolved(source, requires_grad=recorded, is_leaf=False)
            updated = self.parts.tensor_ops.with_history(updated, [source], first_serial, state)
            if updated is not source:
                self.parts.bindings.rebind(state, source, updated)
            return updated
        weight_rg = module.has_trainable_parameters()
        recurrent = _recurrent_state(args, kwargs) if facts.saves_state else []
        input_rg = source.requires_grad
        for hidden in recurrent:
            input_rg = input_rg | hidden.requires_grad
        recorded = (input_rg | weight_rg) & state.grad_enabled
        save_node = report_node
        first_serial = self.run.next_serial
        if recorded is not Tri.NO:
            input_when = {
                module_facts.Saves.ALWAYS: recorded,
                module_facts.Saves.IF_WEIGHT_REQUIRES_GRAD: weight_rg & recorded,
                module_facts.Saves.NEVER: Tri.NO,
                module_facts.Saves.IF_INPUT_REQUIRES_GRAD: source.requires_grad & recorded,
            }[facts.saves_input]
            if input_when is not Tri.NO and not module.copies_input:
                self.parts.saved_tensors.save(source, SavedRecord(label, facts.op, "input", save_node,
                                                                  input_when is Tri.YES and source.alias_certain, at_call=direct,
                                                                  run_by=run_by), state)
            weight_when = {
                module_facts.Saves.ALWAYS: recorded,
                module_facts.Saves.IF_INPUT_REQUIRES_GRAD: input_rg & recorded,
                module_facts.Saves.NEVER: Tri.NO,
                module_facts.Saves.IF_WEIGHT_REQUIRES_GRAD: weight_rg & recorded,
            }[facts.saves_weight]
            weights = [(p, label, "weight", weight_when) for name, p in module.parameters.items()  # RNNs': weight_ih_l0
                       if weight_when is not Tri.NO and (name == "weight" or name.startswith("weight_"))]
            for tensor, by, what, when in self.parts.module_objects.originals(module, state.grad_enabled, weights):
                self.parts.saved_tensors.save(tensor, SavedRecord(by, facts.op, what, save_node, when is Tri.YES,
                                                                  at_call=False, run_by=run_by), state)
            for hidden in recurrent:
                self.parts.saved_tensors.save(hidden, SavedRecord(label, facts.op, "recurrent state", save_node,
                                                                  recorded is Tri.YES and hidden.alias_certain, at_call=direct,
                                                                  run_by=run_by), state)
            for buffer in facts.saves_buffers:
                tensor = self.parts.module_objects.module_attribute(module, buffer, node)
                if isinstance(tensor, TensorValue):
                    self.parts.saved_tensors.save(tensor, SavedRecord(label, facts.op, f"`{buffer}` buffer", save_node,
                                                                      recorded is Tri.YES, at_call=False, run_by=run_by), state)
        if facts.output_views_input:
            return source.fresh_view(Origin(f"the output of `{label}`", node), grad_enabled=state.grad_enabled)
        result = self.parts.tensor_ops.in_precision(
            TensorOps.fresh_result(recorded, Origin(f"the output of `{label}`", save_node)), facts.op, [source])
        if facts.saves_output and recorded is not Tri.NO:
            self.parts.saved_tensors.save(result, SavedRecord(label, facts.op, "output", save_node, recorded is Tri.YES,
                                                              at_call=direct, run_by=run_by), state)
        # its parameters' graphs too: tensors computed by the caller where `functional_call` put them
        return self.parts.tensor_ops.with_history(result, [source, *recurrent, *others, *module.parameters.values()],
                                                  first_serial, state)

    def module_output(self, module: ModuleValue, source: Value, node: cst.CSTNode, state: State,
                      others: list[Value] | None = None) -> Value:
        """The output of a module whose forward we do not follow: a new tensor, nothing saved, in the
        graphs of `source` and of the `others` tensors it was given (a loss's target)."""
        if module.user_class is None and module_facts.module(module.class_name) is None and module.children is None \
                and not isinstance(source, (TensorValue, ArgumentValue)):
            return UNKNOWN
        inputs = [source, *(others or ())]
        rg = module.has_trainable_parameters()
        for value in inputs:
            rg = rg | self.parts.tensor_ops.requires_grad_of(value)
        result = TensorOps.fresh_result(rg & state.grad_enabled, Origin(f"the output of `{module.class_name}`", node))
        history = frozenset().union(*(v.history for v in inputs if isinstance(v, (TensorValue, LostValue))))
        known = all(v.graph_known for v in inputs if isinstance(v, TensorValue)) and isinstance(source, TensorValue) \
            and not any(isinstance(v, LostValue) for v in inputs)
        return evolved(result, history=history, graph_known=known)  # as `with_history` keeps what a lost input's graph may hold


def _recurrent_state(args: list[Value], kwargs: dict[str, Value]) -> list[TensorValue]:
    """The tensors of an RNN's given state: `hx` or the second argument, a tensor or a tuple (LSTM's `(h, c)`)."""
    given = args[1] if len(args) > 1 else kwargs.get("hx")
    items = given.items if isinstance(given, SequenceValue) else (given,)
    return [item for item in items if isinstance(item, TensorValue)]


def _keywords(kwargs: dict[str, Value], given: bool) -> list[Value]:
    """What a hook registered `with_kwargs=True` (`given`) is given after the call's arguments: its keywords."""
    return [DictValue({k: v for k, v in kwargs.items() if k != "**"}, complete="**" not in kwargs)] if given else []


def bound_arguments(function: Value | None) -> tuple[Value | None, tuple[Value, ...], dict[str, Value]]:
    """A callable given to be called later (a hook, `apply`'s function): the function, with the
    arguments and keywords a partial binds before those of the call (none for a plain function)."""
    if isinstance(function, PartialValue):
        return function.func, function.args, function.kwargs
    return function, (), {}


BACKWARD_HOOK_FUNCTION = "BackwardHookFunction"  # what torch names the views a full backward hook hands on


def _backward_hook_views(output: Value) -> Value:
    """A fully backward-hooked module's output as torch hands it on: each tensor that requires grad is a view
    a `BackwardHookFunction` returned, which may not be changed in place."""
    if isinstance(output, TensorValue) and output.requires_grad is not Tri.NO:
        return evolved(output, is_leaf=False, function_view=BACKWARD_HOOK_FUNCTION)
    if isinstance(output, SequenceValue) and output.repeated is None:
        return SequenceValue(tuple(_backward_hook_views(item) for item in output.items))
    return output


def _named_modules(module: ModuleValue) -> list[tuple[str | None, ModuleValue]]:
    """`named_modules()`: each module under `module` (itself first, as `""`) with its dotted name,
    in registration order, once."""
    named: list[tuple[str | None, ModuleValue]] = []
    visited: set[int] = set()
    pending: list[tuple[ModuleValue, str]] = [(module, "")]
    while pending:
        current, name = pending.pop()
        if id(current) in visited:
            continue
        visited.add(id(current))
        named.append((name, current))
        # a container's indexed children were registered first (`super().__init__(*layers)`, then `self.head`)
        indices = current.child_names or [str(i) for i in range(len(current.children or []))]
        under = [(k, c) for k, c in zip(indices, current.children or []) if isinstance(c, ModuleValue)] + \
            [(k, c) for k, c in current.named_children.items() if isinstance(c, ModuleValue)]
        pending += [(child, f"{name}.{key}" if name else key) for key, child in reversed(under)]
    return named


def _submodule(module: ModuleValue, path: str) -> Value:
    """`module.get_submodule("layers.0.attn")`: the module at that dotted path of names (a
    `Sequential`'s or `ModuleList`'s by index), or UNKNOWN."""
    found: Value = module
    for name in path.split(".") if path else []:
        if not isinstance(found, ModuleValue):
            return UNKNOWN
        child = found.named_children.get(name)
        indices = found.child_names or tuple(str(i) for i in range(len(found.children or [])))
        if child is None and name in indices and found.children is not None and found.children_exact:
            child = found.children[indices.index(name)]
        found = child if isinstance(child, ModuleValue) else UNKNOWN
    return found


def _train_overrides(module: ModuleValue) -> list[tuple[ModuleValue, tuple[cst.FunctionDef, Definitions]]]:
    """The modules under `module` whose class defines its own `train` (a LoRA layer merging its
    weights on `eval()`), but none under one of those: its `super().train(mode)` reaches them."""
    found, pending, seen = [], _children_of(module), {id(module)}
    while pending:
        child = pending.pop(0)
        if id(child) in seen:
            continue
        seen.add(id(child))
        train = child.definitions.method(child.user_class, "train") \
            if child.definitions is not None and child.user_class is not None else None
        if train is not None:
            found.append((child, train))
        else:
            pending.extend(_children_of(child))
    return found


def _children_of(module: ModuleValue) -> list[ModuleValue]:
    return [m for m in (*(module.children or ()), *module.named_children.values()) if isinstance(m, ModuleValue)]


def _set_training(module: ModuleValue, mode: Tri) -> None:
    """`train(mode)` / `eval()`: the module and every module under it."""
    for each in module.tree():
        each.training = mode


def change_children(container: ModuleValue, method: str, args: list[Value]) -> Value:
    """`pop(i)`, `insert(i, m)`, `extend(ms)`, `container[i] = m` (`__setitem__`) of a `torch.nn`
    container: its children changed where the index is known, else no longer known one by one."""
    if container.children is None:
        return UNKNOWN
    children = list(container.children)
    index = args[0].value if args and isinstance(args[0], ConstValue) and type(args[0].value) is int else None
    popped: Value = UNKNOWN
    if index is not None and -len(children) <= index < len(children) and method in ("pop", "__setitem__"):
        if method == "pop":
            popped = children.pop(index)
        elif isinstance(args[1], ModuleValue):
            children[index] = args[1]
        else:
            index = None
    elif index is not None and method == "insert" and len(args) > 1 and isinstance(args[1], ModuleValue):
        children.insert(index, args[1])
    elif method == "extend" and args and isinstance(args[0], SequenceValue) and args[0].repeated is None \
            and all(isinstance(m, ModuleValue) for m in args[0].items):
        children.extend(args[0].items)  # type: ignore[arg-type]
        index = 0
    else:
        index = None
    if index is None:
        container.children_exact = False
    container.children, container.child_names = children, ()
    return popped


def _add_child(container: ModuleValue, name: str, child: ModuleValue) -> None:
    """`container.add_module(name, child)` of a `torch.nn` container: a child of that name replaced
    where it stands, else one more at the end."""
    names = list(container.child_names) or [str(i) for i in range(len(container.children or ()))]
    children = list(container.children or ())
    if name in names:
        children[names.index(name)] = child
    else:
        names.append(name)
        children.append(child)
    container.children, container.child_names = children, tuple(names)
