// The x86-64 engine: one function `void run(const ThreadRun*)` of machine code per LoopNest,
// emitted with Xbyak. It implements the semantics of engine.hpp exactly like the reference
// interpreter does; docs/jit_engine.md shows what the generated code looks like.
//
// Register and stack discipline (SysV):
//   rbp  frame pointer of the main function; the loop state (8-byte slots, see Layout) lies below
//        it, so a nest of 512 levels costs no more registers than one of 3
//   r12  body, r13 body_ctx, r14 frame (== ind)     loaded once, live across the whole nest
//   r15  value of the innermost level, rbx its end  the innermost loop touches memory only to
//        store ind[x] and add the step
// Everything else is caller-saved scratch, reloaded from slots after every call.
//
// The work-shared run is emitted as a second function, chunk(state, begin, end), which runs
// collapsed iterations [begin, end) of the run and everything inside it; `state` is the rbp of the
// main function, so both functions share the loop state. The static schedules call it directly,
// dynamic and guided ones hand it to run_chunks_dynamic(). The run's true count and the tuple a
// chunk starts at come from CollapsedRun (collapsed_run.hpp), called from the generated code once
// per run entry and once per chunk; from there the chunk walks the run's levels like a sequential
// nest with real clamped bounds, so its cost is the work it does.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collapsed_run.hpp"
#include "nest_state.hpp"
#include "weft/jit/emitting.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/x64/code_buffer.hpp"
#include "weft/parlooper/engine.hpp"

namespace weft::parlooper {
namespace {

using Xbyak::Label;

using detail::describe;
using detail::ind_offset;
using detail::end_offset;
using detail::start_offset;
using detail::step_offset;

// The loop state (nest_state.hpp), addressed from rbp.
class Layout : public detail::NestStateLayout {
 public:
  Layout(int levels, int run_length) : NestStateLayout(levels, run_length) {
    // After the return address and six pushes rsp is 8 mod 16: an odd multiple of 8 realigns it.
    size_ = (bytes() + 15) / 16 * 16 + 8;
  }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_;
};

std::size_t code_size_bound(const LoopNest& nest) {
  // Measured: under 200 bytes per level for the largest kinds (grid, run); leave ample room.
  return 4096 + 512 * nest.levels.size();
}

class NestCode : public jit::x64::CodeBuffer, private detail::NestShape {
 public:
  using Fn = void (*)(const ThreadRun*);

  explicit NestCode(const LoopNest& nest)
      : CodeBuffer(code_size_bound(nest)),
        NestShape(nest),
        layout_(static_cast<int>(nest.levels.size()), nest.run_length) {
    setDefaultJmpNEAR(true);
    emit_main();
    if (run_begin_ >= 0) emit_chunk_function();
    entry_ = finalize<Fn>("weft::parlooper nest " + describe(nest));
  }

  Fn entry() const { return entry_; }

 private:
  // The state sits below the five registers pushed after rbp (see emit_main).
  static constexpr std::size_t kSavedBelowRbp = 40;  // rbx, r12-r15
  Xbyak::Address slot(std::size_t offset) {
    return qword[rbp - (kSavedBelowRbp + layout_.size() - offset)];
  }
  Xbyak::Address slot_address(std::size_t offset) {
    return ptr[rbp - (kSavedBelowRbp + layout_.size() - offset)];
  }
  // A field of the RunLevelState of run level k.
  Xbyak::Address run_field(int k, std::size_t field) { return slot(layout_.run_state(k) + field); }

  void push_callee_saved() {
    push(rbp);
    push(rbx);
    push(r12);
    push(r13);
    push(r14);
    push(r15);
  }
  void pop_callee_saved() {
    pop(r15);
    pop(r14);
    pop(r13);
    pop(r12);
    pop(rbx);
    pop(rbp);
  }

  void emit_main() {
    // rbp is a real frame pointer ([rbp] = caller's rbp, [rbp + 8] = return address), so that
    // frame-pointer call graphs (perf record -g) walk from the body through the nest to its caller.
    push(rbp);
    mov(rbp, rsp);
    push(rbx);
    push(r12);
    push(r13);
    push(r14);
    push(r15);
    sub(rsp, static_cast<std::uint32_t>(layout_.size()));
    mov(slot(Layout::kRun), rdi);
    mov(rax, qword[rdi + offsetof(ThreadRun, bounds)]);
    mov(slot(Layout::kBounds), rax);
    mov(r12, qword[rdi + offsetof(ThreadRun, body)]);
    mov(r13, qword[rdi + offsetof(ThreadRun, body_ctx)]);
    mov(r14, qword[rdi + offsetof(ThreadRun, frame)]);
    mov(slot(Layout::kBody), r12);
    mov(slot(Layout::kCtx), r13);
    mov(slot(Layout::kFrame), r14);
    mov(rcx, qword[rax + step_offset(last_)]);
    mov(slot(Layout::kInnerStep), rcx);
    emit_level(0);
    add(rsp, static_cast<std::uint32_t>(layout_.size()));
    pop_callee_saved();
    ret();
  }

