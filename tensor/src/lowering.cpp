// Lowering a validated Contraction: the setup (roles, batch folding, the loop nest, the primitives
// per tail combination, packing) and the body the nest calls once per innermost iteration.
#include "weft/tensor/lowering.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>

#include "batch_folding.hpp"
#include "block_kernels.hpp"
#include "prim_dims.hpp"
#include "weft/parlooper/threaded_loop.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tensor {

namespace {

// Operand packing (Contraction::pack_in0): each thread copies the in0 block a call reads into its
// own contiguous buffer, column-major with leading dimension = the prim m size, batch entries one
// after the other, and reuses the copy for as long as its calls read the same block.
struct AlignedFree {
  void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
};
using AlignedBytes = std::unique_ptr<std::byte[], AlignedFree>;

AlignedBytes allocate_bytes(std::size_t n) {
  return AlignedBytes(static_cast<std::byte*>(::operator new[](n, std::align_val_t{64})));
}

struct PackSlot {
  AlignedBytes buffer;
  const std::byte* from = nullptr;  // the in0 block the buffer holds (nullptr: none)
};

struct PackSlots {
  std::vector<PackSlot> slots;
  void ensure(std::size_t threads, std::size_t bytes) {
    if (slots.size() < threads) slots.resize(threads);
    for (PackSlot& slot : slots) {
      if (!slot.buffer) slot.buffer = allocate_bytes(bytes);
      slot.from = nullptr;  // a new execution: the inputs may have changed
    }
  }
};

}  // namespace

namespace {

// The primitives of one combination of tail blocks: bit 0 the m block, bit 1 the n block, bit 2
// the k block of a GEMM is the shorter last block of a remainder (Dim::last_block); 0 = full blocks.
//
// With packing, the block's rows are packed and multiplied in register panels of the BRGEMM (the
// last one possibly shorter): each panel's copy is contiguous (leading dimension = its rows), and
// the kernel runs once per panel. A block of one panel (fp32's packing blocks) is one copy and one
// call, as before panels. A taller block packed as one (leading dimension = all its rows) has every
// panel of the kernel read a slice of each column, pages apart: fp64 blocks of four 32-row panels
// (128 x 512) ran 3-5 % faster as four calls on contiguous panels (2048^3, Zen 4, one thread, the
// two alternating in one process).
struct Primitives {
  std::unique_ptr<detail::MainKernel> main;  // with packing: a full panel's
  std::unique_ptr<detail::TouchKernel> first, last;
  std::optional<tpp::Unary> pack_copy;  // with packing: a full panel's m x k copy of one batch entry
  std::int64_t panel_rows = 0, panels = 1;  // with packing: rows per panel, panels per block
  // With packing, when the block's last panel is shorter than panel_rows: its kernel and copy.
  std::unique_ptr<detail::MainKernel> last_panel_main;
  std::optional<tpp::Unary> last_panel_copy;
  std::int64_t rows = 0, cols = 0, depth = 0;  // GEMM block: m, n, k
  std::int64_t panel_rows_of(std::int64_t panel) const {
    return panel + 1 == panels ? rows - panel * panel_rows : panel_rows;
  }
};
constexpr unsigned kTailM = 1, kTailN = 2, kTailK = 4;

}  // namespace

// The lowering is the same for every dtype: the body steps through the tensors in bytes (the loop
// strides are scaled by the element size once, at setup) and hands untyped pointers to kernels
// built for the dtype. fp32 runs exactly the code it ran with float pointers (an index times a
// stride, added to a base).
struct LoweredOperation::State {
  Contraction op;
  std::size_t element_bytes = 4;  // element_size(op.dtype)
  LoopNestPlan plan;
  std::optional<parlooper::DynamicThreadedLoop> loop;
  Primitives prims[8];  // by tail combination; [0] always, the others where remainders exist
  // Per loop letter: strides (in bytes), last index, whether it reduces (a k loop) and the tail bit its last
  // iteration sets (0: none), for the body's offset sums. One array of structs: the body reads it
  // on every call right after a kernel has streamed its operands through L1, and six separate
  // vectors cost six dependent misses (lowered_body was 0.7 % of the seed configuration's time).
  struct LoopStep {
    std::int64_t in0 = 0, in1 = 0, out = 0, last = 0;
    bool reduces = false;
    unsigned char tail_bit = 0;
  };
  std::vector<LoopStep> steps;
  bool parallel = false;  // the nest has a parallel level (it opens a team; LoopNest::is_parallel)
  bool folded = false;    // the innermost k loop became the BRGEMM batch (fold_reduction_into_batch)
  // Packing of in0 blocks (Contraction::pack_in0 on a BRGEMM TPP): per batch entry an m x k block
  // from leading dimension pack_ld_in (elements) to the block's rows.
  bool pack = false;
  std::int64_t pack_count = 1, pack_stride_in = 0, pack_ld_in = 0;  // pack_stride_in in bytes
  std::size_t pack_bytes = 0;  // per thread
  mutable std::mutex pack_mutex;  // guards pack_slots: one execution at a time uses them
  mutable PackSlots pack_slots;
  // Software prefetch for packed operations, whose B and C blocks are read in place with long
  // strides (every column on its own page; the hardware prefetchers find no stream to follow):
  // the C block of the call (all but the columns the kernel loads first) and the first lines of
  // every B column of the next call. Measured on 1600^3 (1 thread, interleaved with OpenBLAS, two
  // runs): without prefetch 0.89 / 0.93; C of the next call + B: 0.94 / 0.96; C of this call + B:
  // 0.95 / 0.97; C alone: 0.91 / 0.94. Longer B heads (128 or 256 floats) were slower than 64.
  std::int64_t out_ld = 0;  // bytes
  bool prefetch_in1 = false;  // B heads of the next call
  std::int64_t in1_ld = 0;  // bytes
};

