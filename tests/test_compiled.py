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
        return (x @ w).relu()


    compiled = {compile}
    x = torch.randn(4, 3)
    w = torch.randn(3, 2, requires_grad=True)
    y = compiled(x, w)
    x.mul_(2)
    y.sum().backward()
'''

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

# name: (source, (line, code) reported, what its message says, the program's fate run by torch)
PROGRAMS = {
    "aot_eager": (PROJECT.format(compile='torch.compile(project, backend="aot_eager")'), (12, "GG001"),
                  'backend "aot_eager", which checks saved tensors as eager does',
                  "RuntimeError: one of the variables needed for gradient computation has been modified"),
    "dynamo_optimize": (PROJECT.format(compile='torch._dynamo.optimize("inductor")(project)'), (12, "GG005"),
                        "compiled by inductor, it raises nothing and computes the gradients from the changed value",
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
