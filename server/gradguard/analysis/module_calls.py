"""`nn.Module`s: class detection, construction from the module facts, attributes, methods and calls."""

from __future__ import annotations


import libcst as cst

from gradguard.analysis.names import dotted_name, is_static_method, is_torch_name, normalise_torch_name, qualname_of
from gradguard.analysis.shared import InterpreterState
from gradguard.analysis.state import State
from gradguard.analysis.torch_calls import compile_backend
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    BuiltinRef,
    ConstValue,
    DictValue,
    FunctionRef,
    ImportRef,
    LostValue,
    ModuleValue,
    OptimizerValue,
    Origin,
    ParametersValue,
    PartialValue,
    SavedRecord,
    SequenceValue,
    SuperValue,
    TensorValue,
    Tri,
    Value,
    evolved,
    new_version_counter,
)
from gradguard.knowledge import modules as module_facts

MAX_UNROLLED_MODULES = 64  # `model.modules()`, `model.apply(f)`, loops over modules: one by one up to this many
_NN_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
_RETURNS_PAIR = frozenset({"RNN", "GRU", "LSTM", "LSTMCell", "MultiheadAttention"})  # torch modules returning two values


class ModuleCalls(InterpreterState):
    """The interpreter's part that builds and calls `nn.Module`s."""

    def class_base(self, base: cst.BaseExpression, state: State) -> Value:
        """A base class as written in a class statement (a class of another project file resolved)."""
        value = self.eval(base, state)
        if isinstance(value, ImportRef) and not is_torch_name(value.qualname):
            if self.library and not self.call_stack:
                return value  # a library's base from another of its files: not read for this (see `module_kind`)
            resolved = self.resolve_import(value)
            return resolved if resolved is not UNKNOWN else value
        return value

    @staticmethod
    def module_kind(bases: tuple[Value, ...]) -> tuple[bool, str | None]:
        """Whether a class with these bases is an `nn.Module`, and the `torch.nn` container it derives from."""
        is_module, torch_base = False, None
        for value in bases:
            name = qualname_of(value)
            if name is not None:
                short = normalise_torch_name(name).removeprefix("torch.nn.")
                if (normalise_torch_name(name) in _NN_MODULE_BASES or short in module_facts.MODULES
                        or name.endswith(".Module")):
                    is_module = True
                if short in _CONTAINERS and normalise_torch_name(name).startswith("torch.nn."):
                    is_module, torch_base = True, torch_base or short
            if isinstance(value, FunctionRef) and isinstance(value.node, cst.ClassDef):
                template = value.definitions.classes.get(value.name, (None, None))[1]
                if template is not None and template.is_module:
                    is_module, torch_base = True, torch_base or template.torch_base
        return is_module, torch_base

    def instantiate(self, cls: FunctionRef, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode,
                    state: State) -> Value:
        """`Cls(...)`: a new object whose `__init__` runs with this call's arguments (the class's
        template, built from its defaults, when that call cannot be followed)."""
        template = cls.definitions.classes.get(cls.name, (None, None))[1]
        if template is None:
            return UNKNOWN
        return self.summarised(cls.node, cls.definitions, args, kwargs, state,
                               lambda: self.construct_instance(cls, template, args, kwargs, node, state))

    def construct_instance(self, cls: FunctionRef, template: ModuleValue, args: list[Value],
                           kwargs: dict[str, Value], node: cst.CSTNode, state: State) -> Value:
        """A new instance of `cls` with its `__init__` run on these arguments."""
        instance = ModuleValue(cls.name, node, user_class=cls.name, definitions=cls.definitions,
                               is_module=template.is_module, torch_base=template.torch_base,
                               children=[] if template.torch_base else None, built_in=self.current_file())
        init = cls.definitions.method(cls.name, "__init__")
        if init is None:
            self.init_container(instance, args)
            if self.derives_from_dict(cls) and len(args) == 1 and isinstance(args[0], DictValue) and not kwargs:
                instance.mapping = args[0]
            fields = annotated_fields(cls.node) if isinstance(cls.node, cst.ClassDef) else []
            for key, value in zip(fields, args):  # a dataclass's or NamedTuple's fields in order
                instance.named_children[key] = value
            for key, value in kwargs.items():  # and by name (`GPT2Config(n_embd=16)`)
                if key in fields or cls.definitions.class_attribute(cls.name, key) is not None:
                    instance.named_children[key] = value
            return instance
        if self.call_user_function(init[0], init[1], instance, args, kwargs, node, state) is UNKNOWN:
            copy = self.instance_copy(template)
            if copy is not None:
                copy.node = node
                return copy
        return instance

    @staticmethod
    def derives_from_dict(cls: FunctionRef) -> bool:
        """Whether a class derives (directly) from `dict` or `collections.OrderedDict`."""
        bases = cls.definitions.bases.get(cls.name, ())
        return any((isinstance(b, BuiltinRef) and b.name == "dict") or qualname_of(b) in (
            "collections.OrderedDict", "typing.OrderedDict") for b in bases)

    @staticmethod
    def init_container(instance: ModuleValue, args: list[Value]) -> None:
        """`nn.Sequential.__init__(*modules)` / `nn.ModuleList.__init__(modules)` of a subclass."""
        items = list(args)
        if instance.torch_base == "ModuleList" and args and isinstance(args[0], SequenceValue):
            items = list(args[0].items) if args[0].repeated is None else [args[0].repeated]
            instance.children_exact = args[0].repeated is None and args[0].known_length
        instance.children = [c for c in items if isinstance(c, ModuleValue)] if all(
            isinstance(c, ModuleValue) for c in items) else None

    def super_of(self, state: State) -> Value:
        """`super()` inside the method running now."""
        function = self.call_stack[-1] if self.call_stack else self.analysing
        definitions = self.call_definitions[-1] if self.call_stack else self.definitions
        if function is None:
            return UNKNOWN
        owner = definitions.owner_of(function)
        positional = [*function.params.posonly_params, *function.params.params]
        instance = state.lookup(positional[0].name.value) if positional else None
        if owner is None or not isinstance(instance, ModuleValue):
            return UNKNOWN
        return SuperValue(instance, owner, definitions)

    def call_super(self, receiver: SuperValue, method: str, args: list[Value], kwargs: dict[str, Value],
                   node: cst.Call, state: State) -> Value:
        """`super().method(...)`: the method of the first base (of the project) that has it."""
        found = receiver.definitions.method(receiver.class_name, method, after=True)
        if found is not None:
            return self.call_user_function(found[0], found[1], receiver.instance, args, kwargs, node, state)
        instance = receiver.instance
        if method == "__getitem__" and instance.mapping is not None and len(args) == 1:
            return self.subscript_of(instance.mapping, args[0], state)
        if method == "__init__" and instance.torch_base is not None:
            self.init_container(instance, args)
        elif method == "forward" and instance.torch_base == "Sequential":
            return self.run_in_order(instance, args[0] if args else UNKNOWN, node, state)
        return UNKNOWN

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
        if child.node is not None and child.built_in == self.definitions.path:
            return child.node
        return node.func if isinstance(node, cst.Call) else node

    def copy_object(self, value: Value) -> Value:
        """`copy.deepcopy(value)`: modules and their submodules with parameters of their own (a
        tensor shared between two of them stays shared in the copy), or a new tensor."""
        remap: dict[int, int] = {}
        copies: dict[int, Value] = {}

        def fresh(item: Value) -> Value:
            if isinstance(item, TensorValue):
                vc = remap.setdefault(item.version_counter, new_version_counter())
                return evolved(item, version_counter=vc, history=frozenset(), view_of_leaf=False,
                               multi_output_view=None, later_view=None, no_grad_view=False, function_view=None,
                               storage_of=None, may_alias=frozenset())
            if id(item) in copies:  # an object that refers back to itself, or one shared by two owners
                return copies[id(item)]
            if isinstance(item, SequenceValue) and item.mutable:
                listed = copies[id(item)] = SequenceValue(mutable=True)  # type: ignore[assignment]
                listed.items = tuple(fresh(v) for v in item.items)
                listed.repeated = fresh(item.repeated) if item.repeated is not None else None
                return listed
            if isinstance(item, PartialValue):  # `self.act = partial(...)` of a copied module
                return evolved(item, func=fresh(item.func), args=tuple(fresh(a) for a in item.args),
                               kwargs={k: fresh(v) for k, v in item.kwargs.items()})
            if isinstance(item, OptimizerValue):  # its parameters are the copied modules' (`self.opt` of a trainer)
                return evolved(item, parameters=tuple(fresh(p) for p in item.parameters))
            if isinstance(item, DictValue):
                mapping = copies[id(item)] = DictValue(complete=item.complete)  # type: ignore[assignment]
                mapping.entries = {k: fresh(v) for k, v in item.entries.items()}
                return mapping
            if not isinstance(item, ModuleValue):
                return item
            copy = copies[id(item)] = evolved(item, parameters={}, named_children={}, forward_hooks=list(item.forward_hooks))
            copy.parameters = {k: fresh(v) for k, v in item.parameters.items()}  # type: ignore[misc]
            copy.buffers = {k: fresh(v) for k, v in item.buffers.items()}  # type: ignore[misc]
            copy.children = None if item.children is None else [fresh(c) for c in item.children]  # type: ignore[misc]
            copy.named_children = {k: fresh(v) for k, v in item.named_children.items()}
            copy.mapping = fresh(item.mapping) if item.mapping is not None else None  # type: ignore[assignment]
            return copy

        return fresh(value)

    def instance_copy(self, template: ModuleValue | None) -> ModuleValue | None:
        """A new instance of a user module class: its own parameters (fresh version counters)."""
        copy = self.copy_object(template) if template is not None else None
        return copy if isinstance(copy, ModuleValue) else None

    def module_attribute(self, owner: ModuleValue, attribute: str, node: cst.CSTNode) -> Value:
        if attribute in owner.named_children:
            return owner.named_children[attribute]
        if owner.user_class is not None and owner.definitions is not None:
            found = owner.definitions.method(owner.user_class, attribute)
            if found is not None:
                return FunctionRef(attribute, found[0], found[1], bound_self=None if is_static_method(found[0]) else owner)
            shared = owner.definitions.class_attribute(owner.user_class, attribute)
            if shared is not None:
                return shared
            aliases = owner.definitions.class_attribute(owner.user_class, "attribute_map")
            if isinstance(aliases, DictValue) and isinstance(target := aliases.entries.get(attribute), ConstValue) \
                    and isinstance(target.value, str) and target.value != attribute:
                return self.module_attribute(owner, target.value, node)  # a config's `hidden_size` → `n_embd`
        if attribute in owner.parameters:
            return owner.parameters[attribute]
        if attribute == "training" and owner.is_module and owner.training is not Tri.MAYBE:
            return ConstValue(owner.training is Tri.YES)  # `F.dropout(h, training=self.training, inplace=True)`
        if attribute in owner.buffers:
            return owner.buffers[attribute]
        if owner.user_class is None and attribute in ("running_mean", "running_var"):
            tensor = TensorValue(new_version_counter(), Tri.NO, True, Origin(f"a buffer of `{owner.class_name}`", owner.node))
            owner.buffers[attribute] = tensor
            return tensor
        return UNKNOWN

    def construct_module(self, class_name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                         state: State) -> Value:
        if class_name == "ModuleDict" and args and isinstance(args[0], DictValue) and args[0].complete:
            return ModuleValue(class_name, node, children=[], named_children={str(k): v for k, v in args[0].entries.items()})
        if class_name in ("Sequential", "ModuleList"):
            items: list[Value] = list(args)
            if class_name == "ModuleList" and args and isinstance(args[0], SequenceValue):
                items = list(args[0].items) if args[0].repeated is None else [args[0].repeated]
            elif class_name == "ModuleList" and args:
                items = [UNKNOWN]
            if class_name == "Sequential" and len(args) == 1 and isinstance(args[0], DictValue) and args[0].complete:
                items = list(args[0].entries.values())  # `nn.Sequential(OrderedDict(...))`
            children = [c for c in items if isinstance(c, ModuleValue)]
            complete = len(children) == len(items) and "*" not in kwargs
            exact = not (class_name == "ModuleList" and args and isinstance(args[0], SequenceValue)
                         and (args[0].repeated is not None or not args[0].known_length))
            return ModuleValue(class_name, node, children=children if complete else None, children_exact=exact)
        facts = module_facts.module(class_name)
        if facts is None:
            return ModuleValue(class_name, node, children=None if class_name in module_facts.CONTAINERS else [])
        probability = args[0] if args else kwargs.get("p")
        if facts.returns_input_in_eval and isinstance(probability, ConstValue) and probability.value == 0:
            return ModuleValue(class_name, node, children=[], returns_input=True)  # p=0: its input, in any mode
        value = ModuleValue(class_name, node, children=[])
        affine = next((kwargs[k] for k in ("affine", "elementwise_affine") if k in kwargs), ConstValue(True))
        names = self.recurrent_parameters(class_name, args, kwargs) \
            if class_name in module_facts.RECURRENT_NETWORKS else facts.parameters
        for name in names:
            if name == "bias" and isinstance(kwargs.get("bias"), ConstValue) and not kwargs["bias"].value:
                continue
            if name in ("weight", "bias") and isinstance(affine, ConstValue) and affine.value is False:
                continue  # `BatchNorm1d(c, affine=False)`, `LayerNorm(d, elementwise_affine=False)`
            value.parameters[name] = TensorValue(new_version_counter(), Tri.YES, True,
                                                 Origin(f"the {name} of `nn.{class_name}`", node))
        if facts.inplace_position is not None:
            value.inplace = self.flag(args, kwargs, facts.inplace_position, "inplace", False) is Tri.YES
        if class_name in ("Embedding", "EmbeddingBag"):
            position = 3 if class_name == "Embedding" else 2
            max_norm = args[position] if len(args) > position else kwargs.get("max_norm", ConstValue(None))
            value.renorms_weight = isinstance(max_norm, ConstValue) and max_norm.value is not None
        if class_name == "MultiheadAttention":  # batch_first transposes the inputs into contiguous copies
            value.copies_input = self.flag(args, kwargs, 8, "batch_first", False) is Tri.YES
        return value

    @staticmethod
    def recurrent_parameters(class_name: str, args: list[Value], kwargs: dict[str, Value]) -> tuple[str, ...]:
        """The parameters of `nn.RNN`/`LSTM`/`GRU(input_size, hidden_size, num_layers, ...)` from the
        arguments given as constants (a value not known takes the default)."""
        positions = {"num_layers": 2, "bias": 3, "bidirectional": 6, "proj_size": 7}
        if class_name == "RNN":  # `nonlinearity` comes before `bias`
            positions = {"num_layers": 2, "bias": 4, "bidirectional": 7}
        given = {}
        for keyword, position in positions.items():
            value = args[position] if len(args) > position else kwargs.get(keyword)
            if isinstance(value, ConstValue) and isinstance(value.value, (bool, int)):
                given[keyword] = value.value
        return module_facts.recurrent_parameters(**given)

    def call_module_method(self, module: ModuleValue, method: str, args: list[Value], kwargs: dict[str, Value],
                           node: cst.Call, state: State) -> Value:
        if method == "compile":  # compiles the module's calls in place
            module.compiled = compile_backend("torch.compile", [], kwargs)
            return ConstValue(None)
        if method == "parameters":
            params, complete = module.all_parameters()
            return ParametersValue(tuple(params), complete)
        if method == "named_parameters":
            params, complete = module.all_parameters()
            named = self.parameter_names(module)
            if not complete or len(named) != len(params):
                return SequenceValue(repeated=SequenceValue((UNKNOWN, self.join_elements(params, state)))) \
                    if params else UNKNOWN
            return SequenceValue(tuple(SequenceValue((ConstValue(n), p)) for n, p in named))
        if method in ("items", "keys", "values") and module.class_name == "ModuleDict" and module.user_class is None:
            entries = [(k, v) for k, v in module.named_children.items() if isinstance(v, ModuleValue)]
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
            return SequenceValue(tuple(SequenceValue((UNKNOWN, m)) for m in found)) \
                if complete and len(found) <= MAX_UNROLLED_MODULES else UNKNOWN
        if method in ("eval", "train"):
            mode = Tri.NO if method == "eval" else self.flag(args, kwargs, 0, "mode", True)
            self.set_training(module, mode)
            return module
        if method in ("to", "cuda", "cpu", "float", "double", "half", "requires_grad_"):
            if method == "requires_grad_":
                flag = self.flag(args, kwargs, 0, "requires_grad", True)
                for parameter in module.all_parameters()[0]:
                    self.set_flags(state, parameter, evolved(parameter, requires_grad=flag))
            return module
        if method == "forward":
            return self.call_module(module, args, kwargs, node, state, report_node=node)
        if method == "modules":
            found, complete = module.submodules()
            return SequenceValue(tuple(found)) if complete and len(found) <= MAX_UNROLLED_MODULES else UNKNOWN
        function, bound, keywords = bound_arguments(args[0] if args else None)
        if isinstance(function, ImportRef):
            function = self.resolve_import(function)
        if method == "apply" and isinstance(function, FunctionRef) and isinstance(function.node, cst.FunctionDef):
            self.apply_to_submodules(module, function, bound, keywords, node, state)
            return module
        if method == "append" and module.children is not None and args and isinstance(args[0], ModuleValue):
            module.children.append(args[0])
        if method in ("register_full_backward_hook", "register_full_backward_pre_hook"):
            module.backward_hooked = True
        if method == "register_forward_hook" and args:
            module.forward_hooks.append(self.resolve_import(args[0]) if isinstance(args[0], ImportRef) else args[0])
        if method == "register_buffer" and len(args) > 1 and isinstance(args[0], ConstValue) \
                and isinstance(args[1], TensorValue):
            module.buffers[str(args[0].value)] = args[1]
        elif method in ("add_module", "register_module", "register_buffer", "register_parameter") and len(args) > 1 \
                and isinstance(args[0], ConstValue):
            module.named_children[str(args[0].value)] = args[1]
        return UNKNOWN

    def apply_to_submodules(self, module: ModuleValue, function: FunctionRef, bound: tuple[Value, ...],
                            keywords: dict[str, Value], node: cst.CSTNode, state: State) -> None:
        """`module.apply(fn)` (`partial(init_weights, std=0.02)` too): `fn` followed once per class of
        submodule whose own parameters' flags are alike, on its first instance; what it did to that
        one's flags (`requires_grad_(False)`) is done to the others' parameters of the same names (a
        model's hundred `Linear`s give one finding, not a hundred, and one followed call). An `fn`
        that tells instances of one class apart by other means (`m is model.head`) is read as if
        it did the same to each."""
        found, _ = module.submodules()
        done: dict[tuple[object, ...], dict[str, TensorValue]] = {}
        for submodule in found[:MAX_UNROLLED_MODULES]:
            own = submodule.parameters
            kind = (submodule.class_name, submodule.user_class, id(submodule.definitions), submodule.torch_base,
                    tuple((name, p.requires_grad, p.is_leaf) for name, p in own.items()))
            if kind in done:
                for name, flagged in done[kind].items():
                    parameter = own.get(name)
                    if parameter is not None and (flagged.requires_grad, flagged.is_leaf) != \
                            (parameter.requires_grad, parameter.is_leaf):
                        self.set_flags(state, parameter, evolved(parameter, requires_grad=flagged.requires_grad,
                                                                 is_leaf=flagged.is_leaf))
                continue
            before = dict(own)
            self.call_user_function(function.node, function.definitions, function.bound_self, [*bound, submodule],
                                    dict(keywords), node, state,
                                    report="inside" if function.definitions is self.definitions else "every-change")
            done[kind] = {name: parameter for name, parameter in submodule.parameters.items()
                          if name in before and parameter is not before[name]}

    @staticmethod
    def parameter_names(module: ModuleValue) -> list[tuple[str, TensorValue]]:
        """`named_parameters()`: each parameter with its dotted name, in registration order, once."""
        named: list[tuple[str, TensorValue]] = []
        visited: set[int] = set()

        def visit(owner: ModuleValue, prefix: str) -> None:
            if id(owner) in visited:
                return
            visited.add(id(owner))
            named.extend((prefix + k, v) for k, v in owner.parameters.items())
            for key, child in owner.named_children.items():
                if isinstance(child, TensorValue) and child.is_leaf and child.requires_grad is Tri.YES:
                    named.append((prefix + key, child))
                elif isinstance(child, ModuleValue):
                    visit(child, f"{prefix}{key}.")
            for index, child in enumerate(owner.children or []):
                visit(child, f"{prefix}{index}.")

        visit(module, "")
        return named

    @staticmethod
    def set_training(module: ModuleValue, mode: Tri) -> None:
        """`train(mode)` / `eval()`: the module and every module under it."""
        for each in module.tree():
            each.training = mode

    def call_module(self, module: ModuleValue, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode,
                    state: State, report_node: cst.CSTNode) -> Value:
        """`module(*args)`: its forward, then its forward hooks (one that returns a value replaces the output)."""
        with self.compiling(module.compiled, report_node):
            output = self.module_forward(module, args, kwargs, node, state, report_node)
        if module.user_class is None and module.class_name in _RETURNS_PAIR and isinstance(output, TensorValue):
            second = self.fresh_result(output.requires_grad, Origin(f"the state of `{module.class_name}`", node),
                                       output.history)  # (output, h_n); an LSTM's (output, (h_n, c_n))
            cell = self.fresh_result(output.requires_grad, Origin("the cell state of `LSTM`", node), output.history)
            output = SequenceValue((output, SequenceValue((second, cell)) if module.class_name == "LSTM" else second))
        if module.backward_hooked and state.grad_enabled is not Tri.NO:
            output = _backward_hook_views(output)
        for registered in module.forward_hooks:  # a function, or a partial of one: `partial(hook, name=name)`
            hook, bound, keywords = bound_arguments(registered)
            if not (isinstance(hook, FunctionRef) and isinstance(hook.node, cst.FunctionDef)):
                continue
            self.last_callee_env = {}
            returned = self.call_user_function(hook.node, hook.definitions, hook.bound_self,
                                               [*bound, module, SequenceValue(tuple(args)), output], dict(keywords),
                                               node, state)
            positional = [*hook.node.params.posonly_params,
                          *hook.node.params.params][(1 if hook.bound_self else 0) + len(bound):]
            changed = self.last_callee_env.get(positional[2].name.value) if len(positional) == 3 else None
            if isinstance(returned, TensorValue):
                output = returned
            elif isinstance(changed, TensorValue) and isinstance(output, TensorValue) \
                    and changed.version_counter == output.version_counter:
                output = changed  # the hook changed the output's flags (`output.requires_grad_()`)
        return output

    def module_forward(self, module: ModuleValue, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode,
                       state: State, report_node: cst.CSTNode) -> Value:
        inner = module.wrapped()
        if inner is not None:
            return self.call_module(inner, args, kwargs, node, state, report_node)
        source = args[0] if args else UNKNOWN
        if isinstance(source, ArgumentValue):
            source = self.promote(source, state)
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
                return self.call_user_function(forward[0], forward[1], module, args, kwargs, report_node, state)
            if module.torch_base == "Sequential":
                return self.run_in_order(module, source, node, state)
            if not module.is_module:
                return UNKNOWN
        facts = module_facts.module(module.class_name) if module.user_class is None else None
        if facts is None or not isinstance(source, TensorValue):
            return self.module_output(module, source, node, state)
        direct = isinstance(report_node, cst.Call) and report_node is node
        run_by = None if direct else node
        label = (dotted_name(report_node.func) if direct else None) or f"nn.{module.class_name}"
        training = module.training
        weight = module.parameters.get("weight")
        if module.renorms_weight and weight is not None:  # `embedding_renorm_`, under no_grad, before the lookup
            saved_mode, state.grad_enabled = state.grad_enabled, Tri.NO
            self.mutate(weight, report_node, None, f"`{label}(...)` (max_norm renormalizes the weight in place)", state)
            state.grad_enabled = saved_mode
        if facts.returns_input or module.returns_input or (facts.returns_input_in_eval and training is Tri.NO):
            return source
        if module.inplace and facts.inplace is not module_facts.InplaceSaves.NO_INPLACE:
            if facts.returns_input_in_eval:  # dropout: `mul_` by the mask, only in train mode
                if training is Tri.YES:
                    self.mutate(source, report_node, None, f"`{label}(inplace=True)`", state, inside_module=module.node)
                return source
            self.mutate(source, report_node, None, f"`{label}(inplace=True)`", state, inside_module=module.node)
            first_serial = self.next_serial
            recorded = (source.requires_grad | module.has_trainable_parameters()) & state.grad_enabled
            if facts.inplace is module_facts.InplaceSaves.RESULT and recorded is not Tri.NO:
                self.save(source, SavedRecord(label, f"{facts.op}_", "output", report_node,
                                              recorded is Tri.YES and source.alias_certain, run_by=run_by), state)
            updated = source
            if recorded is not Tri.NO and source.requires_grad is Tri.NO:
                updated = evolved(source, requires_grad=recorded, is_leaf=False)
            updated = self.with_history(updated, [source], first_serial, state)
            if updated is not source:
                self.rebind(state, source, updated)
            return updated
        weight_rg = module.has_trainable_parameters()
        recurrent = self.recurrent_state(args, kwargs) if facts.saves_state else []
        input_rg = source.requires_grad
        for hidden in recurrent:
            input_rg = input_rg | hidden.requires_grad
        recorded = (input_rg | weight_rg) & state.grad_enabled
        save_node = report_node
        first_serial = self.next_serial
        if recorded is not Tri.NO:
            input_when = {
                module_facts.Saves.ALWAYS: recorded,
                module_facts.Saves.IF_WEIGHT_REQUIRES_GRAD: weight_rg & recorded,
                module_facts.Saves.NEVER: Tri.NO,
                module_facts.Saves.IF_INPUT_REQUIRES_GRAD: source.requires_grad & recorded,
            }[facts.saves_input]
            if input_when is not Tri.NO and not module.copies_input:
                self.save(source, SavedRecord(label, facts.op, "input", save_node,
                                              input_when is Tri.YES and source.alias_certain, at_call=direct,
                                              run_by=run_by), state)
            weight_when = {
                module_facts.Saves.ALWAYS: recorded,
                module_facts.Saves.IF_INPUT_REQUIRES_GRAD: input_rg & recorded,
                module_facts.Saves.NEVER: Tri.NO,
                module_facts.Saves.IF_WEIGHT_REQUIRES_GRAD: weight_rg & recorded,
            }[facts.saves_weight]
            weights = [p for name, p in module.parameters.items() if name == "weight" or name.startswith("weight_")]
            for weight in weights if weight_when is not Tri.NO else ():  # an RNN's: weight_ih_l0, weight_hh_l0
                self.save(weight, SavedRecord(label, facts.op, "weight", save_node, weight_when is Tri.YES,
                                              at_call=False, run_by=run_by), state)
            for hidden in recurrent:
                self.save(hidden, SavedRecord(label, facts.op, "recurrent state", save_node,
                                              recorded is Tri.YES and hidden.alias_certain, at_call=direct,
                                              run_by=run_by), state)
            for buffer in facts.saves_buffers:
                tensor = self.module_attribute(module, buffer, node)
                if isinstance(tensor, TensorValue):
                    self.save(tensor, SavedRecord(label, facts.op, f"`{buffer}` buffer", save_node,
                                                  recorded is Tri.YES, at_call=False, run_by=run_by), state)
        if facts.output_views_input:
            return source.fresh_view(Origin(f"the output of `{label}`", node), grad_enabled=state.grad_enabled)
        result = self.fresh_result(recorded, Origin(f"the output of `{label}`", save_node))
        if facts.saves_output and recorded is not Tri.NO:
            self.save(result, SavedRecord(label, facts.op, "output", save_node, recorded is Tri.YES,
                                          at_call=direct, run_by=run_by), state)
        return self.with_history(result, [source, *recurrent], first_serial, state)

    @staticmethod
    def recurrent_state(args: list[Value], kwargs: dict[str, Value]) -> list[TensorValue]:
        """The tensors of an RNN's given state: `hx` or the second argument, a tensor or a tuple (LSTM's `(h, c)`)."""
        given = args[1] if len(args) > 1 else kwargs.get("hx")
        items = given.items if isinstance(given, SequenceValue) else (given,)
        return [item for item in items if isinstance(item, TensorValue)]

    def module_output(self, module: ModuleValue, source: Value, node: cst.CSTNode, state: State) -> Value:
        """The output of a module whose forward we do not follow: a new tensor, nothing saved."""
        if module.user_class is None and module_facts.module(module.class_name) is None and module.children is None \
                and not isinstance(source, (TensorValue, ArgumentValue)):
            return UNKNOWN
        rg = module.has_trainable_parameters() | self.requires_grad_of(source)
        result = self.fresh_result(rg & state.grad_enabled, Origin(f"the output of `{module.class_name}`", node))
        if isinstance(source, TensorValue):
            return evolved(result, history=source.history, graph_known=source.graph_known)
        return evolved(result, history=source.history if isinstance(source, LostValue) else frozenset(),
                       graph_known=False)  # as `with_history` keeps what a lost input's graph may hold


