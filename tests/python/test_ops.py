"""weft.ops: the GEMM and convolution operators against float64 references (NumPy,
torch.nn.functional), in float32 and bfloat16 within the documented bound, the GEMM operators in
float64 within a float64 sum's error, blocked against plain,
the cache of prepared operators, configurations, errors naming the argument, and the GIL."""
import threading

import numpy as np
import pytest

import weft
from conftest import assert_call_lets_other_threads_run, bf16_bits, bf16_values

F32_TOLERANCE = 1e-5
# float64 results against NumPy's float64 products: two double sums in different orders differ by
# about 1e-16 sqrt(K) of their terms' magnitude; a float32 computation anywhere is 1e-7 off.
F64_TOLERANCE = 1e-13


def normal(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def bf16_bound(reference, magnitudes):
    """docs/python.md: |y - ref| <= 2^-8 |ref| + 2^-7 S, S the sum of the terms' magnitudes (the
    output's rounding to bf16, and up to two batch-reduce chunks rounded in between)."""
    return 2.0 ** -8 * np.abs(reference) + 2.0 ** -7 * magnitudes


# GEMM: y = x @ w.T + b, dx = dy @ w, dw = dy.T @ x.

@pytest.mark.parametrize("M, N, K", [(48, 64, 96), (33, 17, 40), (64, 64, 64)])
@pytest.mark.parametrize("bias, relu", [(False, False), (True, True)])
def test_gemm_is_a_linear_layer(rng, M, N, K, bias, relu):
    x, w, b = normal(rng, (N, K)), normal(rng, (M, K)), normal(rng, (M,))
    y = weft.ops.gemm(x, w, b if bias else None, relu=relu)
    expected = x.astype(np.float64) @ w.T.astype(np.float64) + (b if bias else 0)
    if relu:
        expected = np.maximum(expected, 0)
    assert y.shape == (N, M) and y.dtype == np.float32
    np.testing.assert_allclose(y, expected, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * K)


@pytest.mark.parametrize("M, N, K", [(48, 64, 96), (33, 17, 40)])
def test_gemm_backward_passes(rng, M, N, K):
    x, w, dy = normal(rng, (N, K)), normal(rng, (M, K)), normal(rng, (N, M))
    dx = weft.ops.gemm_backward_data(dy, w)
    dw = weft.ops.gemm_backward_weights(dy, x)
    np.testing.assert_allclose(dx, dy.astype(np.float64) @ w, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * M)
    np.testing.assert_allclose(dw, dy.T.astype(np.float64) @ x, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * N)


def test_mlp_runs_the_layers_in_turn(rng):
    N, K, layers = 32, 64, 3
    x = normal(rng, (N, K))
    weights = [normal(rng, (K, K)) / 8 for _ in range(layers)]
    biases = [normal(rng, (K,)) for _ in range(layers)]
    expected = x.astype(np.float64)
    for w, b in zip(weights, biases):
        expected = np.maximum(expected @ w.T + b, 0)
    np.testing.assert_allclose(weft.ops.mlp(x, weights, biases), expected, rtol=1e-4, atol=1e-4)


# float64: the GEMM operators only (all 53 bits of the inputs random).

@pytest.mark.parametrize("M, N, K", [(48, 64, 96), (33, 17, 40), (70, 9, 130)])
@pytest.mark.parametrize("bias, relu", [(False, False), (True, True)])
def test_gemm_in_float64(rng, M, N, K, bias, relu):
    x, w, b = rng.standard_normal((N, K)), rng.standard_normal((M, K)), rng.standard_normal(M)
    y = weft.ops.gemm(x, w, b if bias else None, relu=relu)
    expected = x @ w.T + (b if bias else 0)
    if relu:
        expected = np.maximum(expected, 0)
    assert y.shape == (N, M) and y.dtype == np.float64
    np.testing.assert_allclose(y, expected, rtol=F64_TOLERANCE, atol=F64_TOLERANCE * K)


@pytest.mark.parametrize("M, N, K", [(48, 64, 96), (33, 17, 40)])
def test_gemm_backward_passes_in_float64(rng, M, N, K):
    x, w, dy = rng.standard_normal((N, K)), rng.standard_normal((M, K)), rng.standard_normal((N, M))
    dx = weft.ops.gemm_backward_data(dy, w)
    dw = weft.ops.gemm_backward_weights(dy, x)
    assert dx.dtype == dw.dtype == np.float64
    np.testing.assert_allclose(dx, dy @ w, rtol=F64_TOLERANCE, atol=F64_TOLERANCE * M)
    np.testing.assert_allclose(dw, dy.T @ x, rtol=F64_TOLERANCE, atol=F64_TOLERANCE * N)
    op = weft.ops.GemmBackwardWeights(M, N, K, dtype="float64")
    assert op.dtype == "f64"
    out = np.empty((M, K))
    assert op(dy, x, out=out) is out
    np.testing.assert_allclose(out, dw, rtol=0, atol=0)  # the same operator, the same sums


def test_mlp_in_float64_with_bias_and_relu(rng):
    N, K, layers = 24, 72, 3
    x = rng.standard_normal((N, K))
    weights = [rng.standard_normal((K, K)) / 8 for _ in range(layers)]
    biases = [rng.standard_normal(K) for _ in range(layers)]
    expected = x
    for w, b in zip(weights, biases):
        expected = np.maximum(expected @ w.T + b, 0)
    y = weft.ops.mlp(x, weights, biases)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, expected, rtol=layers * F64_TOLERANCE, atol=layers * F64_TOLERANCE * K)


