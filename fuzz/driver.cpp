// Our own fuzz driver, linked with one target instead of libFuzzer: runs with any compiler and no
// extra packages, and is what ctest runs.
//
//   weft-fuzz-<target> [--seed S] [--seconds X] [--runs N] [--timeout T] [--corpus DIR]
//                      [--dict FILE] [--max-len N] [--artifact FILE] [--no-balance]
//                      [--no-huge-blocks] [--no-sequential-once] [--known-bugs ID,...]
//   weft-fuzz-<target> --replay FILE...
//
// A run first replays the committed seed corpus, then draws inputs from the seed: mostly the
// target's structured generator (valid inputs, where the interesting paths are), the rest byte-level
// mutations of the corpus and of earlier inputs, with the dictionary's tokens and boundary numbers
// spliced in. It stops after --runs inputs or --seconds, whichever comes first, and prints
// `fuzz <target>: <runs> runs, <failures> failures`.
//
// On a failure (a broken property, an uncaught exception, a crash, a sanitizer report, an input that
// runs longer than --timeout) it prints the input as hex and text, writes it to --artifact and
// exits with 1: `--replay` on that file runs it again.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

#if defined(__SANITIZE_ADDRESS__)
#define WEFT_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_FUZZ_ASAN 1
#endif
#endif

// GCC links UBSan as a runtime of its own, which does not call ASan's death callback: make its
// reports abort, so that the SIGABRT handler prints the input. Stacks make them worth reading.
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:print_stacktrace=1"; }

namespace {

using Clock = std::chrono::steady_clock;

#ifndef WEFT_FUZZ_CORPUS_DIR
#define WEFT_FUZZ_CORPUS_DIR ""
#endif
#ifndef WEFT_FUZZ_DICT
#define WEFT_FUZZ_DICT ""
#endif

struct Options {
  std::uint64_t seed = 1;
  double seconds = -1;
  long long runs = -1;
  double timeout = 20;
  std::string corpus = WEFT_FUZZ_CORPUS_DIR;
  std::string dict = WEFT_FUZZ_DICT;
  std::size_t max_len = 4096;
  std::string artifact;
  std::vector<std::string> replay;
  bool verbose = false;
};

// The input being run, in storage a signal handler may read: the handler cannot allocate.
constexpr std::size_t kMaxInput = 1 << 20;
char g_input[kMaxInput];
std::size_t g_input_size = 0;
long long g_run = 0;
char g_artifact[4096];
char g_name[64];
std::atomic<std::int64_t> g_started_ns{0};  // 0: no input running
std::atomic<bool> g_in_input{false};
std::atomic<bool> g_reported{false};

void write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}
void write_str(int fd, const char* s) { write_all(fd, s, std::strlen(s)); }

