"""`tree lint`'s checks that need the real engine: every recommendation's example answers, replayed through the
compute functions, must reach that recommendation, and every result must be what its node declares.

The tree layer's lint walks the tree symbolically (facts probed, never computed), so its first answers reaching a
leaf may take another road once a real model is sized (an 8B model never needs TP). Here each leaf's answers are
replayed with the question nodes' `examples` substituted (a model that fits one card, one that needs a node, one
that needs several; GPU types), and the first set that really reaches the leaf becomes its example.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from wizard.errors import InputError
from wizard.tree.schema import Question, Tree


def candidates(tree: Tree, answers: dict[str, Any]) -> list[dict[str, Any]]:
    """The lint answers, then with each combination of the question nodes' example values substituted (each
    question keeping its lint answer being one of its options)."""
    keep = object()
    varying = [(n.var, [keep, *n.examples]) for n in tree.nodes.values() if isinstance(n, Question) and n.examples]
    out = []
    for combo in product(*(values for _, values in varying)):
        out.append({**answers, **{var: value for (var, _), value in zip(varying, combo) if value is not keep}})
    return out


def replay(tree: Tree, reached: dict[str, dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(leaf → answers that really reach it, problems): a broken compute contract, or a leaf no example reaches."""
    from wizard.session.session import ContractError, run_answers

    examples: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    for leaf, answers in reached.items():
        tried = 0
        for cand in candidates(tree, answers):
            tried += 1
            try:
                session = run_answers({k: v for k, v in cand.items() if v is not None}, tree)
            except ContractError as e:
                errors.append(f"replaying the answers that reach {leaf}: {e}")
                break
            except InputError:
                continue
            except Exception as e:  # noqa: BLE001 (a tree file's own defaults can break a compute function)
                errors.append(f"replaying the answers that reach {leaf}: {type(e).__name__}: {e}")
                break
            if session.state.recommendation == leaf:
                examples[leaf] = cand
                break
        else:
            errors.append(f"recommendation {leaf}: none of {tried} example answer sets reaches it through the "
                          "engine (add `examples:` values to a question node that decides it)")
    return examples, errors