def test_float64_gemm_on_blocked_arrays_agrees_with_plain(rng):
    M, N, K = 40, 24, 56
    op = weft.ops.Gemm(M, N, K, dtype="f64", bias=True)
    x, w, b = rng.standard_normal((N, K)), rng.standard_normal((M, K)), rng.standard_normal(M)
    blocked = op(op.to_blocked("x", x), op.to_blocked("w", w), op.to_blocked("b", b), layout="blocked")
    assert blocked.dtype == np.float64 and blocked.shape == (op.blocked_size("y"),)
    np.testing.assert_array_equal(op.from_blocked("y", blocked), op(x, w, b))


def test_gemm_on_torch_float64_tensors(rng):
    torch = pytest.importorskip("torch")
    M, N, K = 32, 16, 48
    x = torch.from_numpy(rng.standard_normal((N, K)))
    w = torch.from_numpy(rng.standard_normal((M, K)))
    b = torch.from_numpy(rng.standard_normal(M))
    y = weft.ops.gemm(x, w, b, relu=True)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float64 and y.shape == (N, M)
    reference = torch.relu(torch.nn.functional.linear(x, w, b))
    np.testing.assert_allclose(y.numpy(), reference.numpy(), rtol=F64_TOLERANCE, atol=F64_TOLERANCE * K)
    # Zero copy: an output tensor given as out= is written where it lies.
    out = torch.empty(N, M, dtype=torch.float64)
    assert weft.ops.gemm(x, w, b, relu=True, out=out) is out
    np.testing.assert_array_equal(out.numpy(), y.numpy())
    dy = torch.from_numpy(rng.standard_normal((N, M)))
    dx = weft.ops.gemm_backward_data(dy, w)
    dw = weft.ops.gemm_backward_weights(dy, x)
    assert dx.dtype == dw.dtype == torch.float64
    np.testing.assert_allclose(dx.numpy(), (dy @ w).numpy(), rtol=F64_TOLERANCE, atol=F64_TOLERANCE * M)
    np.testing.assert_allclose(dw.numpy(), (dy.T @ x).numpy(), rtol=F64_TOLERANCE, atol=F64_TOLERANCE * N)


def test_convolutions_refuse_float64_naming_the_argument(rng):
    x, w = rng.standard_normal((1, 4, 8, 8)), rng.standard_normal((4, 4, 3, 3))
    with pytest.raises(TypeError, match="argument 'x' is float64: weft.ops' convolutions compute in float32 and bfloat16"):
        weft.ops.conv2d(x, w)
    with pytest.raises(TypeError, match="argument 'dy' is float64"):
        weft.ops.conv2d_backward_data(x, w, (1, 4, 10, 10))
    with pytest.raises(TypeError, match="argument 'dtype': weft.ops' convolutions compute in float32 and bfloat16, not float64"):
        weft.ops.Conv2d(1, 4, 8, 8, 4, 3, 3, dtype="float64")


def test_gemm_in_bf16_within_the_bound(rng):
    M, N, K = 48, 40, 64
    x_bits, w_bits, b_bits = bf16_bits(normal(rng, (N, K))), bf16_bits(normal(rng, (M, K))), bf16_bits(normal(rng, (M,)))
    y_bits = weft.ops.gemm(x_bits, w_bits, b_bits, dtype="bf16", config="default")
    assert y_bits.dtype == np.uint16 and y_bits.shape == (N, M)
    x, w, b = (bf16_values(v).astype(np.float64) for v in (x_bits, w_bits, b_bits))
    reference = x @ w.T + b
    error = np.abs(bf16_values(y_bits) - reference)
    assert np.all(error <= bf16_bound(reference, np.abs(x) @ np.abs(w).T + np.abs(b)))
    assert error.max() > 0  # it did round: the check compares bf16 results, not float32 ones


def test_gemm_backward_passes_in_bf16_within_the_bound(rng):
    M, N, K = 32, 48, 64
    x_bits, w_bits, dy_bits = bf16_bits(normal(rng, (N, K))), bf16_bits(normal(rng, (M, K))), bf16_bits(normal(rng, (N, M)))
    x, w, dy = (bf16_values(v).astype(np.float64) for v in (x_bits, w_bits, dy_bits))
    dx = bf16_values(weft.ops.gemm_backward_data(dy_bits, w_bits, dtype="bf16", config="default"))
    dw = bf16_values(weft.ops.gemm_backward_weights(dy_bits, x_bits, dtype="bf16", config="default"))
    assert np.all(np.abs(dx - dy @ w) <= bf16_bound(dy @ w, np.abs(dy) @ np.abs(w)))
    assert np.all(np.abs(dw - dy.T @ x) <= bf16_bound(dy.T @ x, np.abs(dy).T @ np.abs(x)))


def test_mlp_in_bf16_within_the_bound_layer_by_layer(rng):
    N, K, layers = 16, 64, 2
    x_bits = bf16_bits(normal(rng, (N, K)))
    w_bits = [bf16_bits(normal(rng, (K, K)) / 8) for _ in range(layers)]
    op = weft.ops.Gemm(K, N, K, dtype="bf16", relu=True, layers=layers, config="default")
    y_bits = op(x_bits, w_bits)
    # The hidden layer stays inside the operator: the last layer is checked from the first one's bf16
    # result as a one-layer operator computes it (K = 64 is one batch-reduce chunk in both, so both
    # round each hidden value once, from the same fp32 sum up to the order of its additions).
    hidden = weft.ops.Gemm(K, N, K, dtype="bf16", relu=True, config="default")(x_bits, w_bits[0])
    h, w = bf16_values(hidden).astype(np.float64), bf16_values(w_bits[1]).astype(np.float64)
    reference = np.maximum(h @ w.T, 0)
    assert np.all(np.abs(bf16_values(y_bits) - reference) <= bf16_bound(reference, np.abs(h) @ np.abs(w).T))


def test_outputs_are_written_in_place(rng):
    x, w = normal(rng, (8, 24)), normal(rng, (40, 24))
    out = np.empty((8, 40), np.float32)
    assert weft.ops.gemm(x, w, out=out) is out
    np.testing.assert_allclose(out, x.astype(np.float64) @ w.T, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * 24)


