#include "weft/tensor/lowering.hpp"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>

#include "block_kernels.hpp"
#include "prim_dims.hpp"
#include "weft/tensor/passes.hpp"
#include "weft/parlooper/threaded_loop.hpp"
#include "weft/tpp/unary.hpp"

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
    const bool k = is_k_loop(op, plan.loop_dims[static_cast<std::size_t>(level.loop)]);
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

namespace {

// Operand packing (Contraction::pack_in0): each thread copies the in0 block a call reads into its
// own contiguous buffer, column-major with leading dimension = the prim m size, batch entries one
// after the other, and reuses the copy for as long as its calls read the same block.
struct AlignedFree {
  void operator()(float* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;

AlignedFloats allocate_floats(std::size_t n) {
  return AlignedFloats(static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t{64})));
}

struct PackSlot {
  AlignedFloats buffer;
  const float* from = nullptr;  // the in0 block the buffer holds (nullptr: none)
};

struct PackSlots {
  std::vector<PackSlot> slots;
  void ensure(std::size_t threads, std::size_t floats) {
    if (slots.size() < threads) slots.resize(threads);
    for (PackSlot& slot : slots) {
      if (!slot.buffer) slot.buffer = allocate_floats(floats);
      slot.from = nullptr;  // a new execution: the inputs may have changed
    }
  }
};

}  // namespace

namespace {

// The primitives of one combination of tail blocks: bit 0 the m block, bit 1 the n block, bit 2
// the k block of a GEMM is the shorter last block of a remainder (Dim::last_block); 0 = full blocks.
struct Primitives {
  std::unique_ptr<detail::MainKernel> main;
  std::unique_ptr<detail::TouchKernel> first, last;
  std::optional<tpp::Unary> pack_copy;  // with packing: the m x k copy of one batch entry
  std::int64_t rows = 0, cols = 0, depth = 0;  // GEMM block: m, n, k
};
constexpr unsigned kTailM = 1, kTailN = 2, kTailK = 4;

}  // namespace

struct LoweredOperation::State {
  Contraction op;
  LoopNestPlan plan;
  std::optional<parlooper::DynamicThreadedLoop> loop;
  Primitives prims[8];  // by tail combination; [0] always, the others where remainders exist
  // Per loop letter: strides, last index, whether it reduces (a k loop) and the tail bit its last
  // iteration sets (0: none), for the body's offset sums. One array of structs: the body reads it
  // on every call right after a kernel has streamed its operands through L1, and six separate
  // vectors cost six dependent misses (lowered_body was 0.7 % of the seed configuration's time).
  struct LoopStep {
    std::int64_t in0 = 0, in1 = 0, out = 0, last = 0;
    bool reduces = false;
    unsigned char tail_bit = 0;
  };
  std::vector<LoopStep> steps;
  bool parallel = false;  // the loop_string has an upper-case (parallel) level
  bool folded = false;    // the innermost k loop became the BRGEMM batch (fold_reduction_into_batch)
  // Packing of in0 blocks (Contraction::pack_in0 on a BRGEMM TPP): per batch entry an m x k block
  // from leading dimension pack_ld_in to the block's rows.
  bool pack = false;
  std::int64_t pack_count = 1, pack_stride_in = 0, pack_ld_in = 0;
  std::size_t pack_floats = 0;  // per thread
  mutable std::mutex pack_mutex;  // guards pack_slots: one execution at a time uses them
  mutable PackSlots pack_slots;
  // Software prefetch for packed operations, whose B and C blocks are read in place with long
  // strides (every column on its own page; the hardware prefetchers find no stream to follow):
  // the C block of the call (all but the columns the kernel loads first) and the first lines of
  // every B column of the next call. Measured on 1600^3 (1 thread, interleaved with OpenBLAS, two
  // runs): without prefetch 0.89 / 0.93; C of the next call + B: 0.94 / 0.96; C of this call + B:
  // 0.95 / 0.97; C alone: 0.91 / 0.94. Longer B heads (128 or 256 floats) were slower than 64.
  std::int64_t out_ld = 0;
  bool prefetch_in1 = false;  // B heads of the next call
  std::int64_t in1_ld = 0;
};

