"""Open and read files a user named without hanging or filling memory (answers files, configs, safetensors
headers, a starter repo's marker): `open_regular` refuses anything but a regular file without blocking on it;
`read_capped` reads at most `limit` bytes, and a FIFO without a writer reads as empty instead of blocking
(process substitution `<(...)` still works for an answers file: its writer is there)."""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import BinaryIO

from wizard.errors import InputError


class TooBig(Exception):
    """The file holds more than the limit."""


def read_capped(path: Path, limit: int) -> bytes:
    """The file's bytes; raises TooBig past `limit`, OSError as the system reports it, ValueError for a NUL."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)  # block for data from a writer that exists
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise TooBig(limit)
    return b"".join(chunks)


def open_regular(path: Path, field: str) -> tuple[BinaryIO, int]:
    """(binary file, size) of a regular file; a FIFO, device, socket or folder is refused without blocking.

    O_NONBLOCK makes opening a FIFO return at once (a plain open waits for a writer); `fstat` then says what
    was opened. Every OSError (missing, permission, name too long, loop) becomes one InputError naming `field`.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise InputError(field, str(path), f"could not be read ({e.strerror or type(e).__name__})") from None
    except ValueError:  # an embedded NUL character
        raise InputError(field, str(path), "could not be read (the path contains a NUL character)") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO, device or socket"
            raise InputError(field, str(path), f"is {kind}; expected a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), info.st_size
    except BaseException:
        os.close(fd)
        raise
