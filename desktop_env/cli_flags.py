"""One flag convention for every command: underscores (``--cache_dir``, ``--path_to_vm``), as run.py and the public
suites' run scripts spell them. The older spellings (``--cache-dir``, ``--image``, a VM's name as a positional
argument) still work as hidden aliases, so scripts written against them keep running."""
from __future__ import annotations

import argparse


def version_text() -> str:
    """``desktop_env <version>``."""
    from desktop_env import __version__

    return f"desktop_env {__version__}"


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """``--version``: print :func:`version_text` and exit."""
    parser.add_argument("--version", action="version", version=version_text())


def _parsers(parser: argparse.ArgumentParser):
    """``parser`` and every sub-command parser below it."""
    yield parser
    for action in parser._actions:  # pylint: disable=protected-access
        if isinstance(action, argparse._SubParsersAction):  # pylint: disable=protected-access
            for sub in dict.fromkeys(action.choices.values()):
                yield from _parsers(sub)


def underscore_flags(parser: argparse.ArgumentParser, hidden: dict[str, str] | None = None) -> None:
    """Give every long option of ``parser`` and its sub-commands its underscore spelling, with the hyphen
    spelling as an alias that parses but that the help does not show; ``hidden`` maps more aliases (e.g. ``--image``) to the
    spelling that help and error messages show instead (``--path_to_vm``)."""
    hidden = hidden or {}
    for p in _parsers(parser):
        table = p._option_string_actions  # pylint: disable=protected-access
        for action in p._actions:  # pylint: disable=protected-access
            shown: list[str] = []
            for flag in action.option_strings:
                if flag in hidden:
                    flag_shown = hidden[flag]
                elif flag.startswith("--") and "-" in flag[2:]:
                    flag_shown = "--" + flag[2:].replace("-", "_")
                else:
                    flag_shown = flag
                aliases = [flag_shown]  # an action of a parent parser is shared: it may be seen already renamed
                if flag_shown.startswith("--") and "_" in flag_shown[2:]:
                    aliases.append("--" + flag_shown[2:].replace("_", "-"))
                for alias in aliases:
                    if table.get(alias, action) is not action:
                        raise ValueError(f"{p.prog}: {flag} and {alias} are two different options")
                    table[alias] = action  # both spellings stay in the table: both parse
                if flag_shown not in shown:
                    shown.append(flag_shown)
            action.option_strings = shown


def merge_positional_name(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """A VM named the old way (``vm stop NAME``) or the one way (``--vm NAME``): both land in ``args.name``."""
    positional = getattr(args, "name_positional", None)
    if positional is None:
        return
    if getattr(args, "name", None) not in (None, positional):
        parser.error(f"two VM names: {positional} and --vm {args.name}; give one (--vm NAME)")
    args.name = positional
