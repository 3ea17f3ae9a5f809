"""An abstract interpreter over one file: module-level code, every function and every method.

It walks libcst statements in order, evaluates expressions to abstract values (`values.py`),
records which op saved which version counter (from the op table and the module facts), and
reports each in-place change with the live saves it meets (`events.py`). Branches are joined;
loops run to a fixed point (two passes: every value here is stable after one join).

Its parts: `state.py` (what holds at a program point), `saved_tensors.py` (saves, in-place
changes, backward), `tensor_ops.py` (ATen ops and tensor methods), `torch_calls.py` (the torch
API by name), `module_calls.py` (`nn.Module`s) and `user_calls.py` (the project's own functions).
"""

from __future__ import annotations

import ast
from contextlib import nullcontext
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

import libcst as cst

from gradguard.analysis import budget
from gradguard.analysis.budget import OverBudget
from gradguard.analysis.callers import GRAD_MODE_WORDS, grad_evidence, grad_off_functions
from gradguard.analysis.containers import BUILTINS, MAX_UNROLLED_ELEMENTS, Containers
from gradguard.analysis.custom_functions import CustomFunctions, is_autograd_function
from gradguard.analysis.events import Cut, Deferred, ScopeResult, Seen, Unit
from gradguard.analysis.module_calls import MAX_UNROLLED_MODULES, ModuleCalls
from gradguard.analysis.names import (
    OPERATOR_SYMBOLS,
    decorated_as,
    dotted_name,
    is_static_method,
    is_torch_name,
    normalise_torch_name,
    qualname_of,
)
from gradguard.analysis.saved_tensors import SavedTensors
from gradguard.analysis.shared import Returns
from gradguard.analysis.checkpoint import MAX_CHECKPOINTS, restore as checkpoint_restore, take as checkpoint_take
from gradguard.analysis.reuse import Reuse, defined_in, first_changed
from gradguard.analysis.state import State
from gradguard.analysis.tensor_ops import TensorOps
from gradguard.analysis.torch_calls import TorchCalls, compiled
from gradguard.analysis.user_calls import UserCalls, absent_without
from gradguard.analysis.values import (
    UNKNOWN,
    UNKNOWN_INDEX_VIEW,
    ArgumentValue,
    BuiltinRef,
    CompiledRegion,
    Compiler,
    ConstValue,
    Definitions,
    DictValue,
    DistributionValue,
    EitherCode,
    FunctionApply,
    FunctionCtx,
    FunctionRef,
    GeneratorValue,
    GradScalerValue,
    ImportRef,
    IntValue,
    LostValue,
    ModuleValue,
    OptimizerValue,
    Origin,
    PartialValue,
    SequenceValue,
    StringPattern,
    SuperValue,
    TensorValue,
    TopLevel,
    Tri,
    Value,
    contents,
    evolved,
    join_values,
    lost_from,
    new_version_counter,
    reachable_saves,
    truth,
)
from gradguard.knowledge import surface
from gradguard.source.walk import bound_names, descendants

if TYPE_CHECKING:
    from gradguard.analysis.project import ProjectIndex

__all__ = ["Interpreter", "dotted_name", "interpret", "read_top_level"]

_UNSET = object()  # an attribute a module did not have
_PROPERTIES = ("property", "functools.cached_property", "cached_property")  # read as an attribute: the method runs
_CODE = (ImportRef, FunctionRef, BuiltinRef, SuperValue, PartialValue, GeneratorValue, EitherCode)  # no hover describes these


@absent_without("global", frozenset())
def _global_names(function: cst.FunctionDef) -> frozenset[str]:
    """The names `function` declares `global` (assigning them binds the module's)."""
    return frozenset(name.name.value for node in descendants(function.body) if isinstance(node, cst.Global)
                     for name in node.names)


