"""weft.einsum and weft.einsum_tree against numpy.einsum, float32 and float64, and their errors."""
import pathlib
import sys

import numpy as np
import pytest

import weft
from weft._einsum import _greedy_pairing, contraction_tree

# The seed's einsum trees (bench/tensor/einsum_peers.py, as bench/tensor/einsum_trees.cpp runs
# them), every size divided by 12 (at least 2) to keep the tests quick.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench" / "tensor"))
from einsum_peers import TREES  # noqa: E402

SEED_TREES = [(tree, [max(2, size // 12) for size in sizes]) for tree, sizes in TREES]


def leaves_of(tree):
    return weft._weft.einsum_tree_signature(tree)


def operands_for(rng, tree, sizes, dtype):
    leaves, _ = leaves_of(tree)
    return [rng.standard_normal([sizes[i] for i in ids]).astype(dtype) for ids in leaves]


def numpy_subscripts(tree):
    leaves, root = leaves_of(tree)
    letter = lambda ids: "".join(chr(ord("a") + i) for i in ids)  # noqa: E731
    return ",".join(letter(ids) for ids in leaves) + "->" + letter(root)


@pytest.mark.parametrize("tree, sizes", SEED_TREES)
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-4), (np.float64, 1e-10)])
def test_einsum_tree_runs_the_seed_trees(rng, tree, sizes, dtype, rtol):
    operands = operands_for(rng, tree, sizes, dtype)
    expected = np.einsum(numpy_subscripts(tree), *[o.astype(np.float64) for o in operands], optimize=True)
    result = weft.einsum_tree(tree, *operands)
    assert result.dtype == dtype
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize("tree, sizes", SEED_TREES)
def test_einsum_on_the_seed_trees_numpy_notation(rng, tree, sizes):
    operands = operands_for(rng, tree, sizes, np.float32)
    subscripts = numpy_subscripts(tree)
    expected = np.einsum(subscripts, *[o.astype(np.float64) for o in operands], optimize=True)
    np.testing.assert_allclose(weft.einsum(subscripts, *operands), expected, rtol=2e-4,
                               atol=2e-4 * np.abs(expected).max())


CASES = [
    ("ik,kj->ij", [(6, 5), (5, 7)]),
    ("abdc,ebfd->aefc", [(3, 4, 5, 6), (7, 4, 8, 5)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("ij,jk,kl,lm->im", [(8, 9), (9, 10), (10, 11), (11, 12)]),
    ("ij,jk->k", [(6, 5), (5, 7)]),
    ("i,j->ij", [(6,), (5,)]),
    ("ij,ij->i", [(4, 5), (4, 5)]),
    ("ij,kl->ijkl", [(2, 3), (4, 5)]),
    ("ijk->ki", [(3, 4, 5)]),
    ("ijk->k", [(3, 4, 5)]),
    ("ij->ij", [(3, 4)]),
    ("ij,jk", [(3, 4), (4, 2)]),  # implicit output: 'ik'
    ("ab,bc,cd,de,ef->af", [(4, 30), (30, 2), (2, 40), (40, 3), (3, 5)]),
]


@pytest.mark.parametrize("subscripts, shapes", CASES)
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-4), (np.float64, 1e-11)])
def test_einsum_matches_numpy(rng, subscripts, shapes, dtype, rtol):
    operands = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    expected = np.einsum(subscripts, *[o.astype(np.float64) for o in operands])
    result = weft.einsum(subscripts, *operands)
    assert result.dtype == dtype and result.shape == expected.shape
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * max(1.0, np.abs(expected).max()))