  // rax = lo, rdx = hi of level l, from the enclosing levels' slots. Clobbers rcx.
  void load_range(int l) {
    const int loop = level(l).loop;
    const int p = parent(l);
    mov(rcx, slot(Layout::kBounds));
    if (p < 0) {
      mov(rax, qword[rcx + start_offset(loop)]);
      mov(rdx, qword[rcx + end_offset(loop)]);
    } else {
      mov(rax, slot(Layout::value(p)));
      mov(rdx, rax);
      add(rdx, qword[rcx + step_offset(p)]);
      cmp(rdx, slot(Layout::bound(p)));
      cmovg(rdx, slot(Layout::bound(p)));
    }
  }

  // dst = min(value_p + step_p, bound_p): the end of the block of parent level p. bounds holds
  // the NestBounds pointer.
  void clamped_block_end(const Xbyak::Reg64& dst, int p, const Xbyak::Reg64& bounds) {
    mov(dst, slot(Layout::value(p)));
    add(dst, qword[bounds + step_offset(p)]);
    cmp(dst, slot(Layout::bound(p)));
    cmovg(dst, slot(Layout::bound(p)));
  }

  // rax = ceil((rdx - rax) / step_l), 0 for an empty range. Clobbers rcx, rdx, r8.
  void trip_count(int l) {
    Label done;
    mov(r8, rdx);
    sub(r8, rax);
    xor_(eax, eax);
    test(r8, r8);
    jle(done);
    mov(rcx, slot(Layout::kBounds));
    mov(rax, qword[rcx + step_offset(l)]);
    lea(rax, ptr[rax + r8 - 1]);
    xor_(edx, edx);
    div(qword[rcx + step_offset(l)]);
    L(done);
  }

  void emit_level(int l) {
    if (l == run_begin_) {
      emit_run_entry();
      return;
    }
    load_range(l);
    if (l == last_ && !is_grid(l)) {
      // Nothing clamps to the innermost level: its range goes straight into registers.
      mov(r15, rax);
      mov(rbx, rdx);
      emit_hot_loop(l);
    } else {
      mov(slot(Layout::value(l)), rax);
      mov(slot(Layout::bound(l)), rdx);
      if (is_grid(l)) split_for_grid(l);
      emit_loop(l);
    }
    if (level(l).barrier_after) emit_barrier();
  }


  // Narrows [value_l, bound_l) to this thread's contiguous block of the trip count.
  void split_for_grid(int l) {
    const LoopLevel& lv = level(l);
    trip_count(l);  // rax = I
    xor_(edx, edx);
    mov(ecx, static_cast<std::uint32_t>(lv.ways));
    div(rcx);  // rax = I / n, rdx = I % n
    const std::size_t coord = lv.par == ParKind::rows   ? offsetof(ThreadFrame, row)
                              : lv.par == ParKind::cols ? offsetof(ThreadFrame, col)
                                                        : offsetof(ThreadFrame, layer);
    movsxd(r9, dword[r14 + coord]);
    thread_block(r9, rax, rdx, r10, r11);  // r10 = first iteration, r11 = end iteration
    mov(rcx, slot(Layout::kBounds));
    mov(rcx, qword[rcx + step_offset(l)]);
    imul(r10, rcx);
    imul(r11, rcx);
    mov(rax, slot(Layout::value(l)));
    add(r10, rax);
    add(r11, rax);
    mov(slot(Layout::value(l)), r10);
    mov(slot(Layout::end(l)), r11);
  }

  // Block t of a balanced split with quotient q and remainder r: [t*q + min(t, r), + q + (t < r)).
  void thread_block(const Xbyak::Reg64& t, const Xbyak::Reg64& q, const Xbyak::Reg64& r,
                    const Xbyak::Reg64& begin, const Xbyak::Reg64& end_reg) {
    mov(begin, t);
    imul(begin, q);
    mov(end_reg, t);
    cmp(end_reg, r);
    cmovg(end_reg, r);
    add(begin, end_reg);
    xor_(end_reg.cvt32(), end_reg.cvt32());
    cmp(t, r);
    setl(end_reg.cvt8());
    add(end_reg, q);
    add(end_reg, begin);
  }