void write_num(int fd, long long v) {
  char buf[32];
  int n = 0;
  const bool negative = v < 0;
  unsigned long long u = negative ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  do {
    buf[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) buf[n++] = '-';
  for (int i = 0; i < n / 2; ++i) std::swap(buf[i], buf[n - 1 - i]);
  write_all(fd, buf, static_cast<std::size_t>(n));
}

// Prints the current input and writes the artifact; only async-signal-safe calls, since it runs
// from signal handlers, the sanitizers' death callback and the watchdog alike.
void report_current_input(const char* why) {
  if (g_reported.exchange(true)) return;
  static const char digits[] = "0123456789abcdef";
  const int err = 2;
  if (!g_in_input.load()) {
    // Static initialization or destruction: no input to blame.
    write_str(err, "\nfuzz ");
    write_str(err, g_name);
    write_str(err, ": FAILED (");
    write_str(err, why);
    write_str(err, ") outside any input, at start-up or exit, after ");
    write_num(err, g_run);
    write_str(err, " runs\n");
    return;
  }
  write_str(err, "\nfuzz ");
  write_str(err, g_name);
  write_str(err, ": FAILED (");
  write_str(err, why);
  write_str(err, ") on run ");
  write_num(err, g_run);
  write_str(err, ", input of ");
  write_num(err, static_cast<long long>(g_input_size));
  write_str(err, " bytes\n--- hex ---\n");
  for (std::size_t i = 0; i < g_input_size; ++i) {
    const auto u = static_cast<unsigned char>(g_input[i]);
    const char pair[2] = {digits[u >> 4], digits[u & 15]};
    write_all(err, pair, 2);
    if (i % 64 == 63) write_str(err, "\n");
  }
  write_str(err, "\n--- text (non-printable bytes as \\xNN) ---\n");
  for (std::size_t i = 0; i < g_input_size; ++i) {
    const char c = g_input[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || (u >= 0x20 && u < 0x7f && c != '\\')) {
      write_all(err, &c, 1);
    } else {
      const char esc[4] = {'\\', 'x', digits[u >> 4], digits[u & 15]};
      write_all(err, esc, 4);
    }
  }
  write_str(err, "\n--- end ---\n");
  if (g_artifact[0] != '\0') {
    const int fd = ::open(g_artifact, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      write_all(fd, g_input, g_input_size);
      ::close(fd);
      write_str(err, "input written to ");
      write_str(err, g_artifact);
      write_str(err, "; replay with --replay ");
      write_str(err, g_artifact);
      write_str(err, "\n");
    }
  }
  write_str(err, "fuzz ");
  write_str(err, g_name);
  write_str(err, ": ");
  write_num(err, g_run);
  write_str(err, " runs, 1 failures\n");
}

void on_fatal_signal(int sig) {
  report_current_input(sig == SIGABRT ? "abort" : sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS"
                                                  : sig == SIGFPE  ? "SIGFPE"
                                                  : sig == SIGILL  ? "SIGILL"
                                                                   : "signal");
  ::_exit(1);
}

void on_sanitizer_death() { report_current_input("sanitizer report above"); }

void install_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  ::sigaction(SIGABRT, &sa, nullptr);
#ifndef WEFT_FUZZ_ASAN
  // Under AddressSanitizer its own handler reports the fault (with a stack) and then calls the
  // death callback; replacing it would lose the report.
  ::sigaction(SIGSEGV, &sa, nullptr);
  ::sigaction(SIGBUS, &sa, nullptr);
  ::sigaction(SIGFPE, &sa, nullptr);
  ::sigaction(SIGILL, &sa, nullptr);
#endif
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(on_sanitizer_death);
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// A hang is a failure like a crash: the watchdog reports the input that has run too long.
void start_watchdog(double timeout_seconds) {
  std::thread([timeout_seconds] {
    const auto limit = static_cast<std::int64_t>(timeout_seconds * 1e9);
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::int64_t started = g_started_ns.load(std::memory_order_acquire);
      if (started != 0 && now_ns() - started > limit) {
        report_current_input("timeout: the input ran longer than --timeout");
        ::_exit(1);
      }
    }
  }).detach();
}

void run_one(const std::string& input, long long run) {
  g_input_size = std::min(input.size(), kMaxInput);
  std::memcpy(g_input, input.data(), g_input_size);
  g_run = run;
  g_in_input.store(true);
  g_started_ns.store(now_ns(), std::memory_order_release);
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(g_input), g_input_size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\nweft fuzz: FAILURE: uncaught exception: %s\n", e.what());
    report_current_input("uncaught exception");
    std::exit(1);
  } catch (...) {
    std::fprintf(stderr, "\nweft fuzz: FAILURE: uncaught exception of unknown type\n");
    report_current_input("uncaught exception");
    std::exit(1);
  }
  g_started_ns.store(0, std::memory_order_release);
  g_in_input.store(false);
  g_run = run + 1;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> read_corpus(const std::string& dir) {
  std::vector<std::string> corpus;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return corpus;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());  // the order, and so the run, must not depend on the file system
  for (const auto& f : files) corpus.push_back(read_file(f));
  return corpus;
}

// libFuzzer's dictionary format: one token per line, `"..."` or `name="..."`, with \\, \" and \xNN.
std::vector<std::string> read_dict(const std::string& path) {
  std::vector<std::string> tokens;
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return tokens;
  std::istringstream lines(read_file(path));
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t open = line.find('"');
    const std::size_t close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
    std::string token;
    for (std::size_t i = open + 1; i < close; ++i) {
      if (line[i] == '\\' && i + 1 < close) {
        if (line[i + 1] == 'x' && i + 3 < close) {
          token += static_cast<char>(std::strtol(line.substr(i + 2, 2).c_str(), nullptr, 16));
          i += 3;
        } else {
          token += line[++i];
        }
      } else {
        token += line[i];
      }
    }
    tokens.push_back(token);
  }
  return tokens;
}

