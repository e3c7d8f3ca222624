"""Exceptions that the command line turns into clear messages and exit codes.

``ConfigError`` (exit status 2) means the user's input is wrong: a scenario
field, a ``--set`` override, a workflow config entry. It is raised before any
simulation starts. ``CapabilityError`` (exit status 3) means this host lacks
something a run needs (a kernel module, root, a program); its message names
the missing capability and how to get it.
"""

from __future__ import annotations

__all__ = ["CapabilityError", "ConfigError", "TcpreproError"]


class TcpreproError(Exception):
    """Base class of the errors tcprepro reports without a traceback."""

    exit_code = 1


class ConfigError(TcpreproError, ValueError):
    """Invalid scenario, override or workflow configuration.

    Parameters
    ----------
    message
        What is wrong, naming the offending field.
    source
        The file (or ``--set`` option) the bad value came from, if known.
    """

    exit_code = 2

    def __init__(self, message: str, source: str | None = None) -> None:
        self.source = source
        super().__init__(f"{source}: {message}" if source else message)


class CapabilityError(TcpreproError, RuntimeError):
    """A capability the run needs is missing on this host."""

    exit_code = 3
