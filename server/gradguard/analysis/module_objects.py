"""`nn.Module`s and objects of the project's classes as values: a class's kind from its bases, instances
built by `__init__` or from the module facts, `super()`, deep copies, attributes."""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.names import annotated_fields, is_static_method, is_torch_name, normalise_torch_name, qualname_of
from gradguard.analysis.pretrained_models import derives_from, tie_weights
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    BuiltinRef,
    ConstValue,
    Definitions,
    DictValue,
    FunctionRef,
    ImportRef,
    ModuleValue,
    OptimizerValue,
    Origin,
    PartialValue,
    SequenceValue,
    SuperValue,
    TensorKey,
    TensorValue,
    Tri,
    Value,
    evolved,
    new_version_counter,
)
from gradguard.knowledge import modules as module_facts


_MAX_LINEAGES = 256  # classes whose bases one analysis resolves when a method is not found



class ModuleObjects(Part):
    """Builds modules and objects, and reads their attributes: the interpreter's part that knows what a module holds."""

    def class_base(self, base: cst.BaseExpression, state: State) -> Value:
        """A base class as written in a class statement (a class of another project file resolved)."""
        value = self.parts.expressions.eval(base, state)
        if isinstance(value, ImportRef) and not is_torch_name(value.qualname):
            if self.run.library and not self.run.call_stack:
                return value  # a library's base from another of its files: not read for this (see `module_kind`)
            resolved = self.parts.user_calls.resolve_import(value)
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
        return self.parts.user_calls.summarised(cls.node, cls.definitions, args, kwargs, state,
                                                lambda: self.construct_instance(cls, template, args, kwargs, node, state))

    def construct_instance(self, cls: FunctionRef, template: ModuleValue, args: list[Value],
                           kwargs: dict[str, Value], node: cst.CSTNode, state: State) -> Value:
        """A new instance of `cls` with its `__init__` run on these arguments."""
        instance = ModuleValue(cls.name, node, user_class=cls.name, definitions=cls.definitions,
                               is_module=template.is_module, torch_base=template.torch_base,
                               children=[] if template.torch_base else None, built_in=self.run.current_file())
        init = cls.definitions.method(cls.name, "__init__")
        layer = next((found for defs, name in cls.definitions.mro(cls.name)
                      if (found := torch_layer(defs, name, True)) is not None), None) if init is None else None
        if layer is not None:  # `class BinaryLinear(nn.Linear)` with no `__init__` of its own
            self.build_torch_layer(instance, layer, args, kwargs, node, state)
            return instance
        if init is None:
            self.init_container(instance, args)
            if derives_from_builtin(cls.definitions, cls.name, "dict") and len(args) == 1 \
                    and isinstance(args[0], DictValue) and not kwargs:
                instance.mapping = args[0]
            elif derives_from_builtin(cls.definitions, cls.name, "list") and not kwargs:
                instance.mapping = _list_of(args)
            fields = annotated_fields(cls.node) if isinstance(cls.node, cst.ClassDef) else []
            for key, value in zip(fields, args):  # a dataclass's or NamedTuple's fields in order
                instance.named_children[key] = value
            for key, value in kwargs.items():  # and by name (`GPT2Config(n_embd=16)`)
                if key in fields or cls.definitions.class_attribute(cls.name, key) is not None:
                    instance.named_children[key] = value
            return instance
        if self.parts.user_calls.call_user_function(init[0], init[1], instance, args, kwargs, node, state) is UNKNOWN:
            copy = self.instance_copy(template) if cls.definitions is self.run.definitions else None
            if copy is not None:
                copy.node = node
                return copy
        if not self.run.library and derives_from(instance, "PreTrainedModel"):
            tie_weights(instance)
        return instance  # another file's class: its template is built only where that file is analysed

    @staticmethod
    def init_container(instance: ModuleValue, args: list[Value]) -> None:
        """`nn.Sequential.__init__(*modules)` / `nn.ModuleList.__init__(modules)` of a subclass."""
        items = list(args)
        if instance.torch_base == "ModuleList" and args and isinstance(args[0], SequenceValue):
            items = list(args[0].items) if args[0].repeated is None else [args[0].repeated]
            instance.children_exact = args[0].repeated is None and args[0].known_length
        instance.children = [c for c in items if isinstance(c, ModuleValue)] if all(
            isinstance(c, ModuleValue) for c in items) else None

    def super_of(self, state: State, explicit: list[Value] | None = None) -> Value:
        """`super()` inside the method running now; `super(Class, instance)` with `explicit` given."""
        if explicit is not None:
            cls, instance = explicit
            if isinstance(cls, FunctionRef) and isinstance(cls.node, cst.ClassDef) and isinstance(instance, ModuleValue):
                return SuperValue(instance, cls.name, cls.definitions)
            # `super(type(self), self)`, `super(self.__class__, self)`: as `super()` (the same where the
            # instance's class is the method's own)
        function = self.run.call_stack[-1] if self.run.call_stack else self.run.analysing
        definitions = self.run.call_definitions[-1] if self.run.call_stack else self.run.definitions
        if function is None:
            return UNKNOWN
        owner = definitions.owner_of(function)
        positional = [*function.params.posonly_params, *function.params.params]
        instance = state.lookup(positional[0].name.value) if positional else None
        if owner is None or not isinstance(instance, ModuleValue):
            return UNKNOWN
        return SuperValue(instance, owner, definitions)

    def find_method(self, definitions: Definitions, class_name: str, method: str, *,
                    after: bool = False) -> tuple[cst.FunctionDef, Definitions] | None:
        """`definitions.method(...)`; when the analysed file's own code asks for a method not found
        (not `super()`'s), the imported bases of the class's lineage are resolved first (a library
        class read without its bases of other files: `PreTrainedModel`'s `get_input_embeddings`)."""
        found = definitions.method(class_name, method, after=after)
        if found is None and not after and self._resolve_lineage(definitions, class_name):
            found = definitions.method(class_name, method, after=after)
        return found

    def _resolve_lineage(self, definitions: Definitions, class_name: str) -> bool:
        """Resolve, once per analysis, the bases of `class_name` and of its bases that name classes of
        other files; whether any was resolved."""
        if self.run.project is None or (self.run.library and not self.run.call_stack) or (
                self.run.call_definitions and self.run.call_definitions[-1] is not self.run.definitions):
            return False  # (asked by the analysed file's own code only: a library's calls of its bases cost a read)
        changed, pending = False, [(definitions, class_name)]
        while pending:
            defs, name = pending.pop()
            if (id(defs), name) in self.run.lineages or len(self.run.lineages) > _MAX_LINEAGES:
                continue
            self.run.lineages.add((id(defs), name))
            bases = defs.bases.get(name, ())
            if defs.path is not None and any(isinstance(b, ImportRef) and not is_torch_name(b.qualname) for b in bases):
                found = tuple(self.run.project.resolve(defs.path, b.qualname)
                              if isinstance(b, ImportRef) and not is_torch_name(b.qualname) else b for b in bases)
                resolved = tuple(f if isinstance(f, FunctionRef) and isinstance(f.node, cst.ClassDef) else b
                                 for f, b in zip(found, bases))
                if resolved != bases:
                    defs.bases[name], bases, changed = resolved, resolved, True
            pending += [(b.definitions, b.name) for b in bases if isinstance(b, FunctionRef) and isinstance(b.node, cst.ClassDef)]
        return changed

    def call_super(self, receiver: SuperValue, method: str, args: list[Value], kwargs: dict[str, Value],
                   node: cst.Call, state: State) -> Value:
        """`super().method(...)`: the method of the first class (of the project) after the method's
        own in the order of its instance's class that has it."""
        found = self._after_in_order(receiver, method) or \
            self.find_method(receiver.definitions, receiver.class_name, method, after=True)
        if found is not None:
            self.run.super_frames += 1
            try:
                return self.parts.user_calls.call_user_function(found[0], found[1], receiver.instance, args, kwargs,
                                                                node, state)
            finally:
                self.run.super_frames -= 1
        instance = receiver.instance
        if method == "__getitem__" and instance.mapping is not None and len(args) == 1:
            return self.parts.containers.subscript_of(instance.mapping, args[0], state)
        if method == "__init__" and args and not self.run.library and derives_from(instance, "PreTrainedModel"):
            # what transformers' `PreTrainedModel.__init__` keeps, for a model the user's code builds (its layers
            # sliced by `config.num_hidden_layers` known: each runs); a scan of the library itself goes without
            instance.named_children.setdefault("config", args[0])
        elif method == "__init__" and instance.torch_base is not None:
            self.init_container(instance, args)
        elif method == "__init__" and not kwargs and derives_from_builtin(receiver.definitions, receiver.class_name, "list"):
            instance.mapping = _list_of(args)  # `super().__init__(steps)` of a `list` subclass
        elif method == "__init__" and (layer := torch_layer(receiver.definitions, receiver.class_name, True)) is not None:
            self.build_torch_layer(instance, layer, args, kwargs, node, state)  # `class LoRALinear(nn.Linear)`
        elif method == "forward" and instance.torch_base == "Sequential":
            return self.parts.module_calls.run_in_order(instance, args[0] if args else UNKNOWN, node, state)
        elif method == "forward" and (base := torch_layer(receiver.definitions, receiver.class_name, False)) is not None:
            # `class S(nn.Softmax)`: `super().forward(x)` is that module's forward, given no parameters of its own
            return self.parts.module_calls.module_forward(ModuleValue(base, node, training=instance.training),
                                                          args, kwargs, node, state, node.func)
        elif method not in ("forward", "__init__") and instance.is_module:  # `super().train(mode)`: `nn.Module`'s
            return self.parts.module_calls.call_module_method(instance, method, args, kwargs, node, state)
        return UNKNOWN

    def subclass_created(self, cls: Value, state: State) -> None:
        """Run the `__init_subclass__` a base of the new class `cls` defines (a registry filled as
        each subclass is defined: `Base.registry[cls.__name__.lower()] = cls`), given the class."""
        if not isinstance(cls, FunctionRef) or self.run.call_stack or self.run.library:
            return
        found = self.run.definitions.method(cls.name, "__init_subclass__", after=True)
        if found is not None and found[1] is self.run.definitions:
            self.parts.user_calls.call_user_function(found[0], found[1], None, [cls], {}, cls.node, state)

    @staticmethod
    def _after_in_order(receiver: SuperValue, method: str) -> tuple[cst.FunctionDef, Definitions] | None:
        instance = receiver.instance
        if instance.user_class is None or instance.definitions is None:
            return None
        order = instance.definitions.linearised(instance.user_class)
        at = next((i for i, (d, n) in enumerate(order) if d is receiver.definitions and n == receiver.class_name), None)
        for definitions, name in order[at + 1:] if at is not None else ():
            found = definitions.methods_of(name).get(method)
            if found is not None:
                return found, definitions
        return None

    def build_torch_layer(self, instance: ModuleValue, layer: str, args: list[Value], kwargs: dict[str, Value],
                          node: cst.CSTNode, state: State) -> None:
        """What the `__init__` of the `torch.nn` layer `layer` gives `instance` (of a class derived from it)."""
        built = self.construct_module(layer, args, kwargs, node, state)  # type: ignore[arg-type]
        if isinstance(built, ModuleValue):
            instance.parameters.update({k: v for k, v in built.parameters.items() if k not in instance.parameters})

    def copy_object(self, value: Value) -> Value:
        """`copy.deepcopy(value)`: modules and their submodules with parameters of their own (a
        tensor shared between two of them stays shared in the copy), or a new tensor; lists,
        tuples and dicts holding them are copied with them."""
        return _Copies().fresh(value)

    def parameter_at(self, container: ModuleValue, index: Value | str | slice | None, state: State) -> Value:
        """`params[i]` of an `nn.ParameterList` (`params["key"]` of an `nn.ParameterDict`, `params[1:]`
        a list of them): the parameter at that place, or, for a place not known (or a container given
        a number of tensors not known), any of them; nothing when the places of those held are not known."""
        held = container.parameters
        if any(key.startswith("?") for key in held):
            return UNKNOWN
        if isinstance(index, slice) or (index is None and container.class_name == "ParameterList"):
            if isinstance(index, slice) and container.children_exact:
                return SequenceValue(tuple(list(held.values())[index]))
            return SequenceValue(repeated=self.parts.containers.join_elements(list(held.values()), state)) if held else UNKNOWN
        if isinstance(index, ConstValue) and container.children_exact:
            key = index.value
            if isinstance(key, int) and not isinstance(key, bool) and container.class_name == "ParameterList":
                key = key + len(held) if -len(held) <= key < 0 else key
            return held.get(str(key), UNKNOWN)
        return self.parts.containers.join_elements(list(held.values()), state) if held else UNKNOWN

    @staticmethod
    def change_parameters(container: ModuleValue, method: str, args: list[Value]) -> None:
        """A method of an `nn.ParameterList` / `nn.ParameterDict` that changes what it holds:
        `append`, `extend`, `update` and an item assigned with a known place add parameters
        (`_as_parameter`); any other change leaves the places of those held not known."""
        held = container.parameters
        added: list[tuple[str | None, Value]] = []
        if method == "append" and args:
            added = [(None, args[0])]
        elif method == "extend" and args and isinstance(args[0], SequenceValue) and args[0].repeated is None:
            added = [(None, v) for v in args[0].items]
        elif method == "update" and args and isinstance(args[0], DictValue) and args[0].complete:
            added = [(str(k), v) for k, v in args[0].entries.items()]
        elif method == "__setitem__" and len(args) == 2 and isinstance(args[0], ConstValue):
            key = args[0].value
            if isinstance(key, int) and not isinstance(key, bool) and -len(held) <= key < 0:
                key += len(held)
            added = [(str(key), args[1])]
        if not container.children_exact or not added or not all(isinstance(v, TensorValue) for _, v in added):
            container.children_exact = False  # the places of those held are no longer known
            container.parameters = {f"?{i}": p for i, p in enumerate(held.values())}
            return
        for key, value in added:
            held[key if key is not None else str(len(held))] = _as_parameter(value)  # type: ignore[arg-type]

    def instance_copy(self, template: ModuleValue | None) -> ModuleValue | None:
        """A new instance of a user module class: its own parameters (fresh version counters).

        Only a class of this file has a template built from its `__init__` everywhere: another
        file's is built where that file is analysed, not where it is read (`templates`), so what
        a copy of it holds would depend on which came first. Its copy is bare."""
        if template is not None and template.definitions is not self.run.definitions:
            return ModuleValue(template.class_name, None, user_class=template.user_class, definitions=template.definitions,
                               is_module=template.is_module, torch_base=template.torch_base,
                               children=[] if template.torch_base else None)
        copy = self.copy_object(template) if template is not None else None
        return copy if isinstance(copy, ModuleValue) else None

    def originals(self, module: ModuleValue, grad_enabled: Tri, weights: list[tuple[TensorValue, str, str, Tri]]
                  ) -> list[tuple[TensorValue, str, str, Tri]]:
        """What a call of `module` saves of its weights: `weights` (each with what saves it, how it is
        named, when) but the tensors its parametrizations compute its weight from, and those that
        their computation saves (`weight_norm`'s `original0` and `original1`, the old `weight_g`)
        when they require grad, whatever the input."""
        found = []
        for function, path, decider, what in module.saves_originals:
            owner, deciding = self._dotted(module, path), self._dotted(module, decider) if decider is not None else None
            if isinstance(owner, TensorValue):
                when = deciding.requires_grad & grad_enabled if isinstance(deciding, TensorValue) else \
                    Tri.NO if decider is None else Tri.MAYBE & grad_enabled
                found.append((owner, function, what, when))
        return [w for w in weights if all(w[0] is not o[0] for o in found)] + [o for o in found if o[3] is not Tri.NO]

    def _dotted(self, module: ModuleValue, path: str) -> Value:
        """`module`'s attribute at a dotted path (`parametrizations.weight.original0`)."""
        owner: Value = module
        for part in path.split("."):
            owner = self.module_attribute(owner, part, module.node) if isinstance(owner, ModuleValue) else UNKNOWN
        return owner

    def called(self, value: Value, node: cst.CSTNode) -> Value:
        """What a call of `value` runs: an object of a plain class of the project's, its `__call__`."""
        if isinstance(value, ModuleValue) and not value.is_module and value.user_class is not None:
            return self.module_attribute(value, "__call__", node)
        return value

    def module_attribute(self, owner: ModuleValue, attribute: str, node: cst.CSTNode) -> Value:
        if attribute in owner.named_children:
            return owner.named_children[attribute]
        if owner.user_class is not None and owner.definitions is not None:
            found = self.find_method(owner.definitions, owner.user_class, attribute)
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
            names: tuple[str, ...] = ()
            if class_name == "Sequential" and len(args) == 1 and isinstance(args[0], DictValue) and args[0].complete:
                items = list(args[0].entries.values())  # `nn.Sequential(OrderedDict(...))`
                names = tuple(str(k) for k in args[0].entries)
            children = [c for c in items if isinstance(c, ModuleValue)]
            complete = len(children) == len(items) and "*" not in kwargs
            exact = not (class_name == "ModuleList" and args and isinstance(args[0], SequenceValue)
                         and (args[0].repeated is not None or not args[0].known_length))
            return ModuleValue(class_name, node, children=children if complete else None, children_exact=exact,
                               child_names=names if complete else ())
        if class_name in ("ParameterList", "ParameterDict"):
            return _parameter_container(class_name, args[0] if args else None, node)
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
            value.inplace = self.parts.torch_calls.flag(args, kwargs, facts.inplace_position, "inplace", False) is Tri.YES
        if class_name in ("Embedding", "EmbeddingBag"):
            position = 3 if class_name == "Embedding" else 2
            max_norm = args[position] if len(args) > position else kwargs.get("max_norm", ConstValue(None))
            value.renorms_weight = isinstance(max_norm, ConstValue) and max_norm.value is not None
        if class_name == "MultiheadAttention":  # batch_first transposes the inputs into contiguous copies
            value.copies_input = self.parts.torch_calls.flag(args, kwargs, 8, "batch_first", False) is Tri.YES
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


