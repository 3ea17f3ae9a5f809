"""A function's frame: its parameters bound, its body run as an entry point or from a caller's class,
within its budget, and what its pending changes meet once it returns; the functions planned for
analysis after the module level, and the analyses that stopped short."""

from __future__ import annotations

from functools import cached_property
from typing import Sequence

import libcst as cst

from gradguard.analysis import budget
from gradguard.analysis.budget import OverBudget
from gradguard.analysis.callers import GRAD_MODE_WORDS, called_by_name, grad_off_functions
from gradguard.analysis.events import Cut, Deferred
from gradguard.analysis.shared import Part, Returns
from gradguard.analysis.state import State
from gradguard.analysis.user_calls import absent_without
from gradguard.analysis.values import (
    UNKNOWN,
    CompiledRegion,
    ConstValue,
    FunctionRef,
    ImportRef,
    ModuleValue,
    PartialValue,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    contents,
    evolved,
    reachable_saves,
)
from gradguard.source.walk import descendants


@absent_without("global", frozenset())
def _global_names(function: cst.FunctionDef) -> frozenset[str]:
    """The names `function` declares `global` (assigning them binds the module's)."""
    return frozenset(name.name.value for node in descendants(function.body) if isinstance(node, cst.Global)
                     for name in node.names)


class Frames(Part):
    """Analyses one function's body in a frame of its own and judges its pending changes at its exit."""

    def analyse_function(self, node: cst.FunctionDef, self_value: ModuleValue | None, is_forward: bool,
                         enclosing: State | None = None) -> None:
        """Interpret `node`'s body. It reads its own names, then those of the `enclosing` scope (a
        class's `__init__`, run where the class is defined): a function's, or the module's."""
        module_names = self.run.definitions.globals
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
            env[name] = self_value if (index == 0 and self_value is not None) else self.parts.user_calls.argument(param)
            if param.default is not None and env[name] is not self_value:
                default = self.parts.expressions.eval(param.default, defaults)
                if isinstance(default, ConstValue) and default.value is not None:
                    env[name] = evolved(default, default_of=name)  # what runs when no caller says otherwise
                elif isinstance(default, (ImportRef, FunctionRef, ModuleValue, PartialValue)):
                    env[name] = default
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                env[star.name.value] = UNKNOWN
        state = State(env, globals=module_names)
        if not self.run.call_stack and called_by_name(node.name.value) and node in self.grad_off:
            state.grad_enabled = Tri.NO  # its callers' grad mode
        for decorator in node.decorators:
            mode = self.parts.torch_calls.grad_mode_of(decorator.decorator, state)
            if mode is not None:
                state.grad_enabled = mode
        outer = (self.run.pending, self.run.in_module_method, self.run.analysing, self.run.followed, self.run.handed_over,
                 self.run.yielded_here, self.run.compiled)
        backend = self.parts.torch_calls.compiled_by(node.decorators, state)
        self.run.compiled = CompiledRegion(backend) if backend is not None else None
        self.run.pending, self.run.analysing, self.run.followed, self.run.freed = [], node, 0, {}
        self.run.handed_over, self.run.yielded_here = set(), []
        self.run.in_module_method = self_value is not None
        self.run.returns.append(Returns(tail=not self.run.call_stack))
        given = list(env.values())
        cuts, ended = len(self.run.result.cuts), False
        try:
            self.run_unit(node.body.body, state, node)
            ended = len(self.run.result.cuts) == cuts  # it ran to its end: what escapes it is known
        finally:
            returns = self.run.returns.pop()
            graph = self.graph_of(returns.values) if is_forward else frozenset()
            live = self.live_at_exit(node, returns, state, given) if ended and self.run.pending else None
            for change in self.run.pending:  # a backward pass follows a forward, through the known part of what it returns
                serials = {r.serial for r in (*change.saved, *change.storage_saved)}
                if is_forward and (graph is None or serials & graph):
                    change.backward_follows = Tri.YES
                elif live is None or serials & live or change.target.from_argument:
                    # (a tensor of the caller's: what the change wrote joins its graph, which may reach the save)
                    change.backward_follows = Tri.MAYBE
                else:
                    change.backward_follows, change.dies_in = Tri.NO, node
            (self.run.pending, self.run.in_module_method, self.run.analysing, self.run.followed, self.run.handed_over,
             self.run.yielded_here, self.run.compiled) = outer

    def live_at_exit(self, node: cst.FunctionDef, returns: Returns, end: State, given: list[Value]) -> frozenset[int]:
        """The saves a backward pass after the entry point `node` returns may still reach: those of
        what escapes it (what it returns or yields, what `self`, its arguments and the module's
        globals hold, the names it declares `global`, what it handed to calls not followed)."""
        declared = self.parts.user_calls.syntax_fact(node, _global_names)
        at_exit = returns.exit(end.copy())
        written = [at_exit.env.get(p.name.value) for p in (*node.params.posonly_params, *node.params.params,
                                                            *node.params.kwonly_params)]
        escaping = [*returns.values, *self.run.yielded_here, *given, *end.globals.values(),
                    *(v for v in written if isinstance(v, TensorValue) and v.from_argument),  # `out[...] = h`
                    *(at_exit.env[name] for name in declared if name in at_exit.env)]
        return reachable_saves(escaping) | self.run.handed_over

    @staticmethod
    def graph_of(values: list[Value]) -> frozenset[int] | None:
        """The saves known to be in the graph of the tensors among `values` (in tuples, lists and dicts
        too; a graph partly lost: its known part); None when none of them is a tensor."""
        tensors = [v for v in contents(SequenceValue(tuple(values)), dicts=True) if isinstance(v, TensorValue)]
        if not tensors:
            return None
        return frozenset().union(*(t.history for t in tensors))

    @cached_property
    def grad_off(self) -> frozenset[cst.FunctionDef]:
        """The functions the file refers to only where grad is off (`callers.py`), found when an
        entry point is first analysed (a file read for its definitions never needs them)."""
        if not any(self.run.definitions.mentions(word) for word in GRAD_MODE_WORDS):
            return frozenset()
        known = self.run.previous.references if self.run.previous is not None else None
        off, self.run.result.references = grad_off_functions(self.run.module, known)  # type: ignore[arg-type]
        return off

    def defer(self, *functions: Deferred) -> None:
        """Analyse these functions on their own after the module level (each once; a function
        defined inside a followed call is analysed with the function that defines it)."""
        for deferred in functions:
            if deferred.function not in self.run.planned and not self.run.call_stack:
                self.run.planned.add(deferred.function)
                self.run.deferred.append(deferred)

    def run_unit(self, body: Sequence[cst.BaseStatement], state: State, function: cst.FunctionDef | None) -> None:
        """Run a function's body (the module's, for None) within one function's budget; past it,
        the unit stops where it is, keeping what it found."""
        with self.run.budget.scope(budget.FUNCTION_STEPS) as depth:
            try:
                self.parts.statements.exec_block(body, state)
            except (OverBudget, RecursionError) as error:
                if isinstance(error, OverBudget) and error.depth != depth:
                    raise
                self.note_cut("function", function, function.name if function is not None else self.run.current_line,
                              _reason(error))

    def note_cut(self, scope: str, function: cst.FunctionDef | None, node: cst.CSTNode | None,
                 reason: str) -> None:
        """Remember, once per function and scope, that its analysis stopped short (`Cut.reason`)."""
        if not any(c.scope == scope and c.function is function for c in self.run.result.cuts):
            self.run.result.cuts.append(Cut(scope, function, node, reason))


def _reason(error: OverBudget | RecursionError) -> str:
    """Why a unit stopped: its budget's "steps" or "time", or "depth" (nesting)."""
    return error.reason if isinstance(error, OverBudget) else "depth"