def test_plain_activations_are_used_in_place_and_out_may_alias_x(rng):
    # K a multiple of the forward's bk: x and y plain (no conversion); the backward by data reads dy
    # (M a multiple of bm) and writes dx plain, the backward by weights reads dy and x plain (bn
    # divides N). An output sharing memory with an input goes through scratch, not over the input.
    op = weft.ops.Gemm(64, 50, 64, config={"bm": 32, "bn": 16, "bk": 32})
    assert {o["name"]: o["plain"] for o in op.operands} == {"x": True, "w": False, "y": True}
    assert op.blocked_size("x") == 50 * 64 and op.description.endswith("plain: x, y")
    bwd = weft.ops.GemmBackwardData(64, 50, 64, config={"bm": 32, "bn": 16, "bk": 32})
    assert [o["plain"] for o in bwd.operands] == [True, False, True]
    x, w = normal(rng, (50, 64)), normal(rng, (64, 64))
    expected = x.astype(np.float64) @ w.T
    np.testing.assert_allclose(op(x, w), expected, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * 64)
    assert op(x, w, out=x) is x
    np.testing.assert_allclose(x, expected, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * 64)
    dy = normal(rng, (50, 64))
    expected = dy.astype(np.float64) @ w
    assert bwd(dy, w, out=dy) is dy
    np.testing.assert_allclose(dy, expected, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * 64)
    upd = weft.ops.GemmBackwardWeights(64, 50, 64, config={"bm": 32, "bn": 10, "bk": 32})
    assert [o["plain"] for o in upd.operands] == [True, True, False]
    np.testing.assert_allclose(upd(dy, x), dy.astype(np.float64).T @ x, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * 50)
    # K not a multiple of bk: x and y blocked.
    assert not any(o["plain"] for o in weft.ops.Gemm(64, 50, 72, config={"bm": 32, "bn": 16, "bk": 32}).operands)


def test_a_blocked_out_may_alias_an_input(rng):
    # As on plain arrays: an out= sharing memory with an input goes through scratch. The blocked
    # call wrote over dy while reading it.
    M = N = K = 64
    bwd = weft.ops.GemmBackwardData(M, N, K)
    upd = weft.ops.GemmBackwardWeights(M, N, K)
    dy, w, x = normal(rng, (N, M)), normal(rng, (M, K)), normal(rng, (N, K))
    dyb = bwd.to_blocked("dy", dy)
    assert bwd(dyb, bwd.to_blocked("w", w), layout="blocked", out=dyb) is dyb
    np.testing.assert_allclose(bwd.from_blocked("dx", dyb), dy.astype(np.float64) @ w, rtol=F32_TOLERANCE,
                               atol=F32_TOLERANCE * M)
    dyb, xb = upd.to_blocked("dy", dy), upd.to_blocked("x", x)
    upd(dyb, xb, layout="blocked", out=xb)
    np.testing.assert_allclose(upd.from_blocked("dw", xb), dy.astype(np.float64).T @ x, rtol=F32_TOLERANCE,
                               atol=F32_TOLERANCE * N)


def test_a_convolution_too_large_to_address_is_refused():
    # Each extent in range, the tensors' element counts not: their layouts reported 0 elements and
    # a run on them crashed.
    big = 2 ** 20
    with pytest.raises(ValueError, match=r"the input would hold about 2\^80 elements"):
        weft.ops.Conv2d(big, big, big, big, 16, 1, 1, config="default", threads=1)


def test_a_negated_torch_view_is_refused():
    # torch 1.13 exports a lazily negated tensor's values without the negation: read, the product
    # had the wrong sign.
    torch = pytest.importorskip("torch")
    x, w = torch.randn(8, 16), torch.randn(16, 16)
    with pytest.raises(ValueError, match=r"argument 'x' is a negated view \(tensor.is_neg\(\)\)"):
        weft.ops.gemm(torch._neg_view(x), w)
    torch.testing.assert_close(weft.ops.gemm(torch._neg_view(x).resolve_neg(), w), -x @ w.T)


def test_gemm_on_torch_bfloat16_tensors(rng):
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(normal(rng, (16, 64))).bfloat16()
    w = torch.from_numpy(normal(rng, (32, 64))).bfloat16()
    y = weft.ops.gemm(x, w, config="default")
    assert y.dtype == torch.bfloat16 and y.shape == (16, 32)
    reference = torch.nn.functional.linear(x.double(), w.double())
    bound = bf16_bound(reference.numpy(), (x.double().abs() @ w.double().abs().T).numpy())
    assert np.all((y.double() - reference).abs().numpy() <= bound)


# Convolution: NCHW / KCRS as torch.nn.functional.conv2d.

CONV_CASES = [  # N C H W K R S stride padding
    (2, 16, 10, 10, 24, 3, 3, 1, 1),
    (1, 8, 9, 11, 16, 3, 3, 2, 1),
    (2, 32, 7, 7, 16, 1, 1, 1, 0),
    (1, 4, 8, 8, 8, 5, 3, 1, (2, 1)),
]


