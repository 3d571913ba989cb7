"""Read a file a user named without hanging or filling memory: at most `limit` bytes, and a FIFO without a
writer reads as empty instead of blocking (process substitution `<(...)` still works: its writer is there)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


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
