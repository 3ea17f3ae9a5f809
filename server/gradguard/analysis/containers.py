"""Python's containers and builtins over abstract values: lists, tuples and dicts of tensors and
modules, comprehensions, `zip`, `enumerate`, `range`, `sum`, `getattr`.

A list or dict is one object (its identity is the `SequenceValue` / `DictValue`): `append`,
`lst[i] = t` and `d[k] = v` change it for every name that holds it, on every path (a weak
update). A read at an index that is not a constant is the join of the elements: a tensor that
has the saves of each, so an in-place change through it meets them all.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.values import (
    ANY_KEY,
    UNKNOWN,
    ArgumentValue,
    BuiltinRef,
    ConstValue,
    DictValue,
    FunctionRef,
    GeneratorValue,
    ImportRef,
    IntValue,
    ModuleValue,
    NumberValue,
    Origin,
    ParametersValue,
    SequenceValue,
    StringPattern,
    TensorKey,
    TensorValue,
    Tri,
    Value,
    evolved,
    join_values,
    truth,
)
from gradguard.knowledge import surface

MAX_UNROLLED_ELEMENTS = 16  # a loop or comprehension over a known sequence runs once per element up to this many
MAX_UNROLLED_MODULES = 64  # `model.modules()`, `model.apply(f)`, loops over modules: one by one up to this many


class Containers(Part):
    """The interpreter's part for Python's containers, comprehensions and builtins."""

    def join_elements(self, items: list[Value] | tuple[Value, ...], state: State) -> Value:
        """One value standing for any of `items` (tensors merged with the saves of each)."""
        result: Value | None = None
        for item in items:
            if result is None:
                result = item
            elif isinstance(result, TensorValue) and isinstance(item, TensorValue) \
                    and result.version_counter != item.version_counter:
                result = state.merge(result, item)
            elif isinstance(result, ModuleValue) and isinstance(item, ModuleValue) and result is not item:
                same = (result.class_name, result.user_class) == (item.class_name, item.user_class)
                result = result if same else UNKNOWN  # any instance of one class stands for the others
            elif isinstance(result, SequenceValue) and isinstance(item, SequenceValue) and result is not item \
                    and result.repeated is None and item.repeated is None and len(result.items) == len(item.items):
                result = SequenceValue(tuple(self.join_elements([a, b], state) for a, b in zip(result.items, item.items)))
            elif isinstance(result, IntValue) or isinstance(item, IntValue):
                result = IntValue() if _is_int(result) and _is_int(item) else UNKNOWN
            else:
                result = join_values(result, item)
        return result if result is not None else UNKNOWN

    def elements(self, value: Value) -> list[Value] | None:
        """The elements a loop over `value` sees, in order, when they are known one by one."""
        if isinstance(value, SequenceValue) and value.repeated is None:
            return list(value.items)
        if isinstance(value, ParametersValue) and (value.complete or value.tensors):
            return list(value.tensors)  # those it knows: what the others are is not followed
        if isinstance(value, ModuleValue) and isinstance(value.mapping, SequenceValue):
            return self.elements(value.mapping)
        if isinstance(value, ModuleValue) and value.class_name == "ModuleDict" and value.user_class is None:
            return [ConstValue(k) for k in value.named_children]  # iterating a ModuleDict gives its keys
        if isinstance(value, ModuleValue) and value.holds_parameters():
            if value.class_name == "ParameterDict":
                return [ConstValue(k) for k in value.parameters] if value.children_exact else None
            return list(value.parameters.values()) if value.children_exact else None
        if isinstance(value, ModuleValue) and value.children is not None and value.user_class is None:
            return list(value.children)
        if isinstance(value, DictValue) and value.complete:
            return [TensorKey.value_of(k) for k in value.entries]
        return None

    def iterate(self, iterable: Value, node: cst.CSTNode, state: State) -> Value:
        """What one iteration over `iterable` binds (any of its elements)."""
        if isinstance(iterable, GeneratorValue):
            return self.parts.user_calls.run_generator(iterable, state)
        if isinstance(iterable, TensorValue) and iterable.from_argument:
            return ArgumentValue("an element of an argument")  # a list as likely as a tensor's rows
        if isinstance(iterable, TensorValue):
            return self.parts.bindings.unbind(iterable, node, state).item(0)
        if isinstance(iterable, ArgumentValue):  # a tensor's rows or a list's elements: not known which
            return ArgumentValue(f"{iterable.name}[i]")
        if isinstance(iterable, SequenceValue) and iterable.repeated is not None:
            return iterable.repeated
        if isinstance(iterable, ModuleValue) and iterable.class_name == "ParameterList" and iterable.holds_parameters():
            return self.join_elements(list(iterable.parameters.values()), state) if iterable.parameters else UNKNOWN
        if isinstance(iterable, ParametersValue) and not iterable.complete:
            if iterable.tensors and all(p.is_leaf and p.requires_grad is Tri.YES for p in iterable.tensors):
                return self.join_elements(iterable.tensors, state)
            return UNKNOWN
        items = self.elements(iterable)
        return self.join_elements(items, state) if items is not None else UNKNOWN

    def subscript_of(self, base: SequenceValue | DictValue, index: Value, state: State) -> Value:
        """`base[index]` for a list, tuple or dict."""
        if isinstance(base, DictValue):
            key = TensorKey.of(index)
            if key is not None and key not in base.entries and (made := _default_of(base.factory)) is not None:
                base.entries[key] = made  # a `defaultdict`'s missing key
            if key is not None and key in base.entries:
                return base.entries[key]
            # a key not known: any value held (those stored under keys not known too); a key never stored
            # by name: one of those stored under keys not known (`dict(named_features)["p3"]`), else not known
            return self.join_elements(list(base.entries.values()), state) if key is None else base.entries.get(ANY_KEY, UNKNOWN)
        if isinstance(index, ConstValue) and isinstance(index.value, int):
            return base.item(index.value)
        if base.repeated is not None:
            return base.repeated
        if isinstance(index, (IntValue, ConstValue)) or index is UNKNOWN:
            return self.join_elements(base.items, state)
        return UNKNOWN

    def store_item(self, base: SequenceValue | DictValue, index: Value, value: Value, state: State) -> None:
        """`base[index] = value`: the container changes for every name holding it."""
        if isinstance(base, DictValue):
            key = TensorKey.of(index)
            if key is not None:
                base.entries[key] = value
            else:  # any key's value may be this one now
                base.complete = False
                base.entries = {k: self.join_elements([v, value], state) for k, v in base.entries.items()}
                base.entries.setdefault(ANY_KEY, value)
            return
        if base.repeated is not None:
            base.repeated = self.join_elements([base.repeated, value], state)
        elif isinstance(index, ConstValue) and isinstance(index.value, int) and -len(base.items) <= index.value < len(base.items):
            items = list(base.items)
            items[index.value] = value
            base.items = tuple(items)
        else:
            base.items = tuple(self.join_elements([item, value], state) for item in base.items)

    def call_container_method(self, receiver: SequenceValue | DictValue, method: str, args: list[Value],
                              kwargs: dict[str, Value], state: State) -> Value:
        """`lst.append(t)`, `lst.extend(...)`, `d.items()`, `d.get(k)` ..."""
        if isinstance(receiver, DictValue):
            if method in ("items", "values") and not receiver.complete:  # keys not known: any of the values held
                value = self.join_elements(list(receiver.entries.values()), state) if receiver.entries else UNKNOWN
                return UNKNOWN if value is UNKNOWN else SequenceValue(repeated=value if method == "values" else
                                                                      SequenceValue((UNKNOWN, value)))
            if method in ("items", "values"):
                return SequenceValue(tuple(SequenceValue((TensorKey.value_of(k), v)) if method == "items" else v
                                           for k, v in receiver.entries.items()))
            if method == "keys":
                return SequenceValue(tuple(TensorKey.value_of(k) for k in receiver.entries)) if receiver.complete else UNKNOWN
            if method in ("get", "pop") and args:
                found = self.subscript_of(receiver, args[0], state)  # (a `pop` on one path: the dict keeps the key)
                if found is UNKNOWN and len(args) > 1:
                    return args[1]
                return found
            if method == "__setitem__" and len(args) == 2:  # `inputs.__setitem__(name, x)` in a hook's lambda
                self.store_item(receiver, args[0], args[1], state)
                return ConstValue(None)
            if method in ("clear", "popitem", "__delitem__"):
                receiver.complete = False
            if method == "update" and args and isinstance(args[0], DictValue):
                receiver.entries.update(args[0].entries)
                receiver.complete = receiver.complete and args[0].complete
            elif method == "setdefault" and args and (key := TensorKey.of(args[0])) is not None and receiver.complete:
                return receiver.entries.setdefault(key, args[1] if len(args) > 1 else ConstValue(None))
            elif method in ("update", "setdefault"):
                receiver.complete = False
            return UNKNOWN
        if not receiver.mutable:
            return UNKNOWN
        if method in ("append", "insert", "extend", "pop", "remove", "clear"):
            receiver.known_length = False  # appends in a loop or a branch: how many ran is not known
        if method == "append" and args:
            if receiver.repeated is not None:
                receiver.repeated = self.join_elements([receiver.repeated, args[0]], state)
            else:
                receiver.items = (*receiver.items, args[0])
        elif method == "insert" and len(args) > 1:
            if receiver.repeated is not None:
                receiver.repeated = self.join_elements([receiver.repeated, args[1]], state)
            elif isinstance(args[0], ConstValue) and isinstance(args[0].value, int):
                items = list(receiver.items)
                items.insert(args[0].value, args[1])
                receiver.items = tuple(items)
            else:
                receiver.items = (*receiver.items, args[1])
        elif method == "extend" and args:
            added = self.elements(args[0]) if not isinstance(args[0], TensorValue) else None
            if added is not None and receiver.repeated is None:
                receiver.items = (*receiver.items, *added)
            else:
                receiver.repeated = self.join_elements([*receiver.items, *(added or [self.iterate(args[0], None, state)]),
                                                        *([receiver.repeated] if receiver.repeated is not None else [])],
                                                       state)
                receiver.items = ()
        elif method == "pop":
            return self.subscript_of(receiver, args[0] if args else ConstValue(-1), state)
        elif method == "copy":
            return SequenceValue(receiver.items, receiver.repeated, mutable=True)
        return UNKNOWN

    def loop_items(self, iterable: Value, loop: cst.For, state: State) -> list[Value] | None:
        """The elements `loop` runs over one by one, if known: the iterable's, or a search's indices."""
        items = self.elements(iterable)
        if items is not None or not self.parts.user_calls.syntax_fact(loop, _leaves_early):
            return items
        return _searched_range(loop, lambda e: self.parts.expressions.eval(e, state), state,
                               MAX_UNROLLED_ELEMENTS // self.run.unrolling)

    def call_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                     state: State) -> Value:
        """`zip`, `enumerate`, `range`, `len`, `sum`, `list`, `dict`, `getattr` ... over abstract values."""
        if name == "range":
            bounds = [a.value for a in args if isinstance(a, ConstValue) and isinstance(a.value, int)]
            if bounds and len(bounds) == len(args) and len(range(*bounds)) <= 4:  # a few known indices, each its own
                return SequenceValue(tuple(ConstValue(i) for i in range(*bounds)))
            return SequenceValue(repeated=IntValue())
        if name in _NUMBERS and args and not kwargs:
            return _number(name, args)
        if name == "len":
            if isinstance(args[0] if args else None, SequenceValue) and args[0].repeated is None and args[0].known_length:
                return ConstValue(len(args[0].items))
            if isinstance(args[0] if args else None, ModuleValue) and args[0].user_class is None \
                    and args[0].children is not None and args[0].children_exact:  # `len(model)` of a `Sequential`
                return ConstValue(len(args[0].children))
            return IntValue()
        if name in ("zip", "enumerate", "reversed", "list", "tuple", "sorted", "iter"):
            return self.sequence_builtin(name, args, kwargs, node, state)
        if name in ("map", "filter") and len(args) >= 2:
            return self.mapped(args[0], args[1:], node, state) if name == "map" else \
                self.filtered(args[0], args[1], node, state)
        if name == "next" and args:
            return self.iterate(args[0], node, state)
        if name == "sum" and args:
            return self.builtin_sum(args[0], args[1] if len(args) > 1 else kwargs.get("start", ConstValue(0)),
                                    node, state)
        if name == "dict":
            entries: dict[object, Value] = {}
            complete = True
            if args:
                pairs = self.elements(args[0]) if not isinstance(args[0], DictValue) else None
                if isinstance(args[0], DictValue):
                    entries.update(args[0].entries)
                    complete = args[0].complete
                elif pairs is None:  # pairs of keys not known (`dict(model.named_features(x))`, a generator run)
                    complete, pair = False, self.iterate(args[0], node, state)
                    entries.update({ANY_KEY: pair.items[1]} if _a_pair(pair) else {})
                else:
                    for pair in pairs:
                        if isinstance(pair, SequenceValue) and len(pair.items) == 2 and isinstance(pair.items[0], ConstValue):
                            entries[pair.items[0].value] = pair.items[1]
                        else:
                            complete = False
            entries.update({k: v for k, v in kwargs.items() if k not in ("*", "**")})
            return DictValue(entries, complete and "**" not in kwargs)
        if name == "getattr" and len(args) >= 2 and isinstance(args[1], ConstValue) and isinstance(args[1].value, str):
            found = self.parts.expressions.attribute_of(args[0], args[1].value, node, state)
            return args[2] if found is UNKNOWN and len(args) > 2 else found
        if name == "getattr" and len(args) == 2 and isinstance(args[0], ImportRef) \
                and args[0].qualname in surface.CHOSEN_BY_NAME:  # `getattr(torch.optim, config["optimizer"])`
            return ImportRef(surface.CHOSEN_BY_NAME[args[0].qualname])
        if name == "getattr" and len(args) >= 2 and isinstance(args[1], StringPattern) and isinstance(args[0], ModuleValue):
            names = [n for n in (*args[0].parameters, *args[0].named_children) if args[1].matches(n)]
            found = self.join_elements([self.parts.expressions.attribute_of(args[0], n, node, state) for n in names], state)
            return args[2] if found is UNKNOWN and len(args) > 2 else found
        if name == "setattr" and len(args) == 3 and isinstance(args[0], ModuleValue) and isinstance(args[1], ConstValue):
            args[0].named_children[str(args[1].value)] = args[2]
            return ConstValue(None)
        if name == "isinstance" and len(args) == 2:
            known = self.parts.expressions.isinstance_of(args[0], args[1])
            return ConstValue(known) if known is not None else UNKNOWN
        return UNKNOWN

    def mapped(self, function: Value, iterables: list[Value], node: cst.Call, state: State) -> Value:
        """`map(function, *iterables)`: `function` called on each known element (twice on one standing for
        all of them when they are not known one by one: distinct results stay distinct)."""
        columns = [self.elements(i) if not isinstance(i, TensorValue) else None for i in iterables]
        if all(c is not None for c in columns) and min(map(len, columns)) <= MAX_UNROLLED_ELEMENTS:  # type: ignore[arg-type]
            return SequenceValue(tuple(self.parts.calls.call_value(function, list(row), {}, node, state)
                                       for row in zip(*columns)))  # type: ignore[misc]
        element = self.join_elements([self.parts.calls.call_value(function, [self.iterate(i, node, state) for i in iterables],
                                                                  {}, node, state) for _ in range(2)], state)  # (twice, as a loop)
        return SequenceValue(repeated=element) if element is not UNKNOWN else UNKNOWN

    def filtered(self, predicate: Value, iterable: Value, node: cst.Call, state: State) -> Value:
        """`filter(predicate, iterable)`: the known elements `predicate` does not reject (a sequence of
        unknown length when it decides not every one)."""
        items = self.elements(iterable) if not isinstance(iterable, TensorValue) else None
        if items is None or len(items) > MAX_UNROLLED_ELEMENTS:
            element = self.iterate(iterable, node, state)
            return SequenceValue(repeated=element) if element is not UNKNOWN else UNKNOWN
        kept, decided = [], True
        for item in items:
            verdict = truth(item if isinstance(predicate, ConstValue) and predicate.value is None
                                else self.parts.calls.call_value(predicate, [item], {}, node, state))
            if verdict is not False:
                kept.append(item)
            decided = decided and verdict is not None
        if decided:
            return SequenceValue(tuple(kept))
        return SequenceValue(tuple(kept), known_length=False) if kept else UNKNOWN

    def builtin_sum(self, iterable: Value, start: Value, node: cst.Call, state: State) -> Value:
        """`sum(terms, start)`: a number when every term is one, else a new tensor in the graph of
        every tensor among the terms and `start` (a graph partly lost when some term is unknown)."""
        items = self.elements(iterable)
        terms = [*(items if items is not None else [self.iterate(iterable, node, state)]), start]
        if items is not None and all(isinstance(i, ConstValue) and _is_number(i.value) for i in terms):
            return ConstValue(sum(i.value for i in terms))  # type: ignore[union-attr]  # `sum((2, 2, 2, 2))`
        tensors = [term for term in terms if isinstance(term, TensorValue)]
        if not tensors:
            return UNKNOWN
        requires_grad = Tri.NO
        for tensor in tensors:
            requires_grad = requires_grad | tensor.requires_grad
        history = frozenset().union(*(t.history for t in tensors))
        known = all(t.graph_known for t in tensors) and all(
            isinstance(term, TensorValue) or (isinstance(term, ConstValue) and _is_number(term.value)) for term in terms)
        result = self.parts.tensor_ops.fresh_result(requires_grad & state.grad_enabled, Origin("a `sum()`", node), history)
        return result if known else evolved(result, graph_known=False)

    def sequence_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value], node: cst.Call,
                         state: State) -> Value:
        """`zip`, `enumerate`, `reversed`, `list`, `tuple`, `sorted` (whose order is not known), `iter`."""
        if not args:
            return SequenceValue(mutable=name == "list")
        if any(isinstance(a, GeneratorValue) for a in args) and name not in ("list", "tuple", "sorted"):
            return _lazily(name, args)
        known = [self.elements(a) if not isinstance(a, TensorValue) else None for a in args]
        if name == "zip":
            if any(k is not None for k in known):  # as long as the shortest known one; the others repeat
                rows = zip(*[k if k is not None else [self.iterate(a, node, state)] * min(len(x) for x in known if x is not None)
                             for k, a in zip(known, args)])
                return SequenceValue(tuple(SequenceValue(tuple(row)) for row in rows))
            return SequenceValue(repeated=SequenceValue(tuple(self.iterate(a, node, state) for a in args)))
        items = known[0]
        if name == "enumerate":
            start = args[1] if len(args) > 1 else kwargs.get("start", ConstValue(0))
            exact = not ((isinstance(args[0], SequenceValue) and not args[0].known_length)
                         or (isinstance(args[0], ModuleValue) and not args[0].children_exact))
            if items is not None and exact and isinstance(start, ConstValue) and isinstance(start.value, int):
                return SequenceValue(tuple(SequenceValue((ConstValue(i), v)) for i, v in enumerate(items, start.value)))
            if items is not None:
                return SequenceValue(tuple(SequenceValue((IntValue(), v)) for v in items))
            return SequenceValue(repeated=SequenceValue((IntValue(), self.iterate(args[0], node, state))))
        if items is None:
            element = self.iterate(args[0], node, state)
            return SequenceValue(repeated=element, mutable=name == "list") if element is not UNKNOWN else UNKNOWN
        if name == "reversed":
            items = items[::-1]
        if name == "sorted":
            return SequenceValue(repeated=self.join_elements(items, state), mutable=True)
        return SequenceValue(tuple(items), mutable=name == "list")

    def comprehension(self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp | cst.DictComp, state: State) -> Value:
        """A list, set, dict or generator comprehension: its elements, one per known element of
        what it iterates, else one standing for all of them."""
        produced: list[Value] = []
        entries: dict[object, Value] = {}
        exact = [True]
        bound: dict[str, Value | None] = {}

        def element() -> None:
            if isinstance(node, cst.DictComp):
                key = self.parts.expressions.eval(node.key, state)
                value = self.parts.expressions.eval(node.value, state)
                stored = TensorKey.of(key)  # a constant's value, a leaf tensor (`{p: Adam([p]) for p in ...}`)
                if stored is not None or isinstance(key, ConstValue):
                    entries[stored] = value
                else:
                    exact[0] = False
                produced.append(value)
            else:
                produced.append(self.parts.expressions.eval(node.elt, state))

        self._clause(node.for_in, state, element, exact, produced, bound)
        for name, value in bound.items():  # the comprehension's own names do not leak out
            if value is None:
                state.env.pop(name, None)
            else:
                state.env[name] = value
        if isinstance(node, cst.DictComp):
            return DictValue(entries, exact[0])
        if exact[0] or (produced and all(isinstance(v, ModuleValue) for v in produced)):
            # modules built in a loop of unknown length: the ones built, in order (`nn.Sequential(*[...])`)
            return SequenceValue(tuple(produced), mutable=isinstance(node, cst.ListComp), known_length=exact[0])
        return SequenceValue(repeated=self.join_elements(produced, state), mutable=isinstance(node, cst.ListComp))

    def _clause(self, comp: cst.BaseCompFor | None, state: State, element: Callable[[], None], exact: list[bool],
                produced: list[Value], bound: dict[str, Value | None]) -> None:
        """A comprehension's `for` clause and those inside it, then `element()` for each element
        they give (a method: a nested function calling itself would hold all of this in a cycle)."""
        if comp is None:
            element()
            return
        iterable = self.parts.expressions.eval(comp.iter, state)
        items = self.elements(iterable)
        if items is None or (len(items) > MAX_UNROLLED_ELEMENTS and not (
                len(items) <= MAX_UNROLLED_MODULES and all(map(an_object, items)))):  # twice, as a loop: a second
            exact[0] = False  # element sees the first
            items = [self.iterate(iterable, comp.iter, state)] * 2
        for index, item in enumerate(items):
            if not exact[0] and index and produced and all(isinstance(v, ModuleValue) for v in produced):
                break  # modules built from an unknown range: one of each is enough
            _remember_names(comp.target, state, bound)
            self.parts.bindings.bind(comp.target, item, state, comp.iter)
            if not any(self.parts.expressions.eval(test.test, state) == ConstValue(False) for test in comp.ifs):
                self._clause(comp.inner_for_in, state, element, exact, produced, bound)

    def dict_display(self, node: cst.Dict, state: State) -> Value:
        """`{k: v, **other}`."""
        entries: dict[object, Value] = {}
        complete = True
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                key = self.parts.expressions.eval(element.key, state)
                value = self.parts.expressions.eval(element.value, state)
                if isinstance(key, ConstValue):
                    entries[key.value] = value
                else:
                    complete = False
            else:
                spread = self.parts.expressions.eval(element.value, state)
                if isinstance(spread, DictValue):
                    entries.update(spread.entries)
                    complete = complete and spread.complete
                else:
                    complete = False
        return DictValue(entries, complete)


def int_arithmetic(left: Value, right: Value, op: Callable[[int, int], int] | None) -> Value | None:
    """`i + 1`, `len(x) - 2` ...: an integer (known when both are), or None when not integers;
    two number constants give theirs (`drop_path_rate * i / (n - 1)`)."""
    if op is not None and all(isinstance(v, ConstValue) and isinstance(v.value, (int, float))
                              and not isinstance(v.value, bool) for v in (left, right)) \
            and not (_is_int(left) and _is_int(right)):
        try:
            return ConstValue(op(left.value, right.value))  # type: ignore[arg-type, union-attr]
        except (ArithmeticError, ValueError):
            return None
    if not (_is_int(left) and _is_int(right)):
        numbers = all(isinstance(v, (IntValue, NumberValue)) or (isinstance(v, ConstValue) and _is_number(v.value))
                      for v in (left, right))
        return NumberValue() if op is not None and numbers else None  # `gamma * 0.5`, `lr / step`
    if op is not None and op(1, 2) == 0.5 and not (isinstance(left, ConstValue) and isinstance(right, ConstValue)):
        return None  # `i / 2` of an unknown integer: a float, unknown
    if op is not None and isinstance(left, ConstValue) and isinstance(right, ConstValue):
        try:
            return ConstValue(op(left.value, right.value))  # type: ignore[arg-type]
        except (ArithmeticError, ValueError):
            return IntValue()
    return IntValue()


def _lazily(name: str, args: list[Value]) -> Value:
    """`iter(gen)` and `enumerate(gen)` of a generator, whose body runs when they are iterated (the
    others, `zip` over one: not followed)."""
    generator = args[0]
    if name == "iter" and isinstance(generator, GeneratorValue):
        return generator
    if name == "enumerate" and isinstance(generator, GeneratorValue) and not generator.enumerated:
        return evolved(generator, enumerated=True)
    return UNKNOWN


_NUMBERS = frozenset({"float", "int", "round", "abs"})


def _number(name: str, args: list[Value]) -> Value:
    """`float(x)`, `int(x)`, `round(x[, n])`, `abs(x)` of a constant, or a number not known (of a
    tensor too: `float(loss)` is its value), never a tensor (`abs` of one is)."""
    if all(isinstance(a, ConstValue) and isinstance(a.value, (int, float, str)) for a in args):
        try:
            return ConstValue({"float": float, "int": int, "round": round, "abs": abs}[name](
                *(a.value for a in args)))  # type: ignore[operator,union-attr]
        except (TypeError, ValueError, OverflowError):
            return UNKNOWN
    if name == "abs" and not isinstance(args[0], (ConstValue, IntValue, NumberValue)):
        return UNKNOWN  # `abs(t)` of a tensor is a tensor
    return IntValue() if name == "int" or (name == "round" and len(args) == 1) else NumberValue()


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Value | None) -> bool:
    return isinstance(value, IntValue) or (isinstance(value, ConstValue) and isinstance(value.value, int)
                                           and not isinstance(value.value, bool))


def _names_in(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_in(e.value)]
    return []


BUILTINS = frozenset({"range", "len", "zip", "enumerate", "reversed", "list", "tuple", "sorted", "iter", "next",
                      "map", "filter", "sum", "dict", "getattr", "setattr", "isinstance", "str", "int", "float", "bool"})


def an_object(item: Value) -> bool:
    """A module or a parameter, or a pair naming one (`named_modules()`, `named_parameters()`): a loop
    over them (a comprehension too) runs once for each, up to `MAX_UNROLLED_MODULES`."""
    if isinstance(item, SequenceValue) and item.repeated is None and len(item.items) == 2:
        item = item.items[1]
    return isinstance(item, ModuleValue) or (isinstance(item, TensorValue) and item.is_leaf)


def _searched_range(loop: cst.For, evaluate: Callable[[cst.BaseExpression], Value], state: State,
                    most: int) -> list[Value] | None:
    """The indices of `for i in range(...)` over more than the few `range` gives one by one, up to
    `most`, for a loop whose body may leave it early (`break`, `return`: `_leaves_early`): a search,
    whose index after the loop is the one it stopped at (`evaluate` gives the bounds' values)."""
    call = loop.iter
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "range"
            and call.args and not any(a.keyword or a.star for a in call.args)
            and state.lookup("range") is None):
        return None
    bounds = [evaluate(a.value) for a in call.args]
    if not all(isinstance(b, ConstValue) and type(b.value) is int for b in bounds):
        return None
    indices = range(*(b.value for b in bounds))  # type: ignore[union-attr]
    return [ConstValue(i) for i in indices] if len(indices) <= most else None


