// A contraction of the tensor front end as a tuner workload. The optimizer passes prepare the
// operation (fusion, splitting with the knob `split` as target size, primitive identification);
// its seq/shared loop dimensions are then the logical loops the tuner orders, blocks and
// parallelizes, handed to lowering as a LoweringOverride. The default configuration is the
// optimizer's own choice (split 64, its loop order and shared run).
//
//   ContractionProblem p = parse_contraction_problem("m,n,k,m,n,k", "", "64,25,64,25,64,25",
//                                                    "brgemm", "zero", "none");
//   ContractionWorkload w(p, /*threads=*/2);
//   TuningResult r = tune(w, {.threads = 2, .budget_seconds = 20});
//   TuningDatabase().append(r.record());
//
//   // Later, anywhere: a TensorOperation set up with the tuned loops when the database has them.
//   einsum::backend::TensorOperation op;
//   setup_tuned(op, p.op, 2);
#pragma once

#include <memory>
#include <string>

#include <weft/tensor/contraction.hpp>
#include <weft/tensor/tensor_operation.hpp>

#include "weft/tuner/tuning_database.hpp"
#include "weft/tuner/workload.hpp"

namespace weft::tuner {

struct ContractionProblem {
  tensor::Contraction op;  // every dimension seq: the optimizer chooses the primitives
};

// Dense tensors from dimension types and sizes (outermost first): in0 holds the c, k and m
// dimensions, in1 the c, n and k dimensions, out the c, n and m dimensions, each row-major in that
// grouping and in the listed order (so m is unit-stride in in0 and out, k in in1: the layout of
// the seed documents' examples). `einsum` is not supported yet (throws). Throws weft::Error naming
// the option (--dims, --sizes, --prim, --first, --last) that is wrong, weft::MemoryError when a
// tensor would have more than 2^63 elements.
ContractionProblem parse_contraction_problem(const std::string& dims, const std::string& einsum,
                                             const std::string& sizes, const std::string& prim,
                                             const std::string& first, const std::string& last);

// kind "contraction/<prims>/<dim types>/<strides>", shape = the sizes ("m0", "n1", ...).
WorkloadKey contraction_key(const tensor::Contraction& op, int threads);

// Throws weft::Error for a problem tensor::validate rejects or one that is not fp32 (the workload's
// data and checks are float), and weft::MemoryError (weft/jit/error.hpp) when its tensors do not
// fit this machine, before allocating them.
class ContractionWorkload : public Workload {
 public:
  ContractionWorkload(ContractionProblem problem, int threads, std::vector<long> split_targets = {32, 64, 128});
  ~ContractionWorkload() override;

  WorkloadKey key(int threads) const override { return contraction_key(problem_.op, threads); }
  double flops() const override { return problem_.op.flops(); }
  std::vector<Knobs> knob_choices() const override;
  std::vector<LogicalLoop> loops(const Knobs& knobs) const override;
  std::vector<LoopSpecification> specs(const Knobs& knobs) const override;
  CostInputs cost_inputs(const Knobs& knobs) const override;
  TunedConfig default_config(int threads) const override;
  std::unique_ptr<Runner> prepare(const TunedConfig& config) const override;

  // The operation after the optimizer passes for a knob setting (what lowering receives).
  tensor::Contraction optimized(const Knobs& knobs) const;

  struct Data;

 private:
  ContractionProblem problem_;
  int threads_;
  std::vector<long> split_targets_;
  std::unique_ptr<Data> data_;
};

// TensorOperation options for `op` (all dims seq) on `threads` threads: the optimizer, plus the
// tuned split target and loops when the database has an exact record for this machine.
einsum::backend::TensorOperation::Options tuned_operation_options(
    const tensor::Contraction& op, int threads, const TuningDatabase& database = TuningDatabase(),
    bool* found = nullptr);

// setup(op, tuned_operation_options(...)): what a user calls to run a contraction with the tuned
// loop string when there is one, else with the optimizer's own choice.
tensor::error_t setup_tuned(einsum::backend::TensorOperation& operation, const tensor::Contraction& op,
                            int threads, const TuningDatabase& database = TuningDatabase());

}  // namespace weft::tuner
