// The GEMM operators: C (M x N) = A (M x K) x B (K x N) forward, with the MLP (layers of it, each
// with a fused bias and ReLU), and its two backward passes, in f32, bf16 (fp32 accumulation) or
// f64 (GemmDesc::dtype; the buffers float, bfloat16 or double).
//
//   descriptor      GemmDesc: the shapes, dtype and fusions (what is computed)
//   configuration   GemmFwdConfig / GemmBwdConfig / GemmUpdConfig: the descriptor plus the loop
//                   string, tiles, batch-reduce chunks and block lists (how), from one of
//                     gemm_config<Config>(desc)                 explicit: set loop_string, bm, ... yourself
//                     tuned_gemm_config<Config>(desc, threads)  the tuning database's best (weft-tune gemm)
//                     default_gemm_config<Config>(desc, threads) the machine's untuned default
//   prepare         GemmFwd gemm(config): validates, generates the kernels and the loop nest, once
//   execute         gemm.run(...), many times, on blocked tensors (gemm.layout() says which)
//   conversions     pack / unpack (matrix_packing.hpp), from and to plain row- or column-major
//
//   weft::ops::GemmDesc desc{.M = 512, .N = 256, .K = 1024, .bias = true, .relu = true};
//   const weft::ops::GemmFwd gemm(weft::ops::default_gemm_config<weft::ops::GemmFwdConfig>(desc, 4));
//   const weft::ops::GemmPassLayout l = gemm.layout();  // left = A (weights), right = B, out = C
//   std::vector<float> a(blocked_size(l.left)), b(blocked_size(l.right)), c(blocked_size(l.out));
//   std::vector<float> bias(gemm.m_blocking().padded());   // M values, zero padded
//   pack(a_plain, MatrixOrder::row_major, l.left, a.data());
//   pack(b_plain, MatrixOrder::row_major, l.right, b.data());
//   float* acts[] = {b.data(), c.data()};
//   const float* weights[] = {a.data()};
//   const float* biases[] = {bias.data()};
//   gemm.run(acts, weights, biases);                       // C = relu(A B + bias), blocked
//   unpack(c.data(), l.out, c_plain, MatrixOrder::row_major);
//
// Backward by data (dX = W^T dY) and by weights (dW = dY X^T) go the same way:
//   GemmBwd bwd(default_gemm_config<GemmBwdConfig>(desc, 4));   bwd.run(w, dy, dx);
//   GemmUpd upd(default_gemm_config<GemmUpdConfig>(desc, 4));   upd.run(dy, x, dw);
// with their layout() naming each operand (left, right, out). Everything throws weft::Error
// naming what is wrong: a shape ("M"), a tile ("bk = 31 is odd ..."), the dtype, the loop_string
// (with a caret), a null buffer ("activations[1] is null").
//
// In f64 (.dtype = jit::DataType::f64) every operand is double in the f32 layouts (no VNNI tiles,
// no even-tile rule), accumulated in f64, the fused bias and ReLU included; the backward passes'
// tile transposes and the update's partial filters are f64 too. The untuned forward tiles hold
// four vectors of doubles (gemm_defaults.hpp).
#pragma once

#include <cstdint>

#include <weft/jit/data_type.hpp>
#include <weft/ops/gemm_bwd.hpp>
#include <weft/ops/gemm_fwd.hpp>
#include <weft/ops/gemm_layout.hpp>
#include <weft/ops/gemm_upd.hpp>
#include <weft/ops/matrix_packing.hpp>

namespace weft::ops {

// What a GEMM operator computes. The backward passes read M, N, K and dtype only.
struct GemmDesc {
  std::int64_t M = 0, N = 0, K = 0;
  jit::DataType dtype = jit::DataType::f32;  // f32, bf16 or f64
  int layers = 1;      // forward: > 1 is an MLP, each layer's output the next one's input (M == K)
  bool bias = false;   // forward: + a per-row bias (M values) in each layer's epilogue
  bool relu = false;   // forward: ReLU in each layer's epilogue
};

// The descriptor in a configuration with the plain loops ("aBC", 32 x 32 x 32 tiles, one chunk),
// for the caller to set the loop string and blockings.
template <class Config>
Config gemm_config(const GemmDesc& desc);

// The tuning database's configuration for the descriptor on `threads` threads: its own shape's
// best record, else the nearest tuned shape's, else the machine's default (best_gemm_config.hpp).
template <class Config>
Config tuned_gemm_config(const GemmDesc& desc, int threads);

// The machine's untuned default: the forward's rule table by vector width (gemm_defaults.hpp), the
// backward passes' plain loops.
template <class Config>
Config default_gemm_config(const GemmDesc& desc, int threads);

extern template GemmFwdConfig gemm_config(const GemmDesc&);
extern template GemmBwdConfig gemm_config(const GemmDesc&);
extern template GemmUpdConfig gemm_config(const GemmDesc&);
extern template GemmFwdConfig tuned_gemm_config(const GemmDesc&, int);
extern template GemmBwdConfig tuned_gemm_config(const GemmDesc&, int);
extern template GemmUpdConfig tuned_gemm_config(const GemmDesc&, int);
extern template GemmFwdConfig default_gemm_config(const GemmDesc&, int);
extern template GemmBwdConfig default_gemm_config(const GemmDesc&, int);
extern template GemmUpdConfig default_gemm_config(const GemmDesc&, int);

}  // namespace weft::ops