def conv_arrays(rng, case):
    N, C, H, W, K, R, S, _, _ = case
    return normal(rng, (N, C, H, W)), normal(rng, (K, C, R, S)), normal(rng, (K,))


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_and_its_backward_passes_match_torch(rng, case):
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    stride, padding = case[7], case[8]
    x, w, b = conv_arrays(rng, case)
    xd, wd, bd = (torch.from_numpy(v).double() for v in (x, w, b))
    reference = functional.relu(functional.conv2d(xd, wd, bd, stride=stride, padding=padding))
    y = weft.ops.conv2d(x, w, b, stride=stride, padding=padding, relu=True)
    tolerance = F32_TOLERANCE * w[0].size
    np.testing.assert_allclose(y, reference.numpy(), rtol=F32_TOLERANCE, atol=tolerance)
    dy = normal(rng, reference.shape)
    dyd = torch.from_numpy(dy).double()
    dx = weft.ops.conv2d_backward_data(dy, w, x.shape, stride=stride, padding=padding)
    dw = weft.ops.conv2d_backward_weights(dy, x, w.shape, stride=stride, padding=padding)
    np.testing.assert_allclose(dx, torch.nn.grad.conv2d_input(x.shape, wd, dyd, stride=stride, padding=padding).numpy(),
                               rtol=F32_TOLERANCE, atol=tolerance)
    np.testing.assert_allclose(dw, torch.nn.grad.conv2d_weight(xd, w.shape, dyd, stride=stride, padding=padding).numpy(),
                               rtol=F32_TOLERANCE, atol=F32_TOLERANCE * dy[:, 0].size)


@pytest.mark.parametrize("case", CONV_CASES[:2])
def test_conv2d_in_bf16_within_the_bound(rng, case):
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    stride, padding = case[7], case[8]
    x, w, b = (torch.from_numpy(v).bfloat16() for v in conv_arrays(rng, case))
    y = weft.ops.conv2d(x, w, b, stride=stride, padding=padding, config="default")
    assert y.dtype == torch.bfloat16
    reference = functional.conv2d(x.double(), w.double(), b.double(), stride=stride, padding=padding)
    magnitudes = functional.conv2d(x.double().abs(), w.double().abs(), b.double().abs(), stride=stride, padding=padding)
    assert np.all((y.double() - reference).abs().numpy() <= bf16_bound(reference.numpy(), magnitudes.numpy()))
    dy = torch.from_numpy(normal(rng, reference.shape)).bfloat16()
    dx = weft.ops.conv2d_backward_data(dy, w, x.shape, stride=stride, padding=padding, config="default")
    dx_reference = torch.nn.grad.conv2d_input(x.shape, w.double(), dy.double(), stride=stride, padding=padding)
    dx_magnitudes = torch.nn.grad.conv2d_input(x.shape, w.double().abs(), dy.double().abs(), stride=stride, padding=padding)
    assert np.all((dx.double() - dx_reference).abs().numpy() <= bf16_bound(dx_reference.numpy(), dx_magnitudes.numpy()))
    dw = weft.ops.conv2d_backward_weights(dy, x, w.shape, stride=stride, padding=padding, config="default")
    dw_reference = torch.nn.grad.conv2d_weight(x.double(), w.shape, dy.double(), stride=stride, padding=padding)
    dw_magnitudes = torch.nn.grad.conv2d_weight(x.double().abs(), w.shape, dy.double().abs(), stride=stride, padding=padding)
    assert np.all((dw.double() - dw_reference).abs().numpy() <= bf16_bound(dw_reference.numpy(), dw_magnitudes.numpy()))


# Blocked arrays: the same results, in the operators' own layouts.

def test_gemm_on_blocked_arrays_agrees_with_plain(rng):
    M, N, K = 40, 24, 72
    x, w, b = normal(rng, (N, K)), normal(rng, (M, K)), normal(rng, (M,))
    op = weft.ops.Gemm(M, N, K, bias=True, relu=True)
    xb, wb, bb = op.to_blocked("x", x), op.to_blocked("w", w), op.to_blocked("b", b)
    assert xb.ndim == 1 and xb.size == op.blocked_size("x") >= x.size
    yb = op(xb, wb, bb, layout="blocked")
    assert yb.size == op.blocked_size("y")
    np.testing.assert_array_equal(op.from_blocked("y", yb), op(x, w, b))
    np.testing.assert_array_equal(op.from_blocked("x", xb), x)  # the conversions are inverse


def test_conv2d_on_blocked_arrays_agrees_with_plain(rng):
    case = CONV_CASES[0]
    N, C, H, W, K, R, S, stride, padding = case
    x, w, b = conv_arrays(rng, case)
    op = weft.ops.Conv2d(N, C, H, W, K, R, S, stride, padding, bias=True)
    yb = op(op.to_blocked("x", x), op.to_blocked("w", w), op.to_blocked("b", b), layout="blocked")
    np.testing.assert_array_equal(op.from_blocked("y", yb), op(x, w, b))


def test_conv2d_writes_its_output_plain_where_that_pays(rng):
    # One C chunk (and no edge columns): the forward writes NCHW itself, and its blocked y is the
    # plain array (the K tail of 24 = 16 + 8 included); with two chunks it converts a blocked y.
    torch = pytest.importorskip("torch")
    N, C, H, W, K = 2, 16, 8, 8, 24
    x, w, b = normal(rng, (N, C, H, W)), normal(rng, (K, C, 1, 1)), normal(rng, (K,))
    expected = torch.nn.functional.conv2d(*(torch.from_numpy(a).double() for a in (x, w, b))).numpy()
    for c_block, plain in ((1, True), (2, False)):
        op = weft.ops.Conv2d(N, C, H, W, K, 1, 1, bias=True,
                             config={"loop_string": "Abcdefg", "bc": 8, "bk": 16, "c_block": c_block})
        assert next(o["plain"] for o in op.operands if o["name"] == "y") == plain
        assert op.description.endswith("; plain: y") == plain
        assert op.blocked_size("y") == (N * K * H * W if plain else N * 2 * H * W * 16)
        y = op(x, w, b)
        np.testing.assert_allclose(y, expected, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * C)
        yb = op(op.to_blocked("x", x), op.to_blocked("w", w), op.to_blocked("b", b), layout="blocked")
        np.testing.assert_array_equal(op.from_blocked("y", yb), y)
        if plain:
            np.testing.assert_array_equal(yb.reshape(y.shape), y)


