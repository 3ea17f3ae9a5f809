"""The code a parameter's default skips: run all the same, for the callers passing another value.

An entry point analysed on its own takes a parameter's constant default as one possible value
(`ConstValue.default_of`). An `if` or a `match` it decides skips some code; that code runs on a
copy of the state, with `InterpreterState.assuming` naming the parameter: the changes it makes hold
for a caller passing another value, and are reported as warnings that say so
(`InplaceChange.assumes`). What it binds and returns is dropped, and what it set on the module's
objects is undone: the code after it runs with the default alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import libcst as cst

from gradguard.analysis.bindings import UNSET
from gradguard.analysis.state import State

if TYPE_CHECKING:
    from gradguard.analysis.statements import Statements

__all__ = ["run_assuming"]


def run_assuming(statements: Statements, skipped: Sequence[cst.BaseStatement], parameter: str, state: State) -> None:
    """Run `skipped`, which the default of `parameter` skips, on a copy of `state`."""
    run = statements.run
    returns = run.returns[-1] if run.returns else None
    returned = (list(returns.values), returns.state) if returns is not None else None
    outer, run.assuming = run.assuming, run.assuming or parameter
    undo_from, followed = len(run.undo), run.followed
    exits, jumps = run.jumps_from_here()
    try:
        statements.exec_block(skipped, state.copy())
    finally:
        if exits is not None:  # its `continue`s and `break`s leave with it
            exits.drop_since(jumps)
        run.assuming, run.followed = outer, followed  # its calls do not count against the default's
        if returns is not None and returned is not None:
            returns.values, returns.state = returned
        while len(run.undo) > undo_from:  # the module's attributes as the default left them
            attributes, attribute, before = run.undo.pop()
            if before is UNSET:
                attributes.pop(attribute, None)
            else:
                attributes[attribute] = before
