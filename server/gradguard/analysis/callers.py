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

from gradguard.analysis.names import dotted_name
from gradguard.knowledge import surface

__all__ = ["grad_off_functions"]

_GRAD_MODES = {name.rsplit(".", 1)[-1]: fixed for name, fixed in surface.GRAD_MODES.items()}
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


class _References(cst.CSTVisitor):
    """Each name of the file with the places it is referred to: `_OFF`, `_ON`, or the function
    whose body refers to it (its grad mode decided later)."""

    def __init__(self) -> None:
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.references: dict[str, list[str | cst.FunctionDef]] = {}
        self.context: list[str | cst.FunctionDef] = [_ON]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.functions.setdefault(node.name.value, []).append(node)
        for decorator in node.decorators:
            decorator.visit(self)
        modes = [_grad_off(d.decorator) for d in node.decorators]
        self.context.append(_OFF if True in modes else _ON if False in modes else node)
        for part in (node.params, node.body):
            part.visit(self)
        self.context.pop()
        return False

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.context.append(_ON)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.context.pop()

    def visit_With(self, node: cst.With) -> bool:
        for item in node.items:
            item.visit(self)
        modes = [_grad_off(item.item) for item in node.items]
        mode = _OFF if True in modes else _ON if False in modes else None
        if mode is not None:
            self.context.append(mode)
        node.body.visit(self)
        if mode is not None:
            self.context.pop()
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.references.setdefault(node.value, []).append(self.context[-1])


def grad_off_functions(module: cst.Module) -> frozenset[cst.FunctionDef]:
    """The functions of `module` that its code refers to only where grad is off."""
    found = _References()
    module.visit(found)
    off: set[cst.FunctionDef] = set()
    changed = True
    while changed:
        changed = False
        for name, functions in found.functions.items():
            if name in _IMPLICIT or (name.startswith("__") and name.endswith("__")):
                continue
            places = found.references.get(name, [])
            for function in functions:
                if function not in off and any(p is not function for p in places) and all(
                        p == _OFF or p is function or (isinstance(p, cst.FunctionDef) and p in off) for p in places):
                    off.add(function)
                    changed = True
    return frozenset(off)


_GRAD_WORDS = ("loss", "logit", "pred", "output", "param", "weight", "requires_grad")


def _says_grad(text: str) -> bool:
    return any(word in text.lower() for word in _GRAD_WORDS)


class _Backward(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found |= node.attr.value in ("backward", "grad") and isinstance(node.value, (cst.Name, cst.Attribute,
                                                                                          cst.Call, cst.Subscript))


def grad_evidence(function: cst.FunctionDef) -> bool:
    """Whether an entry point with no known caller may be given tensors that require grad: it is a
    `forward` or a loss, it runs a backward pass (`.backward()`, `autograd.grad`), or a parameter's
    name or annotation says so (a loss, logits, predictions, an output, parameters, weights)."""
    name = function.name.value
    if name == "forward" or "loss" in name.lower():
        return True
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        annotation = dotted_name(param.annotation.annotation) if param.annotation is not None else None
        if _says_grad(param.name.value) or (annotation is not None and _says_grad(annotation)):
            return True
    found = _Backward()
    function.body.visit(found)
    return found.found
