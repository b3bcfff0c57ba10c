"""Tests for spbfs.validate: the Graph500 rules, corrupted trees, the reference levels."""

from __future__ import annotations

from collections import defaultdict

import networkx as nx
import numpy as np
import pytest
from _reference import reference_bfs
from hypothesis import given, settings
from hypothesis import strategies as st

from spbfs.edges import EdgeList
from spbfs.validate import (
    RULES,
    ValidationError,
    check_levels,
    reference_levels,
    tree_levels,
    validate_bfs_tree,
)

# --------------------------------------------------------------------------- helpers


def adjacency(src, dst, directed):
    adj = defaultdict(list)
    for u, v in zip(np.asarray(src).tolist(), np.asarray(dst).tolist(), strict=True):
        adj[u].append(v)
        if not directed:
            adj[v].append(u)
    return adj


def python_bfs(n, src, dst, source, directed=False, rng=None):
    """Plain queue BFS; with ``rng``, each vertex takes a random valid parent.

    Any neighbour one level up is a valid Graph500 parent (the spec's benign
    race), so the random variant exercises trees a first-visitor BFS never makes.
    """
    parents, levels = reference_bfs(n, src, dst, source, directed)
    if rng is not None:
        adj = adjacency(src, dst, directed)
        candidates = defaultdict(list)
        for u, nbrs in adj.items():
            for v in nbrs:
                if levels[u] >= 0 and levels[v] == levels[u] + 1:
                    candidates[v].append(u)
        for v, ups in candidates.items():
            parents[v] = ups[rng.integers(len(ups))]
    return parents, levels


def edgelist(pairs, n, directed=None):
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return EdgeList(pairs[:, 0], pairs[:, 1], n, directed=directed)


