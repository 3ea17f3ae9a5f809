"""Saved tensors: what an op saves, what an in-place change of a version counter meets, what backward frees."""

from __future__ import annotations


import libcst as cst

from gradguard.analysis.events import InplaceChange
from gradguard.analysis.shared import BACKWARD, Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    ConstValue,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    contents,
    evolved,
    provenance,
)
from gradguard.knowledge import surface


class SavedTensors(Part):
    """The interpreter's part that records saves, reports in-place changes and runs backward."""

    def save(self, tensor: TensorValue, record: SavedRecord, state: State) -> None:
        if state.grad_enabled is Tri.NO or self.run.unchecked_saves:  # no save, or one no change breaks
            return
        op = record.aten_op.split(".", 1)[0]
        if (self.run.autocast or self.run.autocast_maybe) and record.what != "output" \
                and op not in surface.AUTOCAST_KEEPS_PRECISION:  # may be saved as a cast copy
            if self.run.autocast and tensor.is_leaf and op in surface.AUTOCAST_LOWER_PRECISION:
                return  # a parameter (fp32) is cast: the copy is saved, never the parameter
            record = evolved(record, certain=False, cast=True)
        record = evolved(record, serial=self.run.next_serial, compiled=self.run.compiled,
                         file=self.run.current_file(),
                         scope=self.run.call_stack[-1] if self.run.call_stack else self.run.analysing)
        self.run.next_serial += 1
        if self.run.call_site is not None:
            self.run.callee_records.add(id(record.node))
        state.saves[tensor.version_counter] = (*state.saves.get(tensor.version_counter, ()), record)
        if tensor.may_alias:  # one of the tensors the name may hold was saved
            uncertain = evolved(record, certain=False)
            for vc in tensor.may_alias:
                state.saves[vc] = (*state.saves.get(vc, ()), uncertain)

    def mutate(self, tensor: TensorValue, node: cst.CSTNode, target_node: cst.CSTNode | None, verb: str,
               state: State, *, inside_module: cst.CSTNode | None = None, detaches: bool = False,
               writes_grad: Tri = Tri.NO) -> None:
        """An in-place change of `tensor`: bumps its version counter (every alias sees it).

        Inside a followed call of this file's code the change is reported where it is written,
        with the calls that led there. Inside another file's code, only changes of what this
        file's ops saved are reported, at this file's call: that file's findings are its own.
        `detaches`: `detach_()`, which changes no values (and bumps no version) but which torch refuses on a view;
        `writes_grad`: whether the value written into it requires grad.
        A save meets one reported change, through its version counter or behind it (`.data`): later
        changes of the same save are not reported again (fixing the first one makes the program run).
        """
        self.run.touched.append(tensor.storage)
        saved = state.saves.get(tensor.version_counter, ())
        storage_saved = state.saves.get(tensor.storage_of, ()) if tensor.storage_of is not None else ()
        chain: tuple[cst.CSTNode, ...] = ()
        if self.run.call_site is None:
            chain = tuple(self.run.call_nodes)
        else:
            node, label, every_change = self.run.call_site
            verb, target_node = _through(label, verb), None
            if not every_change:
                saved = tuple(r for r in saved if id(r.node) not in self.run.callee_records)
                storage_saved = tuple(r for r in storage_saved if id(r.node) not in self.run.callee_records)
                if self._leaf_changed_in_project_code(tensor, state, detaches):
                    tensor = evolved(tensor, multi_output_view=None, later_view=None, no_grad_view=False,
                                     function_view=None)  # torch raises at once: reported at the call
                elif not saved and not storage_saved:
                    return
                else:
                    tensor = evolved(tensor, is_leaf=False, view_of_leaf=False, multi_output_view=None, later_view=None,
                                     no_grad_view=False, function_view=None)
        change = InplaceChange(
            node=node,
            target=tensor,
            target_node=target_node,
            verb=verb,
            grad_enabled=state.grad_enabled,
            bumps_version=tensor.storage_of is None and not detaches,
            detaches=detaches,
            writes_grad=writes_grad,
            saved=saved,
            storage_saved=storage_saved,
            backward_follows=Tri.NO,
            freed_by=None if saved else self.run.freed.get(tensor.version_counter),
            inside_module=inside_module,
            statement=self.run.current_line if self.run.call_site is None else None,
            aliases=self.aliases_of(tensor, target_node, state),
            call_chain=chain,
            standalone_of=self.run.analysing,
            assumes=self.run.assuming,
            compiled=self.run.compiled,
            scopes=(self.run.analysing, *self.run.call_stack) if self.run.call_site is None else (self.run.analysing,),
        )
        self.run.result.changes.append(change)
        if saved and change.bumps_version:
            forget(state, tensor.version_counter, saved)
        if storage_saved and tensor.storage_of is not None:
            forget(state, tensor.storage_of, storage_saved)
        self.run.pending.append(change)  # until a backward pass (or the end of a forward) says whether one follows

    def _leaf_changed_in_project_code(self, tensor: TensorValue, state: State, detaches: bool) -> bool:
        """Whether a change inside another file's function (of the project, not an installed library)
        is one of a leaf (or a view of one) that surely requires grad, with grad surely on: torch refuses it wherever
        it is written (`init_bias(model)` whose helper fills `m.bias` outside `no_grad`)."""
        return (tensor.is_leaf or tensor.view_of_leaf) and tensor.requires_grad is Tri.YES \
            and state.grad_enabled is Tri.YES and not detaches \
            and tensor.storage_of is None and not any(self.parts.user_calls.in_library(d) for d in self.run.call_definitions)

    def restore(self, clone: TensorValue, state: State) -> None:
        """A clone's values copied back into the storage they were taken from (`clone.snapshot`): the
        writes through `.data` since the clone (this one included) left no saved value changed, unless
        the clone was changed since, a save of that storage was made (it holds the values in between)
        or a backward pass ran (it read the changed ones). Their saves are live again."""
        storage, since, backward_runs, serial = clone.snapshot  # type: ignore[misc]
        later = self.run.result.changes[since:]
        changes = [c for c in later if c.target.storage_of == storage and not c.bumps_version]
        met = [r for c in changes for r in c.storage_saved]
        if self.run.backward_runs != backward_runs or any(r.serial >= serial for r in (*met, *state.saves.get(storage, ()))) \
                or any(clone.version_counter in (c.target.version_counter, c.target.storage_of) for c in later):
            return
        for change in changes:
            change.restored = True
        live = state.saves.get(storage, ())
        state.saves[storage] = (*live, *(r for r in dict.fromkeys(met) if r not in live))

    def place_at_call(self, change: InplaceChange, node: cst.CSTNode, label: str) -> None:
        """Report `change`, made inside the call `node` runs, at that call (of this file's code, where
        the analysis now is), as the change the call makes."""
        change.node, change.target_node, change.verb = node, None, _through(label, change.verb)
        change.statement = self.run.current_line
        change.call_chain = tuple(self.run.call_nodes)
        change.scopes = (self.run.analysing, *self.run.call_stack)

    @staticmethod
    def aliases_of(tensor: TensorValue, target_node: cst.CSTNode | None, state: State) -> tuple[str, ...]:
        """Other names bound to tensors that share `tensor`'s version counter (what a rewrite would change).

        Sibling outputs of one multi-output view op are disjoint pieces: they do not count.
        """
        name = target_node.value if isinstance(target_node, cst.Name) else None
        return tuple(sorted(
            other for other, value in {**state.globals, **state.env}.items()
            if other != name and isinstance(value, TensorValue) and value.version_counter == tensor.version_counter
            and not (tensor.multi_output_view and value.multi_output_view)))

    def hand_over(self, values: list[Value]) -> None:
        """`values` go to code the analysis does not follow, which may keep them past the entry
        point's exit: the saves their graphs reach stay live there."""
        reached, possible = provenance(SequenceValue(tuple(values)))
        if reached or possible:
            self.run.hand_overs += 1
        self.run.handed_over |= reached | possible

    def run_backward(self, loss: Value, kwargs: dict[str, Value], state: State, inputs: Value = None,
                     node: cst.CSTNode | None = None) -> None:
        """A backward pass from `loss` (at `node`): it runs through (confirms) the pending changes of
        the saves in its graph, and frees those saves (`provenance`): only the saves the analysis
        knows to be in it, none for a known-empty graph or a value it lost; through a call it did
        not follow, it may. With `inputs` (`torch.autograd.grad(loss, inputs)`) it stops at them: the
        graph that computed them is not run. Then the grad hooks of the leaves it saved run
        (`register_post_accumulate_grad_hook`: an optimizer's step in backward), after its saves
        were freed unless the graph is retained for another backward."""
        self.run.backward_runs += 1
        reached, possible = provenance(loss)
        before = _before_inputs(inputs, state.saves) if inputs is not None else frozenset()
        reached, possible = reached - before, possible - before
        self.run.touched.append(BACKWARD)
        for change in self.run.pending:
            serials = {r.serial for r in (*change.saved, *change.storage_saved)}
            follows = Tri.YES if serials & reached else Tri.MAYBE if serials & possible else None
            if follows is not None:
                change.backward_follows = follows
                change.backward_statement = self.run.current_line if self.run.call_site is None else None
        self.run.pending = [c for c in self.run.pending if c.backward_follows is Tri.NO]
        graph = reached | possible
        hooked = {t.version_counter: t for t in self._grad_hooked(state)
                  if any(r.serial in graph for r in state.saves.get(t.version_counter, ()))}.values()
        retain = kwargs.get("retain_graph") or kwargs.get("create_graph")
        if not (isinstance(retain, ConstValue) and retain.value):
            statement = self.run.current_line if self.run.call_site is None else self.run.call_site[0]
            for vc, records in state.saves.items():
                if statement is not None and any(r.serial in graph for r in records):
                    self.run.freed[vc] = statement
            state.saves = {vc: kept for vc, records in state.saves.items()
                           if (kept := tuple(r for r in records if r.serial not in graph))}
        if hooked and node is not None:
            saved_mode, state.grad_enabled = state.grad_enabled, Tri.NO  # hooks run in backward, grad off
            for tensor in hooked:
                for hook in tensor.grad_hooks:
                    self.parts.module_calls.run_hook(hook, [tensor], node, state)
            state.grad_enabled = saved_mode

    @staticmethod
    def _grad_hooked(state: State) -> list[TensorValue]:
        """The leaves of this scope's names and modules that have post-accumulate-grad hooks."""
        held = (*state.env.values(), *state.globals.values(), *(t for m in state.modules() for t in m.parameters.values()))
        return [t for t in held if isinstance(t, TensorValue) and t.grad_hooks]

    def remove_grad_hook(self, hook: Value, state: State) -> None:
        """`handle.remove()`: `hook` is taken off every tensor it was registered on (a handle of one
        tensor stands for all: several are joined as one)."""
        for tensor in self._grad_hooked(state):
            if any(h is hook for h in tensor.grad_hooks):
                self.parts.bindings.set_flags(state, tensor, evolved(
                    tensor, grad_hooks=tuple(h for h in tensor.grad_hooks if h is not hook)))


