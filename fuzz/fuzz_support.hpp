// Shared pieces of weft's fuzz targets: a portable seeded generator, the way a target reports a
// broken property, the tolerant text decoding the targets' input formats use, and what a target
// tells our own driver (driver.cpp) about itself.
//
// A target is one .cpp file with `extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t)`,
// so it builds with clang's libFuzzer as well as with the driver. Inside it:
//
//   const auto spec = weft::fuzz::int_list(fields.get("spec"));   // never throws
//   weft::fuzz::check(count == 1, [&] { return "point visited " + std::to_string(count) + " times"; });
//
// check() prints the message and aborts: libFuzzer then saves the input, the driver prints it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::fuzz {

// splitmix64-seeded xoshiro256**: the same sequence on every platform and standard library
// (std::uniform_int_distribution differs between libstdc++ and libc++), so a seed names a run.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  // Uniform in [0, n); 0 when n == 0.
  std::uint64_t below(std::uint64_t n);
  // Uniform in [lo, hi].
  std::int64_t range(std::int64_t lo, std::int64_t hi);
  // True with probability num / den.
  bool chance(std::uint64_t num, std::uint64_t den) { return below(den) < num; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(below(v.size()))];
  }
  template <class T, std::size_t N>
  const T& pick(const T (&a)[N]) {
    return a[static_cast<std::size_t>(below(N))];
  }

 private:
  std::uint64_t s_[4];
};

// FNV-1a of the input: seeds whatever a target draws at random (tensor contents), so a replayed
// input runs exactly as it ran in the fuzzer.
std::uint64_t hash_bytes(const std::uint8_t* data, std::size_t size);

// Reports a broken property and aborts (libFuzzer and the driver both treat an abort as a failure
// of the current input).
[[noreturn]] void fail(const std::string& message);

template <class Message>
inline void check(bool ok, Message&& message) {
  if (!ok) fail(message());
}

// An environment flag: unset -> fallback; "0", "off", "false", "no" -> false; anything else true.
bool env_flag(const char* name, bool fallback);

// Whether the run tolerates an open bug, by id (WEFT_FUZZ_KNOWN_BUGS, comma-separated; the
// driver's --known-bugs sets it). Checks stay strict by default: a fix makes the id unnecessary.
bool known_bug(std::string_view id);

// `key=value` lines. A key may repeat (get_all keeps the order); a line without '=' is ignored.
// `rest_key`, when given, takes everything after it to the end of the input (with one trailing
// newline removed), so that its value may hold any bytes, newlines included.
class Fields {
 public:
  Fields(std::string_view text, std::string_view rest_key = {});
  bool has(std::string_view key) const;
  std::string_view get(std::string_view key) const;  // the first value, or empty
  std::vector<std::string_view> get_all(std::string_view key) const;

 private:
  std::vector<std::pair<std::string_view, std::string_view>> fields_;
};

// The integers in `text`, in order: runs of digits with an optional '-' right before, each
// saturated to the int64 range. Anything else separates them. Never throws.
std::vector<std::int64_t> int_list(std::string_view text);
// The first integer in `text`, or `fallback` when there is none.
std::int64_t first_int(std::string_view text, std::int64_t fallback);

// Saturating arithmetic for sizes computed from fuzzed numbers.
std::int64_t sat_mul(std::int64_t a, std::int64_t b);
std::int64_t sat_add(std::int64_t a, std::int64_t b);

// Bytes as lower-case hex, and as text with non-printable bytes written \xNN (newlines kept).
std::string to_hex(std::string_view bytes);
std::string to_printable(std::string_view bytes);

// Elements (float or double) with inaccessible pages on both sides, the elements flush against the
// trailing one, and a canary pattern in the rest of the leading page: generated kernels are not
// instrumented by the sanitizers, so an overrun faults at once and a write before the data shows
// in the canary.
template <class T>
class Guarded {
 public:
  explicit Guarded(std::size_t count);
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  ~Guarded();
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  T& operator[](std::size_t i) { return data_[i]; }
  // False when something wrote into the leading slack.
  bool canary_intact() const;

 private:
  std::size_t count_ = 0, total_ = 0, page_ = 0;
  unsigned char* base_ = nullptr;
  unsigned char* slack_begin_ = nullptr;
  T* data_ = nullptr;
};
extern template class Guarded<float>;
extern template class Guarded<double>;
using GuardedFloats = Guarded<float>;
using GuardedDoubles = Guarded<double>;

// What a target tells the driver: its name (as in fuzz/corpus/<name>/ and the final line) and a
// structured generator that mostly produces valid inputs in the target's format.
struct Target {
  const char* name;
  std::function<std::string(Rng&)> generate;
};
const Target& target();

}  // namespace weft::fuzz
