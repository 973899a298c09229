#include "resnet50_layers.hpp"

#include <cerrno>
#include <cstdint>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include <weft/jit/error.hpp>

namespace weft::samples {
namespace {

constexpr const char* kShapeFields[] = {"id", "name", "H", "W", "C", "K", "R", "S", "stride", "pad", "count"};
constexpr const char* kFwdFields[] = {"bc",      "bk",        "h_block",    "w_block",        "c_block",
                                      "k_block", "h_in_gemm", "pack_input", "logical_padding"};
constexpr const char* kBwdFields[] = {"bc", "bk", "h_block", "w_block", "c_block", "k_block", "h_in_gemm"};
constexpr std::size_t kUpdKnobs = 13;

// The words of one '|'-separated part of a line, and where the line is, for the messages.
class Fields {
 public:
  Fields(std::string_view text, std::string where) : where_(std::move(where)) {
    std::istringstream words{std::string(text)};
    for (std::string word; words >> word;) words_.push_back(word);
  }

  std::size_t size() const { return words_.size(); }
  const std::string& word(std::size_t i) const { return words_[i]; }

  [[noreturn]] void fail(const std::string& what) const { throw Error(where_ + ": " + what); }

  // Word i as an integer in [min, 2^31 - 1] (no sum of sizes overflows); `name` says which field it is.
  std::int64_t integer(std::size_t i, const char* name, std::int64_t min) const {
    const std::string& w = words_[i];
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), value);
    if (ec != std::errc{} || end != w.data() + w.size()) fail(std::string(name) + " is '" + w + "', not an integer");
    if (value < min) fail(std::string(name) + " is " + w + ", must be at least " + std::to_string(min));
    if (value > INT32_MAX) fail(std::string(name) + " is " + w + ", more than " + std::to_string(INT32_MAX));
    return value;
  }

  // Requires the named fields after the first `first` words, and nothing more; `needs` starts the
  // message ("fwd needs 9 numbers after its loop string").
  template <std::size_t N>
  void require_count(std::size_t first, const char* const (&names)[N], const std::string& needs) const {
    if (words_.size() != first + N) {
      std::string list;
      for (const char* n : names) list += std::string(" ") + n;
      fail(needs + " (" + list.substr(1) + "), got " + std::to_string(words_.size() - first));
    }
  }

 private:
  std::string where_;
  std::vector<std::string> words_;
};

void read_shape(const Fields& f, int expected_id, ConvLayer& layer) {
  f.require_count(0, kShapeFields, "a layer needs 11 fields");
  layer.id = static_cast<int>(f.integer(0, "id", 1));
  if (layer.id != expected_id) {
    f.fail("ids count up from 1 in file order: expected " + std::to_string(expected_id) + ", got " +
           std::to_string(layer.id));
  }
  layer.name = f.word(1);
  layer.H = f.integer(2, "H", 1);
  layer.W = f.integer(3, "W", 1);
  layer.C = f.integer(4, "C", 1);
  layer.K = f.integer(5, "K", 1);
  layer.R = f.integer(6, "R", 1);
  layer.S = f.integer(7, "S", 1);
  layer.stride = f.integer(8, "stride", 1);
  layer.pad = f.integer(9, "pad", 0);
  layer.count = static_cast<int>(f.integer(10, "count", 1));
  if (layer.H + 2 * layer.pad < layer.R || layer.W + 2 * layer.pad < layer.S) {
    f.fail("the " + std::to_string(layer.R) + "x" + std::to_string(layer.S) + " filter does not fit in the " +
           std::to_string(layer.H) + "x" + std::to_string(layer.W) + " input padded by " + std::to_string(layer.pad));
  }
}

// Block counts and sizes are >= 1; pack_input and logical_padding are flags (0 or 1).
std::int64_t choice_value(const Fields& f, std::size_t i, const char* name) {
  const bool flag = std::strcmp(name, "pack_input") == 0 || std::strcmp(name, "logical_padding") == 0;
  const std::int64_t v = f.integer(i, name, flag ? 0 : 1);
  if (flag && v > 1) f.fail(std::string(name) + " is " + f.word(i) + ", must be 0 or 1");
  return v;
}

