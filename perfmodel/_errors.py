"""The two ways a call can fail: the caller's input, or the solver."""

import re

_ARGUMENT = re.compile(r"\{arg:([a-z_]+)\}")


class InputError(ValueError):
    """Bad user input: the message names the file, row/line and field and what was expected.

    A message names a keyword argument as ``{arg:name}``: Python shows it as ``name=``,
    the command line as its flag (``--name``), through `render`.
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.template = message

    def render(self, spell) -> str:
        """The message with each ``{arg:name}`` replaced by ``spell(name)``."""
        return _ARGUMENT.sub(lambda match: spell(match.group(1)), self.template)

    def __str__(self) -> str:
        return self.render(lambda name: f"{name}=")


class FitError(RuntimeError):
    """The optimiser could not fit valid input (every start gave a non-finite loss, or
    most resampled refits failed): a failure of the method, not the user's mistake."""
