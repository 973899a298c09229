// The GEMM operators' passes (ops/) as tuner workloads: the forward GEMM and its MLP
// (gemm_fwd.hpp), backward by data (gemm_bwd.hpp) and backward by weights (gemm_upd.hpp). All
// three compute out = op(left) x op(right) over loops a = K blocks, b = M blocks, c = N blocks;
// they differ in which loop is the reduction (fwd: a, bwd: b, upd: c), whose batch-reduce chunks
// the pass's knob sets (kbf, mbf, nbf). Knobs: bm, bn, bk (tiles), the chunks, and for bwd and upd
// private_trans (transposes per thread on first use). The update pass combines partial results,
// so its reduction loop c may be parallel: it then gets one dW copy per thread along c.
//
//   const GemmShape shape{.M = 1024, .N = 1024, .K = 1024};
//   GemmWorkload bwd(shape, {}, GemmPassKind::bwd);
//   TuningResult r = tune(bwd, {.threads = 2, .budget_seconds = 30});
//   auto cfg = to_gemm_pass_config<ops::GemmBwdConfig>(r.best.config, shape, 2);
//
// Inputs are random (fixed seeds), kept plain and in every blocked layout the knobs need; every
// candidate is checked once against a double-precision reference (gemm_reference.hpp; all of the
// output for up to 2^27 multiply-adds, else 16 columns: the first, the last and 14 random ones,
// every row). A shape whose matrices this machine cannot hold throws weft::MemoryError
// (weft/jit/error.hpp) saying how much memory it needs, before anything is allocated.
//
// In bf16 (GemmSearchOptions::dtype; weft-tune gemm --dtype bf16) the passes run as the samples
// do with USE_BF16=1: inputs rounded to bf16, blocked copies in bf16 (VNNI-2 weight tiles), fp32
// accumulation, bf16 outputs. The tiles along which a pass pairs elements for VNNI-2 are made even
// (fwd: bk; bwd: bm, bk; upd: bn, bk; an MLP's bm, which is its bk), and the check is the samples':
// every checked element within its bf16 bound for the way the pass summed it (the pass's
// bf16_sum(), verification.hpp), an MLP layer by layer from each layer's own bf16 input.
//
// In f64 (weft-tune gemm --dtype f64) the float inputs are held as doubles (exactly) in the f32
// layouts, and the output, read back as float, must be within two float roundings (2^-22 relative
// L2 per layer) of the double reference: tighter than any f32 computation of the same sums.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <weft/jit/data_type.hpp>
#include <weft/ops/gemm_bwd.hpp>
#include <weft/ops/gemm_fwd.hpp>
#include <weft/ops/gemm_upd.hpp>
#include <weft/tuner/workload.hpp>