class Interpreter(UserCalls, ModuleCalls, TorchCalls, TensorOps, Containers, SavedTensors, CustomFunctions):
    """Interprets one parsed file and collects its in-place changes."""

    def __init__(self, module: cst.Module, path: str | None = None, project: ProjectIndex | None = None,
                 previous: ScopeResult | None = None, replaced: Iterable[cst.CSTNode] = (), hovers: bool = False,
                 source: Callable[[cst.CSTNode], str | None] | None = None,
                 checkpoints_at: frozenset[int] = frozenset(), text: str | None = None) -> None:
        replaced = list(replaced)
        super().__init__(module, path, project, previous,
                         frozenset(f for node in replaced for f in defined_in(node) if isinstance(f, cst.FunctionDef)), hovers)
        if source is not None:
            self.source_of = source
        self.definitions.text = text
        self.checkpoints_at = checkpoints_at
        # only bodies of functions and methods (not `__init__`) changed: the module level may stand
        self.evidence: dict[cst.FunctionDef, bool] = {}  # `grad_evidence` of each entry point, once
        self.bodies_only = all(isinstance(n, cst.FunctionDef) and n.name.value != "__init__" for n in replaced)

    # ---- entry points -------------------------------------------------------------------

    @cached_property
    def grad_off(self) -> frozenset[cst.FunctionDef]:
        """The functions the file refers to only where grad is off (`callers.py`), found when an
        entry point is first analysed (a file read for its definitions never needs them)."""
        if not any(self.definitions.mentions(word) for word in GRAD_MODE_WORDS):
            return frozenset()
        known = self.previous.references if self.previous is not None else None
        off, self.result.references = grad_off_functions(self.module, known)  # type: ignore[arg-type]
        return off

    def run(self, *, functions: bool = True) -> ScopeResult:
        """Interpret the module-level code, then (with `functions`) every function and method.

        With the `previous` version's result, whose statements `replaced` this one no longer has,
        what did not run into a replaced function stands: the module-level code's result (when
        only function bodies changed, see `_reuse_module_level`) and each function's (after an
        edit of the module-level code, only where the globals it reads are bound as before:
        `reuse.py`). Past the file's budget, the functions not analysed yet are left out (a `Cut`
        says which).
        """
        with budget.using(self.budget), self.budget.scope(budget.FILE_STEPS) as depth:
            try:
                self._module_level()
                units = self._reusable_units()
                while self.deferred and functions:
                    self._analyse_deferred(self.deferred.pop(0), units)
            except OverBudget as error:
                if error.depth != depth:
                    raise
                self._cut_file(error.reason)
        self.deferred = []
        self.result.cut_calls = bool(self.cut_calls)
        called = set(self.result.module_entered).union(*(unit.entered for unit in self.result.units.values()))
        self.result.changes = [c for c in self.result.changes if c.standalone_of not in called]
        return self.result

    def _reusable_units(self) -> dict[cst.FunctionDef, Unit]:
        """The previous version's units that may stand: all of them but those that ran into a
        replaced function when the module level's result stood; else each one checked against
        what the module level built (`reuse.py`)."""
        previous = self.previous
        if previous is None or previous.definitions is None or previous.cut_calls or self.cut_calls or (
                self.module_reused and self.entered & self.replaced):
            return {}  # calls some analyses stopped following: what each reused result saw is not known
        if not self.module_reused:
            before = previous.top_level
            if before is None or before.star_imports != self.definitions.star_imports:
                return {}
            self.reuse = Reuse(before.globals, previous.body, self.definitions,
                               self.result.facts, self.source_of)
        return previous.units

    def _module_level(self) -> None:
        previous = self.previous
        if previous is not None:
            self.result.facts = previous.facts.kept_for(self.module.body)
        self.result.body = tuple(self.module.body)
        self.module_reused = previous is not None and self.bodies_only and self._reuse_module_level(previous)
        if self.module_reused:
            self.result.checkpoints = previous.checkpoints  # its statements stand; the next version may start there
        else:
            self.definitions.start(self.module)
            state = State(self.definitions.globals)
            recording = self.project.recording(self.definitions.path) \
                if self.project is not None and self.definitions.path is not None else nullcontext(None)
            try:
                with recording as reads:
                    self.run_unit(self._module_statements(state), state, None)
            finally:
                self.definitions.globals = state.env
            self.result.module_reads = dict(reads.cost) if reads is not None else {}
            for change in self.pending:
                change.backward_follows = Tri.NO
            self.pending = []
        self.result.module_changes = list(self.result.changes)
        self.result.module_entered = frozenset(self.entered)
        self.result.module_seen = self.seen
        self.result.module_next_serial = self.next_serial
        if self.module_reused:
            self.result.module_reads = previous.module_reads  # type: ignore[union-attr]
        self.result.module_cuts = list(self.result.cuts)
        self.result.plan = list(self.deferred)

    def _module_statements(self, state: State) -> Iterator[cst.BaseStatement]:
        """The top-level statements to run (`checkpoint.py`): after the longest of the previous
        version's checkpoints that applies (the state restored as it was there), else all; a
        checkpoint is taken before the first one the previous version did not have."""
        body, previous = self.module.body, self.previous
        steps = self.budget.steps
        start, at = 0, None
        if previous is not None:
            kept = [c for c in previous.checkpoints if c.applies_to(body, self.hovers)]
            if kept:
                checkpoint_restore(kept[-1], self, state)
                start = len(kept[-1].prefix)
            self.result.checkpoints = tuple(kept)
            at = first_changed(body, previous.body)
        for index in range(start, len(body)):
            if index > start and (index == at or index in self.checkpoints_at):
                taken = checkpoint_take(self, state, index, self.budget.steps - steps)
                if taken is not None:  # typing moves on, or back to a statement above: a few are kept
                    self.result.checkpoints = (*self.result.checkpoints, taken)[-MAX_CHECKPOINTS:]
            yield body[index]

    def _analyse_deferred(self, deferred: Deferred, units: dict[cst.FunctionDef, Unit]) -> None:
        unit = units.get(deferred.function)
        grad_off = deferred.function in self.grad_off
        if unit is not None and unit.grad_off == grad_off and not unit.entered & self.replaced and not unit.shares and \
                self.budget.fits(unit.steps) and (self.reuse is None or self.reuse.holds(deferred.function, unit)):
            self.result.changes.extend(unit.changes)
            self.result.cuts.extend(unit.cuts)
            self.defer(*unit.nested)
            self.budget.steps += unit.steps  # as if it ran: the file's budget cuts where a run from the top would
        else:
            start, cuts, queued = len(self.result.changes), len(self.result.cuts), len(self.deferred)
            steps, stopped = self.budget.steps, len(self.cut_calls)
            self.entered, self.seen, self.shared_changed = set(), {}, False
            self.analyse_function(deferred.function, self_value=self.instance_copy(deferred.template),
                                  is_forward=deferred.is_forward)
            unit = Unit(self.result.changes[start:], frozenset(self.entered), tuple(self.deferred[queued:]),
                        self.seen, tuple(self.result.cuts[cuts:]), self.shared_changed or len(self.cut_calls) > stopped,
                        self.budget.steps - steps, grad_off)
        self.result.units[deferred.function] = unit

    def _cut_file(self, reason: str) -> None:
        """The file's budget ran out: what was found stands, the functions left are not analysed
        (the next version of an open document is then analysed afresh: `cut_short`)."""
        skipped = tuple(d.function.name.value for d in self.deferred)
        self.result.cuts.append(Cut("file", None, None, reason, skipped))
        self.result.cut_short = True
        self.pending = []

    def defer(self, *functions: Deferred) -> None:
        """Analyse these functions on their own after the module level (each once; a function
        defined inside a followed call is analysed with the function that defines it)."""
        for deferred in functions:
            if deferred.function not in self.planned and not self.call_stack:
                self.planned.add(deferred.function)
                self.deferred.append(deferred)

    def run_unit(self, body: Sequence[cst.BaseStatement], state: State, function: cst.FunctionDef | None) -> None:
        """Run a function's body (the module's, for None) within one function's budget; past it,
        the unit stops where it is, keeping what it found."""
        with self.budget.scope(budget.FUNCTION_STEPS) as depth:
            try:
                self.exec_block(body, state)
            except (OverBudget, RecursionError) as error:
                if isinstance(error, OverBudget) and error.depth != depth:
                    raise
                self.note_cut("function", function, function.name if function is not None else self.current_line,
                              _reason(error))

    def note_cut(self, scope: str, function: cst.FunctionDef | None, node: cst.CSTNode | None,
                 reason: str) -> None:
        """Remember, once per function and scope, that its analysis stopped short (`Cut.reason`)."""
        if not any(c.scope == scope and c.function is function for c in self.result.cuts):
            self.result.cuts.append(Cut(scope, function, node, reason))

    def _reuse_module_level(self, previous: ScopeResult) -> bool:
        """Take the previous version's module-level result when the two versions differ only in
        the bodies of functions and methods (not `__init__`) that the module-level code did not
        run; the definitions are updated to the new functions."""
        definitions = previous.definitions
        if definitions is None or definitions.module is None or previous.module_entered & self.replaced or any(
                unit.shares for unit in previous.units.values()):  # its modules no longer as the module level left them
            return False
        new_for = _replacements(definitions.module, self.module)
        if new_for is None:
            return False
        # new containers: the previous run's `TopLevel` keeps its own (a stopped run puts them back)
        definitions.globals = {name: evolved(value, node=new_for[value.node]) if isinstance(value, FunctionRef)
                               and value.definitions is definitions and value.node in new_for else value
                               for name, value in definitions.globals.items()}
        definitions.classes = {name: (new_for.get(node, node), template)
                               for name, (node, template) in definitions.classes.items()}
        definitions.module = self.module
        self.definitions = definitions
        self.result.changes.extend(previous.module_changes)
        self.result.cuts.extend(previous.module_cuts)
        self.entered = set(previous.module_entered)
        self.seen = previous.module_seen
        # no function's save takes the serial of a module-level one, which a global's history holds
        self.next_serial = self.result.module_next_serial = previous.module_next_serial
        self.defer(*(evolved(d, function=new_for[d.function]) if d.function in new_for else d for d in previous.plan))
        return True

    # ---- statements ---------------------------------------------------------------------

    def exec_block(self, body: Iterable[cst.BaseStatement | cst.BaseSmallStatement], state: State) -> None:
        step = self.budget.step
        for statement in body:
            if state.dead:
                return
            step()
            handler = self._statement_handlers.get(type(statement))
            if handler is not None:
                handler(self, statement, state)

    def _simple_line(self, node: cst.SimpleStatementLine, state: State) -> None:
        outer, self.current_line = self.current_line, node
        try:
            self.exec_block(node.body, state)
        except RecursionError:  # the line is skipped: what it binds is unknown from here on
            for statement in node.body:
                targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else \
                    [statement.target] if isinstance(statement, (cst.AnnAssign, cst.AugAssign)) else []
                for target in targets:
                    for name in bound_names(target):
                        state.env[name] = UNKNOWN
            self.note_cut("statement", self.analysing, self.call_nodes[0] if self.call_stack else node, "depth")
        finally:
            self.current_line = outer

    def _expr(self, node: cst.Expr, state: State) -> None:
        self.eval(node.value, state)

    def _assign(self, node: cst.Assign, state: State) -> None:
        value = self.eval(node.value, state)
        for target in node.targets:
            self.bind(target.target, value, state, node.value)

    def _ann_assign(self, node: cst.AnnAssign, state: State) -> None:
        if node.value is not None:
            self.bind(node.target, self.eval(node.value, state), state, node.value)

    def _aug_assign(self, node: cst.AugAssign, state: State) -> None:
        operator = type(node.operator).__name__
        right = self.eval(node.value, state)
        inplace = surface.AUGMENTED_INPLACE.get(operator)
        target = node.target
        if inplace is None:  # `@=`: no in-place form, a rebinding
            left = self.eval(target, state)
            self.bind(target, self.apply_aten("matmul", [left, right], {}, node, state, "`@`"), state, node)
            return
        verb = f"`{OPERATOR_SYMBOLS.get(operator.removesuffix('Assign'), '?')}=`"
        if isinstance(target, cst.Subscript):
            base = self.eval(target.value, state)
            kinds = [self.eval_slice(element, state) for element in target.slice]
            base = self.keyed(base, kinds, state)
            if isinstance(base, (SequenceValue, DictValue)):  # `feats[i] += up`: the element changes in place
                element = self.subscript_of(base, _single_index(kinds), state)
                if isinstance(element, TensorValue):
                    self.apply_aten(inplace, [element, right], {}, node, state, verb, target_node=target)
                return
            if isinstance(base, ArgumentValue):
                base = self.promote(base, state)
            if isinstance(base, TensorValue):
                self.mutate(base, node, target.value, verb, state)
            return
        left = self.eval(target, state)
        if isinstance(left, ArgumentValue):
            left = self.promote(left, state)
        if isinstance(left, TensorValue):
            self.apply_aten(inplace, [left, right], {}, node, state, verb, target_node=target)
        elif isinstance(left, SequenceValue) and operator == "AddAssign" and left.mutable:
            self.call_container_method(left, "extend", [right], {}, state)  # `layers += [...]` extends the list
        elif isinstance(left, SequenceValue) and isinstance(right, SequenceValue) and operator == "AddAssign":
            self.bind(target, SequenceValue(left.items + right.items) if left.repeated is None and right.repeated is None
                      else UNKNOWN, state, node)
        elif not isinstance(left, (TensorValue, ModuleValue)):
            # no in-place form: `left = left + right` (`net_block_idx += 1`; `loss += t` from `loss = 0`: a
            # tensor in `t`'s graph, and in the unknown left's if the analysis lost it)
            result = self._binary_operation(operator.removesuffix("Assign"), node, left, right, state)
            if left is UNKNOWN and isinstance(result, TensorValue):
                result = evolved(result, graph_known=False)
            self.bind(target, result, state, node)

    def _return(self, node: cst.Return, state: State) -> None:
        if self.returns and self.returns[-1].tail:
            self.returns[-1].tail_call = node.value if not self.returns[-1].guarded else None
        value = self.eval(node.value, state) if node.value is not None else ConstValue(None)
        if self.returns:
            self.returns[-1].add(value, state)
        state.dead = True

    def _raise(self, node: cst.Raise, state: State) -> None:
        state.dead = True

    def _import(self, node: cst.Import, state: State) -> None:
        for alias in node.names:
            dotted = dotted_name(alias.name) or ""
            if alias.asname is not None:
                state.env[dotted_name(alias.asname.name) or ""] = ImportRef(dotted)
            else:
                top = dotted.split(".", 1)[0]
                state.env[top] = ImportRef(top)

    def _import_from(self, node: cst.ImportFrom, state: State) -> None:
        origin = "." * len(node.relative) + (dotted_name(node.module) or "" if node.module is not None else "")
        if isinstance(node.names, cst.ImportStar):
            if node.relative and self.project is not None and self.definitions.path is not None:
                origin = self.project.absolute(self.definitions.path, origin)
            self.definitions.star_imports.append(origin)
            return
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            bound = (dotted_name(alias.asname.name) or "") if alias.asname is not None else name
            qualname = f"{origin}{name}" if origin.endswith(".") else f"{origin}.{name}"
            if node.relative and self.project is not None and self.definitions.path is not None:
                qualname = self.project.absolute(self.definitions.path, qualname)
            state.env[bound] = ImportRef(qualname)

    def _if(self, node: cst.If, state: State) -> None:
        test = self.eval(node.test, state)
        known = truth(test)
        if known is not None and isinstance(test, ConstValue) and test.default_of is not None and not self.call_stack:
            self._other_branch(node, known, test.default_of, state)
        then_state = state.copy()
        if known is not False:
            self.exec_block(node.body.body, then_state)
        else:
            then_state.dead = True
        else_state = state.copy()
        if known is True:
            else_state.dead = True
        elif isinstance(node.orelse, cst.If):
            self._if(node.orelse, else_state)
        elif isinstance(node.orelse, cst.Else):
            self.exec_block(node.orelse.body.body, else_state)
        self._replace(state, then_state.join(else_state))

    def _other_branch(self, node: cst.If, known: bool, parameter: str, state: State) -> None:
        """The branch of `node` that the default of `parameter` skips, run on a copy of `state`: the
        changes it makes hold for a caller passing another value (`InplaceChange.assumes`); what it
        binds and returns is dropped, so the code after the `if` runs with the default alone."""
        skipped = [] if known else node.body.body
        if known and isinstance(node.orelse, cst.Else):
            skipped = node.orelse.body.body
        elif known and isinstance(node.orelse, cst.If):
            skipped = [node.orelse]
        if not skipped:
            return
        returns = self.returns[-1] if self.returns else None
        returned = (list(returns.values), returns.state) if returns is not None else None
        outer, self.assuming = self.assuming, self.assuming or parameter
        undo_from, followed = len(self.undo), self.followed
        try:
            self.exec_block(skipped, state.copy())
        finally:
            self.assuming, self.followed = outer, followed  # its calls do not count against the default's
            if returns is not None and returned is not None:
                returns.values, returns.state = returned
            while len(self.undo) > undo_from:  # the module's attributes as the default left them
                attributes, attribute, before = self.undo.pop()
                if before is _UNSET:
                    attributes.pop(attribute, None)
                else:
                    attributes[attribute] = before

    @staticmethod
    def isinstance_of(subject: Value, classes: Value) -> bool | None:
        """The outcome of `isinstance(m, nn.Linear)` (or a tuple of classes) for a known torch module,
        and of `isinstance(x, tuple)` (`list`, `dict`) for a value whose kind is known."""
        candidates = classes.items if isinstance(classes, SequenceValue) and classes.repeated is None else (classes,)
        if candidates and all(isinstance(c, BuiltinRef) and c.name in _BUILTIN_TYPES for c in candidates):
            return _builtin_instance(subject, tuple(_BUILTIN_TYPES[c.name] for c in candidates))
        if candidates and all(qualname_of(c) in _ITERABLE_TYPES for c in candidates):
            if isinstance(subject, (FunctionRef, ImportRef, BuiltinRef)):  # `isinstance(block, Iterable)`: a class
                return False
            if isinstance(subject, (ConstValue, SequenceValue, DictValue)):
                return _builtin_instance(subject, (str, tuple, list, dict))
            return None
        if candidates and all(qualname_of(c) == "functools.partial" for c in candidates):
            if isinstance(subject, PartialValue):
                return True
            return False if isinstance(subject, (ConstValue, TensorValue, FunctionRef, ImportRef, BuiltinRef, ModuleValue,
                                                 SequenceValue, DictValue, GeneratorValue)) else None
        if not isinstance(subject, ModuleValue) or subject.user_class is not None:
            return None
        names = []
        for candidate in candidates:
            name = qualname_of(candidate)
            if name is None:
                if isinstance(candidate, FunctionRef) and isinstance(candidate.node, cst.ClassDef):
                    continue  # a class of the project: never a base of torch's own modules
                return None
            names.append(normalise_torch_name(name))
        if any(not n.startswith("torch.nn.") for n in names):
            return None
        return f"torch.nn.{subject.class_name}" in names or "torch.nn.Module" in names

    def _loop(self, body: cst.BaseSuite, state: State, bind_target: Callable[[State], None] | None,
              orelse: cst.Else | None) -> None:
        entry = state.copy()
        current = state.copy()
        self.loop_depth += 1
        try:
            self._passes(body, entry, current, bind_target)
        finally:
            self.loop_depth -= 1
        self._replace(state, current)
        if orelse is not None:
            self.exec_block(orelse.body.body, state)

    def _passes(self, body: cst.BaseSuite, entry: State, current: State,
                bind_target: Callable[[State], None] | None) -> None:
        """Run a loop's body to its fixed point in `current`: two passes (what one iteration
        leaves for the next, its saves as certain as they were: a loop repeats), one inside
        `MAX_TWO_PASS_LOOPS` loops (so nested loops cost 2**3 times their body at most, not
        2**depth; the second pass could only add findings)."""
        passes = 2 if self.loop_depth <= MAX_TWO_PASS_LOOPS else 1
        for index in range(passes):
            iteration = current.copy()
            iteration.dead = False
            if bind_target is not None:
                bind_target(iteration)
            self.exec_block(body.body, iteration)
            self._replace(current, entry.join_repeated(iteration) if index + 1 < passes else entry.join(iteration))

    def _for(self, node: cst.For, state: State) -> None:
        iterable = self.eval(node.iter, state)
        items = self.elements(iterable)
        objects = items is not None and bool(items) and len(items) <= MAX_UNROLLED_MODULES and all(
            isinstance(item, ModuleValue) or (isinstance(item, TensorValue) and item.is_leaf) for item in items)
        if items is not None and (objects or (len(items) <= MAX_UNROLLED_ELEMENTS and self.unrolling < 2)) \
                and not self.syntax_fact(node, _jumps, self.call_definitions[-1] if self.call_definitions else None):
            self.unrolling += 1
            try:
                for item in items:  # `for m in model.modules()`, `for w in (w1, w2)`: each element in turn
                    self.bind(node.target, item, state, node.iter)
                    self.exec_block(node.body.body, state)
                    if state.dead:  # it returned: the remaining elements do not run
                        return
            finally:
                self.unrolling -= 1
            if node.orelse is not None:
                self.exec_block(node.orelse.body.body, state)
            return

        def bind(iteration: State) -> None:
            self.bind(node.target, self.iterate(iterable, node.iter, iteration), iteration, node.iter)

        self._loop(node.body, state, bind, node.orelse)

    def _while(self, node: cst.While, state: State) -> None:
        self.eval(node.test, state)
        self._loop(node.body, state, None, node.orelse)

    def _try(self, node: cst.Try | cst.TryStar, state: State) -> None:
        frame = self.returns[-1] if self.returns else None
        guards = frame is not None and (bool(node.handlers) or node.finalbody is not None)
        if guards:
            frame.guarded += 1  # type: ignore[union-attr]
        try:
            before = state.copy()
            self.exec_block(node.body.body, state)
            outcome = state.copy()
            for handler in node.handlers:
                handler_state = before.join(outcome)
                handler_state.dead = False
                self.exec_block(handler.body.body, handler_state)
                outcome = outcome.join(handler_state)
            if node.orelse is not None:
                self.exec_block(node.orelse.body.body, outcome)
        finally:
            if guards:
                frame.guarded -= 1  # type: ignore[union-attr]
        self._replace(state, outcome)
        if node.finalbody is not None:
            was_dead = state.dead
            state.dead = False
            self.exec_block(node.finalbody.body.body, state)
            state.dead = state.dead or was_dead

    def _with(self, node: cst.With, state: State) -> None:
        saved_mode, autocasts = state.grad_enabled, (self.autocast, self.autocast_maybe)
        for item in node.items:
            mode = self.grad_mode_of(item.item, state)
            if mode is not None:
                state.grad_enabled = mode
                continue
            autocast = self.autocast_of(item.item, state)
            if autocast is not Tri.NO:
                self.autocast += 1 if autocast is Tri.YES else 0
                self.autocast_maybe += 1 if autocast is Tri.MAYBE else 0
                continue
            value = self.eval(item.item, state)
            if item.asname is not None:
                self.bind(item.asname.name, UNKNOWN if not isinstance(value, TensorValue) else value, state, item.item)
        try:
            self.exec_block(node.body.body, state)
        finally:
            state.grad_enabled, (self.autocast, self.autocast_maybe) = saved_mode, autocasts

    def _function_def(self, node: cst.FunctionDef, state: State) -> None:
        name = node.name.value
        definitions = self.call_definitions[-1] if self.call_stack else self.definitions
        inside = bool(self.call_stack) or self.analysing is not None
        # a function defined inside another sees its names (a closure: `def parse(x): ... repeat(x, n)`)
        state.env[name] = FunctionRef(name, node, definitions, closure=state.env if inside else None)
        if definitions is self.definitions:  # another file's nested functions are that file's to analyse
            self.defer(Deferred(node, None, False))

    def _class_def(self, node: cst.ClassDef, state: State) -> None:
        name = node.name.value
        state.env[name] = FunctionRef(name, node, self.definitions)
        bases = tuple(self.class_base(base.value, state) for base in node.bases)
        self.definitions.bases[name] = bases
        is_module, torch_base = self.module_kind(bases)
        if not is_module and self.project is not None and any(
                isinstance(b, ImportRef) and self.project.derives_from_module(b.qualname) for b in bases):
            is_module = True  # an installed `nn.Module` of a file left unread (its package's index says)
        if not is_module and self.library and any(isinstance(b, ImportRef) for b in bases) and any(
                isinstance(s, cst.FunctionDef) and s.name.value == "forward" for s in node.body.body):
            is_module = True  # a library class with a `forward`, derived from a class of its other files
        template = ModuleValue(name, None, user_class=name, definitions=self.definitions, is_module=is_module,
                               torch_base=torch_base)
        self.definitions.classes[name] = (node, template)
        if self.analysing is not None:  # a class defined inside a function: later analyses see it
            self.shared_changed = True
        attributes = self.definitions.class_attributes[name] = {}
        for line in node.body.body:  # `SIZES = OrderedDict(...)` in the class body
            for statement in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                value = statement.value if isinstance(statement, (cst.Assign, cst.AnnAssign)) else None
                targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else \
                    [statement.target] if isinstance(statement, cst.AnnAssign) else []
                if value is not None and all(isinstance(t, cst.Name) for t in targets):
                    evaluated = self.eval(value, state)
                    attributes.update({t.value: evaluated for t in targets if evaluated is not UNKNOWN})
        methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is not None and not self.library:
            self.analyse_function(init, self_value=template, is_forward=False, enclosing=state)
        for method in methods:
            if method is init:
                continue
            self.defer(Deferred(method, None if is_static_method(method) else template,
                                is_module and method.name.value == "forward"))

    _statement_handlers: dict[type, Callable[[Interpreter, object, State], None]] = {
        cst.SimpleStatementLine: _simple_line,
        cst.Expr: _expr,
        cst.Assign: _assign,
        cst.AnnAssign: _ann_assign,
        cst.AugAssign: _aug_assign,
        cst.Return: _return,
        cst.Raise: _raise,
        cst.Import: _import,
        cst.ImportFrom: _import_from,
        cst.If: _if,
        cst.For: _for,
        cst.While: _while,
        cst.Try: _try,
        cst.TryStar: _try,
        cst.With: _with,
        cst.FunctionDef: _function_def,
        cst.ClassDef: _class_def,
    }

    @staticmethod
    def _replace(state: State, new: State) -> None:
        state.env, state.saves, state.grad_enabled, state.dead = new.env, new.saves, new.grad_enabled, new.dead

    # ---- scopes -------------------------------------------------------------------------

    def analyse_function(self, node: cst.FunctionDef, self_value: ModuleValue | None, is_forward: bool,
                         enclosing: State | None = None) -> None:
        """Interpret `node`'s body. It reads its own names, then those of the `enclosing` scope (a
        class's `__init__`, run where the class is defined): a function's, or the module's."""
        module_names = self.definitions.globals
        env: dict[str, Value] = {}
        if enclosing is not None and enclosing.globals:  # defined in a function
            env, module_names = dict(enclosing.env), enclosing.globals
        elif enclosing is not None:  # defined at module level, which is still running
            module_names = enclosing.env
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        defaults = State({}, globals=module_names)
        for index, param in enumerate(all_params):
            name = param.name.value
            env[name] = self_value if (index == 0 and self_value is not None) else self.argument(param)
            if param.default is not None and env[name] is not self_value:
                default = self.eval(param.default, defaults)
                if isinstance(default, ConstValue) and default.value is not None:
                    env[name] = evolved(default, default_of=name)  # what runs when no caller says otherwise
                elif isinstance(default, (ImportRef, FunctionRef, ModuleValue, PartialValue)):
                    env[name] = default
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                env[star.name.value] = UNKNOWN
        state = State(env, globals=module_names)
        if node in self.grad_off and not self.call_stack:
            state.grad_enabled = Tri.NO  # its callers' grad mode
        for decorator in node.decorators:
            mode = self.grad_mode_of(decorator.decorator, state)
            if mode is not None:
                state.grad_enabled = mode
        outer = (self.pending, self.in_module_method, self.analysing, self.followed, self.handed_over,
                 self.yielded_here, self.compiled)
        backend = self.compiled_by(node.decorators, state)
        self.compiled = CompiledRegion(backend) if backend is not None else None
        self.pending, self.analysing, self.followed, self.freed = [], node, 0, {}
        self.handed_over, self.yielded_here = set(), []
        self.in_module_method = self_value is not None
        self.returns.append(Returns(tail=not self.call_stack))
        given = list(env.values())
        cuts, ended = len(self.result.cuts), False
        try:
            self.run_unit(node.body.body, state, node)
            ended = len(self.result.cuts) == cuts  # it ran to its end: what escapes it is known
        finally:
            returns = self.returns.pop()
            graph = self.graph_of(returns.values) if is_forward else frozenset()
            live = self.live_at_exit(node, returns, state, given) if ended and self.pending else None
            for change in self.pending:  # a backward pass follows a forward, through the known part of what it returns
                serials = {r.serial for r in (*change.saved, *change.storage_saved)}
                if is_forward and (graph is None or serials & graph):
                    change.backward_follows = Tri.YES
                elif live is None or serials & live or change.target.from_argument:
                    # (a tensor of the caller's: what the change wrote joins its graph, which may reach the save)
                    change.backward_follows = Tri.MAYBE
                else:
                    change.backward_follows, change.dies_in = Tri.NO, node
            (self.pending, self.in_module_method, self.analysing, self.followed, self.handed_over,
             self.yielded_here, self.compiled) = outer

    def live_at_exit(self, node: cst.FunctionDef, returns: Returns, end: State, given: list[Value]) -> frozenset[int]:
        """The saves a backward pass after the entry point `node` returns may still reach: those of
        what escapes it (what it returns or yields, what `self`, its arguments and the module's
        globals hold, the names it declares `global`, what it handed to calls not followed)."""
        declared = self.syntax_fact(node, _global_names)
        at_exit = returns.exit(end.copy())
        written = [at_exit.env.get(p.name.value) for p in (*node.params.posonly_params, *node.params.params,
                                                            *node.params.kwonly_params)]
        escaping = [*returns.values, *self.yielded_here, *given, *end.globals.values(),
                    *(v for v in written if isinstance(v, TensorValue) and v.from_argument),  # `out[...] = h`
                    *(at_exit.env[name] for name in declared if name in at_exit.env)]
        return reachable_saves(escaping) | self.handed_over

    @staticmethod
    def graph_of(values: list[Value]) -> frozenset[int] | None:
        """The saves known to be in the graph of the tensors among `values` (in tuples, lists and dicts
        too; a graph partly lost: its known part); None when none of them is a tensor."""
        tensors = [v for v in contents(SequenceValue(tuple(values)), dicts=True) if isinstance(v, TensorValue)]
        if not tensors:
            return None
        return frozenset().union(*(t.history for t in tensors))

    # ---- binding ------------------------------------------------------------------------

    def see(self, node: cst.Name, value: Value, state: State) -> None:
        """Remember the value a name of the file's own code holds (not while following a call),
        unless it names code (a function, a class, an import)."""
        if self.hovers and not self.call_stack and not isinstance(value, _CODE):
            saved = state.saves.get(value.version_counter, ()) if isinstance(value, TensorValue) else ()
            self.seen[node] = Seen(value, saved)

    def bind(self, target: cst.BaseExpression, value: Value, state: State, value_node: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            state.env[target.value] = value
            self.see(target, value, state)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element, item in zip(target.elements, self.unpacked(value, target.elements, state, value_node)):
                self.bind(element.value, item, state, value_node)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value, state)
            attribute = target.attr.value
            if isinstance(owner, ModuleValue):
                if self.assuming is not None:  # undone after the branch (`_other_branch`)
                    self.undo.append((owner.named_children, attribute, owner.named_children.get(attribute, _UNSET)))
                owner.named_children[attribute] = value
                if attribute == "forward" and _compiled_forward_of(value, owner):  # `self.forward = torch.compile(self.forward)`
                    owner.compiled = value.compiled
            elif isinstance(owner, TensorValue) and attribute == "requires_grad":
                flag = value.value if isinstance(value, ConstValue) else None
                self.set_flags(state, owner, evolved(
                    owner, requires_grad=Tri.MAYBE if flag is None else Tri.of(bool(flag))))
            elif isinstance(owner, (ArgumentValue, LostValue)) or owner is UNKNOWN:
                self.hand_over([value])  # `trainer.h = h`: kept by an object the analysis does not know
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value, state)
            kinds = [self.eval_slice(element, state) for element in target.slice]
            base = self.keyed(base, kinds, state)
            if isinstance(base, DictValue) and not base.complete or isinstance(base, LostValue) or base is UNKNOWN \
                    or isinstance(base, ArgumentValue) and not isinstance(value, TensorValue):
                self.hand_over([value])  # `cache["h"] = h`: a container not known whole (an argument's) may keep it
            if isinstance(base, (SequenceValue, DictValue)):
                self.store_item(base, _single_index(kinds), value, state)
                return
            if not isinstance(base, (ArgumentValue, TensorValue)):
                return
            if isinstance(base, ArgumentValue):
                base = self.promote(base, state)
            if isinstance(base, TensorValue):
                name = dotted_name(target.value)
                self.mutate(base, target, target.value, f"`{name}[...] = …`" if name else "an index assignment", state)
                written = self.requires_grad_of(value) & state.grad_enabled
                history = value.history if isinstance(value, TensorValue) else frozenset()
                if written is not Tri.NO and (base.requires_grad is not Tri.YES or not history <= base.history):
                    self.rebind(state, base, evolved(  # `copy_` records a grad_fn: the value joins the graph
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
        elif not isinstance(value, SequenceValue) and (known := self.elements(value)) is not None:
            value = SequenceValue(tuple(known))
        if not isinstance(value, SequenceValue):
            return [UNKNOWN] * len(targets)
        if value.repeated is not None:
            rest = SequenceValue(repeated=value.repeated, mutable=True)
            return [rest if i == star else value.repeated for i in range(len(targets))]
        if star is None:
            return [value.item(i) for i in range(len(targets))]
        after = len(targets) - star - 1
        if not value.known_length or len(value.items) < star + after:
            return [UNKNOWN] * len(targets)
        end = len(value.items) - after
        return [*value.items[:star], SequenceValue(value.items[star:end], mutable=True), *value.items[end:]]

    def rebind(self, state: State, old: Value, new: Value) -> None:
        """Replace every name bound to the object `old` by `new` (a changed flag of one tensor)."""
        for name, value in state.env.items():
            if value is old:
                state.env[name] = new
        for name, value in state.globals.items():
            if value is old and name not in state.env:  # the module's binding stays: this scope's changes
                state.env[name] = new

    def keyed(self, base: Value, kinds: list[Value | str], state: State) -> Value:
        """An argument indexed with a string (`cfg["lr"]`) is a dict, not a tensor, from now on."""
        if isinstance(base, ArgumentValue) and any(isinstance(k, ConstValue) and isinstance(k.value, str) for k in kinds):
            mapping = DictValue(complete=False)
            self.rebind(state, base, mapping)
            return mapping
        return base

    def set_flags(self, state: State, old: TensorValue, new: TensorValue) -> None:
        """`old`'s flags (requires_grad, leaf) are now `new`'s, for every holder of the tensor: the
        names of this scope and the modules whose parameter it is."""
        self.shared_changed = True
        self.touched.append(old.version_counter)
        self.rebind(state, old, new)
        roots = [v for v in (*state.env.values(), *state.globals.values()) if isinstance(v, ModuleValue)]
        for module in {id(m): m for root in roots for m in root.tree()}.values():
            for holder in (module.parameters, module.named_children):
                for key, value in holder.items():
                    if value is old:
                        holder[key] = new  # type: ignore[assignment]

    def promote(self, value: ArgumentValue, state: State) -> TensorValue:
        """An argument used as a tensor from now on: one that may require grad (a finding that
        holds only if it does is a warning; a caller that shows it does makes it an error)."""
        function = self.analysing
        if function is not None and function not in self.evidence:
            self.evidence[function] = grad_evidence(function)
        requires_grad = Tri.MAYBE if function is None or self.evidence[function] else Tri.NO
        tensor = TensorValue(new_version_counter(), requires_grad, False, Origin(f"the argument `{value.name}`"),
                             from_argument=True)
        self.rebind(state, value, tensor)
        return tensor

    def unbind(self, tensor: TensorValue, node: cst.CSTNode, state: State) -> SequenceValue:
        """`a, b = x` and `for row in x` call `unbind`: every element is a multi-output view."""
        view = evolved(tensor.fresh_view(Origin("an element of an unbound tensor", node), grad_enabled=state.grad_enabled),
                       multi_output_view="Unbind", later_view=None)
        return SequenceValue(repeated=view)

    # ---- expressions --------------------------------------------------------------------

    def eval(self, node: cst.BaseExpression, state: State) -> Value:
        handler = self._expression_handlers.get(type(node))
        if handler is None:
            for child in node.children:
                if isinstance(child, cst.BaseExpression) and not isinstance(child, (cst.Lambda,)):
                    self.eval(child, state)
            return UNKNOWN
        return handler(self, node, state)

    def _name(self, node: cst.Name, state: State) -> Value:
        name = node.value
        value = state.lookup(name)
        if value is not None:
            self.see(node, value, state)
            return value
        if name in self.definitions.globals:
            return self.definitions.globals[name]
        if name in ("True", "False", "None"):
            return ConstValue({"True": True, "False": False, "None": None}[name])
        if name in BUILTINS:
            return BuiltinRef(name)
        if self.definitions.star_imports and self.project is not None and self.definitions.path is not None:
            found = self.project.star_imported(self.definitions.path, self.definitions.star_imports, name)
            if found is not None:
                return ImportRef(found)
        return UNKNOWN

    def _number(self, node: cst.Integer | cst.Float | cst.Imaginary, state: State) -> Value:
        return ConstValue(_literal(node.value, 0))

    def _string(self, node: cst.BaseExpression, state: State) -> Value:
        if isinstance(node, cst.FormattedString):
            parts: list[str | None] = []
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    parts.append(part.value)
                    continue
                value = self.eval(part.expression, state)
                known = isinstance(value, ConstValue) and part.format_spec is None and part.conversion is None
                parts.append(str(value.value) if known else None)
            return ConstValue("".join(parts)) if None not in parts else StringPattern(tuple(parts))
        if isinstance(node, cst.SimpleString):
            literal = _literal(node.value, None)
            return ConstValue(literal) if isinstance(literal, str) else UNKNOWN
        return UNKNOWN  # a concatenation

    def _sequence(self, node: cst.Tuple | cst.List, state: State) -> Value:
        items: list[Value] = []
        starred = False
        for element in node.elements:
            value = self.eval(element.value, state)
            if isinstance(element, cst.StarredElement):
                if isinstance(value, SequenceValue) and value.repeated is None:
                    items.extend(value.items)
                else:
                    starred = True
            else:
                items.append(value)
        return UNKNOWN if starred else SequenceValue(tuple(items), mutable=isinstance(node, cst.List))

    def _attribute(self, node: cst.Attribute, state: State) -> Value:
        chain = [node]  # `a.b.c.d`, evaluated from `a` out without recursing once per link
        while isinstance(chain[-1].value, cst.Attribute):
            chain.append(chain[-1].value)
        value = self.eval(chain[-1].value, state)
        for link in reversed(chain):
            value = self.attribute_of(value, link.attr.value, link, state)
        return value

    def attribute_of(self, owner: Value, attribute: str, node: cst.CSTNode, state: State) -> Value:
        """`owner.attribute` (also `getattr(owner, "attribute")`)."""
        if isinstance(owner, ImportRef):
            return ImportRef(f"{owner.qualname}.{attribute}")
        if isinstance(owner, ModuleValue):
            found = self.module_attribute(owner, attribute, node)
            if isinstance(found, FunctionRef) and found.bound_self is owner and isinstance(found.node, cst.FunctionDef) \
                    and any(decorated_as(found.node, kind) for kind in _PROPERTIES):
                return self.call_user_function(found.node, found.definitions, owner, [], {}, node, state)
            return found
        if isinstance(owner, SequenceValue) and owner.repeated is None and attribute in _NAMED_RESULTS:
            return owner.item(_NAMED_RESULTS[attribute])  # `x.max(dim=1).values`
        if isinstance(owner, ArgumentValue) and attribute in ("data", "T", "mT", "grad"):
            owner = self.promote(owner, state)
        if isinstance(owner, TensorValue):
            return self.tensor_attribute(owner, attribute, node, state)
        if isinstance(owner, DistributionValue) and attribute in surface.DISTRIBUTION_TENSORS:
            return self.distribution_method(owner, attribute, [], node, state)
        if isinstance(owner, FunctionRef) and isinstance(owner.node, cst.ClassDef):
            return self.class_member(owner, attribute)
        return UNKNOWN

    def class_member(self, owner: FunctionRef, attribute: str) -> Value:
        """`Class.attribute` for a class of the project: a function of its body, called with every
        argument given (`Capsule.squash(s)`, `Base.forward(self, x)`) but a classmethod's first (the
        class's template instance stands for the class), or a class attribute."""
        if owner.name not in owner.definitions.classes:
            return UNKNOWN
        if attribute == "apply" and is_autograd_function(owner):
            return FunctionApply(owner)
        found = owner.definitions.method(owner.name, attribute)
        if found is not None:  # a classmethod's `cls` is a copy: templates never change once built
            template = owner.definitions.classes[owner.name][1]
            return FunctionRef(attribute, found[0], found[1], bound_self=self.instance_copy(template)
                               if decorated_as(found[0], "classmethod") else None)
        shared = owner.definitions.class_attribute(owner.name, attribute)
        return shared if shared is not None else UNKNOWN

    def _subscript(self, node: cst.Subscript, state: State) -> Value:
        base = self.eval(node.value, state)
        if isinstance(base, ImportRef) and not is_torch_name(base.qualname):
            base = self.resolve_import(base)  # `ACT2FN["gelu"]`
        kinds = [self.eval_slice(element, state) for element in node.slice]
        base = self.keyed(base, kinds, state)
        if isinstance(base, SequenceValue) and base.repeated is None and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Slice) \
                and (bounds := _constant_slice(node.slice[0].slice)) is not None:
            return SequenceValue(base.items[bounds], mutable=base.mutable)  # `list(model.children())[:-2]`
        if isinstance(base, (SequenceValue, DictValue)):
            if isinstance(base, SequenceValue) and len(kinds) == 1 and kinds[0] == "basic":
                return SequenceValue(repeated=self.join_elements(base.items, state)) if base.repeated is None \
                    else base  # a slice of the list
            return self.subscript_of(base, _single_index(kinds), state)
        if isinstance(base, ModuleValue) and base.user_class is not None and base.definitions is not None \
                and len(kinds) == 1 and not isinstance(kinds[0], str) \
                and (getitem := base.definitions.method(base.user_class, "__getitem__")) is not None:
            return self.call_user_function(getitem[0], getitem[1], base, [kinds[0]], {}, node, state)
        if isinstance(base, ModuleValue) and base.mapping is not None and len(kinds) == 1 \
                and not isinstance(kinds[0], str):
            return self.subscript_of(base.mapping, kinds[0], state)
        if isinstance(base, ModuleValue) and base.user_class is None and base.children is not None \
                and base.children_exact and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice) \
                and (bounds := _constant_slice(node.slice[0].slice)) is not None:
            # `self.layers[:-1]`, `self.features[:4]`: a container of the same kind
            return ModuleValue(base.class_name, node, children=base.children[bounds], training=base.training)
        if isinstance(base, ModuleValue):
            index = kinds[0] if len(kinds) == 1 else None
            if base.children is not None and isinstance(index, ConstValue) and isinstance(index.value, int):
                if -len(base.children) <= index.value < len(base.children):
                    return base.children[index.value]
            if isinstance(index, ConstValue) and isinstance(index.value, str) and index.value in base.named_children:
                return base.named_children[index.value]
            if base.children and not isinstance(index, ConstValue):
                return self.join_elements(base.children, state)
            return UNKNOWN
        if isinstance(base, ArgumentValue):
            base = self.promote(base, state)
        if not isinstance(base, TensorValue):
            return UNKNOWN
        basic = all(k == "basic" or isinstance(k, IntValue) or (isinstance(k, ConstValue) and isinstance(k.value, int))
                    for k in kinds)
        # an index the analysis lost, or an element of a tensor (a 0-d tensor indexes as an int does, a row
        # as a tensor): a view or a copy
        either = any(k is UNKNOWN or isinstance(k, (ArgumentValue, LostValue))
                     or (isinstance(k, TensorValue) and k.multi_output_view == "Unbind") for k in kinds)
        advanced = any(isinstance(k, (TensorValue, SequenceValue)) for k in kinds)
        if either and not any(isinstance(k, SequenceValue) for k in kinds):
            return base.fresh_view(Origin(UNKNOWN_INDEX_VIEW, node), certain=False,
                                   grad_enabled=state.grad_enabled)
        if basic:
            selects = len(kinds) == 1 and kinds[0] != "basic"  # `x[0]`; other indexing's last node is not known
            return base.fresh_view(Origin("an indexed view", node), grad_enabled=state.grad_enabled,
                                   node="Select" if selects else None)
        if advanced:
            return self.fresh_result(base.requires_grad & state.grad_enabled, Origin("an indexed copy", node), base.history)
        return self.fresh_result(base.requires_grad & state.grad_enabled, Origin("an indexed tensor", node), base.history)

    def eval_slice(self, element: cst.SubscriptElement, state: State) -> Value | str:
        inner = element.slice
        if isinstance(inner, cst.Slice):
            for part in (inner.lower, inner.upper, inner.step):
                if part is not None:
                    self.eval(part, state)
            return "basic"
        value = inner.value
        if isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None"):
            return "basic"
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer) \
                and isinstance(value.operator, cst.Minus):
            literal = _literal(value.expression.value, None)
            return ConstValue(-literal) if isinstance(literal, int) else UNKNOWN
        return self.eval(value, state)

    def _binary(self, node: cst.BinaryOperation, state: State) -> Value:
        chain = [node]  # `a + b + c + ...` nests to the left: evaluated from `a` on, without recursing per term
        while isinstance(chain[-1].left, cst.BinaryOperation):
            chain.append(chain[-1].left)
        left = self.eval(chain[-1].left, state)
        for operation in reversed(chain):
            left = self._binary_operation(type(operation.operator).__name__, operation, left,
                                          self.eval(operation.right, state), state)
        return left

    def _binary_operation(self, operator: str, node: cst.BinaryOperation | cst.AugAssign, left: Value, right: Value,
                          state: State) -> Value:
        """`left <operator> right` (`operator`: libcst's name of a binary operator, `Add`)."""
        aten = surface.BINARY.get(operator)
        listed = _list_arithmetic(operator, left, right)
        if listed is not None:
            return listed
        integer = self.int_arithmetic(left, right, _INT_OPERATORS.get(operator))
        if integer is not None:
            return integer
        if isinstance(left, SequenceValue) and isinstance(right, SequenceValue) and operator == "Add" \
                and left.repeated is None and right.repeated is None:  # `list(a.parameters()) + list(b.parameters())`
            return SequenceValue(left.items + right.items, mutable=left.mutable)
        if aten is None:
            return UNKNOWN
        if isinstance(left, TensorValue) or isinstance(right, TensorValue):
            if isinstance(left, ArgumentValue):
                left = self.promote(left, state)
            if isinstance(right, ArgumentValue):
                right = self.promote(right, state)
            if isinstance(left, TensorValue):
                return self.apply_aten(aten, [left, right], {}, node, state, None)
            reflected = {"add": "add", "mul": "mul"}.get(aten)
            if reflected is not None:
                return self.apply_aten(reflected, [right, left], {}, node, state, None)
            return self.fresh_result(right.requires_grad & state.grad_enabled, Origin(f"the result of `{aten}`", node),
                                     right.history)
        return UNKNOWN

    def _comparison(self, node: cst.Comparison, state: State) -> Value:
        """`x is None`, `act == "relu"`, `"k" in d`: a known bool where the values decide it."""
        left = self.eval(node.left, state)
        outcome: bool | None = True
        default_of = left.default_of if isinstance(left, ConstValue) else None
        for target in node.comparisons:
            right = self.eval(target.comparator, state)
            decided = _compare(type(target.operator).__name__, left, right) if outcome is not None else None
            outcome = None if decided is None else (outcome and decided)
            left = right
            default_of = default_of or (right.default_of if isinstance(right, ConstValue) else None)
        return ConstValue(outcome, default_of) if outcome is not None else UNKNOWN

    def _boolean(self, node: cst.BooleanOperation, state: State) -> Value:
        left = self.eval(node.left, state)
        decided = truth(left)
        if decided is not None:  # `x or default`: the operand Python returns; the right side runs only if needed
            return left if decided is isinstance(node.operator, cst.Or) else self.eval(node.right, state)
        right = self.eval(node.right, state)
        known = [v.value if isinstance(v, ConstValue) and isinstance(v.value, bool) else None for v in (left, right)]
        if isinstance(node.operator, cst.And):
            if False in known:
                return ConstValue(False)
            return ConstValue(True) if known == [True, True] else UNKNOWN
        if True in known:
            return ConstValue(True)
        return ConstValue(False) if known == [False, False] else UNKNOWN

    def _unary(self, node: cst.UnaryOperation, state: State) -> Value:
        operand = self.eval(node.expression, state)
        if isinstance(operand, TensorValue):
            return self.fresh_result(operand.requires_grad & state.grad_enabled, Origin("a negation", node),
                                     operand.history)
        if isinstance(operand, ConstValue) and isinstance(operand.value, (int, float)) and isinstance(node.operator, cst.Minus):
            return ConstValue(-operand.value)
        if isinstance(node.operator, cst.Not) and isinstance(operand, ConstValue):
            return ConstValue(not operand.value, operand.default_of)
        return UNKNOWN

    def _named_expr(self, node: cst.NamedExpr, state: State) -> Value:
        value = self.eval(node.value, state)
        self.bind(node.target, value, state, node.value)
        return value

    def _yield(self, node: cst.Yield, state: State) -> Value:
        """`yield value` (`yield from iterable`: each of its elements): an element of the iteration
        running the generator, if one does; what the generator is sent back is not known."""
        if isinstance(node.value, cst.From):
            value = self.iterate(self.eval(node.value.item, state), node, state)
        else:
            value = self.eval(node.value, state) if node.value is not None else ConstValue(None)
        self.yielded(node, value, state)
        return UNKNOWN

    def _lambda(self, node: cst.Lambda, state: State) -> Value:
        """`lambda x: ...`: a function like a `def` returning its expression, seeing the names around it."""
        definitions = self.call_definitions[-1] if self.call_stack else self.definitions
        inside = bool(self.call_stack) or self.analysing is not None
        return FunctionRef("<lambda>", self.syntax_fact(node, _lambda_function), definitions,
                           closure=state.env if inside else None)

    def _if_exp(self, node: cst.IfExp, state: State) -> Value:
        test = self.eval(node.test, state)
        if isinstance(test, ConstValue) and isinstance(test.value, bool):
            return self.eval(node.body if test.value else node.orelse, state)
        body, orelse = self.eval(node.body, state), self.eval(node.orelse, state)
        if isinstance(body, TensorValue) and isinstance(orelse, TensorValue) and body.version_counter != orelse.version_counter:
            return state.merge(body, orelse)
        return join_values(body, orelse)

    def _call(self, node: cst.Call, state: State) -> Value:
        self.budget.step()
        func = node.func
        receiver: Value | None = None
        if isinstance(func, cst.Attribute):
            receiver = self.eval(func.value, state)
            method = func.attr.value
            if isinstance(receiver, ImportRef):
                callee: Value = ImportRef(f"{receiver.qualname}.{method}")
            else:
                callee = UNKNOWN
        elif isinstance(func, cst.Name) and func.value == "super" and state.lookup("super") is None:
            return self.super_of(state)
        else:
            method = None
            callee = self.eval(func, state)
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        for arg in node.args:
            value = self.eval(arg.value, state)
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
            callee, method = self.class_member(receiver, method), None
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
            return self.call_builtin(callee.name, args, kwargs, node, state)
        if isinstance(callee, ImportRef) and not is_torch_name(callee.qualname) and not (self.library and not self.call_stack):
            callee = self.function_apply(callee) or callee  # `Fn.apply(x)` for `Fn` of another file
        if isinstance(callee, FunctionApply):
            return self.apply_function(callee, args, kwargs, node, state)
        if isinstance(callee, Compiler):  # `torch._dynamo.optimize("inductor")(fn)`
            return compiled(args[0], callee.backend) if args else UNKNOWN
        if isinstance(callee, FunctionRef) and callee.compiled is not None:
            with self.compiling(callee.compiled, node):
                return self.call_value(evolved(callee, compiled=None), args, kwargs, node, state)
        name = qualname_of(callee)
        if name == "functools.partial":
            return _partial(args, kwargs)
        if name in ("copy.deepcopy", "copy.copy") and args:
            return self.copy_object(args[0])
        if name == "itertools.repeat" and len(args) == 2 and isinstance(args[1], ConstValue) \
                and isinstance(args[1].value, int) and 0 <= args[1].value <= MAX_UNROLLED_ELEMENTS:
            return SequenceValue((args[0],) * args[1].value)  # `tuple(repeat(block, 4))`
        if name == "collections.OrderedDict":
            return self.call_builtin("dict", args, kwargs, node, state)
        if name is not None and not is_torch_name(name):
            if self.library and not self.call_stack:
                return UNKNOWN  # a library's module-level call into another file (`get_logger(__name__)`)
            callee, name = self.resolve_import(callee), None
        if name is not None:
            return self.call_qualified(normalise_torch_name(name), args, kwargs, node, state)
        if isinstance(callee, ModuleValue):
            return self.call_module(callee, args, kwargs, node, state, report_node=node)
        if isinstance(callee, FunctionRef) and isinstance(callee.node, cst.ClassDef):
            return self.instantiate(callee, args, kwargs, node, state)
        elif isinstance(callee, FunctionRef) and self.library and not self.call_stack:
            return UNKNOWN  # a library's module-level call of its functions (`default_cfgs = generate(...)`)
        elif isinstance(callee, FunctionRef) and callee.bound_self is None and \
                (entry := self.registered_entry(callee, args)) is not None:
            return self.summarised(entry.node, entry.definitions, [], kwargs, state, lambda: self.call_user_function(
                entry.node, entry.definitions, None, [], kwargs, node, state))
        elif isinstance(callee, FunctionRef) and callee.bound_self is None and callee.closure is not None:
            return self.call_user_function(callee.node, callee.definitions, None, args, kwargs, node, state,
                                           closure=callee.closure)
        elif isinstance(callee, FunctionRef) and callee.bound_self is None:
            return self.summarised(callee.node, callee.definitions, args, kwargs, state, lambda: self.call_user_function(
                callee.node, callee.definitions, None, args, kwargs, node, state))
        elif isinstance(callee, FunctionRef):
            return self.call_user_function(callee.node, callee.definitions, callee.bound_self, args, kwargs, node, state)
        self.hand_over([*args, *kwargs.values()])
        return lost_from([*args, *kwargs.values()]) if callee is UNKNOWN else UNKNOWN

    def call_either(self, callee: EitherCode, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                    state: State) -> Value:
        """A call of one of a few functions (`func(params)` for `func = _single if foreach else _multi`):
        each runs from the same state; the states and results after them are joined."""
        result: Value | None = None
        after: State | None = None
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
        if after is not None:
            self._replace(state, after)
        return UNKNOWN if result is None else result

    _expression_handlers: dict[type, Callable[[Interpreter, object, State], Value]] = {
        cst.Name: _name,
        cst.Integer: _number,
        cst.Float: _number,
        cst.Imaginary: _number,
        cst.SimpleString: _string,
        cst.ConcatenatedString: _string,
        cst.FormattedString: _string,
        cst.Tuple: _sequence,
        cst.List: _sequence,
        cst.Attribute: _attribute,
        cst.Subscript: _subscript,
        cst.BinaryOperation: _binary,
        cst.UnaryOperation: _unary,
        cst.Comparison: _comparison,
        cst.BooleanOperation: _boolean,
        cst.IfExp: _if_exp,
        cst.Lambda: _lambda,
        cst.Yield: _yield,
        cst.NamedExpr: _named_expr,
        cst.Call: _call,
        cst.ListComp: Containers.comprehension,
        cst.GeneratorExp: Containers.comprehension,
        cst.SetComp: Containers.comprehension,
        cst.DictComp: Containers.comprehension,
        cst.Dict: Containers.dict_display,
    }

    # ---- method calls -------------------------------------------------------------------

    def scaler_method(self, method: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                      state: State) -> Value:
        """`scaler.scale(loss)`: the loss times the scale (nothing saved that a change could meet);
        `scaler.step(optimizer, ...)`: `optimizer.step(...)`; the rest change no tensor of the graph."""
        if method == "scale" and args and isinstance(args[0], TensorValue):
            return self.apply_aten("mul", [args[0], ConstValue(65536.0)], {}, node, state, None, label="scaler.scale")
        if method == "scale" and args:
            return lost_from(args)
        if method == "step" and args and isinstance(args[0], OptimizerValue):
            return self.call_method(args[0], "step", args[1:], kwargs, node, state)
        return UNKNOWN

    def call_method(self, receiver: Value, method: str, args: list[Value], kwargs: dict[str, Value],
                    node: cst.Call, state: State) -> Value:
        if isinstance(receiver, ConstValue) and isinstance(receiver.value, str):
            if method in _STRING_METHODS and not kwargs and all(isinstance(a, ConstValue) for a in args):
                try:
                    return ConstValue(getattr(receiver.value, method)(*(a.value for a in args)))
                except (TypeError, ValueError):
                    return UNKNOWN
            return UNKNOWN
        if isinstance(receiver, SuperValue):
            return self.call_super(receiver, method, args, kwargs, node, state)
        if isinstance(receiver, FunctionCtx):
            return self.ctx_method(receiver, method, args)
        if isinstance(receiver, ModuleValue) and receiver.definitions is not None and receiver.user_class is not None:
            found = receiver.definitions.method(receiver.user_class, method)
            if found is not None:
                bound = None if is_static_method(found[0]) else receiver
                return self.call_user_function(found[0], found[1], bound, args, kwargs, node, state)
        if isinstance(receiver, ModuleValue):
            return self.call_module_method(receiver, method, args, kwargs, node, state)
        if isinstance(receiver, OptimizerValue):
            if method == "step":
                self.run_step_closure(args[0] if args else kwargs.get("closure"), node, state)
                for parameter in receiver.parameters:
                    saved_mode = state.grad_enabled
                    state.grad_enabled = Tri.NO
                    self.mutate(parameter, node, None, f"`{dotted_name(node.func)}()`", state)
                    state.grad_enabled = saved_mode
            return UNKNOWN
        if isinstance(receiver, GradScalerValue):
            return self.scaler_method(method, args, kwargs, node, state)
        if isinstance(receiver, DistributionValue):
            return self.distribution_method(receiver, method, args, node, state)
        if isinstance(receiver, (SequenceValue, DictValue)):
            return self.call_container_method(receiver, method, args, kwargs, state)
        if isinstance(receiver, ArgumentValue):
            if method in surface.NOT_TENSORS or not self.is_tensor_method(method) or any(
                    isinstance(a, ConstValue) and isinstance(a.value, str) for a in args):
                self.hand_over([*args, *kwargs.values()])  # `outputs.append(h)`: the caller's list keeps it
                return UNKNOWN  # `s.split("_")`, `d.pop("key")`: not a tensor
            receiver = self.promote(receiver, state)
        if isinstance(receiver, LostValue):
            if method == "backward":
                self.run_backward(receiver, kwargs, state)
            else:
                self.hand_over([*args, *kwargs.values()])
            return receiver  # `criterion(out, y).mean()`: as lost, from the same tensors
        if not isinstance(receiver, TensorValue):
            self.hand_over([*args, *kwargs.values()])
            if receiver is UNKNOWN:
                return lost_from([*args, *kwargs.values()])  # `self.loss_fn(out, y)`, `trainer.criterion(out, y)`
            return UNKNOWN
        return self.call_tensor_method(receiver, method, args, kwargs, node, state)


    def run_step_closure(self, closure: Value | None, node: cst.Call, state: State) -> None:
        """`optimizer.step(closure)` calls the closure first, with grad enabled (LBFGS needs it)."""
        if not isinstance(closure, FunctionRef) or not isinstance(closure.node, cst.FunctionDef):
            return
        saved_mode, state.grad_enabled = state.grad_enabled, Tri.YES
        self.call_user_function(closure.node, closure.definitions, closure.bound_self, [], {}, node, state,
                                closure=closure.closure)
        state.grad_enabled = saved_mode