def test_einsum_writes_into_out(rng):
    a, b = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    out = np.empty((4, 3), np.float32)
    assert weft.einsum("ij,jk->ik", a, b, out=out) is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_einsum_into_an_out_that_is_an_operand(rng):
    # NumPy's einsum gives the transpose; the tree wrote over what it still had to read.
    x = rng.standard_normal((16, 16)).astype(np.float32)
    expected = x.T.copy()
    assert weft.einsum("ij->ji", x, out=x) is x
    np.testing.assert_array_equal(x, expected)
    a, b = rng.standard_normal((8, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
    expected = np.einsum("ij,jk->ik", a.astype(np.float64), b)
    weft.einsum("ij,jk->ik", a, b, out=a)
    np.testing.assert_allclose(a, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sizes, tree", [
    # a-b-c-d chain: (ab,bc),cd costs 2*100*50 + 2*50*100 multiply-adds, ab,(bc,cd) 100*50*100 + 2*100*100
    ({"a": 2, "b": 100, "c": 50, "d": 100}, "[[0,1],[1,2]->[0,2]],[2,3]->[0,3]"),
    ({"a": 100, "b": 50, "c": 100, "d": 2}, "[0,1],[[1,2],[2,3]->[1,3]]->[0,3]"),
])
def test_the_tree_with_the_fewest_multiply_adds_is_chosen(sizes, tree):
    assert contraction_tree(["ab", "bc", "cd"], "ad", sizes)[:2] == (tree, [0, 1, 2])


def test_the_first_seed_tree_is_found_from_numpy_notation():
    sizes = dict(zip("abcdefghi", [100, 72, 128, 128, 3, 71, 305, 32, 3]))
    text, order, _ = contraction_tree(["ie", "hdi", "cgh", "bfg", "af"], "abcde", sizes)
    # the seed's pairing: (ie, hdi), ((cgh, bfg), af), then the root
    assert text == "[[0,1],[2,3,0]->[1,2,3]],[[[4,5,2],[6,7,5]->[4,2,6,7]],[8,7]->[4,2,6,8]]->[8,6,4,3,1]"
    assert order == [0, 1, 2, 3, 4]


def test_beyond_the_exhaustive_search_pairs_sharing_an_index_go_first():
    sizes = tuple(sorted({"a": 1, "b": 2, "c": 50, "d": 2, "e": 1}.items()))
    # ab,de (an outer product, 4 multiply-adds) would be cheapest, but they share no index
    assert _greedy_pairing(("ab", "bc", "cd", "de"), "ae", sizes) == ((0, 1), (2, 3))


@pytest.mark.parametrize("subscripts, shapes, error, match", [
    ("ij,jk->ik", [(3, 4), (5, 6)], ValueError, "index 'j' has extent 5"),
    ("ij,jk->ik", [(3, 4)], ValueError, "names 2 operands, 1 were given"),
    ("ijk,jk->i", [(3, 4), (4, 5)], ValueError, "argument 'operands\\[0\\]' has 2 dimensions"),
    ("...i,i->...", [(3, 4), (4,)], ValueError, "ellipsis"),
    ("ii->i", [(3, 3)], ValueError, "repeats an index"),
    ("ij,jk->iz", [(3, 4), (4, 5)], ValueError, "output index 'z' is in no operand"),
    ("ij,ij->", [(3, 4), (3, 4)], ValueError, "scalar output"),
])
def test_einsum_errors_say_what_is_wrong(subscripts, shapes, error, match):
    with pytest.raises(error, match=match):
        weft.einsum(subscripts, *[np.ones(shape, np.float32) for shape in shapes])


def test_einsum_and_the_tpps_reject_what_is_no_array():
    with pytest.raises(TypeError, match="argument 'operands\\[1\\]' must be a NumPy array"):
        weft.einsum("ij,jk->ik", np.ones((2, 3), np.float32), [[1.0], [2.0], [3.0]])
    with pytest.raises(TypeError, match="argument 'x' must be a NumPy array"):
        weft.tpp.unary("relu", [1.0, 2.0])
    with pytest.raises(TypeError, match="argument 'b' must be a NumPy array"):
        weft.tpp.binary("add", np.ones(3, np.float32), 2.0)


def test_einsum_rejects_mixed_types_and_bf16():
    with pytest.raises(TypeError, match="operands\\[1\\]"):
        weft.einsum("ij,jk->ik", np.ones((2, 3), np.float32), np.ones((3, 4), np.float64))
    with pytest.raises(TypeError, match="operands\\[0\\]"):
        weft.einsum("ij,jk->ik", np.ones((2, 3), np.int64), np.ones((3, 4), np.int64))


def test_an_einsum_that_copies_checks_the_types_too():
    # The identity ("ij->ij") runs as a copy TPP, which took bf16 and converted into another out.
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 4)
    with pytest.raises(TypeError, match="argument 'out' holds another type than the operands"):
        weft.einsum("ij->ij", x, out=torch.empty(4, 4, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match="weft.einsum computes in float32 and float64, not bfloat16"):
        weft.einsum("ij->ij", x.to(torch.bfloat16))
    torch.testing.assert_close(weft.einsum("ij->ij", x), x)


def test_a_malformed_tree_raises_value_error_with_the_caret():
    with pytest.raises(ValueError) as error:
        weft.einsum_tree("[0,1],[1,2]->[0,2", np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    message = str(error.value)
    assert "expected ']'" in message and "^" in message


def test_einsum_tree_checks_the_operands_against_the_leaves():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="1 leaves|2 leaves"):
        weft.einsum_tree("[0,1],[1,2]->[0,2]", a)
    with pytest.raises(ValueError, match="index 1 has extent 4"):
        weft.einsum_tree("[0,1],[1,2]->[0,2]", a, np.ones((4, 4), np.float32))
    with pytest.raises(ValueError, match="argument 'out' has shape"):
        weft.einsum_tree("[0,1],[1,2]->[0,2]", a, b, out=np.empty((4, 2), np.float32))
