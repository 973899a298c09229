"""weft.tpp on NumPy arrays: BRGEMM, unary and binary kernels against NumPy, in float32, float64
and bfloat16 (uint16 bit patterns), zero copy, and the errors of bad arguments."""
import math

import numpy as np
import pytest

import weft
from conftest import bf16_bits, bf16_values


def normal(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype, tolerance", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("count, m, n, k", [(1, 32, 32, 32), (4, 17, 9, 13), (3, 1, 40, 8)])
def test_brgemm_accumulates_the_batch_of_products(rng, dtype, tolerance, count, m, n, k):
    a, b, c = normal(rng, (count, m, k), dtype), normal(rng, (count, k, n), dtype), normal(rng, (m, n), dtype)
    expected = c + np.einsum("imk,ikn->mn", a, b)
    result = weft.tpp.brgemm(a, b, c, beta=1)
    assert result is c
    np.testing.assert_allclose(c, expected, rtol=tolerance, atol=tolerance * k * count)


def test_brgemm_beta_zero_overwrites_c_and_relu_clamps(rng):
    a, b = normal(rng, (2, 8, 16)), normal(rng, (2, 16, 12))
    c = np.full((8, 12), np.nan, np.float32)
    weft.tpp.brgemm(a, b, c, beta=0, activation="relu")
    np.testing.assert_allclose(c, np.maximum(np.einsum("imk,ikn->mn", a, b), 0), rtol=1e-5, atol=1e-5)


def test_brgemm_without_c_and_with_two_dimensional_blocks(rng):
    a, b = normal(rng, (5, 6)), normal(rng, (6, 7))
    np.testing.assert_allclose(weft.tpp.brgemm(a, b, beta=0), a @ b, rtol=1e-5, atol=1e-5)


def test_brgemm_in_bf16_reads_vnni2_packed_b_and_accumulates_in_fp32(rng):
    count, m, n, k = 3, 16, 24, 32
    a_bits = bf16_bits(normal(rng, (count, m, k)))
    b_bits = bf16_bits(normal(rng, (count, k, n)))
    c = np.zeros((m, n), np.float32)
    weft.tpp.brgemm(a_bits, weft.tpp.vnni2(b_bits), c, beta=0, dtype="bf16")
    expected = np.einsum("imk,ikn->mn", bf16_values(a_bits).astype(np.float64), bf16_values(b_bits).astype(np.float64))
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)


def test_vnni2_interleaves_pairs_of_k():
    b = np.arange(4 * 3, dtype=np.float32).reshape(4, 3)
    packed = weft.tpp.vnni2(b)
    assert packed.shape == (2, 3, 2)
    for kk in range(4):
        for j in range(3):
            assert packed[kk // 2, j, kk % 2] == b[kk, j]


def test_brgemm_errors_name_the_argument(rng):
    a, b, c = normal(rng, (2, 4, 4)), normal(rng, (2, 4, 4)), np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError, match="argument 'b' has shape \\(2, 5, 4\\)"):
        weft.tpp.brgemm(a, normal(rng, (2, 5, 4)), c)
    with pytest.raises(ValueError, match="argument 'c' has shape"):
        weft.tpp.brgemm(a, b, np.zeros((4, 5), np.float32))
    with pytest.raises(TypeError, match="argument 'b' holds f64"):
        weft.tpp.brgemm(a, b.astype(np.float64), c)
    with pytest.raises(TypeError, match="argument 'c' holds f64"):
        weft.tpp.brgemm(a, b, c.astype(np.float64))
    with pytest.raises(ValueError, match="argument 'a' is not C-contiguous"):
        weft.tpp.brgemm(np.ones((2, 4, 8), np.float32)[:, :, ::2], b, c)
    with pytest.raises(ValueError, match="argument 'beta'"):
        weft.tpp.brgemm(a, b, c, beta=2)
    with pytest.raises(ValueError, match="argument 'activation'"):
        weft.tpp.brgemm(a, b, c, activation="softmax")
    with pytest.raises(TypeError, match="argument 'a' is a uint16 array"):
        weft.tpp.brgemm(bf16_bits(a), bf16_bits(b), c)
    with pytest.raises(TypeError, match="argument 'a' must be a NumPy array"):
        weft.tpp.brgemm([[1.0]], b, c)
    read_only = c.copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'c' is read-only"):
        weft.tpp.brgemm(a, b, read_only)


def gelu(x):
    return x * 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


UNARY_REFERENCES = {
    "zero": lambda x: np.zeros_like(x), "copy": lambda x: x, "relu": lambda x: np.maximum(x, 0),
    "square": np.square, "reciprocal": np.reciprocal, "sqrt": lambda x: np.sqrt(np.abs(x)),
    "exp": np.exp, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "gelu": gelu,
}


