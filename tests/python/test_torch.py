"""torch tensors through DLPack: zero copy, bfloat16, float64, outputs of the inputs' kind.
Skipped when PyTorch is absent."""
import json

import numpy as np
import pytest

import weft

torch = pytest.importorskip("torch")


def test_tensors_are_read_and_written_in_place():
    x = torch.linspace(-2, 2, 48).reshape(6, 8)
    out = torch.empty(6, 8)
    address = out.data_ptr()
    assert weft._weft.data_pointer(x) == x.data_ptr()
    assert weft.tpp.unary("relu", x, out) is out
    assert out.data_ptr() == address
    assert torch.equal(out, torch.relu(x))


def test_a_contiguous_slice_is_read_at_its_offset():
    base = torch.arange(40, dtype=torch.float32).reshape(10, 4)
    assert weft._weft.data_pointer(base[3:7]) == base[3:7].data_ptr()


def test_brgemm_on_bfloat16_tensors():
    generator = torch.Generator().manual_seed(3)
    a = torch.randn(3, 16, 32, generator=generator).to(torch.bfloat16)
    b = torch.randn(3, 32, 24, generator=generator).to(torch.bfloat16)
    c = weft.tpp.brgemm(a, weft.tpp.vnni2(b), beta=0)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32
    expected = torch.einsum("imk,ikn->mn", a.double(), b.double())
    assert torch.allclose(c.double(), expected, rtol=1e-4, atol=1e-4)
    c_bf16 = torch.empty(16, 24, dtype=torch.bfloat16)
    weft.tpp.brgemm(a, weft.tpp.vnni2(b), c_bf16, beta=0)
    assert torch.equal(c_bf16, c.to(torch.bfloat16))  # both round the fp32 sums to nearest even


def test_unary_and_binary_keep_bfloat16():
    x = torch.linspace(-3, 3, 64).reshape(4, 16).to(torch.bfloat16)
    y = weft.tpp.unary("relu", x)
    assert y.dtype == torch.bfloat16 and torch.equal(y, torch.relu(x))
    z = weft.tpp.binary("add", x, x[0].contiguous())
    assert z.dtype == torch.bfloat16 and torch.equal(z, (x.float() + x[0].float()).to(torch.bfloat16))


def test_einsum_on_float64_tensors():
    generator = torch.Generator().manual_seed(4)
    a = torch.randn(5, 6, dtype=torch.float64, generator=generator)
    b = torch.randn(6, 7, dtype=torch.float64, generator=generator)
    result = weft.einsum("ij,jk->ik", a, b)
    assert isinstance(result, torch.Tensor) and result.dtype == torch.float64
    assert torch.allclose(result, a @ b, rtol=1e-12)


def test_tensor_errors_name_the_argument():
    with pytest.raises(ValueError, match="argument 'x' is not C-contiguous"):
        weft.tpp.unary("relu", torch.ones(4, 6).t(), torch.empty(6, 4))
    with pytest.raises(TypeError, match="argument 'x' is a tensor of torch.int32"):
        weft.tpp.unary("relu", torch.ones(4, 4, dtype=torch.int32))
    with pytest.raises(TypeError, match="argument 'b' holds f64"):
        weft.tpp.binary("add", torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))


def test_numpy_and_torch_operands_mix():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    result = weft.einsum("ij,jk->ik", a, b)
    assert isinstance(result, np.ndarray)
    np.testing.assert_allclose(result, a @ b.numpy())


# ---------------------------------------------------------------------------------------------
# weft.torch: layers on weft's operators.

import subprocess  # noqa: E402
import sys  # noqa: E402

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import weft.torch as wt  # noqa: E402
from weft.torch._function import BlockedWeightFunction  # noqa: E402

weft.set_num_threads(2)  # after `import torch`, which resets OpenMP's count


def bf16_bound(reference, magnitudes):
    """docs/python.md's bf16 bound per element: 2^-8 |ref| + 2^-7 S, S the sum of the terms' magnitudes."""
    return 2.0 ** -8 * reference.abs() + 2.0 ** -7 * magnitudes


def plain_grad(layer):
    return layer._weight.layout.from_blocked(layer.weight.grad)


def test_import_weft_does_not_import_torch_and_layers_follow_torchs_team():
    """In a fresh process: `import weft` leaves torch alone; without weft.set_num_threads a layer
    runs on torch.get_num_threads() (each call's), not on OpenMP's count that `import torch` reset."""
    program = "\n".join([
        "import sys, weft",
        "assert 'torch' not in sys.modules",
        "import torch, weft.torch",
        "assert weft._weft.requested_num_threads() == 0",
        "layer = weft.torch.Linear(8, 4)",
        "torch.set_num_threads(2)",
        "assert layer._plan(3).fwd.op.threads == 2",
        "torch.set_num_threads(1)",
        "assert layer._plan(3).upd.op.threads == 1",
        "weft.set_num_threads(2)",
        "assert layer._plan(3).bwd.op.threads == 2",
    ])
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def blocked_from_plain(layer):
    """The layer's Function as a function of the plain weight: gradcheck then perturbs the weight's
    real elements only (its blocked padding contributes nothing, and a test of its own checks that
    its gradient is zero), through torch's own differentiable gather into the blocked layout."""
    layout = layer._weight.layout
    return lambda x, w, b: BlockedWeightFunction.apply(x, layout.to_blocked(w), b, layer, layer._plan(x.shape[0]))


@pytest.mark.parametrize("relu", [False, True])
def test_linear_gradcheck_float64(relu):
    """On weft's float64 GEMM operators."""
    torch.manual_seed(1)
    layer = wt.Linear(13, 10, relu=relu, dtype=torch.float64)
    x = torch.randn(7, 13, dtype=torch.float64, requires_grad=True)
    w = layer.plain_weight().requires_grad_()
    assert torch.autograd.gradcheck(blocked_from_plain(layer), (x, w, layer.bias), eps=1e-6, atol=1e-7, rtol=1e-6)


