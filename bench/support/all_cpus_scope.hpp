// OMP_PROC_BIND pins the calling thread to one core, and OpenBLAS's pthreads inherit that mask
// when it (re)creates them (openblas_set_num_threads): "2 threads" would then share one core
// (measured: 92 instead of 184 GFLOPS at 1024^3). While an AllCpusScope is alive, the calling
// thread may run on every online CPU; set OpenBLAS's thread count inside it.
//
//   { const AllCpusScope unpinned; openblas_set_num_threads(2); cblas_sgemm(...); }
#pragma once

#include <sched.h>
#include <unistd.h>

class AllCpusScope {
 public:
  AllCpusScope() {
    sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN); ++cpu) CPU_SET(static_cast<int>(cpu), &all);
    sched_setaffinity(0, sizeof all, &all);
  }
  ~AllCpusScope() { sched_setaffinity(0, sizeof saved_, &saved_); }
  AllCpusScope(const AllCpusScope&) = delete;
  AllCpusScope& operator=(const AllCpusScope&) = delete;

 private:
  cpu_set_t saved_;
};
