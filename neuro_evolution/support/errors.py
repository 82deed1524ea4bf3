"""Every error and warning type a user sees, in one low-level module (it imports nothing).

The command lines (:mod:`neuro_evolution.cli`) print the errors in :data:`USER_ERRORS` as one
line and exit with code 2; any other exception is a bug and keeps its traceback. Raise the type
whose meaning fits; the message names what to fix (a config field, a file, an option).
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value is wrong; ``str(error)`` is one line naming the field path and the fix."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # Raised in a worker (e.g. an env module missing there), it must survive pickling.
        return (type(self), (self.path, self.message))


class UserError(Exception):
    """A problem with the user's input; the message is one actionable line."""


class UnsupportedSpaceError(ValueError):
    """The environment's observation or action space cannot be mapped to a brain."""


class HandlerStartError(RuntimeError):
    """A handler could not start for a reason the user can fix (one actionable line)."""


class DamagedFileError(UserError):
    """A file the framework reads cannot be read (truncated, not its format, keys missing); the
    message names the file."""


class FolderNotWritableError(UserError, OSError):
    """A file cannot be created in its folder (read-only, no permission): one line naming the
    folder. Also an OSError, so code that survives a failed write still does."""

    def __init__(self, message: str):
        OSError.__init__(self, message)


class ResumeError(UserError):
    """A run directory cannot be resumed; the message is one line naming the file and the fix."""


class ResumeWarning(UserWarning):
    """Resuming is possible, but something differs from when the run was written."""


class PerformanceWarning(UserWarning):
    """The run works, but a part of it wastes time the user can save (one actionable line)."""


# Errors a user can act on: the command lines print them as one line, exit code 2.
USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    ConfigError,
    UnsupportedSpaceError,
    HandlerStartError,
    FileExistsError,
    FileNotFoundError,
)


def first_line(error: BaseException) -> str:
    """The first line of an exception's message, or its type name when it has none."""
    text = str(error)
    return text.splitlines()[0] if text.strip() else type(error).__name__
