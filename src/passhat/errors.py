"""Errors a user can cause. The CLI prints their message as one paragraph and exits with code 2."""


class UserError(Exception):
    """Bad input from the person running passhat: a flag, a file, a name. Never a traceback."""
