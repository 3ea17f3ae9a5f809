"""The transfer of each kind of expression: names, literals, attributes, subscripts, operators,
comparisons, `lambda`, `yield`; calls are `calls.py`'s."""

from __future__ import annotations

import ast
import sys
from functools import lru_cache
from typing import Callable, Sequence

import libcst as cst

from gradguard.analysis.bindings import single_index
from gradguard.analysis.containers import BUILTINS, MAX_UNROLLED_ELEMENTS, int_arithmetic
from gradguard.analysis.custom_functions import is_autograd_function
from gradguard.analysis.names import decorated_as, is_torch_name, normalise_torch_name, qualname_of
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    UNKNOWN,
    UNKNOWN_INDEX_VIEW,
    ArgumentValue,
    BuiltinRef,
    ConstValue,
    DictValue,
    DistributionValue,
    FunctionApply,
    FunctionRef,
    GeneratorValue,
    ImportRef,
    IntValue,
    LostValue,
    ModuleValue,
    OptimizerValue,
    ParametersValue,
    Origin,
    PartialValue,
    SequenceValue,
    StringPattern,
    TensorValue,
    Tri,
    Value,
    join_values,
    truth,
)
from gradguard.knowledge import surface
from gradguard.knowledge.ops import TorchVersion, known_torch_version
from gradguard.source.parser import SKIPPED


_PROPERTIES = ("property", "functools.cached_property", "cached_property")  # read as an attribute: the method runs


