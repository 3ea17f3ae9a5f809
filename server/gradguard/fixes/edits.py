"""Text edits for the usual fixes: rewrite out of place, drop `inplace=True`, clone, `no_grad`.

Each builder returns the edits, or None when the code is not in a shape it can rewrite
faithfully. Positions come from the document; code comes from libcst's code generation, so
comments and formatting outside the edited range are kept.
"""

from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from gradguard.findings import Edit, Position, Span
from gradguard.knowledge import ops
from gradguard.source.document import Document
from gradguard.source.lines import lines_of
from gradguard.source.walk import bound_names, descendants, in_same_scope

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString)

_OUT_OF_PLACE_OPERATORS = {
    "AddAssign": "+", "SubtractAssign": "-", "MultiplyAssign": "*", "DivideAssign": "/",
    "FloorDivideAssign": "//", "ModuloAssign": "%", "PowerAssign": "**", "BitAndAssign": "&",
    "BitOrAssign": "|", "BitXorAssign": "^", "LeftShiftAssign": "<<", "RightShiftAssign": ">>",
}

#: Tensor init methods and their `nn.init` function (which runs under `no_grad`).
INIT_FUNCTIONS = {"normal_": "normal_", "uniform_": "uniform_", "zero_": "zeros_", "fill_": "constant_"}


def _code(document: Document, node: cst.CSTNode) -> str:
    assert document.module is not None
    return document.module.code_for_node(node)


def _operand(document: Document, node: cst.BaseExpression) -> str:
    text = _code(document, node).strip()
    return text if isinstance(node, _ATOMS) else f"({text})"


def _indent(document: Document, statement: cst.CSTNode) -> str:
    start = document.span(statement).start
    return document.line_text(start.line)[: start.column]


def out_of_place_augmented(document: Document, statement: cst.SimpleStatementLine) -> tuple[Edit, ...] | None:
    """`a += b` → `a = a + b` (every augmented operator), for a single-statement line."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.AugAssign):
        return None
    node = statement.body[0]
    operator = _OUT_OF_PLACE_OPERATORS.get(type(node.operator).__name__)
    if operator is None or not isinstance(node.target, (cst.Name, cst.Attribute)):
        return None
    target = _code(document, node.target).strip()
    content = f"{target} = {target} {operator} {_operand(document, node.value)}"
    return (Edit(document.span(node), content),)


def out_of_place_method(document: Document, statement: cst.SimpleStatementLine,
                        receiver_node: cst.CSTNode | None) -> tuple[Edit, ...] | None:
    """`x.add_(y)` as a statement → `x = x.add(y)`, when `x` is the changed tensor and `add` exists."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Expr):
        return None
    call = statement.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.value is receiver_node and isinstance(receiver_node, (cst.Name, cst.Attribute))):
        return None
    method = call.func.attr.value
    if not method.endswith("_") or method.startswith("_") or not any(o.method for o in ops.overloads(method[:-1])):
        return None
    receiver = _code(document, call.func.value).strip()
    arguments = ", ".join(_code(document, arg).strip().rstrip(",") for arg in call.args)
    content = f"{receiver} = {receiver}.{method[:-1]}({arguments})"
    return (Edit(document.span(statement.body[0]), content),)


def drop_inplace_argument(document: Document, call: cst.CSTNode) -> tuple[Edit, ...] | None:
    """`nn.ReLU(inplace=True)` / `F.relu(x, inplace=True)` → without the `inplace` argument."""
    if not isinstance(call, cst.Call):
        return None
    keep = [arg for arg in call.args if not (arg.keyword is not None and arg.keyword.value == "inplace")]
    if len(keep) == len(call.args):
        return None
    arguments = ", ".join(_code(document, arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip() for arg in keep)
    return (Edit(document.span(call), f"{_code(document, call.func).strip()}({arguments})"),)


def rebinds(scope: cst.FunctionDef | None, name: str) -> bool:
    """Whether `name = ...` written in `scope`'s body binds the `name` its code reads: at module level,
    for a parameter, a name the function binds itself or declares `global`/`nonlocal`; not for
    a global it only reads (assigning it there makes it local: `UnboundLocalError` at the read)."""
    if scope is None:
        return True
    params = scope.params
    stars = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params, *stars)):
        return True
    for node in descendants(scope.body, into=in_same_scope):
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
            return True
        if name in _binds(node):
            return True
    return False