namespace {

struct RunContext {
  const LoweredOperation::State* state;
  const float* in0;
  const float* in1;
  float* out;
  PackSlots* pack = nullptr;
};

// Prefetches columns [begin, end) of a column-major block into L2 (every line, also the partial
// ones at either end of an unaligned column).
void prefetch_columns(const float* block, std::int64_t rows, std::int64_t ld, std::int64_t begin,
                      std::int64_t end) noexcept {
  for (std::int64_t j = begin; j < end; ++j) {
    const auto first = reinterpret_cast<std::uintptr_t>(block + j * ld) & ~std::uintptr_t{63};
    const auto last = reinterpret_cast<std::uintptr_t>(block + j * ld + rows);
    for (std::uintptr_t line = first; line < last; line += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
  }
}

// The thread's copy of the in0 block at `from`, made now unless it holds that block already.
const float* packed_block(const LoweredOperation::State& s, const Primitives& p, PackSlots& slots,
                          const float* from) noexcept {
  PackSlot& slot = slots.slots[static_cast<std::size_t>(omp_get_thread_num())];
  float* buffer = slot.buffer.get();
  if (slot.from != from) {
    const std::int64_t block = p.rows * p.depth;
    for (std::int64_t i = 0; i < s.pack_count; ++i)
      (*p.pack_copy)(from + i * s.pack_stride_in, buffer + i * block);
    slot.from = from;
  }
  return buffer;
}

// Columns the BRGEMM kernel loads at once at the start of a call (one register tile is at most 3
// columns wide on AVX2): prefetching them would come too late.
constexpr std::int64_t kFirstTileColumns = 3;

}  // namespace

// The body of the nest: offsets from the indices, then the touches and the main primitive.
static void lowered_body(void* ctx, int* ind) noexcept {
  const RunContext& c = *static_cast<const RunContext*>(ctx);
  const LoweredOperation::State& s = *c.state;
  std::int64_t o0 = 0, o1 = 0, oo = 0;
  bool first = true, last = true;
  unsigned tails = 0;
  const std::size_t loops = s.steps.size();
  const LoweredOperation::State::LoopStep* step = s.steps.data();
  for (std::size_t i = 0; i < loops; ++i) {
    const std::int64_t v = ind[i];
    const LoweredOperation::State::LoopStep& l = step[i];
    o0 += v * l.in0;
    o1 += v * l.in1;
    oo += v * l.out;
    if (l.reduces) {
      first = first && v == 0;
      last = last && v == l.last;
    }
    if (v == l.last) tails |= l.tail_bit;
  }
  const Primitives& p = s.prims[tails];
  float* out = c.out + oo;
  if (first && p.first) p.first->run(out);
  const float* in0 = c.in0 == nullptr ? nullptr : c.in0 + o0;
  if (c.pack != nullptr && in0 != nullptr) {
    in0 = packed_block(s, p, *c.pack, in0);
    prefetch_columns(out, p.rows, s.out_ld, std::min(kFirstTileColumns, p.cols), p.cols);
    const LoweredOperation::State::LoopStep& inner = step[loops - 1];
    if (s.prefetch_in1 && c.in1 != nullptr && ind[loops - 1] < inner.last) {
      // The next call's block: the next iteration of the innermost loop (a tail when that is last).
      const std::int64_t next_cols =
          ind[loops - 1] + 1 == inner.last && (inner.tail_bit & kTailN)
              ? s.prims[kTailN].cols
              : p.cols;
      prefetch_columns(c.in1 + o1 + inner.in1, std::min<std::int64_t>(p.depth, 64),
                       s.in1_ld, 0, next_cols);
    }
  }
  p.main->run(in0, c.in1 == nullptr ? nullptr : c.in1 + o1, out, first, last);
  if (last && p.last) p.last->run(out);
}

namespace {

// The primitives of a GEMM whose prim blocks have the sizes in `op` (the full blocks, or a tail
// combination); `pack`: the kernel reads the packed copy of in0.
void make_gemm_primitives(const Contraction& op, const ValidationOptions& options, bool pack,
                          tpp::BrgemmPrefetch prefetch, Primitives& p) {
  const detail::GemmDims g = detail::find_gemm_dims(op);
  const bool fuse_zero = op.first_touch == prim_t::zero;
  const bool fuse_relu = op.last_touch == prim_t::relu;
  const Dim& m = op.dims[g.m];
  const Dim& k = op.dims[g.k];
  p.rows = m.size;
  p.cols = op.dims[g.n].size;
  p.depth = k.size;
  if (pack) {
    // The kernel reads the packed copy: the same block with leading dimension m, batch entries
    // m * k apart.
    const std::int64_t ld_in = k.size == 1 ? std::max(k.stride_in0, m.size) : k.stride_in0;
    p.pack_copy.emplace(tpp::UnaryDesc{.op = tpp::UnaryOp::copy, .m = m.size, .n = k.size,
                                       .ld_in = ld_in, .ld_out = m.size});
    Contraction packed = op;
    packed.dims[g.k].stride_in0 = m.size;
    if (g.br != detail::kNoDim) packed.dims[g.br].stride_in0 = m.size * k.size;
    p.main = detail::make_gemm_kernel(packed, options, fuse_zero, fuse_relu, prefetch);
  } else {
    p.main = detail::make_gemm_kernel(op, options, fuse_zero, fuse_relu, prefetch);
  }
  const std::vector<std::size_t> block{g.m, g.n};
  if (op.first_touch != prim_t::none && !fuse_zero)
    p.first = detail::make_touch_kernel(op.first_touch, op, block, options,
                                        error_t::err_invalid_first_touch_configuration);
  if (op.last_touch != prim_t::none && !fuse_relu)
    p.last = detail::make_touch_kernel(op.last_touch, op, block, options,
                                       error_t::err_invalid_last_touch_configuration);
}

}  // namespace

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
  for (std::size_t dim : s.plan.loop_dims) {
    const Dim& d = op.dims[dim];
    s.steps.push_back(State::LoopStep{.in0 = d.stride_in0, .in1 = d.stride_in1, .out = d.stride_out,
                                      .last = d.size - 1, .reduces = is_k_loop(op, dim)});
  }
  // The nest first: its innermost level decides the kernels' prefetch hint below.
  try {
    s.loop.emplace(std::span<const parlooper::LoopSpecs>(s.plan.specs), s.plan.loop_string,
                   parlooper::default_engine_kind());
  } catch (const weft::Error& e) {
    throw ConfigError(override != nullptr && !override->loop_string.empty()
                          ? error_t::err_invalid_loop_override
                          : error_t::err_invalid_execution_order,
                      std::string("the loop nest cannot be built: ") + e.what());
  }
  for (char ch : s.plan.loop_string.substr(0, s.plan.loop_string.find('@')))
    s.parallel = s.parallel || std::isupper(static_cast<unsigned char>(ch));
  if (is_gemm_like(op.main)) {
    const detail::GemmDims g = detail::find_gemm_dims(op);
    // (A leading dimension below m would be an overlapping layout the copy TPP rejects: read in place.)
    s.pack = op.pack_in0 && g.fits_tpp &&
             (op.dims[g.k].size == 1 || op.dims[g.k].stride_in0 >= op.dims[g.m].size);
    // C streams when consecutive calls write different output blocks (the innermost level moves the
    // output): each kernel then prefetches the next tile's C, which after its last tile is the next
    // block's (tpp::BrgemmPrefetch::next_c). Measured on the seed configurations (Zen 4, same run as
    // the libxsmm loop): 1.01 -> 1.04 on one thread. Packed operations prefetch C from the body.
    const std::vector<parlooper::LoopLevel>& levels = s.loop->nest().levels;
    const bool moves_output = !levels.empty() && s.steps.size() > static_cast<std::size_t>(levels.back().loop) &&
                              s.steps[static_cast<std::size_t>(levels.back().loop)].out != 0;
    const tpp::BrgemmPrefetch c_prefetch =
        !s.pack && moves_output ? tpp::BrgemmPrefetch::next_c : tpp::BrgemmPrefetch::none;
    // Remainders: the loop whose last iteration runs a tail block, and that block's size.
    std::int64_t tail_size[3] = {0, 0, 0};
    unsigned all_tails = 0;
    for (std::size_t i = 0; i < s.plan.loop_dims.size(); ++i) {
      const Dim& d = op.dims[s.plan.loop_dims[i]];
      if (d.last_block == 0) continue;
      const std::size_t partner = detail::ragged_partner(op, s.plan.loop_dims[i]);
      const int role = partner == g.m ? 0 : partner == g.n ? 1 : 2;
      s.steps[i].tail_bit = static_cast<unsigned char>(1u << role);
      tail_size[role] = d.last_block;
      all_tails |= 1u << role;
    }
    for (unsigned tails = 0; tails < 8; ++tails) {
      if ((tails & ~all_tails) != 0) continue;
      Contraction variant = op;
      if (tails & kTailM) variant.dims[g.m].size = tail_size[0];
      if (tails & kTailN) variant.dims[g.n].size = tail_size[1];
      if (tails & kTailK) variant.dims[g.k].size = tail_size[2];
      make_gemm_primitives(variant, options, s.pack, c_prefetch, s.prims[tails]);
    }
    if (s.pack) {
      const Dim& k = op.dims[g.k];
      s.pack_ld_in = k.size == 1 ? std::max(k.stride_in0, op.dims[g.m].size) : k.stride_in0;
      if (g.br != detail::kNoDim) {
        s.pack_count = op.dims[g.br].size;
        s.pack_stride_in = op.dims[g.br].stride_in0;
      }
      s.pack_floats = static_cast<std::size_t>(op.dims[g.m].size * k.size * s.pack_count);
      s.pack_slots.ensure(static_cast<std::size_t>(s.parallel ? omp_get_max_threads() : 1), s.pack_floats);
      s.out_ld = op.dims[g.n].stride_out;
      // B heads of the next call: when the innermost loop moves B, in a plain nest (one letter per
      // loop, in order: the next call is the next iteration of the last letter).
      const std::size_t loops = s.plan.loop_dims.size();
      bool plain = s.plan.loop_string.size() == loops;
      for (std::size_t i = 0; i < loops && plain; ++i)
        plain = std::tolower(static_cast<unsigned char>(s.plan.loop_string[i])) == 'a' + static_cast<int>(i);
      s.prefetch_in1 = plain && loops > 0 && s.steps[loops - 1].in1 != 0 && g.br == detail::kNoDim &&
                       (s.steps[loops - 1].tail_bit & kTailK) == 0;
      s.in1_ld = op.dims[g.n].stride_in1;
    }
  } else {
    Primitives& p = s.prims[0];
    const std::vector<std::size_t> block = detail::find_elementwise_dims(op).prims;
    // The main primitive overwrites the block, so a first touch is invisible: it is only checked.
    // Touches are checked before the main so that their errors name them.
    if (op.first_touch != prim_t::none)
      (void)detail::make_touch_kernel(op.first_touch, op, block, options,
                                      error_t::err_invalid_first_touch_configuration);
    if (op.last_touch != prim_t::none)
      p.last = detail::make_touch_kernel(op.last_touch, op, block, options,
                                         error_t::err_invalid_last_touch_configuration);
    p.main = is_binary_elementwise(op.main) ? detail::make_binary_kernel(op, options)
                                            : detail::make_unary_kernel(op, options);
  }
}