def _leaves_early(loop: cst.For) -> bool:
    """Whether a loop's body has a `break` or `return` of its own (not in a nested loop or function)."""
    pending: list[cst.CSTNode] = list(loop.body.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.Break, cst.Return)):
            return True
        if not isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            pending.extend(node.children)
    return False


def _default_of(factory: Value | None) -> Value | None:
    """What a `defaultdict` made with `factory` stores under a key read before it was set (None: not known)."""
    made = {"list": lambda: SequenceValue(mutable=True), "dict": DictValue, "int": lambda: ConstValue(0),
            "float": lambda: ConstValue(0.0)}
    if isinstance(factory, FunctionRef) and factory.name == "<lambda>" and isinstance(factory.node, cst.FunctionDef) \
            and not factory.node.params.params and isinstance(factory.node.body, cst.SimpleStatementSuite):
        body = factory.node.body.body[0].value  # type: ignore[attr-defined]  # `defaultdict(lambda: [])`
        called = body.func.value if isinstance(body, cst.Call) and isinstance(body.func, cst.Name) and not body.args else ""
        kind = "list" if (isinstance(body, cst.List) and not body.elements) or called == "list" else \
            "dict" if (isinstance(body, cst.Dict) and not body.elements) or called == "dict" else ""
        return made[kind]() if kind else None
    chosen = made.get(factory.name) if isinstance(factory, BuiltinRef) else None
    return chosen() if chosen is not None else None


def _a_pair(value: Value) -> bool:
    return isinstance(value, SequenceValue) and value.repeated is None and len(value.items) == 2


def _remember_names(target: cst.BaseExpression, state: State, bound: dict[str, Value | None]) -> None:
    """Keep what the names a comprehension binds held before it (its names are its own)."""
    for name in _names_in(target):
        if name not in bound:
            bound[name] = state.env.get(name)
