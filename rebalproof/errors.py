"""The one small hierarchy of errors rebalproof raises on purpose.

Every message tells the user what is wrong and what to do about it, on one line.
The CLI turns :class:`InputError` into exit code 2 with no traceback.
"""

__all__ = ["RebalproofError", "InputError", "AssignorError"]


class RebalproofError(Exception):
    """Base of every error rebalproof raises deliberately."""


class InputError(RebalproofError):
    """Bad input or usage: a file, a flag or a JSON document is not what the contract says.

    ``where`` names the place in the document (``members[1].lags``) when there is one.
    """

    def __init__(self, message: str, *, where: str | None = None):
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class AssignorError(RebalproofError):
    """An assignor misbehaved (crashed, hung, answered malformed output).

    This is a *finding* about that assignor, never a crash of rebalproof: it carries
    the input that caused it so that it can be saved and replayed.
    """

    def __init__(self, message: str, *, kind: str, assignor: str, input_json: dict | None = None):
        self.kind = kind  # "crash" | "timeout" | "malformed" | "invalid"
        self.assignor = assignor
        self.input_json = input_json
        super().__init__(message)

    def __reduce__(self):
        """Pickled with its fields (a Spark bucket sends a finding's error to the driver)."""
        return (_assignor_error, (str(self), self.kind, self.assignor, self.input_json, getattr(self, "reading", None)))


def _assignor_error(message: str, kind: str, assignor: str, input_json, reading) -> AssignorError:
    error = AssignorError(message, kind=kind, assignor=assignor, input_json=input_json)
    if reading is not None:
        error.reading = reading  # the boundary reading of the view it failed on (model/group_model.py)
    return error