@pytest.mark.parametrize("op", sorted(UNARY_REFERENCES))
def test_unary_element_wise_ops_match_numpy(rng, op):
    x = normal(rng, (7, 33))
    if op == "sqrt":
        x = np.abs(x)
    np.testing.assert_allclose(weft.tpp.unary(op, x), UNARY_REFERENCES[op](x.astype(np.float64)), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("op, reference", [("increment", lambda x: x + 2.5), ("decrement", lambda x: x - 2.5),
                                           ("scale", lambda x: x * 2.5)])
def test_unary_ops_with_a_constant(rng, op, reference):
    x = normal(rng, (3, 4, 5), np.float64)
    np.testing.assert_allclose(weft.tpp.unary(op, x, alpha=2.5), reference(x), rtol=1e-15)


def test_unary_transpose_and_reductions_in_row_major_terms(rng):
    x = normal(rng, (6, 19))
    np.testing.assert_array_equal(weft.tpp.unary("transpose", x), x.T)
    np.testing.assert_allclose(weft.tpp.unary("reduce_cols_sum", x), x.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(weft.tpp.unary("reduce_cols_max", x), x.max(axis=1))
    np.testing.assert_allclose(weft.tpp.unary("reduce_rows_sum", x), x.sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(weft.tpp.unary("reduce_rows_max", x), x.max(axis=0))


def test_unary_bf16_in_and_out(rng):
    bits = bf16_bits(normal(rng, (4, 16)))
    out = weft.tpp.unary("relu", bits, dtype="bf16")
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(bf16_values(out), np.maximum(bf16_values(bits), 0))
    wide = np.empty((4, 16), np.float32)
    weft.tpp.unary("copy", bits, wide, dtype="bf16")
    np.testing.assert_array_equal(wide, bf16_values(bits))


def test_unary_writes_into_out_in_place(rng):
    x, out = normal(rng, (8, 8)), np.zeros((8, 8), np.float32)
    address = out.ctypes.data
    assert weft.tpp.unary("tanh", x, out) is out
    assert out.ctypes.data == address
    np.testing.assert_allclose(out, np.tanh(x), rtol=2e-6, atol=2e-6)


def test_an_out_that_aliases_its_input_gets_the_result(rng):
    # Element-wise ops run in place; a transpose (or a broadcast input inside out) went through
    # scratch only from this fix on, and wrote over what it still had to read (from 16 x 16 on).
    x = rng.standard_normal((16, 16)).astype(np.float32)
    expected = x.T.copy()
    assert weft.tpp.unary("transpose", x, out=x) is x
    np.testing.assert_array_equal(x, expected)
    x = np.ones((4, 4), np.float32)
    weft.tpp.binary("add", x, x[0:1], out=x, broadcast="row")
    np.testing.assert_array_equal(x, np.full((4, 4), 2, np.float32))
    x = rng.standard_normal((8, 8)).astype(np.float32)
    expected = x + x
    weft.tpp.binary("add", x, x, out=x)
    np.testing.assert_array_equal(x, expected)


def test_reductions_over_an_empty_axis(rng):
    # Sums are zero (NumPy's answer; the out was left as it was); a maximum has none.
    out = np.full(4, 7, np.float32)
    assert weft.tpp.unary("reduce_rows_sum", np.zeros((0, 4), np.float32), out=out) is out
    np.testing.assert_array_equal(out, np.zeros(4, np.float32))
    np.testing.assert_array_equal(weft.tpp.unary("reduce_cols_sum", np.zeros((3, 0), np.float32)), np.zeros(3))
    with pytest.raises(ValueError, match="'reduce_cols_max' over an empty axis has no maximum"):
        weft.tpp.unary("reduce_cols_max", np.zeros((4, 0), np.float32))
    with pytest.raises(ValueError, match="'reduce_rows_max' over an empty axis has no maximum"):
        weft.tpp.unary("reduce_rows_max", np.zeros((0, 4), np.float32))


def test_the_kernels_read_arrays_in_place():
    x = np.ones((4, 8), np.float32)
    assert weft._weft.data_pointer(x) == x.ctypes.data
    view = np.ones((10, 8), np.float32)[2:6]  # contiguous, at an offset
    assert weft._weft.data_pointer(view) == view.ctypes.data


def test_unary_errors_name_the_argument(rng):
    x = normal(rng, (4, 4))
    with pytest.raises(ValueError, match="argument 'op'"):
        weft.tpp.unary("softplus", x)
    with pytest.raises(ValueError, match="argument 'alpha'"):
        weft.tpp.unary("relu", x, alpha=1.0)
    with pytest.raises(ValueError, match="argument 'alpha'"):
        weft.tpp.unary("scale", x)
    with pytest.raises(ValueError, match="argument 'out' has shape \\(4, 5\\), expected \\(4, 4\\)"):
        weft.tpp.unary("relu", x, np.zeros((4, 5), np.float32))
    with pytest.raises(ValueError, match="argument 'x' is not C-contiguous"):
        weft.tpp.unary("relu", x.T, np.zeros((4, 4), np.float32))
    with pytest.raises(TypeError, match="argument 'x' is an array of int32"):
        weft.tpp.unary("relu", np.ones((4, 4), np.int32))
    with pytest.raises(TypeError, match="argument 'x' holds f32, but dtype='bf16'"):
        weft.tpp.unary("relu", x, np.zeros((4, 4), np.uint16), dtype="bf16")
    with pytest.raises(ValueError, match="argument 'dtype'"):
        weft.tpp.unary("relu", x, np.zeros((4, 4), np.float32), dtype="f16")


BINARY_REFERENCES = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                     "min": np.minimum, "max": np.maximum}


@pytest.mark.parametrize("op", sorted(BINARY_REFERENCES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_ops_match_numpy(rng, op, dtype):
    a, b = normal(rng, (5, 11), dtype), normal(rng, (5, 11), dtype)
    np.testing.assert_allclose(weft.tpp.binary(op, a, b), BINARY_REFERENCES[op](a, b), rtol=1e-6)


@pytest.mark.parametrize("b_shape, kind", [((11,), "row"), ((1, 11), "row"), ((5, 1), "col"), ((1,), "scalar"),
                                           ((), "scalar")])
def test_binary_broadcasts_are_inferred_from_the_shapes(rng, b_shape, kind):
    a, b = normal(rng, (5, 11)), normal(rng, b_shape)
    np.testing.assert_allclose(weft.tpp.binary("sub", a, b), a - b, rtol=1e-6)
    np.testing.assert_allclose(weft.tpp.binary("sub", a, b, broadcast=kind), a - b, rtol=1e-6)


def test_binary_broadcast_of_the_first_operand(rng):
    a, b = normal(rng, (11,)), normal(rng, (5, 11))
    np.testing.assert_allclose(weft.tpp.binary("div", a, b), a / b, rtol=1e-6)


def test_binary_bf16_inputs_to_fp32_output(rng):
    a, b = bf16_bits(normal(rng, (3, 16))), bf16_bits(normal(rng, (3, 16)))
    out = np.empty((3, 16), np.float32)
    weft.tpp.binary("mul", a, b, out, dtype="bf16")
    np.testing.assert_array_equal(out, bf16_values(a) * bf16_values(b))


def test_binary_errors_name_the_argument(rng):
    a = normal(rng, (4, 6))
    with pytest.raises(ValueError, match="argument 'op'"):
        weft.tpp.binary("pow", a, a)
    with pytest.raises(ValueError, match="'b' \\(4, 5\\)"):
        weft.tpp.binary("add", a, normal(rng, (4, 5)))
    with pytest.raises(ValueError, match="argument 'b' \\(broadcast 'row'\\)"):
        weft.tpp.binary("add", a, normal(rng, (4,)), broadcast="row")
    with pytest.raises(TypeError, match="argument 'b' holds f64"):
        weft.tpp.binary("add", a, a.astype(np.float64))
    with pytest.raises(ValueError, match="argument 'broadcast'"):
        weft.tpp.binary("add", a, a, broadcast="diagonal")


def test_an_unknown_dtype_is_named_even_where_the_output_is_made():
    """Without out= (and c= for brgemm) the output's type comes from dtype=: an unknown one is the
    dtype parser's ValueError, a non-string its TypeError, as where out= is given."""
    x = np.ones((4, 4), np.float32)
    message = "argument 'dtype': 'fp32' is none of 'f32', 'f64', 'bf16'"
    for call in (lambda dtype: weft.tpp.unary("relu", x, dtype=dtype),
                 lambda dtype: weft.tpp.binary("add", x, x, dtype=dtype),
                 lambda dtype: weft.tpp.brgemm(x, x, beta=0, dtype=dtype)):
        with pytest.raises(ValueError, match=message):
            call("fp32")
        with pytest.raises(TypeError, match="argument 'dtype' must be a string such as 'bf16'"):
            call(32)
    assert weft.tpp.unary("copy", x, dtype="float32").dtype == np.float32

