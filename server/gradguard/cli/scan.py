"""Analysing many files: cached results first, the rest in parallel on every core."""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gradguard.cli.cache import Cache
from gradguard.config import Settings
from gradguard.findings import Finding

if TYPE_CHECKING:
    from gradguard.analysis.project import ProjectIndex

_PARALLEL_FROM = 24  # fewer files than this are analysed in this process: workers cost more
_FULL_COLLECTION_AFTER = 512  # readings evicted (frozen garbage) between two full collections, each seconds long


@dataclass
class FileResult:
    """One file's findings, the files its analysis read, or its failure."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    dependencies: tuple[str, ...] = ()
    failure: str | None = None


def analyse_files(items: list[tuple[Path, str, Settings]]) -> list[FileResult]:
    """Analyse (path, text, settings) items in order with one project index.

    After each file but the last, the collector runs over what that file's analysis left (its
    garbage, the imported files it read) and what survives is frozen out of its way: each
    collection then walks one file's objects, never again the readings of all the files before
    (collections over those took a seventh of a scan). Readings the index let go of are frozen
    too: once `_FULL_COLLECTION_AFTER` of them, all is collected again."""
    from gradguard.engine import project_index  # not for a run the cache answers
    from gradguard.source.parser import collector_paused

    project = project_index()
    project.will_analyse(str(path) for path, _, _ in items)
    results = []
    evicted = project.evicted
    for number, (path, text, settings) in enumerate(items, 1):
        with collector_paused():  # one collection per file, this one: none when the collector is enabled again
            results.append(_analysed(project, path, text, settings))
            if project.evicted - evicted >= _FULL_COLLECTION_AFTER:
                gc.unfreeze()
                evicted = project.evicted
            if number < len(items):  # after the last, the process reports and exits: nothing to reclaim
                gc.collect()
            gc.freeze()  # for the rest of the process: its exit then skips a last collection over all of them
    return results


def _analysed(project: ProjectIndex, path: Path, text: str, settings: Settings) -> FileResult:
    """One file's result (its failure, if its analysis fails: never the others')."""
    from gradguard.engine import analyse_document
    from gradguard.source.document import Document

    try:
        document = Document.parse(str(path), text, project.parsed(str(path), text))
        findings = analyse_document(document, settings, project)
        return FileResult(str(path), findings, tuple(sorted(project.read_by(str(path)))))
    except Exception as error:  # one file's failure must not hide the others' findings
        if os.environ.get("GRADGUARD_DEBUG"):
            raise
        message = str(error).splitlines()[0][:200] if str(error) else ""
        return FileResult(str(path), failure=f"{path}: {type(error).__name__}: {message}")


def scan(items: list[tuple[Path, str, Settings]], cache: Cache | None, jobs: int) -> list[FileResult]:
    """Results for every item: from the cache when nothing it depends on changed, else analysed."""
    results: dict[str, FileResult] = {}
    todo = []
    for path, text, settings in items:
        cached = cache.get(str(path), text, repr(settings)) if cache is not None else None
        if cached is not None:
            results[str(path)] = FileResult(str(path), cached)
        else:
            todo.append((path, text, settings))
    progress = _Progress(len(todo))
    if jobs > 1 and len(todo) >= _PARALLEL_FROM:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        default = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
        if default == "fork":  # the workers get the engine imported and the op table read (0.25 CPU s each)
            import gradguard.engine  # noqa: F401
            from gradguard.knowledge import ops

            ops.load()
            gc.freeze()  # the workers' collections never walk what they inherit: its pages stay shared, not copied
        chunks = _contiguous(todo, jobs)
        pool = ProcessPoolExecutor(max_workers=jobs)
        try:
            futures = [pool.submit(analyse_files, chunk) for chunk in chunks]
            for future in as_completed(futures):
                done = future.result()
                progress.advance(len(done))
                results.update((r.path, r) for r in done)
        except BaseException:  # a signal or an interrupt: stop the workers now, not after the queue
            for worker in list((getattr(pool, "_processes", None) or {}).values()):
                worker.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    elif todo:
        done = analyse_files(todo)
        progress.advance(len(done))
        results.update((r.path, r) for r in done)
    progress.finish()
    if cache is not None:
        for path, text, settings in todo:
            result = results[str(path)]
            if result.failure is None:
                cache.put(str(path), text, repr(settings), result.dependencies, result.findings)
    return [results[str(path)] for path, _, _ in items]


def _contiguous(todo: list[tuple[Path, str, Settings]], parts: int) -> list[list[tuple[Path, str, Settings]]]:
    """`todo` in `parts` runs of neighbouring files (which import each other: each worker reads
    them once) of about the same length of text, what their analyses take."""
    total = sum(len(text) for _, text, _ in todo)
    chunks: list[list[tuple[Path, str, Settings]]] = [[]]
    done = 0
    for item in todo:
        if done >= total * len(chunks) / parts and len(chunks) < parts:
            chunks.append([])
        chunks[-1].append(item)
        done += len(item[1])
    return chunks


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal and the scan is long."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.shown = total >= _PARALLEL_FROM and sys.stderr.isatty()

    def advance(self, count: int) -> None:
        self.done += count
        if self.shown:
            filled = self.done * 30 // max(self.total, 1)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} files")
            sys.stderr.flush()

    def finish(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()