LoweredOperation::~LoweredOperation() = default;
LoweredOperation::LoweredOperation(LoweredOperation&&) noexcept = default;
LoweredOperation& LoweredOperation::operator=(LoweredOperation&&) noexcept = default;

void LoweredOperation::execute(const float* in0, const float* in1, float* out) const {
  const State& s = *state_;
  RunContext ctx{&s, in0, in1, out};
  // Packing: the slots of the operation, or (while another execution holds them) private ones;
  // one per thread number the body can see: the team a parallel nest opens (at most
  // omp_get_max_threads(), nested or not), or the caller's own number, where a nest without a
  // parallel level runs.
  std::unique_lock<std::mutex> lock;
  PackSlots private_slots;
  if (s.pack) {
    const std::size_t threads =
        static_cast<std::size_t>(s.parallel ? omp_get_max_threads() : omp_get_thread_num() + 1);
    lock = std::unique_lock<std::mutex>(s.pack_mutex, std::try_to_lock);
    ctx.pack = lock.owns_lock() ? &s.pack_slots : &private_slots;
    ctx.pack->ensure(threads, s.pack_floats);
  }
  s.loop->run(&lowered_body, &ctx);
}

const Contraction& LoweredOperation::operation() const { return state_->op; }
const LoopNestPlan& LoweredOperation::plan() const { return state_->plan; }

