"""ATen ops on abstract tensors: overload selection, what each op saves, its result and its place in the graph."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from gradguard.analysis.names import OPERATOR_SYMBOLS, dotted_name, qualname_of
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    ConstValue,
    HookHandle,
    IntValue,
    LostValue,
    ModuleValue,
    NumberValue,
    Origin,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    contents,
    evolved,
    new_version_counter,
)
from gradguard.knowledge import ops, surface


class TensorOps(Part):
    """The interpreter's part that applies ATen ops and tensor methods and attributes."""

    @staticmethod
    def is_tensor_method(method: str) -> bool:
        return bool(ops.overloads(method)) or method in surface.MAYBE_RETURNS_SELF or method in (
            "detach", "clone", "backward", "requires_grad_", "data")

    def call_tensor_method(self, tensor: TensorValue, method: str, args: list[Value], kwargs: dict[str, Value],
                           node: cst.Call, state: State, *, bound: bool = True) -> Value:
        """`tensor.method(*args)` (`bound`) or `torch.Tensor.method(tensor, *args)`."""
        target_node = node.func.value if bound and isinstance(node.func, cst.Attribute) else None
        if method == "backward":  # (`inputs=`: it stops at them, as `autograd.grad` does)
            self.parts.saved_tensors.run_backward(tensor, kwargs, state, kwargs.get("inputs"), node)
            return UNKNOWN
        if method == "register_post_accumulate_grad_hook" and args and tensor.is_leaf:
            self.parts.bindings.set_flags(state, tensor, evolved(tensor, grad_hooks=(*tensor.grad_hooks, args[0])))
            return HookHandle(args[0])
        if method in surface.NOT_TENSORS:
            return UNKNOWN
        if method == "detach":
            return evolved(tensor, requires_grad=Tri.NO, is_leaf=True, origin=Origin("`.detach()`", node),
                           view_of_leaf=False, multi_output_view=None, later_view=None, no_grad_view=False,
                           function_view=None, is_view=False, history=frozenset())
        if method == "requires_grad_":
            flag = args[0] if args else kwargs.get("requires_grad", ConstValue(True))
            rg = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE
            updated = evolved(tensor, requires_grad=rg)
            self.parts.bindings.set_flags(state, tensor, updated)
            return updated
        if method in surface.RETURNS_SELF:
            return tensor
        if method == "detach_":
            if tensor.is_view:
                self.parts.saved_tensors.mutate(tensor, node, target_node, "`detach_`", state, detaches=True)
            updated = evolved(tensor, requires_grad=Tri.NO, is_leaf=True)
            self.parts.bindings.set_flags(state, tensor, updated)
            return updated
        if method == "clone":
            return self.clone_of(tensor, node, state)
        if method == "copy_" and args and isinstance(args[0], TensorValue) and args[0].snapshot is not None \
                and not tensor.is_view and args[0].snapshot[0] == tensor.storage:
            copied = self.apply_aten(method, [tensor, *args], kwargs, node, state, None, target_node=target_node)
            self.parts.saved_tensors.restore(args[0], state)  # `p.data.copy_(backup)`: the values of then
            return copied
        if method in surface.DTYPE_COPIES:
            return self.fresh_result(tensor.requires_grad & state.grad_enabled, Origin(f"`.{method}()`", node),
                                     tensor.history)
        if method == "contiguous" and tensor.transposed:  # not contiguous: a copy
            return self.fresh_result(tensor.requires_grad & state.grad_enabled, Origin("`.contiguous()`", node),
                                     tensor.history)
        if tensor.low_precision and self.to_full_precision(method, args, kwargs):  # a copy in fp32
            return self.fresh_result(tensor.requires_grad & state.grad_enabled, Origin(f"`.{method}()`", node),
                                     tensor.history)
        if method in surface.MAYBE_RETURNS_SELF:
            alias = tensor.fresh_view(Origin(f"`.{method}()`", node), certain=False, grad_enabled=state.grad_enabled)
            # the tensor itself or a copy, never a new view: no view made under no_grad here
            return evolved(alias, later_view=tensor.later_view, is_view=tensor.is_view, no_grad_view=tensor.no_grad_view)
        if method in surface.MAYBE_VIEW:
            return tensor.fresh_view(Origin(f"`.{method}()`", node), certain=False, grad_enabled=state.grad_enabled,
                                     node=surface.view_node(method))
        if method in surface.STORAGE_ALIASES:
            alias = TensorValue(new_version_counter(), tensor.requires_grad, False, Origin(f"`.{method}()`", node),
                                storage_of=tensor.version_counter, history=tensor.history)
            return SequenceValue(repeated=alias)
        if method.startswith("new_") or method in ("numpy",):
            return TensorValue(new_version_counter(), Tri.NO, True, Origin(f"`.{method}()`", node))
        if len(args) > 1 and not any(isinstance(a, (TensorValue, SequenceValue, ArgumentValue)) for a in args) and all(
                len(args) >= len(facts.args) for facts in ops.overloads(method)):
            args = [SequenceValue(tuple(args))]  # `x.view(-1, n)`, `x.permute(0, 2, 1)`: the sizes as one argument
        args, kwargs = ops.by_position(f"torch.Tensor.{method}", [tensor, *args], kwargs)
        return self.apply_aten(method, args, kwargs, node, state, None, target_node=target_node)

    def clone_of(self, tensor: TensorValue, node: cst.CSTNode, state: State) -> TensorValue:
        """`tensor.clone()`: a new tensor in its graph; of a whole tensor (not a view), a snapshot of its
        storage's values (`TensorValue.snapshot`)."""
        clone = self.fresh_result(tensor.requires_grad & state.grad_enabled, Origin("a clone", node), tensor.history)
        return clone if tensor.is_view else evolved(clone, snapshot=(
            tensor.storage, len(self.run.result.changes), self.run.backward_runs,
            self.run.next_serial))

    def tensor_attribute(self, owner: TensorValue, attribute: str, node: cst.CSTNode, state: State) -> Value:
        if attribute == "data":
            return TensorValue(new_version_counter(), Tri.NO, True, Origin("`.data`", node),
                               storage_of=owner.version_counter)
        if attribute in surface.ATTRIBUTE_VIEWS:
            view = owner.fresh_view(Origin(f"`.{attribute}`", node), grad_enabled=state.grad_enabled,
                                    node=surface.view_node(attribute))
            return evolved(view, transposed=True) if attribute in surface.TRANSPOSING_VIEWS else view
        if attribute == "grad":
            return TensorValue(new_version_counter(), Tri.NO, True, Origin("a `.grad`", node))
        if attribute == "requires_grad" and owner.requires_grad is Tri.YES and owner.is_leaf:
            # a parameter's, or a leaf's made to require grad: `if not p.requires_grad: continue` skips
            # it (a tensor believed not to may have been made to in code not followed: both ways then)
            return ConstValue(True)
        return UNKNOWN

    def select_overload(self, base: str, args: list[Value], kwargs: dict[str, Value]) -> ops.OpFacts | None:
        candidates = ops.overloads(base)
        best, best_score = None, -10**9
        for facts in candidates:
            if len(args) > len(facts.args) or facts.kind == "out":
                continue
            score = 0
            for name, value in zip(facts.args, args):
                tensor_like = isinstance(value, (TensorValue, ArgumentValue, SequenceValue))
                if isinstance(value, ConstValue):
                    score += -5 if name in facts.tensor_args else 1
                elif tensor_like:
                    score += 1 if name in facts.tensor_args else -5
            score -= sum(1 for key in kwargs if key not in facts.args and key not in ("*", "**", "input", "out"))
            if score > best_score:
                best, best_score = facts, score
        return best

    @staticmethod
    def chosen_kernel(base: str, bound: dict[str, Value]) -> surface.Decomposition | None:
        """The op a composite runs when a string argument of the call chooses it (`F.pad`'s
        `mode`), if the call gives it as a constant or leaves it to its default."""
        if base not in surface.CHOSEN_KERNELS:
            return None
        argument, default, kernels = surface.CHOSEN_KERNELS[base]
        chosen = bound.get(argument, ConstValue(default))
        kernel = kernels.get(chosen.value) if isinstance(chosen, ConstValue) and isinstance(chosen.value, str) else None
        return surface.Decomposition(kernel) if kernel is not None else None

    def apply_aten(self, base: str, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode, state: State,
                   verb: str | None, *, target_node: cst.CSTNode | None = None, label: str | None = None) -> Value:
        """Apply the ATen op `base` (an overload is chosen from the argument kinds)."""
        facts = self.select_overload(base, args, kwargs)
        decomposition = surface.DECOMPOSITIONS.get(base) if facts is None else None
        if decomposition is not None and ops.overloads(decomposition.aten_op):  # a Python function over an op (`F.softmin`)
            source = args[0] if args else kwargs.get("input")
            return self.apply_aten(decomposition.aten_op, [source] if source is not None else [],
                                   {"out": kwargs["out"]} if "out" in kwargs else {}, node, state, verb,
                                   target_node=target_node, label=label or self.label_of(node, base))
        if facts is None:  # not an op of the table: a new tensor in the graph of its inputs, nothing saved
            inputs = [*args, *kwargs.values()]
            if not any(isinstance(v, (TensorValue, SequenceValue)) for v in inputs):
                return UNKNOWN
            requires_grad = Tri.NO
            for value in inputs:
                requires_grad = requires_grad | self.requires_grad_of(value)
            result = self.fresh_result(requires_grad & state.grad_enabled,
                                       Origin(f"the output of `{label or self.label_of(node, base)}`", node))
            if any(v is UNKNOWN for v in inputs):
                result = evolved(result, graph_known=False)
            return self.with_history(result, inputs, self.run.next_serial, state)
        packed = surface.VARARG_TENSORS.get(base)
        if packed is not None and len(args) > packed[1] and isinstance(args[packed[1]], TensorValue):
            args = [*args[:packed[1]], SequenceValue(tuple(args[packed[1]:]))]  # `einsum(eq, a, b)`: `tensors=[a, b]`
        bound: dict[str, Value] = dict(zip(facts.args, args))
        for key, value in kwargs.items():
            if key == "input" and "input" not in facts.args and facts.args:
                bound[facts.args[0]] = value
            elif key in facts.args:
                bound[key] = value
        for key, value in list(bound.items()):
            if isinstance(value, ArgumentValue) and key in facts.tensor_args:
                bound[key] = self.parts.bindings.promote(value, state)
        label = label or self.label_of(node, base)
        first_serial = self.run.next_serial
        saves_from = facts
        if facts.composite:
            decomposition = surface.DECOMPOSITIONS.get(base) or self.chosen_kernel(base, bound)
            if decomposition is None and facts.traced_kernel is not None:
                kernel, becomes = facts.traced_kernel
                decomposition = surface.Decomposition(kernel, (("self", becomes),))
            target = None
            if decomposition is not None:
                target = ops.op(decomposition.aten_op) or next(iter(ops.overloads(decomposition.aten_op)), None)
            if target is not None:
                bound = {decomposition.argument(k): v for k, v in bound.items()}
                saves_from = (ops.kernel_of(target) or ops.derived_of(target)) if target.composite else target
            else:
                saves_from = ops.kernel_of(facts) or ops.derived_of(facts)
        out = kwargs.get("out")
        if isinstance(out, TensorValue):
            self.parts.saved_tensors.mutate(out, node, None, f"`{base}(..., out=...)`", state)
            return out
        for mutated in facts.mutates:
            value = bound.get(mutated)
            written = Tri.NO
            for key, operand in bound.items():
                if key != mutated and key in facts.tensor_args:
                    written = written | self.requires_grad_of(operand)
            # `torch._foreach_mul_(tensors, 2.0)` changes each tensor of its list in place
            for tensor in contents(value) if isinstance(value, SequenceValue) else [value]:
                if isinstance(tensor, TensorValue):
                    self.parts.saved_tensors.mutate(tensor, node, target_node, verb or f"`{base}`", state,
                                                    writes_grad=written & state.grad_enabled)
        recorded = self.grad_recorded(saves_from or facts, bound, state)
        if saves_from is not None and recorded is not Tri.NO:
            self.record_input_saves(saves_from, bound, recorded, node, label, state)
        result = self.result_of(facts, bound, recorded, node, state, label)
        if facts.kind != "inplace":
            result = self.in_precision(result, base, bound.values())
        if saves_from is not None and recorded is not Tri.NO:
            outputs: list[Value] = [result] if isinstance(result, TensorValue) else []
            if isinstance(result, SequenceValue):
                outputs = list(result.items) if result.repeated is None else [result.repeated]
            for index in sorted(saves_from.saves_outputs):
                repeated = isinstance(result, SequenceValue) and result.repeated is not None
                output = outputs[0] if repeated and outputs else (outputs[index] if index < len(outputs) else None)
                if isinstance(output, TensorValue):
                    certain = recorded is Tri.YES and output.alias_certain and saves_from.saves_certain
                    self.parts.saved_tensors.save(output, SavedRecord(label, saves_from.name, "output", node, certain), state)
        if facts.view_of is not None or not facts.differentiable:
            return result  # a view is in its base's graph; no gradient flows back through the others
        updated = self.with_history(result, bound.values(), first_serial, state)
        if facts.nondifferentiable_outputs and isinstance(updated, SequenceValue) and updated.repeated is None:
            updated = SequenceValue(tuple(plain if i in facts.nondifferentiable_outputs else item
                                          for i, (item, plain) in enumerate(zip(updated.items, result.items))))
        if facts.kind == "inplace" and updated is not result:
            self.parts.bindings.rebind(state, result, updated)
            if isinstance(updated, TensorValue):
                self.parts.bindings.share_graph(state, updated)
        return updated

    def to_full_precision(self, method: str, args: list[Value], kwargs: dict[str, Value]) -> bool:
        """Whether `tensor.method(*args)` converts to fp32: `.float()`, `.to(torch.float32)`, `.type(torch.float)`."""
        if method == "float":
            return True
        return method in ("to", "type") and any(
            qualname_of(value) in surface.FULL_PRECISION for value in (*args, *kwargs.values()))

    def in_precision(self, result: Value, base: str, inputs: Iterable[Value]) -> Value:
        """`result` of the op `base` marked `low_precision` where it is known to be: an output of
        autocast's lower-precision list in an enabled region, or of an op that keeps the precision of
        inputs that all have it."""
        if not isinstance(result, TensorValue):
            return result
        given = list(inputs)
        if result.low_precision:  # a view of a lower-precision tensor: unless it reinterprets (`view(torch.float32)`)
            plain = all(isinstance(v, TensorValue) or _plain(v) for v in given)
            return result if plain else evolved(result, low_precision=False)
        op = base.split(".", 1)[0]
        if self.run.autocast and op in surface.AUTOCAST_LOWERS:
            return evolved(result, low_precision=True)
        # every operand a lower-precision tensor or a plain constant (an operand lost, or a dtype, may be fp32)
        if op in surface.AUTOCAST_KEEPS_PRECISION and any(isinstance(v, TensorValue) for v in given) and all(
                v.low_precision if isinstance(v, TensorValue) else _plain(v) for v in given):
            return evolved(result, low_precision=True)
        return result

    def with_history(self, result: Value, inputs: Iterable[Value], first_serial: int, state: State) -> Value:
        """`result` as a node of the graph: its inputs' saves and those its op just made; partly
        unknown (`graph_known` False) where an input's graph is, or an input is a value the analysis lost."""
        history = frozenset(range(first_serial, self.run.next_serial))
        known = True
        for value in inputs:
            if isinstance(value, TensorValue):
                history |= value.history
                known = known and value.graph_known
            elif isinstance(value, LostValue):
                history |= value.history
                known = False
            elif value is UNKNOWN:  # an operand the analysis lost: its part of the graph is not known
                known = False
            elif isinstance(value, SequenceValue):
                for item in (*value.items, *([value.repeated] if value.repeated is not None else [])):
                    if isinstance(item, TensorValue):
                        history |= item.history
                        known = known and item.graph_known
                    elif item is UNKNOWN:
                        known = False
        if not history and known:
            return result
        if isinstance(result, TensorValue):
            return evolved(result, history=result.history | history, graph_known=result.graph_known and known)
        if isinstance(result, SequenceValue):
            return SequenceValue(
                tuple(evolved(i, history=i.history | history) if isinstance(i, TensorValue) else i for i in result.items),
                evolved(result.repeated, history=result.repeated.history | history)
                if isinstance(result.repeated, TensorValue) else result.repeated)
        return result

    def grad_recorded(self, facts: ops.OpFacts, bound: dict[str, Value], state: State) -> Tri:
        """Whether the op records a grad_fn: grad mode on and some differentiable input requires grad."""
        if not facts.differentiable:
            return Tri.NO
        needs = Tri.NO
        for name in facts.grad_inputs:
            needs = needs | self.requires_grad_of(bound.get(name))
        return needs & state.grad_enabled

    def requires_grad_of(self, value: Value | None) -> Tri:
        """Whether `value` requires grad; values of unknown origin count only inside modules (what a
        call not followed returned from tensors in a graph: everywhere)."""
        if value is None or isinstance(value, (ConstValue, ModuleValue, IntValue, NumberValue)):
            return Tri.NO
        if isinstance(value, TensorValue):
            return value.requires_grad
        if isinstance(value, LostValue):  # what a call not followed made of tensors in a graph
            return Tri.MAYBE
        if isinstance(value, SequenceValue):
            result = Tri.NO
            for item in contents(value):
                result = result | self.requires_grad_of(item)
            return result
        return Tri.MAYBE if self.run.in_module_method else Tri.NO

    def record_input_saves(self, facts: ops.OpFacts, bound: dict[str, Value], recorded: Tri, node: cst.CSTNode,
                           label: str, state: State) -> None:
        for name, condition in facts.saves.items():
            if facts.saves_clone and name == "self":
                continue
            value = bound.get(name)
            # a list argument (`einsum`'s operands, `multi_dot`'s matrices): each tensor of it
            # (an op's other list arguments save each tensor on conditions of its own: none recorded)
            tensors = [value] if isinstance(value, TensorValue) else \
                [t for t in contents(value) if isinstance(t, TensorValue)] \
                if isinstance(value, SequenceValue) and facts.saves_vary else []
            if not tensors:
                continue
            if condition is None:
                when = recorded
            else:
                when = Tri.NO
                for other in condition:
                    when = when | self.requires_grad_of(bound.get(other))
                when = when & state.grad_enabled
            if when is Tri.NO:
                continue
            what = "input" if name in ("self", "input") else f"`{name}` argument"
            for tensor in tensors:
                certain = when is Tri.YES and tensor.alias_certain and facts.saves_certain
                self.parts.saved_tensors.save(tensor, SavedRecord(label, facts.name, what, node, certain, None), state)

    def result_of(self, facts: ops.OpFacts, bound: dict[str, Value], recorded: Tri, node: cst.CSTNode,
                  state: State, label: str) -> Value:
        if not facts.returns_tensor and facts.kind != "inplace":
            return UNKNOWN  # a Python number or bool
        if facts.kind == "inplace" and facts.mutates:
            target = bound.get(facts.mutates[0])
            if isinstance(target, TensorValue):
                if recorded is not Tri.NO and target.requires_grad is Tri.NO:
                    updated = evolved(target, requires_grad=recorded, is_leaf=False)
                    self.parts.bindings.rebind(state, target, updated)
                    return updated
                return target
            return UNKNOWN
        if facts.view_of is not None:
            base = bound.get(facts.view_of)
            if isinstance(base, TensorValue):
                certain = facts.name.split(".", 1)[0] not in surface.MAYBE_VIEW | surface.MAYBE_RETURNS_SELF
                view = base.fresh_view(Origin(f"the view `{label}`", node), certain=certain,
                                       grad_enabled=state.grad_enabled, node=surface.view_node(facts.name))
                if facts.name.split(".", 1)[0] in surface.TRANSPOSING_VIEWS:
                    view = evolved(view, transposed=True)
                if facts.multi_output_view:
                    kind = {"unbind": "Unbind", "split.Tensor": "Split", "chunk": "Split"}.get(
                        facts.name if facts.name.startswith("split.") else facts.name.split(".", 1)[0], "SplitWithSizes")
                    return SequenceValue(repeated=evolved(view, multi_output_view=kind, later_view=None))
                if facts.name.split(".", 1)[0] in ("tensor_split", "hsplit", "vsplit", "dsplit"):
                    return SequenceValue(repeated=view)
                return view
            return UNKNOWN
        origin = Origin(f"the output of `{label}`", node)
        if facts.returns > 1:
            return SequenceValue(tuple(self.fresh_result(Tri.NO if i in facts.nondifferentiable_outputs else recorded,
                                                         origin) for i in range(facts.returns)))
        if facts.returns_list:
            return SequenceValue(repeated=self.fresh_result(recorded, origin))
        return self.fresh_result(recorded, origin)

    @staticmethod
    def fresh_result(requires_grad: Tri, origin: Origin, history: frozenset[int] = frozenset()) -> TensorValue:
        """A newly allocated tensor (its own version counter) in the graph after `history`."""
        return TensorValue(new_version_counter(), requires_grad, requires_grad is Tri.NO, origin, history=history)

    @staticmethod
    def label_of(node: cst.CSTNode, base: str) -> str:
        """How the user wrote the op: `torch.sigmoid`, `x.exp`, `.softmax`, `*`."""
        if isinstance(node, cst.Call):
            return dotted_name(node.func) or base
        if isinstance(node, cst.BinaryOperation):
            return OPERATOR_SYMBOLS.get(type(node.operator).__name__, base)
        return base


def _plain(value: Value) -> bool:
    """A constant, or a tuple of them (`x.view(-1, 4)`'s sizes): no tensor, no dtype."""
    if isinstance(value, ConstValue):
        return value.value is None or isinstance(value.value, (bool, int, float))
    return isinstance(value, SequenceValue) and value.repeated is None and all(_plain(v) for v in value.items)