def bound_arguments(function: Value | None) -> tuple[Value | None, tuple[Value, ...], dict[str, Value]]:
    """A callable given to be called later (a hook, `apply`'s function): the function, with the
    arguments and keywords a partial binds before those of the call (none for a plain function)."""
    if isinstance(function, PartialValue):
        return function.func, function.args, function.kwargs
    return function, (), {}


def annotated_fields(cls: cst.ClassDef) -> list[str]:
    """The names a class body annotates, in order: the fields of a dataclass or a `NamedTuple`."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return [small.target.value for line in body if isinstance(line, cst.SimpleStatementLine)
            for small in line.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)]


BACKWARD_HOOK_FUNCTION = "BackwardHookFunction"  # what torch names the views a full backward hook hands on


def _backward_hook_views(output: Value) -> Value:
    """A fully backward-hooked module's output as torch hands it on: each tensor that requires grad is a view
    a `BackwardHookFunction` returned, which may not be changed in place."""
    if isinstance(output, TensorValue) and output.requires_grad is not Tri.NO:
        return evolved(output, is_leaf=False, function_view=BACKWARD_HOOK_FUNCTION)
    if isinstance(output, SequenceValue) and output.repeated is None:
        return SequenceValue(tuple(_backward_hook_views(item) for item in output.items))
    return output