def messy_random_graph(rng, n, m, directed=None):
    """Random edges plus self-loops and duplicated edges, as a generator makes them."""
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    loops = rng.integers(0, n, max(1, m // 10))
    dup = rng.integers(0, m, max(1, m // 10))
    src = np.concatenate([src, loops, dst[dup]])
    dst = np.concatenate([dst, loops, src[dup]])
    return EdgeList(src, dst, n, directed=directed)


PATH = edgelist([(i, i + 1) for i in range(9)], 10)
STAR = edgelist([(0, i) for i in range(1, 8)], 8)
CYCLE = edgelist([(i, (i + 1) % 8) for i in range(8)], 8)
# Two components {0..4} and {5, 6, 7}, plus the isolated vertex 8.
PIECES = edgelist([(0, 1), (0, 2), (1, 3), (2, 4), (3, 4), (5, 6), (6, 7)], 9)
GRAPHS = {"path": PATH, "star": STAR, "cycle": CYCLE, "pieces": PIECES}


def tree_of(el, source, directed=False):
    return python_bfs(el.n, el.src, el.dst, source, directed)


# --------------------------------------------------------------------------- accepting


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("with_levels", [False, True])
def test_valid_trees_pass(name, with_levels):
    el = GRAPHS[name]
    for source in range(el.n):
        parents, levels = tree_of(el, source)
        facts = validate_bfs_tree(el, source, parents, levels if with_levels else None)
        reached = levels >= 0
        assert facts["reached"] == int(reached.sum())
        assert facts["max_level"] == int(levels.max())
        assert facts["component_edges"] == int((reached[el.src] & reached[el.dst]).sum())
        assert facts["directed"] is False


def test_facts_count_duplicates_and_self_loops():
    el = edgelist([(0, 1), (1, 0), (0, 1), (1, 1), (1, 2), (3, 4), (3, 3)], 5)
    parents, levels = tree_of(el, 0)
    facts = validate_bfs_tree(el, 0, parents, levels)
    assert facts == {"reached": 3, "max_level": 2, "component_edges": 5, "directed": False}


def test_isolated_source():
    el = edgelist([(1, 2)], 4)
    parents = np.array([0, -1, -1, -1])
    assert validate_bfs_tree(el, 0, parents)["reached"] == 1
    assert validate_bfs_tree(el, 3, np.array([-1, -1, -1, 3]))["component_edges"] == 0


def test_empty_edge_list():
    el = EdgeList(np.array([], dtype=np.int64), np.array([], dtype=np.int64), 3)
    facts = validate_bfs_tree(el, 1, np.array([-1, 1, -1]))
    assert facts == {"reached": 1, "max_level": 0, "component_edges": 0, "directed": False}


def test_random_valid_parents_pass():
    rng = np.random.default_rng(7)
    for _ in range(20):
        el = messy_random_graph(rng, 60, 90)
        source = int(rng.integers(60))
        parents, levels = python_bfs(el.n, el.src, el.dst, source, rng=rng)
        validate_bfs_tree(el, source, parents, levels)


def test_deep_path_tree():
    n = 20_000
    el = edgelist(np.column_stack([np.arange(n - 1), np.arange(1, n)]), n)
    parents = np.arange(-1, n - 1)
    parents[0] = 0
    facts = validate_bfs_tree(el, 0, parents)
    assert facts["max_level"] == n - 1
    # Rooted in the middle, both halves hang off the source.
    mid = n // 2
    parents, levels = tree_of(el, mid)
    np.testing.assert_array_equal(tree_levels(parents, mid), np.abs(np.arange(n) - mid))
    validate_bfs_tree(el, mid, parents, levels)


# --------------------------------------------------------------------------- rule 1


def expect(rule, el, source, parents, levels=None, **kw):
    with pytest.raises(ValidationError, match=f"rule {rule}" if isinstance(rule, int)
                       else "levels") as info:
        validate_bfs_tree(el, source, parents, levels, **kw)
    assert info.value.rule == rule
    assert isinstance(info.value, ValueError)
    return info.value


def test_root_parent_wrong():
    parents, _ = tree_of(PATH, 0)
    parents[0] = 1
    err = expect(1, PATH, 0, parents)
    assert "source 0 must be its own parent" in str(err)
    parents[0] = -1
    expect(1, PATH, 0, parents)


def test_self_parent_is_a_cycle():
    parents, _ = tree_of(STAR, 0)
    parents[3] = 3
    err = expect(1, STAR, 0, parents)
    assert "vertex 3 is its own parent" in str(err)
    assert err.example == (3,)


def test_two_cycle_and_three_cycle():
    parents, _ = tree_of(CYCLE, 0)
    parents[3], parents[4] = 4, 3  # 3 and 4 are adjacent: the cycle uses input edges
    err = expect(1, CYCLE, 0, parents)
    assert "never reach the source" in str(err)
    parents, _ = tree_of(PATH, 0)
    parents[4], parents[5], parents[6] = 6, 4, 5
    err = expect(1, PATH, 0, parents)
    assert "cycle" in str(err)


def test_cycle_in_long_chain_found():
    n = 5000
    el = edgelist(np.column_stack([np.arange(n - 1), np.arange(1, n)]), n)
    parents = np.arange(-1, n - 1)
    parents[0] = 0
    parents[100] = 4000  # 100 <- 4000 <- ... <- 100: a cycle far from the root
    expect(1, el, 0, parents)


def test_parent_out_of_range():
    parents, _ = tree_of(PATH, 0)
    parents[5] = PATH.n
    expect(1, PATH, 0, parents)
    parents[5] = -2
    err = expect(1, PATH, 0, parents)
    assert "parent[5] = -2" in str(err)


def test_reached_vertex_with_unreached_parent():
    parents, _ = tree_of(PATH, 0)
    parents[4] = -1  # 5 still points at 4
    err = expect(1, PATH, 0, parents)
    assert "vertex 5 is reached but its parent 4 is not" in str(err)


# --------------------------------------------------------------------------- rule 2


def test_wrong_level_is_rule_2():
    parents, levels = tree_of(PATH, 0)
    levels[9] += 1
    err = expect(2, PATH, 0, parents, levels)
    assert "(9, 8)" in str(err)
    levels[9] -= 2
    expect(2, PATH, 0, parents, levels)


def test_levels_disagree_with_parents():
    parents, levels = tree_of(PIECES, 0)
    bad = levels.copy()
    bad[6] = 1  # unreached per parents
    expect("levels", PIECES, 0, parents, bad)
    bad = levels.copy()
    bad[3] = -1
    expect("levels", PIECES, 0, parents, bad)
    shifted = np.where(levels >= 0, levels + 1, -1)  # rule 2 holds, root level does not
    err = expect("levels", PIECES, 0, parents, shifted)
    assert "level 0" in str(err)


# --------------------------------------------------------------------------- rules 3, 4, 5


def test_depth_first_tree_breaks_rule_3():
    # A spanning tree made of input edges, but not breadth first.
    parents = np.array([0, 0, 1, 2, 3, 4, 5, 6])
    err = expect(3, CYCLE, 0, parents)
    assert "(7, 0)" in str(err)
    assert err.example == (7, 0)


def test_unreached_vertex_that_should_be_reached():
    parents, _ = tree_of(PATH, 0)
    parents[9] = -1  # a leaf: nothing else breaks
    err = expect(4, PATH, 0, parents)
    assert "unreached vertex 9" in str(err)


def test_reached_vertex_in_another_component():
    parents, _ = tree_of(PIECES, 0)
    parents[6] = 1  # 6 lives in {5, 6, 7}; 5 and 7 stay unreached
    expect(4, PIECES, 0, parents)
    # An isolated vertex pulled into the tree breaks only rule 5.
    parents, _ = tree_of(PIECES, 0)
    parents[8] = 1
    err = expect(5, PIECES, 0, parents)
    assert "(8, 1)" in str(err)


def test_parent_not_an_edge():
    el = edgelist([(0, 1), (0, 2), (1, 3), (2, 4)], 5)
    parents = np.array([0, 0, 0, 2, 2])  # 3 hangs off 2: right level, no such edge
    err = expect(5, el, 0, parents)
    assert err.example == (2, 3)
    expect(5, el, 0, parents, np.array([0, 1, 1, 2, 2]))


# --------------------------------------------------------------------------- property


@st.composite
def graph_and_mutation(draw):
    n = draw(st.integers(2, 14))
    m = draw(st.integers(0, 30))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          min_size=m, max_size=m))
    directed = draw(st.booleans())
    source = draw(st.integers(0, n - 1))
    v = draw(st.integers(0, n - 1).filter(lambda x: x != source))
    w = draw(st.integers(-1, n - 1))
    return n, pairs, directed, source, v, w


@settings(max_examples=300, deadline=None)
@given(graph_and_mutation())
def test_single_parent_change_is_caught_exactly_when_invalid(case):
    n, pairs, directed, source, v, w = case
    el = edgelist(pairs, n, directed=directed)
    parents, levels = tree_of(el, source, directed)
    arcs = {(a, b) for a, b in pairs} | (set() if directed else {(b, a) for a, b in pairs})
    still_valid = parents[v] == w or (
        levels[v] > 0 and w >= 0 and (w, v) in arcs and levels[w] == levels[v] - 1)
    corrupted = parents.copy()
    corrupted[v] = w
    if still_valid:
        validate_bfs_tree(el, source, corrupted)
    else:
        with pytest.raises(ValidationError):
            validate_bfs_tree(el, source, corrupted)


@settings(max_examples=150, deadline=None)
@given(graph_and_mutation(), st.integers(-2, 3))
def test_any_level_change_is_caught(case, delta):
    n, pairs, directed, source, v, _ = case
    el = edgelist(pairs, n, directed=directed)
    parents, levels = tree_of(el, source, directed)
    validate_bfs_tree(el, source, parents, levels)
    changed = levels.copy()
    changed[v] += delta
    if delta == 0:
        validate_bfs_tree(el, source, parents, changed)
    else:
        with pytest.raises(ValidationError):
            validate_bfs_tree(el, source, parents, changed)


# --------------------------------------------------------------------------- directed


DIGRAPH = edgelist([(0, 1), (1, 2), (2, 0), (2, 3), (4, 0), (3, 3), (1, 2)], 5, directed=True)


def test_directed_valid_and_back_arcs_allowed():
    parents, levels = tree_of(DIGRAPH, 0, directed=True)
    np.testing.assert_array_equal(levels, [0, 1, 2, 3, -1])
    facts = validate_bfs_tree(DIGRAPH, 0, parents, levels)
    # Arcs leaving reached vertices: (0,1) (1,2) (2,0) (2,3) (3,3) (1,2); 4 -> 0 is
    # an arc into the tree from outside, which a directed search never follows.
    assert facts == {"reached": 4, "max_level": 3, "component_edges": 6, "directed": True}
    # Read as undirected, 2 - 0 spans two levels and 4 - 0 leaves the tree.
    with pytest.raises(ValidationError, match=r"rule [34]"):
        validate_bfs_tree(DIGRAPH, 0, parents, levels, directed=False)


def test_directed_rule_5_needs_the_arc_direction():
    el = edgelist([(0, 1), (2, 1), (0, 2)], 3, directed=True)
    parents, _ = tree_of(el, 0, directed=True)
    validate_bfs_tree(el, 0, parents)
    rev = edgelist([(0, 1), (1, 2)], 3, directed=True)
    # 2's parent is 1 via the arc 1 -> 2; claim instead that 1 hangs off 2 (only 1 -> 2 exists).
    validate_bfs_tree(rev, 0, np.array([0, 0, 1]))
    err = expect(1, rev, 0, np.array([0, 2, 1]))
    assert "never reach" in str(err)
    el2 = edgelist([(0, 1), (0, 2), (2, 3), (3, 1)], 4, directed=True)
    expect(5, el2, 0, np.array([0, 0, 0, 1]))  # arc 1 -> 3 does not exist, 3 -> 1 does


def test_directed_rules_3_and_4():
    el = edgelist([(0, 1), (1, 2), (0, 2)], 3, directed=True)
    expect(3, el, 0, np.array([0, 0, 1]))  # level 2 for 2, but 0 -> 2 gives level 1
    el = edgelist([(0, 1), (1, 2)], 3, directed=True)
    err = expect(4, el, 0, np.array([0, 0, -1]))
    assert "leads from reached vertex 1" in str(err)


def test_directed_none_means_undirected():
    el = edgelist([(1, 0)], 2, directed=None)
    validate_bfs_tree(el, 0, np.array([0, 0]))
    el = edgelist([(1, 0)], 2, directed=True)
    validate_bfs_tree(el, 0, np.array([0, -1]))
    expect(5, el, 0, np.array([0, 0]))


# --------------------------------------------------------------------------- arguments


def test_argument_errors():
    parents, levels = tree_of(PATH, 0)
    with pytest.raises(TypeError, match="parents"):
        validate_bfs_tree(PATH, 0, parents.astype(float))
    with pytest.raises(TypeError, match="parents"):
        validate_bfs_tree(PATH, 0, parents >= 0)
    with pytest.raises(ValueError, match="parents"):
        validate_bfs_tree(PATH, 0, parents[:-1])
    with pytest.raises(ValueError, match="parents"):
        validate_bfs_tree(PATH, 0, parents.reshape(2, 5))
    with pytest.raises(ValueError, match="levels"):
        validate_bfs_tree(PATH, 0, parents, levels[1:])
    with pytest.raises(TypeError, match="levels"):
        validate_bfs_tree(PATH, 0, parents, levels.astype(np.float32))
    with pytest.raises(ValueError, match="source"):
        validate_bfs_tree(PATH, 10, parents)
    with pytest.raises(TypeError, match="source"):
        validate_bfs_tree(PATH, 0.0, parents)
    with pytest.raises(TypeError, match="EdgeList"):
        validate_bfs_tree((PATH.src, PATH.dst), 0, parents)
    # Other integer dtypes are widened, not rejected.
    validate_bfs_tree(PATH, np.int32(0), parents.astype(np.int32), levels.astype(np.int16))
    # ValidationError is not raised for argument errors.
    assert not issubclass(TypeError, ValidationError)


class FakeDeviceArray:
    """Stands in for a CuPy array: no implicit conversion, explicit ``get()``."""

    __cuda_array_interface__: dict = {}  # noqa: RUF012

    def __init__(self, host):
        self.host = host

    def get(self):
        return self.host

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed")


def test_device_arrays_are_copied_to_host():
    parents, levels = tree_of(PATH, 0)
    facts = validate_bfs_tree(PATH, 0, FakeDeviceArray(parents), FakeDeviceArray(levels))
    assert facts["reached"] == PATH.n


def test_rules_table_and_error_type():
    assert sorted(RULES) == [1, 2, 3, 4, 5]
    assert issubclass(ValidationError, ValueError)


# --------------------------------------------------------------------------- reference


def nx_levels(n, pairs, source, directed):
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs)
    out = np.full(n, -1, dtype=np.int64)
    for v, d in nx.single_source_shortest_path_length(g, source).items():
        out[v] = d
    return out


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=80),
    st.integers(0, n - 1),
    st.booleans())))
