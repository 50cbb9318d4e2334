"""Errors the engine raises.

Front ends map them to one clear line (UsageError, HTTP 4xx, exit code 2).
"""


class HipoError(Exception):
    """Base class: anything a user can fix by changing their input or their folder."""


class MemoryRootError(HipoError):
    """The memory root is missing, not a folder, or not writable."""


class ParseError(HipoError):
    """A raw log or node could not be read as Markdown text (binary, bad encoding)."""


class QueryError(HipoError):
    """A recall query or filter that cannot be run (bad date, bad search syntax)."""


class PathOutsideRootError(HipoError):
    """A requested file lies outside the memory root (`..`, absolute path, symlink out)."""
