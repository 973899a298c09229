// The loop_string parser: grammar and rules of docs/loop_string.md, one error per broken rule,
// each with the position of the character at fault.
#include "weft/parlooper/loop_string.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace weft::parlooper {
namespace {

// Characters shown either side of the caret when the string is too long for one line.
constexpr std::size_t kContext = 40;
constexpr std::size_t kNone = static_cast<std::size_t>(-1);
constexpr const char* kSupportedClauses =
    "supported: schedule([modifier:]static|dynamic|guided[,chunk]) and schedule([modifier:]runtime|auto), "
    "modifiers monotonic, nonmonotonic, simd";
constexpr const char* kInlineSpecForm = "[start,end,step,(block sizes)], e.g. 'a[0,64,2,(16,4)]'";

char shown_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u >= 0x7f ? '?' : c;  // keeps the caret aligned
}

std::string shown(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), shown_char);
  return out;
}

std::string format_message(const std::string& problem, const std::string& text, std::size_t pos) {
  std::string line = shown(text);
  std::size_t caret = pos;
  if (text.size() > 2 * kContext + 1) {
    const std::size_t begin = pos > kContext ? pos - kContext : 0;
    const std::size_t end = std::min(text.size(), pos + kContext + 1);
    line = (begin > 0 ? "..." : "") + shown(std::string_view(text).substr(begin, end - begin)) +
           (end < text.size() ? "..." : "");
    caret = pos - begin + (begin > 0 ? 3 : 0);
  }
  return "loop_string: " + problem + "\n  " + line + "\n  " + std::string(caret, ' ') + "^";
}

std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (c == ' ') return "' ' (a space)";
  if (u < 0x20 || u >= 0x7f) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", u);
    return buf;
  }
  return std::string("'") + c + "'";
}

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
char letter_of(int loop, bool upper) { return static_cast<char>((upper ? 'A' : 'a') + loop); }
bool is_grid(ParKind p) { return p == ParKind::rows || p == ParKind::cols || p == ParKind::layers; }

const char* grid_dim_name(ParKind p) {
  return p == ParKind::rows ? "R" : p == ParKind::cols ? "C" : "L";
}
const char* schedule_name(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::static_: return "static";
    case ScheduleKind::dynamic: return "dynamic";
    case ScheduleKind::guided: return "guided";
    case ScheduleKind::runtime: return "runtime";
    case ScheduleKind::auto_: return "auto";
  }
  return "static";
}

bool is_schedule_modifier(std::string_view word) {
  return word == "monotonic" || word == "nonmonotonic" || word == "simd";
}

class Parser {
 public:
  Parser(std::string_view text, int num_loops) : text_(text), num_loops_(num_loops) {}

  LoopNest parse() {
    if (num_loops_ < 1 || num_loops_ > kMaxLoops)
      fail("a nest has 1 to 26 loops (letters a..z), not " + std::to_string(num_loops_), 0);
    if (text_.empty()) fail("the loop_string is empty; name every loop, e.g. \"" + example() + "\"", 0);
    nest_.num_loops = num_loops_;
    parse_items();
    if (pos_ < text_.size()) parse_clauses();
    check_every_loop_appears();
    number_occurrences();
    check_parallel_runs();
    check_grid();
    check_barriers();
    check_schedule();
    collect_inline_specs();
    nest_.canonical = canonical();
    return std::move(nest_);
  }

 private:
  [[noreturn]] void fail(std::string problem, std::size_t pos) const {
    throw LoopStringError(std::move(problem), std::string(text_), pos);
  }

  std::string example() const {
    std::string s;
    for (int i = 0; i < num_loops_; ++i) s += letter_of(i, i == 0);
    return s;
  }

  std::string letters_range() const {
    return num_loops_ == 1 ? "a" : std::string("a..") + letter_of(num_loops_ - 1, false);
  }

