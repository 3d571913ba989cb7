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
        return printable(text)


def _short_repr():  # noqa: ANN202
    import reprlib

    r = reprlib.Repr()
    r.maxstring, r.maxother, r.maxlist, r.maxdict, r.maxlevel = 60, 60, 6, 6, 3
    return r


_SHORT = _short_repr()


def value_text(value: object) -> str:
    """Shorten a value for a one-line message (a whole config file must not flood the terminal). Never raises:
    an integer too long to print (Python refuses str() beyond 4,300 digits) is described by its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 400:
        digits = int((value.bit_length() - 1) * 0.30103) + 1  # exact but at rare powers of ten
        return f"{'-' if value < 0 else ''}an integer of about {digits:,} digits"
    try:
        if isinstance(value, str):
            text = value[:200]
        elif isinstance(value, (list, tuple, dict, set, frozenset)):
            # bounded: YAML aliases can make a 1 MB file a list of 2,000 references to one 1 MB string
            text = _SHORT.repr(value)
        else:
            text = str(value)
    except Exception:  # a value whose str() fails (recursion, a broken object): name its type
        text = f"a {type(value).__name__}"
    text = " ".join(text.split()) if "\n" in text or "\r" in text else text
    return text if len(text) <= 120 else text[:117] + "..."


def printable(text: str) -> str:
    """One terminal line: a line break, U+2028 or a control character from a key, a path or a tensor name is shown
    escaped (as repr shows it), so a message is always exactly one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
