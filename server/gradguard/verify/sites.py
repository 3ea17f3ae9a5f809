"""Where in the user's own code an op ran: the line that calls the module doing it.

Runs in the child process (imports torch). The rule is the static analysis's: walking out
from the op, the first line of the user's code wins, except that an op running inside a
`torch.nn` module called by torch itself (an `nn.Sequential` running its children) is placed
where that module was constructed.
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import CodeType, FrameType, TracebackType

import torch

_LIBRARIES = tuple(sorted({os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(__file__)),
                           *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib"))},
                          key=len, reverse=True))
_CALL_IMPL = torch.nn.Module._call_impl.__code__
_WRAPPED_CALL_IMPL = torch.nn.Module._wrapped_call_impl.__code__
_is_user: dict[str, bool] = {}
_positions: dict[CodeType, list] = {}
_constructed: weakref.WeakKeyDictionary[torch.nn.Module, Place] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Site:
    """A place in the user's code: 1-based line, 0-based code-point columns on that line."""

    filename: str
    line: int
    column: int
    end_column: int

    def to_json(self) -> dict:
        return {"filename": self.filename, "line": self.line, "column": self.column, "end_column": self.end_column}


def is_user_file(filename: str) -> bool:
    """Whether `filename` is the user's code: not torch, the stdlib, installed packages or gradguard."""
    known = _is_user.get(filename)
    if known is None:
        path = os.path.abspath(filename)
        known = _is_user[filename] = not filename.startswith("<") and not any(
            path.startswith(folder + os.sep) for folder in _LIBRARIES)
    return known


def _site(code: CodeType, line: int | None, lasti: int) -> Site:
    """The span of the instruction at `lasti` when it lies on `line`, else the line's text."""
    positions = _positions.get(code)
    if positions is None:
        positions = _positions[code] = list(code.co_positions())
    text = linecache.getline(code.co_filename, line or 0).rstrip("\r\n")
    start, end = len(text) - len(text.lstrip()), len(text)
    if 0 <= lasti // 2 < len(positions):
        first, last, column, end_column = positions[lasti // 2]
        if first == line and column is not None and end_column is not None:
            raw = text.encode()  # co_positions counts UTF-8 bytes
            start = len(raw[:column].decode(errors="ignore"))
            end = len(raw[:end_column].decode(errors="ignore")) if last == line else len(text)
    return Site(os.path.abspath(code.co_filename), line or 1, start, end)


class Place:
    """Where a user frame was: turned into a `Site` only when a finding needs one."""

    __slots__ = ("code", "line", "lasti", "_site")

    def __init__(self, code: CodeType, line: int | None, lasti: int) -> None:
        self.code, self.line, self.lasti = code, line, lasti
        self._site: Site | None = None

    def site(self) -> Site:
        if self._site is None:
            self._site = _site(self.code, self.line, self.lasti)
        return self._site


def user_place(frames: Iterable[tuple[FrameType, int | None, int]]) -> tuple[Place | None, str | None]:
    """The user's line for frames listed innermost first as (frame, line, last instruction),
    and the torch module or optimizer the op ran in (`ReLU`, `SGD.step`), if any."""
    module: torch.nn.Module | None = None  # the innermost module the op runs in, until its caller is met
    via: str | None = None
    for frame, line, lasti in frames:
        code = frame.f_code
        if code is _WRAPPED_CALL_IMPL:
            continue
        if module is not None and code is not _CALL_IMPL:  # the frame that called `module`
            constructed = None if is_user_file(code.co_filename) else _constructed.get(module)
            module = None
            if constructed is not None:
                return constructed, via
        if is_user_file(code.co_filename):
            return Place(code, line, lasti), via
        if code is _CALL_IMPL:
            module = frame.f_locals.get("self")
            via = via or type(module).__name__
        elif via is None and code.co_name == "step" and isinstance(frame.f_locals.get("self"), torch.optim.Optimizer):
            via = f"{type(frame.f_locals['self']).__name__}.step"
    return None, via


def _running(frame: FrameType | None) -> Iterator[tuple[FrameType, int | None, int]]:
    while frame is not None:
        yield frame, frame.f_lineno, frame.f_lasti
        frame = frame.f_back


def current_place(depth: int = 1) -> tuple[Place | None, str | None]:
    """`user_place` of the running stack, from the caller `depth` frames up."""
    return user_place(_running(sys._getframe(depth + 1)))


def traceback_site(traceback: TracebackType | None) -> Site | None:
    """The user's line where an exception was raised, by `user_place`'s rule."""
    frames = []
    while traceback is not None:
        frames.append((traceback.tb_frame, traceback.tb_lineno, traceback.tb_lasti))
        traceback = traceback.tb_next
    place, _ = user_place(frames[::-1])
    return None if place is None else place.site()


def user_frames(traceback: TracebackType | None) -> list[Site]:
    """The user's own lines in a traceback, outermost first."""
    sites = []
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if is_user_file(code.co_filename):
            sites.append(_site(code, traceback.tb_lineno, traceback.tb_lasti))
        traceback = traceback.tb_next
    return sites


def record_constructions() -> None:
    """From now on, remember where each `nn.Module` is constructed: the first user line outside
    the `__init__` methods of the module itself."""
    original = torch.nn.Module.__init__

    def __init__(self: torch.nn.Module, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)
        if self in _constructed:
            return
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            inside = frame.f_code.co_name == "__init__" and frame.f_locals.get("self") is self
            if not inside and is_user_file(frame.f_code.co_filename):
                _constructed[self] = Place(frame.f_code, frame.f_lineno, frame.f_lasti)
                return
            frame = frame.f_back

    torch.nn.Module.__init__ = __init__  # type: ignore[method-assign]
