"""The one error type attntrace raises for anything a user can fix."""


class AttntraceError(Exception):
    """a problem the user can fix, said in one line; exit code 1 unless told otherwise"""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
