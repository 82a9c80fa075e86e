"""The errors attntrace raises for anything a user can fix, and the exit statuses they end a command with."""

from collections.abc import Mapping
from enum import IntEnum
from numbers import Integral

from attntrace.language import N_, _


class ExitStatus(IntEnum):
    SUCCESS = 0
    ERROR = 1
    USAGE = 2
    ERROR_CTRL_C = 130


class AttntraceError(Exception):
    """a problem the user can fix, said in one line; exit code 1 unless told otherwise"""

    def __init__(self, message: str, exit_code: int = ExitStatus.ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class OutOfRange(AttntraceError):
    """a number outside its range: the library names the thing (query, layer, head), the command line its option;
    name and whose are N_-marked English, translated when said (name stays English: the command line looks it up)"""

    def __init__(self, name: str, value: int, top: int, whose: str) -> None:
        super().__init__(_("{name} {value} is out of range; {whose} 1 to {top}").format(
            name=_(name), value=value, whose=_(whose), top=top))
        self.name, self.value, self.top, self.whose = name, value, top, whose

    def as_option(self, option: str) -> str:
        return _("{name} {value} is out of range; {whose} 1 to {top}").format(
            name=option, value=self.value, whose=_(self.whose), top=self.top)


class Setting(AttntraceError):
    """a setting the caller gave, refused in the caller's words: window=0 from Python, --window 0 on the command line
    (as_options). message: N_-marked English; settings maps each of its placeholders to the setting it says and that
    setting's value as text (None: the setting alone; "W": a value to choose); values fill the other placeholders (a
    Setting among them worded as this one is). Exit code 2, a usage error, unless told."""

    def __init__(self, message: str, settings: Mapping[str, tuple[str, str | None]], exit_code: int = ExitStatus.USAGE,
                 **values: object) -> None:
        self.message, self.settings, self.values = message, dict(settings), values
        super().__init__(self.worded({}), exit_code)

    def worded(self, options: Mapping[str, str]) -> str:
        """the message with the command line's options for the settings it has (--window 0), the others as Python
        arguments (window=0)"""
        def say(name: str, text: str | None) -> str:
            if name not in options:
                return name if text is None else f"{name}={text}"
            return options[name] if text is None else f"{options[name]} {text}"

        values = {key: value.worded(options) if isinstance(value, Setting) else value for key, value in self.values.items()}
        return _(self.message).format(**{key: say(*setting) for key, setting in self.settings.items()}, **values)


def whole(name: str, value: object, least: int | None = None) -> int | None:
    """a whole number the caller gave (an int or a numpy integer, never a bool) as an int, at least `least`; None stays
    None; anything else a Setting error naming it"""
    if value is None:
        return None
    if isinstance(value, Integral) and not isinstance(value, bool):
        number = int(value)
        if least is None or number >= least:
            return number
    if least is None:
        raise Setting(N_("{setting} must be a whole number"), {"setting": (name, repr(value))})
    raise Setting(N_("{setting} must be a whole number of at least {least}"), {"setting": (name, repr(value))},
                  least=least)


def said(value: object) -> str:
    """a setting's value in a message as a problem file writes it: true, false, null, "text", 2.5 (else its repr)"""
    if isinstance(value, bool) or type(value).__module__ == "numpy" and type(value).__name__ == "bool":  # np.True_
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)