def callers_tensor(scope: cst.FunctionDef | None, target: cst.BaseExpression | None) -> bool:
    """Whether `target` is a parameter of `scope` that its body never rebinds: the caller's tensor
    (a hook's `output`), which a change in place changes for the caller too, and a rewrite out of
    place would not."""
    if scope is None or not isinstance(target, cst.Name):
        return False
    params = scope.params
    if not any(p.name.value == target.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return False
    return not any(target.value in _binds(node) for node in descendants(scope.body, into=in_same_scope))


def _binds(node: cst.CSTNode) -> Iterator[str]:
    """The names `node` binds in the function it is in (an assignment, a loop, `with`/`except ... as`,
    an import, a nested `def`/`class`, a `match` capture, `del`)."""
    if isinstance(node, cst.Assign):
        for target in node.targets:
            yield from bound_names(target.target)
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.Del)):
        yield from bound_names(node.target)
    elif isinstance(node, cst.WithItem) and node.asname is not None:
        yield from bound_names(node.asname.name)  # type: ignore[arg-type]
    elif isinstance(node, cst.ExceptHandler) and node.name is not None:
        yield from bound_names(node.name.name)  # type: ignore[arg-type]
    elif isinstance(node, cst.ImportAlias):
        imported = node.asname.name if node.asname is not None else node.name
        while isinstance(imported, cst.Attribute):  # `import os.path` binds `os`
            imported = imported.value
        yield from bound_names(imported)  # type: ignore[arg-type]
    elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        yield node.name.value
    elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
        yield node.name.value
    elif isinstance(node, cst.MatchMapping) and node.rest is not None:
        yield node.rest.value


def clone_before(document: Document, statement: cst.SimpleStatementLine, name: str) -> tuple[Edit, ...]:
    """Insert `name = name.clone()` on its own line before `statement`."""
    start = document.span(statement).start
    return (Edit(Span(start, start), f"{name} = {name}.clone()\n{_indent(document, statement)}"),)


def clone_result(document: Document, expression: cst.CSTNode) -> tuple[Edit, ...]:
    """`torch.exp(x)` → `torch.exp(x).clone()`: the op's saved output is never the returned tensor."""
    text = _code(document, expression).strip()
    wrapped = text if isinstance(expression, _ATOMS) else f"({text})"
    return (Edit(document.span(expression), f"{wrapped}.clone()"),)


def wrap_in_no_grad(document: Document, statement: cst.SimpleStatementLine, torch_name: str) -> tuple[Edit, ...]:
    """Put `statement` inside `with torch.no_grad():`."""
    indent = _indent(document, statement)
    body = _code(document, statement.with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())).strip()
    return (Edit(document.span(statement), f"with {torch_name}.no_grad():\n{indent}    {body}"),)


def init_function(document: Document, call: cst.CSTNode, init_module: str) -> tuple[Edit, ...] | None:
    """`w.normal_(0, 0.02)` → `nn.init.normal_(w, 0, 0.02)` (`fill_(v)` → `constant_(w, v)`)."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return None
    function = INIT_FUNCTIONS.get(call.func.attr.value)
    if function is None:
        return None
    receiver = _code(document, call.func.value).strip()
    arguments = [receiver] + [_code(document, a.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()
                              for a in call.args]
    return (Edit(document.span(call), f"{init_module}.{function}({', '.join(arguments)})"),)


def through_data(document: Document, call: cst.CSTNode) -> tuple[Edit, ...] | None:
    """`w.normal_()` → `w.data.normal_()` (hides the change from autograd)."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return None
    end = document.span(call.func.value).end
    return (Edit(Span(end, end), ".data"),)


def move_after(document: Document, statement: cst.SimpleStatementLine,
               anchor: cst.SimpleStatementLine) -> tuple[Edit, ...] | None:
    """Move `statement` (a line of its own) to just after `anchor`, at the same indentation."""
    moved, target = document.span(statement), document.span(anchor)
    if moved.start.column != target.start.column or target.start <= moved.start:
        return None
    code = _code(document, statement.with_changes(leading_lines=())).rstrip("\n")
    line_start = Position(moved.start.line, 0)
    next_line = Position(moved.start.line + 1, 0)
    anchor_end = Position(target.end.line, len(document.line_text(target.end.line)))
    return (Edit(Span(line_start, next_line), ""),
            Edit(Span(anchor_end, anchor_end), "\n" + _indent(document, anchor) + code.strip()))


class _Holder(cst.CSTVisitor):
    """Finds the statement line that holds a node, and the body (block or module) that holds it."""

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node
        self.bodies: list[cst.CSTNode] = []
        self.line: cst.SimpleStatementLine | None = None
        self.found: tuple[cst.SimpleStatementLine, cst.CSTNode] | None = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found is not None:
            return False
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            self.bodies.append(node)
        elif isinstance(node, cst.SimpleStatementLine):
            self.line = node
        if node is self.node and self.line is not None:
            self.found = (self.line, self.bodies[-1])
            return False
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, (cst.Module, cst.IndentedBlock)):
            self.bodies.pop()
        elif original_node is self.line:
            self.line = None


def statement_holding(document: Document, node: cst.CSTNode) -> tuple[cst.SimpleStatementLine, cst.CSTNode] | None:
    """The statement line that holds `node` and the block (or module) whose body holds that line."""
    assert document.module is not None
    finder = _Holder(node)
    document.module.visit(finder)
    return finder.found


