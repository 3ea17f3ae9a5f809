"""Binding values to targets: names, unpacking, attributes and items, and a value replaced for every
name that holds it (a tensor's changed flags, an argument used as a tensor or a dict)."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from gradguard.analysis.callers import grad_evidence
from gradguard.analysis.code_facts import code_facts
from gradguard.analysis.events import Seen
from gradguard.analysis.module_calls import change_children
from gradguard.analysis.names import dotted_name
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    BuiltinRef,
    ConstValue,
    DictValue,
    EitherCode,
    FunctionRef,
    GeneratorValue,
    ImportRef,
    LostValue,
    ModuleValue,
    Origin,
    PartialValue,
    SequenceValue,
    SuperValue,
    TensorValue,
    Tri,
    Value,
    evolved,
    new_version_counter,
    output,
)


UNSET = object()  # an attribute a module did not have
_CODE = (ImportRef, FunctionRef, BuiltinRef, SuperValue, PartialValue, GeneratorValue, EitherCode)  # no hover describes these


class Bindings(Part):
    """Binds values to assignment targets and rebinds every holder of a value that changed kind or flags."""

    def see(self, node: cst.Name, value: Value, state: State) -> None:
        """Remember the value a name of the file's own code holds (not while following a call),
        unless it names code (a function, a class, an import)."""
        if self.run.hovers and not self.run.call_stack and not isinstance(value, _CODE):
            saved = state.saves.get(value.version_counter, ()) if isinstance(value, TensorValue) else ()
            self.run.seen[node] = Seen(value, saved)

    def bind(self, target: cst.BaseExpression, value: Value, state: State, value_node: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            state.env[target.value] = value
            self.see(target, value, state)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element, item in zip(target.elements, self.unpacked(value, target.elements, state, value_node)):
                self.bind(element.value, item, state, value_node)
        elif isinstance(target, cst.Attribute):
            owner = self.parts.expressions.eval(target.value, state)
            attribute = target.attr.value
            if isinstance(owner, ModuleValue):
                # `self.decoder.weight = self.embed.weight`: a parameter given another's tensor (tied)
                held = owner.parameters if attribute in owner.parameters and isinstance(value, TensorValue) \
                    else owner.named_children
                if self.run.assuming is not None:  # undone after the branch (`_other_branch`)
                    self.run.undo.append((held, attribute, held.get(attribute, UNSET)))
                held[attribute] = value
                if attribute == "forward" and _compiled_forward_of(value, owner):  # `self.forward = torch.compile(self.forward)`
                    owner.compiled = value.compiled
            elif isinstance(owner, TensorValue) and attribute == "requires_grad":
                flag = value.value if isinstance(value, ConstValue) else None
                self.set_flags(state, owner, evolved(
                    owner, requires_grad=Tri.MAYBE if flag is None else Tri.of(bool(flag))))
            elif isinstance(owner, (ArgumentValue, LostValue)) or owner is UNKNOWN:
                self.parts.saved_tensors.hand_over([value])  # `trainer.h = h`: kept by an object the analysis does not know
        elif isinstance(target, cst.Subscript):
            base = self.parts.expressions.eval(target.value, state)
            kinds = [self.parts.expressions.eval_slice(element, state) for element in target.slice]
            base = self.keyed(base, kinds, state)
            if isinstance(base, DictValue) and not base.complete or isinstance(base, LostValue) or base is UNKNOWN \
                    or isinstance(base, ArgumentValue) and not isinstance(value, TensorValue):
                # `cache["h"] = h`: a container not known whole (an argument's) may keep it
                self.parts.saved_tensors.hand_over([value])
            if isinstance(base, (SequenceValue, DictValue)):
                self.parts.containers.store_item(base, single_index(kinds), value, state)
                return
            if isinstance(base, ModuleValue) and base.holds_parameters():  # `params[0] = nn.Parameter(...)`
                self.parts.module_objects.change_parameters(base, "__setitem__", [single_index(kinds), value])
                return
            if isinstance(base, ModuleValue) and base.user_class is None and base.children is not None:
                change_children(base, "__setitem__", [single_index(kinds), value])  # `vgg.classifier[6] = nn.Linear(...)`
                return
            if not isinstance(base, (ArgumentValue, TensorValue)):
                return
            index = single_index(kinds)
            if isinstance(index, ConstValue) and isinstance(index.value, str):
                self.parts.saved_tensors.hand_over([value])  # `d["k"] = v`: no tensor takes a string index
                return
            if isinstance(base, ArgumentValue):
                base = self.promote(base, state)
            if isinstance(base, TensorValue):
                name = dotted_name(target.value)
                self.write_items(base, target, target, value, f"`{name}[...] = …`" if name else "an index assignment",
                                 state)

    def write_items(self, base: TensorValue, target: cst.Subscript, node: cst.CSTNode, value: Value, verb: str,
                    state: State) -> None:
        """`base[...] = value` or `base[...] += value` (`node`): a change of `base` in place, which puts
        it in `value`'s graph (`copy_` records a grad_fn), requiring grad if `value` does."""
        written = self.parts.tensor_ops.requires_grad_of(value) & state.grad_enabled
        self.parts.saved_tensors.mutate(base, node, target.value, verb, state, writes_grad=written)
        history = value.history if isinstance(value, TensorValue) else frozenset()
        if written is not Tri.NO and (base.requires_grad is not Tri.YES or not history <= base.history):
            self.set_flags(state, base, evolved(
                base, requires_grad=base.requires_grad | written,
                is_leaf=base.is_leaf and base.requires_grad is Tri.YES, history=base.history | history))

    def unpacked(self, value: Value, targets: Sequence[cst.BaseElement], state: State,
                 value_node: cst.CSTNode) -> list[Value]:
        """What each of `targets` gets from `a, b = value` or `a, *rest = value` (the starred one: a list):
        the elements of a sequence, of a tensor (`unbind`) or of anything whose elements are known one by
        one (`for norm, ff in self.layers` over a `ModuleList` of `ModuleList`s, a dict's keys)."""
        star = next((i for i, e in enumerate(targets) if isinstance(e, cst.StarredElement)), None)
        if isinstance(value, TensorValue):
            value = self.unbind(value, value_node, state)
        elif not isinstance(value, SequenceValue) and (known := self.parts.containers.elements(value)) is not None:
            value = SequenceValue(tuple(known))
        if isinstance(value, LostValue):  # what a call not followed returned: each part may be in its graph
            return [value] * len(targets)
        if not isinstance(value, SequenceValue):
            return [UNKNOWN] * len(targets)
        if value.repeated is not None:
            rest = SequenceValue(repeated=value.repeated, mutable=True)
            return [rest if i == star else self._distinct(value.repeated, state) if star is not None and i > star
                    else output(self._distinct(value.repeated, state), i) for i in range(len(targets))]
        if star is None:
            return [value.item(i) for i in range(len(targets))]
        after = len(targets) - star - 1
        if not value.known_length or len(value.items) < star + after:
            return [UNKNOWN] * len(targets)
        end = len(value.items) - after
        return [*value.items[:star], SequenceValue(value.items[star:end], mutable=True), *value.items[end:]]

    @staticmethod
    def _distinct(element: Value, state: State) -> Value:
        """One of the elements `element` stands for: when it merges tensors that were distinct (a
        comprehension's or a loop's, `[t.clone() for t in x.chunk(4)]`), a tensor of its own with their
        saves; else `element` itself (the same tensor, or views sharing one version counter)."""
        if not isinstance(element, TensorValue) or len(element.may_alias) < 2 or element.is_view \
                or element.multi_output_view is not None:
            return element
        distinct = evolved(element, version_counter=new_version_counter())
        if element.version_counter in state.saves:
            state.saves[distinct.version_counter] = state.saves[element.version_counter]
        return distinct

    def delete(self, node: cst.Del, state: State) -> None:
        """`del model[i]` of a `torch.nn` container: that child no longer runs in its forward."""
        target = node.target
        if isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
            base = self.parts.expressions.eval(target.value, state)
            if isinstance(base, ModuleValue) and base.user_class is None and base.children is not None:
                change_children(base, "pop", [self.parts.expressions.eval(target.slice[0].slice.value, state)])

    def rebind(self, state: State, old: Value, new: Value) -> None:
        """Replace every name bound to the object `old` by `new` (a changed flag of one tensor, its
        graph after an in-place op), and `old` in the lists and dicts these names hold (`fast[i]`
        after `for w in fast: w.sub_(...)`)."""
        held: list[Value] = []
        for name, value in state.env.items():
            if value is old:
                state.env[name] = new
            held.append(value)
        for name, value in state.globals.items():
            if value is old and name not in state.env:  # the module's binding stays: this scope's changes
                state.env[name] = new
        if isinstance(old, TensorValue):
            _replaced_in(held, old, new)

    def share_graph(self, state: State, written: TensorValue) -> None:
        """An in-place op made `written` a node of its graph: the tensors of this scope that are
        certainly its base or other views of that base (not a `.detach()` nor a parameter made of
        it, which share its version counter only, nor a copy that may be an alias) are in that graph
        from now on, as torch's `CopySlices` puts the view's op in its base's graph: a base that
        required no grad (`u[1:-1] += r * u[1:-1]`) requires it from now on, as the view does. A
        global is rebound in this scope's names (the module's binding stays), as `rebind` does."""
        if not written.alias_certain or written.maybe_other:
            return
        for scope in (state.env, state.globals):
            for name, value in scope.items():
                if isinstance(value, TensorValue) and value is not written \
                        and value.version_counter == written.version_counter and not written.history <= value.history \
                        and (value.is_view or written.is_view) and value.alias_certain and not value.maybe_other \
                        and (not value.is_leaf or value.requires_grad is Tri.NO) \
                        and (scope is state.env or name not in state.env):
                    state.env[name] = evolved(value, history=value.history | written.history,
                                              graph_known=value.graph_known and written.graph_known,
                                              requires_grad=value.requires_grad | written.requires_grad,
                                              is_leaf=value.is_leaf and written.requires_grad is Tri.NO)

    def keyed(self, base: Value, kinds: list[Value | str], state: State) -> Value:
        """An argument indexed with a string (`cfg["lr"]`) is a dict, not a tensor, from now on."""
        if isinstance(base, ArgumentValue) and any(isinstance(k, ConstValue) and isinstance(k.value, str) for k in kinds):
            mapping = DictValue(complete=False)
            self.rebind(state, base, mapping)
            return mapping
        return base

    def set_flags(self, state: State, old: TensorValue, new: TensorValue, owner: ModuleValue | None = None) -> None:
        """`old`'s flags (requires_grad, leaf) are now `new`'s, for every holder of the tensor: the
        names of this scope and the modules whose parameter it is (under `owner` too: a module no
        name holds yet, `nn.Linear(4, 8).requires_grad_(False)`)."""
        self.run.shared_changed = True
        self.run.touched.append(old.version_counter)
        self.rebind(state, old, new)
        for module in state.modules(owner):
            for holder in (module.parameters, module.buffers, module.named_children):
                for key, value in holder.items():
                    if value is old:
                        holder[key] = new  # type: ignore[assignment]

    def replace_object(self, state: State, old: Value, new: Value) -> None:
        """`old` (an immutable value: an optimizer) is `new` from now on, for the names of this scope and
        the modules' attributes that hold it."""
        for scope in (state.env, state.globals):
            for name, value in list(scope.items()):
                if value is old:
                    scope[name] = new
        for module in state.modules():
            for key, value in list(module.named_children.items()):
                if value is old:
                    module.named_children[key] = new

    def promote(self, value: ArgumentValue, state: State) -> TensorValue:
        """An argument used as a tensor from now on: one that may require grad (a finding that
        holds only if it does is a warning; a caller that shows it does makes it an error)."""
        requires_grad = Tri.NO if self.grad_evidence() is False else Tri.MAYBE
        tensor = TensorValue(new_version_counter(), requires_grad, False, Origin(f"the argument `{value.name}`"),
                             from_argument=True)
        self.rebind(state, value, tensor)
        return tensor

    def grad_evidence(self) -> bool | None:
        """Whether the function under analysis shows that its arguments may require grad (what
        an argument promoted to a tensor gets: `promote`); None at the module level."""
        function = self.run.analysing
        if function is None:
            return None
        if function not in self.run.evidence:
            self.run.evidence[function] = grad_evidence(function, self.parts.user_calls.syntax_fact(function, code_facts))
        return bool(self.run.evidence[function])

    def unbind(self, tensor: TensorValue, node: cst.CSTNode, state: State) -> SequenceValue:
        """`a, b = x` and `for row in x` call `unbind`: every element is a multi-output view."""
        view = evolved(tensor.fresh_view(Origin("an element of an unbound tensor", node), grad_enabled=state.grad_enabled),
                       multi_output_view="Unbind", later_view=None)
        return SequenceValue(repeated=view)


