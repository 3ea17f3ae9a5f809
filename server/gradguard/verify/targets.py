"""What a verification runs (in the child): a script as `__main__`, or one module class or
function of a file, the module fed random inputs shaped for its first layer."""

from __future__ import annotations

import builtins
import inspect
import linecache
import runpy
import sys
from pathlib import Path
from types import CodeType

import torch
from torch import nn

from gradguard.source.files import is_notebook
from gradguard.source.notebook import Notebook


_PASS_INPUTS = ("pass --input SHAPE[:DTYPE] once for each of its inputs (such as --input 2,64 --input 2,64:bool), "
                "or set `inputs` or a `factory` in [tool.gradguard.verify.targets]")


class TargetError(Exception):
    """The target cannot be run as asked (not found, no input can be inferred): no fault of the code."""


RUN_NOTEBOOKS: dict[str, Notebook] = {}  # the notebooks run in this child: their tracebacks name cells


def run_script(path: str) -> None:
    """Run the file as `python FILE` would: as `__main__`, its folder first on `sys.path`."""
    sys.argv = [path]
    sys.path.insert(0, str(Path(path).parent))
    run_path(path, "__main__")


def run_path(path: str, run_name: str) -> dict:
    """Run a Python file, or a notebook's code cells in order (its program, magics masked:
    `source/notebook.py`), in a fresh namespace named `run_name`; the namespace it leaves."""
    if not is_notebook(path):
        return runpy.run_path(path, run_name=run_name)
    notebook = RUN_NOTEBOOKS[path] = Notebook.parse(Path(path).read_text(encoding="utf-8"))
    program = notebook.program
    linecache.cache[path] = (len(program), None, program.splitlines(True), path)  # tracebacks show the cells' code
    namespace: dict = {"__name__": run_name, "__builtins__": builtins}
    for start, cell in notebook.units():  # one cell at a time, as a kernel runs them, in the program's lines
        exec(_compiled(cell.program_text, start, path), namespace)
    return namespace


def _compiled(text: str, start: int, path: str) -> CodeType:
    """A notebook cell's code, its lines numbered from the program's line `start`; a syntax error
    shows the cell's line (CPython would read the line from the notebook's JSON)."""
    try:
        return compile("\n" * (start - 1) + text, path, "exec")
    except SyntaxError as error:
        lines = text.splitlines(True)
        if error.lineno is not None and 0 <= error.lineno - start < len(lines):
            error.text = lines[error.lineno - start]
        raise


def run_target(path: str, name: str, settings: dict, device: torch.device) -> None:
    """Run the file as a module, then build and call its module class or function `name`."""
    sys.path.insert(0, str(Path(path).parent))
    namespace = run_path(path, "__gradguard_target__")
    target = namespace.get(name)
    if target is None:
        raise TargetError(f"{path} defines no class or function named {name!r}")
    factory = settings.get("factory")
    if factory is not None:
        if not callable(namespace.get(factory)):
            raise TargetError(f"the factory {factory!r} named for {name} is not a function of {path}")
        built = namespace[factory]()
    elif callable(target):
        args, kwargs = settings.get("args", ()), settings.get("kwargs", {})
        try:
            inspect.signature(target).bind(*args, **kwargs)
        except TypeError as error:  # the arguments do not fit: the settings' fault, not the code's
            given = "the arguments given" if args or kwargs else "no arguments"
            raise TargetError(f"cannot call {name} with {given} ({error}): give `args`/`kwargs` or a `factory` "
                              "for it in [tool.gradguard.verify.targets]") from None
        except ValueError:
            pass  # no signature to check (a builtin): let the call tell
        built = target(*args, **kwargs)
    else:
        raise TargetError(f"{name} in {path} is neither an nn.Module class nor a function")
    module, inputs = built if isinstance(built, tuple) and len(built) == 2 else (built, None)
    if not isinstance(module, nn.Module):
        return  # a function that ran its own code
    module = module.to(device).train()
    if inputs is None and settings.get("inputs"):
        inputs = tuple(make_input(spec, device) for spec in settings["inputs"])
        _check_arity(module, inputs, f"{len(inputs)} input{'s' if len(inputs) != 1 else ''} given")
    elif inputs is None:
        inputs = infer_inputs(module, device)
        _check_arity(module, inputs, None)
    module(*(inputs if isinstance(inputs, (tuple, list)) else (inputs,)))


def make_input(spec: dict, device: torch.device) -> torch.Tensor:
    """A random tensor of `spec` ({"shape": [...], "dtype": "float32"}): normal floats, integers 0
    or 1 (valid indices for any embedding), random booleans."""
    dtype = getattr(torch, spec.get("dtype", "float32"))
    shape = tuple(spec["shape"])
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype, device=device)
    return torch.randint(0, 2, shape, device=device).to(dtype)


def forward_signature(module: nn.Module) -> str:
    """`Block.forward(x, pad_mask)`: the parameters as the user named them."""
    try:
        parameters = inspect.signature(module.forward).parameters.values()
    except (TypeError, ValueError):
        return f"{type(module).__name__}.forward(...)"
    prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    names = ", ".join(prefix.get(p.kind, "") + p.name for p in parameters)
    return f"{type(module).__name__}.forward({names})"


def _check_arity(module: nn.Module, inputs: tuple[torch.Tensor, ...], given: str | None) -> None:
    """A TargetError when `forward` cannot take `inputs` (given by the user, or inferred: `given` None)."""
    try:
        signature = inspect.signature(module.forward)
    except (TypeError, ValueError):
        return  # no signature to check: let the call tell
    try:
        signature.bind(*inputs)
    except TypeError:
        if given is None:
            raise TargetError(f"could not infer inputs for `{forward_signature(module)}`; {_PASS_INPUTS}") from None
        raise TargetError(f"`{forward_signature(module)}` cannot take the {given}; {_PASS_INPUTS}") from None


def infer_inputs(module: nn.Module, device: torch.device) -> tuple[torch.Tensor, ...]:
    """A batch of 2 random inputs for the first layer: `Linear.in_features`, `ConvNd.in_channels`
    (64 wide, 16 for 3-D), or indices below `Embedding.num_embeddings` (8 long)."""
    for layer in module.modules():
        if isinstance(layer, nn.Linear):
            return (torch.randn(2, layer.in_features, device=device),)
        if isinstance(layer, nn.modules.conv._ConvNd):
            dims = len(layer.kernel_size)
            return (torch.randn(2, layer.in_channels, *[64 if dims < 3 else 16] * dims, device=device),)
        if isinstance(layer, nn.Embedding):
            return (torch.randint(layer.num_embeddings, (2, 8), device=device),)
    raise TargetError(f"could not infer inputs for `{forward_signature(module)}` (its first layer is no Linear, "
                      f"Conv or Embedding); {_PASS_INPUTS}")
