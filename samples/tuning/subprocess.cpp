#include "subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <weft/jit/error.hpp>

extern char** environ;

namespace weft::samples {
namespace {

// Closes what it holds on every path out of run_process.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int& f : fd)
      if (f >= 0) ::close(f), f = -1;
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]), fd[i] = -1;
  }
};

struct FileActions {
  posix_spawn_file_actions_t actions;
  FileActions() { posix_spawn_file_actions_init(&actions); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
};

std::string cannot_run(const std::string& program, int error) {
  return "cannot run '" + program + "': " + std::strerror(error);
}

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string ProcessResult::status_text() const {
  if (timed_out) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %g s", timeout_seconds);
    return text;
  }
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit status " + std::to_string(exit_status);
}

bool is_executable_program(const std::string& program) {
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return executable_file(program);
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (executable_file(dir + "/" + program)) return true;
    start = end + 1;
  }
  return false;
}

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds) {
  if (argv.empty()) throw Error("run_process: no program");
  Pipe out, err;
  if (::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0) throw Error(cannot_run(argv[0], errno));
  FileActions files;
  posix_spawn_file_actions_addopen(&files.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&files.actions, out.fd[1], 1);  // dup2 clears O_CLOEXEC on 1 and 2
  posix_spawn_file_actions_adddup2(&files.actions, err.fd[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, argv[0].c_str(), &files.actions, nullptr, args.data(), environ);
  out.close_end(1);
  err.close_end(1);
  if (spawned != 0) throw Error(cannot_run(argv[0], spawned));

  ProcessResult result;
  result.timeout_seconds = timeout_seconds;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 0));
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    int wait_ms = -1;
    if (timeout_seconds > 0 && !result.timed_out) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        ::kill(pid, SIGKILL);  // our own child, still unreaped
        result.timed_out = true;
      } else {
        wait_ms = static_cast<int>(std::min<long long>(left, 1000));
      }
    }
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready == 0 && result.timed_out) break;  // killed, but something else holds its pipes
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;  // EOF: the Pipe closes it
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace weft::samples