def test_mlp_gradcheck_float64():
    """On weft's float64 GEMM operators, as above."""
    torch.manual_seed(2)
    mlp = wt.MLP([9, 12, 5], dtype=torch.float64)
    x = torch.randn(6, 9, dtype=torch.float64, requires_grad=True)
    params = [p for layer in mlp for p in (layer.plain_weight().requires_grad_(), layer.bias)]
    functions = [blocked_from_plain(layer) for layer in mlp]

    def function(x, *params):
        for i, layer_function in enumerate(functions):
            x = layer_function(x, params[2 * i], params[2 * i + 1])
        return x
    assert torch.autograd.gradcheck(function, (x, *params), eps=1e-6, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("bias,relu,shape", [(True, False, (7, 13)), (True, True, (2, 5, 13)), (False, True, (33, 13))])
def test_linear_matches_functional_fp32(bias, relu, shape):
    torch.manual_seed(3)
    layer = wt.Linear(13, 10, bias=bias, relu=relu)
    x = torch.randn(*shape, requires_grad=True)
    dy = torch.randn(*shape[:-1], 10)
    y = layer(x)
    y.backward(dy)
    w = layer.plain_weight().requires_grad_()
    b = layer.bias.detach().clone().requires_grad_() if bias else None
    xr = x.detach().clone().requires_grad_()
    yr = F.linear(xr, w, b)
    yr = F.relu(yr) if relu else yr
    yr.backward(dy)
    torch.testing.assert_close(y, yr, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(plain_grad(layer), w.grad, rtol=1e-5, atol=1e-5)
    if bias:
        torch.testing.assert_close(layer.bias.grad, b.grad, rtol=1e-5, atol=1e-5)
    plan = layer._plan(x.numel() // 13)
    assert plan.fwd.straight and plan.bwd.straight and plan.upd.straight  # blocked once, read in place


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batch", [33, 64])
@pytest.mark.parametrize("out_features", [72, 128])
@pytest.mark.parametrize("relu", [True, False])
def test_linear_runs_on_plain_activations_where_the_passes_take_them(dtype, batch, out_features, relu):
    # 128 inputs, a multiple of every bk weft picks for them. A batch of 33, no multiple of bn:
    # the backward by weights converts x and dy (it needs whole tiles along N); of 64: it reads
    # them in place, and with 128 outputs (whole tiles along M) both backward passes read one
    # masked plain dy (without a ReLU: dy itself). Otherwise they share one blocked dy.
    torch.manual_seed(5)
    M = out_features
    layer = wt.Linear(128, M, relu=relu, dtype=dtype)
    x = torch.randn(batch, 128, dtype=dtype, requires_grad=True)
    dy = torch.randn(batch, M, dtype=dtype)
    dy_before = dy.clone()
    y = layer(x)
    y.backward(dy)
    torch.testing.assert_close(dy, dy_before, rtol=0, atol=0)  # read in place, never written
    plan = layer._plan(batch)
    assert plan.x_plain and plan.y_plain and plan.dx_plain
    assert plan.upd_x_plain == (batch == 64)
    assert plan.bwd_dy_plain == plan.upd_dy_plain == (batch == 64 and M == 128) and plan.dy_shared
    w = layer.plain_weight().requires_grad_()
    b = layer.bias.detach().clone().requires_grad_()
    xr = x.detach().clone().requires_grad_()
    yr = F.linear(xr, w, b)
    yr = F.relu(yr) if relu else yr
    yr.backward(dy)
    torch.testing.assert_close(y, yr)
    torch.testing.assert_close(x.grad, xr.grad)
    torch.testing.assert_close(plain_grad(layer), w.grad)
    torch.testing.assert_close(layer.bias.grad, b.grad)
    assert y.data_ptr() != x.data_ptr() and x.grad.data_ptr() != dy.data_ptr()


def test_linear_bf16_within_the_bound_on_fp32_masters():
    torch.manual_seed(4)
    layer = wt.Linear(40, 24, dtype=torch.bfloat16)
    assert layer.weight.dtype == torch.float32 and layer.bias.dtype == torch.float32
    x = torch.randn(16, 40).to(torch.bfloat16).requires_grad_()
    dy = torch.randn(16, 24).to(torch.bfloat16)
    y = layer(x)
    y.backward(dy)
    assert y.dtype == torch.bfloat16 and x.grad.dtype == torch.bfloat16 and layer.weight.grad.dtype == torch.float32
    w = layer.plain_weight().to(torch.bfloat16).double()   # what the bf16 passes read
    b = layer.bias.detach().to(torch.bfloat16).double()
    xd, dyd = x.detach().double(), dy.double()
    checks = [(y, xd @ w.T + b, xd.abs() @ w.abs().T + b.abs()),
              (x.grad, dyd @ w, dyd.abs() @ w.abs()),
              (plain_grad(layer), dyd.T @ xd, dyd.abs().T @ xd.abs())]
    for got, reference, magnitudes in checks:
        assert ((got.double() - reference).abs() <= bf16_bound(reference, magnitudes)).all()
    torch.testing.assert_close(layer.bias.grad.double(), dyd.sum(0), rtol=1e-6, atol=1e-6)


CONV_CASES = [  # C, K, H, kernel, stride, padding, bias, relu
    (3, 8, 9, 3, 1, 1, True, True),
    (8, 16, 8, 3, 2, 1, True, False),
    (6, 4, 7, 1, 1, 0, False, True),
    (64, 64, 7, 3, 1, 1, True, False),   # the update's own choice blocks the filter otherwise (32 x 32)
]


@pytest.mark.parametrize("C,K,H,kernel,stride,padding,bias,relu", CONV_CASES)
def test_conv2d_matches_functional_fp32(C, K, H, kernel, stride, padding, bias, relu):
    torch.manual_seed(5)
    layer = wt.Conv2d(C, K, kernel, stride=stride, padding=padding, bias=bias, relu=relu)
    x = torch.randn(2, C, H, H, requires_grad=True)
    y = layer(x)
    dy = torch.randn(y.shape)
    y.backward(dy)
    w = layer.plain_weight().requires_grad_()
    b = layer.bias.detach().clone().requires_grad_() if bias else None
    xr = x.detach().clone().requires_grad_()
    yr = F.conv2d(xr, w, b, stride, padding)
    yr = F.relu(yr) if relu else yr
    yr.backward(dy)
    tolerance = dict(rtol=1e-4, atol=1e-4)
    plan = layer._plan(tuple(x.shape))
    assert plan.fwd.straight and plan.bwd.straight and plan.upd.straight  # the filter read in place
    assert plan.dy_shared  # the update reads dy with the backward by data's rims: one conversion
    if kernel == 1:  # one C block, no edge columns: the forward writes y plain (any machine's choice)
        assert plan.y_plain
    torch.testing.assert_close(y, yr, **tolerance)
    torch.testing.assert_close(x.grad, xr.grad, **tolerance)
    torch.testing.assert_close(plain_grad(layer), w.grad, **tolerance)
    if bias:
        torch.testing.assert_close(layer.bias.grad, b.grad, **tolerance)


def test_conv2d_gradients_match_finite_differences_fp32():
    """weft's convolutions have no float64, so gradcheck cannot run them. Instead: the analytic
    directional derivatives <grad, v> of L = sum(conv(x, w, b) * r) against central differences
    (L(. + h v) - L(. - h v)) / 2h, all in fp32 through weft. L is linear in each argument, so the
    difference is exact but for fp32 rounding at any h; h = 1 keeps that rounding small, and the
    tolerance (1e-3 relative to the sum of the terms' magnitudes) is that rounding's."""
    torch.manual_seed(6)
    layer = wt.Conv2d(5, 6, 3, stride=2, padding=1)
    x = torch.randn(2, 5, 9, 9, requires_grad=True)
    r = torch.randn(2, 6, 5, 5)
    (layer(x) * r).sum().backward()
    weight, bias = layer.weight.detach().clone(), layer.bias.detach().clone()
    grads = {"x": x.grad, "weight": layer.weight.grad, "bias": layer.bias.grad}
    for name, base in (("x", x.detach()), ("weight", weight), ("bias", bias)):
        v = torch.randn(base.shape)
        if name == "weight":
            v = layer._weight.layout.to_blocked(layer._weight.layout.from_blocked(v))  # padding stays zero

        def loss(delta):
            with torch.no_grad():
                layer.weight.copy_(weight + (delta if name == "weight" else 0))
                layer.bias.copy_(bias + (delta if name == "bias" else 0))
                return float((layer(x.detach() + (delta if name == "x" else 0)).double() * r).sum())
        numeric = (loss(v) - loss(-v)) / 2
        analytic = float((grads[name].double() * v).sum())
        scale = float((grads[name].double() * v).abs().sum())
        assert abs(numeric - analytic) <= 1e-3 * scale, (name, numeric, analytic)


def test_conv2d_bf16_within_the_bound():
    torch.manual_seed(7)
    layer = wt.Conv2d(4, 8, 3, padding=1, dtype=torch.bfloat16)
    x = torch.randn(2, 4, 6, 6).to(torch.bfloat16).requires_grad_()
    y = layer(x)
    dy = torch.randn(y.shape).to(torch.bfloat16)
    y.backward(dy)
    assert layer._plan(tuple(x.shape)).dy_shared
    w = layer.plain_weight().to(torch.bfloat16).double()
    b = layer.bias.detach().to(torch.bfloat16).double()
    xd, dyd = x.detach().double(), dy.double()
    checks = [(y, F.conv2d(xd, w, b, 1, 1), F.conv2d(xd.abs(), w.abs(), b.abs(), 1, 1)),
              (x.grad, torch.nn.grad.conv2d_input(xd.shape, w, dyd, 1, 1),
               torch.nn.grad.conv2d_input(xd.shape, w.abs(), dyd.abs(), 1, 1)),
              (plain_grad(layer), torch.nn.grad.conv2d_weight(xd, w.shape, dyd, 1, 1),
               torch.nn.grad.conv2d_weight(xd.abs(), w.shape, dyd.abs(), 1, 1))]
    for got, reference, magnitudes in checks:
        assert ((got.double() - reference).abs() <= bf16_bound(reference, magnitudes)).all()


def test_state_dicts_move_between_torch_nn_and_weft_torch():
    torch.manual_seed(8)
    for plain, blocked in ((nn.Linear(13, 10), wt.Linear(13, 10)),
                           (nn.Conv2d(3, 5, 3, padding=1), wt.Conv2d(3, 5, 3, padding=1))):
        blocked.load_state_dict(plain.state_dict())
        assert list(blocked.state_dict()) == list(plain.state_dict())
        torch.testing.assert_close(blocked.plain_weight(), plain.weight.detach(), rtol=0, atol=0)
        x = torch.randn(4, 13) if isinstance(plain, nn.Linear) else torch.randn(2, 3, 6, 6)
        torch.testing.assert_close(blocked(x), plain(x), rtol=1e-5, atol=1e-5)
        with torch.no_grad():
            blocked.weight.mul_(2)
        plain.load_state_dict(blocked.state_dict())
        torch.testing.assert_close(plain(x), blocked(x), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape \(10, 12\)"):
        wt.Linear(13, 10).load_state_dict(nn.Linear(12, 10).state_dict())


OPTIMIZERS = {"sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
              "adam": lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.01),
              "adamw": lambda p: torch.optim.AdamW(p, lr=0.01)}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_padding_stays_zero_through_optimizer_steps(name):
    torch.manual_seed(9)
    layer = wt.Linear(13, 10)   # 64 x 64 tiles: most of the blocked weight is padding
    padding = layer._weight.layout.padding
    assert layer.weight.numel() > 130 and padding.numel() == layer.weight.numel() - 130
    optimizer = OPTIMIZERS[name](layer.parameters())
    for _ in range(3):
        optimizer.zero_grad()
        layer(torch.randn(5, 13)).square().sum().backward()
        optimizer.step()
    assert bool((layer.weight.detach()[padding] == 0).all())


def train(model, inputs, targets, steps, lr=0.05):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for step in range(steps):
        optimizer.zero_grad()
        F.cross_entropy(model(inputs[step]), targets[step]).backward()
        optimizer.step()


def test_training_a_small_mlp_gives_torch_nns_weights():
    torch.manual_seed(10)
    reference = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 24), nn.ReLU(), nn.Linear(24, 5))
    mlp = wt.MLP([20, 32, 24, 5])
    mlp.load_state_dict({key.replace("2.", "1.").replace("4.", "2."): value
                         for key, value in reference.state_dict().items()})
    inputs, targets = torch.randn(5, 16, 20), torch.randint(0, 5, (5, 16))
    train(reference, inputs, targets, 5)
    train(mlp, inputs, targets, 5)
    for i, j in ((0, 0), (1, 2), (2, 4)):
        torch.testing.assert_close(mlp[i].plain_weight(), reference[j].weight.detach(), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(mlp[i].bias.detach(), reference[j].bias.detach(), rtol=1e-4, atol=1e-5)


def small_cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(),
                         nn.Flatten(), nn.Linear(16 * 4 * 4, 10))


def test_training_a_small_cnn_gives_torch_nns_weights():
    torch.manual_seed(11)
    reference = small_cnn()
    model = small_cnn()
    model.load_state_dict(reference.state_dict())
    report = wt.optimize(model)
    assert [name for name, _ in report.swapped] == ["0", "2", "5"]
    inputs, targets = torch.randn(4, 4, 3, 8, 8), torch.randint(0, 10, (4, 4))
    train(reference, inputs, targets, 4)
    train(model, inputs, targets, 4)
    for key, value in reference.state_dict().items():
        torch.testing.assert_close(model.state_dict()[key], value, rtol=1e-4, atol=1e-5)


def test_optimize_swaps_what_weft_runs_and_says_which():
    torch.manual_seed(12)
    model = nn.Sequential(nn.Conv2d(4, 8, 3, padding="same"), nn.ReLU(), nn.Conv2d(8, 8, 3, groups=2),
                          nn.Conv2d(8, 8, 2, dilation=2), nn.Flatten(), nn.Linear(8, 6), nn.ReLU(),
                          nn.Linear(6, 3).double(), nn.Conv2d(3, 3, 1).double(), nn.Linear(2, 2).half())
    x = torch.randn(2, 4, 5, 5)
    expected = model[:7](x)
    expected_double = model[7](expected.double())
    keys = list(model.state_dict())
    report = wt.optimize(model)
    assert [name for name, _ in report.swapped] == ["0", "5", "7"]
    assert dict(report.left) == {"2": "groups=2: weft's convolution has no groups",
                                 "3": "dilation=(2, 2): weft's convolution has no dilation",
                                 "8": "torch.float64: weft's convolutions compute in float32 and bfloat16",
                                 "9": "torch.float16: weft.torch swaps float32, bfloat16 and float64 linear layers"}
    assert "fused the ReLU 1" in str(report) and isinstance(model[1], nn.Identity) and model[0].relu
    assert isinstance(model[5], wt.Linear) and model[5].relu and isinstance(model[6], nn.Identity)
    assert isinstance(model[7], wt.Linear) and model[7].dtype == torch.float64  # weft's float64 GEMM
    assert list(model.state_dict()) == keys
    torch.testing.assert_close(model[:7](x), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(model[7](expected.double()), expected_double, rtol=1e-12, atol=1e-12)


def test_optimize_leaves_tied_and_subclassed_layers():
    encoder = nn.Linear(4, 4)
    decoder = nn.Linear(4, 4)
    decoder.weight = encoder.weight
    attention = nn.MultiheadAttention(4, 1)
    report = wt.optimize(nn.ModuleDict({"encoder": encoder, "decoder": decoder, "attention": attention}))
    assert not report.swapped
    assert {name for name, _ in report.left} == {"encoder", "decoder", "attention"}


def test_layer_errors_name_the_argument():
    layer = wt.Linear(8, 4)
    with pytest.raises(TypeError, match="argument 'input' is a tensor of torch.float64"):
        layer(torch.ones(2, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match="argument 'input' has shape \\(2, 7\\)"):
        layer(torch.ones(2, 7))
    with pytest.raises(ValueError, match="argument 'input' is not contiguous"):
        layer(torch.ones(8, 2).t())
    with pytest.raises(TypeError, match="argument 'input' must be a torch.Tensor"):
        layer([[1.0] * 8])
    with pytest.raises(TypeError, match="argument 'dtype'.*not float64"):
        wt.Conv2d(3, 4, 3, dtype=torch.float64)
    with pytest.raises(TypeError, match="argument 'dtype'"):
        wt.Linear(3, 4, dtype=torch.float16)
    with pytest.raises(ValueError, match="argument 'in_features'"):
        wt.Linear(0, 4)
    with pytest.raises(TypeError, match="argument 'threads'"):
        wt.Linear(3, 4, threads=2.0)
    with pytest.raises(ValueError, match="argument 'input' has shape \\(1, 2, 5, 5\\): dimension 1"):
        wt.Conv2d(3, 4, 3)(torch.ones(1, 2, 5, 5))
    with pytest.raises(TypeError, match="the layer was made for torch.float32"):
        wt.Linear(8, 4).double()(torch.ones(2, 8, dtype=torch.float64))


def test_layers_run_on_the_team_asked_for():
    weft.set_num_threads(2)
    assert wt.Linear(8, 4)._plan(3).fwd.op.threads == 2
    assert wt.Linear(8, 4, threads=1)._plan(3).bwd.op.threads == 1
    assert wt.Conv2d(2, 4, 3, threads=1)._plan((1, 2, 5, 5)).upd.op.threads == 1


def test_layers_copy_and_pickle():
    import copy
    import io
    torch.manual_seed(13)
    model = nn.Sequential(wt.Conv2d(3, 4, 3, relu=True), nn.Flatten(), wt.Linear(4 * 4 * 4, 5))
    x = torch.randn(2, 3, 6, 6)
    expected = model(x)  # plans prepared: they stay behind in copies
    twin = copy.deepcopy(model)
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    for other in (twin, loaded):
        torch.testing.assert_close(other(x), expected, rtol=0, atol=0)
        assert other[0].weight.data_ptr() != model[0].weight.data_ptr()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_blocked_layouts_are_the_operators_own(dtype):
    """The probed index map converts as the operator does (fp32 values in a bf16 layout too), and
    moves a blocked weight between two passes' layouts."""
    from weft.torch._layout import BlockedLayout
    name = "f32" if dtype == torch.float32 else "bf16"
    torch.manual_seed(14)
    w = torch.randn(70, 90).to(dtype)
    small = weft.ops.GemmBackwardData(70, 8, 90, dtype=name, config={"loop_string": "aBC", "bm": 32, "bn": 32, "bk": 32})
    large = weft.ops.Gemm(70, 8, 90, dtype=name, config={"loop_string": "aBC", "bm": 64, "bn": 32, "bk": 64})
    a, b = BlockedLayout(small, "w", w.shape, dtype), BlockedLayout(large, "w", w.shape, dtype)
    assert not a.same_as(b) and a.numel == b.numel == 70 * 90
    assert torch.equal(a.to_blocked(w), small.to_blocked("w", w)) and torch.equal(b.to_blocked(w), large.to_blocked("w", w))
    assert torch.equal(b.move_from(b.gather_from(a), a.to_blocked(w)), large.to_blocked("w", w))
    assert a.matches(small, "w") and b.matches(large, "w") and not a.matches(large, "w")
    masters = torch.randn(70, 90)  # fp32 values laid out as the bf16 operator lays out bf16 ones
    assert torch.equal(b.to_blocked(masters).to(dtype), large.to_blocked("w", masters.to(dtype)))
    assert torch.equal(b.from_blocked(b.to_blocked(masters)), masters)


def test_passes_that_block_the_weight_otherwise_read_it_through_a_gather(monkeypatch):
    """Without the configurations bound to the layer's tiles the backward passes keep their own
    (32 x 32 here, the forward's 64 x 64): the layer then moves the weight and its gradient between
    layouts."""
    monkeypatch.setattr(wt._common, "tile_bound_config", lambda tiles: None)
    torch.manual_seed(15)
    layer = wt.Linear(70, 90, relu=True)
    x = torch.randn(9, 70, requires_grad=True)
    plan = layer._plan(9)
    assert plan.fwd.straight and not plan.bwd.straight and not plan.upd.straight
    dy = torch.randn(9, 90)
    layer(x).backward(dy)
    w = layer.plain_weight().requires_grad_()
    xr = x.detach().clone().requires_grad_()
    F.relu(F.linear(xr, w, layer.bias.detach())).backward(dy)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(plain_grad(layer), w.grad, rtol=1e-5, atol=1e-5)
    assert bool((layer.weight.grad[layer._weight.layout.padding] == 0).all())


def test_a_pass_runs_the_tile_bound_record_of_the_layers_tiles(monkeypatch, tmp_path):
    """A pass whose free record blocks the filter otherwise than the layer runs the best tuned with
    the layer's tiles (weft.tune's tiles=, weft-tune --tile-bound), reading the filter in place;
    before, it ran an untuned configuration with the layer's tiles."""
    path = tmp_path / "tuning.jsonl"
    monkeypatch.setenv("WEFT_TUNING_DB", str(path))
    monkeypatch.setenv("WEFT_SHIPPED_TUNING_DIR", "")
    weft.ops.clear_cache()
    layer = wt.Conv2d(16, 32, 3, padding=1, threads=1)
    bound = weft.tune.conv2d(1, 16, 6, 6, 32, 3, 3, padding=1, direction="backward_data", seconds=1, threads=1,
                             caches="warm", tiles=layer._tiles)
    free = json.loads(path.read_text())  # the free search's best, with other tiles
    del free["key"]["tiles"]
    free["config"] = {"loop_string": "Acbdefg", "knobs": [["bc", 8], ["bk", 8]], "blocks": []}
    with path.open("a") as db:
        db.write(json.dumps(free) + "\n")
    weft.ops.clear_cache()
    assert "bc=8 bk=8" in weft.ops.Conv2dBackwardData(1, 16, 6, 6, 32, 3, 3, 1, 1, threads=1).description
    plan = layer._plan((1, 16, 6, 6))
    assert plan.bwd.straight and plan.bwd.op.source == "tuned (exact hit)", plan.bwd.op.description
    assert plan.bwd.op.description.split()[2] == bound.config["loop_string"]
    torch.manual_seed(18)
    x = torch.randn(1, 16, 6, 6, requires_grad=True)
    layer(x).square().sum().backward()
    xr = x.detach().clone().requires_grad_()
    F.conv2d(xr, layer.plain_weight(), layer.bias.detach(), padding=1).square().sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-4, atol=1e-4)
    weft.ops.clear_cache()


def test_bf16_copies_follow_the_fp32_masters_through_optimizer_steps():
    """The passes' bf16 copy is made again after each step (not kept stale), and updates smaller
    than a bf16 step of the weight accumulate in the fp32 masters."""
    torch.manual_seed(16)
    layer = wt.Linear(32, 16, dtype=torch.bfloat16)
    x = torch.randn(8, 32).to(torch.bfloat16)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.01)
    for _ in range(2):
        optimizer.zero_grad()
        layer(x).float().square().sum().backward()
        optimizer.step()
        w = layer.plain_weight().to(torch.bfloat16).double()
        b = layer.bias.detach().to(torch.bfloat16).double()
        reference = x.double() @ w.T + b
        magnitudes = x.double().abs() @ w.abs().T + b.abs()
        assert ((layer(x).double() - reference).abs() <= bf16_bound(reference, magnitudes)).all()
    with torch.no_grad():
        layer.weight.copy_(layer.weight.to(torch.bfloat16).float())  # masters on bf16 values
        before = layer.weight.detach().clone()
        layer.weight.add_(before.abs() * 2.0 ** -12)  # below half a bf16 step of each weight
    assert not torch.equal(layer.weight.detach(), before)
    assert torch.equal(layer.weight.detach().to(torch.bfloat16), before.to(torch.bfloat16))


def test_a_shape_the_convolution_refuses_names_the_layer_and_the_input():
    with pytest.raises(ValueError, match=r"weft.torch.Conv2d: weft's convolution does not take input \(1, 3, 3, 3\)"):
        wt.Conv2d(3, 4, 5)(torch.ones(1, 3, 3, 3))


def test_optimize_keeps_a_bf16_models_parameters_in_bf16():
    """A bf16 model stays one: bf16 parameters and gradients, as torch.nn trains it."""
    torch.manual_seed(17)
    model = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Conv2d(1, 2, 3)).to(torch.bfloat16)
    weight, bias = model[0].weight.detach().clone(), model[0].bias.detach().clone()
    report = wt.optimize(model)
    assert [name for name, _ in report.swapped] == ["0", "2"] and "master_dtype=torch.bfloat16" in str(report)
    assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    assert model[0].master_dtype == model[2].master_dtype == torch.bfloat16
    assert torch.equal(model[0].plain_weight(), weight)
    x = torch.randn(4, 16).to(torch.bfloat16)
    model[0](x).sum().backward()
    assert model[0].weight.grad.dtype == model[0].bias.grad.dtype == torch.bfloat16