def recompute_after(document: Document, block: cst.CSTNode, forward: cst.SimpleStatementLine,
                    anchor: cst.SimpleStatementLine, until: cst.SimpleStatementLine) -> tuple[Edit, ...] | None:
    """Run the statement `forward` (a forward pass bound to names) again just after `anchor`, for the
    statements up to `until`: moved there when nothing between it and `anchor` uses what it binds,
    else copied there when that is faithful (see `_AfterStep`)."""
    moved, target = document.span(forward), document.span(anchor)
    if not (len(forward.body) == 1 and isinstance(forward.body[0], cst.Assign)):
        return None
    names = {t.target.value for t in forward.body[0].targets if isinstance(t.target, cst.Name)}
    if not names or len(names) != len(forward.body[0].targets):
        return None
    between = "\n".join(document.line_text(n) for n in range(moved.end.line + 1, target.start.line))
    if not any(re.search(rf"\b{re.escape(name)}\b", between) for name in names):
        return move_after(document, forward, anchor)
    after = _AfterStep.of(block, forward, anchor, until)
    reads = {name.value for name in _names_in(forward.body[0].value)}
    if after is None or reads & names or reads & after.before.bound or after.reads_earlier_values():
        return None
    code = _code(document, forward.with_changes(leading_lines=())).strip()
    end = Position(target.end.line, len(document.line_text(target.end.line)))
    return (Edit(Span(end, end), "\n" + _indent(document, anchor) + code),)


class _Reads(cst.CSTVisitor):
    """The names a statement reads (attribute and keyword names are not reads) and those it binds."""

    def __init__(self) -> None:
        self.reads: list[cst.Name] = []
        self.bound: set[str] = set()
        self.call_arguments: dict[int, cst.Call] = {}  # id of a Name passed as an argument → its call

    def visit_Name(self, node: cst.Name) -> None:
        self.reads.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        for argument in node.args:
            if isinstance(argument.value, cst.Name) and not argument.star:
                self.call_arguments[id(argument.value)] = node

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def _bind(self, target: cst.CSTNode) -> None:
        self.bound.update(n.value for n in _names_in(target))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)


class _Names(cst.CSTVisitor):
    """Every `Name` node under a node, attribute and keyword names included."""

    def __init__(self) -> None:
        self.found: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    names = _Names()
    node.visit(names)
    return names.found


class _AfterStep:
    """The statements of a block around a step: `forward` (earlier), `anchor` (the step) and `until`
    (the backward pass that needs what `forward` computed): what those between `forward` and `anchor`
    bind (`before`), and what those after `anchor` up to `until` read and bind (`after`)."""

    def __init__(self, before: _Reads, after: _Reads) -> None:
        self.before, self.after = before, after

    @classmethod
    def of(cls, block: cst.CSTNode, forward: cst.CSTNode, anchor: cst.CSTNode, until: cst.CSTNode) -> _AfterStep | None:
        statements = list(getattr(block, "body", ()))
        where = [next((i for i, s in enumerate(statements) if s is statement), -1) for statement in (forward, anchor, until)]
        if not 0 <= where[0] < where[1] < where[2]:
            return None
        before, after = _Reads(), _Reads()
        for statement in statements[where[0] + 1:where[1]]:
            statement.visit(before)
        for statement in statements[where[1] + 1:where[2] + 1]:
            statement.visit(after)
        return cls(before, after)

    def reads_earlier_values(self) -> bool:
        """Whether the statements after the step read a value computed between `forward` and the
        step, which would still carry the old graph."""
        return any(read.value in self.before.bound for read in self.after.reads)


def detach_where_passed(document: Document, block: cst.CSTNode, forward: cst.SimpleStatementLine,
                        anchor: cst.SimpleStatementLine, until: cst.SimpleStatementLine) -> tuple[Edit, ...] | None:
    """`D(fake)` → `D(fake.detach())` in the statements of `block` after `anchor` up to `until`, where
    `forward` (`fake = G(...)`, earlier in `block`) binds `fake`: the backward pass of `until` then
    stops at `fake` instead of running into `G`'s graph. None unless every read of `fake` there is an
    argument of another call, `fake` is not bound again there, and no value computed between
    `forward` and `anchor` is read there."""
    assignment = forward.body[0] if len(forward.body) == 1 else None
    if not (isinstance(assignment, cst.Assign) and len(assignment.targets) == 1
            and isinstance(assignment.targets[0].target, cst.Name) and isinstance(assignment.value, cst.Call)):
        return None
    context = _AfterStep.of(block, forward, anchor, until)
    name, producer = assignment.targets[0].target.value, _code(document, assignment.value.func).strip()
    if context is None or name in context.after.bound or context.reads_earlier_values():
        return None
    uses = [read for read in context.after.reads if read.value == name]
    edits = []
    for use in uses:
        call = context.after.call_arguments.get(id(use))
        if call is None or _code(document, call.func).strip() == producer:
            return None
        end = document.span(use).end
        edits.append(Edit(Span(end, end), ".detach()"))
    return tuple(edits) or None


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with `edits` applied (non-overlapping; code-point columns; lines split as Python
    splits them)."""
    lines = lines_of(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: Position) -> int:
        return starts[position.line - 1] + position.column if position.line - 1 < len(starts) else len(text)

    result = text
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end), reverse=True):
        result = result[: offset(edit.span.start)] + edit.content + result[offset(edit.span.end):]
    return result