def test_conv_backward_by_weights_reads_the_backward_by_datas_blocked_dy(rng):
    # The backward by data lays dy out with rims (3x3, stride 1); the update prepared with those
    # rims (dy_rim) takes that same blocked dy and gives what it gives on plain arrays.
    case = CONV_CASES[0]
    N, C, H, W, K, R, S, stride, padding = case
    x, _, _ = conv_arrays(rng, case)
    P, Q = (H + 2 * padding - R) // stride + 1, (W + 2 * padding - S) // stride + 1
    dy = normal(rng, (N, K, P, Q))
    bwd = weft.ops.Conv2dBackwardData(N, C, H, W, K, R, S, stride, padding)
    rim = next(o["rim"] for o in bwd.operands if o["name"] == "dy")
    assert rim == (R - 1 - padding, S - 1 - padding)
    upd = weft.ops.Conv2dBackwardWeights(N, C, H, W, K, R, S, stride, padding, dy_rim=rim)
    assert next(o["rim"] for o in upd.operands if o["name"] == "dy") == rim
    assert next(o["rim"] for o in upd.operands if o["name"] == "dw") is None  # a filter has none
    dyb = bwd.to_blocked("dy", dy)
    assert dyb.size == upd.blocked_size("dy")
    dwb = upd(dyb, upd.to_blocked("x", x), layout="blocked")
    np.testing.assert_array_equal(upd.from_blocked("dw", dwb), upd(dy, x))
    plain = weft.ops.Conv2dBackwardWeights(N, C, H, W, K, R, S, stride, padding)
    np.testing.assert_allclose(upd(dy, x), plain(dy, x), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match=r"argument 'dy_rim' must be >= 0.*\(-1, 0\)"):
        weft.ops.Conv2dBackwardWeights(N, C, H, W, K, R, S, stride, padding, dy_rim=(-1, 0))
    with pytest.raises(TypeError, match="argument 'dy_rim' must be an int or a pair of ints"):
        weft.ops.Conv2dBackwardWeights(N, C, H, W, K, R, S, stride, padding, dy_rim="1")


def test_convolution_blocks_that_do_not_divide_the_channels(rng):
    torch = pytest.importorskip("torch")
    x, w = normal(rng, (2, 6, 9, 9)), normal(rng, (20, 6, 3, 3))
    op = weft.ops.Conv2d(2, 6, 9, 9, 20, 3, 3, 1, 1, config={"loop_string": "Abcdefg", "bc": 4, "bk": 16})
    blocked_w = op.to_blocked("w", w)
    assert blocked_w.size == 2 * 2 * 9 * 4 * 16  # 20 filters in 2 blocks of 16, 6 channels in 2 of 4
    assert np.count_nonzero(blocked_w) == w.size  # the padding channels are zero
    np.testing.assert_array_equal(op.from_blocked("w", blocked_w), w)
    expected = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), padding=1)
    np.testing.assert_allclose(op(x, w), expected.numpy(), rtol=F32_TOLERANCE, atol=F32_TOLERANCE * w[0].size)


def test_blocked_bf16_gemm_backward_agrees_with_plain(rng):
    M, N, K = 32, 16, 64
    dy, w = bf16_bits(normal(rng, (N, M))), bf16_bits(normal(rng, (M, K)))
    op = weft.ops.GemmBackwardData(M, N, K, dtype="bf16")
    dxb = op(op.to_blocked("dy", dy), op.to_blocked("w", w), layout="blocked")
    np.testing.assert_array_equal(op.from_blocked("dx", dxb), op(dy, w))


def test_bf16_convolution_backward_by_data_refuses_a_float32_out(rng):
    # Only the backward by weights writes float32 sums; the backward by data claimed to, and wrote
    # bf16 elements into a float32 out (half of it, the rest left as it was).
    op = weft.ops.Conv2dBackwardData(1, 8, 6, 6, 8, 3, 3, 1, 1, dtype="bf16")
    assert not op.writes_f32_output
    assert weft.ops.Conv2dBackwardWeights(1, 8, 6, 6, 8, 3, 3, 1, 1, dtype="bf16").writes_f32_output
    dy, w = bf16_bits(normal(rng, (1, 8, 6, 6))), bf16_bits(normal(rng, (8, 8, 3, 3)))
    dyb, wb = op.to_blocked("dy", dy), op.to_blocked("w", w)
    with pytest.raises(TypeError, match="argument 'out' holds f32, but the operator computes in bfloat16"):
        op(dyb, wb, layout="blocked", out=np.zeros(op.blocked_size("dx"), dtype=np.float32))


