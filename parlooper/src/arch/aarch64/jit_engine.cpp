// The AArch64 engine: one function `void run(const ThreadRun*)` of machine code per LoopNest,
// emitted with our A64 assembler. It implements the semantics of engine.hpp exactly like the
// reference interpreter and the x86-64 engine (parlooper/src/arch/x64/jit_engine.cpp, whose
// structure it follows level by level) do.
//
// Register and stack discipline (AAPCS64):
//   x29  frame pointer, x30 link register: a frame record, so that frame-pointer call graphs walk
//        from the body through the nest to its caller
//   x25  base of the loop state (8-byte slots, see Layout), which lies on the main function's
//        stack; the chunk function gets it as its first argument
//   x19 body, x20 body_ctx, x21 frame (== ind)       loaded once, live across the whole nest
//   x22 value of the innermost level, x23 its end,   the innermost loop touches memory only to
//   x24 its step                                     store ind[x]
// x0-x15 are scratch, reloaded from slots after every call; x16 holds call targets, x17 addresses
// of slots beyond the reach of an immediate offset.
//
// The work-shared run is emitted as a second function, chunk(state, begin, end), which runs
// collapsed iterations [begin, end) of the run and everything inside it, as on x86-64.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collapsed_run.hpp"
#include "nest_state.hpp"
#include "weft/jit/aarch64/code_buffer.hpp"
#include "weft/jit/emitting.hpp"
#include "weft/jit/error.hpp"
#include "weft/parlooper/engine.hpp"

namespace weft::parlooper {
namespace {

using namespace jit::a64;

using detail::describe;

std::int64_t step_offset(int l) { return static_cast<std::int64_t>(detail::step_offset(l)); }
std::int64_t ind_offset(int loop) { return static_cast<std::int64_t>(detail::ind_offset(loop)); }

// The loop state (nest_state.hpp), addressed from x25.
class Layout : public detail::NestStateLayout {
 public:
  Layout(int levels, int run_length)
      : NestStateLayout(levels, run_length), size_((bytes() + 15) / 16 * 16) {}  // sp stays 16-byte aligned
  std::size_t size() const { return size_; }

 private:
  std::size_t size_;
};

// The callee-saved registers the nest uses, below the frame record: x19-x25 and one pad slot.
constexpr std::int64_t kSavedBytes = 80;

class NestCode : public CodeBuffer, private detail::NestShape {
 public:
  using Fn = void (*)(const ThreadRun*);

  explicit NestCode(const LoopNest& nest)
      : NestShape(nest), layout_(static_cast<int>(nest.levels.size()), nest.run_length) {
    emit_main();
    if (run_begin_ >= 0) emit_chunk_function();
    entry_ = finalize<Fn>("weft::parlooper nest " + describe(nest));
  }

  Fn entry() const { return entry_; }

 private:
  // ---- slots: [x25 + offset]; offsets past an unsigned immediate's reach go through x17 ----------
  static constexpr std::size_t kImmediateReach = 4095 * 8;

  MemImm slot(std::size_t offset) {
    if (offset <= kImmediateReach) return ptr(x25, static_cast<std::int64_t>(offset));
    add_offset(x17, x25, offset & ~std::size_t{4095});
    return ptr(x17, static_cast<std::int64_t>(offset & 4095));
  }
  void load(XReg r, std::size_t offset) { ldr(r, slot(offset)); }
  void store(XReg r, std::size_t offset) { str(r, slot(offset)); }
  // A field of the RunLevelState of run level k.
  std::size_t run_field(int k, std::size_t field) const { return layout_.run_state(k) + field; }

  // d = n + offset, for offsets up to 2^24.
  void add_offset(XOrSp d, XOrSp n, std::size_t offset) {
    const auto high = static_cast<std::int64_t>(offset >> 12), low = static_cast<std::int64_t>(offset & 4095);
    if (high > 0) {
      add(d, n, high, jit::a64::lsl(12));
      if (low > 0) add(d, d, low);
    } else {
      add(d, n, low);
    }
  }
  void sub_sp(std::size_t bytes) {
    const auto high = static_cast<std::int64_t>(bytes >> 12), low = static_cast<std::int64_t>(bytes & 4095);
    if (high > 0) sub(sp, sp, high, jit::a64::lsl(12));
    if (low > 0) sub(sp, sp, low);
  }
  void add_sp(std::size_t bytes) {
    const auto high = static_cast<std::int64_t>(bytes >> 12), low = static_cast<std::int64_t>(bytes & 4095);
    if (high > 0) add(sp, sp, high, jit::a64::lsl(12));
    if (low > 0) add(sp, sp, low);
  }
  void call_address(const void* function) {
    mov_imm(x16, reinterpret_cast<std::uint64_t>(function));
    blr(x16);
  }


