"""The one base class for problems a user can fix: bad input, a missing file,
an unwritable folder. The command line prints these as one line, no traceback."""


class HomeLoopError(Exception):
    """An input or environment problem, with a message that says what and how to fix."""
