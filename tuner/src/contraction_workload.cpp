#include "weft/tuner/contraction_workload.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>

#include <weft/tensor/lowering.hpp>
#include <weft/tensor/passes.hpp>
#include <weft/tensor/reference.hpp>

#include "weft/jit/error.hpp"

namespace weft::tuner {

using tensor::Contraction;
using tensor::Dim;
using tensor::dim_t;
using tensor::exec_t;
using tensor::prim_t;

namespace {

constexpr double kFullReferenceLimit = double(1 << 28);  // flops

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) out.push_back(item);
  return out;
}

prim_t parse_prim(const std::string& name, const char* option) {
  static const std::pair<const char*, prim_t> names[] = {
      {"none", prim_t::none}, {"zero", prim_t::zero}, {"relu", prim_t::relu},
      {"gemm", prim_t::gemm}, {"brgemm", prim_t::brgemm}, {"copy", prim_t::copy}};
  std::string known;
  for (const auto& [n, p] : names) {
    if (name == n) return p;
    known += std::string(known.empty() ? "" : ", ") + n;
  }
  throw Error(std::string("contraction: ") + option + " '" + name + "' is no primitive (" + known + ")");
}

// Elements a tensor spans: 1 + sum of (size - 1) * stride; sets `overflow` when that exceeds int64.
std::int64_t span_of(const Contraction& op, std::int64_t Dim::*stride, bool& overflow) {
  std::int64_t n = 1;
  for (const Dim& d : op.dims) {
    std::int64_t term = 0;
    overflow = overflow || __builtin_mul_overflow(d.size - 1, d.*stride, &term) || __builtin_add_overflow(n, term, &n);
  }
  return n;
}

std::string tensor_shape(const Contraction& op, std::int64_t Dim::*stride) {
  std::string text;
  for (std::size_t i = 0; i < op.dims.size(); ++i)
    if (op.dims[i].*stride != 0)
      text += (text.empty() ? "" : " x ") + tensor::to_string(op.dims[i].type) + std::to_string(i) + "=" +
              std::to_string(op.dims[i].size);
  return text;
}

tensor::Contraction optimize_with(const Contraction& op, int threads, long split) {
  Contraction c = op;
  tensor::OptimizeOptions o;
  o.threads = threads;
  o.split.target = split;
  tensor::optimize(c, o);
  return c;
}

}  // namespace

struct ContractionWorkload::Data {
  std::mutex mutex;
  std::vector<float> in0, in1, out;
  std::vector<float> reference;
  bool reference_ready = false;
};

