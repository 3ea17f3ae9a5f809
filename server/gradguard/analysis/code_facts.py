"""What one walk of a function's code tells: the names and attributes it uses, what it changes,
whether it may change a tensor in place.

Every finding is an in-place change the interpreter meets (`SavedTensors.mutate`), and it meets
one only at a line of a few syntactic kinds (`CodeFacts.changes`): an augmented assignment of
what may be a tensor, an item assignment (not of a dict's string key), a call or attribute whose
name ends in `_` (`add_`, `copy_`, `trunc_normal_`), `.data`, a keyword `out=`, `inplace=` or
`max_norm=`, an optimizer's `step`, `apply`, `load_state_dict`, the functionals and modules whose
`inplace` may be given by position (`F.relu(x, True)`, `nn.ReLU(True)`), and the few ops that
update an argument of another name (`batch_norm`'s running statistics). A call of a module built
in place (`ReLU(inplace=True)`) is a change too, which the module's value tells (`quiet.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from gradguard.analysis.names import dotted_name
from gradguard.knowledge import surface
from gradguard.source.skeleton import LazyFunctionDef
from gradguard.source.walk import bound_names, descendants

__all__ = ["CodeFacts", "POSITIONAL_INPLACE", "SITE_KEYWORDS", "code_facts", "is_site_name", "may_change_text",
           "renamed_site"]

_SITE_ATTRIBUTES = frozenset({"data", "step", "apply", "load_state_dict"})
SITE_KEYWORDS = frozenset({"out", "inplace", "max_norm"})
# functionals and modules whose `inplace` (`max_norm` for embeddings) may be given by position: how
# many positional arguments give it (`F.relu(x, True)`, `nn.Dropout(0.1, True)`; a test checks torch's signatures)
POSITIONAL_INPLACE = {
    "relu": 2, "relu6": 2, "elu": 3, "selu": 2, "celu": 3, "leaky_relu": 3, "hardtanh": 4, "threshold": 4,
    "rrelu": 5, "silu": 2, "mish": 2, "hardswish": 2, "hardsigmoid": 2, "dropout": 4, "dropout1d": 4,
    "dropout2d": 4, "dropout3d": 4, "alpha_dropout": 4, "feature_alpha_dropout": 4,
    "ReLU": 1, "ReLU6": 1, "ELU": 2, "SELU": 1, "CELU": 2, "LeakyReLU": 2, "Hardtanh": 3, "Threshold": 3,
    "RReLU": 3, "SiLU": 1, "Mish": 1, "Hardswish": 1, "Hardsigmoid": 1, "Dropout": 2, "Dropout1d": 2,
    "Dropout2d": 2, "Dropout3d": 2, "AlphaDropout": 2, "FeatureAlphaDropout": 2, "Embedding": 4, "EmbeddingBag": 3,
}
# ops whose schema changes an argument with no `_` in their name (`knowledge/ops.json`'s "mutable" kind)
_MUTABLE_OPS = frozenset({"batch_norm", "instance_norm", "rrelu", "rrelu_with_noise", "cummax", "cummin",
                          "fused_moving_avg_obs_fake_quant", "fbgemm_linear_fp16_weight",
                          "fbgemm_linear_fp16_weight_fp32_activation"})


@dataclass(frozen=True)
class CodeFacts:
    """What one walk of a function's code (defaults and body) tells."""

    changes: bool  # a line that may change a tensor in place
    names: frozenset[str]  # every name it refers to
    chains: frozenset[str]  # every dotted chain of attributes from a name (`F.relu`, `layers.mlp.Mlp`)
    attributes: frozenset[str]  # every attribute name, and every string constant (`getattr(self, "fc")`)
    roots: frozenset[str]  # the first names of what it assigns, deletes or calls a method of (`BUF.append`)
    declares_global: bool  # a `global` or `nonlocal` statement
    returns_value: bool  # a `return` or `yield` of a value (a nested function's too)
    runs_backward: bool  # a `.backward` or `.grad` of a value (`loss.backward()`, `torch.autograd.grad(...)`)
    self_escapes: bool  # `self` used otherwise than for an attribute (`self(x)`, `helper(self)`, `return self`)


# what the text of most lines that may change a tensor has: a body whose text has none is worth
# parsing to tell (taking text with one for a change is safe: it only leaves an entry point interpreted)
_LIKELY_CHANGE = re.compile(r"""(?<![=!<>])(?:\*\*|//|>>|<<|[-+*/%&|^@])=(?!=)  # an augmented assignment
    | \]\s*=(?!=)  # an item's
    | \b(?!__)\w*_\b  # a name ending in `_`
    | \.\s*(?:data|step|apply|load_state_dict)\b | \b(?:inplace|max_norm|out|global|nonlocal)\b""", re.VERBOSE)


