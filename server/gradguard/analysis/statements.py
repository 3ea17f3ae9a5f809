"""The transfer of each kind of statement: assignments, `return`, imports, `if` (and the branch a
parameter's default skips), loops to their fixed point, `try`, `with`, `def` and `class`."""

from __future__ import annotations

from typing import Callable, Iterable

import libcst as cst

from gradguard.analysis.bindings import single_index
from gradguard.analysis.containers import MAX_UNROLLED_ELEMENTS, MAX_UNROLLED_MODULES, an_object
from gradguard.analysis.events import Deferred
from gradguard.analysis.default_branches import run_assuming
from gradguard.analysis.match_statements import run_match
from gradguard.analysis.names import OPERATOR_SYMBOLS, decorator_heads, dotted_name, is_static_method
from gradguard.analysis.shared import LoopExits, Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    ConstValue,
    IntValue,
    DictValue,
    FunctionRef,
    HookHandle,
    ImportRef,
    ModuleValue,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    evolved,
    truth,
)
from gradguard.knowledge import surface
from gradguard.source.skeleton import LazyFunctionDef
from gradguard.source.walk import bound_names

_UNROLLED_PASSES = MAX_UNROLLED_ELEMENTS ** 2  # passes of nested unrolled loops (across calls) at most


class Statements(Part):
    """Runs statements on a `State`: one handler per kind of statement, in `_statement_handlers`."""

    def exec_block(self, body: Iterable[cst.BaseStatement | cst.BaseSmallStatement], state: State) -> None:
        step = self.run.budget.step
        for statement in body:
            if state.dead:
                return
            step()
            handler = self._statement_handlers.get(type(statement))
            if handler is not None:
                handler(self, statement, state)

    def _simple_line(self, node: cst.SimpleStatementLine, state: State) -> None:
        outer, self.run.current_line = self.run.current_line, node
        try:
            self.exec_block(node.body, state)
        except RecursionError:  # the line is skipped: what it binds is unknown from here on
            for statement in node.body:
                targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else \
                    [statement.target] if isinstance(statement, (cst.AnnAssign, cst.AugAssign)) else []
                for target in targets:
                    for name in bound_names(target):
                        state.env[name] = UNKNOWN
            where = self.run.call_nodes[0] if self.run.call_stack else node
            self.parts.frames.note_cut("statement", self.run.analysing, where, "depth")
        finally:
            self.run.current_line = outer

    def _expr(self, node: cst.Expr, state: State) -> None:
        self.parts.expressions.eval(node.value, state)

    def _assign(self, node: cst.Assign, state: State) -> None:
        value = self.parts.expressions.eval(node.value, state)
        for target in node.targets:
            self.parts.bindings.bind(target.target, value, state, node.value)

    def _ann_assign(self, node: cst.AnnAssign, state: State) -> None:
        if node.value is not None:
            self.parts.bindings.bind(node.target, self.parts.expressions.eval(node.value, state), state, node.value)

    def _aug_assign(self, node: cst.AugAssign, state: State) -> None:
        operator = type(node.operator).__name__
        right = self.parts.expressions.eval(node.value, state)
        inplace = surface.AUGMENTED_INPLACE.get(operator)
        target = node.target
        if inplace is None:  # `@=`: no in-place form, a rebinding
            left = self.parts.expressions.eval(target, state)
            product = self.parts.tensor_ops.apply_aten("matmul", [left, right], {}, node, state, "`@`")
            self.parts.bindings.bind(target, product, state, node)
            return
        verb = f"`{OPERATOR_SYMBOLS.get(operator.removesuffix('Assign'), '?')}=`"
        if isinstance(target, cst.Subscript):
            base = self.parts.expressions.eval(target.value, state)
            kinds = [self.parts.expressions.eval_slice(element, state) for element in target.slice]
            base = self.parts.bindings.keyed(base, kinds, state)
            if isinstance(base, (SequenceValue, DictValue)):  # `feats[i] += up`: the element changes in place
                element = self.parts.containers.subscript_of(base, single_index(kinds), state)
                if isinstance(element, TensorValue):
                    self.parts.tensor_ops.apply_aten(inplace, [element, right], {}, node, state, verb, target_node=target)
                return
            if isinstance(base, ArgumentValue):
                base = self.parts.bindings.promote(base, state)
            if isinstance(base, TensorValue):
                self.parts.bindings.write_items(base, target, node, right, verb, state)
            return
        left = self.parts.expressions.eval(target, state)
        if isinstance(left, ArgumentValue):
            left = self.parts.bindings.promote(left, state)
        if isinstance(left, TensorValue):
            self.parts.tensor_ops.apply_aten(inplace, [left, right], {}, node, state, verb, target_node=target)
        elif isinstance(left, SequenceValue) and operator == "AddAssign" and left.mutable:
            self.parts.containers.call_container_method(left, "extend", [right], {}, state)  # `layers += [...]` extends the list
        elif isinstance(left, SequenceValue) and isinstance(right, SequenceValue) and operator == "AddAssign":
            known = left.repeated is None and right.repeated is None
            self.parts.bindings.bind(target, SequenceValue(left.items + right.items) if known else UNKNOWN, state, node)
        elif not isinstance(left, (TensorValue, ModuleValue)):
            # no in-place form: `left = left + right` (`net_block_idx += 1`; `loss += t` from `loss = 0`: a
            # tensor in `t`'s graph, and in the unknown left's if the analysis lost it)
            result = self.parts.expressions._binary_operation(operator.removesuffix("Assign"), node, left, right, state)
            if left is UNKNOWN and isinstance(result, TensorValue):
                result = evolved(result, graph_known=False)
            if isinstance(target, cst.Attribute) and self.run.loop_depth and isinstance(result, ConstValue) \
                    and type(result.value) is int:
                # an object's counter stepped in a loop (`self.step += 1`): its attribute is not joined
                # across the loop's passes, and a later iteration's value is not known
                result = IntValue()
            self.parts.bindings.bind(target, result, state, node)

    def _return(self, node: cst.Return, state: State) -> None:
        if self.run.returns and self.run.returns[-1].tail:
            self.run.returns[-1].tail_call = node.value if not self.run.returns[-1].guarded else None
        value = self.parts.expressions.eval(node.value, state) if node.value is not None else ConstValue(None)
        if self.run.returns:
            self.run.returns[-1].add(value, state)
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
        here = self.run.current_file()  # a followed call's relative import is relative to its own file
        if isinstance(node.names, cst.ImportStar):
            if node.relative and self.run.project is not None and here is not None:
                origin = self.run.project.absolute(here, origin)
            self.run.definitions.star_imports.append(origin)
            return
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            bound = (dotted_name(alias.asname.name) or "") if alias.asname is not None else name
            qualname = f"{origin}{name}" if origin.endswith(".") else f"{origin}.{name}"
            if node.relative and self.run.project is not None and here is not None:
                qualname = self.run.project.absolute(here, qualname)
            state.env[bound] = ImportRef(qualname)

    def _if(self, node: cst.If, state: State) -> None:
        test = self.parts.user_calls.imported_constant(self.parts.expressions.eval(node.test, state))
        known = truth(test)
        if known is not None and isinstance(test, ConstValue) and test.default_of is not None and not self.run.call_stack:
            self._other_branch(node, known, test.default_of, state)
        then_state, else_state = state.copy(), state.copy()
        if known is None and (narrowed := _requires_grad_test(node.test)) is not None:
            _narrow(narrowed, then_state, else_state)
        if known is not False:
            self.exec_block(node.body.body, then_state)
        else:
            then_state.dead = True
        if known is True:
            else_state.dead = True
        elif isinstance(node.orelse, cst.If):
            self._if(node.orelse, else_state)
        elif isinstance(node.orelse, cst.Else):
            self.exec_block(node.orelse.body.body, else_state)
        state.become(then_state.join(else_state))

    def _other_branch(self, node: cst.If, known: bool, parameter: str, state: State) -> None:
        """The branch of `node` that the default of `parameter` skips (`run_assuming`)."""
        skipped = [] if known else node.body.body
        if known and isinstance(node.orelse, cst.Else):
            skipped = node.orelse.body.body
        elif known and isinstance(node.orelse, cst.If):
            skipped = [node.orelse]
        if skipped:
            run_assuming(self, skipped, parameter, state)

    def _loop(self, body: cst.BaseSuite, state: State, bind_target: Callable[[State], None] | None,
              orelse: cst.Else | None) -> None:
        entry = state.copy()
        current = state.copy()
        exits = LoopExits()
        self.run.loop_depth += 1
        self.run.loop_exits.append(exits)
        try:
            self._passes(body, entry, current, bind_target, exits)
        finally:
            self.run.loop_depth -= 1
            self.run.loop_exits.pop()
        state.become(current)
        if orelse is not None:
            self.exec_block(orelse.body.body, state)
        state.become(exits.after_loop(state))

    def _jump(self, node: cst.Continue | cst.Break, state: State) -> None:
        """`continue` / `break`: this path leaves the pass (to its end / past the loop) here."""
        if self.run.loop_exits:
            exits = self.run.loop_exits[-1]
            (exits.continued if isinstance(node, cst.Continue) else exits.broken).append(state.copy())
            state.dead = True

    def _passes(self, body: cst.BaseSuite, entry: State, current: State,
                bind_target: Callable[[State], None] | None, exits: LoopExits) -> None:
        """Run a loop's body to its fixed point in `current`: two passes (what one iteration
        leaves for the next, its saves as certain as they were: a loop repeats), one inside
        `MAX_TWO_PASS_LOOPS` loops (so nested loops cost 2**3 times their body at most, not
        2**depth; the second pass could only add findings)."""
        passes = 2 if self.run.loop_depth <= MAX_TWO_PASS_LOOPS else 1
        for index in range(passes):
            iteration = current.copy()
            iteration.dead = False
            if bind_target is not None:
                bind_target(iteration)
            self.exec_block(body.body, iteration)
            iteration = exits.end_of_pass(iteration)
            current.become(entry.join_repeated(iteration) if index + 1 < passes else entry.join(iteration))

    def _for(self, node: cst.For, state: State) -> None:
        iterable = self.parts.expressions.eval(node.iter, state)
        items = self.parts.containers.loop_items(iterable, node, state)
        objects = items is not None and bool(items) and len(items) <= MAX_UNROLLED_MODULES and all(map(an_object, items))
        if items is not None and (objects or (len(items) <= MAX_UNROLLED_ELEMENTS
                                              and self.run.unrolling * len(items) <= _UNROLLED_PASSES)):
            exits, outer = LoopExits(), self.run.unrolling
            self.run.unrolling *= max(len(items), 1)
            self.run.loop_exits.append(exits)
            try:
                for item in items:  # `for m in model.modules()`, `for w in (w1, w2)`: each element in turn
                    self.parts.bindings.bind(node.target, item, state, node.iter)
                    self.exec_block(node.body.body, state)
                    state.become(exits.end_of_pass(state))
                    if state.dead:  # every path returned or left the loop: the remaining elements do not run
                        break
            finally:
                self.run.unrolling = outer
                self.run.loop_exits.pop()
            if node.orelse is not None:
                self.exec_block(node.orelse.body.body, state)
            state.become(exits.after_loop(state))
            return

        def bind(iteration: State) -> None:
            element = self.parts.containers.iterate(iterable, node.iter, iteration)
            self.parts.bindings.bind(node.target, element, iteration, node.iter)

        self._loop(node.body, state, bind, node.orelse)

    def _while(self, node: cst.While, state: State) -> None:
        self.parts.expressions.eval(node.test, state)
        self._loop(node.body, state, None, node.orelse)

    def _try(self, node: cst.Try | cst.TryStar, state: State) -> None:
        frame = self.run.returns[-1] if self.run.returns else None
        guards = frame is not None and (bool(node.handlers) or node.finalbody is not None)
        if guards:
            frame.guarded += 1  # type: ignore[union-attr]
        exits, jumps = self.run.jumps_from_here()
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
        state.become(outcome)
        if node.finalbody is not None:
            for jumped in exits.since(jumps) if exits is not None else ():  # a `continue` or `break` runs it too
                self.exec_block(node.finalbody.body.body, jumped)
            was_dead = state.dead
            state.dead = False
            self.exec_block(node.finalbody.body.body, state)
            state.dead = state.dead or was_dead

    def _with(self, node: cst.With, state: State) -> None:
        saved_mode, autocasts = state.grad_enabled, (self.run.autocast, self.run.autocast_maybe)
        unchecked = self.run.unchecked_saves
        exits, jumps = self.run.jumps_from_here()
        handles: list[Value] = []
        for item in node.items:
            mode = self.parts.torch_calls.grad_mode_of(item.item, state)
            if mode is not None:
                state.grad_enabled = mode
                continue
            if self.parts.torch_calls.unchecks_saves(item.item, state):
                self.run.unchecked_saves += 1
                continue
            autocast = self.parts.torch_calls.autocast_of(item.item, state)
            if autocast is Tri.NO:  # `autocast(enabled=False)` inside a region: full precision again
                self.run.autocast = self.run.autocast_maybe = 0
                continue
            if autocast is not None:
                self.run.autocast += 1 if autocast is Tri.YES else 0
                self.run.autocast_maybe += 1 if autocast is Tri.MAYBE else 0
                continue
            value = self.parts.expressions.eval(item.item, state)
            handles += [value] if isinstance(value, HookHandle) else []  # `with m.register_forward_hook(f):`
            if item.asname is not None:
                bound = value if isinstance(value, TensorValue) else UNKNOWN
                self.parts.bindings.bind(item.asname.name, bound, state, item.item)
        try:
            self.exec_block(node.body.body, state)
            for handle in handles:  # its exit removes the hook
                self.parts.calls.call_method(handle, "remove", [], {}, node, state)  # type: ignore[arg-type]
        finally:
            state.grad_enabled, (self.run.autocast, self.run.autocast_maybe) = saved_mode, autocasts
            self.run.unchecked_saves = unchecked
            for jumped in exits.since(jumps) if exits is not None else ():  # left by `continue` or `break`
                jumped.grad_enabled = saved_mode

    def _function_def(self, node: cst.FunctionDef, state: State) -> None:
        name = node.name.value
        definitions = self.run.call_definitions[-1] if self.run.call_stack else self.run.definitions
        inside = bool(self.run.call_stack) or self.run.analysing is not None
        # a function defined inside another sees its names (a closure: `def parse(x): ... repeat(x, n)`)
        state.env[name] = FunctionRef(name, node, definitions, closure=state.env if inside else None)
        state.env[name] = self.parts.custom_functions.custom_op(node, state.env[name], state)  # type: ignore[arg-type]
        self._run_decorators(node, state.env[name], state)
        if definitions is self.run.definitions:  # another file's nested functions are that file's to analyse
            self.parts.frames.defer(Deferred(node, None, False))

    def _run_decorators(self, node: cst.FunctionDef | cst.ClassDef, defined: Value, state: State) -> None:
        """Call the decorators of `node` that are functions of its own file (a registry's
        `@register("name")` filling a dict a factory later picks from), innermost first, for what
        they do. `node`'s name keeps what it defines; a function a decorator wraps in one it
        defines (`return wrapper`) runs that wrapper when called (`RunState.wrappers`)."""
        if self.run.call_stack or self.run.library or not any(
                name is not None and "." not in name and isinstance(found := state.lookup(name), FunctionRef)
                and found.definitions is self.run.definitions for name, _ in decorator_heads(node)):
            return  # (their names first: a skeleton's function is not parsed for them)
        current = defined
        for decorator in reversed(node.decorators):
            expression = decorator.decorator
            named = expression.func if isinstance(expression, cst.Call) else expression
            if not isinstance(named, cst.Name) or not isinstance(found := state.lookup(named.value), FunctionRef) \
                    or not isinstance(found.node, cst.FunctionDef) or found.definitions is not self.run.definitions:
                continue
            made = self.parts.expressions.eval(expression, state) if isinstance(expression, cst.Call) else found
            if isinstance(made, FunctionRef) and isinstance(made.node, cst.FunctionDef):
                wrapped = self.parts.calls.call_value(made, [current], {}, expression, state)  # type: ignore[arg-type]
                if isinstance(wrapped, FunctionRef) and isinstance(wrapped.node, cst.FunctionDef) \
                        and wrapped.closure is not None and wrapped.node is not node and isinstance(node, cst.FunctionDef):
                    current = self.run.wrappers[node] = wrapped
                    self.run.wrapper_code.add(wrapped.node)

    def _class_def(self, node: cst.ClassDef, state: State) -> None:
        name = node.name.value
        state.env[name] = FunctionRef(name, node, self.run.definitions)
        self._run_decorators(node, state.env[name], state)
        bases = tuple(self.parts.module_objects.class_base(base.value, state) for base in node.bases)
        self.run.definitions.bases[name] = bases
        is_module, torch_base = self.parts.module_objects.module_kind(bases)
        if not is_module and self.run.project is not None and any(
                isinstance(b, ImportRef) and self.run.project.derives_from_module(b.qualname) for b in bases):
            is_module = True  # an installed `nn.Module` of a file left unread (its package's index says)
        if not is_module and self.run.library and any(isinstance(b, ImportRef) for b in bases) and any(
                isinstance(s, cst.FunctionDef) and s.name.value == "forward" for s in node.body.body):
            is_module = True  # a library class with a `forward`, derived from a class of its other files
        template = ModuleValue(name, None, user_class=name, definitions=self.run.definitions, is_module=is_module,
                               torch_base=torch_base)
        self.run.definitions.classes[name] = (node, template)
        if self.run.analysing is not None:  # a class defined inside a function: later analyses see it
            self.run.shared_changed = True
        attributes = self.run.definitions.class_attributes[name] = {}
        for line in node.body.body:  # `SIZES = OrderedDict(...)` in the class body
            for statement in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                value = statement.value if isinstance(statement, (cst.Assign, cst.AnnAssign)) else None
                targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else \
                    [statement.target] if isinstance(statement, cst.AnnAssign) else []
                if value is not None and all(isinstance(t, cst.Name) for t in targets):
                    evaluated = self.parts.expressions.eval(value, state)
                    attributes.update({t.value: evaluated for t in targets if evaluated is not UNKNOWN})
        for nested in (s for s in node.body.body if isinstance(s, cst.ClassDef)):  # `Heads.Classifier(...)`
            if nested.name.value not in self.run.definitions.classes and nested.name.value not in state.env:
                scope = state.copy()  # (its name is the class's attribute, not a global)
                self._class_def(nested, scope)
                attributes[nested.name.value] = scope.env[nested.name.value]
        self.parts.module_objects.subclass_created(state.env[name], state)
        methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is not None and self.run.templates and not self.run.library:
            self.parts.frames.analyse_function(init, self_value=template, is_forward=False, enclosing=state)
        for method in methods:
            self._run_decorators(method, FunctionRef(method.name.value, method, self.run.definitions), state)
            if method is init:
                continue
            self.parts.frames.defer(Deferred(method, None if is_static_method(method) else template,
                                             is_module and method.name.value == "forward"))

    _statement_handlers: dict[type, Callable[[Statements, object, State], None]] = {
        cst.SimpleStatementLine: _simple_line,
        cst.Expr: _expr,
        cst.Assign: _assign,
        cst.AnnAssign: _ann_assign,
        cst.AugAssign: _aug_assign,
        cst.Return: _return,
        cst.Continue: _jump, cst.Break: _jump,
        cst.Del: lambda statements, node, state: statements.parts.bindings.delete(node, state),  # type: ignore[arg-type]
        cst.Raise: _raise,
        cst.Import: _import,
        cst.ImportFrom: _import_from,
        cst.If: _if, cst.Match: run_match,  # type: ignore[dict-item]
        cst.For: _for,
        cst.While: _while,
        cst.Try: _try,
        cst.TryStar: _try,
        cst.With: _with,
        cst.FunctionDef: _function_def,
        LazyFunctionDef: _function_def,
        cst.ClassDef: _class_def,
    }


def _requires_grad_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """`if p.requires_grad:` (`if not p.requires_grad:`): the name tested, and what its tensor's
    flag is where the test holds."""
    holds = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, not holds
    if isinstance(test, cst.Attribute) and test.attr.value == "requires_grad" and isinstance(test.value, cst.Name):
        return test.value.value, holds
    return None


def _narrow(tested: tuple[str, bool], then_state: State, else_state: State) -> None:
    """Each branch of a test of a tensor's `requires_grad` knows the flag (a parameter's, when which
    parameter a loop is at is not known)."""
    name, holds = tested
    value = then_state.env.get(name)  # a name of this scope (a global keeps its one binding)
    if isinstance(value, TensorValue) and value.requires_grad is Tri.MAYBE:
        then_state.env[name] = evolved(value, requires_grad=Tri.of(holds))
        else_state.env[name] = evolved(value, requires_grad=Tri.of(not holds))



MAX_TWO_PASS_LOOPS = 3  # loops nested deeper (followed calls included) run their body once
