"""The `match` statement: its cases in order, as an `if`/`elif` chain of its patterns.

A pattern matches a subject surely, surely not, or maybe. A literal pattern (`case "tanh":`,
`case 0 | 1:`, `case None:`) against a known constant decides; a capture (`case other:`) and the
wildcard (`case _:`) always match; a sequence pattern against a tuple or list of known length
decides by its length and items (`*rest` takes the middle ones), against `chunk`'s outputs by its
items; a mapping pattern against a dict of known keys decides by its entries; a class pattern
(`case nn.GELU():`) decides as `isinstance` does. Any other pattern may match: its case runs on a
path of its own, and so do the cases after it. The cases that may run, and the path where none
matched, are joined after the statement. Names a pattern captures are bound to what they capture
where it is known (an item of a known sequence, a dict's entry), else unknown. A subject that is a
parameter's default (`mode="softmax"`) decides, and the cases it skips run as the branches of an
`if` it decides do (`default_branches.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gradguard.analysis.default_branches import run_assuming
from gradguard.analysis.state import State
from gradguard.analysis.values import UNKNOWN, ConstValue, DictValue, SequenceValue, Value, output, truth

if TYPE_CHECKING:
    from gradguard.analysis.statements import Statements

__all__ = ["run_match"]

_LITERALS = (bool, int, float, str, bytes, type(None))
Captures = dict[str, Value]


def run_match(statements: Statements, node: cst.Match, state: State) -> None:
    """Run `node` on `state`: each case that may match on its own path, then the paths joined."""
    expressions = statements.parts.expressions
    subject = expressions.eval(node.subject, state)
    unmatched = state.copy()  # the path where no case so far matched
    ran: list[State] = []
    default = subject.default_of if isinstance(subject, ConstValue) and not statements.run.call_stack else None
    for case in node.cases:
        if unmatched.dead:  # after a case that surely matched: another value of the default's parameter may reach it
            if default is not None:
                run_assuming(statements, case.body.body, default, state)
            continue
        captures: Captures = {}
        matches = _matches(case.pattern, subject, statements, unmatched, captures)
        if matches is False:
            if default is not None:
                run_assuming(statements, case.body.body, default, state)
            continue
        path = unmatched.copy()
        path.env.update(captures)
        if case.guard is not None:
            guard = truth(expressions.eval(case.guard, path))
            if guard is False:
                continue
            matches = matches and guard
        statements.exec_block(case.body.body, path)
        ran.append(path)
        if matches:
            unmatched.dead = True
    joined = unmatched
    for path in ran:
        joined = joined.join(path)
    state.become(joined)


def _matches(pattern: cst.MatchPattern, subject: Value, statements: Statements, state: State,
             captures: Captures) -> bool | None:
    """Whether `pattern` matches `subject`: True, False, or None (it may); what it captures is
    added to `captures`."""
    if isinstance(pattern, cst.MatchAs):
        if pattern.name is not None:
            captures[pattern.name.value] = subject
        if pattern.pattern is None:
            return True
        return _matches(pattern.pattern, subject, statements, state, captures)
    if isinstance(pattern, (cst.MatchValue, cst.MatchSingleton)):
        value = statements.parts.expressions.eval(pattern.value, state)
        return _equal(subject, value, identity=isinstance(pattern, cst.MatchSingleton))
    if isinstance(pattern, cst.MatchOr):
        answers = []
        for element in pattern.patterns:
            alternative: Captures = {}
            answer = _matches(element.pattern, subject, statements, state, alternative)
            answers.append(answer)
            captures.update({name: value if answer is True else UNKNOWN for name, value in alternative.items()})
            if answer is True:
                return True
        return False if all(answer is False for answer in answers) else None
    if isinstance(pattern, cst.MatchSequence):
        return _sequence(pattern, subject, statements, state, captures)
    if isinstance(pattern, cst.MatchMapping):
        return _mapping(pattern, subject, statements, state, captures)
    if isinstance(pattern, cst.MatchClass):
        _capture_unknown(pattern, captures)
        classes = statements.parts.expressions.eval(pattern.cls, state)
        instance = statements.parts.expressions.isinstance_of(subject, classes)
        return False if instance is False else None if pattern.patterns or pattern.kwds else instance
    _capture_unknown(pattern, captures)
    return None


def _sequence(pattern: cst.MatchSequence, subject: Value, statements: Statements, state: State,
              captures: Captures) -> bool | None:
    """A sequence pattern (`case (a, b):`, `case [first, *rest]:`) against a tuple or list."""
    elements = list(pattern.patterns)
    stars = [index for index, e in enumerate(elements) if isinstance(e, cst.MatchStar)]
    if not isinstance(subject, SequenceValue):
        _capture_unknown(pattern, captures)
        return None
    if subject.repeated is not None or not subject.known_length:  # `chunk(2)`'s outputs: like items, how many unknown
        item = subject.repeated if subject.repeated is not None else UNKNOWN
        _capture_unknown(pattern, captures)
        before = elements[:stars[0]] if stars else elements  # after a star: which outputs is not known
        answers = [_matches(e.value, output(item, index) if index < len(before) else item,  # type: ignore[union-attr]
                            statements, state, captures)
                   for index, e in enumerate(elements) if not isinstance(e, cst.MatchStar)]
        return False if False in answers else None
    items = subject.items
    if stars:  # `case [first, *rest]:`
        star, after = stars[0], len(elements) - stars[0] - 1
        if len(items) < len(elements) - 1:
            return False
        name = elements[star].name  # type: ignore[union-attr]
        if name is not None:
            captures[name.value] = SequenceValue(tuple(items[star:len(items) - after]), mutable=True)
        elements = elements[:star] + elements[star + 1:]
        items = items[:star] + items[len(items) - after:]
    elif len(items) != len(elements):
        return False
    answers = [_matches(e.value, item, statements, state, captures)  # type: ignore[union-attr]
               for e, item in zip(elements, items)]
    if False in answers:
        return False
    return True if all(answers) else None


def _mapping(pattern: cst.MatchMapping, subject: Value, statements: Statements, state: State,
             captures: Captures) -> bool | None:
    """A mapping pattern (`case {"act": "relu", **rest}:`) against a dict whose entries are known."""
    _capture_unknown(pattern, captures)
    if not isinstance(subject, DictValue):
        return None
    answers: list[bool | None] = []
    for element in pattern.elements:
        key = statements.parts.expressions.eval(element.key, state)
        if not isinstance(key, ConstValue) or not isinstance(key.value, _LITERALS):
            answers.append(None)
        elif key.value in subject.entries:
            answers.append(_matches(element.pattern, subject.entries[key.value], statements, state, captures))
        else:
            answers.append(False if subject.complete else None)
    if False in answers:
        return False
    return True if all(answers) else None


def _equal(subject: Value, value: Value, identity: bool) -> bool | None:
    if not (isinstance(subject, ConstValue) and isinstance(value, ConstValue)):
        return None
    if not (isinstance(subject.value, _LITERALS) and isinstance(value.value, _LITERALS)):
        return None
    return subject.value is value.value if identity else subject.value == value.value


def _capture_unknown(pattern: cst.CSTNode, captures: Captures) -> None:
    """Every name `pattern` may capture, bound to what the analysis does not know."""
    pending: list[cst.CSTNode] = [pattern]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.MatchAs) and node.name is not None:
            captures[node.name.value] = UNKNOWN
        elif isinstance(node, cst.MatchStar) and node.name is not None:
            captures[node.name.value] = UNKNOWN
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            captures[node.rest.value] = UNKNOWN
        pending.extend(node.children)