  void push_frame() {
    stp(x29, x30, pre_ptr(sp, -(16 + kSavedBytes)));
    mov(x29, sp);
    stp(x19, x20, ptr(sp, 16));
    stp(x21, x22, ptr(sp, 32));
    stp(x23, x24, ptr(sp, 48));
    str(x25, ptr(sp, 64));
  }
  void pop_frame() {
    ldr(x25, ptr(sp, 64));
    ldp(x23, x24, ptr(sp, 48));
    ldp(x21, x22, ptr(sp, 32));
    ldp(x19, x20, ptr(sp, 16));
    ldp(x29, x30, post_ptr(sp, 16 + kSavedBytes));
  }

  void emit_main() {
    push_frame();
    sub_sp(layout_.size());
    mov(x25, sp);
    store(x0, Layout::kRun);
    ldr(x1, ptr(x0, offsetof(ThreadRun, bounds)));
    store(x1, Layout::kBounds);
    ldr(x19, ptr(x0, offsetof(ThreadRun, body)));
    ldr(x20, ptr(x0, offsetof(ThreadRun, body_ctx)));
    ldr(x21, ptr(x0, offsetof(ThreadRun, frame)));
    store(x19, Layout::kBody);
    store(x20, Layout::kCtx);
    store(x21, Layout::kFrame);
    ldr(x24, ptr(x1, step_offset(last_)));
    store(x24, Layout::kInnerStep);
    emit_level(0);
    add_sp(layout_.size());
    pop_frame();
    ret();
  }

  // dst = min(value_p + step_p, bound_p): the end of the block of parent level p. bounds holds
  // the NestBounds pointer. Clobbers x3.
  void clamped_block_end(XReg dst, int p, XReg bounds) {
    load(dst, Layout::value(p));
    ldr(x3, ptr(bounds, step_offset(p)));
    add(dst, dst, x3);
    load(x3, Layout::bound(p));
    cmp(dst, x3);
    csel(dst, x3, dst, Cond::gt);
  }

  // x0 = lo, x1 = hi of level l, from the enclosing levels' slots. Clobbers x2, x3.
  void load_range(int l) {
    const int loop = level(l).loop;
    const int p = parent(l);
    load(x2, Layout::kBounds);
    if (p < 0) {
      ldr(x0, ptr(x2, static_cast<std::int64_t>(detail::start_offset(loop))));
      ldr(x1, ptr(x2, static_cast<std::int64_t>(detail::end_offset(loop))));
    } else {
      clamped_block_end(x1, p, x2);
      load(x0, Layout::value(p));
    }
  }

  // x0 = ceil((x1 - x0) / step_l), 0 for an empty range. Clobbers x2-x4.
  void trip_count(int l) {
    Label done;
    subs(x3, x1, x0);
    mov(x0, xzr);
    b(Cond::le, done);
    load(x2, Layout::kBounds);
    ldr(x4, ptr(x2, step_offset(l)));
    add(x3, x3, x4);
    sub(x3, x3, 1);
    udiv(x0, x3, x4);
    bind(done);
  }

  void emit_level(int l) {
    if (l == run_begin_) {
      emit_run_entry();
      return;
    }
    load_range(l);
    if (l == last_ && !is_grid(l)) {
      // Nothing clamps to the innermost level: its range goes straight into registers.
      mov(x22, x0);
      mov(x23, x1);
      emit_hot_loop(l);
    } else {
      store(x0, Layout::value(l));
      store(x1, Layout::bound(l));
      if (is_grid(l)) split_for_grid(l);
      emit_loop(l);
    }
    if (level(l).barrier_after) emit_barrier();
  }


  // Narrows [value_l, bound_l) to this thread's contiguous block of the trip count.
  void split_for_grid(int l) {
    const LoopLevel& lv = level(l);
    trip_count(l);  // x0 = I
    mov_imm(x5, static_cast<std::uint64_t>(lv.ways));
    udiv(x6, x0, x5);      // q = I / n
    msub(x7, x6, x5, x0);  // r = I - q * n
    const std::size_t coord = lv.par == ParKind::rows   ? offsetof(ThreadFrame, row)
                              : lv.par == ParKind::cols ? offsetof(ThreadFrame, col)
                                                        : offsetof(ThreadFrame, layer);
    ldrsw(x9, ptr(x21, static_cast<std::int64_t>(coord)));
    thread_block(x9, x6, x7, x10, x11);
    load(x2, Layout::kBounds);
    ldr(x2, ptr(x2, step_offset(l)));
    mul(x10, x10, x2);
    mul(x11, x11, x2);
    load(x0, Layout::value(l));
    add(x10, x10, x0);
    add(x11, x11, x0);
    store(x10, Layout::value(l));
    store(x11, Layout::end(l));
  }

