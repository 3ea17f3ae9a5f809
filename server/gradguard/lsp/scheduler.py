"""When analyses run: one thread for all of them, slices, background turns, and the garbage
collector's policy.

Analyses run one at a time on one thread, each within its file's budget. One that has run for
`SLICE` seconds stops at its next step when its result is no longer wanted (a newer version, a
close, a shutdown or a lost client), when a request the user waits for (a hover) or another
document, whose analyses are quicker, waits for the thread: that one goes first, and the
stopped analysis runs again after it. So a slow document never holds back the diagnostics of
the others, nor a hover, and a quick analysis is never stopped half-way. Background work (reading imports, collecting closed documents' trees) takes turns,
one job at a time, once no document has changed for `IDLE` seconds.

While the user types, the cyclic garbage collector waits: a collection of the young generations
that lands on a keystroke costs milliseconds (a keystroke's analysis keeps a few thousand
objects: re-parsed blocks, results, checkpoints), so it runs in a background turn once typing
pauses, and automatic collection resumes after it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable, TypeVar

from gradguard.source.parser import THREAD_STACK

SLICE = 0.05  # seconds an analysis runs before a newer version or another document may stop it
HANDOFF = 0.01  # seconds the event loop waits, blocked, for an analysis it submits (`Scheduler.analyse`)
IDLE = 0.3  # seconds of quiet (no change, no first diagnostics) before background work goes on
TIDY_AFTER = 500_000  # objects allocated (less those freed) while typing, past which the collector runs anyway
# seconds after documents close within which their memory is collected, though others keep changing: a full
# collection with 50 documents open takes a second, which lands on a keystroke unless typing pauses first
RELEASE_WITHIN = 30.0

T = TypeVar("T")


class Scheduler:
    """The analysis thread, the documents waiting for it, what their analyses cost, and the
    turns of background work."""

    def __init__(self) -> None:
        threading.stack_size(THREAD_STACK)  # the analysis thread's deep trees
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradguard-analysis")
        self._waiting: Counter[str] = Counter()  # per document: its analyses waiting for the thread
        self._asked = 0  # requests the user waits for (a hover), queued for the thread
        self._lock = threading.Lock()
        self._cost: dict[str, float] = {}  # per document: how long its last analysis ran (seconds)
        self._background = asyncio.Lock()
        self._releasing = False  # a collection of closed documents' trees is queued
        self._tidying = False  # the collector waits for typing to pause (`active`)
        self._thresholds = gc.get_threshold()  # of automatic collection, when it runs
        self._tidy_task: asyncio.Future[None] | None = None  # kept: the loop holds only a weak reference
        self.last_activity = 0.0  # the event loop's time of the latest change, or first diagnostics
        self.stopping = False  # shut down, or the client is gone: every analysis stops

    async def run(self, job: Callable[..., T], *args: object) -> T:
        """`job(*args)` on the analysis thread, after the jobs queued before it."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, job, *args)

    async def answer(self, job: Callable[..., T], *args: object) -> T:
        """`run(job, *args)` for a request the user waits for: a running analysis stops for it
        once it has run for `SLICE` seconds, and runs again after it."""
        with self._lock:
            self._asked += 1
        return await self.run(self._answering, job, *args)

    def _answering(self, job: Callable[..., T], *args: object) -> T:
        with self._lock:
            self._asked -= 1
        return job(*args)

    async def analyse(self, uri: str, job: Callable[..., T], *args: object) -> T:
        """`run(job, *args)` for an analysis of `uri`, which counts as waiting until it starts.

        The event loop waits for it, blocked, up to `HANDOFF` seconds (less than `SLICE`: no
        analysis would have been stopped meanwhile): the thread hand-offs of the event loop's own
        way cost a keystroke a tenth of a millisecond, and up to half a millisecond at times;
        a longer analysis is then awaited as any other job."""
        with self._lock:
            self._waiting[uri] += 1
        future = self._thread.submit(self._started, uri, job, *args)
        try:
            return future.result(timeout=HANDOFF)
        except concurrent.futures.TimeoutError:  # not the builtin TimeoutError before Python 3.11
            return await asyncio.wrap_future(future)

    def _started(self, uri: str, job: Callable[..., T], *args: object) -> T:
        with self._lock:
            self._waiting[uri] -= 1
            if self._waiting[uri] <= 0:
                del self._waiting[uri]
        return job(*args)

    def should_stop(self, uri: str, started: float, outdated: bool) -> bool:
        """Whether the analysis of `uri`, running since `started` (`time.monotonic()`), stops
        now: past `SLICE`, when it is `outdated` or another document waits whose analysis is
        known to take less than half the time this one has run (so two slow documents never stop
        each other for ever, and documents opened together, whose costs are not known yet, are
        analysed one after another)."""
        if self.stopping:
            return True
        elapsed = time.monotonic() - started
        if elapsed < SLICE:
            return False
        if outdated or self._asked:
            return True
        with self._lock:
            waiting = [other for other, count in self._waiting.items() if count and other != uri]
        return any(other in self._cost and 2 * self._cost[other] < elapsed for other in waiting)

    def cost(self, uri: str, seconds: float, stopped: bool = False) -> None:
        """Record what an analysis of `uri` took (a stopped one: at least that)."""
        self._cost[uri] = max(self._cost.get(uri, 0.0), seconds) if stopped else seconds

    def closed(self, uri: str) -> None:
        """`uri` was closed: forget its cost; collect the trees of the documents closed now, once
        for all those closed together ("close all" sends one didClose per document)."""
        self._cost.pop(uri, None)
        if not self._releasing:
            self._releasing = True
            asyncio.ensure_future(self._release_memory())

    def active(self) -> None:
        """A document changed or got its first diagnostics: the user is about to read or type,
        so background work waits, and so does the garbage collector (`_tidy`)."""
        self.last_activity = asyncio.get_running_loop().time()
        if gc.get_count()[0] > TIDY_AFTER:  # typing that never pauses: its garbage is not kept for ever
            gc.collect(1)
        if not self._tidying:
            self._tidying = True
            gc.set_threshold(0)  # no automatic collection (analyses pause the collector and resume it: not this)
            self._tidy_task = asyncio.ensure_future(self._tidy())

    async def _tidy(self) -> None:
        """Once typing pauses: collect the young generations, and let the collector run again."""
        async with self.background_turn():
            self._tidying = False
            await self.run(gc.collect, 1)
            if not self._tidying:  # no keystroke came while it ran
                gc.set_threshold(*self._thresholds)

    @asynccontextmanager
    async def background_turn(self) -> AsyncIterator[None]:
        """Within, background work runs: one job at a time (all documents' jobs take turns), and
        only once no document has changed (or got its first diagnostics) for `IDLE` seconds."""
        async with self._background:
            await self.quiet()
            yield

    async def quiet(self, within: float = float("inf")) -> None:
        """Once no document has changed (or got its first diagnostics) for `IDLE` seconds, or
        `within` seconds from now, though documents keep changing."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while (wait := min(self.last_activity + IDLE, deadline) - loop.time()) > 0:
            await asyncio.sleep(wait)

    async def settle_memory(self) -> None:
        """Freeze what is alive now (the open documents' trees, the files they import) out of the
        garbage collector's reach: a full collection over them takes hundreds of milliseconds,
        which would land on a keystroke. Closing documents collects once (`closed`)."""
        await self.run(gc.freeze)

    async def _release_memory(self) -> None:
        await asyncio.sleep(IDLE)
        await self.quiet(within=RELEASE_WITHIN)  # a server never quiet must not keep them for ever
        self._releasing = False  # a document closed from now on is collected next time
        await self.run(_collect)  # on the analysis thread: never during another job


def _collect() -> None:
    """Documents were closed: collect their trees (once, now, not on some later keystroke) and
    freeze again what is left."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