def test_optimize_gives_bf16_layers_fp32_masters_when_asked():
    torch.manual_seed(17)
    model = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4).double()).to(torch.bfloat16)
    model[2].double()
    weight, bias = model[0].weight.detach().clone(), model[0].bias.detach().clone()
    report = wt.optimize(model, master_dtype=torch.float32)
    assert [name for name, _ in report.swapped] == ["0", "2"] and model[0].dtype == torch.bfloat16
    assert model[0].weight.dtype == torch.float32 and model[2].weight.dtype == torch.float64  # bf16 layers only
    assert torch.equal(model[0].plain_weight(), weight.float())  # bf16 values, exactly, in fp32 masters
    x = torch.randn(4, 16).to(torch.bfloat16)
    reference = x.double() @ weight.double().T + bias.double()
    magnitudes = x.double().abs() @ weight.double().abs().T + bias.double().abs()
    got = model[:2](x).double()
    assert ((got - reference.clamp(min=0)).abs() <= bf16_bound(reference, magnitudes)).all()
    with pytest.raises(TypeError, match=r"argument 'master_dtype' must be None .* or torch.float32"):
        wt.optimize(model, master_dtype=torch.bfloat16)


@pytest.mark.parametrize("make", [lambda **k: wt.Linear(40, 24, **k), lambda **k: wt.Conv2d(4, 8, 3, padding=1, **k)],
                         ids=["linear", "conv2d"])