_STRING_METHODS = frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace",
                             "removeprefix", "removesuffix"})
_ITERABLE_TYPES = frozenset({"collections.abc.Iterable", "typing.Iterable", "collections.abc.Sequence",
                             "typing.Sequence"})
_BUILTIN_TYPES = {"tuple": tuple, "list": list, "dict": dict, "str": str, "int": int, "float": float, "bool": bool}


def _list_arithmetic(operator: str, left: Value, right: Value) -> SequenceValue | None:
    """`[h] * (n - 1)` and `[a] + h` for lists and tuples whose items are known."""
    if operator == "Add" and isinstance(left, SequenceValue) and isinstance(right, SequenceValue) \
            and left.repeated is None and right.repeated is None:
        return SequenceValue(left.items + right.items, mutable=left.mutable,
                             known_length=left.known_length and right.known_length)
    if operator == "Multiply" and isinstance(right, SequenceValue):
        left, right = right, left
    if operator == "Multiply" and isinstance(left, SequenceValue) and left.repeated is None \
            and isinstance(right, ConstValue) and isinstance(right.value, int) and not isinstance(right.value, bool) \
            and 0 <= len(left.items) * right.value <= MAX_UNROLLED_ELEMENTS:
        return SequenceValue(left.items * right.value, mutable=left.mutable, known_length=left.known_length)
    return None


