"""The process tree of one verification run: who is in it, how much memory it holds, its end.

The user's code may start processes that leave the run any way a process can: a session and
process group of their own (`setsid`, a double fork), an environment without gradguard's. So the
process gradguard starts for a run is its reaper (`reap_run`), which runs no user code: it forks
the child that does, and is the subreaper (`PR_SET_CHILD_SUBREAPER`) of the run's orphans, which
become its children instead of init's. The run's tree is the reaper and all its descendants: a
relation between processes that nothing a process does to itself undoes. Only a process that
kills the reaper leaves it; for that case gradguard is a subreaper too, and its own children that
carry the run's token (`GRADGUARD_VERIFY_RUN` in their environment) or are in the run's session
are the run's as well.

`RLIMIT_DATA` bounds each process but not the tree, nor shared mappings: the parent sums the
tree's proportional set size (`/proc/PID/smaps_rollup`, each shared page counted once across
the tree; resident set size where that file is missing) and kills the tree past the limit.
"""

from __future__ import annotations

import ctypes
import os
import resource
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


def reap_run(events_fd: int) -> None:
    """Become the run's reaper and fork its child, which returns from this call and runs the user's
    code. This process never returns: it reaps every process of the run until none is left, then
    exits as the child did. Killed with gradguard (SIGTERM: `PR_SET_PDEATHSIG`), it kills the run
    first. `events_fd` is closed here, so that the events pipe ends with the child and its forks."""
    become_subreaper()
    signal.signal(signal.SIGTERM, _kill_run)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:
        os._exit(0)  # gradguard died before that took effect
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        return
    os.close(events_fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    status = 0
    while True:
        try:
            pid, waited = os.wait()
        except ChildProcessError:  # nothing of the run is left
            break
        if pid == child:
            status = waited
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: so is this process, without a core file
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 1)


def _kill_run(signum: int, frame: object) -> None:
    """In the reaper, on SIGTERM: kill the run, reap it, then end."""
    ProcessTree(os.getpid(), "").kill()
    while True:
        try:
            os.wait()
        except ChildProcessError:
            os._exit(128 + signum)


class ProcessTree:
    """The processes of one run: its reaper `root` and everything the run started."""

    def __init__(self, root: int, token: str) -> None:
        self.root = root
        self.token = token

    def members(self) -> list[int]:
        """The run's processes now (the reaper first), Linux; just the reaper elsewhere."""
        if not os.path.isdir("/proc/self"):
            return [self.root]
        parents = _parents()
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in parents.items():
            children.setdefault(parent, []).append(pid)
        me = os.getpid()
        # orphans handed to gradguard if the reaper was killed: of the run's session (a dead one's
        # environment is empty), or with its token
        tops = [self.root] + [p for p in children.get(me, []) if me != self.root != p
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
        """Kill every process of the run but its reaper, which then exits as the run's child did,
        and reap those that are this process's children."""
        seen: set[int] = set()
        for _ in range(20):  # a process may fork while the others are killed: look again
            members = [pid for pid in self.members() if pid != self.root]
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
                pass  # not this process's child: its own parent reaps it


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
