"""The deployment guide that ships with the tool: docs/guide/NN-*.md, one file per section §1–§13.

Every "§N" a user sees (question help, warnings, the starter repo's files) names one of these sections. The files
are found like the trees (tree/loader.py): inside the wheel (force-included as wizard/docs/guide) or in a source
checkout / editable install (docs/guide beside wizard/). Standard library only: the CLI's start-up time matters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from wizard.errors import InputError

PACKAGE_GUIDE = Path(__file__).resolve().parent / "docs" / "guide"  # inside the wheel (force-included)
SOURCE_GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide"  # a source checkout / editable install

FILE_NAME = re.compile(r"^(\d\d)-[a-z0-9-]+\.md$")
HEADING = re.compile(r"^# §(\d+) (.+)$")
REFERENCE = re.compile(r"§\s?(\d+)")


@dataclass(frozen=True, slots=True)
class GuideSection:
    number: int
    title: str
    text: str  # the Markdown after the heading line
    path: Path

    @property
    def heading(self) -> str:
        return f"§{self.number} {self.title}"


def guide_dir() -> Path:
    """docs/guide, from the installed package or the source checkout."""
    for folder in (PACKAGE_GUIDE, SOURCE_GUIDE):
        if (folder / "README.md").is_file():
            return folder
    raise InputError("guide", "docs/guide", "the bundled guide is missing from this installation")


def read_section(path: Path) -> GuideSection:
    """One section file: its heading `# §N Title` (N must be the number in the file name) and its text."""
    name = FILE_NAME.match(path.name)
    if name is None:
        raise InputError("guide", path.name, "expected a file name like 02-does-it-fit.md")
    first, _, rest = path.read_text(encoding="utf-8").partition("\n")
    heading = HEADING.match(first.strip())
    if heading is None:
        raise InputError(f"guide: {path.name}", first, "expected a first line like '# §2 Does it fit one card?'")
    number = int(heading.group(1))
    if number != int(name.group(1)):
        raise InputError(f"guide: {path.name}", first, f"expected §{int(name.group(1))}, the number of its file name")
    return GuideSection(number=number, title=heading.group(2).strip(), text=rest.strip("\n"), path=path)


@lru_cache(maxsize=1)
def _sections() -> dict[int, GuideSection]:
    out: dict[int, GuideSection] = {}
    for path in sorted(guide_dir().glob("[0-9][0-9]-*.md")):
        s = read_section(path)
        if s.number in out:
            raise InputError("guide", path.name, f"§{s.number} is also {out[s.number].path.name}")
        out[s.number] = s
    return out


def sections() -> list[GuideSection]:
    """Every section, in order."""
    return [s for _, s in sorted(_sections().items())]


def section(n: int) -> GuideSection:
    """Section §n; an InputError naming the sections that exist for any other number."""
    found = _sections().get(n)
    if found is None:
        numbers = sorted(_sections())
        raise InputError("section", n, f"expected a guide section from §{numbers[0]} to §{numbers[-1]}")
    return found


def cited(text: str) -> list[int]:
    """The section numbers a text cites, in order of first mention ("§2, §9 Q3" → [2, 9]; "§3-§5" → [3, 5])."""
    out: list[int] = []
    for m in REFERENCE.finditer(text):
        n = int(m.group(1))
        if n not in out:
            out.append(n)
    return out
