"""The ``tcprepro`` command line.

This package owns argument parsing and exit codes only; every command calls
the library. Exit status: 0 success, 2 invalid input (named field), 3 missing
capability, 130 interrupted. Nothing is written when a command fails: outputs
appear atomically at the end.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tcprepro.cli.parser import build_parser
from tcprepro.emulation.routes import ROUTES
from tcprepro.errors import TcpreproError

__all__ = ["ROUTES", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tcprepro`` command."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except TcpreproError as exc:
        print(f"tcprepro: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(
            "tcprepro: interrupted; every output written is complete, none half-written",
            file=sys.stderr,
        )
        return 130
