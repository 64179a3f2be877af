class InputError(ValueError):
    """Bad user input: the message names the file, row/line and column and what was expected."""
