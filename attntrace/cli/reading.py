"""typer's reading of a command line: each command's help in the chosen language, click's exits, usage errors and
help as exit statuses and one line on stderr."""

from __future__ import annotations

import sys

import click
import typer

from attntrace.cli.clickwords import Choices, joined, sentences, worded
from attntrace.cli.commands import COMMANDS, app, build, described
from attntrace.cli.guard import fail
from attntrace.cli.terminal import Environment
from attntrace.errors import ExitStatus
from attntrace.language import LANGUAGES, N_, _, current


def read(argv: list[str], env: Environment) -> int:
    """typer's reading of the line; click's own exits and usage errors as exit statuses"""
    try:
        chosen = build(argv[:1]) if argv[:1] and argv[0] in COMMANDS else app  # building one command is 15x quicker
        command = typer.main.get_command(chosen)
        for each in [command, *getattr(command, "commands", {}).values()]:
            each.params.append(lang_option())
            described(each)
            _translate_help(each)
            worded(each)
        code = command.main(argv, prog_name="attntrace", standalone_mode=False, obj=env)
        return int(code or 0)
    except click.exceptions.Exit as e:
        return int(e.exit_code)
    except SystemExit:
        if type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):  # click's own answer to a closed pipe (| head)
            return ExitStatus.SUCCESS
        raise
    except click.exceptions.Abort:
        return ExitStatus.ERROR_CTRL_C
    except click.exceptions.NoArgsIsHelpError as e:  # bare `attntrace`: its help, as --help prints it
        click.echo(e.ctx.get_help(), color=e.ctx.color)
        return ExitStatus.SUCCESS
    except click.UsageError as e:
        named = " ".join(["attntrace", *argv[:1]]) if argv[:1] and argv[0] in COMMANDS else "attntrace"
        return fail(env, with_hint(sentences(e), e.ctx, named), e.exit_code)
    except click.ClickException as e:
        return fail(env, e.format_message(), e.exit_code)


def lang_option() -> click.Option:
    """--lang on every command; cli.main has already read it (before anything is written), so it is only checked here"""
    return click.Option(["--lang"], type=Choices(LANGUAGES), expose_value=False, help=N_(
        "Language of what is written for a person (data is the same in every language): en, zh (Simplified Chinese) "
        "or zh-TW (Traditional Chinese); by default from ATTNTRACE_LANG, LC_ALL, LC_MESSAGES or LANG."))


def _translate_help(command: click.Command) -> None:
    """the help of a command and of its options in the chosen language: each text is written
    in English (marked with N_ for the catalogue) and looked up here, when the command line is read, whatever the
    language was at import"""
    if current() == "en":
        return
    for name in ("help", "short_help", "epilog"):
        text = getattr(command, name, None)
        if text:
            setattr(command, name, _paragraphs(text))
    for param in command.params:
        text = getattr(param, "help", None)
        if text:
            param.help = _paragraphs(text)  # type: ignore[attr-defined]


def _paragraphs(text: str) -> str:
    """a help text in the chosen language, each paragraph (each marked with N_ on its own) looked up"""
    return "\n\n".join(_(paragraph) for paragraph in text.split("\n\n"))


def with_hint(said: list[str], ctx: click.Context | None, named: str) -> str:
    """a usage error's sentences, and where to read the help (of the command named when click's parser gives no
    context), in one line"""
    said = [_plain(sentence) for sentence in said]
    if ctx is not None:
        if ctx.command.get_help_option(ctx) is None:
            return joined(said)
        named = ctx.command_path
    return _("{error} Try '{command} --help' for help.").format(error=joined(said), command=named)


def _plain(sentence: str) -> str:
    """click's words for a number that is not one, as a person says it"""
    for click_words, plain in CLICK_WORDS:
        sentence = sentence.replace(click_words, plain)
    return sentence


CLICK_WORDS = (("is not a valid integer", "is not a whole number"), ("is not a valid number", "is not a number"))