class Expressions(Part):
    """Evaluates expressions to abstract values: one handler per kind of expression, in `_expression_handlers`."""

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
            self.parts.bindings.see(node, value, state)
            return value
        if name in self.run.definitions.globals:
            return self.run.definitions.globals[name]
        if name in ("True", "False", "None"):
            return ConstValue({"True": True, "False": False, "None": None}[name])
        if name in BUILTINS:
            return BuiltinRef(name)
        if self.run.definitions.star_imports and self.run.project is not None and self.run.definitions.path is not None:
            found = self.run.project.star_imported(self.run.definitions.path, self.run.definitions.star_imports, name)
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
        if _skipped_display(node):  # a long table the parser never saw: its elements and their number unknown
            return SequenceValue(repeated=UNKNOWN, mutable=isinstance(node, cst.List), known_length=False)
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
            if attribute == "__version__" and normalise_torch_name(owner.qualname) in ("torch", "torch.version"):
                return ConstValue(known_torch_version())  # `int(torch.__version__.split(".")[1]) >= 1`
            if attribute == "version_info" and owner.qualname == "sys":  # `if sys.version_info >= (3, 8):`
                return SequenceValue(tuple(ConstValue(number) for number in sys.version_info[:3]))
            return ImportRef(f"{owner.qualname}.{attribute}")
        if isinstance(owner, ModuleValue):
            found = self.parts.module_objects.module_attribute(owner, attribute, node)
            if isinstance(found, FunctionRef) and found.bound_self is owner and isinstance(found.node, cst.FunctionDef) \
                    and any(decorated_as(found.node, kind) for kind in _PROPERTIES):
                return self.parts.user_calls.call_user_function(found.node, found.definitions, owner, [], {}, node, state)
            return found
        if isinstance(owner, SequenceValue) and owner.repeated is None and attribute in _NAMED_RESULTS:
            return owner.item(_NAMED_RESULTS[attribute])  # `x.max(dim=1).values`
        if isinstance(owner, ArgumentValue) and attribute in ("data", "T", "mT", "grad"):
            owner = self.parts.bindings.promote(owner, state)
        if isinstance(owner, TensorValue):
            return self.parts.tensor_ops.tensor_attribute(owner, attribute, node, state)
        if isinstance(owner, DistributionValue) and attribute in surface.DISTRIBUTION_TENSORS:
            return self.parts.torch_calls.distribution_method(owner, attribute, [], node, state)
        if isinstance(owner, OptimizerValue) and attribute == "param_groups":  # one group: its parameters, options not known
            current = _held_parameters(state)  # as the modules hold them now (`requires_grad_(False)` since)
            params = tuple(current.get(p.version_counter, p) for p in owner.parameters)
            return SequenceValue((DictValue({"params": ParametersValue(params, False)}, complete=False),))
        if isinstance(owner, FunctionRef) and attribute == "__name__" and owner.name != "<lambda>":
            return ConstValue(owner.name)  # a registry's key: `REGISTRY[cls.__name__] = cls`
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
        if found is not None and decorated_as(found[0], "classmethod"):  # `cls` is the class: `cls(...)` builds one
            return PartialValue(FunctionRef(attribute, found[0], found[1]), (owner,), {})
        if found is not None:
            return FunctionRef(attribute, found[0], found[1])
        shared = owner.definitions.class_attribute(owner.name, attribute)
        return shared if shared is not None else UNKNOWN

    def _subscript(self, node: cst.Subscript, state: State) -> Value:
        base = self.eval(node.value, state)
        if isinstance(base, ImportRef) and not is_torch_name(base.qualname):
            base = self.parts.user_calls.resolve_import(base)  # `ACT2FN["gelu"]`
        kinds = [self.eval_slice(element, state) for element in node.slice]
        base = self.parts.bindings.keyed(base, kinds, state)
        if isinstance(base, SequenceValue) and base.repeated is None and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Slice) \
                and (bounds := known_slice(node.slice[0].slice, lambda part: self.eval(part, state))) is not None:
            return SequenceValue(base.items[bounds], mutable=base.mutable)  # `list(model.children())[:-2]`
        if isinstance(base, (SequenceValue, DictValue)):
            if isinstance(base, SequenceValue) and len(kinds) == 1 and kinds[0] == "basic":
                return SequenceValue(repeated=self.parts.containers.join_elements(base.items, state)) if base.repeated is None \
                    else base  # a slice of the list
            return self.parts.containers.subscript_of(base, single_index(kinds), state)
        if isinstance(base, ModuleValue) and len(kinds) == 1 and not isinstance(kinds[0], str) \
                and (item := self.parts.pretrained.model_output_item(base, kinds[0])) is not None:
            return item
        if isinstance(base, ModuleValue) and base.user_class is not None and base.definitions is not None \
                and len(kinds) == 1 and not isinstance(kinds[0], str) \
                and (getitem := base.definitions.method(base.user_class, "__getitem__")) is not None:
            return self.parts.user_calls.call_user_function(getitem[0], getitem[1], base, [kinds[0]], {}, node, state)
        if isinstance(base, ModuleValue) and base.mapping is not None and len(kinds) == 1 \
                and not isinstance(kinds[0], str):
            return self.parts.containers.subscript_of(base.mapping, kinds[0], state)
        if isinstance(base, ModuleValue) and base.holds_parameters():
            sliced = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)
            return self.parts.module_objects.parameter_at(
                base, known_slice(node.slice[0].slice, lambda part: self.eval(part, state)) if sliced else kinds[0] if len(kinds) == 1 else None,  # type: ignore[arg-type]
                state)
        if isinstance(base, ModuleValue) and base.user_class is None and base.children is not None \
                and base.children_exact and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            # `self.layers[:-1]`, `self.features[:4]`: a container of the same kind (bounds not known: any of them)
            bounds = known_slice(node.slice[0].slice, lambda part: self.eval(part, state))
            return ModuleValue(base.class_name, node, children=base.children[bounds or slice(None)], training=base.training,
                               children_exact=bounds is not None)
        if isinstance(base, ModuleValue):
            index = kinds[0] if len(kinds) == 1 else None
            if base.children is not None and isinstance(index, ConstValue) and isinstance(index.value, int):
                if -len(base.children) <= index.value < len(base.children):
                    return base.children[index.value]
            if isinstance(index, ConstValue) and isinstance(index.value, str) and index.value in base.named_children:
                return base.named_children[index.value]
            if base.children and not isinstance(index, ConstValue):
                return self.parts.containers.join_elements(base.children, state)
            if base.class_name == "ModuleDict" and base.user_class is None and base.named_children \
                    and not isinstance(index, ConstValue):  # `self.heads[task]`: any of its modules
                return self.parts.containers.join_elements(list(base.named_children.values()), state)
            return UNKNOWN
        if isinstance(base, ArgumentValue):
            base = self.parts.bindings.promote(base, state)
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
        origin = Origin("an indexed copy" if advanced else "an indexed tensor", node)
        return self.parts.tensor_ops.fresh_result(base.requires_grad & state.grad_enabled, origin, base.history)

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
        integer = int_arithmetic(left, right, _INT_OPERATORS.get(operator))
        if integer is not None:
            return integer
        if operator == "Add" and isinstance(left, ConstValue) and isinstance(right, ConstValue) \
                and isinstance(left.value, str) and isinstance(right.value, str):  # `"_scale_" + mode`
            return ConstValue(left.value + right.value)
        if isinstance(left, SequenceValue) and isinstance(right, SequenceValue) and operator == "Add" \
                and left.repeated is None and right.repeated is None:  # `list(a.parameters()) + list(b.parameters())`
            return SequenceValue(left.items + right.items, mutable=left.mutable)
        if aten is None:
            return UNKNOWN
        if isinstance(left, TensorValue) or isinstance(right, TensorValue):
            if isinstance(left, ArgumentValue):
                left = self.parts.bindings.promote(left, state)
            if isinstance(right, ArgumentValue):
                right = self.parts.bindings.promote(right, state)
            if isinstance(left, TensorValue):
                return self.parts.tensor_ops.apply_aten(aten, [left, right], {}, node, state, None)
            reflected = {"add": "add", "mul": "mul"}.get(aten)
            if reflected is not None:
                return self.parts.tensor_ops.apply_aten(reflected, [right, left], {}, node, state, None)
            if aten == "pow":  # `2 ** a`: `pow.Scalar`, which saves its exponent and its result
                return self.parts.tensor_ops.apply_aten(aten, [left, right], {}, node, state, None)
            origin = Origin(f"the result of `{aten}`", node)
            return self.parts.tensor_ops.fresh_result(right.requires_grad & state.grad_enabled, origin, right.history)
        return UNKNOWN

    def _comparison(self, node: cst.Comparison, state: State) -> Value:
        """`x is None`, `act == "relu"`, `"k" in d`: a known bool where the values decide it; `x > 0`
        of a tensor: a new tensor of bools, in no graph."""
        left = self.eval(node.left, state)
        if len(node.comparisons) == 1 and type(node.comparisons[0].operator).__name__ in _ELEMENTWISE:
            right = self.eval(node.comparisons[0].comparator, state)
            if isinstance(left, TensorValue) or isinstance(right, TensorValue):
                return self.parts.tensor_ops.fresh_result(Tri.NO, Origin("a comparison", node))
            comparisons: Sequence[tuple[cst.ComparisonTarget, Value | None]] = [(node.comparisons[0], right)]
        else:
            comparisons = [(target, None) for target in node.comparisons]
        outcome: bool | None = True
        default_of = left.default_of if isinstance(left, ConstValue) else None
        for target, evaluated in comparisons:
            right = self.eval(target.comparator, state) if evaluated is None else evaluated
            decided = _compare(type(target.operator).__name__, left, right) if outcome is not None else None
            outcome = None if decided is None else (outcome and decided)
            left = right
            default_of = default_of or (right.default_of if isinstance(right, ConstValue) else None)
        return ConstValue(outcome, default_of) if outcome is not None else UNKNOWN

    def _boolean(self, node: cst.BooleanOperation, state: State) -> Value:
        left = self.parts.user_calls.imported_constant(self.eval(node.left, state))
        decided = truth(left)
        if decided is not None:  # `x or default`: the operand Python returns; the right side runs only if needed
            return left if decided is isinstance(node.operator, cst.Or) else self.eval(node.right, state)
        right = self.parts.user_calls.imported_constant(self.eval(node.right, state))
        known = [v.value if isinstance(v, ConstValue) and isinstance(v.value, bool) else None for v in (left, right)]
        if isinstance(node.operator, cst.And):
            if False in known:
                return ConstValue(False)
            return ConstValue(True) if known == [True, True] else UNKNOWN
        if True in known:
            return ConstValue(True)
        return ConstValue(False) if known == [False, False] else UNKNOWN

    def _unary(self, node: cst.UnaryOperation, state: State) -> Value:
        operand = self.parts.user_calls.imported_constant(self.eval(node.expression, state))
        if isinstance(operand, TensorValue):
            return self.parts.tensor_ops.fresh_result(operand.requires_grad & state.grad_enabled, Origin("a negation", node),
                                                      operand.history)
        if isinstance(operand, ConstValue) and isinstance(operand.value, (int, float)) and isinstance(node.operator, cst.Minus):
            return ConstValue(-operand.value)
        if isinstance(node.operator, cst.Not) and isinstance(operand, ConstValue):
            return ConstValue(not operand.value, operand.default_of)
        return UNKNOWN

    def _named_expr(self, node: cst.NamedExpr, state: State) -> Value:
        value = self.eval(node.value, state)
        self.parts.bindings.bind(node.target, value, state, node.value)
        return value

    def _yield(self, node: cst.Yield, state: State) -> Value:
        """`yield value` (`yield from iterable`: each of its elements): an element of the iteration
        running the generator, if one does; what the generator is sent back is not known."""
        if isinstance(node.value, cst.From):
            value = self.parts.containers.iterate(self.eval(node.value.item, state), node, state)
        else:
            value = self.eval(node.value, state) if node.value is not None else ConstValue(None)
        self.parts.user_calls.yielded(node, value, state)
        return UNKNOWN

    def _lambda(self, node: cst.Lambda, state: State) -> Value:
        """`lambda x: ...`: a function like a `def` returning its expression, seeing the names around it."""
        definitions = self.run.call_definitions[-1] if self.run.call_stack else self.run.definitions
        inside = bool(self.run.call_stack) or self.run.analysing is not None
        return FunctionRef("<lambda>", self.parts.user_calls.syntax_fact(node, _lambda_function), definitions,
                           closure=state.env if inside else None)

    def _call(self, node: cst.Call, state: State) -> Value:
        return self.parts.calls.eval_call(node, state)

    def _comprehension(self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp | cst.DictComp, state: State) -> Value:
        return self.parts.containers.comprehension(node, state)

    def _dict(self, node: cst.Dict, state: State) -> Value:
        return self.parts.containers.dict_display(node, state)

    def _if_exp(self, node: cst.IfExp, state: State) -> Value:
        test = self.parts.user_calls.imported_constant(self.eval(node.test, state))
        if isinstance(test, ConstValue) and isinstance(test.value, bool):
            return self.eval(node.body if test.value else node.orelse, state)
        body, orelse = self.eval(node.body, state), self.eval(node.orelse, state)
        if isinstance(body, TensorValue) and isinstance(orelse, TensorValue) and body.version_counter != orelse.version_counter:
            return state.merge(body, orelse)
        return join_values(body, orelse)

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
        if isinstance(subject, ModuleValue) and subject.user_class is not None and subject.definitions is not None:
            return _user_instance(subject, candidates)
        if not isinstance(subject, ModuleValue):
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
    _expression_handlers: dict[type, Callable[[Expressions, object, State], Value]] = {
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
        cst.ListComp: _comprehension,
        cst.GeneratorExp: _comprehension,
        cst.SetComp: _comprehension,
        cst.DictComp: _comprehension,
        cst.Dict: _dict,
    }