def _constant_slice(node: cst.Slice) -> slice | None:
    """`a[1:-2]`'s slice, when its bounds are integer literals (or absent)."""
    bounds: list[int | None] = []
    for part in (node.lower, node.upper, node.step):
        if part is None:
            bounds.append(None)
            continue
        negative = isinstance(part, cst.UnaryOperation) and isinstance(part.operator, cst.Minus)
        literal = part.expression if negative else part
        if not isinstance(literal, cst.Integer):
            return None
        value = _literal(literal.value, None)
        if not isinstance(value, int):
            return None
        bounds.append(-value if negative else value)
    return None if bounds[2] == 0 else slice(*bounds)


def _builtin_instance(value: Value, types: tuple[type, ...]) -> bool | None:
    """`isinstance(value, types)` for builtin types, where the value's kind is known."""
    if isinstance(value, ConstValue):
        return isinstance(value.value, types)
    if isinstance(value, SequenceValue):
        return (list if value.mutable else tuple) in types
    if isinstance(value, DictValue):
        return dict in types
    if isinstance(value, TensorValue) and value.maybe_other:
        return None
    if isinstance(value, (TensorValue, FunctionRef, ImportRef, BuiltinRef, PartialValue, GeneratorValue)) or (
            isinstance(value, ModuleValue) and value.mapping is None):
        return False
    return None


