"""Source files on disk: read as Python reads them, written back so that nothing is lost.

Reading decodes by PEP 263 (a `# -*- coding: latin-1 -*-` line, a UTF-8 BOM, else UTF-8) and keeps
every line ending as it is (`\\r\\n`, `\\r`), so positions and fixes refer to the bytes on disk.
Only regular files are read (a FIFO or `/dev/zero` named `x.py` would hang or fill memory), and
no more than `MAX_BYTES`.

Writing a fixed text is atomic and careful: it goes to a temporary file beside the original
(same mode and owner), which then replaces it, so a full disk or a size limit leaves the original
whole (a file with other hard links is written in place instead, so that they all see the fix;
a file the user may not write is refused, though the folder would allow the rename);
under an exclusive lock on the original, the file is read again first and left alone if it no
longer holds the text that was analysed (an edit made meanwhile, or another `--fix` run).
"""

from __future__ import annotations

import errno
import fcntl
import io
import os
import stat
import tokenize
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 8_000_000  # 4 bytes a character at most: over the analysis' character limit in any encoding
NOTEBOOK_SUFFIX = ".ipynb"
NOTEBOOK_MAX_BYTES = 100_000_000  # a notebook's outputs (images) dwarf its code, which alone is analysed


class UnreadableSource(OSError):
    """A file gradguard does not read: not a regular file, too large, or not decodable."""


class TooLarge(UnreadableSource):
    """A file over `MAX_BYTES`: skipped, as a text over the analysis' size limit is."""


class SourceChanged(OSError):
    """The file no longer holds the text that was analysed: it is not written over."""


@dataclass(frozen=True)
class SourceFile:
    """A file's text with the encoding it was read in (written back in the same one)."""

    path: Path
    text: str
    encoding: str
    raw: bytes


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes (`MAX_BYTES`); raises
    `TooLarge`, `UnreadableSource` or `OSError`."""
    limit = MAX_BYTES if limit is None else limit
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO must not wait for a writer
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableSource(errno.EINVAL, "not a regular file")
        if info.st_size > limit:
            raise TooLarge(errno.EFBIG, f"it has {info.st_size:,} bytes, over the limit of {limit:,}")
        raw = handle.read(limit + 1)
    if len(raw) > limit:  # it grew while read
        raise TooLarge(errno.EFBIG, f"it has over {limit:,} bytes, the limit")
    return raw


def read_source(path: Path, raw: bytes | None = None, limit: int | None = None) -> SourceFile:
    """The text of `path` (from its bytes `raw`, when already read); raises `UnreadableSource`
    (or `OSError`) when it cannot be read."""
    raw = read_bytes(path, limit) if raw is None else raw
    encoding = source_encoding(raw)
    return SourceFile(path, _decode(raw, encoding), encoding, raw)


def source_encoding(raw: bytes) -> str:
    """The encoding Python would read `raw` in (PEP 263)."""
    try:
        return tokenize.detect_encoding(io.BytesIO(raw).readline)[0]
    except SyntaxError as error:  # an unknown codec named in the coding line
        raise UnreadableSource(errno.EILSEQ, str(error)) from None


def decode_source(raw: bytes) -> str:
    """`raw` decoded as Python would decode it, line endings kept."""
    return _decode(raw, source_encoding(raw))


def _decode(raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise UnreadableSource(errno.EILSEQ, f"it is not valid {encoding}: byte {raw[error.start]:#04x} on line {line} "
                               f"({error.reason}); save it as UTF-8 or declare its encoding (PEP 263)") from None


def is_regular_file(path: Path) -> bool:
    """Whether `path` (its target, for a link) is a regular file; False for a broken link or a loop."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def replace_source(source: SourceFile, text: str) -> None:
    """Write `text` over `source.path`, atomically, unless the file changed since it was read.

    Raises `SourceChanged` when it did, `OSError` when it cannot be written (then the file is
    as it was).
    """
    target = Path(os.path.realpath(source.path))  # a link stays a link: its target is replaced
    try:
        data = text.encode(source.encoding)  # "utf-8-sig" writes the BOM back
    except UnicodeEncodeError as error:
        raise OSError(errno.EILSEQ, f"the fixed text cannot be written in {source.encoding}: {error}") from None
    with open(target, "rb") as current:
        fcntl.flock(current.fileno(), fcntl.LOCK_EX)  # two gradguard runs: the second sees the change
        try:
            locked, now = os.fstat(current.fileno()), os.stat(target)
            replaced = (locked.st_dev, locked.st_ino) != (now.st_dev, now.st_ino)  # by a writer we waited for
            if replaced or current.read(len(source.raw) + 1) != source.raw:
                raise SourceChanged(errno.EAGAIN, "the file changed while gradguard was fixing it; not written")
            if not os.access(target, os.W_OK):  # the folder's permission would let a rename through
                raise PermissionError(errno.EACCES, "Permission denied")
            if locked.st_nlink > 1:  # a rename would leave its other names with the old text
                _write_in_place(target, data)
            else:
                _write_beside(target, data, locked)
        finally:
            fcntl.flock(current.fileno(), fcntl.LOCK_UN)


def _write_in_place(target: Path, data: bytes) -> None:
    with open(target, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def _write_beside(target: Path, data: bytes, original: os.stat_result) -> None:
    import tempfile

    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".gradguard", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(original.st_mode))
        if (original.st_uid, original.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.chown(temporary, original.st_uid, original.st_gid)
            except PermissionError:
                pass  # only root may give a file away: it stays the writer's
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class NotANotebook(ValueError):
    """The text is not an nbformat 4 notebook."""


def is_notebook(filename: str) -> bool:
    """Whether a file's name says it is a Jupyter notebook."""
    return filename.endswith(NOTEBOOK_SUFFIX)
