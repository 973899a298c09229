// Fuzz target: the tuning database reader (weft/tuner/tuning_database.hpp). The input is the file's
// contents, JSON Lines as tuners write them, damaged in every way a crash, a disk or a person can.
//
// Properties, from the header's contract ("readers skip lines that do not parse"):
// - load() never throws for a readable file; records + skipped_lines = the lines with something
//   other than blanks (' ', '\t', '\r'); the records are, in file order, exactly the lines that
//   parse_json_line() accepts; parse_json_line() throws nothing but weft::Error;
// - a record read back survives to_json_line() -> parse_json_line() unchanged;
// - append() after any contents adds exactly one record, even when the last line lacks its newline;
// - lookup() never throws and returns a record of the file that matches the key.
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "weft/jit/error.hpp"
#include "weft/tuner/tuning_database.hpp"

namespace {

using weft::fuzz::check;
using weft::fuzz::fail;
using weft::tuner::TuningDatabase;
using weft::tuner::TuningRecord;

bool same(const TuningRecord& a, const TuningRecord& b) {
  const auto same_double = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  return a.key == b.key && a.machine == b.machine && a.weft_version == b.weft_version && a.config == b.config &&
         same_double(a.gflops, b.gflops) && same_double(a.default_gflops, b.default_gflops) &&
         a.unix_time == b.unix_time && a.tuner == b.tuner;
}

// The file lives in memory: no temporary files, nothing left behind by a crash.
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("weft-fuzz-tuning-db", MFD_CLOEXEC)) {
    if (fd_ < 0) fail("memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  void write(std::string_view contents) const {
    if (::ftruncate(fd_, 0) != 0) fail("ftruncate failed");
    std::size_t done = 0;
    while (done < contents.size()) {
      const ssize_t n = ::pwrite(fd_, contents.data() + done, contents.size() - done, static_cast<off_t>(done));
      if (n <= 0) fail("pwrite failed");
      done += static_cast<std::size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

const MemoryFile& memory_file() {
  static const MemoryFile file;
  return file;
}

std::string excerpt(std::string_view text) {
  return weft::fuzz::to_printable(text.substr(0, 300)) + (text.size() > 300 ? "..." : "");
}

void run_case(std::string_view contents) {
  const MemoryFile& file = memory_file();
  file.write(contents);
  const TuningDatabase db(file.path());

  // What the reader should make of each line, line by line.
  std::vector<TuningRecord> expected;
  std::size_t nonblank = 0;
  std::size_t start = 0;
  while (start < contents.size()) {
    std::size_t end = contents.find('\n', start);
    if (end == std::string_view::npos) end = contents.size();
    const std::string_view line = contents.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++nonblank;
    try {
      expected.push_back(weft::tuner::parse_json_line(line));
    } catch (const weft::Error&) {
      continue;
    } catch (const std::exception& e) {
      fail("parse_json_line threw a non-weft exception: " + std::string(e.what()) + "\nline: " + excerpt(line));
    }
    // A record read back is written out and read again unchanged.
    const TuningRecord& r = expected.back();
    std::string json;
    try {
      json = weft::tuner::to_json_line(r);
    } catch (const std::exception& e) {
      fail("to_json_line threw on a record parse_json_line accepted: " + std::string(e.what()) + "\nline: " + excerpt(line));
    }
    try {
      check(same(weft::tuner::parse_json_line(json), r),
            [&] { return "a record changes through to_json_line: " + excerpt(line) + "\n  became " + excerpt(json); });
    } catch (const weft::Error& e) {
      fail("a record parse_json_line accepted does not parse once written by to_json_line: " + std::string(e.what()) +
           "\nline: " + excerpt(line) + "\nwritten: " + excerpt(json));
    }
  }

  TuningDatabase::Contents loaded;
  try {
    loaded = db.load();
  } catch (const std::exception& e) {
    fail("load() threw on a readable file: " + std::string(e.what()));
  }
  check(loaded.records.size() == expected.size() && loaded.records.size() + loaded.skipped_lines == nonblank, [&] {
    return "load() gave " + std::to_string(loaded.records.size()) + " records and " + std::to_string(loaded.skipped_lines) +
           " skipped lines; the file has " + std::to_string(nonblank) + " non-blank lines of which " +
           std::to_string(expected.size()) + " parse";
  });
  for (std::size_t i = 0; i < expected.size(); ++i)
    check(same(loaded.records[i], expected[i]), [&] { return "record " + std::to_string(i) + " differs from its line"; });

  // lookup(): by the key of a record in the file (when there is one) and of none.
  const weft::tuner::MachineFingerprint machine =
      expected.empty() ? weft::tuner::MachineFingerprint{} : expected.front().machine;
  const std::string version = expected.empty() ? std::string("0") : expected.front().weft_version;
  const weft::tuner::WorkloadKey key = expected.empty() ? weft::tuner::WorkloadKey{} : expected.front().key;
  try {
    const TuningDatabase::Lookup hit = db.lookup(key, machine, version);
    if (hit.match != TuningDatabase::Match::none) {
      check(hit.record.has_value() && hit.record->machine == machine && hit.record->weft_version == version &&
                hit.record->key.kind == key.kind && hit.record->key.threads == key.threads,
            [&] { return "lookup() returned a record that does not match the key"; });
      check(hit.match != TuningDatabase::Match::exact || hit.record->key.shape == key.shape,
            [&] { return "lookup() called a record of another shape exact"; });
    }
    bool positive_shape = !expected.empty();
    for (const auto& [name, size] : key.shape) positive_shape = positive_shape && size > 0;
    if (positive_shape)
      check(hit.match == TuningDatabase::Match::exact, [&] { return "lookup() missed the key of a record in the file"; });
  } catch (const std::exception& e) {
    fail("lookup() threw: " + std::string(e.what()));
  }

  // append() after whatever is there: one more record, nothing else changes.
  if (contents.size() > 8192) return;
  TuningRecord added;
  added.key = {"fuzz", {{"M", 7}}, "fp32", 1};
  added.weft_version = "fuzz";
  added.config.loop_string = "aB";
  added.gflops = 1.5;
  try {
    db.append(added);
    const TuningDatabase::Contents after = db.load();
    check(after.records.size() == loaded.records.size() + 1 && after.skipped_lines == loaded.skipped_lines &&
              same(after.records.back(), added),
          [&] {
            return "append() after this file gave " + std::to_string(after.records.size()) + " records, " +
                   std::to_string(after.skipped_lines) + " skipped (before: " + std::to_string(loaded.records.size()) +
                   ", " + std::to_string(loaded.skipped_lines) + ")";
          });
  } catch (const std::exception& e) {
    fail("append() or the load after it threw: " + std::string(e.what()));
  }
}

// ---------------------------------------------------------------------------------------------
// The structured generator: records as tuners write them, then damaged.

using weft::fuzz::Rng;

std::string word(Rng& rng) {
  static const char* const words[] = {"gemm_fwd", "contraction", "fp32", "avx2", "avx512", "AMD EPYC", "bcaBCb",
                                      "", "\u00e9\u00e8", "a\\\"b", "x\\u0000y", "\\ud800"};
  return rng.pick(words);
}

std::string number(Rng& rng) {
  static const char* const odd[] = {"0", "-1", "1e308", "1e999", "-1e999", "2147483648", "9223372036854775807",
                                    "18446744073709551615", "1.5", "-0.0", "1E5", "3.0e-400", "true", "null", "\"7\"",
                                    "[]", "{}", "9223372036854775808", "-9223372036854775809"};
  return rng.chance(1, 5) ? rng.pick(odd) : std::to_string(rng.range(0, 4096));
}

std::string record(Rng& rng) {
  TuningRecord r;
  r.key.kind = rng.chance(1, 2) ? "gemm_fwd" : "contraction";
  r.key.shape = {{"M", rng.range(1, 4096)}, {"N", rng.range(1, 4096)}, {"K", rng.range(1, 4096)}};
  r.key.threads = static_cast<int>(rng.range(1, 8));
  r.machine.cpu_model = "cpu";
  r.machine.isa = rng.chance(1, 2) ? "avx2" : "avx512";
  r.machine.logical_cpus = 2;
  r.machine.l1d_bytes = 32768;
  r.weft_version = "0.1.0";
  r.config.loop_string = "bcaBCb";
  r.config.blocks = {{}, {8}, {4}};
  r.config.knobs = {{"bm", 64}, {"bn", 32}};
  r.gflops = static_cast<double>(rng.range(1, 100000)) / 7.0;
  r.unix_time = rng.range(0, 2000000000);
  r.tuner = "fuzz";
  return weft::tuner::to_json_line(r);
}

// Replaces the value after one `"name":` with something else.
std::string damage(std::string line, Rng& rng) {
  std::vector<std::size_t> colons;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == ':' && i > 0 && line[i - 1] == '"') colons.push_back(i);
  switch (rng.below(8)) {
    case 0:  // truncated, as by a crashed writer
      line.resize(static_cast<std::size_t>(rng.below(line.size() + 1)));
      break;
    case 1:
    case 2:
      if (!colons.empty()) {
        const std::size_t at = rng.pick(colons) + 1;
        std::size_t end = at;
        int depth = 0;
        bool in_string = false;
        for (; end < line.size(); ++end) {
          const char ch = line[end];
          if (in_string) {
            if (ch == '\\') ++end;
            else if (ch == '"') in_string = false;
            continue;
          }
          if (ch == '"') in_string = true;
          else if (ch == '[' || ch == '{') ++depth;
          else if (ch == ']' || ch == '}') {
            if (depth == 0) break;
            --depth;
          } else if (ch == ',' && depth == 0) break;
        }
        line.replace(at, end - at, rng.chance(1, 2) ? number(rng) : "\"" + word(rng) + "\"");
      }
      break;
    case 3:  // a field removed
      if (!colons.empty()) {
        const std::size_t at = rng.pick(colons);
        const std::size_t begin = line.rfind('"', at - 2);
        const std::size_t end = line.find(',', at);
        if (begin != std::string::npos && end != std::string::npos) line.erase(begin, end - begin + 1);
      }
      break;
    case 4:  // deep nesting
      line.insert(static_cast<std::size_t>(rng.below(line.size() + 1)),
                  std::string(static_cast<std::size_t>(rng.range(1, 3000)), rng.chance(1, 2) ? '[' : '{'));
      break;
    case 5:  // a byte that is not UTF-8, or a control character
      line.insert(static_cast<std::size_t>(rng.below(line.size() + 1)), 1, static_cast<char>(rng.chance(1, 2) ? 0xff : rng.below(32)));
      break;
    case 6:  // duplicated key
      if (line.size() > 2) line.insert(1, "\"format\":1,");
      break;
    default:  // a second record glued on, or a carriage return
      line += rng.chance(1, 2) ? record(rng) : std::string("\r");
      break;
  }
  return line;
}

std::string generate(Rng& rng) {
  std::string out;
  const int lines = static_cast<int>(rng.below(6));
  for (int i = 0; i < lines; ++i) {
    std::string line = record(rng);
    if (rng.chance(1, 2)) line = damage(line, rng);
    if (rng.chance(1, 2)) line = damage(line, rng);
    if (rng.chance(1, 10)) line = std::string(static_cast<std::size_t>(rng.below(4)), rng.chance(1, 2) ? ' ' : '\t');
    out += line;
    if (i + 1 < lines || rng.chance(3, 4)) out += rng.chance(1, 10) ? "\r\n" : "\n";
  }
  return out;
}

}  // namespace

namespace weft::fuzz {
const Target& target() {
  static const Target t{"tuning_database", &::generate};
  return t;
}
}  // namespace weft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_case(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
