"""Custom autograd Functions: `Fn.apply(...)` runs `forward(ctx, ...)` with grad off, as torch does, and
makes its outputs nodes of the graph that save what `ctx.save_for_backward` was given."""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.events import InplaceChange
from gradguard.analysis.names import decorator_heads, normalise_torch_name, qualname_of
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    ConstValue,
    CustomOp,
    Definitions,
    FunctionApply,
    FunctionCtx,
    FunctionRef,
    ImportRef,
    Origin,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    contents,
    evolved,
    lost_from,
)

_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})


def is_autograd_function(cls: FunctionRef, depth: int = 0) -> bool:
    """Whether the class `cls` derives from `torch.autograd.Function` (through classes of the project too)."""
    if not isinstance(cls.node, cst.ClassDef) or depth > 16:
        return False
    for base in cls.definitions.bases.get(cls.name, ()):
        name = qualname_of(base)
        if name is not None and normalise_torch_name(name) in _FUNCTION_BASES:
            return True
        if isinstance(base, FunctionRef) and is_autograd_function(base, depth + 1):
            return True
    return False


def _tensors(value: Value) -> list[TensorValue]:
    return [item for item in contents(value) if isinstance(item, TensorValue)]


def ctx_method(ctx: FunctionCtx, method: str, args: list[Value]) -> Value:
    """`ctx.save_for_backward(...)`, `ctx.mark_dirty(...)`; the other methods of `ctx` change nothing we model."""
    if method == "save_for_backward":
        ctx.saved.extend(args)
    elif method == "mark_dirty":
        ctx.dirty.extend(args)
    return ConstValue(None)