def _before_inputs(inputs: Value, saves: dict[int, tuple[SavedRecord, ...]]) -> frozenset[int]:
    """The saves of the graphs that computed `inputs` which `torch.autograd.grad(outputs, inputs)` does
    not run: those behind the inputs no other input was computed from (a later input's graph down to
    an earlier one runs). None when one input (a leaf, or one of no saves) was saved in the graph of
    another (it lies behind it), or when an input's graph is lost."""
    tensors = list(contents(inputs))
    if not tensors or not all(isinstance(t, TensorValue) and t.graph_known for t in tensors):
        return frozenset()
    graphs = [t.history for t in tensors if not t.is_leaf and t.history]  # type: ignore[union-attr]
    behind = frozenset().union(*graphs)
    if any(record.serial in behind for t in tensors if t.is_leaf or not t.history  # type: ignore[union-attr]
           for record in saves.get(t.version_counter, ())):  # type: ignore[union-attr]
        return frozenset()
    return frozenset().union(*(h for h in graphs if not any(other < h for other in graphs)))


def forget(state: State, version_counter: int, met: tuple[SavedRecord, ...]) -> None:
    """Drop the saves of `version_counter` that a reported change has met."""
    ids = set(map(id, met))
    kept = tuple(r for r in state.saves.get(version_counter, ()) if id(r) not in ids)
    if kept:
        state.saves[version_counter] = kept
    else:
        state.saves.pop(version_counter, None)


def _through(label: str, verb: str) -> str:
    """How a change made inside the call `label` runs is said at the call."""
    return f"`{label}(...)` (through {verb} inside it)"
