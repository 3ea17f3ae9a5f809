"""`torch.compile`d code, as the user sees it: which rule reports a change, where, and what its message
says compiled code does, each program also run with torch (in one process) to prove that claim."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradguard.config import Settings
from gradguard.engine import analyse_document
from gradguard.source.document import Document

from helpers import run_compiled

PROJECT = '''
    import torch


    def project(x, w):
        return (x @ {w}).relu()


    compiled = {compile}
    x = torch.randn(4, 3)
    w = torch.randn({shape}, requires_grad=True)
    y = compiled(x, w)
    {changed}.{change}
    y.sum().backward()
'''


def project(compile: str, w: str = "w", shape: str = "3, 2", changed: str = "x", change: str = "mul_(2)") -> str:
    return PROJECT.format(compile=compile, w=w, shape=shape, changed=changed, change=change)


INSIDE = '''
    import torch


    @torch.compile(backend="aot_eager")
    def gate(x, w):
        y = (x @ w).sigmoid()
        y.mul_(2)
        return y


    out = gate(torch.randn(4, 3), torch.randn(3, 2, requires_grad=True))
    out.sum().backward()
'''

LEAF_INSIDE = '''
    import torch


    @torch.compile
    def scale(w):
        w.mul_(2)
        return w.sum()


    scale(torch.randn(4, requires_grad=True)).backward()
'''

VIEW_INSIDE = '''
    import torch


    @torch.compile(backend="aot_eager")
    def halves(x):
        a, b = x.chunk(2)
        a.mul_(2)
        return (a * b).sum()


    halves(torch.randn(4, 3, requires_grad=True) * 1).backward()
'''

FORWARD_ATTRIBUTE = '''
    import torch
    import torch.nn as nn


    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Parameter(torch.randn(16, 4))

        def forward(self, x):
            return (x @ self.proj).relu()


    model = Scorer()
    model.forward = torch.compile(model.forward)
    x = torch.randn(8, 16)
    y = model(x)
    x.mul_(2)
    y.sum().backward()
'''

# name: (source, (line, code) reported, what its message says, the program's fate run by torch)
PROGRAMS = {
    "aot_eager": (project('torch.compile(project, backend="aot_eager")'), (12, "GG001"),
                  'backend "aot_eager", which checks saved tensors as eager does',
                  "RuntimeError: one of the variables needed for gradient computation has been modified"),
    "dynamo_optimize": (project('torch._dynamo.optimize("inductor")(project)'), (12, "GG005"),
                        "compiled by inductor, it raises nothing and computes the gradients from the changed value",
                        None),
    "transposed_operand": (project("torch.compile(project)", w="w.T", shape="2, 3"), (12, "GG001"),
                           "with a transposed operand, its compiled backward checks this save when both operands are "
                           "matrices (2-D), raising from inside its generated code",
                           "RuntimeError: one of the variables needed for gradient computation has been modified"),
    "second_operand": (project("torch.compile(project)", shape="3, 2", changed="w", change="mul_(2)")
                       .replace("torch.randn(4, 3)", "torch.randn(4, 3, requires_grad=True)")
                       .replace("torch.randn(3, 2, requires_grad=True)", "torch.randn(3, 2)"), (12, "GG005"),
                       "compiled by inductor, it raises nothing and computes the gradients from the changed value",
                       None),
    "forward_attribute": (FORWARD_ATTRIBUTE, (18, "GG005"),
                          "run by the compiled `model(...)` (line 17), which the code compiled by `torch.compile` "
                          "(backend \"inductor\") saves for backward", None),
    "leaf_inside_region": (LEAF_INSIDE, (6, "GG002"),
                           'compiled (`torch.compile`, backend "inductor"), the program raises at the region\'s first '
                           'call instead, as dynamo traces it, wrapped in `TorchRuntimeError` ("RuntimeError when '
                           'making fake tensor call").', "TorchRuntimeError: RuntimeError when making fake tensor call"),
    "view_inside_region": (VIEW_INSIDE, (7, "GG003"),
                           'compiled (`torch.compile`, backend "aot_eager"), the program raises at the region\'s '
                           'first call instead, as dynamo traces it, wrapped in `TorchRuntimeError`',
                           "TorchRuntimeError: RuntimeError when making fake tensor call"),
    "relu_output": (project("torch.compile(project)", changed="y", change="sub_(1)"), (12, "GG001"),
                    "compiled, `backward()` raises nothing: it reads a mask of this output, made before the change",
                    None),
    "inside_region": (INSIDE, (7, "GG001"),
                      "the program raises at the region's first call instead, wrapped in `BackendCompilerFailed`",
                      "BackendCompilerFailed: backend='aot_eager' raised:"),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compiled")
    paths = {}
    for name, (source, *_) in PROGRAMS.items():
        paths[name] = folder / f"{name}.py"
        paths[name].write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return paths


@pytest.mark.parametrize("name", PROGRAMS)
def test_rule_and_message(name, written):
    _, reported, says, _ = PROGRAMS[name]
    path = written[name]
    findings = [f for f in analyse_document(Document.parse(str(path), path.read_text()), Settings())
                if f.code != "GG000"]
    assert [(f.span.start.line, f.code) for f in findings] == [reported]
    assert says in findings[0].message


def test_torch_fares_as_the_messages_say(written):
    fates = run_compiled(list(written.values()))
    for name, (_, _, _, fate) in PROGRAMS.items():
        got = fates[f"{name}.py"]
        assert got == fate if fate is None else got is not None and got.startswith(fate), f"{name}: {got}"