_NN_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


class _Copies:
    """One deep copy's work: the tensors' new version counters and the objects already copied (a
    class, not a nested function calling itself, which would hold them all in a reference cycle)."""

    def __init__(self) -> None:
        self.remap: dict[int, int] = {}
        self.copies: dict[int, Value] = {}

    def fresh_key(self, key: object) -> object:
        """A copied dict's key: a tensor key is the copy of its tensor."""
        if not isinstance(key, TensorKey):
            return key
        copied = self.fresh(key.tensor)
        return TensorKey.of(copied) if isinstance(copied, TensorValue) else key

    def fresh(self, item: Value) -> Value:
        """The copy of `item` (the same copy for each holder of one object)."""
        if isinstance(item, TensorValue):
            vc = self.remap.setdefault(item.version_counter, new_version_counter())
            return evolved(item, version_counter=vc, history=frozenset(), view_of_leaf=False,
                           multi_output_view=None, later_view=None, no_grad_view=False, function_view=None,
                           storage_of=None, may_alias=frozenset(), grad_hooks=())  # (torch copies no hook)
        if id(item) in self.copies:  # an object that refers back to itself, or one shared by two owners
            return self.copies[id(item)]
        if isinstance(item, SequenceValue):  # a list, or a tuple: its modules and tensors are copied too
            listed = self.copies[id(item)] = SequenceValue(mutable=True) if item.mutable else evolved(item)
            listed.items = tuple(self.fresh(v) for v in item.items)
            listed.repeated = self.fresh(item.repeated) if item.repeated is not None else None
            return listed
        if isinstance(item, PartialValue):  # `self.act = partial(...)` of a copied module
            return evolved(item, func=self.fresh(item.func), args=tuple(self.fresh(a) for a in item.args),
                           kwargs={k: self.fresh(v) for k, v in item.kwargs.items()})
        if isinstance(item, OptimizerValue):  # its parameters are the copied modules' (`self.opt` of a trainer)
            return evolved(item, parameters=tuple(self.fresh(p) for p in item.parameters))
        if isinstance(item, DictValue):
            mapping = self.copies[id(item)] = DictValue(complete=item.complete, factory=item.factory)  # type: ignore[assignment]
            mapping.entries = {self.fresh_key(k): self.fresh(v) for k, v in item.entries.items()}
            return mapping
        if not isinstance(item, ModuleValue):
            return item
        copy = self.copies[id(item)] = evolved(item, parameters={}, named_children={}, forward_hooks=list(item.forward_hooks),
                                                   forward_pre_hooks=list(item.forward_pre_hooks))
        copy.parameters = {k: self.fresh(v) for k, v in item.parameters.items()}  # type: ignore[misc]
        copy.buffers = {k: self.fresh(v) for k, v in item.buffers.items()}  # type: ignore[misc]
        copy.children = None if item.children is None else [self.fresh(c) for c in item.children]  # type: ignore[misc]
        copy.named_children = {k: self.fresh(v) for k, v in item.named_children.items()}
        copy.mapping = self.fresh(item.mapping) if item.mapping is not None else None  # type: ignore[assignment]
        return copy


