#include "fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <cstdlib>
#include <algorithm>
#include <limits>

namespace weft::fuzz {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t n) {
  if (n == 0) return 0;
  // Rejection keeps it exactly uniform; the loop almost never repeats.
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t x;
  do x = next();
  while (x >= limit);
  return x % n;
}

std::int64_t Rng::range(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span == std::numeric_limits<std::uint64_t>::max()) return static_cast<std::int64_t>(next());
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + below(span + 1));
}

std::uint64_t hash_bytes(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ULL;
  return h;
}

void fail(const std::string& message) {
  std::fprintf(stderr, "\nweft fuzz: FAILURE: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const std::string_view s(v);
  return !(s == "0" || s == "off" || s == "false" || s == "no");
}

bool known_bug(std::string_view id) {
  const char* v = std::getenv("WEFT_FUZZ_KNOWN_BUGS");
  if (v == nullptr) return false;
  const std::string_view list(v);
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t end = list.find(',', pos);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(pos, end - pos) == id) return true;
    pos = end + 1;
  }
  return false;
}

Fields::Fields(std::string_view text, std::string_view rest_key) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      const std::string_view key = line.substr(0, eq);
      if (!rest_key.empty() && key == rest_key) {
        std::string_view rest = text.substr(pos + eq + 1);
        if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
        fields_.emplace_back(key, rest);
        return;
      }
      fields_.emplace_back(key, line.substr(eq + 1));
    }
    pos = end + 1;
  }
}

bool Fields::has(std::string_view key) const {
  for (const auto& [k, v] : fields_)
    if (k == key) return true;
  return false;
}

std::string_view Fields::get(std::string_view key) const {
  for (const auto& [k, v] : fields_)
    if (k == key) return v;
  return {};
}

std::vector<std::string_view> Fields::get_all(std::string_view key) const {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : fields_)
    if (k == key) out.push_back(v);
  return out;
}

std::vector<std::int64_t> int_list(std::string_view text) {
  std::vector<std::int64_t> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_digit(text[i])) {
      ++i;
      continue;
    }
    const bool negative = i > 0 && text[i - 1] == '-';
    // Accumulated as a negative number, whose range includes INT64_MIN.
    std::int64_t value = 0;
    bool saturated = false;
    for (; i < text.size() && is_digit(text[i]); ++i) {
      const int digit = text[i] - '0';
      if (saturated) continue;
      if (value < (std::numeric_limits<std::int64_t>::min() + digit) / 10) {
        saturated = true;
        continue;
      }
      value = value * 10 - digit;
    }
    if (saturated) {
      out.push_back(negative ? std::numeric_limits<std::int64_t>::min()
                             : std::numeric_limits<std::int64_t>::max());
    } else if (negative) {
      out.push_back(value);
    } else {
      out.push_back(value == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max()
                                                                      : -value);
    }
  }
  return out;
}

std::int64_t first_int(std::string_view text, std::int64_t fallback) {
  const auto v = int_list(text);
  return v.empty() ? fallback : v.front();
}

std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  return r;
}

std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return a < 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  return r;
}

std::string to_hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    out += digits[u >> 4];
    out += digits[u & 15];
  }
  return out;
}

std::string to_printable(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || (u >= 0x20 && u < 0x7f && c != '\\')) {
      out += c;
    } else {
      out += "\\x";
      out += digits[u >> 4];
      out += digits[u & 15];
    }
  }
  return out;
}

constexpr unsigned char kCanary = 0xa5;

template <class T>
Guarded<T>::Guarded(std::size_t count) : count_(count) {
  page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t bytes = count * sizeof(T);
  const std::size_t inner = std::max<std::size_t>(page_, (bytes + page_ - 1) / page_ * page_);
  total_ = inner + 2 * page_;
  void* p = ::mmap(nullptr, total_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<unsigned char*>(p);
  if (::mprotect(base_ + page_, inner, PROT_READ | PROT_WRITE) != 0) {
    ::munmap(base_, total_);
    throw std::bad_alloc();
  }
  slack_begin_ = base_ + page_;
  data_ = reinterpret_cast<T*>(base_ + page_ + inner - bytes);
  std::memset(slack_begin_, kCanary, static_cast<std::size_t>(reinterpret_cast<unsigned char*>(data_) - slack_begin_));
}

template <class T>
Guarded<T>::~Guarded() { ::munmap(base_, total_); }

template <class T>
bool Guarded<T>::canary_intact() const {
  for (const unsigned char* p = slack_begin_; p < reinterpret_cast<const unsigned char*>(data_); ++p)
    if (*p != kCanary) return false;
  return true;
}

template class Guarded<float>;
template class Guarded<double>;

}  // namespace weft::fuzz
