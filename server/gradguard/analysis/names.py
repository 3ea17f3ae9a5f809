"""How source code names things: dotted names, the qualified names of torch, operator symbols."""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.values import ImportRef, Value
from gradguard.source.skeleton import LazyFunctionDef


def qualname_of(value: Value) -> str | None:
    """The qualified name an imported name stands for (`torch.nn.functional.relu`), else None."""
    return value.qualname if isinstance(value, ImportRef) else None


def is_torch_name(name: str) -> bool:
    """Whether `name` is torch's (`torch`, `torch.nn.ReLU`), not another package's (`torchvision.ops`)."""
    return name == "torch" or name.startswith("torch.")


def normalise_torch_name(name: str) -> str:
    """`torch.nn.modules.activation.ReLU` → `torch.nn.ReLU`; `torch.functional.x` → `torch.x`."""
    if name.startswith("torch.nn.modules."):
        return "torch.nn." + name.rsplit(".", 1)[-1]
    if name.startswith("torch.nn.parameter."):
        return "torch.nn." + name.rsplit(".", 1)[-1]
    return name


OPERATOR_SYMBOLS = {
    "Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "FloorDivide": "//", "Modulo": "%",
    "Power": "**", "MatrixMultiply": "@", "BitAnd": "&", "BitOr": "|", "BitXor": "^",
    "LeftShift": "<<", "RightShift": ">>",
}


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`self.fc.weight` for a chain of names and attributes; `.softmax` when it starts elsewhere."""
    parts: list[str] = []
    while type(node) is cst.Attribute:  # exact types: an `isinstance` of a libcst class is an ABC check
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return "." + ".".join(reversed(parts)) if parts else None


def decorator_heads(node: cst.FunctionDef | cst.ClassDef) -> tuple[tuple[str | None, bool], ...]:
    """Each decorator of `node`, outermost first: its dotted name (a call's: its callee's) and
    whether it is a call. A skeleton's function answers without parsing its header."""
    if type(node) is LazyFunctionDef and (heads := node.unparsed_decorators) is not None:
        return heads
    return tuple((dotted_name(d.decorator.func), True) if type(d.decorator) is cst.Call  # type: ignore[attr-defined]
                 else (dotted_name(d.decorator), False) for d in node.decorators)


def decorated_as(function: cst.FunctionDef, builtin: str) -> bool:
    """Whether `function` is decorated with the builtin `builtin` (`staticmethod`, `classmethod`)."""
    return any(not called and name in (builtin, f"builtins.{builtin}") for name, called in decorator_heads(function))


def is_static_method(function: cst.FunctionDef) -> bool:
    """Whether `function` is decorated `@staticmethod`: no instance is bound to its first parameter."""
    return decorated_as(function, "staticmethod")


def annotated_fields(cls: cst.ClassDef) -> list[str]:
    """The names a class body annotates, in order: the fields of a dataclass or a `NamedTuple`."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return [small.target.value for line in body if isinstance(line, cst.SimpleStatementLine)
            for small in line.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)]
