"""An abstract interpreter over one file: module-level code, every function and every method.

It walks libcst statements in order, evaluates expressions to abstract values (`values.py`),
records which op saved which version counter (from the op table and the module facts), and
reports each in-place change with the live saves it meets (`events.py`). Branches are joined;
loops run to a fixed point (two passes: every value here is stable after one join).

Its parts: `state.py` (what holds at a program point), `statements.py` (each kind of statement),
`expressions.py` (each kind of expression), `bindings.py` (assignment targets), `calls.py` (calls
dispatched by callee and receiver), `frames.py` (a function's body in a frame of its own),
`saved_tensors.py` (saves, in-place changes, backward), `tensor_ops.py` (ATen ops and tensor
methods), `torch_calls.py` (the torch API by name), `module_calls.py` (`nn.Module`s),
`module_objects.py` (objects and their attributes), `custom_functions.py` (autograd Functions),
`containers.py` (lists, dicts, builtins) and `user_calls.py` (the project's own functions): each a
`Part` (`shared.py`) given the run's state and the others. This file makes them and runs them over
a file: the module level, then each function as an entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import libcst as cst

from gradguard.analysis import budget
from gradguard.analysis.bindings import Bindings
from gradguard.analysis.budget import OverBudget
from gradguard.analysis.calls import Calls
from gradguard.analysis.checkpoint import MAX_CHECKPOINTS, restore as checkpoint_restore, take as checkpoint_take
from gradguard.analysis.code_facts import code_facts
from gradguard.analysis.containers import Containers
from gradguard.analysis.custom_functions import CustomFunctions
from gradguard.analysis.events import Cut, Deferred, ScopeResult, Unit
from gradguard.analysis.expressions import Expressions
from gradguard.analysis.frames import Frames
from gradguard.analysis.module_calls import ModuleCalls
from gradguard.analysis.module_objects import ModuleObjects
from gradguard.analysis.names import dotted_name
from gradguard.analysis.output_capture import OutputCapture
from gradguard.analysis.pretrained_models import PretrainedModels
from gradguard.analysis.quiet import QuietEntries
from gradguard.analysis.reuse import Reuse, defined_in, first_changed
from gradguard.analysis.saved_tensors import SavedTensors
from gradguard.analysis.shared import InterpreterState, Parts
from gradguard.analysis.state import State
from gradguard.analysis.statements import Statements
from gradguard.analysis.tensor_ops import TensorOps
from gradguard.analysis.torch_calls import TorchCalls
from gradguard.analysis.user_calls import UserCalls
from gradguard.analysis.values import Definitions, FunctionRef, TopLevel, Tri, evolved

if TYPE_CHECKING:
    from gradguard.analysis.project import ProjectIndex

__all__ = ["Interpreter", "dotted_name", "interpret", "read_top_level"]


class Interpreter:
    """Interprets one parsed file with its parts and collects its in-place changes."""

    def __init__(self, module: cst.Module, path: str | None = None, project: ProjectIndex | None = None,
                 previous: ScopeResult | None = None, replaced: Iterable[cst.CSTNode] = (), hovers: bool = False,
                 source: Callable[[cst.CSTNode], str | None] | None = None,
                 checkpoints_at: frozenset[int] = frozenset(), text: str | None = None) -> None:
        replaced = list(replaced)
        run = self.run_state = InterpreterState(
            module, path, project, previous,
            frozenset(f for node in replaced for f in defined_in(node) if isinstance(f, cst.FunctionDef)), hovers)
        if source is not None:
            run.source_of = source
        run.definitions.text = text
        run.checkpoints_at = checkpoints_at
        # only bodies of functions and methods (not `__init__`) changed: the module level may stand
        run.bodies_only = all(isinstance(n, cst.FunctionDef) and n.name.value != "__init__" for n in replaced)
        self._quiet_entries: QuietEntries | None = None
        self._quiet: dict[cst.FunctionDef, Deferred] = {}  # the entry points found quiet, not interpreted
        self._unquiet: set[cst.FunctionDef] = set()  # quiet ones interpreted after all
        parts = self.parts = Parts()
        parts.statements, parts.expressions = Statements(run, parts), Expressions(run, parts)
        parts.bindings, parts.calls, parts.frames = Bindings(run, parts), Calls(run, parts), Frames(run, parts)
        parts.saved_tensors, parts.tensor_ops = SavedTensors(run, parts), TensorOps(run, parts)
        parts.torch_calls, parts.module_calls = TorchCalls(run, parts), ModuleCalls(run, parts)
        parts.module_objects, parts.custom_functions = ModuleObjects(run, parts), CustomFunctions(run, parts)
        parts.user_calls, parts.containers = UserCalls(run, parts), Containers(run, parts)
        parts.output_capture, parts.pretrained = OutputCapture(run, parts), PretrainedModels(run, parts)

    # ---- entry points -------------------------------------------------------------------

    def run(self, *, functions: bool = True) -> ScopeResult:
        """Interpret the module-level code, then (with `functions`) every function and method.

        With the `previous` version's result, whose statements `replaced` this one no longer has,
        what did not run into a replaced function stands: the module-level code's result (when
        only function bodies changed, see `_reuse_module_level`) and each function's (after an
        edit of the module-level code, only where the globals it reads are bound as before:
        `reuse.py`). Past the file's budget, the functions not analysed yet are left out (a `Cut`
        says which).
        """
        with budget.using(self.run_state.budget), self.run_state.budget.scope(budget.FILE_STEPS) as depth:
            try:
                self._module_level()
                units = self._reusable_units()
                while functions:
                    while self.run_state.deferred:
                        self._analyse_deferred(self.run_state.deferred.pop(0), units)
                    if not self._expose_quiet():
                        break
            except OverBudget as error:
                if error.depth != depth:
                    raise
                self._cut_file(error.reason)
            finally:  # the parts refer to each other: let go of them, and reference counting frees what they held
                vars(self.parts).clear()
        self.run_state.deferred = []
        self.run_state.result.cut_calls = bool(self.run_state.cut_calls)
        units = self.run_state.result.units.values()
        # a function whose standalone findings its calls stand for: followed, with every keyword known
        splatted = set(self.run_state.result.module_splatted).union(*(unit.splatted for unit in units))
        called = set(self.run_state.result.module_entered).union(*(unit.entered for unit in units)) - splatted
        self.run_state.result.changes = [c for c in self.run_state.result.changes if c.standalone_of not in called]
        for change in self.run_state.result.changes:
            change.called_with_unknown_keywords = change.standalone_of in splatted
        return self.run_state.result

    def _reusable_units(self) -> dict[cst.FunctionDef, Unit]:
        """The previous version's units that may stand: all of them but those that ran into a
        replaced function when the module level's result stood; else each one checked against
        what the module level built (`reuse.py`)."""
        previous = self.run_state.previous
        if previous is None or previous.definitions is None or previous.cut_calls or self.run_state.cut_calls or (
                self.run_state.module_reused and self.run_state.entered & self.run_state.replaced):
            return {}  # calls some analyses stopped following: what each reused result saw is not known
        if not self.run_state.module_reused:
            before = previous.top_level
            if before is None or before.star_imports != self.run_state.definitions.star_imports:
                return {}
            self.run_state.reuse = Reuse(before.globals, previous.body, self.run_state.definitions,
                                         self.run_state.result.facts, self.run_state.source_of)
        return previous.units

    def _module_level(self) -> None:
        previous = self.run_state.previous
        if previous is not None:
            self.run_state.result.facts = previous.facts.kept_for(self.run_state.module.body)
        self.run_state.result.body = tuple(self.run_state.module.body)
        self.run_state.module_reused = previous is not None and self.run_state.bodies_only and self._reuse_module_level(previous)
        if self.run_state.module_reused:
            self.run_state.result.checkpoints = previous.checkpoints  # its statements stand; the next version may start there
        else:
            self.run_state.definitions.start(self.run_state.module)
            state = State(self.run_state.definitions.globals)
            try:
                self.parts.frames.run_unit(self._module_statements(state), state, None)
            finally:
                self.run_state.definitions.globals = state.env
            self.run_state.result.module_reads = dict(self.run_state.budget.charged)  # what the module level used: it runs first
            self.run_state.definitions.unread = frozenset(self.run_state.budget.unread)
            for change in self.run_state.pending:
                change.backward_follows = Tri.NO
            self.run_state.pending = []
        self.run_state.result.module_changes = list(self.run_state.result.changes)
        self.run_state.result.module_entered = frozenset(self.run_state.entered)
        self.run_state.result.module_splatted = frozenset(self.run_state.splatted)
        self.run_state.result.module_seen = self.run_state.seen
        self.run_state.result.module_next_serial = self.run_state.next_serial
        if self.run_state.module_reused:
            self.run_state.result.module_reads = previous.module_reads  # type: ignore[union-attr]
            self.run_state.budget.charge_again(self.run_state.result.module_reads, self.run_state.definitions.unread)
        self.run_state.result.module_cuts = list(self.run_state.result.cuts)
        self.run_state.result.plan = list(self.run_state.deferred)

    def _module_statements(self, state: State) -> Iterator[cst.BaseStatement]:
        """The top-level statements to run (`checkpoint.py`): after the longest of the previous
        version's checkpoints that applies (the state restored as it was there), else all; a
        checkpoint is taken before the first one the previous version did not have."""
        body, previous = self.run_state.module.body, self.run_state.previous
        steps = self.run_state.budget.steps
        start, at = 0, None
        if previous is not None:
            kept = [c for c in previous.checkpoints if c.applies_to(body, self.run_state.hovers)]
            if kept:
                checkpoint_restore(kept[-1], self.run_state, state)
                start = len(kept[-1].prefix)
            self.run_state.result.checkpoints = tuple(kept)
            at = first_changed(body, previous.body)
        for index in range(start, len(body)):
            if index > start and (index == at or index in self.run_state.checkpoints_at):
                taken = checkpoint_take(self.run_state, state, index, self.run_state.budget.steps - steps)
                if taken is not None:  # typing moves on, or back to a statement above: a few are kept
                    self.run_state.result.checkpoints = (*self.run_state.result.checkpoints, taken)[-MAX_CHECKPOINTS:]
            yield body[index]

    def _analyse_deferred(self, deferred: Deferred, units: dict[cst.FunctionDef, Unit]) -> None:
        run = self.run_state
        unit = units.get(deferred.function)
        grad_off = deferred.function in self.parts.frames.grad_off
        if unit is not None and unit.quiet_over is None and unit.grad_off == grad_off and \
                not unit.entered & run.replaced and not unit.shares and \
                run.budget.fits(unit.steps) and (run.reuse is None or run.reuse.holds(deferred.function, unit)):
            run.result.changes.extend(unit.changes)
            run.result.cuts.extend(unit.cuts)
            self.parts.frames.defer(*unit.nested)
            run.budget.steps += unit.steps  # as if it ran: the file's budget cuts where a run from the top would
        elif (over := self._quiet_over(deferred)) is not None:
            unit = Unit([], frozenset(), grad_off=grad_off, quiet_over=over)
            self._quiet[deferred.function] = deferred
        else:
            start, cuts, queued = len(run.result.changes), len(run.result.cuts), len(run.deferred)
            steps, stopped = run.budget.steps, len(run.cut_calls)
            run.entered, run.splatted, run.seen, run.shared_changed = set(), set(), {}, False
            self.parts.frames.analyse_function(deferred.function,
                                               self_value=self.parts.module_objects.instance_copy(deferred.template),
                                               is_forward=deferred.is_forward)
            unit = Unit(run.result.changes[start:], frozenset(run.entered), tuple(run.deferred[queued:]), run.seen,
                        tuple(run.result.cuts[cuts:]), run.shared_changed or len(run.cut_calls) > stopped,
                        run.budget.steps - steps, grad_off, frozenset(run.splatted))
            if run.shared_changed and self._quiet_entries is not None:
                self._quiet_entries.forget_values()  # objects of the module level changed
        run.result.units[deferred.function] = unit

    def _quiet_over(self, deferred: Deferred) -> frozenset[cst.FunctionDef] | None:
        """The functions of this file `deferred`'s analysis may run, when no code it may run could
        change a tensor (`quiet.py`): its analysis would find nothing. None otherwise, and for what
        must be interpreted anyway: an editor's hovers show what each name holds, a nested
        function sees its enclosing one's names, and one the file's findings need (`_expose_quiet`)."""
        run = self.run_state
        function = deferred.function
        if run.hovers or function in self._unquiet:
            return None
        if self._quiet_entries is None:
            user_calls = self.parts.user_calls
            self._quiet_entries = QuietEntries(
                run.definitions, user_calls.resolve_import,
                lambda node, definitions: user_calls.syntax_fact(node, code_facts, definitions),
                run.project.without_reading if run.project is not None else None, run.wrappers)
        return self._quiet_entries.over(function, deferred.template)

    def _expose_quiet(self) -> bool:
        """Queue the quiet entry points that may run a function of this file whose own analysis found
        changes no analysed call stands for: interpreted, their calls would (a function's standalone
        findings give way to those of the calls that run it, `run`). Whether any was queued."""
        result = self.run_state.result
        called = set(result.module_entered).union(*(unit.entered for unit in result.units.values()))
        exposed = {change.standalone_of for change in result.changes} - called
        again = [deferred for function, deferred in self._quiet.items()
                 if result.units[function].quiet_over & exposed]  # type: ignore[operator]
        for deferred in again:
            del self._quiet[deferred.function]
            self._unquiet.add(deferred.function)
        self.run_state.deferred.extend(again)
        return bool(again)

    def _cut_file(self, reason: str) -> None:
        """The file's budget ran out: what was found stands, the functions left are not analysed
        (the next version of an open document is then analysed afresh: `cut_short`)."""
        skipped = tuple(d.function.name.value for d in self.run_state.deferred)
        self.run_state.result.cuts.append(Cut("file", None, None, reason, skipped))
        self.run_state.result.cut_short = True
        self.run_state.pending = []

    def _reuse_module_level(self, previous: ScopeResult) -> bool:
        """Take the previous version's module-level result when the two versions differ only in
        the bodies of functions and methods (not `__init__`) that the module-level code did not
        run; the definitions are updated to the new functions."""
        definitions = previous.definitions
        if definitions is None or definitions.module is None or previous.module_entered & self.run_state.replaced or any(
                unit.shares for unit in previous.units.values()):  # its modules no longer as the module level left them
            return False
        new_for = _replacements(definitions.module, self.run_state.module)
        if new_for is None:
            return False
        # new containers: the previous run's `TopLevel` keeps its own (a stopped run puts them back)
        definitions.globals = {name: evolved(value, node=new_for[value.node]) if isinstance(value, FunctionRef)
                               and value.definitions is definitions and value.node in new_for else value
                               for name, value in definitions.globals.items()}
        definitions.classes = {name: (new_for.get(node, node), template)
                               for name, (node, template) in definitions.classes.items()}
        definitions.module = self.run_state.module
        self.run_state.definitions = definitions
        self.run_state.result.changes.extend(previous.module_changes)
        self.run_state.result.cuts.extend(previous.module_cuts)
        self.run_state.entered = set(previous.module_entered)
        self.run_state.splatted = set(previous.module_splatted)
        self.run_state.seen = previous.module_seen
        # no function's save takes the serial of a module-level one, which a global's history holds
        self.run_state.next_serial = self.run_state.result.module_next_serial = previous.module_next_serial
        self.parts.frames.defer(*(evolved(d, function=new_for[d.function]) if d.function in new_for else d
                                  for d in previous.plan))
        return True


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
        if interpreter.run_state.adopted:
            previous.top_level.put_into(interpreter.run_state.definitions)  # type: ignore[union-attr]
        raise
    result.definitions = interpreter.run_state.definitions
    result.top_level = TopLevel.of(interpreter.run_state.definitions)
    if interpreter.run_state.budget.unread:
        result.cuts.append(Cut("imports", None, None, "time", tuple(sorted(interpreter.run_state.budget.unread))))
    return result


def read_top_level(module: cst.Module, path: str, project: ProjectIndex, text: str | None = None) -> Definitions:
    """What a file defines at its top level (imports, functions, classes and what their `__init__`
    builds), for the files that import it (`text`: what `module` was parsed from); its functions
    are not analysed."""
    interpreter = Interpreter(module, path, project, text=text)
    interpreter.run_state.library = project.is_library(path)
    interpreter.run_state.templates = False
    interpreter.run(functions=False)
    return interpreter.run_state.definitions


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