def test_bf16_parameters_train_within_the_bound_of_one_more_rounding(make):
    """master_dtype=torch.bfloat16: the weight, the bias and their gradients in bf16 (each
    gradient the fp32 sums rounded once more), what the bf16 passes compute unchanged."""
    torch.manual_seed(43)
    layer = make(dtype=torch.bfloat16, master_dtype=torch.bfloat16)
    assert layer.weight.dtype == layer.bias.dtype == torch.bfloat16 and "master_dtype=torch.bfloat16" in repr(layer)
    shape = (16, 40) if isinstance(layer, wt.Linear) else (2, 4, 6, 6)
    x = torch.randn(shape).to(torch.bfloat16).requires_grad_()
    y = layer(x)
    dy = torch.randn(y.shape).to(torch.bfloat16)
    y.backward(dy)
    assert layer.weight.grad.dtype == layer.bias.grad.dtype == torch.bfloat16
    w, xd, dyd = layer.plain_weight().double(), x.detach().double(), dy.double()
    if isinstance(layer, wt.Linear):
        dw, dw_magnitudes = dyd.T @ xd, dyd.abs().T @ xd.abs()
        dx, dx_magnitudes = dyd @ w, dyd.abs() @ w.abs()
        db = dyd.sum(0)
    else:
        dw = torch.nn.grad.conv2d_weight(xd, w.shape, dyd, 1, 1)
        dw_magnitudes = torch.nn.grad.conv2d_weight(xd.abs(), w.shape, dyd.abs(), 1, 1)
        dx = torch.nn.grad.conv2d_input(xd.shape, w, dyd, 1, 1)
        dx_magnitudes = torch.nn.grad.conv2d_input(xd.shape, w.abs(), dyd.abs(), 1, 1)
        db = dyd.sum((0, 2, 3))
    got = plain_grad(layer).double()
    assert ((got - dw).abs() <= bf16_bound(dw, dw_magnitudes) + 2.0 ** -8 * dw.abs()).all()
    torch.testing.assert_close(layer.bias.grad.double(), db.to(torch.bfloat16).double(), rtol=2 ** -8, atol=1e-6)
    assert ((x.grad.double() - dx).abs() <= bf16_bound(dx, dx_magnitudes)).all()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.01)
    before = layer.weight.detach().clone()
    optimizer.step()
    assert layer.weight.dtype == torch.bfloat16 and not torch.equal(layer.weight.detach(), before)
    assert bool((layer.weight.detach()[layer._weight.layout.padding] == 0).all())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("out_features", [20, 64])
