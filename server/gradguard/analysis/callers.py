"""The grad mode a file's own functions run in, from where the file refers to them.

A function analysed as an entry point takes its callers' grad mode when every reference to it
in the file (a call, or a use as a value: `func = _single if x else _multi`) sits where grad is
off: under `with torch.no_grad():`, in a `@torch.no_grad()` function, or in a function that runs
only where grad is off itself (a reference from the function itself, or from a function no
such reference reaches, is not a caller). Dunder methods and `forward`, which run without a
reference to their name, keep grad on. Any other reference (module level, a lambda, grad on or unknown)
keeps the default, grad on; a function the file never refers to is judged standalone.
"""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.code_facts import CodeFacts
from gradguard.analysis.names import dotted_name
from gradguard.knowledge import surface
from gradguard.source.skeleton import LazyFunctionDef
from gradguard.source.walk import children, descendants, in_statements

__all__ = ["GRAD_MODE_WORDS", "called_by_name", "grad_off_functions"]

_GRAD_MODES = {name.rsplit(".", 1)[-1]: fixed for name, fixed in surface.GRAD_MODES.items()}
GRAD_MODE_WORDS = tuple(_GRAD_MODES)  # a file whose text has none of them turns grad off nowhere
_IMPLICIT = {"forward"}  # called without a reference to its name (`module(x)`), like the dunder methods
_ON = "on"  # a reference where grad may be on
_OFF = "off"  # a reference where grad is off


def _grad_off(node: cst.BaseExpression) -> bool | None:
    """True/False when `node` (a `with` item or decorator) turns grad off/may turn it on; None
    when it is not a grad-mode construct."""
    call = node if isinstance(node, cst.Call) else None
    name = dotted_name(call.func if call is not None else node)
    last = name.rsplit(".", 1)[-1] if name else None
    if last not in _GRAD_MODES:
        return None
    first = call.args[0].value if call is not None and call.args else None
    if last == "inference_mode":
        return first is None or (isinstance(first, cst.Name) and first.value == "True")
    if _GRAD_MODES[last] is not None:
        return not _GRAD_MODES[last]
    return isinstance(first, cst.Name) and first.value == "False"


def _turns_grad_off(module: cst.Module) -> bool:
    """Whether a decorator or a `with` of `module` turns grad off (only statements are walked)."""
    for node in descendants(module, into=in_statements):
        if isinstance(node, cst.FunctionDef) and any(_grad_off(d.decorator) for d in node.decorators):
            return True
        if isinstance(node, cst.With) and any(_grad_off(item.item) for item in node.items):
            return True
    return False


def called_by_name(name: str) -> bool:
    """Whether a function named `name` runs where its name is referred to (not `forward` nor a
    dunder method, which run in whatever grad mode their caller's call runs in: grad on)."""
    return name not in _IMPLICIT and not (name.startswith("__") and name.endswith("__"))


class _References:
    """Each name of the file with the places it is referred to: `_OFF`, `_ON`, or the function
    whose body refers to it (its grad mode decided later)."""

    def __init__(self, statement: cst.CSTNode) -> None:
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.references: dict[str, list[str | cst.FunctionDef]] = {}
        pending: list[tuple[cst.CSTNode, str | cst.FunctionDef]] = [(statement, _ON)]
        while pending:
            node, context = pending.pop()
            kind = type(node)  # exact types: an `isinstance` of a libcst class is an ABC check
            if kind is cst.Name:
                self.references.setdefault(node.value, []).append(context)
            elif kind is cst.FunctionDef or kind is LazyFunctionDef:
                self.functions.setdefault(node.name.value, []).append(node)
                pending += [(d, context) for d in node.decorators]
                modes = [_grad_off(d.decorator) for d in node.decorators]
                inner = _OFF if True in modes else _ON if False in modes else node
                pending += [(node.params, inner), (node.body, inner)]
            elif kind is cst.Lambda:
                pending += [(child, _ON) for child in children(node)]
            elif kind is cst.With:
                pending += [(item, context) for item in node.items]
                modes = [_grad_off(item.item) for item in node.items]
                pending.append((node.body, _OFF if True in modes else _ON if False in modes else context))
            else:
                pending += [(child, context) for child in children(node)]


def grad_off_functions(module: cst.Module, known: dict[cst.CSTNode, _References] | None = None
                       ) -> tuple[frozenset[cst.FunctionDef], dict[cst.CSTNode, _References]]:
    """The functions of `module` that its code refers to only where grad is off, and the references
    of each top-level statement: given back as `known` for the next version of the file, only the
    statements an edit replaced are walked again (every keystroke re-analyses the file)."""
    if not _turns_grad_off(module):
        return frozenset(), {}
    known = known or {}
    each = {statement: known.get(statement) or _References(statement) for statement in module.body}
    functions: dict[str, list[cst.FunctionDef]] = {}
    references: dict[str, list[str | cst.FunctionDef]] = {}
    for found in each.values():
        for name, defined in found.functions.items():
            functions.setdefault(name, []).extend(defined)
        for name, places in found.references.items():
            references.setdefault(name, []).extend(places)
    off: set[cst.FunctionDef] = set()
    changed = True
    while changed:
        changed = False
        for name, defined in functions.items():
            if not called_by_name(name):
                continue
            places = references.get(name, [])
            for function in defined:
                if function not in off and any(p is not function for p in places) and all(
                        p == _OFF or p is function or (isinstance(p, cst.FunctionDef) and p in off) for p in places):
                    off.add(function)
                    changed = True
    return frozenset(off), each


_GRAD_WORDS = ("loss", "logit", "pred", "output", "param", "weight", "requires_grad")


def _says_grad(text: str) -> bool:
    return any(word in text.lower() for word in _GRAD_WORDS)


def grad_evidence(function: cst.FunctionDef, facts: CodeFacts) -> bool:
    """Whether an entry point with no known caller may be given tensors that require grad: it is a
    `forward` or a loss, it runs a backward pass (`.backward()`, `autograd.grad`: `facts`, of its
    code), or a parameter's name or annotation says so (a loss, logits, predictions, an output,
    parameters, weights)."""
    name = function.name.value
    if name == "forward" or "loss" in name.lower():
        return True
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        annotation = dotted_name(param.annotation.annotation) if param.annotation is not None else None
        if _says_grad(param.name.value) or (annotation is not None and _says_grad(annotation)):
            return True
    return facts.runs_backward