namespace {

struct RunContext {
  const LoweredOperation::State* state;
  const std::byte* in0;
  const std::byte* in1;
  std::byte* out;
  PackSlots* pack = nullptr;
};

// Prefetches columns [begin, end) of a column-major block into L2 (every line, also the partial
// ones at either end of an unaligned column); the column length and ld in bytes.
void prefetch_columns(const std::byte* block, std::int64_t column_bytes, std::int64_t ld_bytes,
                      std::int64_t begin, std::int64_t end) noexcept {
  for (std::int64_t j = begin; j < end; ++j) {
    const auto first = reinterpret_cast<std::uintptr_t>(block + j * ld_bytes) & ~std::uintptr_t{63};
    const auto last = reinterpret_cast<std::uintptr_t>(block + j * ld_bytes + column_bytes);
    for (std::uintptr_t line = first; line < last; line += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(line), 0, 2);
  }
}

// The thread's copy of the in0 block at `from`, made now unless it holds that block already.
const std::byte* packed_block(const LoweredOperation::State& s, const Primitives& p, PackSlots& slots,
                              const std::byte* from) noexcept {
  PackSlot& slot = slots.slots[static_cast<std::size_t>(omp_get_thread_num())];
  std::byte* buffer = slot.buffer.get();
  if (slot.from != from) {
    // Panel j: rows j * panel_rows on, its batch entries one after the other, after panel j - 1's.
    const auto bytes = static_cast<std::int64_t>(s.element_bytes);
    std::byte* to = buffer;
    for (std::int64_t j = 0; j < p.panels; ++j) {
      const std::int64_t rows = p.panel_rows_of(j);
      const tpp::Unary& copy = rows == p.panel_rows ? *p.pack_copy : *p.last_panel_copy;
      for (std::int64_t i = 0; i < s.pack_count; ++i) {
        const tpp::UnaryArgs args{.in = from + i * s.pack_stride_in + j * p.panel_rows * bytes, .out = to};
        copy(args);
        to += rows * p.depth * bytes;
      }
    }
    slot.from = from;
  }
  return buffer;
}

// Columns the BRGEMM kernel loads at once at the start of a call (one register tile is at most 3
// columns wide on AVX2): prefetching them would come too late.
constexpr std::int64_t kFirstTileColumns = 3;
// The head of every B column of the next call that the body prefetches: 64 floats (longer heads
// measured slower, see State), the same bytes in any dtype.
constexpr std::int64_t kInHeadBytes = 256;

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
  std::byte* out = c.out + oo;
  if (first && p.first) p.first->run(out);
  const std::byte* in0 = c.in0 == nullptr ? nullptr : c.in0 + o0;
  if (c.pack != nullptr && in0 != nullptr) {
    in0 = packed_block(s, p, *c.pack, in0);
    prefetch_columns(out, p.rows * static_cast<std::int64_t>(s.element_bytes), s.out_ld,
                     std::min(kFirstTileColumns, p.cols), p.cols);
    const LoweredOperation::State::LoopStep& inner = step[loops - 1];
    if (s.prefetch_in1 && c.in1 != nullptr && ind[loops - 1] < inner.last) {
      // The next call's block: the next iteration of the innermost loop (a tail when that is last).
      const std::int64_t next_cols =
          ind[loops - 1] + 1 == inner.last && (inner.tail_bit & kTailN)
              ? s.prims[kTailN].cols
              : p.cols;
      prefetch_columns(c.in1 + o1 + inner.in1,
                       std::min(p.depth * static_cast<std::int64_t>(s.element_bytes), kInHeadBytes),
                       s.in1_ld, 0, next_cols);
    }
  }
  const std::byte* in1 = c.in1 == nullptr ? nullptr : c.in1 + o1;
  if (c.pack == nullptr || p.panels == 1) {
    p.main->run(in0, in1, out, first, last);
  } else {
    const auto bytes = static_cast<std::int64_t>(s.element_bytes);
    for (std::int64_t j = 0; j < p.panels; ++j) {
      const std::int64_t rows = p.panel_rows_of(j);
      const detail::MainKernel& kernel = rows == p.panel_rows ? *p.main : *p.last_panel_main;
      kernel.run(in0, in1, out + j * p.panel_rows * bytes, first, last);
      in0 += rows * p.depth * s.pack_count * bytes;
    }
  }
  if (last && p.last) p.last->run(out);
}

