"""The errors attntrace raises for anything a user can fix, and the exit statuses they end a command with."""

from enum import IntEnum


class ExitStatus(IntEnum):
    SUCCESS = 0
    ERROR = 1
    USAGE = 2
    ERROR_CTRL_C = 130


class AttntraceError(Exception):
    """a problem the user can fix, said in one line; exit code 1 unless told otherwise"""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class OutOfRange(AttntraceError):
    """a number outside its range: the library names the thing (query, layer, head), the command line its option;
    name and whose are N_-marked English, translated when said (name stays English: the command line looks it up)"""

    def __init__(self, name: str, value: int, top: int, whose: str) -> None:
        from attntrace.language import _

        super().__init__(_("{name} {value} is out of range; {whose} 1 to {top}").format(
            name=_(name), value=value, whose=_(whose), top=top))
        self.name, self.value, self.top, self.whose = name, value, top, whose

    def as_option(self, option: str) -> str:
        from attntrace.language import _

        return _("{name} {value} is out of range; {whose} 1 to {top}").format(
            name=option, value=self.value, whose=_(self.whose), top=self.top)


def said(value: object) -> str:
    """a setting's value in a message as a problem file writes it: true, false, null, "text", 2.5 (else its repr)"""
    if isinstance(value, bool) or type(value).__module__ == "numpy" and type(value).__name__ == "bool":  # np.True_
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)