  // The loop of level l over [value_l, end_l) with its step; value_l is updated in place.
  void emit_loop(int l) {
    if (l == last_) {
      mov(r15, slot(Layout::value(l)));
      mov(rbx, slot(loop_end(l)));
      emit_hot_loop(l);
      return;
    }
    const std::size_t ind = ind_offset(level(l).loop);
    Label head, done;
    mov(rax, slot(Layout::value(l)));
    cmp(rax, slot(loop_end(l)));
    jge(done);
    L(head);
    mov(dword[r14 + ind], eax);
    emit_level(l + 1);
    mov(rcx, slot(Layout::kBounds));
    mov(rax, slot(Layout::value(l)));
    add(rax, qword[rcx + step_offset(l)]);
    mov(slot(Layout::value(l)), rax);
    cmp(rax, slot(loop_end(l)));
    jl(head);
    L(done);
  }

  // The innermost loop, from r15 to rbx: the body call with everything in registers.
  void emit_hot_loop(int l) {
    Label head, done;
    cmp(r15, rbx);
    jge(done);
    // The whole loop (22 bytes) in one cache line: measured 0.3 ns per call faster on Zen 3 than
    // wherever a 16-byte alignment happened to put it.
    align(64);
    L(head);
    mov(dword[r14 + ind_offset(level(l).loop)], r15d);
    mov(rdi, r13);
    mov(rsi, r14);
    call(r12);
    add(r15, slot(Layout::kInnerStep));
    cmp(r15, rbx);
    jl(head, T_SHORT);
    L(done);
  }

  void emit_barrier() {
    mov(rax, slot(Layout::kRun));
    mov(rdi, qword[rax + offsetof(ThreadRun, barrier)]);
    mov(rax, reinterpret_cast<std::uintptr_t>(&team_barrier_wait));
    call(rax);
  }

  // rdi = the CollapsedRun, rsi = the NestBounds, rdx = the run's RunLevelState array.
  void load_run_arguments() {
    mov(rdi, reinterpret_cast<std::uintptr_t>(&*collapsed_));
    mov(rsi, slot(Layout::kBounds));
    lea(rdx, slot_address(layout_.run_state(0)));
  }

  // In the main function: the entry ranges of the run's heads, the true count, then this thread's
  // share by schedule.
  void emit_run_entry() {
    for (int l = run_begin_; l <= run_last_; ++l) {
      if (!collapsed_->is_head(run_k(l))) continue;
      load_range(l);
      mov(run_field(run_k(l), offsetof(RunLevelState, entry_lo)), rax);
      mov(run_field(run_k(l), offsetof(RunLevelState, entry_hi)), rdx);
    }
    load_run_arguments();
    mov(rax, reinterpret_cast<std::uintptr_t>(&collapsed_run_count));
    call(rax);
    mov(slot(Layout::kIterations), rax);

    const Schedule& s = schedule_;
    if (s.kind == ScheduleKind::static_ && s.chunk <= 0) {
      Label none;
      movsxd(r8, dword[r14 + offsetof(ThreadFrame, team_size)]);
      xor_(edx, edx);
      div(r8);
      movsxd(r9, dword[r14 + offsetof(ThreadFrame, tid)]);
      thread_block(r9, rax, rdx, rsi, r10);
      mov(rdx, r10);
      cmp(rsi, rdx);
      jge(none);
      mov(rdi, rbp);
      call(chunk_);
      L(none);
    } else if (s.kind == ScheduleKind::static_) {
      Label head, done;
      movsxd(rax, dword[r14 + offsetof(ThreadFrame, tid)]);
      imul(rax, rax, s.chunk);
      mov(slot(Layout::kNextChunk), rax);
      L(head);
      mov(rsi, slot(Layout::kNextChunk));
      cmp(rsi, slot(Layout::kIterations));
      jge(done);
      lea(rdx, ptr[rsi + s.chunk]);
      cmp(rdx, slot(Layout::kIterations));
      cmovg(rdx, slot(Layout::kIterations));
      mov(rdi, rbp);
      call(chunk_);
      movsxd(rax, dword[r14 + offsetof(ThreadFrame, team_size)]);
      imul(rax, rax, s.chunk);
      add(slot(Layout::kNextChunk), rax);
      jmp(head);
      L(done);
    } else {
      // Every thread calls it, even for 0 iterations: it is a work-sharing construct.
      mov(rdi, reinterpret_cast<std::uintptr_t>(&schedule_));
      mov(rsi, slot(Layout::kIterations));
      lea(rdx, ptr[rip + chunk_]);
      mov(rcx, rbp);
      mov(rax, reinterpret_cast<std::uintptr_t>(&run_chunks_dynamic));
      call(rax);
    }
    // '|' after the run's first letter synchronizes after the whole run (the parser rejects it
    // after the other letters of the run: they are enclosed by a parallel loop).
    if (level(run_begin_).barrier_after) emit_barrier();
  }

