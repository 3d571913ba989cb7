"""'did you mean X?' for a model or GPU id that names nothing: the catalog's nearest ids (difflib).

Only suggestions: nothing here accepts a name it was not given. A one-letter difference can be another real
model (Qwen/Qwen3-4B and Qwen/Qwen3-8B), and a bare name can belong to several owners on the Hub
(Qwen/Qwen2.5-7B-Instruct, and its re-uploads and fine-tunes under other accounts), so the user picks.
difflib is imported only when a message needs it (`size --json` starts without it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

MODEL_CUTOFF = 0.8  # difflib ratio: one or two letters off in a catalog id (23 letters: 0.96; 13 letters: 0.92)
GPU_CUTOFF = 0.6


def did_you_mean(names: Sequence[str]) -> str:
    """'did you mean X?', 'did you mean one of X, Y, Z?', or '' when there is nothing to suggest."""
    if not names:
        return ""
    return f"did you mean {names[0]}?" if len(names) == 1 else f"did you mean one of {', '.join(names)}?"


def model_suggestions(name: str) -> list[str]:
    """Catalog ids close to `name` (ids and aliases, any case), each entry's id once; [] when none is close.

    A bare name (no owner) is compared with the part after the "/": `Qwen2.5-7B-Instruct` gives
    Qwen/Qwen2.5-7B-Instruct, every entry of that exact name if several owners have one. Otherwise the one
    nearest id, when it is at most a few letters away."""
    from wizard.sources.catalog import model_entries

    key = name.strip().lower().rstrip("/")
    if not key:
        return []
    full: dict[str, str] = {}  # lowercase id or alias -> the entry's id
    tails: dict[str, list[str]] = {}  # lowercase name after the owner -> entry ids
    for e in model_entries():
        for n in (e.id, *e.aliases):
            full.setdefault(n.lower(), e.id)
            ids = tails.setdefault(n.lower().rpartition("/")[2], [])
            if e.id not in ids:
                ids.append(e.id)
    if "/" not in key:
        if key in tails:
            return list(tails[key])
        return _unique(i for t in _close(key, tails, 1, MODEL_CUTOFF) for i in tails[t])
    if key in full:  # e.g. a trailing "/" was the only difference
        return [full[key]]
    close = _close(key, full, 1, MODEL_CUTOFF)
    if not close:  # the right name under another owner: meta/Llama-3.1-8B-Instruct
        tail = key.rpartition("/")[2]
        return list(tails.get(tail, ()))
    return [full[c] for c in close]


def gpu_suggestions(name: str, ids: Sequence[str]) -> list[str]:
    """GPU ids close to `name`, by the first rule that finds any: the ids it begins word by word (h100 → the three
    H100s; h20 → h20-96gb, not h200), those it begins ignoring spaces and dashes (rtx pro 6000 → both RTX PRO
    6000s), those holding it (4090 → rtx4090-24gb), else difflib's nearest (as near as the best, less 0.05)."""
    key = "-".join(name.strip().lower().replace("_", " ").split())
    if not key:
        return []
    compact = key.replace("-", "")
    rules = (lambda i: i.startswith(key + "-"), lambda i: i.replace("-", "").startswith(compact),
             lambda i: len(compact) >= 3 and compact in i.replace("-", ""))
    for rule in rules:
        hits = [i for i in ids if rule(i)]
        if hits:
            return hits
    return _close(key, ids, 3, GPU_CUTOFF, within=0.05)


def _close(key: str, names: Iterable[str], n: int, cutoff: float, within: float = 1.0) -> list[str]:
    """difflib.get_close_matches, keeping only those scoring within `within` of the best."""
    import difflib

    scored = []
    for name in names:
        m = difflib.SequenceMatcher(None, key, name)
        if m.real_quick_ratio() >= cutoff and m.quick_ratio() >= cutoff and m.ratio() >= cutoff:
            scored.append((m.ratio(), name))
    scored.sort(key=lambda s: -s[0])  # stable: equal scores keep the catalog's order
    return [name for score, name in scored[:n] if score >= scored[0][0] - within]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