def _reason(error: OverBudget | RecursionError) -> str:
    """Why a unit stopped: its budget's "steps" or "time", or "depth" (nesting)."""
    return error.reason if isinstance(error, OverBudget) else "depth"


def _single_index(kinds: list[Value | str]) -> Value:
    """The index of `x[i]` (UNKNOWN for a slice or several indices)."""
    return kinds[0] if len(kinds) == 1 and not isinstance(kinds[0], str) else UNKNOWN


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


def _lambda_function(node: cst.Lambda) -> cst.FunctionDef:
    """A lambda as the one-line `def` it stands for, built around its own parameter and body nodes (so
    that positions inside it are the lambda's; its statement is the caller's, as a one-line def's)."""
    return cst.FunctionDef(cst.Name("lambda_"), node.params, cst.SimpleStatementSuite([cst.Return(node.body)]))


def _jumps(loop: cst.For) -> bool:
    """Whether a loop body has a `break` or `continue` of its own (then it is not run element by element)."""
    return any(type(node) in _JUMPS for node in descendants(loop.body, into=lambda n: type(n) not in _OWN_JUMPS))


_JUMPS = frozenset({cst.Break, cst.Continue})
_OWN_JUMPS = frozenset({cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.ClassDef})  # their jumps are their own


MAX_TWO_PASS_LOOPS = 3  # loops nested deeper (followed calls included) run their body once

