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

import re

import libcst as cst

from gradguard.analysis.names import dotted_name
from gradguard.knowledge import surface
from gradguard.source.walk import children, descendants, in_statements

__all__ = ["GRAD_MODE_WORDS", "grad_off_functions"]

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


def _off_regions(module: cst.Module) -> tuple[list[cst.CSTNode], list[cst.FunctionDef]]:
    """The code of `module` that runs where grad is off by its own construct, outermost only: the
    bodies of `with` statements and the parameters and bodies of decorated functions that turn it
    off; and every function of the module (only statements are walked)."""
    regions: list[cst.CSTNode] = []
    functions: list[cst.FunctionDef] = []
    pending: list[tuple[cst.CSTNode, bool]] = [(module, False)]
    while pending:
        node, inside = pending.pop()
        if isinstance(node, cst.FunctionDef):
            functions.append(node)
            if not inside and any(_grad_off(d.decorator) for d in node.decorators):
                regions += [node.params, node.body]
                inside = True
        elif isinstance(node, cst.With) and not inside and any(_grad_off(item.item) for item in node.items):
            regions.append(node.body)
            inside = True
        pending += [(child, inside) for child in children(node) if in_statements(child)]
    return regions, functions


class _References:
    """Each name of the file with the places it is referred to: `_OFF`, `_ON`, or the function
    whose body refers to it (its grad mode decided later)."""

    def __init__(self, *walked: tuple[cst.CSTNode, str | cst.FunctionDef],
                 skipped: frozenset[cst.CSTNode] = frozenset()) -> None:
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.references: dict[str, list[str | cst.FunctionDef]] = {}
        pending = list(walked)
        while pending:
            node, context = pending.pop()
            if node in skipped:
                continue
            if isinstance(node, cst.Name):
                self.references.setdefault(node.value, []).append(context)
            elif isinstance(node, cst.FunctionDef):
                self.functions.setdefault(node.name.value, []).append(node)
                pending += [(d, context) for d in node.decorators]
                modes = [_grad_off(d.decorator) for d in node.decorators]
                inner = _OFF if True in modes else _ON if False in modes else node
                pending += [(node.params, inner), (node.body, inner)]
            elif isinstance(node, cst.Lambda):
                pending += [(child, _ON) for child in children(node)]
            elif isinstance(node, cst.With):
                pending += [(item, context) for item in node.items]
                modes = [_grad_off(item.item) for item in node.items]
                pending.append((node.body, _OFF if True in modes else _ON if False in modes else context))
            else:
                pending += [(child, context) for child in children(node)]


def grad_off_functions(module: cst.Module, known: dict[cst.CSTNode, _References] | None = None,
                       text: str | None = None) -> tuple[frozenset[cst.FunctionDef], dict[cst.CSTNode, _References]]:
    """The functions of `module` that its code refers to only where grad is off, and the references
    of each top-level statement: given back as `known` for the next version of the file, only the
    statements an edit replaced are walked again (every keystroke re-analyses the file).

    With the module's `text`, the walk is of the code where grad is off first: the functions it
    refers to, and those these refer to, are the only ones that may run with grad off; when the
    text names them nowhere else, their references are all known without a walk of the rest."""
    regions, defined = _off_regions(module)
    if not regions:
        return frozenset(), {}
    if text is not None:
        found = _references_where_off(regions, defined, text)
        if found is not None:
            return _only_off(*found), {}
    known = known or {}
    each = {statement: known.get(statement) or _References((statement, _ON)) for statement in module.body}
    functions: dict[str, list[cst.FunctionDef]] = {}
    references: dict[str, list[str | cst.FunctionDef]] = {}
    for found_here in each.values():
        for name, defined_here in found_here.functions.items():
            functions.setdefault(name, []).extend(defined_here)
        for name, places in found_here.references.items():
            references.setdefault(name, []).extend(places)
    return _only_off(functions, references), each


def _references_where_off(regions: list[cst.CSTNode], defined: list[cst.FunctionDef], text: str
                          ) -> tuple[dict[str, list[cst.FunctionDef]], dict[str, list[str | cst.FunctionDef]]] | None:
    """The functions that may run with grad off (those the `regions` refer to, and those these
    refer to, in turn) with all their references, or None when the text names one of them
    somewhere the walk did not reach (a reference elsewhere, a string or a comment)."""
    by_name: dict[str, list[cst.FunctionDef]] = {}
    for function in defined:
        by_name.setdefault(function.name.value, []).append(function)
    found = _References(*((region, _OFF) for region in regions))
    skipped = frozenset(regions)  # walked: a function that holds one walks the rest of its body
    walked = {function for functions in found.functions.values() for function in functions}
    references = {name: list(places) for name, places in found.references.items()}
    candidates: dict[str, list[cst.FunctionDef]] = {}
    todo = [name for name in references if name in by_name]
    while todo:
        name = todo.pop()
        if name in candidates or name in _IMPLICIT or (name.startswith("__") and name.endswith("__")):
            continue
        candidates[name] = by_name[name]
        for function in by_name[name]:
            if function in walked:
                continue
            walked.add(function)
            more = _References((function.params, function), (function.body, function), skipped=skipped)
            walked.update(f for functions in more.functions.values() for f in functions)
            for called, places in more.references.items():
                references.setdefault(called, []).extend(places)
                if called in by_name:
                    todo.append(called)
    for name, functions in candidates.items():
        if _named_in_code(name, text) != len(references.get(name, ())) + len(functions):
            return None
    return candidates, references


def _named_in_code(name: str, text: str) -> int:
    """How many times `text` names `name`, not counting comment lines nor comments on lines without a
    quote (such a `#` starts a comment, or lies inside a string that goes on: no code follows it)."""
    count = 0
    for match in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text):
        start = text.rfind("\n", 0, match.start()) + 1
        before = text[start:match.start()]
        if before.lstrip().startswith("#"):
            continue
        end = text.find("\n", match.end())
        line = text[start:end if end >= 0 else len(text)]
        if "#" not in before or "'" in line or '"' in line:
            count += 1
    return count


def _only_off(functions: dict[str, list[cst.FunctionDef]],
              references: dict[str, list[str | cst.FunctionDef]]) -> frozenset[cst.FunctionDef]:
    """The functions whose references all sit where grad is off (from functions of that kind too)."""
    off: set[cst.FunctionDef] = set()
    changed = True
    while changed:
        changed = False
        for name, defined in functions.items():
            if name in _IMPLICIT or (name.startswith("__") and name.endswith("__")):
                continue
            places = references.get(name, [])
            for function in defined:
                if function not in off and any(p is not function for p in places) and all(
                        p == _OFF or p is function or (isinstance(p, cst.FunctionDef) and p in off) for p in places):
                    off.add(function)
                    changed = True
    return frozenset(off)


_GRAD_WORDS = ("loss", "logit", "pred", "output", "param", "weight", "requires_grad")


def _says_grad(text: str) -> bool:
    return any(word in text.lower() for word in _GRAD_WORDS)


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
    return any(isinstance(node, cst.Attribute) and node.attr.value in ("backward", "grad")
               and isinstance(node.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
               for node in descendants(function.body))
