"""The evaluation order of a workbook's formulas: Tarjan's strongly connected components.

The formula cells and the formula cells each one refers to form a directed graph.  Tarjan's
algorithm visits it depth first and emits each strongly connected component once all the
components it depends on are out: a component of one cell is an ordinary formula, one of
several cells (or a cell that refers to itself) is a circular reference.  The walk is
iterative (an explicit stack), so a chain of a million cells does not exhaust Python's
recursion limit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

__all__ = ["dependency_order"]


def dependency_order(roots: Iterable[Hashable], precedents: Callable[[Hashable], list]
                     ) -> tuple[list, list[list]]:
    """Every node reachable from ``roots``, each after the nodes it depends on; and the cycles.

    Parameters
    ----------
    roots : iterable
        Where to start (each root and what it depends on is ordered).
    precedents : callable
        ``precedents(node)`` -> the nodes ``node`` depends on; called once per node, when the
        walk first reaches it.

    Returns
    -------
    order : list
        The nodes, precedents first; the members of a cycle are next to each other.
    cycles : list of list
        The strongly connected components that are cycles: more than one node, or one node
        that depends on itself.
    """
    index: dict = {}
    low: dict = {}
    deps: dict = {}
    onstack: set = set()
    stack: list = []
    order: list = []
    cycles: list = []
    counter = 0
    for root in roots:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                onstack.add(v)
                deps[v] = precedents(v)
            succ = deps[v]
            recurse = False
            while i < len(succ):
                w = succ[i]
                i += 1
                if w not in index:
                    work.append((v, i))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in onstack:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = _pop_component(v, stack, onstack)
                if len(comp) > 1 or v in succ:
                    cycles.append(comp)
                order.extend(comp)
            if work:
                u, _ = work[-1]
                low[u] = min(low[u], low[v])
    return order, cycles


def _pop_component(v, stack: list, onstack: set) -> list:
    """The strongly connected component whose root is ``v``: the stack down to ``v``."""
    comp = []
    while True:
        w = stack.pop()
        onstack.discard(w)
        comp.append(w)
        if w == v:
            return comp
