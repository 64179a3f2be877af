"""The two ways a call can fail: the caller's input, or the solver."""

import re

_ARGUMENT = re.compile(r"\{arg:([a-z_]+)\}")
_SUBJECT = re.compile(r"^\{arg:([a-z_]+)\}(?=[:\s])")  # a message about that argument


class InputError(ValueError):
    """Bad user input: the message names the file, row/line and field and what was expected.

    A message names a keyword argument as ``{arg:name}``: Python shows it as ``name=``
    (``name`` where it opens the message, ``max_gpus: expected …``, ``budget_per_hour
    needs …``), the command line as
    its flag (``--name``), through `render`.
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.template = message

    def render(self, spell) -> str:
        """The message with each ``{arg:name}`` replaced by ``spell(name)``."""
        return _ARGUMENT.sub(lambda match: spell(match.group(1)), self.template)

    def __str__(self) -> str:
        subject = _SUBJECT.sub(r"\1", self.template)
        return _ARGUMENT.sub(lambda match: f"{match.group(1)}=", subject)


class FitError(RuntimeError):
    """The optimiser could not fit valid input (every start gave a non-finite loss, or
    most resampled refits failed): a failure of the method, not the user's mistake."""
