"""The process tree of one verification run: who is in it, how much memory it holds, its end.

The child runs in a session of its own, but the user's code may start processes that leave it
(`start_new_session=True`, a double fork) and would outlive the run, holding its output pipes.
gradguard makes itself their subreaper (`PR_SET_CHILD_SUBREAPER`), so an orphan of the run
becomes its child instead of init's; every process of the run carries `GRADGUARD_VERIFY_RUN` in
its environment. The tree is then: the child and its descendants, plus gradguard's own children
that carry the run's token, and their descendants.

`RLIMIT_DATA` bounds each process but not the tree, nor shared mappings: the parent sums the
tree's proportional set size (`/proc/PID/smaps_rollup`, each shared page counted once across
the tree; resident set size where that file is missing) and kills the tree past the limit.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

TOKEN = "GRADGUARD_VERIFY_RUN"
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux); whether it could."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent() -> bool:
    """In the child: be killed when the parent dies (Linux); whether it could."""
    return _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _parents() -> dict[int, tuple[int, int]]:
    """pid → (parent pid, session id) of every process."""
    parents = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # after the command name, which may hold spaces
        parents[int(entry.name)] = (int(fields[1]), int(fields[3]))
    return parents


def _carries(pid: int, token: str) -> bool:
    try:
        return f"{TOKEN}={token}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


class ProcessTree:
    """The processes of one run: the child `root` and everything it started."""

    def __init__(self, root: int, token: str) -> None:
        self.root = root
        self.token = token

    def members(self) -> list[int]:
        """The run's processes now (the child first), Linux; just the child elsewhere."""
        if not os.path.isdir("/proc/self"):
            return [self.root]
        parents = _parents()
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in parents.items():
            children.setdefault(parent, []).append(pid)
        me = os.getpid()
        # orphans handed to gradguard: of the run's session (a dead one's environment is empty), or with its token
        tops = [self.root] + [p for p in children.get(me, []) if p != self.root
                              and (parents[p][1] == self.root or _carries(p, self.token))]
        found, todo = [], [p for p in tops if p in parents]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def resident_bytes(self) -> int:
        """The memory the run's processes hold (proportional set size where Linux reports it)."""
        total = 0
        for pid in self.members():
            total += _proportional(pid)
        return total

    def kill(self) -> None:
        """Kill every process of the run and reap those that are gradguard's children."""
        seen: set[int] = set()
        for _ in range(20):  # a process may fork while the others are killed: look again
            members = self.members()
            seen.update(members)
            alive = [pid for pid in members if not _is_zombie(pid)]
            if not alive:
                break
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._reap(members)
        seen.update(self.members())
        self._reap(sorted(seen))

    def _reap(self, pids: list[int]) -> None:
        for pid in pids:
            if pid == self.root:
                continue  # its `Popen` waits for it and reads its status
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass  # not gradguard's child: its own parent reaps it


def _proportional(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3] in (b"Z", b"X")