def test_reference_levels_match_networkx(case):
    n, pairs, source, directed = case
    arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    got = reference_levels(arr[:, 0], arr[:, 1], n, source, directed=directed)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, nx_levels(n, pairs, source, directed))


def test_reference_levels_random_messy_graphs():
    rng = np.random.default_rng(3)
    for directed in (False, True):
        el = messy_random_graph(rng, 3000, 4000, directed=directed)
        pairs = list(zip(el.src.tolist(), el.dst.tolist(), strict=True))
        for source in rng.integers(0, el.n, 3).tolist():
            got = reference_levels(el.src, el.dst, el.n, source, directed=directed)
            np.testing.assert_array_equal(got, nx_levels(el.n, pairs, source, directed))


def test_reference_levels_limits():
    with pytest.raises(ValueError, match="2\\*\\*31"):
        reference_levels(np.array([0]), np.array([1]), 2**31 + 5, 0)
    with pytest.raises(ValueError, match="source"):
        reference_levels(np.array([0]), np.array([1]), 2, 2)
    with pytest.raises(ValueError):
        reference_levels(np.array([0]), np.array([2]), 2, 0)


def test_check_levels():
    el = PIECES
    _, levels = tree_of(el, 0)
    check_levels(el, 0, levels)
    bad = levels.copy()
    bad[[4, 6]] = [7, 0]
    with pytest.raises(ValidationError, match="2 vertices") as info:
        check_levels(el, 0, bad)
    assert "4: got 7, expected 2" in str(info.value)
    assert "6: got 0, expected -1" in str(info.value)
    assert info.value.rule == "levels"
    many = np.zeros(el.n, dtype=np.int64)
    with pytest.raises(ValidationError, match="more"):
        check_levels(el, 0, many, show=2)
    _, dlevels = tree_of(DIGRAPH, 0, directed=True)
    check_levels(DIGRAPH, 0, dlevels)
    with pytest.raises(ValidationError):
        check_levels(DIGRAPH, 0, dlevels, directed=False)