def test_the_bias_follows_every_change_of_the_parameter(dtype, out_features):
    """The forward reads a bias whose blocked layout is the plain one (64: a whole tile) in place,
    and converts any other (20: padded): an optimizer step, an in-place change through .data and a
    new tensor behind the parameter each reach the next call."""
    torch.manual_seed(47)
    layer = wt.Linear(12, out_features, dtype=dtype)
    x = torch.randn(3, 12).to(dtype)
    base = (layer(x) - layer.bias.detach().to(dtype)).float()  # x @ W.T, as the layer computes it
    assert layer._plan(3).bias_plain == (out_features == 64)
    optimizer = torch.optim.SGD([layer.bias], lr=0.5)
    layer(x).float().square().sum().backward()
    optimizer.step()
    changes = [lambda: None,  # the step above
               lambda: layer.bias.data.add_(1.0),
               lambda: setattr(layer.bias, "data", torch.full((out_features,), 3.0, dtype=layer.bias.dtype))]
    for change in changes:
        change()
        expected = base + layer.bias.detach().to(dtype).float()
        torch.testing.assert_close(layer(x).float(), expected, rtol=2 ** -7, atol=2 ** -6)


@pytest.mark.parametrize("make", [lambda: wt.Linear(16, 8, dtype=torch.bfloat16),
                                  lambda: wt.Conv2d(3, 4, 3, dtype=torch.bfloat16)], ids=["linear", "conv2d"])
def test_a_change_of_fp32_masters_through_data_reaches_the_next_forward(make):
    """.data shares the storage but not the version counter: the bf16 copy of fp32 masters is made
    anew by each forward, so a change through .data (old-style optimizers, p.data.add_) is seen.
    The copy was kept by version alone before, and the forward ran on the stale weights."""
    torch.manual_seed(53)
    layer = make()
    x = torch.randn((4, 16) if isinstance(layer, wt.Linear) else (1, 3, 5, 5)).to(torch.bfloat16)
    before = layer(x)
    layer.weight.data.mul_(2)
    layer.bias.data.mul_(2)
    torch.testing.assert_close(layer(x).float(), 2 * before.float(), rtol=2 ** -7, atol=1e-3)


def test_master_dtype_is_the_compute_dtype_or_fp32_for_bf16():
    assert wt.Linear(8, 8).master_dtype == torch.float32
    assert wt.Linear(8, 8, dtype=torch.bfloat16).master_dtype == torch.float32
    with pytest.raises(TypeError, match=r"'master_dtype' must be torch.float32 or torch.bfloat16 for "
                                        r"dtype=torch.bfloat16, not torch.float64"):
        wt.Linear(8, 8, dtype=torch.bfloat16, master_dtype=torch.float64)
    with pytest.raises(TypeError, match=r"'master_dtype' must be torch.float32 for dtype=torch.float32"):
        wt.Conv2d(8, 8, 3, master_dtype=torch.bfloat16)