# `operator`'s in-place functions (`functools.reduce(operator.imul, gates)` is `a *= b`)
_INPLACE_OPERATORS = frozenset(name.removeprefix("operator.") for name, method in surface.OPERATOR_METHODS.items()
                               if method.endswith("_"))
_INPLACE_OPERATOR = re.compile(rf"\b(?:{'|'.join(sorted(_INPLACE_OPERATORS))})\b")


def may_change_text(text: str) -> bool:
    """Whether code of `text` may change a tensor, by its text alone (`_LIKELY_CHANGE`, the ops
    that change an argument of another name, `operator.imul`)."""
    return _LIKELY_CHANGE.search(text) is not None or any(name in text for name in _MUTABLE_OPS) \
        or _INPLACE_OPERATOR.search(text) is not None


def is_site_name(name: str) -> bool:
    return (name.endswith("_") and not name.startswith("__")) or name in _INPLACE_OPERATORS


def renamed_site(name: str, qualname: str) -> bool:
    """Whether a torch name imported as `name` changes a tensor under a name the walk cannot see
    (`from torch.nn.init import zeros_ as zero`, `from torch.nn.functional import relu as act`)."""
    last = qualname.rpartition(".")[2]
    return is_site_name(last) or (last != name and (last in POSITIONAL_INPLACE or last in _MUTABLE_OPS))


_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
_RECEIVERS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def _stores_item(target: cst.BaseExpression) -> bool:
    """Whether assigning `target` may write into a tensor: an item (not a dict's string key), `.data`."""
    kind = type(target)
    if kind is cst.Subscript:
        elements = target.slice  # type: ignore[attr-defined]
        return not (len(elements) == 1 and type(elements[0].slice) is cst.Index
                    and type(elements[0].slice.value) in _STRINGS)
    if kind is cst.Attribute:
        return target.attr.value == "data"  # type: ignore[attr-defined]
    if kind is cst.Tuple or kind is cst.List:
        return any(_stores_item(e.value) for e in target.elements)  # type: ignore[attr-defined]
    if kind is cst.StarredElement:
        return _stores_item(target.value)  # type: ignore[attr-defined]
    return False


def _call_changes(node: cst.Call) -> bool:
    func = node.func
    name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""  # type: ignore[attr-defined]
    if is_site_name(name) or name in _MUTABLE_OPS:
        return True
    if any(arg.keyword is not None and arg.keyword.value in SITE_KEYWORDS for arg in node.args):
        return True
    given = POSITIONAL_INPLACE.get(name)
    return given is not None and (any(arg.star for arg in node.args)
                                  or sum(arg.keyword is None for arg in node.args) >= given)


_PLAIN_CALLS = frozenset({"len", "int", "float", "str", "bool", "round"})


def _plain(value: cst.BaseExpression) -> bool:
    """Whether `value` is never a tensor: a constant (or a tuple of them), a string, a length."""
    kind = type(value)
    if kind is cst.Integer or kind is cst.Float or kind is cst.Imaginary or kind in _STRINGS:
        return True
    if kind is cst.Name:
        return value.value in ("True", "False", "None")  # type: ignore[attr-defined]
    if kind is cst.UnaryOperation:
        return _plain(value.expression)  # type: ignore[attr-defined]
    if kind is cst.Tuple or kind is cst.List:
        return all(type(e) is cst.Element and _plain(e.value) for e in value.elements)  # type: ignore[attr-defined]
    return kind is cst.Call and type(value.func) is cst.Name and value.func.value in _PLAIN_CALLS  # type: ignore[attr-defined]


_CONTAINER_CALLS = frozenset({"dict", "list", "set", "OrderedDict", "defaultdict"})


def _container(value: cst.BaseExpression) -> bool:
    """Whether `value` is a new dict, list or set (never a tensor): a display, a comprehension, `dict(...)`."""
    kind = type(value)
    if kind in (cst.Dict, cst.List, cst.Set, cst.DictComp, cst.ListComp, cst.SetComp):
        return True
    func = value.func if kind is cst.Call else None  # type: ignore[attr-defined]
    name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None  # type: ignore[union-attr]
    return name in _CONTAINER_CALLS


def _run(node: cst.CSTNode) -> bool:
    return type(node) is not cst.Annotation


