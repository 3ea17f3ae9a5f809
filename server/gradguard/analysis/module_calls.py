"""`nn.Module`s: class detection, construction from the module facts, attributes, methods and calls."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from gradguard.analysis.names import dotted_name, normalise_torch_name, qualname_of
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    ConstValue,
    FunctionRef,
    ImportRef,
    ModuleValue,
    Origin,
    ParametersValue,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    new_version_counter,
)
from gradguard.knowledge import modules as module_facts

_MAX_UNROLLED = 64  # `model.modules()` / `model.apply(f)` are followed module by module up to this many
_NN_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


class ModuleCalls:
    """The interpreter's part that builds and calls `nn.Module`s."""

    def is_module_class(self, node: cst.ClassDef, state: State) -> bool:
        for base in node.bases:
            value = self.eval(base.value, state)
            name = qualname_of(value)
            if name is not None and (normalise_torch_name(name) in _NN_MODULE_BASES
                                     or normalise_torch_name(name).removeprefix("torch.nn.") in module_facts.MODULES
                                     or name.endswith(".Module")):
                return True
            if isinstance(value, ImportRef) and not value.qualname.startswith("torch"):
                value = self.resolve_import(value)
            if isinstance(value, FunctionRef) and value.definitions.classes.get(value.name, (None, None))[1] is not None:
                return True
        return False

    def instance_copy(self, template: ModuleValue | None) -> ModuleValue | None:
        """A new instance of a user module class: its own parameters (fresh version counters)."""
        if template is None:
            return None
        remap: dict[int, int] = {}

        def fresh(value: Value) -> Value:
            if isinstance(value, TensorValue):
                vc = remap.setdefault(value.version_counter, new_version_counter())
                return replace(value, version_counter=vc)
            if isinstance(value, ModuleValue) and value.user_class is None:
                return replace(value, parameters={k: fresh(v) for k, v in value.parameters.items()},
                               children=None if value.children is None else [fresh(c) for c in value.children],
                               named_children={k: fresh(v) for k, v in value.named_children.items()})
            if isinstance(value, ModuleValue):
                copy = self.instance_copy(value)
                return copy if copy is not None else UNKNOWN
            return value

        return replace(template, parameters={k: fresh(v) for k, v in template.parameters.items()},
                       named_children={k: fresh(v) for k, v in template.named_children.items()})

    def module_attribute(self, owner: ModuleValue, attribute: str, node: cst.CSTNode) -> Value:
        if attribute in owner.named_children:
            return owner.named_children[attribute]
        if owner.user_class is not None and owner.definitions is not None:
            method = owner.definitions.method(owner.user_class, attribute)
            if method is not None:
                return FunctionRef(attribute, method, owner.definitions, bound_self=owner)
        if attribute in owner.parameters:
            return owner.parameters[attribute]
        if owner.user_class is None and attribute in ("running_mean", "running_var"):
            tensor = TensorValue(new_version_counter(), Tri.NO, True, Origin(f"a buffer of `{owner.class_name}`", owner.node))
            owner.parameters[attribute] = tensor
            return tensor
        return UNKNOWN

    def construct_module(self, class_name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                         state: State) -> Value:
        if class_name in ("Sequential", "ModuleList"):
            items: list[Value] = list(args)
            if class_name == "ModuleList" and args and isinstance(args[0], SequenceValue) and args[0].repeated is None:
                items = list(args[0].items)
            elif class_name == "ModuleList":
                items = [UNKNOWN]
            children = [c for c in items if isinstance(c, ModuleValue)]
            complete = len(children) == len(items) and "*" not in kwargs
            return ModuleValue(class_name, node, children=children if complete else None)
        facts = module_facts.module(class_name)
        if facts is None:
            return ModuleValue(class_name, node, children=None if class_name in module_facts.CONTAINERS else [])
        value = ModuleValue(class_name, node, children=[])
        for name in facts.parameters:
            if name == "bias" and isinstance(kwargs.get("bias"), ConstValue) and not kwargs["bias"].value:
                continue
            value.parameters[name] = TensorValue(new_version_counter(), Tri.YES, True,
                                                 Origin(f"the {name} of `nn.{class_name}`", node))
        if facts.inplace_position is not None:
            value.inplace = self.flag(args, kwargs, facts.inplace_position, "inplace", False) is Tri.YES
        return value

    def call_module_method(self, module: ModuleValue, method: str, args: list[Value], kwargs: dict[str, Value],
                           node: cst.Call, state: State) -> Value:
        if method == "parameters":
            params, complete = module.all_parameters()
            return ParametersValue(tuple(params), complete)
        if method in ("eval", "train"):
            mode = Tri.NO if method == "eval" else self.flag(args, kwargs, 0, "mode", True)
            self.set_training(module, mode)
            return module
        if method in ("to", "cuda", "cpu", "float", "double", "half", "requires_grad_"):
            if method == "requires_grad_":
                flag = self.flag(args, kwargs, 0, "requires_grad", True)
                for parameter in module.all_parameters()[0]:
                    self.rebind(state, parameter, replace(parameter, requires_grad=flag))
            return module
        if method == "forward":
            return self.call_module(module, args, kwargs, node, state, report_node=node)
        if method == "modules":
            found, complete = module.submodules()
            return SequenceValue(tuple(found)) if complete and len(found) <= _MAX_UNROLLED else UNKNOWN
        function = self.resolve_import(args[0]) if args and isinstance(args[0], ImportRef) else (args or [None])[0]
        if method == "apply" and isinstance(function, FunctionRef) and isinstance(function.node, cst.FunctionDef):
            found, _ = module.submodules()
            for submodule in found[:_MAX_UNROLLED]:
                self.call_user_function(function.node, function.definitions, function.bound_self, [submodule], {},
                                        node, state,
                                        report="inside" if function.definitions is self.definitions else "every-change")
            return module
        if method == "append" and module.children is not None and args and isinstance(args[0], ModuleValue):
            module.children.append(args[0])
        return UNKNOWN

    def set_training(self, module: ModuleValue, mode: Tri) -> None:
        module.training = mode
        for child in (module.children or []):
            self.set_training(child, mode)
        for child in module.named_children.values():
            if isinstance(child, ModuleValue):
                self.set_training(child, mode)

    def call_module(self, module: ModuleValue, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode,
                    state: State, report_node: cst.CSTNode) -> Value:
        source = args[0] if args else UNKNOWN
        if isinstance(source, ArgumentValue):
            source = self.promote(source, state)
        if module.class_name == "Sequential" and module.user_class is None:
            if module.children is None:
                return self.module_output(module, source, node, state)
            value = source
            for child in module.children:
                value = self.call_module(child, [value], {}, node, state, report_node=child.node or node)
            return value
        if module.user_class is not None and module.definitions is not None:
            forward = module.definitions.method(module.user_class, "forward")
            if forward is not None:
                return self.call_user_function(forward, module.definitions, module, args, kwargs, report_node, state)
        facts = module_facts.module(module.class_name) if module.user_class is None else None
        if facts is None or not isinstance(source, TensorValue):
            return self.module_output(module, source, node, state)
        direct = isinstance(report_node, cst.Call) and report_node is node
        run_by = None if direct else node
        label = (dotted_name(report_node.func) if direct else None) or f"nn.{module.class_name}"
        training = module.training
        if facts.returns_input or (facts.returns_input_in_eval and training is Tri.NO):
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
                updated = replace(source, requires_grad=recorded, is_leaf=False)
            updated = self.with_history(updated, [source], first_serial, state)
            if updated is not source:
                self.rebind(state, source, updated)
            return updated
        weight_rg = module.has_trainable_parameters()
        recorded = (source.requires_grad | weight_rg) & state.grad_enabled
        save_node = report_node
        first_serial = self.next_serial
        if recorded is not Tri.NO:
            input_when = {
                module_facts.Saves.ALWAYS: recorded,
                module_facts.Saves.IF_WEIGHT_REQUIRES_GRAD: weight_rg & recorded,
                module_facts.Saves.NEVER: Tri.NO,
                module_facts.Saves.IF_INPUT_REQUIRES_GRAD: source.requires_grad & recorded,
            }[facts.saves_input]
            if input_when is not Tri.NO:
                self.save(source, SavedRecord(label, facts.op, "input", save_node,
                                              input_when is Tri.YES and source.alias_certain, at_call=direct,
                                              run_by=run_by), state)
            weight_when = {
                module_facts.Saves.ALWAYS: recorded,
                module_facts.Saves.IF_INPUT_REQUIRES_GRAD: source.requires_grad & recorded,
                module_facts.Saves.NEVER: Tri.NO,
                module_facts.Saves.IF_WEIGHT_REQUIRES_GRAD: weight_rg & recorded,
            }[facts.saves_weight]
            weight = module.parameters.get("weight")
            if weight_when is not Tri.NO and weight is not None:
                self.save(weight, SavedRecord(label, facts.op, "weight", save_node, weight_when is Tri.YES,
                                              at_call=False, run_by=run_by), state)
        if facts.output_views_input:
            return source.fresh_view(Origin(f"the output of `{label}`", node), grad_enabled=state.grad_enabled)
        result = self.fresh_result(recorded, Origin(f"the output of `{label}`", save_node))
        if facts.saves_output and recorded is not Tri.NO:
            self.save(result, SavedRecord(label, facts.op, "output", save_node, recorded is Tri.YES,
                                          at_call=direct, run_by=run_by), state)
        return self.with_history(result, [source], first_serial, state)

    def module_output(self, module: ModuleValue, source: Value, node: cst.CSTNode, state: State) -> Value:
        """The output of a module whose forward we do not follow: a new tensor, nothing saved."""
        if module.user_class is None and module_facts.module(module.class_name) is None and module.children is None:
            return UNKNOWN
        rg = module.has_trainable_parameters() | self.requires_grad_of(source)
        history = source.history if isinstance(source, TensorValue) else frozenset()
        return self.fresh_result(rg & state.grad_enabled, Origin(f"the output of `{module.class_name}`", node), history)