  // Block t of a balanced split with quotient q and remainder r: [t*q + min(t, r), + q + (t < r)).
  void thread_block(XReg t, XReg q, XReg r, XReg begin, XReg end_reg) {
    mul(begin, t, q);
    cmp(t, r);
    csel(end_reg, r, t, Cond::gt);  // min(t, r)
    add(begin, begin, end_reg);
    cset(end_reg, Cond::lt);        // t < r (the flags of the cmp)
    add(end_reg, end_reg, q);
    add(end_reg, end_reg, begin);
  }

  // The loop of level l over [value_l, end_l) with its step; value_l is updated in place.
  void emit_loop(int l) {
    if (l == last_) {
      load(x22, Layout::value(l));
      load(x23, loop_end(l));
      emit_hot_loop(l);
      return;
    }
    const std::int64_t ind = ind_offset(level(l).loop);
    Label head, done;
    load(x0, Layout::value(l));
    load(x1, loop_end(l));
    cmp(x0, x1);
    b(Cond::ge, done);
    bind(head);
    str(w0, ptr(x21, ind));
    emit_level(l + 1);
    load(x2, Layout::kBounds);
    ldr(x3, ptr(x2, step_offset(l)));
    load(x0, Layout::value(l));
    add(x0, x0, x3);
    store(x0, Layout::value(l));
    load(x1, loop_end(l));
    cmp(x0, x1);
    b(Cond::lt, head);
    bind(done);
  }

  // The innermost loop, from x22 to x23 by x24: the body call with everything in registers, seven
  // instructions per call (as on x86-64).
  void emit_hot_loop(int l) {
    Label head, done;
    cmp(x22, x23);
    b(Cond::ge, done);
    align(64);  // the loop in one cache line
    bind(head);
    str(w22, ptr(x21, ind_offset(level(l).loop)));
    mov(x0, x20);
    mov(x1, x21);
    blr(x19);
    add(x22, x22, x24);
    cmp(x22, x23);
    b(Cond::lt, head);
    bind(done);
  }

  void emit_barrier() {
    load(x0, Layout::kRun);
    ldr(x0, ptr(x0, offsetof(ThreadRun, barrier)));
    call_address(reinterpret_cast<const void*>(&team_barrier_wait));
  }

  // x0 = the CollapsedRun, x1 = the NestBounds, x2 = the run's RunLevelState array.
  void load_run_arguments() {
    mov_imm(x0, reinterpret_cast<std::uint64_t>(&*collapsed_));
    load(x1, Layout::kBounds);
    add_offset(x2, x25, layout_.run_state(0));
  }

  // In the main function: the entry ranges of the run's heads, the true count, then this thread's
  // share by schedule.
  void emit_run_entry() {
    for (int l = run_begin_; l <= run_last_; ++l) {
      if (!collapsed_->is_head(run_k(l))) continue;
      load_range(l);
      store(x0, run_field(run_k(l), offsetof(RunLevelState, entry_lo)));
      store(x1, run_field(run_k(l), offsetof(RunLevelState, entry_hi)));
    }
    load_run_arguments();
    call_address(reinterpret_cast<const void*>(&collapsed_run_count));
    store(x0, Layout::kIterations);

    const Schedule& s = schedule_;
    if (s.kind == ScheduleKind::static_ && s.chunk <= 0) {
      Label none;
      ldrsw(x8, ptr(x21, offsetof(ThreadFrame, team_size)));
      udiv(x6, x0, x8);
      msub(x7, x6, x8, x0);
      ldrsw(x9, ptr(x21, offsetof(ThreadFrame, tid)));
      thread_block(x9, x6, x7, x1, x2);
      cmp(x1, x2);
      b(Cond::ge, none);
      mov(x0, x25);
      bl(chunk_);
      bind(none);
    } else if (s.kind == ScheduleKind::static_) {
      Label head, done;
      ldrsw(x0, ptr(x21, offsetof(ThreadFrame, tid)));
      mov_imm(x3, static_cast<std::uint64_t>(s.chunk));
      mul(x0, x0, x3);
      store(x0, Layout::kNextChunk);
      bind(head);
      load(x1, Layout::kNextChunk);
      load(x4, Layout::kIterations);
      cmp(x1, x4);
      b(Cond::ge, done);
      mov_imm(x3, static_cast<std::uint64_t>(s.chunk));
      add(x2, x1, x3);
      cmp(x2, x4);
      csel(x2, x4, x2, Cond::gt);
      mov(x0, x25);
      bl(chunk_);
      ldrsw(x0, ptr(x21, offsetof(ThreadFrame, team_size)));
      mov_imm(x3, static_cast<std::uint64_t>(s.chunk));
      mul(x0, x0, x3);
      load(x1, Layout::kNextChunk);
      add(x1, x1, x0);
      store(x1, Layout::kNextChunk);
      b(head);
      bind(done);
    } else {
      // Every thread calls it, even for 0 iterations: it is a work-sharing construct.
      mov_imm(x0, reinterpret_cast<std::uint64_t>(&schedule_));
      load(x1, Layout::kIterations);
      adr(x2, chunk_);
      mov(x3, x25);
      call_address(reinterpret_cast<const void*>(&run_chunks_dynamic));
    }
    // '|' after the run's first letter synchronizes after the whole run.
    if (level(run_begin_).barrier_after) emit_barrier();
  }