std::string LoweredOperation::describe() const {
  const State& s = *state_;
  std::string text = s.op.describe() + s.plan.describe(s.op) + s.loop->render();
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (s.folded) text += "the innermost k loop runs as the BRGEMM batch (batch folding)\n";
  const auto describe_prims = [&](const Primitives& p, const std::string& indent) {
    if (p.pack_copy)
      text += indent + "in0 packed per thread: " + std::to_string(s.pack_count) + " x (" +
              std::to_string(p.rows) + " x " + std::to_string(p.depth) + ", ld " +
              std::to_string(s.pack_ld_in) + " -> " + std::to_string(p.rows) +
              ") floats per block, copied when a thread's block changes: " +
              tpp::to_string(p.pack_copy->desc()) + '\n';
    if (p.first) text += indent + "first touch: " + p.first->describe() + '\n';
    text += indent + "main: " + p.main->describe() + '\n';
    if (p.last) text += indent + "last touch: " + p.last->describe() + '\n';
  };
  describe_prims(s.prims[0], "");
  for (unsigned tails = 1; tails < 8; ++tails) {
    if (!s.prims[tails].main) continue;
    text += std::string("tail blocks (") + (tails & kTailM ? " m" : "") + (tails & kTailN ? " n" : "") +
            (tails & kTailK ? " k" : "") + " ), " + std::to_string(s.prims[tails].rows) + " x " +
            std::to_string(s.prims[tails].cols) + " x " + std::to_string(s.prims[tails].depth) + ":\n";
    describe_prims(s.prims[tails], "  ");
  }
  return text;
}

}  // namespace weft::tensor
