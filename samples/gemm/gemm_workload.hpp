// The samples' forward GEMM (samples/gemm/gemm_fwd.hpp) as a tuner workload: knobs bm, bn, bk
// (tile sizes) and kbf (batch-reduce chunks of the K loop), loops a = K blocks (a reduction,
// stepping by a batch-reduce chunk), b = M blocks, c = N blocks.
//
//   GemmWorkload gemm({.M = 1024, .N = 1024, .K = 1024});
//   TuningResult r = tune(gemm, {.threads = 2, .budget_seconds = 30});
//   samples::GemmFwdConfig cfg = to_gemm_config(r.best.config, {.M = 1024, .N = 1024, .K = 1024});
//
// Inputs are random (fixed seeds) and kept in every blocked layout the knobs need; every candidate
// is checked once against a double-precision reference (all of C for up to 2^27 multiply-adds,
// else 2048 sampled entries including the corners and the last block's tail). A shape whose
// matrices this machine cannot hold throws weft::MemoryError (weft/jit/error.hpp) saying how much
// memory it needs, before anything is allocated.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <weft/tuner/workload.hpp>

#include "gemm_fwd.hpp"

namespace weft::tuner {

struct GemmShape {
  std::int64_t M = 0, N = 0, K = 0;
};

struct GemmSearchOptions {
  std::vector<long> bm{32, 64}, bn{32, 48, 64}, bk{32, 64};
  // Chunks of the K loop; duplicates (same chunk length) are dropped.
  std::vector<long> kbf{1, 4, 8, 16};
  // Empty: a_0_K with b and c blocked 0 or 1 extra times (four specs), as PARLOOPER's GEMM tuner.
  std::vector<LoopSpecification> specs;
};

// The GemmFwdConfig of a tuned configuration for `shape` (knobs missing from `config` keep the
// GemmFwdConfig defaults; empty block lists mean PARLOOPER's default blocking).
samples::GemmFwdConfig to_gemm_config(const TunedConfig& config, const GemmShape& shape);

// The workload key of a forward GEMM: kind "gemm_fwd", shape M, N, K.
WorkloadKey gemm_key(const GemmShape& shape, int threads);

class GemmWorkload : public Workload {
 public:
  explicit GemmWorkload(GemmShape shape, GemmSearchOptions options = {});
  ~GemmWorkload() override;

  WorkloadKey key(int threads) const override { return gemm_key(shape_, threads); }
  double flops() const override;
  std::vector<Knobs> knob_choices() const override;
  std::vector<LogicalLoop> loops(const Knobs& knobs) const override;
  std::vector<LoopSpecification> specs(const Knobs& knobs) const override;
  CostInputs cost_inputs(const Knobs& knobs) const override;
  TunedConfig default_config(int threads) const override;
  std::unique_ptr<Runner> prepare(const TunedConfig& config) const override;

  const GemmShape& shape() const { return shape_; }
  // "GEMM M=.. N=.. K=..", for messages.
  std::string describe() const;

  struct Data;  // inputs in plain and blocked layouts, outputs, the reference

 private:
  GemmShape shape_;
  GemmSearchOptions options_;
  std::unique_ptr<Data> data_;
};

}  // namespace weft::tuner