namespace weft::ops {

enum class GemmPassKind { fwd, bwd, upd };
std::string_view to_string(GemmPassKind pass);  // "fwd", "bwd", "upd"
// The pass named "fwd", "bwd" or "upd"; throws weft::Error for any other name.
GemmPassKind parse_gemm_pass(std::string_view name);
// The knob that splits the pass's reduction into batch-reduce chunks: "kbf", "mbf" or "nbf".
const char* chunks_knob(GemmPassKind pass);

struct GemmShape {
  std::int64_t M = 0, N = 0, K = 0;
  int layers = 1;  // > 1: the forward pass is an MLP of that many layers (M == K, bm == bk)
};

struct GemmSearchOptions {
  std::vector<long> bm{32, 64}, bn{32, 48, 64}, bk{32, 64};
  // Chunks of the pass's reduction loop; values giving the same chunk length are dropped.
  std::vector<long> chunks{1, 4, 8, 16};
  std::vector<long> private_trans{0};  // bwd and upd: 0 (up front) and/or 1 (per thread)
  // Empty: the reduction loop unblocked, the other two blocked 0 or 1 extra times (four specs), as
  // PARLOOPER's GEMM tuner.
  std::vector<tuner::LoopSpecification> specs;
  // f32, bf16 (bf16 operands, fp32 accumulation; odd tiles along a VNNI-2 pairing become even), or
  // f64 (the float inputs held as doubles, f64 throughout).
  jit::DataType dtype = jit::DataType::f32;
  // The result is the best with one bm and one bk, the weight's tiles (tile_bound.hpp): its key
  // carries them.
  bool tile_bound = false;
};

// The default search in `dtype`: GemmSearchOptions{} with that dtype; bf16 adds bn = 128, the tile
// of the samples' untuned bf16 heuristic (64 x 128 x 64, gemm_defaults.hpp), so that tuning
// measures it too.
GemmSearchOptions default_gemm_search(jit::DataType dtype);

// The workload key: kind "gemm_fwd", "gemm_bwd", "gemm_upd", shape M, N, K; a forward MLP is
// kind "gemm_mlp" with shape M, N, K, layers. dtype: "fp32", "bf16" or "fp64" in the key (the
// samples' GemmLoops::dtype).
tuner::WorkloadKey gemm_key(GemmPassKind pass, const GemmShape& shape, int threads, jit::DataType dtype = jit::DataType::f32);

// The sample's configuration (ops::GemmFwdConfig, GemmBwdConfig or GemmUpdConfig) of a tuned
// configuration for `shape` on `threads` threads: knobs missing from `config` keep the sample's
// defaults, empty block lists mean PARLOOPER's default blocking, a forward config gets
// shape.layers layers, and an update whose loop c is parallel gets the partial filters it needs.
template <class Config>
Config to_gemm_pass_config(const tuner::TunedConfig& config, const GemmShape& shape, int threads);

// The dW copies an update on `threads` threads needs for `loop_string`: the parallel degree of
// its reduction loop c (the team for a work-shared c, the grid ways of a split c), 0 when c is
// sequential or the string does not parse (the sample reports that).
std::int64_t partial_filters_for(const std::string& loop_string, int threads);

class GemmWorkload : public tuner::Workload {
 public:
  explicit GemmWorkload(GemmShape shape, GemmSearchOptions options = {}, GemmPassKind pass = GemmPassKind::fwd);
  ~GemmWorkload() override;

  // gemm_key; with options.tile_bound, bound to the search's one bm and bk.
  tuner::WorkloadKey key(int threads) const override;
  double flops() const override;
  std::vector<tuner::Knobs> knob_choices() const override;
  std::vector<tuner::LogicalLoop> loops(const tuner::Knobs& knobs) const override;
  std::vector<tuner::LoopSpecification> specs(const tuner::Knobs& knobs) const override;
  tuner::CostInputs cost_inputs(const tuner::Knobs& knobs) const override;
  bool supports_parallel_reduction() const override { return pass_ == GemmPassKind::upd; }
  tuner::TunedConfig default_config(int threads) const override;
  std::unique_ptr<tuner::Runner> prepare(const tuner::TunedConfig& config) const override;

  const GemmShape& shape() const { return shape_; }
  GemmPassKind pass() const { return pass_; }
  jit::DataType dtype() const { return options_.dtype; }
  // "GEMM M=.. N=.. K=..", "GEMM bwd M=..", "MLP of 4 layers M=..", " in bf16" appended, for messages.
  std::string describe() const;

  // Sees the output columns a check compares with the reference (column-major, every row; each
  // layer's of a bf16 MLP, else the last layer's), as the candidate's run left them, before they
  // are compared: a test overrides it to make a candidate compute something wrong. Does nothing.
  virtual void inspect_checked_output(std::span<float> columns, int layer) const;

  struct Data;  // inputs in plain and blocked layouts, outputs, the reference

 private:
  template <class Pass, class Config>
  std::unique_ptr<tuner::Runner> prepare_pass(const tuner::TunedConfig& config, int threads) const;

  GemmShape shape_;
  GemmSearchOptions options_;
  GemmPassKind pass_;
  std::unique_ptr<Data> data_;
};

}  // namespace weft::ops