def _parameter_container(class_name: str, given: Value | None, node: cst.Call) -> ModuleValue:
    """`nn.ParameterList(params)` / `nn.ParameterDict(mapping)`: a module whose parameters are the
    tensors given (each made an `nn.Parameter`, as torch makes them), named by their place (`"0"`,
    `"1"` ...) or key, as torch names them. One given a number of tensors not known holds one that
    stands for them all; one given values not known, or not all tensors, holds none it can place."""
    container = ModuleValue(class_name, node, children=[])
    if given is None:
        return container
    items: dict[str, Value] = {}
    if isinstance(given, SequenceValue):
        items = {str(i): v for i, v in enumerate(given.items if given.repeated is None else [given.repeated])}
        container.children_exact = given.repeated is None and given.known_length
    elif isinstance(given, DictValue):
        items = {str(k): v for k, v in given.entries.items()}
        container.children_exact = given.complete
    if not isinstance(given, (SequenceValue, DictValue)) or not all(isinstance(v, TensorValue) for v in items.values()):
        container.children_exact = False
        return container
    container.parameters = {k: _as_parameter(v) for k, v in items.items()}  # type: ignore[arg-type]
    return container


def _as_parameter(tensor: TensorValue) -> TensorValue:
    """What a parameter container keeps of a tensor it is given: the tensor if it is a parameter
    (a leaf that requires grad), else an `nn.Parameter` of it (a new leaf over its data)."""
    if tensor.is_leaf and tensor.requires_grad is Tri.YES:
        return tensor
    return TensorValue(tensor.version_counter, Tri.YES, True, Origin("an `nn.Parameter`", tensor.origin.node))


