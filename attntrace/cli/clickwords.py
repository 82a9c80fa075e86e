"""click's and typer's own words in the language of the run, through attntrace's catalogue: the usage line's
placeholders, the names of types (click's metavars and its "is not a valid ..." errors), and its usage errors said as
sentences with the language's punctuation, a suggestion once."""

from __future__ import annotations

import copy
from collections.abc import Iterable

import click
from typer.core import TyperCommand, TyperGroup

from attntrace.cli.helpwidth import HelpContext
from attntrace.language import N_, _, current

# what click calls a value of each type, in its errors and, in upper case, as an option's placeholder (INTEGER, 整数)
TYPES: dict[type[click.ParamType], str] = {
    click.types.IntParamType: N_("integer"), click.types.IntRange: N_("integer"),
    click.types.FloatParamType: N_("number"), click.types.FloatRange: N_("number"), click.types.StringParamType: N_("text"),
}
OPTIONS_METAVAR = N_("[OPTIONS]")
COMMAND_METAVAR = N_("COMMAND [ARGS]...")
ENDS = (".", "?", "!", "。", "？", "！")  # what ends a sentence
NO_SUCH_COMMAND = getattr(click.exceptions, "NoSuchCommand", None)  # click 8.4 and later


class Choices(click.Choice):  # type: ignore[type-arg]
    """click's Choice, its refusal in the chosen language's list: 'a', 'b' or 'c'"""

    def get_invalid_choice_message(self, value: object, ctx: click.Context | None) -> str:
        return _("{value!r} is not one of {choices}.").format(value=value, choices=either(repr(c) for c in self.choices))


class Command(TyperCommand):
    """a command whose help is wrapped by display width and whose usage line is in the chosen language"""

    context_class = HelpContext

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return placeholders(super().collect_usage_pieces(ctx))

    def format_arguments(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """nothing: typer lists the arguments with the options (click 8.5 would list them twice)"""


class Group(TyperGroup):
    """the app: its help wrapped by display width, its usage line in the chosen language"""

    context_class = HelpContext

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return placeholders(super().collect_usage_pieces(ctx))

    def format_arguments(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """nothing: typer lists the arguments with the options"""


def placeholders(pieces: list[str]) -> list[str]:
    """click's usage pieces with its own placeholders ([OPTIONS], COMMAND [ARGS]...) in the chosen language"""
    return [_(piece) if piece in (OPTIONS_METAVAR, COMMAND_METAVAR) else piece for piece in pieces]


def worded(command: click.Command) -> None:
    """the command's parameters' placeholders and type names in the chosen language"""
    for param in command.params:
        if param.metavar is not None and isinstance(param, click.Option):
            param.metavar = _(param.metavar)  # declared with N_
        name = TYPES.get(type(param.type))
        if name is not None:
            named = copy.copy(param.type)  # the parameter's own: click's types are shared
            named.name = _(name)
            param.type = named


def sentences(error: click.UsageError) -> list[str]:
    """a usage error of click's as the sentences it says: what is wrong, then what was perhaps meant"""
    if isinstance(error, click.MissingParameter):
        kind = error.param_type or (error.param.param_type_name if error.param is not None else "")
        hint = error.param.get_error_hint(error.ctx) if error.param is not None and error.ctx is not None else ""
        missing = {"argument": _("Missing argument"), "option": _("Missing option")}.get(kind, _("Missing parameter"))
        return [f"{missing} {hint}".strip()]
    if NO_SUCH_COMMAND is not None and isinstance(error, NO_SUCH_COMMAND):  # typer adds its own suggestion to message
        said = [_("No such command {name!r}.").format(name=error.command_name)]
    elif isinstance(error, click.NoSuchOption):
        said = [error.message]
    else:
        return [error.format_message()]
    possibilities = getattr(error, "possibilities", None)
    if possibilities:
        said.append(_("Did you mean {names}?").format(names=either(repr(p) for p in sorted(possibilities))))
    return said


def either(names: Iterable[str]) -> str:
    """names as a list to choose from: 'a', 'b' or 'c'"""
    listed = list(names)
    if len(listed) < 2:
        return "".join(listed)
    return _("{these} or {last}").format(these=_(", ").join(listed[:-1]), last=listed[-1])


def ended(text: str) -> str:
    """text as a whole sentence: ending with the language's full stop unless it ends with one already (an ASCII full
    stop after a Chinese sentence made one)"""
    text = text.rstrip()
    if current() == "en":
        return text if text.endswith(ENDS) else f"{text}."
    if text.endswith("."):
        text = text[:-1]
    return text if text.endswith(ENDS) else f"{text}。"


def joined(said: list[str]) -> str:
    """sentences one after the other: a space between them in English, none in Chinese"""
    return ("" if current() != "en" else " ").join(ended(sentence) for sentence in said)
