"""Exceptions whose message is meant for the user: one line that says what and where."""


class UserError(Exception):
    """Bad input or a request that cannot be honoured; printed without a traceback."""