ContractionProblem parse_contraction_problem(const std::string& dims, const std::string& einsum,
                                             const std::string& sizes, const std::string& prim,
                                             const std::string& first, const std::string& last) {
  if (!einsum.empty())
    throw Error("contraction: --einsum is not supported yet; give --dims and --sizes");
  if (dims.empty() || sizes.empty()) throw Error("contraction: needs --dims and --sizes, e.g. --dims m,n,k --sizes 64,64,64");
  auto types = split_list(dims);
  auto size_texts = split_list(sizes);
  // getline drops a trailing empty entry: "m,n," has three, the last one empty.
  if (dims.back() == ',') types.emplace_back();
  if (sizes.back() == ',') size_texts.emplace_back();
  if (types.size() != size_texts.size())
    throw Error("contraction: --dims and --sizes need the same number of entries (got " +
                std::to_string(types.size()) + " and " + std::to_string(size_texts.size()) + ")");
  Contraction op;
  op.first_touch = parse_prim(first, "--first");
  op.main = parse_prim(prim, "--prim");
  op.last_touch = parse_prim(last, "--last");
  for (std::size_t i = 0; i < types.size(); ++i) {
    Dim d;
    const std::string& t = types[i];
    if (t == "c") d.type = dim_t::c;
    else if (t == "m") d.type = dim_t::m;
    else if (t == "n") d.type = dim_t::n;
    else if (t == "k") d.type = dim_t::k;
    else throw Error("contraction: --dims entry " + std::to_string(i) + " is '" + t + "', not a dimension type (c, m, n, k)");
    d.exec = exec_t::seq;
    // The loop bound limit of tensor::validate; std::stol would take "12abc" as 12.
    constexpr std::int64_t max_size = (std::int64_t{1} << 31) - 1;
    const std::string& text = size_texts[i];
    std::size_t used = 0;
    try {
      d.size = text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) ? 0 : std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || d.size < 1 || d.size > max_size)
      throw Error("contraction: --sizes entry " + std::to_string(i) + " is '" + text + "', not an integer in 1.." +
                  std::to_string(max_size));
    op.dims.push_back(d);
  }
  // Strides: innermost group last, listed order within a group.
  auto assign = [&](std::int64_t Dim::*stride, std::initializer_list<dim_t> groups, const char* tensor) {
    std::int64_t s = 1;
    bool overflow = false;
    std::vector<dim_t> order(groups);
    for (auto g = order.rbegin(); g != order.rend(); ++g)
      for (std::size_t i = op.dims.size(); i-- > 0;)
        if (op.dims[i].type == *g) {
          op.dims[i].*stride = s;
          overflow = overflow || __builtin_mul_overflow(s, op.dims[i].size, &s);
        }
    if (overflow)
      throw MemoryError("contraction: tensor " + std::string(tensor) + " (" + tensor_shape(op, stride) + ")",
                        kBytesOverflow, MemoryError::Reason::overflow);
  };
  assign(&Dim::stride_in0, {dim_t::c, dim_t::k, dim_t::m}, "in0");
  assign(&Dim::stride_in1, {dim_t::c, dim_t::n, dim_t::k}, "in1");
  assign(&Dim::stride_out, {dim_t::c, dim_t::n, dim_t::m}, "out");
  return {op};
}

WorkloadKey contraction_key(const Contraction& op, int threads) {
  std::string kind = "contraction/" + tensor::to_string(op.first_touch) + "," + tensor::to_string(op.main) +
                     "," + tensor::to_string(op.last_touch) + "/";
  for (const Dim& d : op.dims) kind += tensor::to_string(d.type);
  kind += "/";
  for (const Dim& d : op.dims)
    kind += std::to_string(d.stride_in0) + ":" + std::to_string(d.stride_in1) + ":" + std::to_string(d.stride_out) + ";";
  WorkloadKey key{.kind = kind, .shape = {}, .dtype = tensor::to_string(op.dtype), .threads = threads};
  for (std::size_t i = 0; i < op.dims.size(); ++i)
    key.shape.emplace_back(tensor::to_string(op.dims[i].type) + std::to_string(i), static_cast<long>(op.dims[i].size));
  return key;
}

ContractionWorkload::ContractionWorkload(ContractionProblem problem, int threads, std::vector<long> split_targets)
    : problem_(std::move(problem)), threads_(threads), split_targets_(std::move(split_targets)),
      data_(std::make_unique<Data>()) {
  tensor::validate(problem_.op, {.check_primitives = false});
  // The buffers, the reference and the error check below are float: an fp64 operation would read
  // past them.
  if (problem_.op.dtype != tensor::dtype_t::fp32)
    throw Error("ContractionWorkload: the problem is " + tensor::to_string(problem_.op.dtype) +
                "; the contraction workload tunes fp32 operations only");
  if (split_targets_.empty()) throw Error("ContractionWorkload: needs at least one split target");
  const Contraction& op = problem_.op;
  // in0, in1, out and the reference output; refused before any of it is allocated.
  bool overflow = false;
  const std::int64_t in0 = span_of(op, &Dim::stride_in0, overflow), in1 = span_of(op, &Dim::stride_in1, overflow),
                     out = span_of(op, &Dim::stride_out, overflow);
  const std::string what = "contraction workload (in0 " + tensor_shape(op, &Dim::stride_in0) + ", in1 " +
                           tensor_shape(op, &Dim::stride_in1) + ", out " + tensor_shape(op, &Dim::stride_out) +
                           " and its reference)";
  const std::uint64_t out_bytes = bytes_needed({out}, sizeof(float));
  const std::uint64_t bytes = overflow ? kBytesOverflow
                                       : add_bytes(add_bytes(bytes_needed({in0}, sizeof(float)), bytes_needed({in1}, sizeof(float))),
                                                   add_bytes(out_bytes, out_bytes));
  require_memory(what, bytes);
  allocating(what, bytes, [&] {
    data_->in0.resize(static_cast<std::size_t>(in0));
    data_->in1.resize(static_cast<std::size_t>(in1));
    data_->out.assign(static_cast<std::size_t>(out), 0.0f);
    data_->reference.reserve(static_cast<std::size_t>(out));
  });
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : data_->in0) v = uniform(rng);
  for (float& v : data_->in1) v = uniform(rng);
}

