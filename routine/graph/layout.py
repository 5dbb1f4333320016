"""A layered (Sugiyama-style) layout of cards and the links between them (pure).

Each card asks for a layer (its ``rank``: the project on top, then who works on it, the tasks,
the artifacts, what they derive from); a link between two cards runs downwards, so a card sits
at least one layer below every card that links down to it (cycles broken first). A link that
spans several layers passes through placeholder slots in the layers between (a lane kept free
of cards). The order inside each layer is swept up and down by the neighbours' barycentres
(with swaps of neighbours after), from several starts, and the order with the fewest crossings
kept; x positions then pull each card towards its neighbours, keeping the order and the gaps,
and a long link's lane towards the straight line between its ends (``routing`` then clears the
lines that still pass through a card, and picks each link's sides).
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from dataclasses import dataclass

GAP_X, GAP_Y, LANE_W, LANE_MAX, LANE_WEIGHT, PASSES, RESTARTS = 60, 150, 40, 400, 4.0, 12, 8
SHARE_AROUND = 8  # a hub has at least one in this many of its neighbours (one at least) above it and below
BIG = 1600  # slots (cards and lanes) times starts worth sweeping
LANE_PULL = 3.0


@dataclass(frozen=True)
class Card:
    id: str
    width: int
    height: int
    rank: int  # the layer its kind asks for; links may push it lower


def _oriented(cards: dict[str, Card], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Every link pointing down (from the lower rank), each pair once, cycles broken."""
    down: list[tuple[str, str]] = []
    for u, v in edges:
        if u == v or u not in cards or v not in cards:
            continue
        pair = (v, u) if cards[u].rank > cards[v].rank else (u, v)
        if pair not in down and pair[::-1] not in down:
            down.append(pair)
    succ: dict[str, list[str]] = defaultdict(list)
    for u, v in down:
        succ[u].append(v)
    back, state = set(), {}
    for root in sorted(cards, key=lambda n: cards[n].rank):
        if root in state:
            continue
        stack = [(root, iter(succ[root]))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(succ[child])))
    return [(v, u) if (u, v) in back else (u, v) for u, v in down]