  void parse_items() {
    while (pos_ < text_.size() && text_[pos_] != '@') {
      const char c = text_[pos_];
      if (is_lower(c) || is_upper(c)) {
        parse_letter();
      } else if (c == '|') {
        if (nest_.levels.empty() || last_item_was_barrier_)
          fail("'|' must follow a loop letter: it puts a barrier after that loop", pos_);
        nest_.levels.back().barrier_after = true;
        barrier_pos_.back() = pos_;
        last_item_was_barrier_ = true;
        ++pos_;
      } else if (c == '{') {
        if (pos_ > 0 && text_[pos_ - 1] == ']')
          fail("the thread grid goes before the inline spec, right after the letter: 'A{R:2}[...]'",
               pos_);
        fail("a thread grid '{R:n}', '{C:n}' or '{L:n}' must follow an upper-case loop letter",
             pos_);
      } else if (c == '[') {
        fail(std::string("an inline spec ") + kInlineSpecForm +
                 " goes right after its loop letter (and its grid, if any)",
             pos_);
      } else if (is_space(c)) {
        fail("unexpected " + describe_char(c) + "; spaces are allowed only in the clauses after '@'",
             pos_);
      } else {
        fail("unexpected character " + describe_char(c) + "; a loop_string has loop letters (" +
                 letters_range() + ", upper case for parallel), grids like '{R:2}', inline specs like "
                 "'[0,8,1]', '|' and '@' clauses",
             pos_);
      }
    }
    items_end_ = pos_;
  }

