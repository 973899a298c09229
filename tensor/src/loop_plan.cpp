// The loops of a lowered operation: one letter per seq/shared dimension (upper case = shared), or
// a tuner's loop_string over the same letters, checked against the operation.
#include <cctype>
#include <sstream>

#include "prim_dims.hpp"
#include "weft/parlooper/loop_string.hpp"
#include "weft/tensor/lowering.hpp"

namespace weft::tensor {

namespace {

constexpr std::size_t kMaxLoops = 26;  // loop letters a..z

// A tuner's string may reorder and block the loops, but must not let two threads meet in one
// output block: k loops stay sequential, and the schedule keeps its thread-to-block ownership when
// a k loop encloses the parallel run.
void check_override(const Contraction& op, const LoopNestPlan& plan, const std::string& s) {
  const auto bad = [&](const std::string& why) {
    throw ConfigError(error_t::err_invalid_loop_override, "loop_string \"" + s + "\": " + why);
  };
  // The parsed nest, not the text: grids, inline specs and clauses hold letters too. A string
  // that does not parse is reported where the loop is built.
  parlooper::LoopNest nest;
  try {
    nest = parlooper::parse_loop_string(s, static_cast<int>(plan.loop_dims.size()));
  } catch (const parlooper::LoopStringError&) {
    return;
  }
  bool k_outside = false;  // a k loop encloses the first parallel level
  bool seen_parallel = false;
  for (const parlooper::LoopLevel& level : nest.levels) {
    const bool k = detail::is_k_loop(op, plan.loop_dims[static_cast<std::size_t>(level.loop)]);
    if (level.par != parlooper::ParKind::none) {
      if (k)
        bad(std::string("'") + static_cast<char>('A' + level.loop) + "' makes " +
            name_dimension(op, plan.loop_dims[static_cast<std::size_t>(level.loop)]) +
            " parallel; k loops accumulate into one output block and must stay lower case");
      seen_parallel = true;
    }
    k_outside = k_outside || (k && !seen_parallel);
  }
  if (k_outside && nest.has_run() && nest.schedule.kind != parlooper::ScheduleKind::static_)
    bad("a schedule other than static inside a k loop may give an output block to different threads "
        "in different k iterations; use the static schedule");
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

}  // namespace weft::tensor