def _code(function: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of what a call of `function` runs: its defaults and body, not its decorators (they
    ran where it was defined, and the value its name holds is what they gave) nor its annotations."""
    if type(function) is cst.FunctionDef or type(function) is LazyFunctionDef:
        yield from (function.params, *descendants(function.params, into=_run))  # type: ignore[attr-defined]
        yield from descendants(function.body, into=_run)  # type: ignore[attr-defined]
    else:
        yield from descendants(function, into=_run)


def code_facts(function: cst.CSTNode) -> CodeFacts:
    """The facts of `function`'s code (a `def`, a lambda or a class statement), in one walk."""
    changes = declares_global = False
    names: set[str] = set()
    chains: set[str] = set()
    attributes: set[str] = set()
    roots: set[str] = set()
    counters: set[str] = set()  # names changed by `+=` of a constant
    plain: set[str] = set()  # names bound to what is never a tensor: a constant, a length, a new dict or list
    containers_written: set[str] = set()  # names an item is assigned to (`d[k] = v`)
    bound: set[str] = set()  # names bound otherwise (an assignment, a parameter, a loop)
    returns_value = runs_backward = False
    selves = 0  # uses of `self` not as an attribute's object
    for node in _code(function):  # exact types: an `isinstance` of a libcst class is an ABC check
        kind = type(node)
        stored: list[cst.BaseExpression] | tuple[()] = ()
        if kind is cst.Name:
            names.add(node.value)  # type: ignore[attr-defined]
            selves += node.value == "self"  # type: ignore[attr-defined]
            continue
        if kind is cst.Attribute:
            attribute = node.attr.value  # type: ignore[attr-defined]
            attributes.add(attribute)
            if type(node.value) is cst.Name and node.value.value == "self":  # type: ignore[attr-defined]
                selves -= 1
            if attribute == "backward" or attribute == "grad":
                runs_backward = runs_backward or type(node.value) in _RECEIVERS  # type: ignore[attr-defined]
            changes = changes or attribute in _SITE_ATTRIBUTES or is_site_name(attribute)
            chain = dotted_name(node)  # type: ignore[arg-type]
            if chain is not None and not chain.startswith("."):
                chains.add(chain)
            continue
        if kind is cst.SimpleString:
            text = node.value.strip("\"'rbuRBU")  # type: ignore[attr-defined]
            attributes.add(text)
            changes = changes or is_site_name(text) or text in SITE_KEYWORDS  # `{"inplace": True}`
        elif kind is cst.AugAssign:
            target = node.target  # type: ignore[attr-defined]
            if type(target) is cst.Name and _plain(node.value):  # type: ignore[attr-defined]
                counters.add(target.value)  # `n += 1`: a tensor only if `n` is bound to one elsewhere
            else:
                changes = True
            stored = [target]
        elif kind is cst.Assign or kind is cst.AnnAssign:
            stored = [t.target for t in node.targets] if kind is cst.Assign else [node.target]  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            for target in stored:
                if type(target) is cst.Subscript and type(target.value) is cst.Name:  # type: ignore[attr-defined]
                    if _stores_item(target):
                        containers_written.add(target.value.value)  # type: ignore[attr-defined]
                elif _stores_item(target):
                    changes = True
                if type(target) is cst.Name:
                    never = value is not None and (_plain(value) or _container(value))
                    (plain if never else bound).add(target.value)  # type: ignore[attr-defined]
                elif type(target) is not cst.Subscript and type(target) is not cst.Attribute:
                    bound.update(bound_names(target))
        elif kind is cst.Del:
            stored = [node.target]  # type: ignore[attr-defined]
        elif kind is cst.For or kind is cst.CompFor:
            changes = changes or _stores_item(node.target)  # type: ignore[attr-defined]
            bound.update(bound_names(node.target))  # type: ignore[attr-defined]
        elif kind is cst.AsName:
            changes = changes or _stores_item(node.name)  # type: ignore[attr-defined]
            bound.update(bound_names(node.name))  # type: ignore[attr-defined]
        elif kind is cst.Param or kind is cst.NamedExpr:
            bound.update(bound_names(node.name if kind is cst.Param else node.target))  # type: ignore[attr-defined]
            selves -= kind is cst.Param and node.name.value == "self"  # type: ignore[attr-defined]
        elif kind is cst.Call:
            changes = changes or _call_changes(node)  # type: ignore[arg-type]
            if type(node.func) is cst.Attribute:  # type: ignore[attr-defined]
                stored = [node.func]  # type: ignore[attr-defined]
        elif kind is cst.Global or kind is cst.Nonlocal:
            declares_global = True
        elif kind is cst.Return or kind is cst.Yield:
            returns_value = returns_value or node.value is not None  # type: ignore[attr-defined]
        for target in stored:
            while type(target) is cst.Attribute or type(target) is cst.Subscript:
                target = target.value  # type: ignore[attr-defined]
                if type(target) is cst.Name:
                    roots.add(target.value)  # type: ignore[attr-defined]
    # `n += 1`, `d[k] = v` of a name only ever bound to a constant, a length, a new dict or list
    changes = changes or bool((counters | containers_written) - plain) or bool((counters | containers_written) & bound)
    return CodeFacts(changes, frozenset(names), frozenset(chains), frozenset(attributes), frozenset(roots),
                     declares_global, returns_value, runs_backward, selves > 0)


