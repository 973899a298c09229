// Running a program as a child process without a shell (posix_spawn), its standard output and
// error captured, standard input /dev/null, the environment inherited: how weft-tune measure runs
// a sample once per loop string.
//
//   ProcessResult r = run_process({"build/samples/gemm/weft-gemm", "aBC", "64", ...}, /*timeout=*/60);
//   if (r.succeeded()) parse(r.out); else report(r.status_text(), r.err);
#pragma once

#include <string>
#include <vector>

namespace weft::samples {

struct ProcessResult {
  int exit_status = -1;  // when it exited
  int signal = 0;        // the signal that ended it, else 0
  bool timed_out = false;
  double timeout_seconds = 0;
  std::string out, err;
  bool succeeded() const { return signal == 0 && !timed_out && exit_status == 0; }
  // "exit status 2", "killed by signal 11 (Segmentation fault)", "timed out after 5 s"
  std::string status_text() const;
};

// Runs argv[0] (searched in PATH when it holds no '/') with arguments argv. With timeout_seconds >
// 0 the child is killed (SIGKILL) once that much time has passed. Throws weft::Error naming the
// program when it cannot be started (not found, not executable).
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds = 0);

// Whether `program` names an executable file, directly (with a '/') or through PATH.
bool is_executable_program(const std::string& program);

}  // namespace weft::samples