_ITERABLE_TYPES = frozenset({"collections.abc.Iterable", "typing.Iterable", "collections.abc.Sequence",
                             "typing.Sequence"})
_BUILTIN_TYPES = {"tuple": tuple, "list": list, "dict": dict, "str": str, "int": int, "float": float, "bool": bool}


def _skipped_display(node: cst.Tuple | cst.List) -> bool:
    """Whether `node` is a long literal or data table the parser skipped (`parser.SKIPPED`)."""
    if len(node.elements) != 1:
        return False
    value = node.elements[0].value
    return isinstance(value, cst.SimpleString) and value.value.strip("'").startswith(SKIPPED)


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


def known_slice(node: cst.Slice, evaluate: Callable[[cst.BaseExpression], Value]) -> slice | None:
    """`a[1:-2]`'s slice, or `layers[: config.num_hidden_layers]`'s: its bounds integers known here
    (`evaluate` gives the value of a bound)."""
    literal = _constant_slice(node)
    if literal is not None or all(part is None or isinstance(part, cst.Integer) or (
            isinstance(part, cst.UnaryOperation) and isinstance(part.expression, cst.Integer))
            for part in (node.lower, node.upper, node.step)):
        return literal
    values = [None if part is None else evaluate(part) for part in (node.lower, node.upper, node.step)]
    if not all(v is None or (isinstance(v, ConstValue) and (v.value is None or type(v.value) is int)) for v in values):
        return None
    bounds = [v.value if isinstance(v, ConstValue) else None for v in values]
    return None if bounds[2] == 0 else slice(*bounds)  # type: ignore[arg-type]


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