# --------------------------------------------------------------------------- big ids


def test_ids_beyond_int32_products():
    """Ids around 3e6: products and sums of ids overflow int32; nothing may wrap."""
    n = 3_000_000
    hi = n - 1
    ids = np.array([hi, hi - 1, 2_147_483, 1_999_999, 65_537, 46_341, 0])
    pairs = [(ids[i], ids[i + 1]) for i in range(len(ids) - 1)] + [(ids[0], ids[0])]
    el = edgelist(pairs, n)
    source = int(ids[3])
    parents, levels = tree_of(el, source)
    facts = validate_bfs_tree(el, source, parents, levels)
    assert facts["reached"] == len(ids)
    assert facts["component_edges"] == len(pairs)
    np.testing.assert_array_equal(reference_levels(el.src, el.dst, n, source), levels)
    parents[hi] = hi - 2  # an unreached vertex id close to n, not adjacent
    err = expect(1, el, source, parents)
    assert str(hi) in str(err)
    parents, _ = tree_of(el, source)
    parents[hi] = 46_341
    err = expect(5, el, source, parents, None)
    assert err.example == (46_341, hi)


# --------------------------------------------------------------------------- scale


def test_medium_graph_against_scipy():
    rng = np.random.default_rng(11)
    n, m = 20_000, 200_000
    el = messy_random_graph(rng, n, m)
    from scipy.sparse import csgraph, csr_array

    a = csr_array((np.ones(el.num_edges), (el.src, el.dst)), shape=(n, n))
    source = int(el.src[0])
    _, pred = csgraph.breadth_first_order(a, source, directed=False)
    parents = pred.astype(np.int64)
    parents[parents < 0] = -1
    parents[source] = source
    levels = reference_levels(el.src, el.dst, n, source)
    facts = validate_bfs_tree(el, source, parents, levels)
    assert facts["reached"] == int((levels >= 0).sum())
    check_levels(el, source, tree_levels(parents, source))