def test_bf16_backward_by_weights_writes_float32_sums_where_its_bf16_ones_would_be(rng):
    M, N, K = 48, 40, 64
    dy, x = bf16_bits(normal(rng, (N, M))), bf16_bits(normal(rng, (N, K)))
    # One batch-reduce chunk: the bf16 output is the same f32 sums, rounded once.
    op = weft.ops.GemmBackwardWeights(M, N, K, dtype="bf16",
                                      config={"loop_string": "Abc", "bm": 16, "bn": 8, "bk": 16, "nbf": 1})
    assert op.writes_f32_output and not weft.ops.GemmBackwardData(M, N, K, dtype="bf16").writes_f32_output
    dyb, xb = op.to_blocked("dy", dy), op.to_blocked("x", x)
    dw16 = op(dyb, xb, layout="blocked")
    dw32 = op(dyb, xb, layout="blocked", out=np.full(op.blocked_size("dw"), 7.0, dtype=np.float32))
    assert dw32.dtype == np.float32
    bits = dw32.view(np.uint32).astype(np.uint64)
    nearest_even = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(nearest_even, dw16)  # every element where the bf16 one is
    assert (dw32 != bf16_values(dw16)).mean() > 0.9  # and unrounded
    np.testing.assert_array_equal(op.from_blocked("dw", dw16), op(dy, x))
    with pytest.raises(TypeError, match=r"argument 'out' holds f64.*its blocked output may be float32 too"):
        op(dyb, xb, layout="blocked", out=np.zeros(op.blocked_size("dw")))
    with pytest.raises(TypeError, match="argument 'out' holds f32, but the operator computes in bfloat16"):
        op(dy, x, out=np.zeros((M, K), dtype=np.float32))  # plain: bf16 only
    bwd = weft.ops.GemmBackwardData(M, N, K, dtype="bf16")
    with pytest.raises(TypeError, match=r"argument 'out' holds f32, but the operator computes in bfloat16$"):
        bwd(bwd.to_blocked("dy", dy), bwd.to_blocked("w", bf16_bits(normal(rng, (M, K)))), layout="blocked",
            out=np.zeros(bwd.blocked_size("dx"), dtype=np.float32))


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f64"])
def test_gemm_dy_converts_through_a_relu_and_sums_into_the_bias_gradient(dtype):
    """to_blocked(relu_of=y) is to_blocked of dy masked where y <= 0 (NaN passes); channel_sums of a
    blocked dy is its column sum, in float32 (float64 for f64)."""
    torch = pytest.importorskip("torch")
    tdtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f64": torch.float64}[dtype]
    M, N, K = 40, 24, 16  # partial tiles
    generator = torch.Generator().manual_seed(5)
    dy = torch.randn(N, M, generator=generator).to(tdtype)
    y = torch.randn(N, M, generator=generator).to(tdtype)
    y[0, :4] = float("nan")
    y[1, :4] = 0.0
    masked = torch.where((y > 0) | y.isnan(), dy, torch.zeros_like(dy))
    for op in (weft.ops.GemmBackwardData(M, N, K, dtype=dtype), weft.ops.GemmBackwardWeights(M, N, K, dtype=dtype)):
        blocked = op.to_blocked("dy", dy, relu_of=y)
        assert torch.equal(blocked, op.to_blocked("dy", masked))
        sums = op.channel_sums("dy", blocked)
        assert sums.dtype == (torch.float64 if dtype == "f64" else torch.float32) and sums.shape == (M,)
        torch.testing.assert_close(sums.double(), masked.double().sum(0), rtol=1e-6, atol=1e-5)
    op = weft.ops.GemmBackwardData(M, N, K, dtype=dtype)
    w = torch.zeros(M, K, dtype=tdtype)
    with pytest.raises(ValueError, match="operand 'w' is no activation"):
        op.to_blocked("w", w, relu_of=w)
    with pytest.raises(ValueError, match="operand 'w' is no activation"):
        op.channel_sums("w", op.to_blocked("w", w))
    with pytest.raises(TypeError, match=r"argument 'out' must be 40 f.. values \(shape \(40,\), one per channel "
                                        r"of 'dy'\), got shape \(41,\)"):
        op.channel_sums("dy", op.to_blocked("dy", dy), out=torch.empty(M + 1, dtype=sums.dtype))
    # Of another shape with as many values: refused too (it was taken).
    with pytest.raises(TypeError, match=r"got shape \(4, 10\)"):
        op.channel_sums("dy", op.to_blocked("dy", dy), out=torch.empty(4, 10, dtype=sums.dtype))
    # A conversion into memory it reads (it read what it had already written): refused.
    blocked = op.to_blocked("dy", dy)
    with pytest.raises(ValueError, match="argument 'out' shares memory with 'dy': a conversion between layouts"):
        op.to_blocked("dy", blocked[:dy.numel()].reshape(dy.shape), out=blocked)
    with pytest.raises(ValueError, match="argument 'out' shares memory with 'relu_of'"):
        op.to_blocked("dy", dy, relu_of=blocked[:dy.numel()].reshape(dy.shape), out=blocked)
    with pytest.raises(ValueError, match="argument 'relu_of' has shape"):
        op.to_blocked("dy", dy, relu_of=y[:-1])


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_conv_dy_converts_through_a_relu_and_sums_into_the_bias_gradient(dtype):
    torch = pytest.importorskip("torch")
    tdtype = torch.float32 if dtype == "f32" else torch.bfloat16
    N, C, H, W, K = 2, 8, 9, 9, 20  # 20 output channels: a partial channel block
    generator = torch.Generator().manual_seed(6)
    op = weft.ops.Conv2dBackwardData(N, C, H, W, K, 3, 3, stride=1, padding=1, dtype=dtype)
    dy = torch.randn(N, K, H, W, generator=generator).to(tdtype)
    y = torch.randn(N, K, H, W, generator=generator).to(tdtype)
    masked = torch.where(y > 0, dy, torch.zeros_like(dy))
    blocked = op.to_blocked("dy", dy, relu_of=y)
    assert torch.equal(blocked, op.to_blocked("dy", masked))
    torch.testing.assert_close(op.channel_sums("dy", blocked).double(), masked.double().sum((0, 2, 3)),
                               rtol=1e-6, atol=1e-5)
    with pytest.raises(ValueError, match="operand 'w' is no activation"):
        op.channel_sums("w", torch.zeros(op.blocked_size("w"), dtype=tdtype))


# The cache of prepared operators, and configurations.

def test_a_second_call_reuses_the_prepared_operator(rng):
    x, w = normal(rng, (8, 24)), normal(rng, (40, 24))
    weft.ops.clear_cache()
    before = weft.ops.cache_info()
    first = weft.ops.gemm(x, w)
    after_first = weft.ops.cache_info()
    second = weft.ops.gemm(x, w)
    after_second = weft.ops.cache_info()
    assert after_first["builds"] == before["builds"] + 1
    assert after_second["builds"] == after_first["builds"]
    assert after_second["hits"] == after_first["hits"] + 1
    np.testing.assert_array_equal(first, second)
    weft.ops.gemm(x, w, relu=True)  # another descriptor: another operator
    assert weft.ops.cache_info()["builds"] == after_second["builds"] + 1