def _layers(cards: dict[str, Card], down: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from the top; a card nothing links down to sits just above the highest card it
    links to (not at the top), a card with no links in the layer its kind asks for."""
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    for u, v in down:
        preds[v].append(u)
        succs[u].append(v)
    layer: dict[str, int] = {}
    for node in _topological(cards, preds):
        layer[node] = max([0] + [layer[p] + 1 for p in preds[node]])
    deepest = max(layer.values(), default=0)
    for node in cards:
        if not preds[node]:
            layer[node] = min(layer[s] for s in succs[node]) - 1 if succs[node] else min(cards[node].rank, deepest)
    used = sorted(set(layer.values()))  # no empty layers
    return {n: used.index(v) for n, v in layer.items()}


def _hub_layers(cards: dict[str, Card], edges: list[tuple[str, str]], hub: str,
                above: int) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """The layers without ``hub``, then the hub's own layer inserted below layer ``above``."""
    rest = {n: c for n, c in cards.items() if n != hub}
    down = _oriented(rest, [(u, v) for u, v in edges if hub not in (u, v)])
    layer = {n: at + (at > above) for n, at in _layers(rest, down).items()}
    layer[hub] = above + 1
    for u, v in edges:
        if u != v and hub in (u, v) and u in cards and v in cards:
            other = v if u == hub else u
            pair = (other, hub) if layer[other] < layer[hub] else (hub, other)
            if pair not in down:
                down.append(pair)
    return down, layer


def _topological(cards: dict[str, Card], preds: dict[str, list[str]]) -> list[str]:
    order: list[str] = []
    seen: set[str] = set()
    for root in cards:
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((p, False) for p in preds[node] if p not in seen)
    return order


@dataclass
class _Grid:
    rows: list[list[str]]                      # the layers' slots, top to bottom, in order
    width: dict[str, float]
    up: dict[str, list[str]]                   # a slot's neighbours one layer up
    down: dict[str, list[str]]                 # ... and one layer down
    chains: dict[str, tuple[str, str, int, int]]  # a lane slot -> (from card, to card, its step, span)
    first: dict[str, int]                      # a lane slot -> the layer of its link's upper card
    tops: list[float]                          # each layer's top (the tallest card sets its height)
    heights: list[float]


def _grid(cards: dict[str, Card], down: list[tuple[str, str]], layer: dict[str, int]) -> _Grid:
    rows: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for node in cards:  # in the caller's order: a stable first order
        rows[layer[node]].append(node)
    width = {n: float(c.width) for n, c in cards.items()}
    up: dict[str, list[str]] = defaultdict(list)
    below: dict[str, list[str]] = defaultdict(list)
    chains, first = {}, {}
    for u, v in down:
        prev = u
        for at in range(layer[u] + 1, layer[v]):  # a lane slot in each layer the link passes
            lane = f"\x00{u}\x00{v}\x00{at}"
            rows[at].append(lane)
            width[lane] = LANE_W
            chains[lane] = (u, v, at - layer[u], layer[v] - layer[u])
            first[lane] = layer[u]
            up[lane].append(prev)
            below[prev].append(lane)
            prev = lane
        up[v].append(prev)
        below[prev].append(v)
    heights = [max((float(cards[n].height) for n in row if n in cards), default=0) for row in rows]
    tops = list(itertools.accumulate([0.0] + [h + GAP_Y for h in heights[:-1]]))
    return _Grid(rows, width, up, below, chains, first, tops, heights)


def _pairs_crossing(top: list[str], bottom: list[str], links: dict[str, list[str]]) -> int:
    """Crossings between two layers: pairs of links whose ends are in opposite orders (counted with
    a Fenwick tree over the lower ends, links from one slot never crossing each other)."""
    where = {n: i for i, n in enumerate(bottom)}
    tree = [0] * (len(bottom) + 1)
    count = inserted = 0
    for n in top:
        ends = [where[t] for t in links[n] if t in where]
        for b in ends:  # links inserted so far ending right of b
            i, below = b + 1, 0
            while i > 0:
                below += tree[i]
                i -= i & -i
            count += inserted - below
        for b in ends:
            i = b + 1
            while i < len(tree):
                tree[i] += 1
                i += i & -i
            inserted += 1
    return count


def _all_crossings(grid: _Grid) -> int:
    return sum(_pairs_crossing(a, b, grid.down) for a, b in itertools.pairwise(grid.rows))


def _sweep(grid: _Grid, row: int, fixed: int, links: dict[str, list[str]]) -> None:
    place = {n: i for i, n in enumerate(grid.rows[fixed])}
    current = grid.rows[row]

    def key(item: tuple[int, str]) -> float:
        i, node = item
        seen = sorted(place[n] for n in links[node] if n in place)
        if not seen:
            return float(i)
        mid = len(seen) // 2  # the median, the barycentre of the middle two when even
        return seen[mid] if len(seen) % 2 else (seen[mid - 1] + seen[mid]) / 2

    grid.rows[row] = [n for _, n in sorted(enumerate(current), key=lambda it: (key(it), it[0]))]


def _transpose(grid: _Grid) -> None:
    """Swap neighbours in a layer wherever that crosses less with the layers above and below."""
    for r, row in enumerate(grid.rows):
        above = {n: i for i, n in enumerate(grid.rows[r - 1])} if r else {}
        beneath = {n: i for i, n in enumerate(grid.rows[r + 1])} if r + 1 < len(grid.rows) else {}
        ends = {n: ([above[m] for m in grid.up[n] if m in above], [beneath[m] for m in grid.down[n] if m in beneath])
                for n in row}
        for _ in range(len(row)):
            improved = False
            for i in range(len(row) - 1):
                if _pair_crossings(ends[row[i + 1]], ends[row[i]]) < _pair_crossings(ends[row[i]], ends[row[i + 1]]):
                    row[i], row[i + 1] = row[i + 1], row[i]
                    improved = True
            if not improved:
                break


def _pair_crossings(left: tuple[list[int], list[int]], right: tuple[list[int], list[int]]) -> int:
    """Crossings between the links of two neighbours (their ends above and below), ``left`` first."""
    return sum(1 for side in (0, 1) for a in left[side] for b in right[side] if a > b)


def _orders(grid: _Grid) -> list[list[list[str]]]:
    """The orders reached from several starts (the given order, reversed, shuffled: the same every
    time), fewest crossings first, each once."""
    rng = random.Random(len(grid.rows))
    first = [list(r) for r in grid.rows]
    found: dict[str, tuple[int, list[list[str]]]] = {}
    slots = sum(len(r) for r in grid.rows)
    for start in range(max(1, min(RESTARTS, BIG // max(1, slots)))):  # a big drawing: fewer starts
        grid.rows = [list(r) for r in first]
        if start == 1:
            grid.rows = [r[::-1] for r in grid.rows]
        elif start > 1:
            for r in grid.rows:
                rng.shuffle(r)
        count = _sweeps(grid)
        found.setdefault(repr(grid.rows), (count, grid.rows))
        if count == 0:
            break
    return [rows for _, rows in sorted(found.values(), key=lambda item: item[0])]


def _sweeps(grid: _Grid) -> int:
    best, best_rows = _all_crossings(grid), [list(r) for r in grid.rows]
    slots = sum(len(r) for r in grid.rows)
    for turn in range(PASSES if slots < BIG else PASSES // 3):
        if turn % 2 == 0:
            for r in range(1, len(grid.rows)):
                _sweep(grid, r, r - 1, grid.up)
        else:
            for r in range(len(grid.rows) - 2, -1, -1):
                _sweep(grid, r, r + 1, grid.down)
        _transpose(grid)
        count = _all_crossings(grid)
        if count < best:
            best, best_rows = count, [list(r) for r in grid.rows]
        if best == 0:
            break
    grid.rows = best_rows
    return best


def _pack(desired: list[float], widths: list[float], weights: list[float] | None = None) -> list[float]:
    """Centres as near ``desired`` as the order and the gaps allow (weighted least squares: pool
    adjacent violators)."""
    offsets = [0.0]
    for a, b in itertools.pairwise(widths):
        offsets.append(offsets[-1] + a / 2 + GAP_X + b / 2)
    blocks: list[list[float]] = []  # [weighted sum, weight, members]
    for d, o, w in zip(desired, offsets, weights or [1.0] * len(desired), strict=True):
        blocks.append([(d - o) * w, w, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, weight, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += weight
            blocks[-1][2] += count
    shifts = [b[0] / b[1] for b in blocks for _ in range(int(b[2]))]
    return [s + o for s, o in zip(shifts, offsets, strict=True)]


def _x_positions(grid: _Grid) -> dict[str, float]:
    x: dict[str, float] = {}
    for row in grid.rows:
        x.update(zip(row, _pack([0.0] * len(row), [grid.width[n] for n in row]), strict=True))
    slots = sum(len(r) for r in grid.rows)
    for turn in range(2 * PASSES if slots < BIG else PASSES // 2):  # a big drawing: fewer passes
        rows = grid.rows if turn % 2 == 0 else grid.rows[::-1]
        for row in rows:
            desired = [_on_line(grid, x, n) if n in grid.chains else _between(grid, x, n) for n in row]
            weights = [LANE_WEIGHT if n in grid.chains else 1.0 for n in row]
            x.update(zip(row, _pack(desired, [grid.width[n] for n in row], weights), strict=True))
        _widen_lanes(grid, x)
    for _ in range(4):  # last, the cards make way for the lanes: each on its line, the cards moved least
        for row in grid.rows:
            desired = [_on_line(grid, x, n) if n in grid.chains else x[n] for n in row]
            weights = [1000.0 if n in grid.chains else 1.0 for n in row]
            x.update(zip(row, _pack(desired, [grid.width[n] for n in row], weights), strict=True))
        _widen_lanes(grid, x)
    return x


def _between(grid: _Grid, x: dict[str, float], node: str) -> float:
    """The weighted mean of a card's neighbours (a long link's lane weighs more: its line kept steep)."""
    near = [(x[n], LANE_PULL if n in grid.chains else 1.0) for n in grid.up[node] + grid.down[node]]
    total = sum(w for _, w in near)
    return sum(p * w for p, w in near) / total if near else x[node]


def _on_line(grid: _Grid, x: dict[str, float], lane: str) -> float:
    """Where the straight line of a lane's link crosses the middle of the lane's layer."""
    u, v, step, span = grid.chains[lane]
    first = grid.first[lane]
    start = grid.tops[first] + grid.heights[first]
    middle = grid.tops[first + step] + grid.heights[first + step] / 2
    return x[u] + (x[v] - x[u]) * (middle - start) / max(grid.tops[first + span] - start, 1.0)


def _widen_lanes(grid: _Grid, x: dict[str, float]) -> None:
    """A lane as wide as its slanting line needs to cross its layer clear of the cards beside it."""
    for lane, (u, v, step, span) in grid.chains.items():
        first = grid.first[lane]
        drop = grid.tops[first + span] - grid.tops[first] - grid.heights[first]
        slope = abs(x[v] - x[u]) / max(drop, 1.0)
        grid.width[lane] = min(LANE_W + slope * grid.heights[first + step], LANE_MAX)


def amid(cards: list[Card], edges: list[tuple[str, str]], hub: str) -> list[int]:
    """The layers below which ``hub`` can have a layer of its own amid its neighbours: some of them
    (one in ``SHARE_AROUND``, one at least) above it and some below."""
    by_id = {c.id: c for c in cards if c.id != hub}
    layer = _layers(by_id, _oriented(by_id, [(u, v) for u, v in edges if hub not in (u, v)]))
    ends = [v if u == hub else u for u, v in edges if hub in (u, v) and u != v]
    near = [layer[n] for n in ends if n in layer]
    least = max(1, len(near) // SHARE_AROUND)
    return [above for above in range(max(layer.values(), default=0))
            if sum(at <= above for at in near) >= least and sum(at > above for at in near) >= least]


def layered(cards: list[Card], edges: list[tuple[str, str]], tries: int = 1,
            hub: tuple[str, int] | None = None) -> list[dict[str, tuple[int, int]]]:
    """Each card's top-left corner, layers top to bottom from (0, 0): for the ``tries`` orders with
    the fewest crossings (the caller measures them as drawn and keeps the best). ``hub``: a card
    and a layer; the others are layered without it and it gets a layer of its own just below that
    one, each of its links running up or down from there."""
    by_id = {c.id: c for c in cards}
    if not by_id:
        return [{}]
    if hub is None or hub[0] not in by_id:
        down = _oriented(by_id, edges)
        layer = _layers(by_id, down)
    else:
        down, layer = _hub_layers(by_id, edges, *hub)
    grid = _grid(by_id, down, layer)
    widths = dict(grid.width)
    out = []
    for rows in _orders(grid)[:tries]:
        grid.rows, grid.width = rows, dict(widths)
        out.append(_placed(grid, by_id))
    return out


def _placed(grid: _Grid, by_id: dict[str, Card]) -> dict[str, tuple[int, int]]:
    x = _x_positions(grid)
    left = min(x[n] - grid.width[n] / 2 for n in x)
    places, top = {}, 0
    for row in grid.rows:
        real = [n for n in row if n in by_id]
        tallest = max((by_id[n].height for n in real), default=0)
        for n in real:
            places[n] = (round(x[n] - by_id[n].width / 2 - left), round(top + (tallest - by_id[n].height) / 2))
        top += tallest + GAP_Y
    return places