FwdChoice read_fwd(const Fields& f) {
  f.require_count(2, kFwdFields, "fwd needs 9 numbers after its loop string");
  std::int64_t v[std::size(kFwdFields)];
  for (std::size_t i = 0; i < std::size(kFwdFields); ++i) v[i] = choice_value(f, 2 + i, kFwdFields[i]);
  return {f.word(1), v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
}

BwdChoice read_bwd(const Fields& f) {
  f.require_count(2, kBwdFields, "bwd needs 7 numbers after its loop string");
  std::int64_t v[std::size(kBwdFields)];
  for (std::size_t i = 0; i < std::size(kBwdFields); ++i) v[i] = choice_value(f, 2 + i, kBwdFields[i]);
  return {f.word(1), v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
}

UpdChoice read_upd(const Fields& f) {
  if (f.size() != 4 + kUpdKnobs) {
    f.fail("upd needs " + std::to_string(2 + kUpdKnobs) + " numbers after its loop string (bc bk and conv_upd's " +
           std::to_string(kUpdKnobs) + " bf16 knobs), got " + std::to_string(f.size() - 2));
  }
  UpdChoice c{f.word(1), f.integer(2, "bc", 1), f.integer(3, "bk", 1), {}};
  for (std::size_t i = 0; i < kUpdKnobs; ++i) {
    c.bf16_knobs.push_back(f.integer(4 + i, ("bf16 knob " + std::to_string(i + 1)).c_str(), 0));
  }
  return c;
}

// One "| pass LOOP values..." part, or "| pass -" for a pass the scripts do not run. `seen`: the
// passes of the line so far.
void read_pass(const Fields& f, ConvLayer& layer, std::vector<std::string>& seen) {
  if (f.size() == 0) f.fail("an empty part between '|'; expected 'fwd', 'bwd' or 'upd' and its settings");
  const std::string& pass = f.word(0);
  if (pass != "fwd" && pass != "bwd" && pass != "upd") {
    f.fail("unknown pass '" + pass + "'; the passes are fwd, bwd and upd");
  }
  for (const std::string& p : seen) {
    if (p == pass) f.fail("pass " + pass + " is given twice");
  }
  seen.push_back(pass);
  if (f.size() < 2) f.fail(pass + " needs a loop string and its settings, or '-'");
  if (f.word(1) == "-") {
    if (f.size() != 2) f.fail(pass + " - takes nothing after the '-'");
    return;
  }
  if (pass == "fwd") layer.fwd = read_fwd(f);
  if (pass == "bwd") layer.bwd = read_bwd(f);
  if (pass == "upd") layer.upd = read_upd(f);
}

}  // namespace

std::vector<ConvLayer> parse_resnet50_layers(std::istream& in, const std::string& source) {
  std::vector<ConvLayer> layers;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view text(line);
    text = text.substr(0, text.find('#'));
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = source + ":" + std::to_string(number);
    ConvLayer layer;
    std::vector<std::string> passes;
    std::size_t start = 0;
    for (bool first = true;; first = false) {
      const std::size_t bar = text.find('|', start);
      const std::size_t length = bar == std::string_view::npos ? std::string_view::npos : bar - start;
      const Fields part(text.substr(start, length), where);
      if (first) {
        read_shape(part, static_cast<int>(layers.size()) + 1, layer);
      } else {
        read_pass(part, layer, passes);
      }
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    layers.push_back(std::move(layer));
  }
  if (in.bad()) throw Error(source + ": read error");
  if (layers.empty()) throw Error(source + ": no layers (every line is empty or a comment)");
  return layers;
}

std::vector<ConvLayer> read_resnet50_layers(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open the ResNet-50 layer list '" + path + "': " + std::strerror(errno));
  return parse_resnet50_layers(in, path);
}

}  // namespace weft::samples
