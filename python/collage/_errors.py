"""Errors of the collage libraries as Python exceptions.

Every failed call raises a subclass of collage.Error carrying the library's status code
(collage.StatusCode, collage_status_code_t of include/collage/runtime.h) and its message, which
names the file, node, tensor or kernel at fault.
"""
import enum


class StatusCode(enum.IntEnum):
    """collage_status_code_t."""
    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    CORRUPT = 3
    UNSUPPORTED = 4
    KERNEL_FAILED = 5
    INTERNAL = 6
    IO = 7


class Error(Exception):
    """A failed call of the collage libraries: `code` (StatusCode) and `message`."""

    def __init__(self, code, message):
        try:
            code = StatusCode(code)
        except ValueError:
            pass  # a code a newer library added: kept as the number
        super().__init__(f"{getattr(code, 'name', code)}: {message}")
        self.code = code
        self.message = message


class InvalidArgumentError(Error, ValueError):
    """Bad input: a malformed model, a wrong tensor count, shape or dtype, a bad option."""


class NotFoundError(Error, LookupError):
    """A missing file or runtime module."""


class CorruptArtifactError(Error):
    """An artifact failing a check: truncated, a checksum, a field."""


class UnsupportedError(Error):
    """A valid artifact or model this library cannot run (a version, an operator)."""


class KernelError(Error):
    """A kernel reported an error while running."""


class InternalError(Error):
    """Out of memory, or an unexpected failure."""


class IoError(Error):
    """Reading or writing a file, loading a library."""


_CLASSES = {
    StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    StatusCode.NOT_FOUND: NotFoundError,
    StatusCode.CORRUPT: CorruptArtifactError,
    StatusCode.UNSUPPORTED: UnsupportedError,
    StatusCode.KERNEL_FAILED: KernelError,
    StatusCode.INTERNAL: InternalError,
    StatusCode.IO: IoError,
}


def from_status(code, message):
    """The exception for a failed status (the extension modules raise it)."""
    return _CLASSES.get(code, Error)(code, message)