class Mutator {
 public:
  Mutator(std::vector<std::string> dict, std::size_t max_len) : dict_(std::move(dict)), max_len_(max_len) {}

  std::string mutate(std::string s, weft::fuzz::Rng& rng, const std::vector<std::string>& pool) const {
    const int rounds = 1 + static_cast<int>(rng.below(4));
    for (int r = 0; r < rounds; ++r) mutate_once(s, rng, pool);
    if (s.size() > max_len_) s.resize(max_len_);
    return s;
  }

 private:
  void mutate_once(std::string& s, weft::fuzz::Rng& rng, const std::vector<std::string>& pool) const {
    const auto pos = [&](std::size_t extra) { return static_cast<std::size_t>(rng.below(s.size() + extra)); };
    switch (rng.below(9)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pos(0)] ^= static_cast<char>(1 << rng.below(8));
        break;
      case 1:  // a random byte
        if (!s.empty()) s[pos(0)] = static_cast<char>(rng.below(256));
        else s += static_cast<char>(rng.below(256));
        break;
      case 2:  // insert a byte, usually printable: the formats are text
        s.insert(pos(1), 1, rng.chance(3, 4) ? static_cast<char>(rng.range(32, 126)) : static_cast<char>(rng.below(256)));
        break;
      case 3:  // erase a range
        if (!s.empty()) {
          const std::size_t at = pos(0);
          s.erase(at, 1 + rng.below(std::min<std::size_t>(8, s.size() - at)));
        }
        break;
      case 4:  // duplicate a range
        if (!s.empty()) {
          const std::size_t at = pos(0);
          const std::string piece = s.substr(at, 1 + rng.below(std::min<std::size_t>(16, s.size() - at)));
          s.insert(pos(1), piece);
        }
        break;
      case 5:  // a dictionary token
        if (!dict_.empty()) {
          const std::string& token = rng.pick(dict_);
          if (rng.chance(1, 2) && !s.empty()) s.replace(pos(0), std::min<std::size_t>(token.size(), 4), token);
          else s.insert(pos(1), token);
        }
        break;
      case 6:  // a number replaced by a boundary value
        replace_number(s, rng);
        break;
      case 7:  // splice with another input
        if (!pool.empty()) {
          const std::string& other = rng.pick(pool);
          if (!other.empty()) {
            const std::size_t from = static_cast<std::size_t>(rng.below(other.size()));
            const std::size_t len = 1 + static_cast<std::size_t>(rng.below(other.size() - from));
            s.insert(pos(1), other.substr(from, len));
          }
        }
        break;
      default:  // swap two bytes
        if (s.size() > 1) std::swap(s[pos(0)], s[pos(0)]);
        break;
    }
  }

  static void replace_number(std::string& s, weft::fuzz::Rng& rng) {
    static const char* const values[] = {"0", "1", "-1", "2", "3", "7", "64", "127", "128", "255", "256",
                                         "4096", "65536", "2147483647", "2147483648", "-2147483648",
                                         "-2147483649", "4294967295", "4294967296", "1073741824",
                                         "9223372036854775807", "-9223372036854775808",
                                         "99999999999999999999", "1e308", "-0", "0.5", "nan"};
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i] >= '0' && s[i] <= '9' && (i == 0 || s[i - 1] < '0' || s[i - 1] > '9')) starts.push_back(i);
    if (starts.empty()) return;
    const std::size_t at = rng.pick(starts);
    std::size_t end = at;
    while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
    s.replace(at, end - at, rng.pick(values));
  }

  std::vector<std::string> dict_;
  std::size_t max_len_;
};