ContractionWorkload::~ContractionWorkload() = default;

Contraction ContractionWorkload::optimized(const Knobs& knobs) const {
  return optimize_with(problem_.op, threads_, TunedConfig{knobs, "", {}}.knob("split", 64));
}

std::vector<Knobs> ContractionWorkload::knob_choices() const {
  std::vector<Knobs> choices;
  std::vector<std::string> seen;  // split targets that give the same operation are one choice
  for (long target : split_targets_) {
    const Knobs k{{"split", target}};
    const std::string d = optimized(k).describe();
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
    seen.push_back(d);
    choices.push_back(k);
  }
  return choices;
}

std::vector<LogicalLoop> ContractionWorkload::loops(const Knobs& knobs) const {
  const Contraction op = optimized(knobs);
  const tensor::LoopNestPlan plan = tensor::plan_loops(op);
  std::vector<LogicalLoop> out;
  for (std::size_t i = 0; i < plan.specs.size(); ++i) {
    const bool k = i < plan.loop_dims.size() && op.dims[plan.loop_dims[i]].type == dim_t::k;
    out.push_back({plan.specs[i].start, plan.specs[i].end, plan.specs[i].step, k});
  }
  return out;
}

std::vector<LoopSpecification> ContractionWorkload::specs(const Knobs& knobs) const {
  const Contraction op = optimized(knobs);
  const tensor::LoopNestPlan plan = tensor::plan_loops(op);
  LoopSpecification spec;
  for (std::size_t i = 0; i < plan.specs.size(); ++i) {
    char kind = 'C';
    if (i < plan.loop_dims.size()) {
      const dim_t t = op.dims[plan.loop_dims[i]].type;
      kind = t == dim_t::k ? 'K' : t == dim_t::m ? 'M' : t == dim_t::n ? 'N' : 'C';
    }
    spec.loops.push_back({static_cast<char>('a' + i), 0, kind});
  }
  // Also one extra blocking level on every non-reduction loop of more than 4 iterations.
  LoopSpecification blocked = spec;
  bool any = false;
  for (auto& l : blocked.loops)
    if (!l.reduction() && plan.specs[static_cast<std::size_t>(l.index())].end > 4) l.extra_levels = 1, any = true;
  if (any && blocked.num_loops() <= 4) return {spec, blocked};
  return {spec};
}

CostInputs ContractionWorkload::cost_inputs(const Knobs& knobs) const {
  const Contraction op = optimized(knobs);
  const tensor::LoopNestPlan plan = tensor::plan_loops(op);
  CostInputs in;
  in.total_flops = op.flops();
  auto tensor_use = [&](const char* name, std::int64_t Dim::*stride, bool written) {
    TensorUse t{name, {}, 4, written};
    for (std::size_t d = 0; d < op.dims.size(); ++d) {
      if (op.dims[d].*stride == 0) continue;
      const auto it = std::find(plan.loop_dims.begin(), plan.loop_dims.end(), d);
      if (it != plan.loop_dims.end()) t.loops.push_back(static_cast<int>(it - plan.loop_dims.begin()));
      else t.tile_bytes *= static_cast<double>(op.dims[d].size);  // a prim dimension
    }
    return t;
  };
  in.tensors = {tensor_use("in0", &Dim::stride_in0, false), tensor_use("in1", &Dim::stride_in1, false),
                tensor_use("out", &Dim::stride_out, true)};
  in.body_efficiency = 0.9;
  in.call_overhead_seconds = 30e-9;
  return in;
}