namespace {

using State = LoweredOperation::State;

// The body's per-letter strides (in bytes), last index and whether the loop reduces; the GEMM
// lowering adds the tail bits.
std::vector<State::LoopStep> make_loop_steps(const Contraction& op, const LoopNestPlan& plan) {
  std::vector<State::LoopStep> steps;
  const auto bytes = static_cast<std::int64_t>(element_size(op.dtype));
  for (std::size_t dim : plan.loop_dims) {
    const Dim& d = op.dims[dim];
    steps.push_back(State::LoopStep{.in0 = d.stride_in0 * bytes, .in1 = d.stride_in1 * bytes,
                                    .out = d.stride_out * bytes,
                                    .last = d.size - 1, .reduces = detail::is_k_loop(op, dim)});
  }
  return steps;
}

// A nest that cannot be built is the override's fault when there is one, else the operation's.
void build_loop_nest(State& s, bool overridden) {
  try {
    s.loop.emplace(std::span<const parlooper::LoopSpecs>(s.plan.specs), s.plan.loop_string,
                   parlooper::default_engine_kind());
  } catch (const weft::Error& e) {
    throw ConfigError(overridden ? error_t::err_invalid_loop_override : error_t::err_invalid_execution_order,
                      std::string("the loop nest cannot be built: ") + e.what());
  }
  s.parallel = s.loop->nest().is_parallel();
}

// The primitives of a GEMM whose prim blocks have the sizes in `op` (the full blocks, or a tail
// combination); `pack`: the kernel reads the packed copy of in0.
void make_gemm_primitives(const Contraction& op, const detail::GemmRoles& g,
                          const ValidationOptions& options, bool pack, tpp::BrgemmPrefetch prefetch,
                          Primitives& p) {
  const bool fuse_zero = op.first_touch == prim_t::zero;
  const bool fuse_relu = op.last_touch == prim_t::relu;
  const Dim& m = op.dims[g.m];
  const Dim& k = op.dims[g.k];
  p.rows = m.size;
  p.cols = op.dims[g.n].size;
  p.depth = k.size;
  if (pack) {
    // The kernels read the packed copy: per panel the same rows with leading dimension = the
    // panel's rows, batch entries rows * k apart (see Primitives).
    p.panel_rows = std::min(m.size, detail::brgemm_panel_rows(element_size(op.dtype)));
    p.panels = (m.size + p.panel_rows - 1) / p.panel_rows;
    const auto panel = [&](std::int64_t rows, std::optional<tpp::Unary>& copy,
                           std::unique_ptr<detail::MainKernel>& main) {
      copy.emplace(tpp::UnaryDesc{.op = tpp::UnaryOp::copy, .m = rows, .n = k.size,
                                  .ld_in = detail::brgemm_lda(op, g), .ld_out = rows,
                                  .types = detail::tpp_types(op.dtype)});
      Contraction packed = op;
      packed.dims[g.m].size = rows;
      packed.dims[g.k].stride_in0 = rows;
      if (g.br != detail::kNoDim) packed.dims[g.br].stride_in0 = rows * k.size;
      main = detail::make_gemm_kernel(packed, g, options, fuse_zero, fuse_relu, prefetch);
    };
    panel(p.panel_rows, p.pack_copy, p.main);
    if (m.size % p.panel_rows != 0) panel(m.size % p.panel_rows, p.last_panel_copy, p.last_panel_main);
  } else {
    p.main = detail::make_gemm_kernel(op, g, options, fuse_zero, fuse_relu, prefetch);
  }
  const std::vector<std::size_t> block{g.m, g.n};
  if (op.first_touch != prim_t::none && !fuse_zero)
    p.first = detail::make_touch_kernel(op.first_touch, op, block, options,
                                        error_t::err_invalid_first_touch_configuration);
  if (op.last_touch != prim_t::none && !fuse_relu)
    p.last = detail::make_touch_kernel(op.last_touch, op, block, options,
                                       error_t::err_invalid_last_touch_configuration);
}

// Remainders: the tail blocks the loops' last iterations run, by role (0 m, 1 n, 2 k; the tail
// bit is 1 << role).
struct TailBlocks {
  unsigned roles = 0;                // bits of the roles that have a remainder
  std::int64_t size[3] = {0, 0, 0};  // the tail block's size per role
};

// Sets the tail bit of each loop whose last iteration runs a shorter block. Validation makes the
// inner block of a remainder a prim m, n or k dim, never the batch-reduce dim.
TailBlocks mark_tail_loops(State& s, const detail::GemmRoles& g, const std::vector<std::size_t>& partner) {
  TailBlocks tails;
  for (std::size_t i = 0; i < s.plan.loop_dims.size(); ++i) {
    const std::size_t dim = s.plan.loop_dims[i];
    if (s.op.dims[dim].last_block == 0) continue;
    const int role = partner[dim] == g.m ? 0 : partner[dim] == g.n ? 1 : 2;
    s.steps[i].tail_bit = static_cast<unsigned char>(1u << role);
    tails.size[role] = s.op.dims[dim].last_block;
    tails.roles |= 1u << role;
  }
  return tails;
}

// The operation with the prim blocks of one tail combination (kTailM | kTailN | kTailK).
Contraction tail_block(const Contraction& op, const detail::GemmRoles& g, unsigned combination,
                       const TailBlocks& tails) {
  Contraction block = op;
  if (combination & kTailM) block.dims[g.m].size = tails.size[0];
  if (combination & kTailN) block.dims[g.n].size = tails.size[1];
  if (combination & kTailK) block.dims[g.k].size = tails.size[2];
  return block;
}

// C streams when consecutive calls write different output blocks (the innermost level moves the
// output): each kernel then prefetches the next tile's C, which after its last tile is the next
// block's (tpp::BrgemmPrefetch::next_c). Measured on the seed configurations (Zen 4, same run as
// the libxsmm loop): 1.01 -> 1.04 on one thread. Packed operations prefetch C from the body.
tpp::BrgemmPrefetch output_prefetch(const State& s) {
  const std::vector<parlooper::LoopLevel>& levels = s.loop->nest().levels;
  const bool moves_output = !levels.empty() && s.steps.size() > static_cast<std::size_t>(levels.back().loop) &&
                            s.steps[static_cast<std::size_t>(levels.back().loop)].out != 0;
  return !s.pack && moves_output ? tpp::BrgemmPrefetch::next_c : tpp::BrgemmPrefetch::none;
}

// (A leading dimension below m would be an overlapping layout the copy TPP rejects: read in place.)
bool packs_in0(const Contraction& op, const detail::GemmRoles& g) {
  return op.pack_in0 && detail::fits_brgemm(op, g) &&
         (op.dims[g.k].size == 1 || op.dims[g.k].stride_in0 >= op.dims[g.m].size);
}

void set_up_packing(State& s, const detail::GemmRoles& g) {
  const Contraction& op = s.op;
  s.pack_ld_in = detail::brgemm_lda(op, g);
  if (g.br != detail::kNoDim) {
    s.pack_count = op.dims[g.br].size;
    s.pack_stride_in = op.dims[g.br].stride_in0 * static_cast<std::int64_t>(s.element_bytes);
  }
  s.pack_bytes = static_cast<std::size_t>(op.dims[g.m].size * op.dims[g.k].size * s.pack_count) * s.element_bytes;
  s.pack_slots.ensure(static_cast<std::size_t>(s.parallel ? omp_get_max_threads() : 1), s.pack_bytes);
}

// B heads of the next call: when the innermost loop moves B, in a plain nest (one letter per
// loop, in order: the next call is the next iteration of the last letter).
void set_up_packed_prefetch(State& s, const detail::GemmRoles& g) {
  const std::size_t loops = s.plan.loop_dims.size();
  const auto bytes = static_cast<std::int64_t>(s.element_bytes);
  s.out_ld = s.op.dims[g.n].stride_out * bytes;
  s.prefetch_in1 = loops > 0 && s.loop->nest().is_plain_order() && s.steps[loops - 1].in1 != 0 &&
                   g.br == detail::kNoDim && (s.steps[loops - 1].tail_bit & kTailK) == 0;
  s.in1_ld = s.op.dims[g.n].stride_in1 * bytes;
}

void lower_gemm(State& s, const detail::OperandRoles& roles, const ValidationOptions& options) {
  const detail::GemmRoles& g = roles.gemm;
  s.pack = packs_in0(s.op, g);
  const TailBlocks tails = mark_tail_loops(s, g, roles.partner);
  const tpp::BrgemmPrefetch prefetch = output_prefetch(s);
  for (unsigned combination = 0; combination < 8; ++combination)
    if ((combination & ~tails.roles) == 0)
      make_gemm_primitives(tail_block(s.op, g, combination, tails), g, options, s.pack, prefetch,
                           s.prims[combination]);
  if (s.pack) {
    set_up_packing(s, g);
    set_up_packed_prefetch(s, g);
  }
}

void lower_elementwise(State& s, const std::vector<std::size_t>& block, const ValidationOptions& options) {
  const Contraction& op = s.op;
  Primitives& p = s.prims[0];
  // The main primitive overwrites the block, so a first touch is invisible: it is only checked.
  // Touches are checked before the main so that their errors name them.
  if (op.first_touch != prim_t::none)
    (void)detail::make_touch_kernel(op.first_touch, op, block, options,
                                    error_t::err_invalid_first_touch_configuration);
  if (op.last_touch != prim_t::none)
    p.last = detail::make_touch_kernel(op.last_touch, op, block, options,
                                       error_t::err_invalid_last_touch_configuration);
  p.main = is_binary_elementwise(op.main) ? detail::make_binary_kernel(op, block, options)
                                          : detail::make_unary_kernel(op, block, options);
}

}  // namespace

