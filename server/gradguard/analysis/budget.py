"""What one analysis may spend, and whether its result is still wanted.

The interpreter counts abstract steps (a statement run, a call evaluated, a module copied) in
nested scopes: a file, each of its functions analysed on its own (and its module-level code),
each call it follows. A scope that spends its steps raises `OverBudget` for itself; its handler
cuts that scope only (a followed call returns an unknown value, a function stops where it is)
and the rest of the file goes on. Steps make every cut the same from run to run, on any machine
and under any load; CPU time is only the backstop for work that steps do not count (a huge
literal), checked every few dozen steps together with `cancelled()`, which raises `Cancelled`
(the caller wants no result any more: a newer version, a closed document, a shutdown).

One `Budget` covers one analysis and the imported files it reads (`active()`). Reading an
imported file counts for its lines (`READ_STEPS_PER_LINE`) and those of the files its reading
needed, charged to the analysis that uses it (`charge`) whether it reads the file now or finds it
read, as an import or as a file analysed itself: the files an analysis may use are then the same
whatever was read before it, in any order. Past `IMPORT_STEPS`, imported names stay unknown. A
file's reading has an allowance of its own for the files it needs (`own_allowance`): what it
defines depends on its text alone, and one reading serves every analysis.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

FILE_CPU_SECONDS = 1.6  # the backstop: one file's analysis, its parse included (not the reading of its imports)
READ_CPU_SECONDS = 8.0  # the backstop of reading an import with what it needs (within IMPORT_STEPS: 3 s cold here)
FILE_STEPS = 400_000  # one file: its module-level code and every function analysed on its own
FUNCTION_STEPS = 60_000  # one function (or the module-level code), the calls it follows included
CALL_STEPS = 12_000  # one followed call, the calls it follows in turn included
IMPORT_STEPS = 400_000  # the imported files one analysis uses, each file's reading counted once
READ_STEPS_PER_LINE = 8  # a line of an imported file read: its parse and top level (about their CPU time)
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
        self.charged: dict[str, int] = {}  # the imported files charged, with their steps
        self.import_steps = 0  # their sum
        self.unread: set[str] = set()  # imported files left unread: past `IMPORT_STEPS`
        self.short_reads = False  # an imported file was read only in part (good for this analysis only)
        self._read_since: float | None = None  # while an import is read: when its reading started

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
        """Whether the imported files charged so far leave steps for another."""
        return self.import_steps < IMPORT_STEPS

    def charge(self, file: str, cost: dict[str, int], unread: frozenset[str] = frozenset()) -> bool:
        """Charge the reading of `file` to this analysis: `cost` gives the steps of each file that
        reading needed (itself included), each charged once per analysis; `unread`, the files that
        reading left unread, are unread here too. Whether they fit within `IMPORT_STEPS` (else
        nothing is charged and `file` stays unread here)."""
        if file in self.charged:  # charged with all it needed
            return True
        more = {read: steps for read, steps in cost.items() if read not in self.charged}
        if self.import_steps + sum(more.values()) > IMPORT_STEPS:
            self.unread.add(file)
            return False
        self.charge_again(more, unread)
        return True

    def charge_again(self, cost: dict[str, int], unread: frozenset[str] = frozenset()) -> None:
        """Charge `cost` (the files not charged yet) and `unread` whether they fit or not: what the
        module level of an earlier run used, where its result stands (an editor's next version from
        a checkpoint, or with only function bodies changed), so that the functions analysed after
        it have what it left them, as in a run from the top."""
        more = {read: steps for read, steps in cost.items() if read not in self.charged}
        self.charged.update(more)
        self.import_steps += sum(more.values())
        self.unread.update(unread)

    @contextmanager
    def own_allowance(self) -> Iterator[None]:
        """Within, an imported file's top level is read with an allowance of its own: the files it
        needs are charged to it from nothing (up to `IMPORT_STEPS`), not to the analysis that asked
        for it, so that what it defines depends on its text alone and it is read once for every
        analysis; each is then charged with all it needed (`charge`)."""
        saved = self.charged, self.import_steps, self.unread
        self.charged, self.import_steps, self.unread = {}, 0, set()
        try:
            yield
        finally:
            self.charged, self.import_steps, self.unread = saved

    def out_of_time(self) -> bool:
        """Whether the analysis is past its CPU time: a read that ends so may have stopped short."""
        return time.process_time() > self._cpu_deadline

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Within, an imported file is read or a name resolved, with scopes of its own (not what the
        caller's scope has left); its steps do not count for the caller (`charge` counts them), nor
        its CPU time: the outermost reading has `READ_CPU_SECONDS` of its own. Steps decide what a
        reading gets (`IMPORT_STEPS`), so that a cold first analysis, reading what later ones find
        read, gets the same; its clock stops only pathological input."""
        limits, limit, steps = self._limits, self._limit, self.steps
        self._limits, self._limit = [], float("inf")
        outermost = self._read_since is None
        if outermost:
            self._read_since = time.process_time()
            deadline, self._cpu_deadline = self._cpu_deadline, self._read_since + READ_CPU_SECONDS
        try:
            yield
        finally:
            self._limits, self._limit, self.steps = limits, limit, steps
            self._next_check = min(self._next_check, steps + _CHECK_EVERY)
            if outermost:
                self._cpu_deadline = deadline + time.process_time() - self._read_since  # type: ignore[operator]
                self._read_since = None


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