def _held_parameters(state: State) -> dict[int, TensorValue]:
    """The parameters the modules this scope reaches hold now, by version counter."""
    held: dict[int, TensorValue] = {}
    for module in state.modules():
        for parameter in module.parameters.values():
            held.setdefault(parameter.version_counter, parameter)
    return held


def _lambda_function(node: cst.Lambda) -> cst.FunctionDef:
    """A lambda as the one-line `def` it stands for, built around its own parameter and body nodes (so
    that positions inside it are the lambda's; its statement is the caller's, as a one-line def's)."""
    return cst.FunctionDef(cst.Name("lambda_"), node.params, cst.SimpleStatementSuite([cst.Return(node.body)]))


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
    if operator in ("In", "NotIn") and isinstance(left, ConstValue):
        found = _contains(left.value, right)
        return None if found is None else found == (operator == "In")
    if operator in _ORDERINGS and all(isinstance(v, ConstValue) and isinstance(v.value, (int, float))
                                      and not isinstance(v.value, bool) for v in (left, right)):
        return _ORDERINGS[operator](left.value, right.value)  # `if block_dpr > 0.:`
    if operator in _ORDERINGS and (ordered := _ordered(left, right)) is not None:
        return _ORDERINGS[operator](*ordered)  # `if torch.__version__ >= "2.1":`, `if (major, minor) < (2, 1):`
    return None


