// The operators of weft::ops prepared for Python (prepared_op.hpp): the GEMM passes
// (gemm_ops.cpp) and the convolution passes (conv_ops.cpp), each from its descriptor, the
// `config=` request (op_config.hpp) and the OpenMP team.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "op_config.hpp"
#include "prepared_op.hpp"
#include "weft/ops/conv.hpp"
#include "weft/ops/conv_workload.hpp"
#include "weft/ops/gemm.hpp"
#include "weft/ops/gemm_workload.hpp"

namespace weft::python {

// The forward pass (layers > 1: the MLP) in Linear's convention: operands x (N, K), w (M, K) per
// layer ("w0", "w1", ... for an MLP), b (M,) per layer with desc.bias, y (N, M) = x @ w.T + b.
// Backward by data: dy (N, M), w (M, K) -> dx (N, K) = dy @ w. By weights: dy (N, M), x (N, K)
// -> dw (M, K) = dy.T @ x. Activations are read and written in place where the pass can
// (docs/ops.md, "Plain activations"); plain_dy = false keeps the backward by data's dy blocked
// (for a caller that shares one blocked dy with the backward by weights).
std::shared_ptr<PreparedOp> make_gemm_op(ops::GemmPassKind pass, const ops::GemmDesc& desc, const OpConfig& config,
                                         int threads, bool plain_dy = true);
// The knobs a GEMM pass's explicit configuration takes (the tuner's names).
std::vector<std::string> gemm_knob_names(ops::GemmPassKind pass);

// NCHW activations, KCRS filters. Forward: x (N, C, H, W), w (K, C, R, S), b (K,) with desc.bias
// -> y (N, K, P, Q). Backward by data: dy (N, K, P, Q), w -> dx (N, C, H, W). By weights:
// dy, x -> dw (K, C, R, S).
std::shared_ptr<PreparedOp> make_conv_op(ops::ConvPassKind pass, const ops::ConvDesc& desc, const OpConfig& config,
                                         int threads);
std::vector<std::string> conv_knob_names(ops::ConvPassKind pass, const ops::ConvDesc& desc);

}  // namespace weft::python