def _layer_and_two_inputs(make, dtype, seed, rows, image):
    """make(dtype) and two random inputs for it: (rows, in_features), or 2 images of image x image."""
    torch.manual_seed(seed)
    layer = make(dtype)
    shape = (rows, layer.in_features) if isinstance(layer, wt.Linear) else (2, layer.in_channels, image, image)
    return (layer,) + tuple(torch.randn(shape).to(dtype).requires_grad_() for _ in range(2))


def _weighted_step(layer, x):
    """One training step of `layer` on x with a loss that weighs each output differently: the
    output, the input gradient and the weight gradient."""
    layer.zero_grad(set_to_none=True)
    x.grad = None
    y = layer(x)
    (y.float() * torch.arange(y.numel()).reshape(y.shape).sin()).sum().backward()
    return y.detach(), x.grad, layer.weight.grad


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("make", [lambda dtype: wt.Linear(24, 24, relu=True, dtype=dtype),
                                  lambda dtype: wt.Conv2d(8, 8, 3, padding=1, relu=True, dtype=dtype)],
                         ids=["linear", "conv2d"])
def test_kept_blocked_buffers_never_alias_what_a_step_returns(make, dtype):
    """The blocked temporaries a layer keeps between calls (one per thread, role and size) are
    reused by the next call: the outputs and gradients of an earlier step must stay as they were,
    and a second step on the same inputs must give the same values."""
    layer, first_x, second_x = _layer_and_two_inputs(make, dtype, 21, rows=6, image=5)

    def step(x):
        return _weighted_step(layer, x)

    first = step(first_x)
    kept = [t.clone() for t in first]
    step(second_x)  # same sizes: every kept buffer is written again
    for got, expected in zip(first, kept):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    for got, expected in zip(step(first_x), kept):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    wt.release_scratch()
    for got, expected in zip(step(first_x), kept):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


@pytest.mark.parametrize("batch", [40, 256])
def test_bf16_linear_weight_gradient_is_summed_in_fp32_and_never_rounded_to_bf16(batch):
    """The update pass writes the fp32 master weight's gradient itself, in the bf16 weight's tile
    order: the sums of bf16 products as fp32 accumulates them, not rounded to bf16 (2^-9 relative)."""
    torch.manual_seed(29)
    layer = wt.Linear(64, 48, bias=False, dtype=torch.bfloat16)
    x = torch.randn(batch, 64).to(torch.bfloat16)
    y = layer(x)
    dy = torch.randn_like(y)
    y.backward(dy)
    plain = layer._weight.layout.from_blocked(layer.weight.grad)
    assert plain.dtype == torch.float32 and plain.shape == (48, 64)
    reference = dy.double().T @ x.double()
    assert (plain.to(torch.bfloat16).float() != plain).float().mean() > 0.9
    torch.testing.assert_close(plain.double(), reference, rtol=1e-5, atol=1e-6 * batch)


