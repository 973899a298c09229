"""torch tensors through DLPack: zero copy, bfloat16, float64, outputs of the inputs' kind.
Skipped when PyTorch is absent."""
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