_NAMED_RESULTS = {"values": 0, "indices": 1}  # the fields of torch's named-tuple results (max, topk, sort ...)
_OBJECTS = (TensorValue, ModuleValue, ImportRef, FunctionRef, SequenceValue, DictValue, OptimizerValue,
            DistributionValue, PartialValue, GeneratorValue)


def _compare(operator: str, left: Value, right: Value) -> bool | None:
    """The outcome of one comparison, when the abstract values decide it."""
    if operator in ("Is", "IsNot"):
        if isinstance(left, ConstValue) and isinstance(right, ConstValue):
            same = left.value is right.value if left.value is None or right.value is None else None
        elif (isinstance(left, ConstValue) and left.value is None and _object(right)) or (
                isinstance(right, ConstValue) and right.value is None and _object(left)):
            same = False
        else:
            same = None
        return None if same is None else (same if operator == "Is" else not same)
    if operator in ("Equal", "NotEqual") and isinstance(left, ConstValue) and isinstance(right, ConstValue):
        return (left.value == right.value) == (operator == "Equal")
    if operator in ("In", "NotIn") and isinstance(left, ConstValue) and isinstance(right, DictValue) and right.complete:
        return (left.value in right.entries) == (operator == "In")
    if operator in _ORDERINGS and all(isinstance(v, ConstValue) and isinstance(v.value, (int, float))
                                      and not isinstance(v.value, bool) for v in (left, right)):
        return _ORDERINGS[operator](left.value, right.value)  # `if block_dpr > 0.:`
    return None


