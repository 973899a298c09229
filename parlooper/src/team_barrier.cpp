#include "weft/parlooper/team_barrier.hpp"

#include <omp.h>

#include "weft/parlooper/engine.hpp"

namespace weft::parlooper {

void TeamBarrier::arrive_and_wait() {
  if (participants_ <= 1) return;
  const unsigned generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == participants_) {
    // Reset before releasing: a released thread may arrive at the next barrier at once.
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    return;
  }
  // Spin a little (barriers in loop nests are usually short waits), then sleep: a long spin
  // starves the other threads when there are more of them than cores.
  for (int i = 0; i < 256; ++i) {
    if (generation_.load(std::memory_order_acquire) != generation) return;
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  while (generation_.load(std::memory_order_acquire) == generation) {
    generation_.wait(generation, std::memory_order_acquire);
  }
}

void team_barrier_wait(TeamBarrier* barrier) { barrier->arrive_and_wait(); }

void run_chunks_dynamic(const Schedule& schedule, std::int64_t iterations, ChunkFn chunk,
                        void* state) {
  // OpenMP hands out units of `unit` iterations; a unit is the smallest piece a thread gets.
  const std::int64_t unit = schedule.chunk > 0 ? schedule.chunk : 1;
  const std::int64_t units = (iterations + unit - 1) / unit;
  auto run_unit = [&](std::int64_t u) {
    const std::int64_t begin = u * unit;
    const std::int64_t end = begin + unit < iterations ? begin + unit : iterations;
    chunk(state, begin, end);
  };
  if (schedule.kind == ScheduleKind::guided) {
#pragma omp for schedule(guided) nowait
    for (std::int64_t u = 0; u < units; ++u) run_unit(u);
  } else if (schedule.kind == ScheduleKind::runtime) {
    // OpenMP reads OMP_SCHEDULE / omp_set_schedule() now, at every call (units are iterations:
    // runtime schedules take no chunk of their own).
#pragma omp for schedule(runtime) nowait
    for (std::int64_t u = 0; u < units; ++u) run_unit(u);
  } else if (schedule.kind == ScheduleKind::auto_) {
#pragma omp for schedule(auto) nowait
    for (std::int64_t u = 0; u < units; ++u) run_unit(u);
  } else {
#pragma omp for schedule(dynamic) nowait
    for (std::int64_t u = 0; u < units; ++u) run_unit(u);
  }
}

}  // namespace weft::parlooper