// The roles of the dims are derived once, while validating, and passed to every step below;
// batch folding changes the contraction and so updates them.
LoweredOperation::LoweredOperation(const Contraction& given, const LoweringOverride* override,
                                   const ValidationOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  detail::OperandRoles roles = detail::validated_roles(given, options);
  s.op = given;
  s.element_bytes = element_size(given.dtype);
  // An override names the loops of the operation as given, so it keeps them all.
  const bool overridden = override != nullptr && !override->loop_string.empty();
  if (!overridden) s.folded = detail::fold_into_batch(s.op, roles);
  s.plan = plan_loops(s.op, override);
  s.steps = make_loop_steps(s.op, s.plan);
  // The nest first: its innermost level decides the kernels' prefetch hint.
  build_loop_nest(s, overridden);
  if (is_gemm_like(s.op.main))
    lower_gemm(s, roles, options);
  else
    lower_elementwise(s, roles.block, options);
}

LoweredOperation::~LoweredOperation() = default;
LoweredOperation::LoweredOperation(LoweredOperation&&) noexcept = default;
LoweredOperation& LoweredOperation::operator=(LoweredOperation&&) noexcept = default;

void LoweredOperation::execute(const void* in0, const void* in1, void* out) const {
  const State& s = *state_;
  RunContext ctx{&s, static_cast<const std::byte*>(in0), static_cast<const std::byte*>(in1),
                 static_cast<std::byte*>(out)};
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
    ctx.pack->ensure(threads, s.pack_bytes);
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
    const std::string panels =
        p.panels == 1 ? std::to_string(p.rows)
                      : std::to_string(p.panels) + " panels of " + std::to_string(p.panel_rows) + " rows" +
                            (p.last_panel_copy ? " (the last " + std::to_string(p.panel_rows_of(p.panels - 1)) + ")" : "") +
                            ", each contiguous";
    if (p.pack_copy)
      text += indent + "in0 packed per thread: " + std::to_string(s.pack_count) + " x (" +
              std::to_string(p.rows) + " x " + std::to_string(p.depth) + ", ld " +
              std::to_string(s.pack_ld_in) + " -> " + panels +
              ") " + (s.element_bytes == 4 ? "floats" : "doubles") +
              " per block, copied when a thread's block changes: " +
              tpp::to_string(p.pack_copy->desc()) +
              (p.last_panel_copy ? ", " + tpp::to_string(p.last_panel_copy->desc()) : "") + '\n';
    if (p.first) text += indent + "first touch: " + p.first->describe() + '\n';
    text += indent + "main" + (p.panels > 1 ? " (per panel)" : "") + ": " + p.main->describe() + '\n';
    if (p.last_panel_main) text += indent + "main (last panel): " + p.last_panel_main->describe() + '\n';
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