def test_explicit_default_and_auto_configurations(rng, monkeypatch, tmp_path):
    monkeypatch.setenv("WEFT_TUNING_DB", str(tmp_path / "empty.jsonl"))
    monkeypatch.setenv("WEFT_SHIPPED_TUNING_DIR", "")
    M, N, K = 64, 32, 128
    x, w = normal(rng, (N, K)), normal(rng, (M, K))
    expected = x.astype(np.float64) @ w.T
    explicit = weft.ops.Gemm(M, N, K, config={"loop_string": "aCb", "bm": 32, "bn": 16, "bk": 64, "kbf": 2})
    assert explicit.source == "explicit" and explicit.description.startswith("aCb")
    default = weft.ops.Gemm(M, N, K, config="default")
    untuned = weft.ops.Gemm(M, N, K, config="auto")
    assert default.source == "default" and untuned.source == "default"  # no record: the machine's default
    for op in (explicit, default, untuned):
        np.testing.assert_allclose(op(x, w), expected, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * K)


def test_explicit_convolution_configuration(rng):
    case = CONV_CASES[2]
    N, C, H, W, K, R, S, stride, padding = case
    x, w, _ = conv_arrays(rng, case)
    op = weft.ops.Conv2d(N, C, H, W, K, R, S, stride, padding, config={"loop_string": "Abcdefg", "bc": 16, "bk": 16})
    assert op.source == "explicit"
    np.testing.assert_allclose(op(x, w), weft.ops.Conv2d(N, C, H, W, K, R, S, stride, padding, config="default")(x, w),
                               rtol=F32_TOLERANCE, atol=F32_TOLERANCE * C)


def test_a_configuration_of_tiles_alone_runs_the_untuned_choice_with_them(rng, monkeypatch, tmp_path):
    """config={"bc": .., "bk": ..} (what weft.torch asks for a layer's weight layout): without a
    record, the untuned configuration with those tiles, computing what the default computes."""
    monkeypatch.setenv("WEFT_TUNING_DB", str(tmp_path / "empty.jsonl"))
    monkeypatch.setenv("WEFT_SHIPPED_TUNING_DIR", "")
    case = CONV_CASES[2]
    N, C, H, W, K, R, S, stride, padding = case
    x, w, _ = conv_arrays(rng, case)
    op = weft.ops.Conv2d(N, C, H, W, K, R, S, stride, padding, config={"bc": 8, "bk": 16})
    assert op.source == "default" and " bc=8 bk=16 " in op.description
    np.testing.assert_allclose(op(x, w), weft.ops.Conv2d(N, C, H, W, K, R, S, stride, padding, config="default")(x, w),
                               rtol=F32_TOLERANCE, atol=F32_TOLERANCE * C)
    gemm = weft.ops.GemmBackwardData(64, 32, 128, config={"bm": 16, "bk": 64})
    assert gemm.source == "default" and " bm=16 " in gemm.description and " bk=64 " in gemm.description
    dy, wg = normal(rng, (32, 64)), normal(rng, (64, 128))
    np.testing.assert_allclose(gemm(dy, wg), dy.astype(np.float64) @ wg, rtol=F32_TOLERANCE, atol=F32_TOLERANCE * 64)


# Errors name the argument.

def test_errors_name_the_argument(rng):
    x, w = normal(rng, (8, 24)), normal(rng, (40, 24))
    with pytest.raises(ValueError, match="argument 'w' has shape \\(40, 25\\), expected \\(40, 24\\)"):
        weft.ops.gemm(x, normal(rng, (40, 25)))
    with pytest.raises(ValueError, match="argument 'x' must be \\(N, K\\)"):
        weft.ops.gemm(normal(rng, (8,)), w)
    with pytest.raises(TypeError, match="argument 'w' holds f32, but the operator computes in float64"):
        weft.ops.gemm(x.astype(np.float64), w)
    with pytest.raises(ValueError, match="argument 'dtype': 'float16' is none of 'f32', 'bf16', 'f64'"):
        weft.ops.Gemm(40, 8, 24, dtype="float16")
    with pytest.raises(TypeError, match="argument 'w' holds f64, but the operator computes in float32"):
        weft.ops.gemm(x, w.astype(np.float64))
    with pytest.raises(ValueError, match="argument 'w' is not C-contiguous"):
        weft.ops.gemm(x, np.asfortranarray(w))
    with pytest.raises(TypeError, match="argument 'x' is an array of uint16: .*dtype='bf16'"):
        weft.ops.gemm(bf16_bits(x), bf16_bits(w))
    with pytest.raises(ValueError, match="argument 'b' is given"):
        weft.ops.Gemm(40, 8, 24)(x, w, normal(rng, (40,)))
    with pytest.raises(TypeError, match="argument 'stride' must be an int or a pair of ints"):
        weft.ops.conv2d(normal(rng, (1, 4, 8, 8)), normal(rng, (4, 4, 3, 3)), stride="2")
    with pytest.raises(ValueError, match="argument 'weight_shape' must hold 4 sizes"):
        weft.ops.conv2d_backward_weights(normal(rng, (1, 4, 6, 6)), normal(rng, (1, 4, 8, 8)), (4, 4, 3))
    with pytest.raises(TypeError, match="argument 'threads' must be an int, not str"):
        weft.ops.Gemm(40, 8, 24, threads="two")
    with pytest.raises(ValueError, match="argument 'threads' must be in 1..65536, got 0"):
        weft.ops.Gemm(40, 8, 24, threads=0)
    with pytest.raises(ValueError, match="argument 'layout'"):
        weft.ops.Gemm(40, 8, 24)(x, w, layout="tiled")
    with pytest.raises(ValueError, match="argument 'stride' must be an int or a pair of ints, got \\(1, 1, 1\\)"):
        weft.ops.conv2d(normal(rng, (1, 4, 8, 8)), normal(rng, (4, 4, 3, 3)), stride=(1, 1, 1))