  // Stores value and bound of run level l in its slots and the value in ind. x0 = value, x1 = bound.
  void enter_run_level(int l) {
    store(x0, Layout::value(l));
    store(x1, Layout::bound(l));
    str(w0, ptr(x21, ind_offset(level(l).loop)));
  }

  // void chunk(void* state, int64 begin, int64 end): collapsed iterations [begin, end) of the run
  // (see the x86-64 engine for the walk).
  void emit_chunk_function() {
    const int top = run_begin_;
    const int row = run_last_;
    std::vector<Label> fresh(static_cast<std::size_t>(row - top + 1));
    Label row_entry, unit_step, done;
    bind(chunk_);
    push_frame();
    mov(x25, x0);
    load(x19, Layout::kBody);
    load(x20, Layout::kCtx);
    load(x21, Layout::kFrame);
    load(x24, Layout::kInnerStep);
    sub(x3, x2, x1);
    store(x3, Layout::kRemaining);
    mov(x3, x1);
    load_run_arguments();
    call_address(reinterpret_cast<const void*>(&collapsed_run_seek));
    for (int l = top; l <= row; ++l) {
      load(x0, run_field(run_k(l), offsetof(RunLevelState, value)));
      load(x1, run_field(run_k(l), offsetof(RunLevelState, bound)));
      enter_run_level(l);
    }
    b(row_entry);

    // A level entered anew after its parent advanced: the start of its range.
    for (int l = top + 1; l <= row; ++l) {
      bind(fresh[static_cast<std::size_t>(run_k(l))]);
      if (collapsed_->is_head(run_k(l))) {
        load(x0, run_field(run_k(l), offsetof(RunLevelState, entry_lo)));
        load(x1, run_field(run_k(l), offsetof(RunLevelState, entry_hi)));
      } else {
        load(x2, Layout::kBounds);
        clamped_block_end(x1, parent(l), x2);
        load(x0, Layout::value(parent(l)));
      }
      enter_run_level(l);
    }

    // The row: min(remaining, ceil((bound - value) / step)) iterations.
    bind(row_entry);
    load(x0, Layout::bound(row));
    load(x1, Layout::value(row));
    sub(x0, x0, x1);
    load(x2, Layout::kBounds);
    ldr(x2, ptr(x2, step_offset(row)));
    cmp(x2, 1);
    b(Cond::eq, unit_step);  // the common case skips the division
    add(x0, x0, x2);
    sub(x0, x0, 1);
    udiv(x0, x0, x2);
    bind(unit_step);
    load(x3, Layout::kRemaining);
    cmp(x0, x3);
    csel(x0, x3, x0, Cond::gt);
    sub(x3, x3, x0);
    store(x3, Layout::kRemaining);
    mul(x0, x0, x2);
    load(x1, Layout::value(row));
    add(x0, x0, x1);
    store(x0, Layout::end(row));
    emit_loop(row);
    load(x3, Layout::kRemaining);
    cbz(x3, done);

    // Carry: advance the innermost run level above the row that has values left.
    for (int l = row - 1; l >= top; --l) {
      Label exhausted;
      load(x2, Layout::kBounds);
      ldr(x3, ptr(x2, step_offset(l)));
      load(x0, Layout::value(l));
      add(x0, x0, x3);
      load(x1, Layout::bound(l));
      cmp(x0, x1);
      b(Cond::ge, exhausted);
      store(x0, Layout::value(l));
      str(w0, ptr(x21, ind_offset(level(l).loop)));
      b(fresh[static_cast<std::size_t>(run_k(l + 1))]);
      bind(exhausted);
    }
    bind(done);
    pop_frame();
    ret();
  }

  const Layout layout_;
  Label chunk_;
  Fn entry_ = nullptr;
};

}  // namespace

std::unique_ptr<Engine> make_jit_engine(const LoopNest& nest) {
  return detail::make_generated_nest_engine<NestCode>(nest);
}

}  // namespace weft::parlooper
