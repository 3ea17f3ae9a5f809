"""What one analysis may spend, and whether its result is still wanted.

The interpreter counts abstract steps (a statement run, a call evaluated) in nested scopes: a
file, each of its functions analysed on its own (and its module-level code), each call it
follows. A scope that spends its steps raises `OverBudget` for itself; its handler cuts that
scope only (a followed call returns an unknown value, a function stops where it is) and the
rest of the file goes on. Steps make the cut repeatable from run to run; CPU time is the
backstop for work that steps do not count (a huge literal), checked every few dozen steps
together with `cancelled()`, which raises `Cancelled` (the caller wants no result
any more: a newer version, a closed document, a shutdown).

One `Budget` covers one analysis and the imported files it reads (`active()`): its CPU time
is the whole analysis's, and reading imports may spend only part of it (`reading()`), so the
file's own code always has time left; past that allowance, imported names stay unknown.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

FILE_CPU_SECONDS = 1.6  # one file's analysis, its parse and reading its imports included
FILE_STEPS = 400_000  # one file: its module-level code and every function analysed on its own
FUNCTION_STEPS = 60_000  # one function (or the module-level code), the calls it follows included
CALL_STEPS = 12_000  # one followed call, the calls it follows in turn included
IMPORTS_CPU_SECONDS = 1.0  # of that, reading the files it imports (parsing them, asking jedi)
_CHECK_EVERY = 64  # steps between two looks at the clock and at `cancelled()`


class Cancelled(Exception):
    """The analysis's result is no longer wanted."""


class OverBudget(Exception):
    """The scope at `depth` (0: the outermost) spent its budget."""

    def __init__(self, depth: int, reason: str) -> None:
        super().__init__(reason)
        self.depth = depth
        self.reason = reason


class Budget:
    """Steps and CPU time for one analysis, in nested scopes, and its cancellation."""

    def __init__(self, cpu_seconds: float = FILE_CPU_SECONDS, cancelled: Callable[[], bool] | None = None,
                 spent: float = 0.0) -> None:
        """`spent`: CPU time the file took before its analysis (its parse), deducted from
        `cpu_seconds` down to half of it."""
        self.cancelled = cancelled
        self.steps = 0
        self._cpu_deadline = time.process_time() + cpu_seconds - min(spent, cpu_seconds / 2)
        self._limits: list[int] = []  # per open scope: the step count it may reach
        self._limit = float("inf")
        self._next_check = _CHECK_EVERY
        self._imports_allowance = IMPORTS_CPU_SECONDS  # what reading imports has left, reads under way aside
        self._reading = 0  # imported files being read, one inside another
        self._reading_since = 0.0  # when the outermost of them started
        self.unread: set[str] = set()  # imported files left unread: reading them had no time left
        self.short_reads = False  # an imported file was read only in part (good for this analysis only)

    def fits(self, steps: int) -> bool:
        """Whether `steps` more steps stay within every open scope."""
        return self.steps + steps <= self._limit

    def step(self) -> None:
        """One abstract step: raises `OverBudget` for the outermost scope it exceeds, `Cancelled`."""
        self.steps += 1
        if self.steps > self._limit:
            depth = next(i for i, limit in enumerate(self._limits) if self.steps > limit)
            raise OverBudget(depth, "steps")
        if self.steps >= self._next_check:
            self._next_check = self.steps + _CHECK_EVERY
            self.check()

    def check(self) -> None:
        """Raise `Cancelled` or, past the CPU time, `OverBudget` for the outermost scope."""
        self.check_wanted()
        if time.process_time() > self._cpu_deadline:
            raise OverBudget(0, "time")

    def check_wanted(self) -> None:
        """Raise `Cancelled` when `cancelled()` says the result is no longer wanted."""
        if self.cancelled is not None and self.cancelled():
            raise Cancelled()

    @contextmanager
    def scope(self, steps: int) -> Iterator[int]:
        """A scope that may take `steps` more steps (never more than the scope around it leaves);
        yields its depth, which its handler compares with `OverBudget.depth`."""
        depth = len(self._limits)
        self._limits.append(int(min(self.steps + steps, self._limit)))
        self._limit = self._limits[-1]
        try:
            yield depth
        finally:
            del self._limits[depth:]
            self._limit = self._limits[-1] if self._limits else float("inf")

    def may_read(self) -> bool:
        """Whether reading imported files has time left (`IMPORTS_CPU_SECONDS`, the read under
        way included)."""
        return self._imports_left() > 0

    def out_of_time(self) -> bool:
        """Whether reading imports, or the whole analysis, has no CPU time left: a read that ends
        so may have stopped short."""
        return self._imports_left() <= 0 or time.process_time() > self._cpu_deadline

    def _imports_left(self) -> float:
        spent = time.process_time() - self._reading_since if self._reading else 0.0
        return self._imports_allowance - spent

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Within, an imported file is read or a name resolved: with scopes of its own (not
        what the caller's scope has left) and a CPU deadline of its own (what reading imports
        has left of `IMPORTS_CPU_SECONDS`, within the file's own deadline)."""
        limits, limit, deadline = self._limits, self._limit, self._cpu_deadline
        start = time.process_time()
        if not self._reading:
            self._reading_since = start
        self._limits, self._limit = [], float("inf")
        self._cpu_deadline = min(deadline, start + max(self._imports_left(), 0.0))
        self._reading += 1
        try:
            yield
        finally:
            elapsed = time.process_time() - start
            self._reading -= 1
            self._limits, self._limit, self._cpu_deadline = limits, limit, deadline
            if not self._reading:
                self._imports_allowance -= elapsed


_active: ContextVar[Budget | None] = ContextVar("gradguard_budget", default=None)


def active() -> Budget | None:
    """The budget of the analysis running in this thread, if any."""
    return _active.get()


def check_wanted() -> None:
    """`Budget.check_wanted` of the analysis running in this thread, if any."""
    if (budget := active()) is not None:
        budget.check_wanted()


@contextmanager
def using(budget: Budget) -> Iterator[Budget]:
    """Within, `active()` is `budget` (the interpreters of imported files read share it)."""
    token = _active.set(budget)
    try:
        yield budget
    finally:
        _active.reset(token)