def single_index(kinds: list[Value | str]) -> Value:
    """The index of `x[i]` (UNKNOWN for a slice or several indices)."""
    return kinds[0] if len(kinds) == 1 and not isinstance(kinds[0], str) else UNKNOWN


def _compiled_forward_of(value: Value, module: ModuleValue) -> bool:
    """Whether `value` is `module`'s own `forward`, compiled (`torch.compile(module.forward)`): the module's
    calls then run compiled, as after `torch.compile(module)`."""
    return isinstance(value, FunctionRef) and value.compiled is not None and value.bound_self is module \
        and value.name == "forward"


def _replaced_in(values: list[Value], old: Value, new: Value, depth: int = 0) -> None:
    """`old` replaced by `new` in the lists and dicts among `values` (and those they hold, a few deep)."""
    for value in values:
        if isinstance(value, SequenceValue) and value.mutable and value.repeated is None and depth < 3:
            if any(item is old for item in value.items):
                value.items = tuple(new if item is old else item for item in value.items)
            _replaced_in(list(value.items), old, new, depth + 1)
        elif isinstance(value, DictValue) and depth < 3:
            for key, item in list(value.entries.items()):
                if item is old:
                    value.entries[key] = new
            _replaced_in(list(value.entries.values()), old, new, depth + 1)