  // Stores value and bound of run level l in its slots and the value in ind. rax = value,
  // rdx = bound.
  void enter_run_level(int l) {
    mov(slot(Layout::value(l)), rax);
    mov(slot(Layout::bound(l)), rdx);
    mov(dword[r14 + ind_offset(level(l).loop)], eax);
  }

  // void chunk(void* state, int64 begin, int64 end): collapsed iterations [begin, end) of the run.
  // CollapsedRun::seek() finds the tuple at `begin`; from there the run's levels advance like an
  // odometer over their real clamped ranges (each entered range is non-empty, so every step does
  // work). The run's innermost level runs as a real loop over the rest of its range or of the
  // chunk, whichever ends first.
  void emit_chunk_function() {
    const int top = run_begin_;
    const int row = run_last_;
    std::vector<Label> fresh(static_cast<std::size_t>(row - top + 1));
    Label row_entry, unit_step, done;
    L(chunk_);
    push_callee_saved();
    sub(rsp, 8);
    mov(rbp, rdi);
    mov(r12, slot(Layout::kBody));
    mov(r13, slot(Layout::kCtx));
    mov(r14, slot(Layout::kFrame));
    mov(rax, rdx);
    sub(rax, rsi);
    mov(slot(Layout::kRemaining), rax);
    mov(rcx, rsi);
    load_run_arguments();
    mov(rax, reinterpret_cast<std::uintptr_t>(&collapsed_run_seek));
    call(rax);
    for (int l = top; l <= row; ++l) {
      mov(rax, run_field(run_k(l), offsetof(RunLevelState, value)));
      mov(rdx, run_field(run_k(l), offsetof(RunLevelState, bound)));
      enter_run_level(l);
    }
    jmp(row_entry);

    // A level entered anew after its parent advanced: the start of its range.
    for (int l = top + 1; l <= row; ++l) {
      L(fresh[static_cast<std::size_t>(run_k(l))]);
      if (collapsed_->is_head(run_k(l))) {
        mov(rax, run_field(run_k(l), offsetof(RunLevelState, entry_lo)));
        mov(rdx, run_field(run_k(l), offsetof(RunLevelState, entry_hi)));
      } else {
        mov(rcx, slot(Layout::kBounds));
        clamped_block_end(rdx, parent(l), rcx);
        mov(rax, slot(Layout::value(parent(l))));
      }
      enter_run_level(l);
    }

    // The row: min(remaining, ceil((bound - value) / step)) iterations.
    L(row_entry);
    mov(rax, slot(Layout::bound(row)));
    sub(rax, slot(Layout::value(row)));
    mov(rcx, slot(Layout::kBounds));
    mov(rcx, qword[rcx + step_offset(row)]);
    cmp(rcx, 1);
    je(unit_step);  // the common case skips the division
    lea(rax, ptr[rax + rcx - 1]);
    xor_(edx, edx);
    div(rcx);
    L(unit_step);
    cmp(rax, slot(Layout::kRemaining));
    cmovg(rax, slot(Layout::kRemaining));
    sub(slot(Layout::kRemaining), rax);
    imul(rax, rcx);
    add(rax, slot(Layout::value(row)));
    mov(slot(Layout::end(row)), rax);
    emit_loop(row);
    cmp(slot(Layout::kRemaining), 0);
    je(done);

    // Carry: advance the innermost run level above the row that has values left.
    for (int l = row - 1; l >= top; --l) {
      Label exhausted;
      mov(rcx, slot(Layout::kBounds));
      mov(rax, slot(Layout::value(l)));
      add(rax, qword[rcx + step_offset(l)]);
      cmp(rax, slot(Layout::bound(l)));
      jge(exhausted);
      mov(slot(Layout::value(l)), rax);
      mov(dword[r14 + ind_offset(level(l).loop)], eax);
      jmp(fresh[static_cast<std::size_t>(run_k(l + 1))]);
      L(exhausted);
    }
    L(done);
    add(rsp, 8);
    pop_callee_saved();
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