def test_mlp_needs_one_bias_per_weight_or_none(rng):
    x, w = normal(rng, (8, 16)), normal(rng, (16, 16))
    for weights, biases in (([w], []), ([w, w], [normal(rng, (16,))]), ([w], [normal(rng, (16,))] * 2)):
        with pytest.raises(ValueError, match=rf"argument 'biases' must hold one bias per weight \({len(weights)}\) "
                                             rf"or be None, got {len(biases)}"):
            weft.ops.mlp(x, weights, biases=biases)


@pytest.mark.parametrize("make", [lambda: weft.ops.Gemm(32, 16, 24, bias=True),
                                  lambda: weft.ops.Conv2d(1, 8, 6, 6, 8, 3, 3, bias=True)], ids=["gemm", "conv2d"])
def test_channel_sums_of_a_bias_is_no_activation(make):
    """A bias has one dimension, no channels to sum into: the operator's own ValueError, as for a weight."""
    op = make()
    blocked = np.zeros(op.blocked_size("b"), np.float32)
    for out in (None, np.zeros(8, np.float32)):
        with pytest.raises(ValueError, match="operand 'b' is no activation"):
            op.channel_sums("b", blocked, out=out)


def test_configuration_errors_name_the_key_and_point_at_the_loop_string(rng):
    with pytest.raises(ValueError, match="argument 'config': unknown key 'bc'; this operator takes loop_string, blocks, bm"):
        weft.ops.Gemm(64, 32, 64, config={"loop_string": "aBC", "bc": 4})
    with pytest.raises(ValueError, match="without 'loop_string' holds tiles only \\(bm, bn, bk.*not 'kbf'"):
        weft.ops.Gemm(64, 32, 64, config={"bm": 32, "kbf": 2})
    with pytest.raises(ValueError, match="without 'loop_string' holds tiles only \\(bc, bk.*not 'h_in_gemm'"):
        weft.ops.Conv2d(1, 4, 8, 8, 4, 3, 3, config={"bc": 4, "h_in_gemm": 1})
    with pytest.raises(ValueError, match="a dict needs a 'loop_string', or tiles \\(bm, bn, bk\\) alone"):
        weft.ops.Gemm(64, 32, 64, config={})
    with pytest.raises(ValueError, match="tile 'bm' must be positive, got 0"):
        weft.ops.Gemm(64, 32, 64, config={"bm": 0})
    with pytest.raises(ValueError, match="the convolution's bwd pass takes no configuration with bc=5 bk=16"):
        weft.ops.Conv2dBackwardData(1, 16, 6, 6, 32, 3, 3, 1, 1, dtype="bf16", config={"bc": 5, "bk": 16})
    with pytest.raises(ValueError, match="'config': 'fast' is none of"):
        weft.ops.Gemm(64, 32, 64, config="fast")
    with pytest.raises(ValueError) as error:
        weft.ops.Gemm(64, 32, 64, config={"loop_string": "aBX"})
    assert "^" in str(error.value) and "X" in str(error.value)
    with pytest.raises(ValueError, match="stride_h"):
        weft.ops.Conv2d(1, 4, 8, 8, 4, 3, 3, stride=0)


def test_blocked_arrays_of_the_wrong_size_are_refused(rng):
    op = weft.ops.Gemm(40, 8, 24)
    x, w = normal(rng, (8, 24)), normal(rng, (40, 24))
    with pytest.raises(ValueError, match="argument 'x' has 192 elements, the blocked layout holds"):
        op(x.reshape(-1), op.to_blocked("w", w), layout="blocked")
    # A plain 2-D weight with as many elements as its blocked copy (it was read as the blocked
    # tiles without a word): refused.
    square = weft.ops.Gemm(64, 32, 64, config={"bm": 32, "bn": 16, "bk": 32})
    w64 = normal(rng, (64, 64))
    assert square.blocked_size("w") == w64.size
    with pytest.raises(ValueError, match=r"argument 'w' has shape \(64, 64\): a blocked array is flat"):
        square(square.to_blocked("x", normal(rng, (32, 64))), w64, layout="blocked")
    with pytest.raises(ValueError, match="no operand 'z'"):
        op.blocked_size("z")
    # An output array for another operand's blocked copy: the message names both.
    wrong = np.empty(op.blocked_size("w"), np.float32)
    with pytest.raises(ValueError, match=f"argument 'out' has {wrong.size} elements, the blocked layout of 'x' holds "
                                         f"{op.blocked_size('x')} \\(op.blocked_size\\('x'\\)\\)"):
        op.to_blocked("x", x, wrong)
    with pytest.raises(ValueError, match="argument 'out' has .* elements, the blocked layout of 'y' holds"):
        op(op.to_blocked("x", x), op.to_blocked("w", w), out=wrong, layout="blocked")


# The GIL is released while an operator runs (the method of test_threads.py).

def test_an_operator_lets_other_python_threads_run(rng):
    size = 1536
    x, w = normal(rng, (size, size)), normal(rng, (size, size))
    op = weft.ops.Gemm(size, size, size, threads=1, config="default")  # leaves a core to this thread
    op(x, w)
    assert_call_lets_other_threads_run(lambda: op(x, w))


def test_two_threads_share_one_operator(rng):
    x, w = normal(rng, (24, 48)), normal(rng, (32, 48))
    op = weft.ops.Gemm(32, 24, 48)
    expected = op(x, w)
    errors = []

    def work():
        try:
            for _ in range(100):
                np.testing.assert_array_equal(op(x, w), expected)
        except AssertionError as error:
            errors.append(error)

    pool = [threading.Thread(target=work) for _ in range(2)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert errors == []
