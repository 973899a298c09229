#include "weft/tuner/tuning_database.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "weft/jit/error.hpp"
#include "weft/jit/log.hpp"

namespace weft::tuner {
namespace {

using nlohmann::json;

constexpr int kFormatVersion = 1;

std::mutex& path_mutex() {
  static std::mutex m;
  return m;
}
std::filesystem::path& overridden_path() {
  static std::filesystem::path p;
  return p;
}

[[noreturn]] void fail_io(const std::string& what, const std::filesystem::path& path) {
  throw Error("tuning database " + path.string() + ": " + what + ": " + std::strerror(errno));
}

// Closes the descriptor (and so releases its flock) on every path out.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

json to_json(const WorkloadKey& k) {
  json shape = json::array();
  for (const auto& [name, size] : k.shape) shape.push_back({name, size});
  json key = {{"kind", k.kind}, {"shape", shape}, {"dtype", k.dtype}, {"threads", k.threads}};
  if (!k.tiles.empty()) {  // a free search's record keeps the format of the records before tiles
    json tiles = json::array();
    for (const auto& [name, size] : k.tiles) tiles.push_back({name, size});
    key["tiles"] = tiles;
  }
  return key;
}

json to_json(const MachineFingerprint& m) {
  return {{"cpu", m.cpu_model}, {"isa", m.isa},          {"cpus", m.logical_cpus},
          {"l1d", m.l1d_bytes}, {"l2", m.l2_bytes},      {"l3", m.l3_bytes}};
}

json to_json(const TunedConfig& c) {
  json knobs = json::array();
  for (const auto& [name, value] : c.knobs) knobs.push_back({name, value});
  return {{"loop_string", c.loop_string}, {"blocks", c.blocks}, {"knobs", knobs}};
}

// An integer field, range-checked: json's get<int>() converts a float (1e300) or an integer out of
// the target's range with a cast whose result is undefined or wrapped.
template <class T>
T integer(const json& j, const char* field) {
  if (j.is_number_unsigned() && std::in_range<T>(j.get<std::uint64_t>())) return static_cast<T>(j.get<std::uint64_t>());
  if (j.is_number_integer() && !j.is_number_unsigned() && std::in_range<T>(j.get<std::int64_t>()))
    return static_cast<T>(j.get<std::int64_t>());
  throw Error(std::string("field \"") + field + "\" is " + j.dump() + ", not an integer in " +
              std::to_string(std::numeric_limits<T>::min()) + ".." + std::to_string(std::numeric_limits<T>::max()));
}

// A [name, integer] pair of a shape or of the knobs.
std::pair<std::string, long> named_integer(const json& j, const char* field) {
  return {j.at(0).get<std::string>(), integer<long>(j.at(1), field)};
}

// A file's problems are the user's to fix, but a tuning database only speeds things up: its
// readers go on without the records they cannot read. Said once per file and process, not per
// lookup. `problem` starts with "tuning database <path>: ", as the errors of load() do.
void warn_once(const std::filesystem::path& path, const std::string& problem) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  {
    const std::lock_guard lock(mutex);
    if (!warned.insert(path.string()).second) return;
  }
  log().warn("{}; going on without those records (this warning is given once per file)", problem);
}

double shape_distance(const WorkloadKey& a, const WorkloadKey& b) {
  if (a.shape.size() != b.shape.size()) return INFINITY;
  double d = 0;
  for (std::size_t i = 0; i < a.shape.size(); ++i) {
    const long x = a.shape[i].second, y = b.shape[i].second;
    if (a.shape[i].first != b.shape[i].first || x < 0 || y < 0) return INFINITY;
    if (x == y) continue;  // equal sizes, zeros too (a convolution's padding 0): an exact match
    // Sizes are compared by ratio; with a zero among them (padding 0 vs 1) by the ratio of size + 1.
    const double shift = x == 0 || y == 0 ? 1.0 : 0.0;
    d += std::abs(std::log((static_cast<double>(x) + shift) / (static_cast<double>(y) + shift)));
  }
  return d;
}

}  // namespace

std::string to_json_line(const TuningRecord& r) {
  const json j = {{"format", kFormatVersion},  {"key", to_json(r.key)},
                  {"machine", to_json(r.machine)}, {"weft", r.weft_version},
                  {"config", to_json(r.config)},  {"gflops", r.gflops},
                  {"default_gflops", r.default_gflops}, {"time", r.unix_time},
                  {"tuner", r.tuner}};
  return j.dump();
}

TuningRecord parse_json_line(std::string_view line) {
  try {
    const json j = json::parse(line);
    if (integer<int>(j.at("format"), "format") != kFormatVersion)
      throw Error("unknown record format " + j.at("format").dump());
    TuningRecord r;
    const json& k = j.at("key");
    r.key.kind = k.at("kind").get<std::string>();
    for (const json& s : k.at("shape")) r.key.shape.push_back(named_integer(s, "shape"));
    r.key.dtype = k.at("dtype").get<std::string>();
    r.key.threads = integer<int>(k.at("threads"), "threads");
    if (k.contains("tiles"))
      for (const json& t : k.at("tiles")) r.key.tiles.push_back(named_integer(t, "tiles"));
    const json& m = j.at("machine");
    r.machine.cpu_model = m.at("cpu").get<std::string>();
    r.machine.isa = m.at("isa").get<std::string>();
    r.machine.logical_cpus = integer<int>(m.at("cpus"), "cpus");
    r.machine.l1d_bytes = integer<std::size_t>(m.at("l1d"), "l1d");
    r.machine.l2_bytes = integer<std::size_t>(m.at("l2"), "l2");
    r.machine.l3_bytes = integer<std::size_t>(m.at("l3"), "l3");
    r.weft_version = j.at("weft").get<std::string>();
    const json& c = j.at("config");
    r.config.loop_string = c.at("loop_string").get<std::string>();
    const json& blocks = c.at("blocks");
    if (!blocks.is_array()) throw Error("field \"blocks\" is " + blocks.dump() + ", not a list of lists");
    for (const json& loop : blocks) {
      if (!loop.is_array()) throw Error("field \"blocks\" holds " + loop.dump() + ", not a list");
      std::vector<long>& sizes = r.config.blocks.emplace_back();
      for (const json& b : loop) sizes.push_back(integer<long>(b, "blocks"));
    }
    for (const json& kn : c.at("knobs")) r.config.knobs.push_back(named_integer(kn, "knobs"));
    r.gflops = j.at("gflops").get<double>();
    r.default_gflops = j.value("default_gflops", 0.0);
    r.unix_time = j.contains("time") ? integer<std::int64_t>(j.at("time"), "time") : 0;
    r.tuner = j.value("tuner", std::string{});
    return r;
  } catch (const json::exception& e) {
    throw Error(std::string("tuning record does not parse: ") + e.what());
  }
}

