// The forward convolution's untuned configuration, chosen from a model of the machine instead of
// from PARLOOPER's list (whose settings were tuned for 56 Sapphire Rapids threads in bf16): what
// `auto` runs when the tuning database has no record for the shape and team.
//
//   const ConvMachine machine = ConvMachine::current();        // this CPU's caches
//   ConvFwdConfig problem;
//   problem.shape = {.N = 1, .H = 7, .W = 7, .C = 2048, .K = 512};
//   ConvFwdConfig c = model_conv_fwd_config(problem, /*threads=*/1, machine);
//   // c.loop_string "Abcdefg", bc 64, bk 64, h_in_gemm 7, c_block 8 on a 512 KiB L2 (2 on a 2 MiB one)
//
// Every rule looks at the shape, the team and the machine only (never at a layer's name), so it
// covers shapes outside ResNet-50 alike; each says in conv_fwd_model.cpp which measurement it comes
// from. The result has not been checked against the sample's refusals: untuned_conv_config
// (conv_workload.hpp) does that (ConvFwd::check) and falls back to the samples' default where it is
// refused.
#pragma once

#include <cstddef>

#include "conv_fwd.hpp"

namespace weft::samples {

// What the model needs to know of the machine.
struct ConvMachine {
  std::size_t l2_bytes = 512 << 10;  // per core
  // From jit::cpu_features(); the default above (a Zen 3's) where the CPU does not report it.
  static ConvMachine current();
};

// `problem` gives the shape, data type, padding mode, rims and epilogue (kept); its loop string,
// bc, bk, h_in_gemm, w_block, c_block, k_block, h_block and pack_input are the model's.
ConvFwdConfig model_conv_fwd_config(const ConvFwdConfig& problem, int threads, const ConvMachine& machine);

}  // namespace weft::samples
