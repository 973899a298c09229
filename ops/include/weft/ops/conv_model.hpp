// The convolutions' untuned configurations, every pass, chosen from a model of the machine instead of from PARLOOPER's list (whose settings were tuned for 56 Sapphire Rapids
// threads in bf16): what `auto` runs when the tuning database has no record for the shape and team.
//
//   const ConvMachine machine = ConvMachine::current();        // this CPU's caches
//   ConvFwdConfig problem;
//   problem.shape = {.N = 1, .H = 7, .W = 7, .C = 2048, .K = 512};
//   ConvFwdConfig c = model_conv_fwd_config(problem, /*threads=*/1, machine);
//   // AVX-512 code: c.loop_string "Abcdefg", bc 64, bk 64, h_in_gemm 7, c_block 8 on a 512 KiB L2
//   // (2 on a 2 MiB one); AVX2 code: bk 32, one register row panel of ymm
//
// Both passes are one batch-reduce GEMM per body call (forward: over C blocks and taps into a K
// block; backward by data: over K blocks and taps into a C block), so one set of rules serves
// both, mirrored. Every rule looks at the shape, the team and the machine only (never at a layer's
// name), so it covers shapes outside ResNet-50 alike; each says in conv_model.cpp which
// measurement it comes from. The results have not been checked against the samples' refusals:
// untuned_conv_config (conv_workload.hpp) does that (ConvFwd::check, ConvBwd::check) and falls back
// to the samples' default where one is refused. The update pass (backward by weights) reduces over
// images and pixels instead: its model chooses the rows per GEMM and what a team runs in parallel.
#pragma once

#include <cstddef>
#include <cstdint>

#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_fwd.hpp>
#include <weft/ops/conv_upd.hpp>

namespace weft::ops {

// What the model needs to know of the machine.
struct ConvMachine {
  std::size_t l2_bytes = 512 << 10;  // per core
  // FP32 rows of the BRGEMM's register row panel (four vectors: 32 with AVX2's ymm, 64 with
  // AVX-512's zmm): the channel block along the GEMM's rows (forward: K, backward by data: C).
  std::int64_t gemm_rows = 64;
  // l2_bytes from jit::cpu_features(), the default above (a Zen 3's) where the CPU does not report
  // it; gemm_rows from the ISA weft generates code for (jit::selected_isa(); WEFT_ISA may choose a
  // narrower one).
  static ConvMachine current();
};

// `problem` gives the shape, data type, padding mode, rims and epilogue (kept); its loop string,
// bc, bk, h_in_gemm, w_block, c_block, k_block, h_block and pack_input are the model's.
ConvFwdConfig model_conv_fwd_config(const ConvFwdConfig& problem, int threads, const ConvMachine& machine);

// `problem` gives the shape and data type (kept); its loop string, bc, bk, h_in_gemm, w_block,
// c_block, k_block and h_block are the model's.
ConvBwdConfig model_conv_bwd_config(const ConvBwdConfig& problem, int threads, const ConvMachine& machine);

// `problem` gives the shape, data type and use_mb_par_f32 (kept); its loop string, bc, bk and
// h_in_gemm are the model's: the samples' default blocks (32, or all channels where fewer), output
// rows per GEMM within a quarter of the L2, and for a team the images in parallel (a partial filter
// per thread, added up at the end) where an image is large, else the C and K blocks (no partial
// filters).
ConvUpdConfig model_conv_upd_config(const ConvUpdConfig& problem, int threads, const ConvMachine& machine);

}  // namespace weft::ops