class CustomFunctions(Part):
    """Runs custom autograd Functions."""

    def function_apply(self, ref: ImportRef) -> FunctionApply | None:
        """`Fn.apply` for `Fn` a custom Function of another file (`from ops import Fn`)."""
        owner, _, attribute = ref.qualname.rpartition(".")
        if attribute != "apply" or not owner:
            return None
        cls = self.parts.user_calls.resolve_import(ImportRef(owner))
        return FunctionApply(cls) if isinstance(cls, FunctionRef) and is_autograd_function(cls) else None

    def apply_function(self, apply: FunctionApply, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                       state: State) -> Value:
        """`Fn.apply(*args)`: `forward` (and `setup_context`) run with grad off; where an input requires
        grad, each output is a node after the inputs, saving what `ctx.save_for_backward` was given.
        An output that is an input, or a view (of one, or of a tensor `forward` made), is a custom-Function
        view unless `mark_dirty` said the input was changed in place: an in-place change of it raises. An
        input marked dirty is changed in place at `apply`, where torch refuses a leaf that requires grad."""
        cls = apply.function
        forward = cls.definitions.method(cls.name, "forward")
        setup = cls.definitions.method(cls.name, "setup_context")
        if forward is None:
            return lost_from([*args, *kwargs.values()])
        return self._run(cls.name, f"{cls.name}.apply", forward, setup, setup is None, args, kwargs, node, state)

    def custom_op(self, node: cst.FunctionDef, defined: FunctionRef, state: State) -> Value:
        """What a `def` decorated `@torch.library.custom_op("mylib::name", ...)` binds: the operator
        (`defined` for any other decorators)."""
        if not any(head is not None and head.endswith("custom_op") for head, _ in decorator_heads(node)):
            return defined
        for made in (d.decorator for d in node.decorators):
            if qualname_of(self.parts.expressions.eval(made.func if isinstance(made, cst.Call) else made, state)) \
                    == "torch.library.custom_op":
                named = self.parts.expressions.eval(made.args[0].value, state) \
                    if isinstance(made, cst.Call) and made.args else None
                return CustomOp(defined, name=named.value if isinstance(named, ConstValue) and isinstance(named.value, str)
                                else None)
        return defined

    def call_custom_op(self, op: CustomOp, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                       state: State) -> Value:
        """A call of a `torch.library.custom_op`: as `Fn.apply`, its body as `forward` (no `ctx`), the
        `setup_context` given to `register_autograd` (when a function of the project) as the Function's."""
        function = op.function
        setup = (op.setup.node, op.setup.definitions) if isinstance(op.setup, FunctionRef) \
            and isinstance(op.setup.node, cst.FunctionDef) else None
        params = function.node.params  # type: ignore[union-attr]
        rest = [p for p in (*params.posonly_params, *params.params)][len(args):]
        inputs = [*args, *(kwargs[p.name.value] if p.name.value in kwargs else self.parts.expressions.eval(p.default, state)
                           for p in rest if p.name.value in kwargs or p.default is not None)]
        # (`op(x=pre)`: `setup_context` is given the inputs in order, a default's value too)
        return self._run(function.name, function.name, (function.node, function.definitions),  # type: ignore[arg-type]
                         setup, False, args, kwargs, node, state, inputs)

    def _run(self, name: str, label: str, forward: tuple[cst.FunctionDef, Definitions],
             setup: tuple[cst.FunctionDef, Definitions] | None, with_ctx: bool, args: list[Value],
             kwargs: dict[str, Value], node: cst.Call, state: State, inputs: list[Value] | None = None) -> Value:
        """`forward` (given a `ctx` first when `with_ctx`), then `setup(ctx, inputs, output)` (`inputs`:
        `args` unless given), run with grad off: the outputs of a node named `name` (`label` where it is called)."""
        ctx, outer = FunctionCtx(), state.grad_enabled
        state.grad_enabled = Tri.NO
        first_change = len(self.run.result.changes)
        try:
            given = [ctx, *args] if with_ctx else args
            result = self.parts.user_calls.call_user_function(forward[0], forward[1], None, given, kwargs, node, state)
            if setup is not None:
                given_inputs = SequenceValue(tuple(inputs if inputs is not None else args))
                self.parts.user_calls.call_user_function(setup[0], setup[1], None, [ctx, given_inputs, result], {}, node, state)
        finally:
            state.grad_enabled = outer
        self._at_apply(self.run.result.changes[first_change:], ctx, label, node)
        for changed in _tensors(SequenceValue(tuple(ctx.dirty))):  # torch checks them at `apply`, grad on
            if changed.is_leaf and changed.requires_grad is not Tri.NO and outer is not Tri.NO:
                starred = any(arg.star for arg in node.args)  # `apply(*tensors)`: no argument node is its own
                written = None if starred else next((arg.value for arg, value in zip(node.args, args)
                                                     if value is changed), None)
                self.parts.saved_tensors.mutate(changed, node, written, f"`{label}` (its `forward` marks it dirty)",
                                                state)
        if result is UNKNOWN:
            return lost_from([*args, *kwargs.values()])
        inputs = [*args, *kwargs.values()]
        requires_grad = Tri.NO
        for value in inputs:
            requires_grad = requires_grad | self.parts.tensor_ops.requires_grad_of(value)
        requires_grad = requires_grad & outer
        if requires_grad is Tri.NO:
            return result
        first_serial = self.run.next_serial
        output_counters = {t.version_counter for t in _tensors(result)}
        for saved in _tensors(SequenceValue(tuple(ctx.saved))):
            output = saved.version_counter in output_counters
            record = SavedRecord(label, name, "output" if output else "input", node,
                                 requires_grad is Tri.YES and saved.alias_certain, at_call=output)
            self.parts.saved_tensors.save(saved, record, state)
        dirty = {t.version_counter for t in _tensors(SequenceValue(tuple(ctx.dirty)))}
        made = _function_outputs(result, label, name, requires_grad, dirty,
                                 {id(t) for t in _tensors(SequenceValue(tuple(inputs)))}, node)
        for old in _tensors(SequenceValue(tuple(ctx.dirty))):  # the input, changed in place, is now an output
            new = next((t for t in _tensors(made) if t.version_counter == old.version_counter), None)
            if new is not None:
                self.parts.bindings.rebind(state, old, new)
        return self.parts.tensor_ops.with_history(made, inputs, first_serial, state)

    def _at_apply(self, changes: list[InplaceChange], ctx: FunctionCtx, label: str, node: cst.Call) -> None:
        """The changes `forward` made (in this file's code) of the inputs it marks dirty, placed at the
        `apply` call: changing them is the Function's contract, as an in-place op's (its other
        changes stay where they are written)."""
        dirty = {t.version_counter for t in _tensors(SequenceValue(tuple(ctx.dirty)))}
        for change in changes:
            if change.target.version_counter in dirty and change.statement is not None:
                self.parts.saved_tensors.place_at_call(change, node, label)


def _function_outputs(result: Value, label: str, name: str, requires_grad: Tri, dirty: set[int], inputs: set[int],
                      node: cst.Call) -> Value:
    """What `apply` returns for what `forward` returned: non-leaf tensors of the Function's graph;
    an input returned as-is (`inputs`: their ids) or any view (of an input, or of a tensor `forward`
    made) is its view, unless it is an input marked dirty (`dirty`: their version counters); a
    `detach()` of an input shares the counter but is no view."""
    def output(tensor: TensorValue) -> TensorValue:
        view = (id(tensor) in inputs or tensor.is_view) and tensor.version_counter not in dirty
        return evolved(tensor, requires_grad=requires_grad, is_leaf=False, view_of_leaf=False, no_grad_view=False,
                       origin=Origin(f"the output of `{label}`", node), function_view=name if view else None)
    if isinstance(result, TensorValue):
        return output(result)
    if isinstance(result, SequenceValue) and result.repeated is None:
        return SequenceValue(tuple(output(i) if isinstance(i, TensorValue) else i for i in result.items))
    return result
