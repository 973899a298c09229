// The convolution samples' three passes (samples/conv/) as tuner workloads: forward (conv_fwd.hpp),
// backward by data (conv_bwd.hpp) and backward by weights (conv_upd.hpp). All three run over
// PARLOOPER's seven loops, a = images, b = C blocks, c = K blocks, d = rows, e = columns, f = R,
// g = S; they differ in the reduction (fwd: b, f, g; bwd: c, f, g; upd: a, d, e, which may run
// in parallel: the update keeps partial filters per thread) and in their knobs:
//
//   pass  knobs                                                   blocked loops (config field)
//   fwd   bc bk h_in_gemm w_block c_block pack_input (strided 1x1)  c (k_block), d (h_block)
//   bwd   bc bk h_in_gemm w_block k_block                          b (c_block), d (h_block)
//   upd   bc bk h_in_gemm                                          none
//
//   const ops::ConvShape shape{.N = 1, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1};
//   ConvWorkload fwd(shape, ConvPassKind::fwd);
//   TuningResult r = tune(fwd, {.threads = 1, .budget_seconds = 60});
//   ops::ConvFwdConfig cfg = to_conv_fwd_config(r.best.config, shape);
//
// Inputs are random (fixed seeds), kept plain (NCHW / KCRS); each candidate converts them to the
// blocked layouts its pass wants. Every candidate is checked once, on outputs poisoned with NaN,
// against the double-precision reference (conv_reference.hpp) over all of the output. The
// reference is computed once per workload (for a ResNet-50 layer at N = 1, ~0.1-0.5 s), so each
// check costs one run, a conversion and a comparison.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_fwd.hpp>
#include <weft/ops/conv_shape.hpp>
#include <weft/ops/conv_upd.hpp>
#include <weft/tuner/workload.hpp>

namespace weft::ops {

enum class ConvPassKind { fwd, bwd, upd };
std::string_view to_string(ConvPassKind pass);  // "fwd", "bwd", "upd"
// The pass named "fwd", "bwd" or "upd"; throws weft::Error for any other name.
ConvPassKind parse_conv_pass(std::string_view name);

// Kind "conv_fwd", "conv_bwd" or "conv_upd", shape N H W C K R S stride_h stride_w pad_h pad_w.
// dtype: "fp32" or "bf16" in the key (the samples' ConvLoops::dtype).
tuner::WorkloadKey conv_key(ConvPassKind pass, const ConvShape& shape, int threads,
                     jit::DataType dtype = jit::DataType::f32);

struct ConvSearchOptions {
  // Channel blocks; values of at least C (K) collapse into one block of C (K) channels.
  std::vector<long> bc{32, 64}, bk{32, 64};
  // Empty: every loop once, and once each with one of the pass's blockable loops (above) blocked.
  std::vector<tuner::LoopSpecification> specs;
  // f32, or bf16 (bf16 tensors, VNNI-2 filters; odd channel blocks become even).
  jit::DataType dtype = jit::DataType::f32;
  // The result is the best with one bc and one bk (tile_bound.hpp): its key carries them.
  bool tile_bound = false;
};

// The samples' configurations of a tuned configuration for `shape`: missing knobs keep the samples'
// defaults. Throws weft::Error for block lists a sample cannot take (a loop other than those above
// blocked, or blocked more than once).
ConvFwdConfig to_conv_fwd_config(const tuner::TunedConfig& config, const ConvShape& shape);
ConvBwdConfig to_conv_bwd_config(const tuner::TunedConfig& config, const ConvShape& shape);
ConvUpdConfig to_conv_upd_config(const tuner::TunedConfig& config, const ConvShape& shape);

// What the samples run without tuning: "Abcdefg", bc = min(32, C), bk = min(32, K), every other knob
// at the sample's default.
// In bf16 an odd bc (and backward by data an odd bk: the channels, when fewer) takes one zero
// channel more: the filter's VNNI-2 pairs.
tuner::TunedConfig default_conv_config(ConvPassKind pass, const ConvShape& shape,
                                jit::DataType dtype = jit::DataType::f32);

// What the samples run untuned on this machine for a team of `threads`: the machine model's choice
// (conv_model.hpp) where the sample takes it, otherwise default_conv_config. The tuner's baseline and `auto` without a record.
tuner::TunedConfig untuned_conv_config(ConvPassKind pass, const ConvShape& shape, int threads,
                                       jit::DataType dtype = jit::DataType::f32);

class ConvWorkload : public tuner::Workload {
 public:
  // Throws weft::Error for a bad shape or empty / non-positive knob lists, weft::MemoryError when
  // the tensors do not fit this machine.
  ConvWorkload(ConvShape shape, ConvPassKind pass, ConvSearchOptions options = {});
  ~ConvWorkload() override;

  // conv_key; with options.tile_bound, bound to the search's one bc and bk.
  tuner::WorkloadKey key(int threads) const override;
  double flops() const override { return shape_.flops(); }
  std::vector<tuner::Knobs> knob_choices() const override { return knob_choices_; }
  std::vector<tuner::LogicalLoop> loops(const tuner::Knobs& knobs) const override;
  std::vector<tuner::LoopSpecification> specs(const tuner::Knobs& knobs) const override;
  tuner::CostInputs cost_inputs(const tuner::Knobs& knobs) const override;
  bool supports_parallel_reduction() const override { return pass_ == ConvPassKind::upd; }
  // untuned_conv_config; with options.tile_bound, with the bound tiles.
  tuner::TunedConfig default_config(int threads) const override;
  std::unique_ptr<tuner::Runner> prepare(const tuner::TunedConfig& config) const override;

  const ConvShape& shape() const { return shape_; }
  ConvPassKind pass() const { return pass_; }
  // "conv fwd N=1 H=56 ... pad 1 1", for messages.
  std::string describe() const;

  struct Data;  // the plain inputs and the reference

 private:
  ConvShape shape_;
  ConvPassKind pass_;
  ConvSearchOptions options_;
  std::vector<tuner::Knobs> knob_choices_;
  std::unique_ptr<Data> data_;
};

}  // namespace weft::ops