def test_bf16_conv2d_weight_gradient_is_summed_in_fp32_and_never_rounded_to_bf16():
    torch.manual_seed(31)
    layer = wt.Conv2d(16, 32, 3, padding=1, bias=False, dtype=torch.bfloat16)
    x = torch.randn(2, 16, 9, 9).to(torch.bfloat16)
    y = layer(x)
    dy = torch.randn_like(y)
    y.backward(dy)
    plain = layer._weight.layout.from_blocked(layer.weight.grad)
    assert plain.dtype == torch.float32 and plain.shape == (32, 16, 3, 3)
    reference = torch.nn.grad.conv2d_weight(x.double(), (32, 16, 3, 3), dy.double(), padding=1)
    assert (plain.to(torch.bfloat16).float() != plain).float().mean() > 0.9
    torch.testing.assert_close(plain.double(), reference, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("make, shape, dims", [(lambda: wt.Linear(20, 30, relu=True), (7, 20), (0,)),
                                               (lambda: wt.Conv2d(4, 6, 3, padding=1, relu=True), (2, 4, 5, 5),
                                                (0, 2, 3))], ids=["linear", "conv2d"])
def test_the_bias_gradient_alone_is_summed_through_the_relu(make, shape, dims):
    """Only the bias needs a gradient (a frozen weight, an input without one): dy is converted for
    the sum alone, through the ReLU's mask."""
    torch.manual_seed(37)
    layer = make()
    layer.weight.requires_grad_(False)
    y = layer(torch.randn(shape))
    dy = torch.randn_like(y)
    y.backward(dy)
    assert layer.weight.grad is None
    torch.testing.assert_close(layer.bias.grad, (dy * (y > 0)).sum(dims), rtol=1e-5, atol=1e-5)


def test_recycled_memory_reuses_a_block_only_once_every_tensor_on_it_is_gone():
    from weft.torch import _memory
    elements = _memory.RECYCLED_FROM_BYTES  # float32: four times the threshold
    wt.release_scratch()
    before = wt.memory_stats()
    a, b = _memory.empty(elements, torch.float32), _memory.empty((elements // 4, 4), torch.float32)
    assert a.shape == (elements,) and b.shape == (elements // 4, 4) and a.data_ptr() != b.data_ptr()
    assert wt.memory_stats()["in_use_bytes"] >= before["in_use_bytes"] + 8 * elements
    address = a.data_ptr()
    view = a[16:]  # a view holds the block as well
    del a
    c = _memory.empty(elements, torch.float32)
    assert c.data_ptr() not in (address, b.data_ptr())
    del view
    d = _memory.empty(elements, torch.float32)  # the freed block, its size class alike
    assert d.data_ptr() == address
    assert wt.memory_stats()["reuses"] == before["reuses"] + 1
    del b, c, d
    assert wt.memory_stats()["cached_bytes"] >= 3 * 4 * elements
    wt.release_scratch()
    assert wt.memory_stats()["cached_bytes"] == 0
    small = _memory.empty(3, torch.bfloat16)  # below the threshold: torch.empty, outside the pool
    assert small.shape == (3,) and wt.memory_stats()["in_use_bytes"] == before["in_use_bytes"]


def test_recycled_memory_keeps_no_more_than_its_limit():
    from weft.torch import _memory
    limit = wt.memory_stats()["limit_bytes"]
    try:
        wt.set_memory_limit(0)
        t = _memory.empty(_memory.RECYCLED_FROM_BYTES, torch.float32)
        del t
        assert wt.memory_stats()["cached_bytes"] == 0
        with pytest.raises(ValueError, match="nbytes must be >= 0"):
            wt.set_memory_limit(-1)
        with pytest.raises(ValueError, match="nbytes must be >= 1"):
            weft._weft.recycled_block(0)
    finally:
        wt.set_memory_limit(limit)
    assert wt.memory_stats()["limit_bytes"] == limit


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("make", [lambda dtype: wt.Linear(256, 512, relu=True, dtype=dtype),
                                  lambda dtype: wt.Conv2d(64, 64, 3, padding=1, relu=True, dtype=dtype)],
                         ids=["linear", "conv2d"])
def test_recycled_outputs_and_gradients_held_across_steps_stay_as_they_were(make, dtype):
    """Outputs, input and weight gradients (large enough for the recycling pool) that the caller
    still holds keep their values through the next steps; once let go, their memory serves them."""
    layer, first_x, second_x = _layer_and_two_inputs(make, dtype, 23, rows=256, image=32)
    first = _weighted_step(layer, first_x)
    held = [t.clone() for t in first]
    reuses = wt.memory_stats()["reuses"]
    second = _weighted_step(layer, second_x)
    assert all(a.data_ptr() != b.data_ptr() for a, b in zip(first, second))
    for got, expected in zip(first, held):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    del first, second
    for got, expected in zip(_weighted_step(layer, first_x), held):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert wt.memory_stats()["reuses"] > reuses


AUTOCAST_LAYERS = [
    # (make, input shape, float64 reference of the layer on bf16-rounded operands)
    (lambda: wt.Linear(64, 48, relu=True), (9, 64), lambda x, w, b: F.linear(x, w, b)),
    (lambda: wt.Linear(3, 5), (4, 3), lambda x, w, b: F.linear(x, w, b)),
    (lambda: wt.Conv2d(16, 24, 3, padding=1, relu=True), (2, 16, 6, 6), lambda x, w, b: F.conv2d(x, w, b, padding=1)),
    (lambda: wt.Conv2d(3, 8, 3, stride=2), (1, 3, 9, 9), lambda x, w, b: F.conv2d(x, w, b, stride=2)),
]


@pytest.mark.parametrize("make, shape, reference", AUTOCAST_LAYERS)
@pytest.mark.parametrize("input_dtype", [torch.float32, torch.bfloat16])
def test_float32_layers_compute_in_bf16_under_autocast(make, shape, reference, input_dtype):
    """As nn.Linear and nn.Conv2d under torch.autocast("cpu", dtype=torch.bfloat16): the input cast
    to bf16, a bf16 output, the fp32 parameters' gradients in fp32 (here summed in fp32 from the
    bf16 operands, never rounded), an fp32 input's gradient in fp32."""
    torch.manual_seed(14)
    layer = make()
    x = torch.randn(shape).to(input_dtype).requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = layer(x)
    assert y.dtype == torch.bfloat16
    dy = torch.randn(y.shape).to(torch.bfloat16)
    y.backward(dy)
    assert layer.weight.grad.dtype == layer.bias.grad.dtype == torch.float32
    assert x.grad.dtype == input_dtype
    # The float64 reference on the bf16 operands, through the ReLU mask of weft's own output.
    x64 = x.detach().to(torch.bfloat16).double().requires_grad_()
    w64 = layer.plain_weight().detach().to(torch.bfloat16).double().requires_grad_()
    b64 = layer.bias.detach().to(torch.bfloat16).double().requires_grad_()
    y64 = reference(x64, w64, b64)
    if layer.relu:
        y64 = y64 * (y.detach() > 0)
    y64.backward(dy.double())
    torch.testing.assert_close(y.double(), y64, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(layer._weight.layout.from_blocked(layer.weight.grad).double(), w64.grad, rtol=1e-5,
                               atol=1e-5)
    torch.testing.assert_close(layer.bias.grad.double(), b64.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x.grad.double(), x64.grad, rtol=1e-2, atol=1e-2)
    # Outside autocast the layer computes in fp32 again.
    assert layer(x.detach().float()).dtype == torch.float32


def test_autocast_pairs_the_fp32_layout_where_the_bf16_passes_take_its_tiles(monkeypatch):
    """The bf16 copy of a layer whose bf16 passes take its tiles is its fp32 layout paired (one
    pass, _autocast.py), and a Linear's update writes the gradient in that layout itself, where a
    Conv2d's is moved back (vnni2_unpack); a layer with an odd channel block goes through the
    index maps."""
    from weft.torch import _autocast
    unpacks = []
    unpack = _autocast._weft.vnni2_unpack
    monkeypatch.setattr(_autocast._weft, "vnni2_unpack", lambda *args: unpacks.append(1) or unpack(*args))
    layers = {"linear": (wt.Linear(64, 48), (2, 64)), "conv": (wt.Conv2d(16, 8, 3), (1, 16, 5, 5)),
              "odd": (wt.Conv2d(3, 8, 3), (1, 3, 5, 5))}
    moved = {}
    for name, (layer, shape) in layers.items():
        unpacks.clear()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = layer(torch.randn(shape))
        y.float().sum().backward()
        moved[name] = len(unpacks)
    assert layers["linear"][0]._autocast._weight.pairing is not None
    assert layers["conv"][0]._autocast._weight.pairing is not None
    assert layers["odd"][0]._autocast._weight.pairing is None
    assert moved == {"linear": 0, "conv": 1, "odd": 0}


def test_layers_under_autocast_take_what_nn_layers_take_there():
    """A bf16 layer casts an fp32 input (autocast casts an eligible op's inputs to bf16); a
    float64 layer ignores autocast, as PyTorch's autocast leaves float64 alone."""
    torch.manual_seed(15)
    bf16 = wt.Linear(16, 8, dtype=torch.bfloat16)
    f64 = wt.Linear(16, 8, dtype=torch.float64)
    x = torch.randn(3, 16, requires_grad=True)
    x64 = torch.randn(3, 16, dtype=torch.float64)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = bf16(x)
        y64 = f64(x64)
    assert y.dtype == torch.bfloat16 and y64.dtype == torch.float64
    torch.testing.assert_close(y, bf16(x.detach().to(torch.bfloat16)), rtol=0, atol=0)
    torch.testing.assert_close(y64, f64(x64), rtol=0, atol=0)
    y.float().sum().backward()
    assert x.grad.dtype == torch.float32


def test_training_under_autocast_follows_torch_nn_under_autocast():
    """optimize(fp32 model), then the mixed-precision recipe: steps under autocast, SGD on the fp32
    parameters. The weights stay within bf16 compute's bound of torch.nn's (whose weight gradients
    are rounded to bf16 first), and the layers keep the fp32 layout their optimizer state is in."""
    torch.manual_seed(16)
    reference = small_cnn()
    model = small_cnn()
    model.load_state_dict(reference.state_dict())
    wt.optimize(model)
    inputs, targets = torch.randn(4, 4, 3, 8, 8), torch.randint(0, 10, (4, 4))
    for m in (reference, model):
        optimizer = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
        for step in range(4):
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = F.cross_entropy(m(inputs[step]), targets[step])
            loss.backward()
            optimizer.step()
    for key, value in reference.state_dict().items():
        assert model.state_dict()[key].dtype == torch.float32
        torch.testing.assert_close(model.state_dict()[key], value, rtol=2e-2, atol=2e-3)


def test_layers_used_under_autocast_copy_and_pickle():
    import copy
    import io
    torch.manual_seed(17)
    layer = wt.Linear(24, 8, relu=True)
    x = torch.randn(5, 24)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = layer(x)
    buffer = io.BytesIO()
    torch.save(layer, buffer)
    buffer.seek(0)
    for other in (copy.deepcopy(layer), torch.load(buffer)):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            torch.testing.assert_close(other(x), expected, rtol=0, atol=0)
        assert other._autocast._layer is other


def test_bf16_update_writes_fp32_sums_in_column_major_tiles_where_asked():
    """GemmBackwardWeights(dtype='bf16') with dw_order='column_major': the fp32 sums of its
    float32 out in the f32 layout's column-major tiles, each tile's column pairs apart (what
    vnni2_unpack makes of the default VNNI-2 order); the order needs a bf16 update, a float32
    blocked out."""
    import weft.ops as ops
    from weft.torch._common import description_knobs
    torch.manual_seed(18)
    upd = ops.GemmBackwardWeights(40, 24, 36, dtype="bf16")
    assert upd.writes_f32_column_major
    dy = upd.to_blocked("dy", torch.randn(24, 40).to(torch.bfloat16))
    x = upd.to_blocked("x", torch.randn(24, 36).to(torch.bfloat16))
    pairs = upd(dy, x, layout="blocked", out=torch.empty(upd.blocked_size("dw")))
    columns = upd(dy, x, layout="blocked", out=torch.full((upd.blocked_size("dw"),), 7.0), dw_order="column_major")
    expected = torch.empty_like(pairs)
    weft._weft.vnni2_unpack(pairs, expected, description_knobs(upd.description, ("bm",))["bm"])
    assert torch.equal(columns, expected)
    with pytest.raises(ValueError, match="'dw_order': 'rows' is none of"):
        upd(dy, x, layout="blocked", out=torch.empty(upd.blocked_size("dw")), dw_order="rows")
    with pytest.raises(ValueError, match="give layout='blocked'"):
        upd(torch.randn(24, 40).to(torch.bfloat16), torch.randn(24, 36).to(torch.bfloat16), dw_order="column_major")
    with pytest.raises(ValueError, match="needs a float32 out"):
        upd(dy, x, layout="blocked", dw_order="column_major")
    f32 = ops.GemmBackwardWeights(40, 24, 36)
    assert not f32.writes_f32_column_major
    with pytest.raises(ValueError, match="is for a bf16 GemmBackwardWeights"):
        f32(f32.to_blocked("dy", torch.randn(24, 40)), f32.to_blocked("x", torch.randn(24, 36)), layout="blocked",
            dw_order="column_major")


@pytest.mark.parametrize("make, shape", [(lambda: wt.Linear(16, 16, bias=False), (8, 16)),
                                         (lambda: wt.Conv2d(4, 8, 3, padding=1), (2, 4, 6, 6))],
                         ids=["linear", "conv2d"])
def test_a_second_differentiation_through_a_layer_is_refused(make, shape):
    """The backward passes are weft's operators, not torch operations: a gradient taken with
    create_graph=True has no graph of their own, so differentiating it again raises (whether the
    incoming gradient requires grad or not) instead of silently dropping the layer's terms.
    First-order training is unchanged."""
    torch.manual_seed(44)
    layer = make()
    x = torch.randn(shape, requires_grad=True)
    for loss in (lambda y: y.sum(), lambda y: y.square().sum()):
        y = layer(x)
        [g] = torch.autograd.grad(loss(y), x, create_graph=True)
        assert g.requires_grad  # as torch.nn's
        with pytest.raises(RuntimeError, match="differentiable once"):
            g.square().sum().backward()
        with pytest.raises(RuntimeError, match="differentiable once"):  # beside terms that differentiate
            (layer(x).sum() + g.square().sum()).backward()
    x.grad = None
    layer.zero_grad()
    layer(x).square().sum().backward()
    assert x.grad is not None and layer.weight.grad is not None


def test_optimize_keeps_a_module_used_twice_one_layer():
    """A module at two places (its weights tied with itself) becomes one weft layer at both; a ReLU
    after one place stays unfused: fused, it would apply at the other place too."""
    torch.manual_seed(45)
    inner = nn.Linear(16, 16)
    block = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
    model = nn.Sequential(inner, nn.ReLU(), inner, block, block)
    x = torch.randn(4, 16)
    expected = model(x)
    report = wt.optimize(model)
    assert model[0] is model[2] and isinstance(model[0], wt.Linear) and not model[0].relu
    assert type(model[1]) is nn.ReLU
    assert model[3] is model[4] and isinstance(model[3][0], wt.Linear) and model[3][0].relu  # its own ReLU
    assert len(list(model.parameters())) == 4
    assert [name for name, _ in report.swapped] == ["0", "2", "3.0"]
    assert "the same layer as 0" in dict(report.swapped)["2"]
    torch.testing.assert_close(model(x), expected, rtol=1e-5, atol=1e-5)


def test_optimize_leaves_layers_it_cannot_copy_faithfully():
    """Hooks, weight normalization (a pre-hook and other parameters), parametrizations, buffers:
    left to PyTorch with the reason, the model unchanged there and its output the same."""
    from torch.nn.utils import parametrize
    torch.manual_seed(46)

    class Symmetric(nn.Module):
        def forward(self, w):
            return w.triu() + w.triu(1).T

    hooked, pre_hooked = nn.Linear(16, 16), nn.Linear(16, 16)
    hooked.register_forward_hook(lambda module, inputs, output: output * 0)
    pre_hooked.register_forward_pre_hook(lambda module, inputs: (inputs[0] * 2,))
    parametrized = nn.Linear(16, 16)
    parametrize.register_parametrization(parametrized, "weight", Symmetric())
    buffered = nn.Conv2d(4, 4, 1)
    buffered.register_buffer("scale", torch.ones(1))
    model = nn.Sequential(nn.utils.weight_norm(nn.Linear(16, 16)), hooked, pre_hooked, parametrized,
                          nn.Unflatten(1, (4, 2, 2)), buffered, nn.Flatten(), nn.Linear(16, 16))
    x = torch.randn(3, 16)
    expected = model(x)
    report = wt.optimize(model)
    assert [name for name, _ in report.swapped] == ["7"]
    left = dict(report.left)
    assert "forward pre-hook" in left["0"] and "forward hook" in left["1"] and "forward pre-hook" in left["2"]
    assert "parametrized" in left["3"] and "buffer 'scale'" in left["5"]
    torch.testing.assert_close(model(x), expected, rtol=1e-5, atol=1e-5)
    lone = nn.utils.weight_norm(nn.Linear(16, 16))
    lone._forward_pre_hooks.clear()  # weight_g and weight_v beyond weight and bias
    report = wt.optimize(nn.Sequential(lone))
    assert not report.swapped and "parameters weight_g, weight_v" in dict(report.left)["0"]


def test_optimize_leaves_the_model_as_it_was_when_a_layer_fails(monkeypatch):
    """Every weft layer is made before any is put in: an error on the way converts nothing."""
    optimize_module = sys.modules["weft.torch.optimize"]  # weft.torch.optimize is the function

    def failing(*args, **kwargs):
        raise RuntimeError("no convolution today")

    monkeypatch.setattr(optimize_module, "Conv2d", failing)
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Unflatten(1, (4, 2, 2)), nn.Conv2d(4, 4, 1))
    with pytest.raises(RuntimeError, match="no convolution today"):
        wt.optimize(model)
    assert [type(module) for module in model] == [nn.Linear, nn.ReLU, nn.Unflatten, nn.Conv2d]


@pytest.mark.parametrize("make, shape", [(lambda: wt.Linear(24, 40, relu=True, dtype=torch.bfloat16), (8, 24)),
                                         (lambda: wt.Conv2d(4, 8, 3, padding=1, dtype=torch.bfloat16), (2, 4, 6, 6))],
                         ids=["linear", "conv2d"])
@pytest.mark.parametrize("inference_first", [True, False], ids=["inference_first", "training_first"])
def test_bf16_layers_with_fp32_masters_run_in_and_out_of_inference_mode(make, shape, inference_first):
    """The bf16 copy of the fp32 masters is kept between calls: one made under torch.inference_mode
    must still take the next copy outside it, and the reverse."""
    torch.manual_seed(47)
    layer = make()
    x = torch.randn(shape).to(torch.bfloat16)
    outputs = []
    for inference in (inference_first, not inference_first, inference_first):
        if inference:
            with torch.inference_mode():
                outputs.append(layer(x))
        else:
            layer.zero_grad()
            y = layer(x.clone().requires_grad_())
            y.float().sum().backward()
            assert layer.weight.grad.dtype == torch.float32
            outputs.append(y.detach())
    assert all(torch.equal(y, outputs[0]) for y in outputs)
