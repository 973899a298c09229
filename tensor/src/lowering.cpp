#include "weft/tensor/lowering.hpp"

#include <cctype>
#include <optional>
#include <sstream>

#include "block_kernels.hpp"
#include "prim_dims.hpp"
#include "weft/tensor/passes.hpp"
#include "weft/parlooper/threaded_loop.hpp"

namespace weft::tensor {

namespace {

constexpr std::size_t kMaxLoops = 26;  // loop letters a..z

bool is_k_loop(const Contraction& op, std::size_t dim) {
  return is_gemm_like(op.main) && op.dims[dim].type == dim_t::k;
}

// A tuner's string may reorder and block the loops, but must not let two threads meet in one
// output block: k loops stay sequential, and the schedule keeps its thread-to-block ownership when
// a k loop encloses the parallel run.
void check_override(const Contraction& op, const LoopNestPlan& plan, const std::string& s) {
  const auto bad = [&](const std::string& why) {
    throw ConfigError(error_t::err_invalid_loop_override, "loop_string \"" + s + "\": " + why);
  };
  const std::size_t clauses = s.find('@');
  const std::string items = s.substr(0, clauses);
  bool k_outside = false;
  for (char ch : items) {
    if (!std::isalpha(static_cast<unsigned char>(ch))) continue;
    const std::size_t loop = static_cast<std::size_t>(std::tolower(ch) - 'a');
    if (loop >= plan.loop_dims.size()) continue;  // the loop_string parser names it
    const bool k = is_k_loop(op, plan.loop_dims[loop]);
    if (std::isupper(static_cast<unsigned char>(ch))) {
      if (k)
        bad(std::string("'") + ch + "' makes " + name_dimension(op, plan.loop_dims[loop]) +
            " parallel; k loops accumulate into one output block and must stay lower case");
      break;
    }
    k_outside = k_outside || k;
  }
  if (k_outside && clauses != std::string::npos) {
    const std::string tail = s.substr(clauses);
    if (tail.find("dynamic") != std::string::npos || tail.find("guided") != std::string::npos)
      bad("a dynamic or guided schedule inside a k loop gives an output block to different threads "
          "in different k iterations; use the static schedule");
  }
}

}  // namespace

LoopNestPlan plan_loops(const Contraction& op, const LoweringOverride* override) {
  LoopNestPlan plan;
  plan.loop_dims = detail::loop_dims(op);
  if (plan.loop_dims.size() > kMaxLoops)
    throw ConfigError(error_t::err_wrong_dimension,
                      std::to_string(plan.loop_dims.size()) +
                          " seq/shared dimensions; a loop nest has at most 26 (letters a..z)");
  for (std::size_t i = 0; i < plan.loop_dims.size(); ++i) {
    const Dim& d = op.dims[plan.loop_dims[i]];
    plan.specs.emplace_back(0L, static_cast<long>(d.size), 1L);
    const char letter = static_cast<char>('a' + i);
    plan.loop_string += d.exec == exec_t::shared ? static_cast<char>(std::toupper(letter)) : letter;
  }
  if (plan.loop_dims.empty()) {  // everything is prim: one call, through a loop of one iteration
    plan.specs.emplace_back(1L);
    plan.loop_string = "a";
  }
  if (override != nullptr && !override->loop_string.empty()) {
    if (override->block_sizes.size() > plan.specs.size())
      throw ConfigError(error_t::err_invalid_loop_override,
                        "block sizes given for " + std::to_string(override->block_sizes.size()) +
                            " loops, but the operation has " + std::to_string(plan.specs.size()));
    for (std::size_t i = 0; i < override->block_sizes.size(); ++i)
      plan.specs[i].block_size = override->block_sizes[i];
    check_override(op, plan, override->loop_string);
    plan.loop_string = override->loop_string;
  }
  return plan;
}

std::string LoopNestPlan::describe(const Contraction& op) const {
  std::ostringstream s;
  s << "loop_string \"" << loop_string << "\"\n";
  for (std::size_t i = 0; i < loop_dims.size(); ++i)
    s << "  '" << static_cast<char>('a' + i) << "' = " << name_dimension(op, loop_dims[i]) << '\n';
  return s.str();
}

struct LoweredOperation::State {
  Contraction op;
  LoopNestPlan plan;
  std::optional<parlooper::DynamicThreadedLoop> loop;
  std::unique_ptr<detail::MainKernel> main;
  std::unique_ptr<detail::TouchKernel> first, last;
  // Per loop letter: strides and whether it reduces (a k loop), for the body's offset sums.
  std::vector<std::int64_t> stride_in0, stride_in1, stride_out, last_index;
  std::vector<char> reduces;
  bool parallel = false;  // the loop_string has an upper-case (parallel) level
  bool folded = false;    // the innermost k loop became the BRGEMM batch (fold_reduction_into_batch)
};

namespace {

struct RunContext {
  const LoweredOperation::State* state;
  const float* in0;
  const float* in1;
  float* out;
};

}  // namespace

// The body of the nest: offsets from the indices, then the touches and the main primitive.
static void lowered_body(void* ctx, int* ind) noexcept {
  const RunContext& c = *static_cast<const RunContext*>(ctx);
  const LoweredOperation::State& s = *c.state;
  std::int64_t o0 = 0, o1 = 0, oo = 0;
  bool first = true, last = true;
  const std::size_t loops = s.stride_out.size();
  for (std::size_t i = 0; i < loops; ++i) {
    const std::int64_t v = ind[i];
    o0 += v * s.stride_in0[i];
    o1 += v * s.stride_in1[i];
    oo += v * s.stride_out[i];
    if (s.reduces[i]) {
      first = first && v == 0;
      last = last && v == s.last_index[i];
    }
  }
  float* out = c.out + oo;
  if (first && s.first) s.first->run(out);
  s.main->run(c.in0 == nullptr ? nullptr : c.in0 + o0, c.in1 == nullptr ? nullptr : c.in1 + o1, out,
              first, last);
  if (last && s.last) s.last->run(out);
}

LoweredOperation::LoweredOperation(const Contraction& given, const LoweringOverride* override,
                                   const ValidationOptions& options)
    : state_(std::make_unique<State>()) {
  validate(given, options);
  State& s = *state_;
  s.op = given;
  // An override names the loops of the operation as given, so it keeps them all.
  const bool overridden = override != nullptr && !override->loop_string.empty();
  if (!overridden) s.folded = fold_reduction_into_batch(s.op);
  const Contraction& op = s.op;
  s.plan = plan_loops(op, override);
  std::vector<std::size_t> block;
  if (is_gemm_like(op.main)) {
    const detail::GemmDims g = detail::find_gemm_dims(op);
    const bool fuse_zero = op.first_touch == prim_t::zero;
    const bool fuse_relu = op.last_touch == prim_t::relu;
    s.main = detail::make_gemm_kernel(op, options, fuse_zero, fuse_relu);
    block = {g.m, g.n};
    if (op.first_touch != prim_t::none && !fuse_zero)
      s.first = detail::make_touch_kernel(op.first_touch, op, block, options,
                                          error_t::err_invalid_first_touch_configuration);
    if (op.last_touch != prim_t::none && !fuse_relu)
      s.last = detail::make_touch_kernel(op.last_touch, op, block, options,
                                         error_t::err_invalid_last_touch_configuration);
  } else {
    block = detail::find_elementwise_dims(op).prims;
    // The main primitive overwrites the block, so a first touch is invisible: it is only checked.
    // Touches are checked before the main so that their errors name them.
    if (op.first_touch != prim_t::none)
      (void)detail::make_touch_kernel(op.first_touch, op, block, options,
                                      error_t::err_invalid_first_touch_configuration);
    if (op.last_touch != prim_t::none)
      s.last = detail::make_touch_kernel(op.last_touch, op, block, options,
                                         error_t::err_invalid_last_touch_configuration);
    s.main = is_binary_elementwise(op.main) ? detail::make_binary_kernel(op, options)
                                            : detail::make_unary_kernel(op, options);
  }
  for (std::size_t dim : s.plan.loop_dims) {
    const Dim& d = op.dims[dim];
    s.stride_in0.push_back(d.stride_in0);
    s.stride_in1.push_back(d.stride_in1);
    s.stride_out.push_back(d.stride_out);
    s.last_index.push_back(d.size - 1);
    s.reduces.push_back(is_k_loop(op, dim) ? 1 : 0);
  }
  for (char ch : s.plan.loop_string.substr(0, s.plan.loop_string.find('@')))
    s.parallel = s.parallel || std::isupper(static_cast<unsigned char>(ch));
  try {
    s.loop.emplace(std::span<const parlooper::LoopSpecs>(s.plan.specs), s.plan.loop_string,
                   parlooper::default_engine_kind());
  } catch (const weft::Error& e) {
    throw ConfigError(override != nullptr && !override->loop_string.empty()
                          ? error_t::err_invalid_loop_override
                          : error_t::err_invalid_execution_order,
                      std::string("the loop nest cannot be built: ") + e.what());
  }
}

LoweredOperation::~LoweredOperation() = default;
LoweredOperation::LoweredOperation(LoweredOperation&&) noexcept = default;
LoweredOperation& LoweredOperation::operator=(LoweredOperation&&) noexcept = default;

void LoweredOperation::execute(const float* in0, const float* in1, float* out) const {
  RunContext ctx{state_.get(), in0, in1, out};
  if (state_->parallel) {
    state_->loop->run(&lowered_body, &ctx);
    return;
  }
  // Every thread of a team runs the sequential levels of a nest: without a parallel level, the
  // nest must run on a team of one.
#pragma omp parallel num_threads(1)
  state_->loop->run(&lowered_body, &ctx);
}

const Contraction& LoweredOperation::operation() const { return state_->op; }
const LoopNestPlan& LoweredOperation::plan() const { return state_->plan; }

std::string LoweredOperation::describe() const {
  const State& s = *state_;
  std::string text = s.op.describe() + s.plan.describe(s.op) + s.loop->render();
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (s.folded) text += "the innermost k loop runs as the BRGEMM batch (batch folding)\n";
  if (s.first) text += "first touch: " + s.first->describe() + '\n';
  text += "main: " + s.main->describe() + '\n';
  if (s.last) text += "last touch: " + s.last->describe() + '\n';
  return text;
}

}  // namespace weft::tensor