def torch_layer(definitions: Definitions, class_name: str, with_parameters: bool) -> str | None:
    """The `torch.nn` module (of the module table) among the direct bases of `class_name`, with
    parameters of its own (`nn.Linear`: what its `__init__` makes) or without (an activation, a
    softmax: whose forward `super().forward(x)` reaches), as asked."""
    for base in definitions.bases.get(class_name, ()):
        name = normalise_torch_name(base.qualname) if isinstance(base, ImportRef) else ""
        facts = module_facts.module(name.removeprefix("torch.nn.")) if name.startswith("torch.nn.") else None
        if facts is not None and bool(facts.parameters) == with_parameters \
                and facts.inplace is module_facts.InplaceSaves.NO_INPLACE:
            return facts.name
    return None


def derives_from_builtin(definitions: Definitions, class_name: str, builtin: str) -> bool:
    """Whether the class `class_name` derives (directly) from the built-in `dict` or `list`
    (`collections.OrderedDict`, `typing.List` and kin counted)."""
    kin = ("collections.OrderedDict", "typing.OrderedDict", "typing.Dict") if builtin == "dict" else ("typing.List",)
    return any((isinstance(b, BuiltinRef) and b.name == builtin) or qualname_of(b) in kin
               for b in definitions.bases.get(class_name, ()))


def _list_of(args: list[Value]) -> SequenceValue | None:
    """The items of a `list` subclass's instance built from `args` (none, or a list), as a list of its own."""
    if not args:
        return SequenceValue(mutable=True, known_length=True)
    given = args[0]
    if len(args) > 1 or not isinstance(given, SequenceValue):
        return None
    return SequenceValue(given.items, repeated=given.repeated, mutable=True, known_length=given.known_length)