TunedConfig ContractionWorkload::default_config(int) const {
  const Knobs knobs{{"split", 64}};
  return {knobs, tensor::plan_loops(optimized(knobs)).loop_string, {}};
}

namespace {

class ContractionRunner : public Runner {
 public:
  ContractionRunner(const Contraction& optimized, const Contraction& original, const TunedConfig& config,
                    ContractionWorkload::Data& data)
      : original_(original), data_(data) {
    tensor::LoweringOverride loops{config.loop_string, config.blocks};
    lowered_ = std::make_unique<tensor::LoweredOperation>(optimized, &loops);
    // The default's lowering (no override) is the reference for large problems.
    if (!data.reference_ready && original.flops() > kFullReferenceLimit)
      fallback_ = std::make_unique<tensor::LoweredOperation>(optimized, nullptr);
  }

  void run() override { lowered_->execute(data_.in0.data(), data_.in1.data(), data_.out.data()); }
  bool needs_reset() const override { return original_.first_touch == prim_t::none; }
  void reset() override { std::fill(data_.out.begin(), data_.out.end(), 0.0f); }

  CheckResult check() override {
    std::lock_guard lock(data_.mutex);
    if (!data_.reference_ready) {
      data_.reference.assign(data_.out.size(), 0.0f);
      if (fallback_) fallback_->execute(data_.in0.data(), data_.in1.data(), data_.reference.data());
      else tensor::reference_contraction(original_, data_.in0.data(), data_.in1.data(), data_.reference.data());
      data_.reference_ready = true;
    }
    if (needs_reset()) reset();
    else std::fill(data_.out.begin(), data_.out.end(), std::numeric_limits<float>::quiet_NaN());
    run();
    double err = 0, ref = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < data_.out.size(); ++i) {
      const double d = double(data_.out[i]) - double(data_.reference[i]);
      if (!std::isfinite(data_.out[i])) ++bad;
      err += d * d;
      ref += double(data_.reference[i]) * double(data_.reference[i]);
    }
    const double rel = ref > 0 ? std::sqrt(err / ref) : std::sqrt(err);
    double k = 1;
    for (const Dim& d : original_.dims)
      if (d.type == dim_t::k) k *= static_cast<double>(d.size);
    const double tolerance = 1e-6 * std::sqrt(k) + 1e-6;
    return {bad == 0 && rel <= tolerance,
            "relative L2 error " + std::to_string(rel) + ", " + std::to_string(bad) + " non-finite"};
  }

 private:
  const Contraction& original_;
  ContractionWorkload::Data& data_;
  std::unique_ptr<tensor::LoweredOperation> lowered_, fallback_;
};

}  // namespace

std::unique_ptr<Runner> ContractionWorkload::prepare(const TunedConfig& config) const {
  return std::make_unique<ContractionRunner>(optimized(config.knobs), problem_.op, config, *data_);
}

einsum::backend::TensorOperation::Options tuned_operation_options(const Contraction& op, int threads,
                                                                  const TuningDatabase& database, bool* found) {
  einsum::backend::TensorOperation::Options options;
  options.optimize = true;
  options.optimizer.threads = threads;
  if (found) *found = false;
  TuningDatabase::Lookup hit;
  try {
    hit = database.lookup(contraction_key(op, threads), MachineFingerprint::current());
  } catch (const Error&) {
    return options;  // an unreadable database: the optimizer's own choice
  }
  if (hit.match != TuningDatabase::Match::exact) return options;
  options.optimizer.split.target = hit.record->config.knob("split", options.optimizer.split.target);
  options.loops.loop_string = hit.record->config.loop_string;
  options.loops.block_sizes = hit.record->config.blocks;
  if (found) *found = true;
  return options;
}

tensor::error_t setup_tuned(einsum::backend::TensorOperation& operation, const Contraction& op, int threads,
                            const TuningDatabase& database) {
  auto options = tuned_operation_options(op, threads, database);
  const auto result = operation.setup(op, options);
  if (result == tensor::error_t::success || options.loops.loop_string.empty()) return result;
  options.loops = {};  // a record this build's lowering rejects: fall back to the optimizer
  return operation.setup(op, options);
}

}  // namespace weft::tuner
