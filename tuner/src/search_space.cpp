#include "weft/tuner/search_space.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_set>

#include "weft/jit/error.hpp"

namespace weft::tuner {
namespace {

char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

// Appends `s` unless already present; keeps the order of first appearance.
struct OrderedSet {
  std::vector<std::string> items;
  std::unordered_set<std::string> seen;
  void add(std::string s) {
    if (seen.insert(s).second) items.push_back(std::move(s));
  }
};

std::string letters_of(const LoopSpecification& spec) {
  std::string s;
  for (const SpecLoop& l : spec.loops) s.append(static_cast<std::size_t>(l.occurrences()), l.letter);
  return s;
}

bool has_adjacent_repeat(const std::string& s) {
  for (std::size_t i = 1; i < s.size(); ++i)
    if (lower(s[i]) == lower(s[i - 1])) return true;
  return false;
}

// Merges runs of the same character (case-sensitive), as PARLOOPER's generator does.
std::string merge_repeats(const std::string& s) {
  std::string out;
  for (char c : s)
    if (out.empty() || out.back() != c) out += c;
  return out;
}

std::vector<std::pair<int, int>> grid_shapes(int threads) {
  std::vector<std::pair<int, int>> shapes;
  for (int r = 2; r * 2 <= threads; ++r)
    if (threads % r == 0) shapes.emplace_back(r, threads / r);
  return shapes;
}

}  // namespace

std::vector<std::string> enumerate_loop_strings(const LoopSpecification& spec,
                                                const LoopStringOptions& options) {
  if (options.threads < 1) throw Error("enumerate_loop_strings: threads must be >= 1");
  auto parallelizable = [&](char letter) {
    return options.allow_parallel_reduction || !spec.loop(letter - 'a').reduction();
  };
  std::string order;
  for (char c : letters_of(spec))
    if (options.fixed_letters.find(c) == std::string::npos) order += c;
  std::sort(order.begin(), order.end());
  const std::string& prefix = options.fixed_letters;
  OrderedSet out;
  const auto grids = options.grids ? grid_shapes(options.threads) : std::vector<std::pair<int, int>>{};
  do {
    if (has_adjacent_repeat(order)) continue;
    if (options.threads == 1) {
      out.add(prefix + order);
      continue;
    }
    const int n = static_cast<int>(order.size());
    for (int begin = 0; begin < n; ++begin) {
      std::string s = order;
      bool used[26] = {};
      for (int len = 1; len <= options.max_run_length && begin + len <= n; ++len) {
        const char c = order[static_cast<std::size_t>(begin + len - 1)];
        if (!parallelizable(c) || used[c - 'a']) break;
        used[c - 'a'] = true;
        s[static_cast<std::size_t>(begin + len - 1)] = upper(c);
        out.add(prefix + s);
      }
    }
    for (auto [rows, cols] : grids) {
      for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
          const char ci = order[static_cast<std::size_t>(i)], cj = order[static_cast<std::size_t>(j)];
          if (ci == cj || !parallelizable(ci) || !parallelizable(cj)) continue;
          std::string s = prefix;
          for (int p = 0; p < n; ++p) {
            const char c = order[static_cast<std::size_t>(p)];
            if (p == i) s += std::string(1, upper(c)) + "{R:" + std::to_string(rows) + "}";
            else if (p == j) s += std::string(1, upper(c)) + "{C:" + std::to_string(cols) + "}";
            else s += c;
          }
          out.add(s);
        }
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return out.items;
}

std::vector<std::string> parlooper_loop_strings(const LoopSpecification& spec) {
  const std::string base = letters_of(spec);  // in the order written, as PARLOOPER lays it out
  std::vector<char> par_letters;
  for (const SpecLoop& l : spec.loops)
    if (l.kind == 'M' || l.kind == 'N') par_letters.push_back(l.letter);
  std::vector<std::string> combos;
  if (par_letters.empty()) {
    combos.push_back(base);
  } else {
    for (unsigned mask = 1; mask < (1u << par_letters.size()); ++mask) {
      std::string s = base;
      for (std::size_t j = 0; j < par_letters.size(); ++j)
        if (mask & (1u << j)) s[s.find(par_letters[j])] = upper(par_letters[j]);
      combos.push_back(s);
    }
  }
  OrderedSet out;
  for (std::string perm : combos) {
    std::sort(perm.begin(), perm.end());
    do {
      std::string s = merge_repeats(perm);
      // Only the first upper-case letter and the one right after it stay parallel.
      const auto first = std::find_if(s.begin(), s.end(), is_upper);
      if (first != s.end())
        for (auto it = first + std::min<std::ptrdiff_t>(2, s.end() - first); it != s.end(); ++it)
          *it = lower(*it);
      out.add(merge_repeats(s));
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  return out.items;
}

std::vector<std::vector<long>> enumerate_block_chains(const LogicalLoop& loop, int levels,
                                                      const BlockOptions& options) {
  if (levels <= 0) return {{}};
  const long trips = loop.trips();
  std::set<long> values;  // in steps
  for (long d = 2; d < trips; ++d)
    if (trips % d == 0) values.insert(d);
  if (options.allow_remainder)
    for (long p = 2; p < trips; p *= 2) values.insert(p);
  std::vector<long> picked(values.begin(), values.end());
  if (options.max_choices > 0 && picked.size() > options.max_choices) {
    // Evenly spaced by rank: the candidates are roughly geometric already.
    std::vector<long> spread;
    const std::size_t n = picked.size(), k = options.max_choices;
    for (std::size_t i = 0; i < k; ++i) spread.push_back(picked[(i * (n - 1)) / (k - 1)]);
    spread.erase(std::unique(spread.begin(), spread.end()), spread.end());
    picked = spread;
  }
  std::vector<std::vector<long>> chains;
  std::vector<long> chain;
  // Outermost first, strictly decreasing; without remainders each level divides its parent.
  auto extend = [&](auto&& self, long parent) -> void {
    if (static_cast<int>(chain.size()) == levels) {
      chains.push_back(chain);
      return;
    }
    for (auto it = picked.rbegin(); it != picked.rend(); ++it) {
      const long v = *it;
      if (v >= parent || (!options.allow_remainder && parent % v != 0)) continue;
      chain.push_back(v * loop.step);
      self(self, v);
      chain.pop_back();
    }
  };
  extend(extend, trips);
  std::reverse(chains.begin(), chains.end());  // small blocks first
  return chains;
}

}  // namespace weft::tuner
