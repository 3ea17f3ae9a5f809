"""A function's frame: its parameters bound, its body run as an entry point or from a caller's class,
and what its pending changes meet once it returns."""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.callers import called_by_name
from gradguard.analysis.shared import InterpreterState, Returns
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


class Frames(InterpreterState):
    """Analyses one function's body in a frame of its own and judges its pending changes at its exit."""

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
        if not self.call_stack and called_by_name(node.name.value) and node in self.grad_off:
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