def _object(value: Value) -> bool:
    """Whether `value` is an object, never None (a tensor that may be a number or None is not known to be)."""
    return isinstance(value, _OBJECTS) and not (isinstance(value, TensorValue) and value.maybe_other)


_ORDERINGS: dict[str, Callable[[float, float], bool]] = {
    "GreaterThan": lambda a, b: a > b, "GreaterThanEqual": lambda a, b: a >= b,
    "LessThan": lambda a, b: a < b, "LessThanEqual": lambda a, b: a <= b,
}


_INT_OPERATORS: dict[str, Callable[[int, int], int]] = {
    "Add": lambda a, b: a + b, "Subtract": lambda a, b: a - b, "Multiply": lambda a, b: a * b,
    "FloorDivide": lambda a, b: a // b, "Modulo": lambda a, b: a % b, "Divide": lambda a, b: a / b,
}


def interpret(module: cst.Module, path: str | None = None, project: ProjectIndex | None = None,
              previous: ScopeResult | None = None, replaced: Iterable[cst.CSTNode] = (),
              hovers: bool = False, source: Callable[[cst.CSTNode], str | None] | None = None,
              checkpoints_at: frozenset[int] = frozenset(), text: str | None = None) -> ScopeResult:
    """Interpret a parsed file; the result lists every in-place change with its context.

    With `previous` (the result for the file's previous version, whose statements `replaced` this
    version no longer has), what the change cannot have affected keeps its result: the
    module-level code's when only function and method bodies (not `__init__`) changed, and each
    function's whose code and the globals it reads are as they were (`Interpreter.run`);
    `source` gives a top-level statement's text, where the caller has it (libcst's code otherwise);
    `checkpoints_at`: the top-level statements to take a checkpoint before (`checkpoint.py`);
    `text`: what `module` was parsed from, when at hand (its words spare some walks of the tree).
    """
    if previous is not None and previous.cut_short:
        previous = None
    interpreter = Interpreter(module, path, project, previous, replaced, hovers, source, checkpoints_at, text)
    try:
        result = interpreter.run()
    except BaseException:  # stopped (a newer version): the definitions are the previous run's again
        if interpreter.adopted:
            previous.top_level.put_into(interpreter.definitions)  # type: ignore[union-attr]
        raise
    result.definitions = interpreter.definitions
    result.top_level = TopLevel.of(interpreter.definitions)
    if interpreter.budget.unread:
        result.cuts.append(Cut("imports", None, None, "time", tuple(sorted(interpreter.budget.unread))))
    return result