  void parse_letter() {
    const char c = text_[pos_];
    const bool upper = is_upper(c);
    const int loop = upper ? c - 'A' : c - 'a';
    if (loop >= num_loops_)
      fail("letter " + describe_char(c) + " is beyond the " + std::to_string(num_loops_) +
               " loop" + (num_loops_ == 1 ? "" : "s") + " of this nest (" + letters_range() + ")",
           pos_);
    if (nest_.levels.size() >= static_cast<std::size_t>(kMaxLevels))
      fail("more than " + std::to_string(kMaxLevels) + " loop levels (letters) in one loop_string",
           pos_);
    LoopLevel level;
    level.loop = loop;
    level.par = upper ? ParKind::collapse : ParKind::none;
    letter_pos_.push_back(pos_);
    barrier_pos_.push_back(kNone);
    grid_pos_.push_back(kNone);
    ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '{') {
      if (!upper)
        fail(std::string("a thread grid splits a parallel loop: write '") + letter_of(loop, true) +
                 "{...}' instead of '" + c + "{...}'",
             pos_);
      grid_pos_.back() = pos_;
      parse_grid(level);
    }
    if (pos_ < text_.size() && text_[pos_] == '[') parse_inline_spec(loop);
    nest_.levels.push_back(level);
    last_item_was_barrier_ = false;
  }

  void parse_grid(LoopLevel& level) {
    ++pos_;  // '{'
    if (pos_ >= text_.size()) fail("unterminated thread grid: expected R, C or L after '{'", pos_);
    switch (text_[pos_]) {
      case 'R': level.par = ParKind::rows; break;
      case 'C': level.par = ParKind::cols; break;
      case 'L': level.par = ParKind::layers; break;
      default:
        fail("expected R (rows), C (columns) or L (layers) after '{', found " +
                 describe_char(text_[pos_]),
             pos_);
    }
    ++pos_;
    if (pos_ >= text_.size() || text_[pos_] != ':')
      fail(std::string("expected ':' after '{") + grid_dim_name(level.par) + "', as in '{" +
               grid_dim_name(level.par) + ":2}'",
           pos_);
    ++pos_;
    level.ways = parse_positive("the number of ways of a thread grid");
    if (pos_ >= text_.size() || text_[pos_] != '}') fail("expected '}' to close the thread grid", pos_);
    ++pos_;
  }

  // PARLOOPER's inline bounds of a loop, after one of its letters (and its grid):
  // [start,end,step] or [start,end,step,(b0,b1,...)]; an empty field keeps LoopSpecs' value.
  void parse_inline_spec(int loop) {
    const std::size_t open = pos_;
    const auto l = static_cast<std::size_t>(loop);
    if (inline_pos_[l] != kNone)
      fail(std::string("a second inline spec for loop '") + letter_of(loop, false) +
               "'; one spec gives the bounds of the whole loop (all its occurrences), so give it once",
           open);
    inline_pos_[l] = open;
    InlineSpec spec;
    spec.loop = loop;
    ++pos_;  // '['
    const auto field_given = [&] { return !at(']') && !at(','); };  // else empty: LoopSpecs' value
    if ((spec.has_start = field_given())) spec.start = parse_int("the start of the inline spec");
    expect_in_spec(',');
    if ((spec.has_end = field_given())) spec.end = parse_int("the end of the inline spec");
    expect_in_spec(',');
    if ((spec.has_step = field_given())) spec.step = parse_positive("the step of the inline spec");
    if (at(',')) {
      ++pos_;
      expect_in_spec('(');
      if (!at(')')) {
        spec.block_size.push_back(parse_positive("a block size of the inline spec"));
        while (at(',')) {
          ++pos_;
          spec.block_size.push_back(parse_positive("a block size of the inline spec"));
        }
      }
      expect_in_spec(')');
    }
    expect_in_spec(']');
    inline_specs_.push_back(std::move(spec));
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void expect_in_spec(char c) {
    if (pos_ >= text_.size())
      fail(std::string("unterminated inline spec: expected '") + c + "'; the form is " + kInlineSpecForm,
           pos_);
    if (text_[pos_] != c)
      fail(std::string("expected '") + c + "' in the inline spec, found " + describe_char(text_[pos_]) +
               "; the form is " + kInlineSpecForm,
           pos_);
    ++pos_;
  }

  // A decimal integer in INT_MIN..INT_MAX at pos_ (bounds reach the body as int).
  int parse_int(const std::string& what) {
    const std::size_t begin = pos_;
    const bool negative = at('-');
    if (negative) ++pos_;
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) fail("expected " + what + " (an integer)", pos_);
    long long value = 0;
    while (pos_ < text_.size() && is_digit(text_[pos_])) {
      value = value * 10 + (text_[pos_] - '0');
      if (value > static_cast<long long>(INT_MAX) + 1)
        fail(what + " is beyond the range of int, and the body receives int indices", begin);
      ++pos_;
    }
    if (negative) value = -value;
    if (value > INT_MAX) fail(what + " is beyond the range of int, and the body receives int indices", begin);
    return static_cast<int>(value);
  }

  // A decimal integer in 1..INT_MAX at pos_.
  int parse_positive(const std::string& what) {
    const std::size_t begin = pos_;
    if (pos_ >= text_.size() || !is_digit(text_[pos_]))
      fail("expected " + what + " (a positive integer)", pos_);
    long long value = 0;
    while (pos_ < text_.size() && is_digit(text_[pos_])) {
      value = value * 10 + (text_[pos_] - '0');
      if (value > INT_MAX) fail(what + " is too large (at most " + std::to_string(INT_MAX) + ")", begin);
      ++pos_;
    }
    if (value == 0) fail(what + " must be positive", begin);
    return static_cast<int>(value);
  }

  void skip_spaces() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }

  std::string_view parse_word() {
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && (is_lower(text_[pos_]) || is_upper(text_[pos_]) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(begin, pos_ - begin);
  }

  void expect(char c, const std::string& context) {
    skip_spaces();
    if (pos_ >= text_.size())
      fail(std::string("expected '") + c + "' " + context + ", but the string ends", pos_);
    if (text_[pos_] != c)
      fail(std::string("expected '") + c + "' " + context + ", found " + describe_char(text_[pos_]),
           pos_);
    ++pos_;
  }

  void parse_clauses() {
    clauses_pos_ = pos_;
    ++pos_;  // '@'
    bool any = false;
    while (true) {
      while (pos_ < text_.size() && (is_space(text_[pos_]) || text_[pos_] == ',')) ++pos_;
      if (pos_ >= text_.size()) break;
      const std::size_t begin = pos_;
      const std::string_view word = parse_word();
      if (word.empty())
        fail("unexpected " + describe_char(text_[pos_]) + " in the clauses; " + kSupportedClauses,
             pos_);
      if (word != "schedule")
        fail("unsupported clause '" + std::string(word) + "'; " + kSupportedClauses, begin);
      if (schedule_pos_ != kNone) fail("a second schedule clause; give one", begin);
      schedule_pos_ = begin;
      parse_schedule();
      any = true;
    }
    if (!any) fail(std::string("'@' must be followed by a clause; ") + kSupportedClauses, clauses_pos_);
  }

  // schedule([modifier[, modifier]:]kind[, chunk]), OpenMP's syntax. The modifiers change nothing
  // here: weft's dynamic and guided schedules give each thread its chunks in increasing order,
  // which satisfies both monotonic and nonmonotonic, and a nest is no simd loop. They are checked
  // as a compiler would (not both monotonic and nonmonotonic) and left out of the canonical form.
  void parse_schedule() {
    expect('(', "after 'schedule'");
    skip_spaces();
    std::size_t kind_pos = pos_;
    std::string_view kind = parse_word();
    skip_spaces();
    if (is_schedule_modifier(kind) || at(':')) {
      bool monotonic = false, nonmonotonic = false;
      while (true) {
        if (!is_schedule_modifier(kind))
          fail(kind.empty() ? std::string("expected a schedule modifier: monotonic, nonmonotonic or simd")
                            : "unsupported schedule modifier '" + std::string(kind) +
                                  "'; supported: monotonic, nonmonotonic, simd",
               kind_pos);
        monotonic = monotonic || kind == "monotonic";
        nonmonotonic = nonmonotonic || kind == "nonmonotonic";
        if (monotonic && nonmonotonic)
          fail("both 'monotonic' and 'nonmonotonic' modifiers; give one", kind_pos);
        if (at(':')) break;
        expect(',', "or ':' after a schedule modifier");
        skip_spaces();
        kind_pos = pos_;
        kind = parse_word();
        skip_spaces();
      }
      ++pos_;  // ':'
      skip_spaces();
      kind_pos = pos_;
      kind = parse_word();
    }
    if (kind == "static") {
      nest_.schedule.kind = ScheduleKind::static_;
    } else if (kind == "dynamic") {
      nest_.schedule.kind = ScheduleKind::dynamic;
    } else if (kind == "guided") {
      nest_.schedule.kind = ScheduleKind::guided;
    } else if (kind == "runtime") {
      nest_.schedule.kind = ScheduleKind::runtime;
    } else if (kind == "auto") {
      nest_.schedule.kind = ScheduleKind::auto_;
    } else if (kind.empty()) {
      fail("expected a schedule kind: static, dynamic, guided, runtime or auto", kind_pos);
    } else {
      fail("unsupported schedule kind '" + std::string(kind) +
               "'; supported: static, dynamic, guided, runtime, auto",
           kind_pos);
    }
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == ',') {
      ++pos_;
      skip_spaces();
      if (nest_.schedule.kind == ScheduleKind::runtime || nest_.schedule.kind == ScheduleKind::auto_)
        fail(std::string("schedule(") + schedule_name(nest_.schedule.kind) +
                 ") takes no chunk size" +
                 (nest_.schedule.kind == ScheduleKind::runtime ? " (OMP_SCHEDULE gives it, e.g. \"dynamic,4\")"
                                                               : ""),
             pos_);
      nest_.schedule.chunk = parse_positive("the chunk size of the schedule");
    }
    expect(')', "to close 'schedule('");
    // Dynamic and guided hand out at least one iteration anyway: chunk 1 is their default.
    if (nest_.schedule.kind != ScheduleKind::static_ && nest_.schedule.chunk == 1)
      nest_.schedule.chunk = 0;
  }

  void check_every_loop_appears() {
    std::vector<bool> seen(static_cast<std::size_t>(num_loops_), false);
    for (const auto& level : nest_.levels) seen[static_cast<std::size_t>(level.loop)] = true;
    for (int loop = 0; loop < num_loops_; ++loop) {
      if (!seen[static_cast<std::size_t>(loop)])
        fail(std::string("loop '") + letter_of(loop, false) + "' (LoopSpecs[" + std::to_string(loop) +
                 "]) does not appear; every one of the " + std::to_string(num_loops_) +
                 " loops must appear at least once",
             items_end_);
    }
  }

  void number_occurrences() {
    std::vector<int> count(static_cast<std::size_t>(num_loops_), 0);
    for (auto& level : nest_.levels) level.occurrence = count[static_cast<std::size_t>(level.loop)]++;
    for (auto& level : nest_.levels) level.num_occurrences = count[static_cast<std::size_t>(level.loop)];
  }

  std::string letters(std::size_t begin, std::size_t end) const {
    return std::string(text_.substr(letter_pos_[begin], letter_pos_[end - 1] + 1 - letter_pos_[begin]));
  }

  void check_parallel_runs() {
    const std::size_t n = nest_.levels.size();
    for (std::size_t l = 0; l < n; ++l) {
      if (nest_.levels[l].par != ParKind::collapse) continue;
      std::size_t end = l;
      while (end < n && nest_.levels[end].par == ParKind::collapse) ++end;
      if (nest_.has_run())
        fail("a second parallel run '" + letters(l, end) + "'; the loops of one work-shared run are " +
                 "adjacent upper-case letters (PARLOOPER ran this one sequentially). Merge the runs " +
                 "or split loops over a thread grid, e.g. 'A{R:2}bC{C:2}'",
             letter_pos_[l]);
      nest_.run_begin = static_cast<int>(l);
      nest_.run_length = static_cast<int>(end - l);
      l = end - 1;
    }
  }

  void check_grid() {
    std::size_t dim_pos[3] = {kNone, kNone, kNone};
    std::size_t first_grid = kNone;
    long long threads = 1;
    for (std::size_t l = 0; l < nest_.levels.size(); ++l) {
      const LoopLevel& level = nest_.levels[l];
      if (!is_grid(level.par)) continue;
      if (first_grid == kNone) first_grid = l;
      const int dim = level.par == ParKind::rows ? 0 : level.par == ParKind::cols ? 1 : 2;
      if (dim_pos[dim] != kNone)
        fail(std::string("the grid dimension ") + grid_dim_name(level.par) +
                 " is used twice; each of R, C and L splits one loop",
             grid_pos_[l] + 1);
      dim_pos[dim] = l;
      (dim == 0 ? nest_.grid_rows : dim == 1 ? nest_.grid_cols : nest_.grid_layers) = level.ways;
      threads *= level.ways;
      if (threads > INT_MAX)
        fail("the thread grid needs more than " + std::to_string(INT_MAX) + " threads",
             grid_pos_[l] + 3);
    }
    if (first_grid != kNone && nest_.has_run()) {
      const auto begin = static_cast<std::size_t>(nest_.run_begin);
      fail("the work-shared run '" + letters(begin, begin + static_cast<std::size_t>(nest_.run_length)) +
               "' is mixed with a thread grid (" + std::string(1, text_[letter_pos_[first_grid]]) +
               "{...}); PARLOOPER lost iterations here. Use a grid on every parallel loop, or none",
           letter_pos_[begin]);
    }
  }

  void check_barriers() {
    std::size_t enclosing_parallel = kNone;
    for (std::size_t l = 0; l < nest_.levels.size(); ++l) {
      const LoopLevel& level = nest_.levels[l];
      if (level.barrier_after && enclosing_parallel != kNone) {
        std::string problem = "barrier after '" + std::string(1, text_[letter_pos_[l]]) +
                              "', inside the parallel loop '" +
                              std::string(1, text_[letter_pos_[enclosing_parallel]]) +
                              "': threads would reach it unequal numbers of times. A barrier "
                              "goes after a loop that no parallel loop encloses";
        if (nest_.has_run() && static_cast<int>(enclosing_parallel) == nest_.run_begin &&
            static_cast<int>(l) < nest_.run_begin + nest_.run_length)
          problem += "; to synchronize after the work-shared run, put '|' after its first letter ('" +
                     std::string(1, text_[letter_pos_[enclosing_parallel]]) + "|...')";
        fail(problem, barrier_pos_[l]);
      }
      if (level.par != ParKind::none && enclosing_parallel == kNone) enclosing_parallel = l;
    }
  }

  void check_schedule() {
    if (schedule_pos_ != kNone && !nest_.has_run())
      fail("a schedule clause needs a work-shared run (adjacent upper-case letters without grids)",
           schedule_pos_);
  }

  // What an inline spec alone decides is checked here, with the caret under the spec; the rest
  // (its step against LoopSpecs' block sizes, say) is make_nest_bounds' job.
  void collect_inline_specs() {
    for (const InlineSpec& spec : inline_specs_) {
      const std::size_t pos = inline_pos_[static_cast<std::size_t>(spec.loop)];
      int occurrences = 1;
      for (const auto& level : nest_.levels)
        if (level.loop == spec.loop) occurrences = level.num_occurrences;
      const auto blocks = static_cast<int>(spec.block_size.size());
      if (blocks > 0 && blocks < occurrences - 1)
        fail(std::string("loop '") + letter_of(spec.loop, false) + "' appears " + std::to_string(occurrences) +
                 " times, so its inline spec needs " + std::to_string(occurrences - 1) + " block size" +
                 (occurrences == 2 ? "" : "s") + " (outermost first), but it has " + std::to_string(blocks),
             pos);
      if (spec.has_step)
        for (long block : spec.block_size)
          if (block % spec.step != 0)
            fail("block size " + std::to_string(block) + " of the inline spec is not a multiple of its step " +
                     std::to_string(spec.step),
                 pos);
    }
    nest_.inline_specs = inline_specs_;
    std::sort(nest_.inline_specs.begin(), nest_.inline_specs.end(),
              [](const InlineSpec& x, const InlineSpec& y) { return x.loop < y.loop; });
  }

  static std::string inline_spec_text(const InlineSpec& spec) {
    std::string s = "[";
    if (spec.has_start) s += std::to_string(spec.start);
    s += ',';
    if (spec.has_end) s += std::to_string(spec.end);
    s += ',';
    if (spec.has_step) s += std::to_string(spec.step);
    if (!spec.block_size.empty()) {
      s += ",(";
      for (std::size_t i = 0; i < spec.block_size.size(); ++i) (s += i > 0 ? "," : "") += std::to_string(spec.block_size[i]);
      s += ')';
    }
    return s + ']';
  }

  // Inline specs sit after the first occurrence of their loop, wherever they were written.
  std::string canonical() const {
    std::string s;
    for (const auto& level : nest_.levels) {
      s += letter_of(level.loop, level.par != ParKind::none);
      if (is_grid(level.par)) s += std::string("{") + grid_dim_name(level.par) + ":" + std::to_string(level.ways) + "}";
      if (level.occurrence == 0)
        for (const InlineSpec& spec : nest_.inline_specs)
          if (spec.loop == level.loop) s += inline_spec_text(spec);
      if (level.barrier_after) s += '|';
    }
    const Schedule& schedule = nest_.schedule;
    if (schedule != Schedule{}) {
      s += std::string("@schedule(") + schedule_name(schedule.kind);
      if (schedule.chunk > 0) (s += ',') += std::to_string(schedule.chunk);
      s += ")";
    }
    return s;
  }

  std::string_view text_;
  int num_loops_;
  std::size_t pos_ = 0;
  std::size_t items_end_ = 0;
  bool last_item_was_barrier_ = false;
  LoopNest nest_;
  std::vector<std::size_t> letter_pos_;   // per level: its letter
  std::vector<std::size_t> barrier_pos_;  // per level: its '|', or kNone
  std::vector<std::size_t> grid_pos_;     // per level: its '{', or kNone
  std::size_t clauses_pos_ = kNone;
  std::size_t schedule_pos_ = kNone;
  std::vector<InlineSpec> inline_specs_;                      // in the order written
  std::vector<std::size_t> inline_pos_ = std::vector<std::size_t>(kMaxLoops, kNone);  // per loop: its '['
};

}  // namespace

LoopStringError::LoopStringError(std::string problem, std::string loop_string, std::size_t position)
    : weft::Error(format_message(problem, loop_string, position)),
      problem_(std::move(problem)),
      loop_string_(std::move(loop_string)),
      position_(position) {}

LoopNest parse_loop_string(std::string_view loop_string, int num_loops) {
  return Parser(loop_string, num_loops).parse();
}

}  // namespace weft::parlooper