[[noreturn]] void usage(const char* argv0, int status = 2) {
  std::fprintf(status == 0 ? stdout : stderr,
               "usage: %s [--seed S] [--seconds X] [--runs N] [--timeout T] [--corpus DIR] [--dict FILE]\n"
               "          [--max-len N] [--artifact FILE] [--no-balance] [--no-huge-blocks]\n"
               "          [--no-sequential-once] [--known-bugs ID,...] [--verbose]\n"
               "       %s --replay FILE...\n",
               argv0, argv0);
  std::exit(status);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    if (a == "--seed") o.seed = std::strtoull(value().c_str(), nullptr, 0);
    else if (a == "--seconds") o.seconds = std::strtod(value().c_str(), nullptr);
    else if (a == "--runs") o.runs = std::strtoll(value().c_str(), nullptr, 0);
    else if (a == "--timeout") o.timeout = std::strtod(value().c_str(), nullptr);
    else if (a == "--corpus") o.corpus = value();
    else if (a == "--dict") o.dict = value();
    else if (a == "--max-len") o.max_len = std::strtoull(value().c_str(), nullptr, 0);
    else if (a == "--artifact") o.artifact = value();
    else if (a == "--verbose") o.verbose = true;
    // The targets read their switches from the environment, so libFuzzer builds take them too.
    else if (a == "--no-balance") ::setenv("WEFT_FUZZ_BALANCE", "0", 1);
    else if (a == "--no-huge-blocks") ::setenv("WEFT_FUZZ_HUGE_BLOCKS", "0", 1);
    else if (a == "--no-sequential-once") ::setenv("WEFT_FUZZ_SEQUENTIAL_ONCE", "0", 1);
    else if (a == "--known-bugs") ::setenv("WEFT_FUZZ_KNOWN_BUGS", value().c_str(), 1);
    else if (a == "--help" || a == "-h") usage(argv[0], 0);
    else if (a == "--replay") {
      while (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) o.replay.push_back(argv[++i]);
      if (o.replay.empty()) usage(argv[0]);
    } else usage(argv[0]);
  }
  if (o.seconds < 0 && o.runs < 0) o.seconds = 10;
  if (o.max_len == 0 || o.max_len > kMaxInput) o.max_len = kMaxInput;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const weft::fuzz::Target& target = weft::fuzz::target();
  std::snprintf(g_name, sizeof g_name, "%s", target.name);
  const std::string artifact =
      options.artifact.empty() ? "fuzz-" + std::string(target.name) + "-failure.bin" : options.artifact;
  std::snprintf(g_artifact, sizeof g_artifact, "%s", artifact.c_str());
  install_handlers();
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  start_watchdog(options.timeout);

  if (!options.replay.empty()) {
    g_artifact[0] = '\0';  // the input is already in a file
    long long run = 0;
    for (const auto& file : options.replay) {
      run_one(read_file(file), run++);
      std::printf("replayed %s: ok\n", file.c_str());
    }
    std::printf("fuzz %s: %lld runs, 0 failures\n", target.name, run);
    return 0;
  }

  const auto begin = Clock::now();
  const auto out_of_budget = [&](long long run) {
    if (options.runs >= 0 && run >= options.runs) return true;
    return options.seconds >= 0 &&
           std::chrono::duration<double>(Clock::now() - begin).count() >= options.seconds;
  };

  const std::vector<std::string> corpus = read_corpus(options.corpus);
  const Mutator mutator(read_dict(options.dict), options.max_len);
  weft::fuzz::Rng rng(options.seed);
  long long run = 0;
  // Regressions first: every committed input as it is.
  for (const std::string& input : corpus) {
    if (out_of_budget(run)) break;
    run_one(input, run++);
  }
  // Earlier inputs to mutate, kept small and rotated so that memory stays flat.
  std::vector<std::string> recent;
  constexpr std::size_t kRecent = 64;
  std::vector<std::string> pool = corpus;
  long long generated = 0, mutated = 0;
  while (!out_of_budget(run)) {
    std::string input;
    const auto roll = rng.below(100);
    if (roll < 60 || (corpus.empty() && recent.empty())) {
      input = target.generate(rng);
      ++generated;
      if (recent.size() < kRecent) recent.push_back(input);
      else recent[static_cast<std::size_t>(rng.below(kRecent))] = input;
    } else {
      const std::string& base = roll < 85 && !corpus.empty() ? rng.pick(corpus) : rng.pick(recent.empty() ? corpus : recent);
      pool.resize(corpus.size());
      pool.insert(pool.end(), recent.begin(), recent.end());
      input = mutator.mutate(base, rng, pool);
      ++mutated;
    }
    if (input.size() > options.max_len) input.resize(options.max_len);
    run_one(input, run++);
    if (options.verbose && run % 1000 == 0)
      std::fprintf(stderr, "fuzz %s: %lld runs (%lld generated, %lld mutated)\n", target.name, run, generated, mutated);
  }
  std::printf("fuzz %s: %lld runs, 0 failures\n", target.name, run);
  return 0;
}