def read_top_level(module: cst.Module, path: str, project: ProjectIndex, text: str | None = None) -> Definitions:
    """What a file defines at its top level (imports, functions, classes and what their `__init__`
    builds), for the files that import it (`text`: what `module` was parsed from); its functions
    are not analysed."""
    interpreter = Interpreter(module, path, project, text=text)
    interpreter.library = project.is_library(path)
    interpreter.run(functions=False)
    return interpreter.definitions


def _replacements(old: cst.Module, new: cst.Module) -> dict[cst.CSTNode, cst.CSTNode] | None:
    """Old node -> new node, when `new` differs from `old` only in functions and methods (not
    `__init__`) keeping their names and places; None otherwise."""
    if len(old.body) != len(new.body):
        return None
    found: dict[cst.CSTNode, cst.CSTNode] = {}
    for before, after in zip(old.body, new.body):
        if before is after:
            continue
        if isinstance(before, cst.FunctionDef) and isinstance(after, cst.FunctionDef):
            if before.name.value != after.name.value or before.name.value == "__init__":
                return None
            found[before] = after
        elif isinstance(before, cst.ClassDef) and isinstance(after, cst.ClassDef) and \
                isinstance(before.body, cst.IndentedBlock) and isinstance(after.body, cst.IndentedBlock):
            if any(getattr(before, f) is not getattr(after, f) for f in ("name", "bases", "keywords", "decorators")):
                return None
            members = _replacements(cst.Module(body=before.body.body), cst.Module(body=after.body.body))
            if members is None:
                return None
            found.update(members)
            found[before] = after
        else:
            return None
    return found


@lru_cache(maxsize=4096)
def _literal(code: str, default: object) -> object:
    """The value of a number or string literal (libcst's `evaluated_value`, remembered: the same
    literals come back on every keystroke)."""
    try:
        return ast.literal_eval(code)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return default


def _compiled_forward_of(value: Value, module: ModuleValue) -> bool:
    """Whether `value` is `module`'s own `forward`, compiled (`torch.compile(module.forward)`): the module's
    calls then run compiled, as after `torch.compile(module)`."""
    return isinstance(value, FunctionRef) and value.compiled is not None and value.bound_self is module \
        and value.name == "forward"
