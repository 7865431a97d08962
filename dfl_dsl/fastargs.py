"""The `dfl` command line read by argparse, from the typer commands' own signatures.

typer validates every parameter through a pydantic TypeAdapter: importing pydantic and
building the adapters costs ~0.15 s per run (more than `dfl check`'s own work). The commands
are declared once, for typer (`Annotated[T, typer.Option("--data", "-d")]`); this module reads
those declarations and parses a command line with argparse when it can be parsed the plain way
— known command, known options, values that convert. Anything else (help, completion, a
mistake that needs typer's error message, an annotation it doesn't know) is left to typer, so
typer stays the single source of the interface and of its error messages.
"""

from __future__ import annotations

import argparse
import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path

from typer.models import ArgumentInfo, OptionInfo

PLAIN = (str, int, float, Path)


class _Refused(Exception):
    """argparse would print an error or help: typer should handle this command line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise _Refused(message)

    def exit(self, status: int = 0, message: str | None = None):
        raise _Refused(message)


def fast_call(app, argv: list[str]) -> tuple[Callable, dict] | None:
    """(the command's function, its keyword arguments) for `argv`, or None: let typer parse."""
    if not argv or argv[0].startswith("-") or "--help" in argv:
        return None
    for info in app.registered_commands:
        callback = info.callback
        if callback is not None and (info.name or callback.__name__.replace("_", "-")) == argv[0]:
            break
    else:
        return None
    parser = command_parser(callback)
    if parser is None:
        return None
    try:
        return callback, vars(parser.parse_args(argv[1:]))
    except _Refused:
        return None


def command_parser(callback: Callable) -> argparse.ArgumentParser | None:
    """An argparse parser with the command's arguments and options (None: a parameter that
    isn't a plain `Annotated[T, typer.Argument/Option]` of a plain type)."""
    function = inspect.unwrap(callback)
    hints = typing.get_type_hints(function, include_extras=True)
    parser = _Parser(add_help=False, allow_abbrev=False)
    for name, param in inspect.signature(function).parameters.items():
        spec = _declared(hints.get(name))
        if spec is None:
            return None
        kind, info = spec
        required = param.default in (inspect.Parameter.empty, ...)
        default = None if required else param.default
        if isinstance(info, ArgumentInfo):
            parser.add_argument(name, type=kind, **({} if required else {"nargs": "?",
                                                                          "default": default}))
        elif kind is bool:
            decls = _option_names(info)
            if not decls or any("/" in d for d in decls):
                return None  # typer's `--x/--no-x` pairs: left to typer
            parser.add_argument(*decls, dest=name, action="store_true", default=default)
        else:
            decls = _option_names(info) or (f"--{name.replace('_', '-')}",)
            parser.add_argument(*decls, dest=name, type=kind, required=required,
                                default=default)
    return parser


def _option_names(info: OptionInfo) -> tuple[str, ...]:
    """The names an option was declared with: in `Annotated`, typer reads `Option("--data",
    "-d")`'s first argument (its `default` slot) as the first name."""
    first = () if info.default is ... else (info.default,)
    return (*first, *(info.param_decls or ()))


def _declared(hint) -> tuple[type, ArgumentInfo | OptionInfo] | None:
    """(the plain type, typer's info) of `Annotated[T | None, typer.Option(...)]`."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    kind, *extras = typing.get_args(hint)
    info = next((e for e in extras if isinstance(e, ArgumentInfo | OptionInfo)), None)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        options = [k for k in typing.get_args(kind) if k is not type(None)]
        kind = options[0] if len(options) == 1 else None
    if info is None or (kind not in PLAIN and kind is not bool):
        return None
    return kind, info