def _ordered(left: Value, right: Value) -> tuple[object, object] | None:
    """Two operands Python orders as the analysis knows them: tuples of numbers, or versions (one
    is `torch.__version__` or a parsed version, the other a version string, a tuple or a version)."""
    operands: list[str | tuple[int, ...]] = []
    for value in (left, right):
        if isinstance(value, ConstValue) and isinstance(value.value, str):
            operands.append(value.value)
        elif isinstance(value, SequenceValue) and value.repeated is None and value.items and all(
                isinstance(e, ConstValue) and type(e.value) is int for e in value.items):
            operands.append(tuple(e.value for e in value.items))  # type: ignore[union-attr]
        else:
            return None
    first, second = operands
    if isinstance(first, tuple) and isinstance(second, tuple):
        return first, second
    if not isinstance(first, TorchVersion) and not isinstance(second, TorchVersion):
        return None
    return TorchVersion(".".join(map(str, first)) if isinstance(first, tuple) else first), second


_ELEMENTWISE = frozenset({"LessThan", "LessThanEqual", "GreaterThan", "GreaterThanEqual", "Equal", "NotEqual"})


def _user_instance(subject: ModuleValue, candidates: Sequence[Value]) -> bool | None:
    """`isinstance(m, C)` for an object of a class of the project: its classes and their bases
    decide, unless a base comes from a file not read (which may derive from `C`)."""
    lineage = list(subject.definitions.mro(subject.user_class))  # type: ignore[union-attr,arg-type]
    bases = [b for definitions, name in lineage for b in definitions.bases.get(name, ())]
    torch_bases = {normalise_torch_name(b.qualname) for b in bases if isinstance(b, ImportRef) and is_torch_name(b.qualname)}
    # a base from a file not read, or one the analysis lost (`try: from apex ... except: LayerNorm = ...`),
    # may derive from any class; a torch base other than `nn.Module` from torch's private ones (`_ConvNd`)
    unread = any(not (isinstance(b, FunctionRef) and isinstance(b.node, cst.ClassDef)) and not (
        isinstance(b, ImportRef) and is_torch_name(b.qualname)) for b in bases)
    only_module = torch_bases <= {"torch.nn.Module"}
    for candidate in candidates:
        if isinstance(candidate, FunctionRef) and isinstance(candidate.node, cst.ClassDef):
            if any(d is candidate.definitions and n == candidate.name for d, n in lineage):
                return True
        elif (name := qualname_of(candidate)) is not None and is_torch_name(name):
            if normalise_torch_name(name) in torch_bases or (normalise_torch_name(name) == "torch.nn.Module" and subject.is_module):
                return True
            if not only_module:
                return None
        else:
            return None
    return None if unread else False


def _contains(item: object, container: Value) -> bool | None:
    """`item in container` when the container is known whole: a dict's keys, a tuple of constants
    (not a list: code the analysis does not follow may change it), a string's substrings
    (`"lora_" not in name`)."""
    if isinstance(container, DictValue):
        return item in container.entries if container.complete else None
    if isinstance(container, ConstValue) and isinstance(container.value, str):
        return item in container.value if isinstance(item, str) else None
    if isinstance(container, SequenceValue) and not container.mutable and container.repeated is None \
            and all(isinstance(element, ConstValue) for element in container.items):
        return any(item == element.value for element in container.items)  # type: ignore[union-attr]
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


@lru_cache(maxsize=4096)
def _literal(code: str, default: object) -> object:
    """The value of a number or string literal (libcst's `evaluated_value`, remembered: the same
    literals come back on every keystroke); a plain decimal integer or a string without escapes
    or prefixes is read directly."""
    if code.isascii() and code.isdigit() and (code[0] != "0" or code.strip("0") == ""):
        return int(code)
    if len(code) >= 2 and code[0] == code[-1] and code[0] in "'\"" and "\\" not in code and "\n" not in code \
            and code[1:-1].find(code[0]) < 0:
        return code[1:-1]
    try:
        return ast.literal_eval(code)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return default