TuningDatabase::TuningDatabase() : path_(default_path()) {}
TuningDatabase::TuningDatabase(std::filesystem::path path) : path_(std::move(path)) {}

std::filesystem::path TuningDatabase::default_path() {
  {
    std::lock_guard lock(path_mutex());
    if (!overridden_path().empty()) return overridden_path();
  }
  if (const char* env = std::getenv("WEFT_TUNING_DB"); env && *env) return env;
  std::filesystem::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) cache = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home) cache = std::filesystem::path(home) / ".cache";
  else cache = std::filesystem::temp_directory_path();
  return cache / "weft" / "tuning.jsonl";
}

void TuningDatabase::set_default_path(std::filesystem::path path) {
  std::lock_guard lock(path_mutex());
  overridden_path() = std::move(path);
}

void TuningDatabase::append(const TuningRecord& record) const {
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  if (ec) throw Error("tuning database " + path_.string() + ": cannot create its directory: " + ec.message());
  FileDescriptor f{::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644)};
  if (f.fd < 0) fail_io("cannot open for appending", path_);
  while (::flock(f.fd, LOCK_EX) != 0)
    if (errno != EINTR) fail_io("cannot lock", path_);
  std::string line = to_json_line(record) + '\n';
  // A writer that died mid-line left no newline: start ours on a fresh line.
  struct stat st {};
  if (::fstat(f.fd, &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(f.fd, &last, 1, st.st_size - 1) == 1 && last != '\n') line.insert(line.begin(), '\n');
  }
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(f.fd, line.data() + written, line.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io("cannot write", path_);
    }
    written += static_cast<std::size_t>(n);
  }
}

TuningDatabase::Contents TuningDatabase::load() const {
  Contents contents;
  FileDescriptor f{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT) return contents;
    fail_io("cannot open for reading", path_);
  }
  while (::flock(f.fd, LOCK_SH) != 0)
    if (errno != EINTR) fail_io("cannot lock", path_);
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io("cannot read", path_);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  std::size_t start = 0, line_number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    ++line_number;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      try {
        contents.records.push_back(parse_json_line(line));
      } catch (const Error& e) {
        if (contents.skipped_lines++ == 0) {
          contents.first_bad_line = line_number;
          contents.first_bad_problem = e.what();
        }
      }
    }
    start = end + 1;
  }
  return contents;
}

TuningDatabase::Lookup TuningDatabase::lookup(const WorkloadKey& key, const MachineFingerprint& machine,
                                              std::string_view version, double max_distance) const {
  return lookup_if(
      key, [&](const TuningRecord& r) { return r.machine == machine && r.weft_version == version; }, max_distance);
}

TuningDatabase::Lookup TuningDatabase::lookup_if(const WorkloadKey& key,
                                                 const std::function<bool(const TuningRecord&)>& takes,
                                                 double max_distance) const {
  Lookup best;
  Contents contents;
  try {
    contents = load();
  } catch (const Error& e) {
    warn_once(path_, e.what());
    throw;
  }
  if (contents.skipped_lines > 0) {
    const std::size_t more = contents.skipped_lines - 1;
    warn_once(path_, "tuning database " + path_.string() + ": line " + std::to_string(contents.first_bad_line) +
                         " is no tuning record (" + contents.first_bad_problem + ")" +
                         (more == 0   ? std::string()
                          : more == 1 ? std::string(", nor is 1 later line")
                                      : ", nor are " + std::to_string(more) + " later lines"));
  }
  for (TuningRecord& r : contents.records) {
    if (r.key.kind != key.kind || r.key.dtype != key.dtype || r.key.threads != key.threads ||
        r.key.tiles != key.tiles || !takes(r))
      continue;
    const double d = shape_distance(r.key, key);
    if (d != 0 && !(d <= max_distance)) continue;
    Lookup found{d == 0 ? Match::exact : Match::nearest, std::move(r), d};
    if (is_better(found, best)) best = std::move(found);
  }
  return best;
}

bool is_better(const TuningDatabase::Lookup& a, const TuningDatabase::Lookup& b) {
  if (a.match != b.match) return a.match < b.match;  // declared best first
  if (a.match == TuningDatabase::Match::none) return false;
  if (a.distance != b.distance) return a.distance < b.distance;
  return a.record->gflops > b.record->gflops;
}

std::string_view to_string(TuningDatabase::Match match) {
  switch (match) {
    case TuningDatabase::Match::exact: return "exact";
    case TuningDatabase::Match::nearest: return "nearest";
    case TuningDatabase::Match::none: return "none";
  }
  return "?";
}

}  // namespace weft::tuner
