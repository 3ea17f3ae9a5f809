"""An abstract interpreter over one file: module-level code, every function and every method.

It walks libcst statements in order, evaluates expressions to abstract values (`values.py`),
records which op saved which version counter (from the op table and the module facts), and
reports each in-place change with the live saves it meets (`events.py`). Branches are joined;
loops run to a fixed point (two passes: every value here is stable after one join).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterable

import libcst as cst

from gradguard.analysis.events import InplaceChange, ScopeResult
from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentValue,
    ConstValue,
    Definitions,
    FunctionRef,
    ImportRef,
    ModuleValue,
    OptimizerValue,
    Origin,
    ParametersValue,
    SavedRecord,
    SequenceValue,
    TensorValue,
    Tri,
    Value,
    join_values,
    new_version_counter,
)
from gradguard.knowledge import modules as module_facts
from gradguard.knowledge import ops
from gradguard.knowledge import surface

if TYPE_CHECKING:
    from gradguard.analysis.project import ProjectIndex

_MAX_CALL_DEPTH = 2
_NN_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_FUNCTIONAL = "torch.nn.functional."
_INIT = "torch.nn.init."
_OPTIM = "torch.optim."


@dataclass
class State:
    """What holds at one program point of one scope."""

    env: dict[str, Value]
    saves: dict[int, tuple[SavedRecord, ...]] = field(default_factory=dict)
    grad_enabled: Tri = Tri.YES
    dead: bool = False

    def copy(self) -> State:
        return State(dict(self.env), dict(self.saves), self.grad_enabled, self.dead)

    def join(self, other: State) -> State:
        if self.dead:
            return other.copy()
        if other.dead:
            return self.copy()
        saves: dict[int, tuple[SavedRecord, ...]] = {}
        env: dict[str, Value] = {}
        for name, value in self.env.items():
            if name not in other.env:
                continue
            theirs = other.env[name]
            if (isinstance(value, TensorValue) and isinstance(theirs, TensorValue)
                    and value.version_counter != theirs.version_counter):
                merged, records = merge_tensors(value, theirs, self.saves.get(value.version_counter, ()),
                                                other.saves.get(theirs.version_counter, ()))
                env[name] = merged
                if records:
                    saves[merged.version_counter] = records
            else:
                env[name] = join_values(value, theirs)
        for vc in (self.saves.keys() | other.saves.keys()) - saves.keys():
            mine, theirs = self.saves.get(vc, ()), other.saves.get(vc, ())
            merged = [r if r in theirs else replace(r, certain=False) for r in mine]
            merged += [replace(r, certain=False) for r in theirs if r not in mine]
            saves[vc] = tuple(merged)
        return State(env, saves, self.grad_enabled.join(other.grad_enabled))


def merge_tensors(a: TensorValue, b: TensorValue, saved_a: tuple[SavedRecord, ...],
                  saved_b: tuple[SavedRecord, ...]) -> tuple[TensorValue, tuple[SavedRecord, ...]]:
    """One name bound to either of two tensors: a changed through it changes whichever it is.

    The merged tensor gets the saves of both; a save is certain only if both paths have one.
    """
    both = any(r.certain for r in saved_a) and any(r.certain for r in saved_b)
    records = tuple(r if (both and r.certain) else replace(r, certain=False) for r in (*saved_a, *saved_b))
    merged = replace(join_values(a, replace(b, version_counter=a.version_counter)),
                     version_counter=new_version_counter())
    return merged, records


def _carries_tensors(value: Value | None) -> bool:
    if isinstance(value, (TensorValue, ModuleValue, ArgumentValue)):
        return True
    if isinstance(value, SequenceValue):
        return any(_carries_tensors(v) for v in (*value.items, value.repeated))
    return False


def qualname_of(value: Value) -> str | None:
    return value.qualname if isinstance(value, ImportRef) else None


def _normalise_torch_name(name: str) -> str:
    """`torch.nn.modules.activation.ReLU` → `torch.nn.ReLU`; `torch.functional.x` → `torch.x`."""
    if name.startswith("torch.nn.modules."):
        return "torch.nn." + name.rsplit(".", 1)[-1]
    if name.startswith("torch.nn.parameter."):
        return "torch.nn." + name.rsplit(".", 1)[-1]
    return name


class Interpreter:
    """Interprets one parsed file and collects its in-place changes."""

    def __init__(self, module: cst.Module, path: str | None = None, project: ProjectIndex | None = None) -> None:
        self.module = module
        self.result = ScopeResult()
        self.definitions = Definitions(path, module)
        self.project = project
        self.deferred: list[Callable[[], None]] = []
        self.pending: list[InplaceChange] = []
        self.backward_now = Tri.NO
        self.in_forward = False
        self.in_module_method = False
        self.call_stack: list[cst.FunctionDef] = []
        self.return_values: list[list[Value]] = []
        self.call_site: tuple[cst.CSTNode, str] | None = None
        self.callee_records: set[int] = set()
        self.next_serial = 1
        self.loop_depth = 0

    # ---- entry points -------------------------------------------------------------------

    def run(self, *, functions: bool = True) -> ScopeResult:
        """Interpret the module-level code, then (with `functions`) every function and method."""
        state = State(self.definitions.globals)
        self.exec_block(self.module.body, state)
        self.definitions.globals = state.env
        for change in self.pending:
            change.backward_follows = Tri.NO
        self.pending = []
        while self.deferred and functions:
            self.deferred.pop(0)()
        self.deferred = []
        return self.result

    # ---- statements ---------------------------------------------------------------------

    def exec_block(self, body: Iterable[cst.BaseStatement | cst.BaseSmallStatement], state: State) -> None:
        for statement in body:
            if state.dead:
                return
            handler = self._statement_handlers.get(type(statement))
            if handler is not None:
                handler(self, statement, state)

    def _simple_line(self, node: cst.SimpleStatementLine, state: State) -> None:
        self.exec_block(node.body, state)

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
        verb = f"`{_OPERATOR_SYMBOLS.get(operator.removesuffix('Assign'), '?')}=`"
        if isinstance(target, cst.Subscript):
            base = self.eval(target.value, state)
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
        elif isinstance(left, SequenceValue) and isinstance(right, SequenceValue) and operator == "AddAssign":
            self.bind(target, SequenceValue(left.items + right.items) if left.repeated is None and right.repeated is None
                      else UNKNOWN, state, node)
        elif not isinstance(left, (TensorValue, ModuleValue)):
            self.bind(target, UNKNOWN, state, node)

    def _return(self, node: cst.Return, state: State) -> None:
        value = self.eval(node.value, state) if node.value is not None else ConstValue(None)
        if self.return_values:
            self.return_values[-1].append(value)
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
        if isinstance(node.names, cst.ImportStar):
            return
        origin = "." * len(node.relative) + (dotted_name(node.module) or "" if node.module is not None else "")
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            bound = (dotted_name(alias.asname.name) or "") if alias.asname is not None else name
            state.env[bound] = ImportRef(f"{origin}{name}" if origin.endswith(".") else f"{origin}.{name}")

    def _if(self, node: cst.If, state: State) -> None:
        self.eval(node.test, state)
        then_state = state.copy()
        self.exec_block(node.body.body, then_state)
        else_state = state.copy()
        if isinstance(node.orelse, cst.If):
            self._if(node.orelse, else_state)
        elif isinstance(node.orelse, cst.Else):
            self.exec_block(node.orelse.body.body, else_state)
        self._replace(state, then_state.join(else_state))

    def _loop(self, body: cst.BaseSuite, state: State, bind_target: Callable[[State], None] | None,
              orelse: cst.Else | None) -> None:
        self.loop_depth += 1
        entry = state.copy()
        current = state.copy()
        for _ in range(2):
            iteration = current.copy()
            iteration.dead = False
            if bind_target is not None:
                bind_target(iteration)
            self.exec_block(body.body, iteration)
            current = entry.join(iteration)
        self.loop_depth -= 1
        self._replace(state, current)
        if orelse is not None:
            self.exec_block(orelse.body.body, state)

    def _for(self, node: cst.For, state: State) -> None:
        iterable = self.eval(node.iter, state)

        def bind(iteration: State) -> None:
            self.bind(node.target, self.iterate(iterable, node.iter, iteration), iteration, node.iter)

        self._loop(node.body, state, bind, node.orelse)

    def _while(self, node: cst.While, state: State) -> None:
        self.eval(node.test, state)
        self._loop(node.body, state, None, node.orelse)

    def _try(self, node: cst.Try | cst.TryStar, state: State) -> None:
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
        self._replace(state, outcome)
        if node.finalbody is not None:
            was_dead = state.dead
            state.dead = False
            self.exec_block(node.finalbody.body.body, state)
            state.dead = state.dead or was_dead

    def _with(self, node: cst.With, state: State) -> None:
        saved_mode = state.grad_enabled
        for item in node.items:
            mode = self.grad_mode_of(item.item, state)
            if mode is not None:
                state.grad_enabled = mode
                continue
            value = self.eval(item.item, state)
            if item.asname is not None:
                self.bind(item.asname.name, UNKNOWN if not isinstance(value, TensorValue) else value, state, item.item)
        self.exec_block(node.body.body, state)
        state.grad_enabled = saved_mode

    def _function_def(self, node: cst.FunctionDef, state: State) -> None:
        name = node.name.value
        state.env[name] = FunctionRef(name, node, self.definitions)
        self.deferred.append(lambda: self.analyse_function(node, self_value=None, is_forward=False))

    def _class_def(self, node: cst.ClassDef, state: State) -> None:
        name = node.name.value
        state.env[name] = FunctionRef(name, node, self.definitions)
        is_module = self.is_module_class(node, state)
        template = ModuleValue(name, None, user_class=name, definitions=self.definitions) if is_module else None
        self.definitions.classes[name] = (node, template)
        methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is not None:
            self.analyse_function(init, self_value=template or ModuleValue(name, None, user_class=name,
                                                                           definitions=self.definitions),
                                  is_forward=False, enclosing=state.env)
        for method in methods:
            if method is init:
                continue
            self.deferred.append(lambda m=method: self.analyse_function(
                m, self_value=self.instance_copy(template) if template else None,
                is_forward=is_module and m.name.value == "forward"))

    def _global(self, node: cst.BaseSmallStatement, state: State) -> None:
        return

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

    def is_module_class(self, node: cst.ClassDef, state: State) -> bool:
        for base in node.bases:
            value = self.eval(base.value, state)
            name = qualname_of(value)
            if name is not None and (_normalise_torch_name(name) in _NN_MODULE_BASES
                                     or _normalise_torch_name(name).removeprefix("torch.nn.") in module_facts.MODULES
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

    def analyse_function(self, node: cst.FunctionDef, self_value: ModuleValue | None, is_forward: bool,
                         enclosing: dict[str, Value] | None = None) -> None:
        env: dict[str, Value] = dict(enclosing if enclosing is not None else self.definitions.globals)
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        for index, param in enumerate(all_params):
            name = param.name.value
            env[name] = self_value if (index == 0 and self_value is not None) else ArgumentValue(name)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                env[star.name.value] = UNKNOWN
        state = State(env)
        for decorator in node.decorators:
            mode = self.grad_mode_of(decorator.decorator, state)
            if mode is not None:
                state.grad_enabled = mode
        outer = (self.pending, self.backward_now, self.in_forward, self.in_module_method)
        self.pending, self.in_forward = [], is_forward
        self.in_module_method = self_value is not None
        self.backward_now = Tri.YES if is_forward else Tri.NO
        self.exec_block(node.body.body, state)
        for change in self.pending:
            change.backward_follows = Tri.MAYBE
        self.pending, self.backward_now, self.in_forward, self.in_module_method = outer

    # ---- binding ------------------------------------------------------------------------

    def bind(self, target: cst.BaseExpression, value: Value, state: State, value_node: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            state.env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            starred = any(isinstance(e, cst.StarredElement) for e in elements)
            if isinstance(value, TensorValue) and not starred:
                value = self.unbind(value, value_node, state)
            for index, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    self.bind(element.value, UNKNOWN, state, value_node)
                    continue
                if isinstance(value, SequenceValue) and not starred:
                    item = value.item(index)
                elif isinstance(value, SequenceValue) and value.repeated is not None:
                    item = value.repeated
                else:
                    item = UNKNOWN
                self.bind(element.value, item, state, value_node)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value, state)
            attribute = target.attr.value
            if isinstance(owner, ModuleValue):
                owner.named_children[attribute] = value
            elif isinstance(owner, TensorValue) and attribute == "requires_grad":
                flag = value.value if isinstance(value, ConstValue) else None
                self.rebind(state, owner, replace(
                    owner, requires_grad=Tri.MAYBE if flag is None else Tri.of(bool(flag))))
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value, state)
            for element in target.slice:
                self.eval_slice(element, state)
            if isinstance(base, ArgumentValue):
                base = self.promote(base, state)
            if isinstance(base, TensorValue):
                self.mutate(base, target, target.value, "an index assignment", state)

    def rebind(self, state: State, old: Value, new: Value) -> None:
        """Replace every name bound to the object `old` by `new` (a changed flag of one tensor)."""
        for name, value in state.env.items():
            if value is old:
                state.env[name] = new

    def promote(self, value: ArgumentValue, state: State) -> TensorValue:
        """An argument used as a tensor from now on.

        In a method of an `nn.Module` it is an activation that may require grad; elsewhere its
        origin is unknown, and nothing is concluded from unknown origins: it counts as not
        requiring grad (what other inputs save of it is still followed).
        """
        requires_grad = Tri.MAYBE if self.in_module_method else Tri.NO
        tensor = TensorValue(new_version_counter(), requires_grad, False, Origin(f"the argument `{value.name}`"))
        self.rebind(state, value, tensor)
        return tensor

    def iterate(self, iterable: Value, node: cst.CSTNode, state: State) -> Value:
        if isinstance(iterable, ParametersValue):
            if iterable.tensors and all(p.is_leaf and p.requires_grad is Tri.YES for p in iterable.tensors):
                return TensorValue(new_version_counter(), Tri.YES, True, Origin("a parameter", node))
            return UNKNOWN
        if isinstance(iterable, TensorValue):
            return self.unbind(iterable, node, state).item(0)
        if isinstance(iterable, SequenceValue):
            if iterable.repeated is not None:
                return iterable.repeated
            result: Value | None = None
            for item in iterable.items:
                result = item if result is None else join_values(result, item)
            return result if result is not None else UNKNOWN
        return UNKNOWN

    def unbind(self, tensor: TensorValue, node: cst.CSTNode, state: State) -> SequenceValue:
        """`a, b = x` and `for row in x` call `unbind`: every element is a multi-output view."""
        view = replace(tensor.fresh_view(Origin("an element of an unbound tensor", node), grad_enabled=state.grad_enabled),
                       multi_output_view="Unbind")
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
        if name in state.env:
            return state.env[name]
        if name in self.definitions.globals:
            return self.definitions.globals[name]
        if name in ("True", "False", "None"):
            return ConstValue({"True": True, "False": False, "None": None}[name])
        return UNKNOWN

    def _number(self, node: cst.Integer | cst.Float | cst.Imaginary, state: State) -> Value:
        try:
            return ConstValue(node.evaluated_value)
        except (ValueError, SyntaxError):
            return ConstValue(0)

    def _string(self, node: cst.BaseExpression, state: State) -> Value:
        return ConstValue(node.evaluated_value if isinstance(node, cst.SimpleString) else "")

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
        return UNKNOWN if starred else SequenceValue(tuple(items))

    def _attribute(self, node: cst.Attribute, state: State) -> Value:
        owner = self.eval(node.value, state)
        attribute = node.attr.value
        if isinstance(owner, ImportRef):
            return ImportRef(f"{owner.qualname}.{attribute}")
        if isinstance(owner, ModuleValue):
            return self.module_attribute(owner, attribute, node)
        if isinstance(owner, ArgumentValue) and attribute in ("data", "T", "mT", "grad"):
            owner = self.promote(owner, state)
        if isinstance(owner, TensorValue):
            return self.tensor_attribute(owner, attribute, node, state)
        return UNKNOWN

    def module_attribute(self, owner: ModuleValue, attribute: str, node: cst.CSTNode) -> Value:
        if attribute in owner.named_children:
            return owner.named_children[attribute]
        if attribute in owner.parameters:
            return owner.parameters[attribute]
        if owner.user_class is None and attribute in ("running_mean", "running_var"):
            tensor = TensorValue(new_version_counter(), Tri.NO, True, Origin(f"a buffer of `{owner.class_name}`", owner.node))
            owner.parameters[attribute] = tensor
            return tensor
        return UNKNOWN

    def tensor_attribute(self, owner: TensorValue, attribute: str, node: cst.CSTNode, state: State) -> Value:
        if attribute == "data":
            return TensorValue(new_version_counter(), Tri.NO, True, Origin("`.data`", node),
                               storage_of=owner.version_counter)
        if attribute in surface.ATTRIBUTE_VIEWS:
            return owner.fresh_view(Origin(f"`.{attribute}`", node), grad_enabled=state.grad_enabled)
        if attribute == "grad":
            return TensorValue(new_version_counter(), Tri.NO, True, Origin("a `.grad`", node))
        return UNKNOWN

    def _subscript(self, node: cst.Subscript, state: State) -> Value:
        base = self.eval(node.value, state)
        kinds = [self.eval_slice(element, state) for element in node.slice]
        if isinstance(base, SequenceValue):
            index = kinds[0] if len(kinds) == 1 else None
            if isinstance(index, ConstValue) and isinstance(index.value, int):
                return base.item(index.value)
            return base.repeated if base.repeated is not None else UNKNOWN
        if isinstance(base, ModuleValue):
            index = kinds[0] if len(kinds) == 1 else None
            if base.children is not None and isinstance(index, ConstValue) and isinstance(index.value, int):
                if -len(base.children) <= index.value < len(base.children):
                    return base.children[index.value]
            return UNKNOWN
        if isinstance(base, ArgumentValue):
            base = self.promote(base, state)
        if not isinstance(base, TensorValue):
            return UNKNOWN
        basic = all(k == "basic" or (isinstance(k, ConstValue) and isinstance(k.value, int)) for k in kinds)
        advanced = any(isinstance(k, (TensorValue, SequenceValue)) for k in kinds)
        if basic:
            return base.fresh_view(Origin("an indexed view", node), grad_enabled=state.grad_enabled)
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
        if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
            return ConstValue(-1)
        return self.eval(value, state)

    def _binary(self, node: cst.BinaryOperation, state: State) -> Value:
        left = self.eval(node.left, state)
        right = self.eval(node.right, state)
        aten = surface.BINARY.get(type(node.operator).__name__)
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

    def _unary(self, node: cst.UnaryOperation, state: State) -> Value:
        operand = self.eval(node.expression, state)
        if isinstance(operand, TensorValue):
            return self.fresh_result(operand.requires_grad & state.grad_enabled, Origin("a negation", node),
                                     operand.history)
        if isinstance(operand, ConstValue) and isinstance(operand.value, (int, float)) and isinstance(node.operator, cst.Minus):
            return ConstValue(-operand.value)
        return UNKNOWN

    def _named_expr(self, node: cst.NamedExpr, state: State) -> Value:
        value = self.eval(node.value, state)
        self.bind(node.target, value, state, node.value)
        return value

    def _if_exp(self, node: cst.IfExp, state: State) -> Value:
        self.eval(node.test, state)
        body, orelse = self.eval(node.body, state), self.eval(node.orelse, state)
        if isinstance(body, TensorValue) and isinstance(orelse, TensorValue) and body.version_counter != orelse.version_counter:
            merged, records = merge_tensors(body, orelse, state.saves.get(body.version_counter, ()),
                                            state.saves.get(orelse.version_counter, ()))
            if records:
                state.saves[merged.version_counter] = records
            return merged
        return join_values(body, orelse)

    def _call(self, node: cst.Call, state: State) -> Value:
        func = node.func
        receiver: Value | None = None
        if isinstance(func, cst.Attribute):
            receiver = self.eval(func.value, state)
            method = func.attr.value
            if isinstance(receiver, ImportRef):
                callee: Value = ImportRef(f"{receiver.qualname}.{method}")
            else:
                callee = UNKNOWN
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
                else:
                    args.append(UNKNOWN)
                    kwargs["*"] = UNKNOWN
            elif arg.star == "**":
                kwargs["**"] = UNKNOWN
            elif arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            else:
                args.append(value)
        if isinstance(receiver, ModuleValue) and method in receiver.named_children:
            callee, method = receiver.named_children[method], None
        if method is not None and receiver is not None and not isinstance(receiver, ImportRef):
            return self.call_method(receiver, method, args, kwargs, node, state)
        name = qualname_of(callee)
        if name is not None and not name.startswith("torch"):
            callee, name = self.resolve_import(callee), None
        if name is not None:
            return self.call_qualified(_normalise_torch_name(name), args, kwargs, node, state)
        if isinstance(callee, ModuleValue):
            return self.call_module(callee, args, kwargs, node, state, report_node=node)
        if isinstance(callee, FunctionRef) and isinstance(callee.node, cst.ClassDef):
            template = callee.definitions.classes.get(callee.name, (None, None))[1]
            instance = self.instance_copy(template)
            if instance is not None:
                instance.node = node
                return instance
        elif isinstance(callee, FunctionRef):
            return self.call_user_function(callee.node, callee.definitions, None, args, kwargs, node, state)
        return UNKNOWN

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
        cst.IfExp: _if_exp,
        cst.NamedExpr: _named_expr,
        cst.Call: _call,
    }

    # ---- calls --------------------------------------------------------------------------

    def grad_mode_of(self, node: cst.BaseExpression, state: State) -> Tri | None:
        """The grad mode a `with` item or decorator sets, or None if it is not a grad-mode construct."""
        call = node if isinstance(node, cst.Call) else None
        target = call.func if call is not None else node
        name = qualname_of(self.eval(target, state))
        if name is None:
            return None
        name = _normalise_torch_name(name)
        if name not in surface.GRAD_MODES:
            return None
        fixed = surface.GRAD_MODES[name]
        first = call.args[0].value if call is not None and call.args else None
        flag = self.eval(first, state) if first is not None else None
        if "inference_mode" in name:
            if isinstance(flag, ConstValue) and flag.value is False:
                return state.grad_enabled
            return Tri.NO if flag is None or isinstance(flag, ConstValue) else Tri.MAYBE
        if fixed is not None:
            return Tri.of(fixed)
        if isinstance(flag, ConstValue):
            return Tri.of(bool(flag.value))
        return Tri.MAYBE

    def call_qualified(self, name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                       state: State) -> Value:
        if name in surface.GRAD_MODES:
            if name.endswith("set_grad_enabled") and args:
                flag = args[0]
                state.grad_enabled = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE
            return UNKNOWN
        if name in surface.BACKWARD_FUNCTIONS:
            outputs = args[0] if args else kwargs.get("tensors", kwargs.get("outputs", UNKNOWN))
            self.run_backward(outputs, kwargs, state)
            return UNKNOWN
        if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            base = args[0] if args else kwargs.get("data", UNKNOWN)
            flag = args[1] if len(args) > 1 else kwargs.get("requires_grad", ConstValue(True))
            rg = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE
            vc = base.version_counter if isinstance(base, TensorValue) else new_version_counter()
            return TensorValue(vc, rg, True, Origin("an `nn.Parameter`", node))
        if name.startswith(_INIT):
            if args and isinstance(args[0], TensorValue) and name.endswith("_"):
                saved_mode = state.grad_enabled
                state.grad_enabled = Tri.NO
                self.mutate(args[0], node, None, f"`{name.removeprefix('torch.')}`", state)
                state.grad_enabled = saved_mode
            return args[0] if args else UNKNOWN
        if name.startswith(_OPTIM) and name.rsplit(".", 1)[-1] in surface.OPTIMIZERS:
            params = args[0] if args else kwargs.get("params", UNKNOWN)
            tensors = params.tensors if isinstance(params, ParametersValue) else ()
            return OptimizerValue(name.rsplit(".", 1)[-1], tensors)
        if name.startswith("torch.nn.") and name.count(".") == 2:
            return self.construct_module(name.rsplit(".", 1)[-1], args, kwargs, node, state)
        if name.startswith("torch.Tensor.") and args:
            receiver = args[0]
            if isinstance(receiver, ArgumentValue):
                receiver = self.promote(receiver, state)
            if isinstance(receiver, TensorValue):
                return self.call_tensor_method(receiver, name.removeprefix("torch.Tensor."), args[1:], kwargs, node, state)
            return UNKNOWN
        if name.startswith(_FUNCTIONAL):
            return self.call_functional(name.removeprefix(_FUNCTIONAL), args, kwargs, node, state)
        if name.startswith("torch.") and name.count(".") == 1:
            function = name.removeprefix("torch.")
            if function in surface.FUNCTIONAL_DROPOUT:
                return self.call_functional(function, args, kwargs, node, state)
            if function in surface.FACTORIES:
                flag = kwargs.get("requires_grad")
                rg = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else (Tri.NO if flag is None else Tri.MAYBE)
                if function == "clone" and args and isinstance(args[0], TensorValue):
                    rg = args[0].requires_grad & state.grad_enabled
                    return self.fresh_result(rg, Origin("a clone", node), args[0].history)
                return TensorValue(new_version_counter(), rg, True, Origin(f"`torch.{function}`", node))
            if function in surface.MAYBE_RETURNS_SELF and args and isinstance(args[0], TensorValue):
                return args[0].fresh_view(Origin(f"`torch.{function}`", node), certain=False)
            if args and isinstance(args[0], ArgumentValue):
                args[0] = self.promote(args[0], state)
            return self.apply_aten(function, args, kwargs, node, state, None)
        return UNKNOWN

    def call_functional(self, function: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                        state: State) -> Value:
        if args and isinstance(args[0], ArgumentValue):
            args[0] = self.promote(args[0], state)
        source = args[0] if args else kwargs.get("input", UNKNOWN)
        if function in surface.FUNCTIONAL_DROPOUT:
            training_at, inplace_at = surface.FUNCTIONAL_DROPOUT[function]
            training = self.flag(args, kwargs, training_at, "training", True)
            inplace = self.flag(args, kwargs, inplace_at, "inplace", False)
            probability = args[1] if len(args) > 1 else kwargs.get("p")
            if training is Tri.NO or (isinstance(probability, ConstValue) and probability.value == 0):
                return source if isinstance(source, TensorValue) else UNKNOWN
            if not isinstance(source, TensorValue):
                return UNKNOWN
            if inplace is Tri.YES and training is Tri.YES:
                self.mutate(source, node, node.args[0].value if node.args else None, "`F.dropout(..., inplace=True)`", state)
                return source
            return self.fresh_result(source.requires_grad & state.grad_enabled, Origin(f"`F.{function}`", node),
                                     source.history)
        if function in surface.FUNCTIONAL_INPLACE:
            position, inplace_op = surface.FUNCTIONAL_INPLACE[function]
            if self.flag(args, kwargs, position, "inplace", False) is Tri.YES:
                return self.apply_aten(inplace_op, args[:1], {}, node, state, f"`F.{function}(..., inplace=True)`",
                                       label=f"F.{function}")
        if function == "adaptive_avg_pool2d" and len(args) > 1 and isinstance(args[1], ConstValue) and args[1].value == 1:
            return self.fresh_result(source.requires_grad & state.grad_enabled, Origin("a mean", node), source.history) \
                if isinstance(source, TensorValue) else UNKNOWN
        return self.apply_aten(function, args, kwargs, node, state, None, label=f"F.{function}")

    @staticmethod
    def flag(args: list[Value], kwargs: dict[str, Value], position: int, keyword: str, default: bool) -> Tri:
        value = args[position] if len(args) > position else kwargs.get(keyword)
        if value is None:
            return Tri.of(default)
        if isinstance(value, ConstValue):
            return Tri.of(bool(value.value))
        return Tri.MAYBE

    def call_method(self, receiver: Value, method: str, args: list[Value], kwargs: dict[str, Value],
                    node: cst.Call, state: State) -> Value:
        if isinstance(receiver, ModuleValue) and receiver.definitions is not None and receiver.user_class is not None:
            function = receiver.definitions.method(receiver.user_class, method)
            if function is not None:
                return self.call_user_function(function, receiver.definitions, receiver, args, kwargs, node, state)
        if isinstance(receiver, ModuleValue):
            return self.call_module_method(receiver, method, args, kwargs, node, state)
        if isinstance(receiver, OptimizerValue):
            if method == "step":
                for parameter in receiver.parameters:
                    saved_mode = state.grad_enabled
                    state.grad_enabled = Tri.NO
                    self.mutate(parameter, node, None, f"`{dotted_name(node.func)}()`", state)
                    state.grad_enabled = saved_mode
            return UNKNOWN
        if isinstance(receiver, SequenceValue):
            return UNKNOWN
        if isinstance(receiver, ArgumentValue):
            if method in surface.NOT_TENSORS or not self.is_tensor_method(method):
                return UNKNOWN
            receiver = self.promote(receiver, state)
        if not isinstance(receiver, TensorValue):
            return UNKNOWN
        return self.call_tensor_method(receiver, method, args, kwargs, node, state)

    @staticmethod
    def is_tensor_method(method: str) -> bool:
        return bool(ops.overloads(method)) or method in surface.MAYBE_RETURNS_SELF or method in (
            "detach", "clone", "backward", "requires_grad_", "data")

    def call_tensor_method(self, tensor: TensorValue, method: str, args: list[Value], kwargs: dict[str, Value],
                           node: cst.Call, state: State) -> Value:
        target_node = node.func.value if isinstance(node.func, cst.Attribute) else None
        if method == "backward":
            self.run_backward(tensor, kwargs, state)
            return UNKNOWN
        if method in surface.NOT_TENSORS:
            return UNKNOWN
        if method == "detach":
            return replace(tensor, requires_grad=Tri.NO, is_leaf=True, origin=Origin("`.detach()`", node),
                           view_of_leaf=False, multi_output_view=None, no_grad_view=False, history=frozenset())
        if method == "requires_grad_":
            flag = args[0] if args else kwargs.get("requires_grad", ConstValue(True))
            rg = Tri.of(bool(flag.value)) if isinstance(flag, ConstValue) else Tri.MAYBE
            updated = replace(tensor, requires_grad=rg)
            self.rebind(state, tensor, updated)
            return updated
        if method in surface.RETURNS_SELF:
            return tensor
        if method == "detach_":
            updated = replace(tensor, requires_grad=Tri.NO, is_leaf=True)
            self.rebind(state, tensor, updated)
            return updated
        if method == "clone":
            return self.fresh_result(tensor.requires_grad & state.grad_enabled, Origin("a clone", node), tensor.history)
        if method in surface.DTYPE_COPIES:
            return self.fresh_result(tensor.requires_grad & state.grad_enabled, Origin(f"`.{method}()`", node),
                                     tensor.history)
        if method in surface.MAYBE_RETURNS_SELF:
            return tensor.fresh_view(Origin(f"`.{method}()`", node), certain=False, grad_enabled=state.grad_enabled)
        if method in surface.MAYBE_VIEW:
            return tensor.fresh_view(Origin(f"`.{method}()`", node), certain=False, grad_enabled=state.grad_enabled)
        if method in surface.STORAGE_ALIASES:
            alias = TensorValue(new_version_counter(), tensor.requires_grad, False, Origin(f"`.{method}()`", node),
                                storage_of=tensor.version_counter, history=tensor.history)
            return SequenceValue(repeated=alias)
        if method.startswith("new_") or method in ("numpy",):
            return TensorValue(new_version_counter(), Tri.NO, True, Origin(f"`.{method}()`", node))
        return self.apply_aten(method, [tensor, *args], kwargs, node, state, None, target_node=target_node)

    def run_backward(self, loss: Value, kwargs: dict[str, Value], state: State) -> None:
        """A backward pass from `loss`: it runs through (confirms) and frees the saves of loss's graph.

        When the loss's graph is unknown, every pending change is confirmed and every save freed.
        """
        graph = loss.history if isinstance(loss, TensorValue) and loss.history else None
        reached = [c for c in self.pending
                   if graph is None or any(r.serial in graph for r in (*c.saved, *c.storage_saved))]
        for change in reached:
            change.backward_follows = Tri.YES
        self.pending = [c for c in self.pending if c not in reached]
        retain = kwargs.get("retain_graph") or kwargs.get("create_graph")
        if isinstance(retain, ConstValue) and retain.value:
            return
        if graph is None:
            state.saves = {}
            return
        state.saves = {vc: kept for vc, records in state.saves.items()
                       if (kept := tuple(r for r in records if r.serial not in graph))}

    # ---- ATen ops -----------------------------------------------------------------------

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

    def apply_aten(self, base: str, args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode, state: State,
                   verb: str | None, *, target_node: cst.CSTNode | None = None, label: str | None = None) -> Value:
        """Apply the ATen op `base` (an overload is chosen from the argument kinds)."""
        facts = self.select_overload(base, args, kwargs)
        if facts is None:
            return self.opaque_result(args, node, state)
        bound: dict[str, Value] = dict(zip(facts.args, args))
        for key, value in kwargs.items():
            if key == "input" and "input" not in facts.args and facts.args:
                bound[facts.args[0]] = value
            elif key in facts.args:
                bound[key] = value
        for key, value in list(bound.items()):
            if isinstance(value, ArgumentValue) and key in facts.tensor_args:
                bound[key] = self.promote(value, state)
        label = label or self.label_of(node, base)
        first_serial = self.next_serial
        saves_from = facts
        if facts.composite:
            decomposition = surface.DECOMPOSITIONS.get(base)
            target = None
            if decomposition is not None:
                target = ops.op(decomposition.aten_op) or next(iter(ops.overloads(decomposition.aten_op)), None)
            if target is not None:
                bound = {decomposition.argument(k): v for k, v in bound.items()}
                saves_from = target
            else:
                saves_from = None
        out = kwargs.get("out")
        if isinstance(out, TensorValue):
            self.mutate(out, node, None, f"`{base}(..., out=...)`", state)
            return out
        for mutated in facts.mutates:
            value = bound.get(mutated)
            if isinstance(value, TensorValue):
                self.mutate(value, node, target_node, verb or f"`{base}`", state)
        recorded = self.grad_recorded(saves_from or facts, bound, state)
        if saves_from is not None and recorded is not Tri.NO:
            self.record_input_saves(saves_from, bound, recorded, node, label, state)
        result = self.result_of(facts, bound, recorded, node, state, label)
        if saves_from is not None and recorded is not Tri.NO:
            outputs: list[Value] = [result] if isinstance(result, TensorValue) else []
            if isinstance(result, SequenceValue):
                outputs = list(result.items) if result.repeated is None else [result.repeated]
            for index in sorted(saves_from.saves_outputs):
                repeated = isinstance(result, SequenceValue) and result.repeated is not None
                output = outputs[0] if repeated and outputs else (outputs[index] if index < len(outputs) else None)
                if isinstance(output, TensorValue):
                    self.save(output, SavedRecord(label, saves_from.name, "output", node,
                                                  recorded is Tri.YES and output.alias_certain), state)
        if facts.view_of is not None:
            return result
        updated = self.with_history(result, bound.values(), first_serial, state)
        if facts.kind == "inplace" and updated is not result:
            self.rebind(state, result, updated)
        return updated

    def with_history(self, result: Value, inputs: Iterable[Value], first_serial: int, state: State) -> Value:
        """`result` as a node of the graph: its inputs' saves and those its op just made."""
        history = frozenset(range(first_serial, self.next_serial))
        for value in inputs:
            if isinstance(value, TensorValue):
                history |= value.history
            elif isinstance(value, SequenceValue):
                for item in (*value.items, *([value.repeated] if value.repeated is not None else [])):
                    if isinstance(item, TensorValue):
                        history |= item.history
        if not history:
            return result
        if isinstance(result, TensorValue):
            return replace(result, history=result.history | history)
        if isinstance(result, SequenceValue):
            return SequenceValue(
                tuple(replace(i, history=i.history | history) if isinstance(i, TensorValue) else i for i in result.items),
                replace(result.repeated, history=result.repeated.history | history)
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
        """Whether `value` requires grad; values of unknown origin count only inside modules."""
        if value is None or isinstance(value, (ConstValue, ModuleValue)):
            return Tri.NO
        if isinstance(value, TensorValue):
            return value.requires_grad
        if isinstance(value, SequenceValue):
            result = Tri.NO
            for item in (*value.items, *([value.repeated] if value.repeated is not None else [])):
                result = result | self.requires_grad_of(item)
            return result
        return Tri.MAYBE if self.in_module_method else Tri.NO

    def record_input_saves(self, facts: ops.OpFacts, bound: dict[str, Value], recorded: Tri, node: cst.CSTNode,
                           label: str, state: State) -> None:
        for name, condition in facts.saves.items():
            if facts.saves_clone and name == "self":
                continue
            value = bound.get(name)
            if not isinstance(value, TensorValue):
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
            self.save(value, SavedRecord(label, facts.name, what, node, when is Tri.YES and value.alias_certain,
                                         None), state)

    def result_of(self, facts: ops.OpFacts, bound: dict[str, Value], recorded: Tri, node: cst.CSTNode,
                  state: State, label: str) -> Value:
        if facts.kind == "inplace" and facts.mutates:
            target = bound.get(facts.mutates[0])
            if isinstance(target, TensorValue):
                if recorded is not Tri.NO and target.requires_grad is Tri.NO:
                    updated = replace(target, requires_grad=recorded, is_leaf=False)
                    self.rebind(state, target, updated)
                    return updated
                return target
            return UNKNOWN
        if facts.view_of is not None:
            base = bound.get(facts.view_of)
            if isinstance(base, TensorValue):
                certain = facts.name.split(".", 1)[0] not in surface.MAYBE_VIEW | surface.MAYBE_RETURNS_SELF
                view = base.fresh_view(Origin(f"the view `{label}`", node), certain=certain,
                                       grad_enabled=state.grad_enabled)
                if facts.multi_output_view:
                    kind = {"unbind": "Unbind", "split": "Split", "chunk": "Split"}.get(facts.name.split(".", 1)[0],
                                                                                        "SplitWithSizes")
                    return SequenceValue(repeated=replace(view, multi_output_view=kind))
                if facts.name.split(".", 1)[0] in ("tensor_split", "hsplit", "vsplit", "dsplit"):
                    return SequenceValue(repeated=view)
                return view
            return UNKNOWN
        origin = Origin(f"the output of `{label}`", node)
        if facts.returns > 1:
            return SequenceValue(tuple(self.fresh_result(recorded, origin) for _ in range(facts.returns)))
        if facts.returns_list:
            return SequenceValue(repeated=self.fresh_result(recorded, origin))
        return self.fresh_result(recorded, origin)

    @staticmethod
    def fresh_result(requires_grad: Tri, origin: Origin, history: frozenset[int] = frozenset()) -> TensorValue:
        """A newly allocated tensor (its own version counter) in the graph after `history`."""
        return TensorValue(new_version_counter(), requires_grad, requires_grad is Tri.NO, origin, history=history)

    def opaque_result(self, args: list[Value], node: cst.CSTNode, state: State) -> Value:
        return UNKNOWN

    @staticmethod
    def label_of(node: cst.CSTNode, base: str) -> str:
        """How the user wrote the op: `torch.sigmoid`, `x.exp`, `.softmax`, `*`."""
        if isinstance(node, cst.Call):
            return dotted_name(node.func) or base
        if isinstance(node, cst.BinaryOperation):
            return _OPERATOR_SYMBOLS.get(type(node.operator).__name__, base)
        return base

    # ---- saves and changes --------------------------------------------------------------

    def save(self, tensor: TensorValue, record: SavedRecord, state: State) -> None:
        if state.grad_enabled is Tri.NO:
            return
        record = replace(record, serial=self.next_serial)
        self.next_serial += 1
        if self.call_site is not None:
            self.callee_records.add(id(record.node))
        state.saves[tensor.version_counter] = (*state.saves.get(tensor.version_counter, ()), record)

    def mutate(self, tensor: TensorValue, node: cst.CSTNode, target_node: cst.CSTNode | None, verb: str,
               state: State, *, inside_module: cst.CSTNode | None = None) -> None:
        """An in-place change of `tensor`: bumps its version counter (every alias sees it).

        Inside a called function, only changes of what the caller's ops saved are reported, at
        the caller's line: the callee's own findings come from its own analysis.
        """
        saved = state.saves.get(tensor.version_counter, ())
        storage_saved = state.saves.get(tensor.storage_of, ()) if tensor.storage_of is not None else ()
        if self.call_site is not None:
            saved = tuple(r for r in saved if id(r.node) not in self.callee_records)
            storage_saved = tuple(r for r in storage_saved if id(r.node) not in self.callee_records)
            if not saved and not storage_saved:
                return
            node, label = self.call_site
            verb, target_node = f"`{label}(...)` (through {verb} inside it)", None
            tensor = replace(tensor, is_leaf=False, view_of_leaf=False, multi_output_view=None, no_grad_view=False)
        change = InplaceChange(
            node=node,
            target=tensor,
            target_node=target_node,
            verb=verb,
            grad_enabled=state.grad_enabled,
            bumps_version=tensor.storage_of is None,
            saved=saved,
            storage_saved=storage_saved,
            backward_follows=self.backward_now,
            inside_module=inside_module,
        )
        self.result.changes.append(change)
        if self.backward_now is not Tri.YES:
            self.pending.append(change)

    # ---- calls of the file's own functions -------------------------------------------------

    def resolve_import(self, ref: Value) -> Value:
        """What an imported name is, when it is defined in another file of the project."""
        if self.project is None or not isinstance(ref, ImportRef) or self.definitions.path is None:
            return UNKNOWN
        return self.project.resolve(self.definitions.path, ref.qualname)

    def call_user_function(self, function: cst.FunctionDef, definitions: Definitions, self_value: ModuleValue | None,
                           args: list[Value], kwargs: dict[str, Value], node: cst.CSTNode, state: State) -> Value:
        """Interpret `function`'s body with the caller's arguments and saves (its summary at this call)."""
        if function in self.call_stack or len(self.call_stack) >= _MAX_CALL_DEPTH or "*" in kwargs:
            return UNKNOWN
        if not any(_carries_tensors(v) for v in (self_value, *args, *kwargs.values())):
            return UNKNOWN  # nothing of the caller's graph goes in: nothing to follow
        params = function.params
        positional = [*params.posonly_params, *params.params]
        env: dict[str, Value] = dict(definitions.globals)
        values = ([self_value] if self_value is not None else []) + list(args)
        for index, param in enumerate(positional):
            name = param.name.value
            env[name] = values[index] if index < len(values) else kwargs.get(name, UNKNOWN)
        for param in params.kwonly_params:
            env[param.name.value] = kwargs.get(param.name.value, UNKNOWN)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                env[star.name.value] = UNKNOWN
        callee_state = State(env, state.saves, state.grad_enabled)
        for decorator in function.decorators:
            mode = self.grad_mode_of(decorator.decorator, callee_state)
            if mode is not None:
                callee_state.grad_enabled = mode
        outer_site = self.call_site
        if outer_site is None:
            label = dotted_name(node.func) if isinstance(node, cst.Call) else None
            self.call_site = (node, label or function.name.value)
        self.call_stack.append(function)
        self.return_values.append([])
        try:
            self.exec_block(function.body.body, callee_state)
        finally:
            returned = self.return_values.pop()
            self.call_stack.pop()
            self.call_site = outer_site
            if outer_site is None:
                self.callee_records = set()
        state.saves = callee_state.saves
        result: Value | None = None
        for value in returned:
            result = value if result is None else join_values(result, value)
        return result if result is not None else ConstValue(None)

    # ---- modules ------------------------------------------------------------------------

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
                                              recorded is Tri.YES and source.alias_certain), state)
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
                                              input_when is Tri.YES and source.alias_certain), state)
            weight_when = {
                module_facts.Saves.ALWAYS: recorded,
                module_facts.Saves.IF_INPUT_REQUIRES_GRAD: source.requires_grad & recorded,
                module_facts.Saves.NEVER: Tri.NO,
                module_facts.Saves.IF_WEIGHT_REQUIRES_GRAD: weight_rg & recorded,
            }[facts.saves_weight]
            weight = module.parameters.get("weight")
            if weight_when is not Tri.NO and weight is not None:
                self.save(weight, SavedRecord(label, facts.op, "weight", save_node, weight_when is Tri.YES), state)
        if facts.output_views_input:
            return source.fresh_view(Origin(f"the output of `{label}`", node), grad_enabled=state.grad_enabled)
        result = self.fresh_result(recorded, Origin(f"the output of `{label}`", save_node))
        if facts.saves_output and recorded is not Tri.NO:
            self.save(result, SavedRecord(label, facts.op, "output", save_node, recorded is Tri.YES), state)
        return self.with_history(result, [source], first_serial, state)

    def module_output(self, module: ModuleValue, source: Value, node: cst.CSTNode, state: State) -> Value:
        """The output of a module whose forward we do not follow: a new tensor, nothing saved."""
        if module.user_class is None and module_facts.module(module.class_name) is None and module.children is None:
            return UNKNOWN
        rg = module.has_trainable_parameters() | self.requires_grad_of(source)
        history = source.history if isinstance(source, TensorValue) else frozenset()
        return self.fresh_result(rg & state.grad_enabled, Origin(f"the output of `{module.class_name}`", node), history)


_OPERATOR_SYMBOLS = {
    "Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "FloorDivide": "//", "Modulo": "%",
    "Power": "**", "MatrixMultiply": "@", "BitAnd": "&", "BitOr": "|", "BitXor": "^",
    "LeftShift": "<<", "RightShift": ">>",
}


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`self.fc.weight` for a chain of names and attributes; `.softmax` when it starts elsewhere."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return "." + ".".join(reversed(parts)) if parts else None


def interpret(module: cst.Module, path: str | None = None, project: ProjectIndex | None = None) -> ScopeResult:
    """Interpret a parsed file; the result lists every in-place change with its context."""
    return Interpreter(module, path, project).run()
