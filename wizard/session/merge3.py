"""Line-based merges for `plan --update`, in pure Python (no git needed): a three-way merge (diff3) and the
two-way fallback for a file whose base is unknown.

Three-way, as diff3 and `git merge-file` do it: the lines of the base that both sides kept unchanged are the
sync points (difflib.SequenceMatcher, without its "popular line" heuristic, matches the base against each
side). Between two sync points a stretch changed by one side only takes that side's lines, a stretch both
changed alike takes them once, and a stretch both changed differently is a conflict, written as

    <<<<<<< yours
    (the lines in the folder)
    =======
    (the lines the new plan writes)
    >>>>>>> llm-deploy-wizard

Two-way (no base: a repo written before the base copy existed, or a file of the user's where the plan now writes
one): the lines both texts share are kept and every stretch where they differ is such a conflict, since nothing
says which side changed it.

Lines end at "\\n" only (a "\\r" or U+2028 inside a line stays in it), each keeps its end; a last line without
one gets it before a marker is written after it, so a marker always starts a line.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import NamedTuple

YOURS, SEPARATOR, THEIRS = "<<<<<<< yours\n", "=======\n", ">>>>>>> llm-deploy-wizard\n"


class Merged(NamedTuple):
    text: str
    conflicts: int  # conflict blocks written (0: a clean merge)


def split_lines(text: str) -> list[str]:
    """The lines of `text`, each with its "\\n" (the last one without, when the text does not end with one)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _ended(lines: list[str]) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in lines]


def _conflict(yours: list[str], theirs: list[str]) -> list[str]:
    return [YOURS, *_ended(yours), SEPARATOR, *_ended(theirs), THEIRS]


def _matches(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """(i, j, n): a[i:i+n] == b[j:j+n], in order, the last one (len(a), len(b), 0)."""
    return [tuple(m) for m in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()]  # type: ignore[misc]


def _sync_regions(base: list[str], yours: list[str], theirs: list[str]) -> list[tuple[int, int, int, int, int, int]]:
    """Stretches of the base both sides kept: (base start, base end, yours start, yours end, theirs start, theirs
    end), in order, ending with the empty stretch at the three ends (bzr's merge3 algorithm)."""
    out = []
    ia = ib = 0
    a, b = _matches(base, yours), _matches(base, theirs)
    while ia < len(a) and ib < len(b):
        (abase, amatch, alen), (bbase, bmatch, blen) = a[ia], b[ib]
        start, end = max(abase, bbase), min(abase + alen, bbase + blen)
        if start < end:  # the intersection of the two matches
            out.append((start, end, amatch + start - abase, amatch + end - abase,
                        bmatch + start - bbase, bmatch + end - bbase))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    out.append((len(base), len(base), len(yours), len(yours), len(theirs), len(theirs)))
    return out


def merge3(base: str, yours: str, theirs: str) -> Merged:
    """Merge the user's text and the new text against the base they both came from."""
    b, y, t = split_lines(base), split_lines(yours), split_lines(theirs)
    out: list[str] = []
    conflicts = 0
    iz = iy = it = 0
    for zstart, zend, ystart, yend, tstart, tend in _sync_regions(b, y, t):
        old, mine, new = b[iz:zstart], y[iy:ystart], t[it:tstart]
        if mine == new or new == old:  # both changed alike, or only the user did (or nobody)
            out += mine
        elif mine == old:  # only the plan changed it
            out += new
        else:
            out += _conflict(mine, new)
            conflicts += 1
        out += b[zstart:zend]
        iz, iy, it = zend, yend, tend
    return Merged("".join(out), conflicts)


def merge2(yours: str, theirs: str) -> Merged:
    """Without a base: the shared lines kept, every stretch where the two texts differ a conflict."""
    y, t = split_lines(yours), split_lines(theirs)
    out: list[str] = []
    conflicts = 0
    iy = it = 0
    for ystart, tstart, n in _matches(y, t):
        if y[iy:ystart] or t[it:tstart]:
            out += _conflict(y[iy:ystart], t[it:tstart])
            conflicts += 1
        out += y[ystart:ystart + n]
        iy, it = ystart + n, tstart + n
    return Merged("".join(out), conflicts)
