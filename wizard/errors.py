"""The one error type users see: it names the field, the value and what is accepted (exit status 2)."""

from __future__ import annotations


class InputError(Exception):
    """Bad input from a user, a file or a source; rendered as one line, never a traceback."""

    def __init__(self, field: str, value: object, accepted: str, *, hint: str = "") -> None:
        self.field = field
        self.value = value
        self.accepted = accepted
        self.hint = hint
        super().__init__(self.line())

    def line(self) -> str:
        shown = repr(value_text(self.value))
        text = f"{self.field}: {shown} is not accepted; {self.accepted}"
        if self.hint:
            text += f" ({self.hint})"
        return text


def value_text(value: object) -> str:
    """Shorten a value for a one-line message (a whole config file must not flood the terminal)."""
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."
