// Fuzz target: the einsum tree parser (weft/tensor/einsum_tree.hpp), the tree pass and, for tiny
// trees, their execution.
//
// Input (text):
//   sizes=3,2,4        the dimension sizes, indexed by id
//   threads=2          optional, 1..2: threads of the execution
//   tree=[0,1],[1,2]->[0,2]        the notation: everything after "tree=" to the end
//
// Properties:
// - parsing succeeds or throws weft::Error (EinsumParseError with its position inside the text for
//   syntax); a parsed tree follows the notation's rules (ids of a tensor distinct and sized, leaves
//   numbered left to right, contraction outputs from the operands, summed ids in both operands,
//   permutations keep every id, no tensor of more than 2^63 - 1 elements) and to_string() parses
//   back to the same tree;
// - optimize_einsum_tree() keeps the inputs' and the output's layouts, flops() and the value of
//   the tree, and leaves no node unreachable from the root;
// - a tiny tree executes (EinsumTreeOperation) to the value of a plain evaluation in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "weft/tensor/einsum_tree.hpp"

namespace {

using weft::fuzz::check;
using weft::fuzz::fail;
using weft::tensor::EinsumNode;
using weft::tensor::EinsumTree;
using Kind = EinsumNode::Kind;

constexpr std::int64_t kTinyElements = 4096;  // per tensor, for execution
constexpr double kTinyWork = 200000;          // multiply-adds of the whole tree, for execution
constexpr std::size_t kMaxSizes = 64;

struct Case {
  std::vector<std::int64_t> sizes;
  int threads = 1;
  std::string text;
};

Case decode(std::string_view input) {
  const weft::fuzz::Fields fields(input, "tree");
  Case c;
  c.sizes = weft::fuzz::int_list(fields.get("sizes"));
  if (c.sizes.size() > kMaxSizes) c.sizes.resize(kMaxSizes);
  c.threads = weft::fuzz::first_int(fields.get("threads"), 1) == 2 ? 2 : 1;
  c.text = std::string(fields.get("tree"));
  return c;
}

std::string describe(const Case& c) {
  std::string s = "tree \"" + weft::fuzz::to_printable(c.text) + "\", sizes";
  for (std::int64_t v : c.sizes) s += " " + std::to_string(v);
  return s;
}

bool has(const std::vector<int>& v, int id) { return std::find(v.begin(), v.end(), id) != v.end(); }

// The rules of the notation, on a parsed (or optimized) tree.
void check_tree(const EinsumTree& t, const Case& c, const char* what) {
  const auto where = [&] { return std::string(what) + ": " + describe(c) + "\n  parsed: " + t.to_string(); };
  check(!t.nodes.empty() && t.root >= 0 && static_cast<std::size_t>(t.root) < t.nodes.size(),
        [&] { return "root out of range: " + where(); });
  // Nodes reachable from the root; an unreachable one still counts in flops() and the like.
  std::vector<bool> reachable(t.nodes.size(), false);
  const auto mark = [&](auto&& self, int k) -> void {
    if (k < 0 || static_cast<std::size_t>(k) >= t.nodes.size() || reachable[static_cast<std::size_t>(k)]) return;
    reachable[static_cast<std::size_t>(k)] = true;
    self(self, t.nodes[static_cast<std::size_t>(k)].left);
    self(self, t.nodes[static_cast<std::size_t>(k)].right);
  };
  mark(mark, t.root);
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    check(reachable[i], [&] {
      return "node " + std::to_string(i) + " is unreachable from the root (it still counts in flops()): " + where();
    });
  std::vector<int> parents(t.nodes.size(), 0);
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const EinsumNode& n = t.nodes[i];
    check(!n.ids.empty(), [&] { return "a tensor without ids: " + where(); });
    std::set<int> seen;
    for (int id : n.ids) {
      check(id >= 0 && static_cast<std::size_t>(id) < t.dim_sizes.size(), [&] { return "an id without a size: " + where(); });
      check(seen.insert(id).second, [&] { return "an id twice in one tensor: " + where(); });
    }
    if (n.kind == Kind::leaf) {
      check(n.left < 0 && n.right < 0 && n.input >= 0, [&] { return "a leaf with children or no input: " + where(); });
      continue;
    }
    const auto child_ok = [&](int k) { return k >= 0 && static_cast<std::size_t>(k) < t.nodes.size() && k != static_cast<int>(i); };
    check(child_ok(n.left), [&] { return "a child out of range: " + where(); });
    ++parents[static_cast<std::size_t>(n.left)];
    const std::vector<int>& l = t.nodes[static_cast<std::size_t>(n.left)].ids;
    if (n.kind == Kind::permutation) {
      check(n.right < 0, [&] { return "a permutation with two operands: " + where(); });
      check(std::set<int>(n.ids.begin(), n.ids.end()) == std::set<int>(l.begin(), l.end()),
            [&] { return "a permutation that does not keep its operand's ids: " + where(); });
      continue;
    }
    check(child_ok(n.right), [&] { return "a child out of range: " + where(); });
    ++parents[static_cast<std::size_t>(n.right)];
    const std::vector<int>& r = t.nodes[static_cast<std::size_t>(n.right)].ids;
    for (int id : n.ids) check(has(l, id) || has(r, id), [&] { return "an output id in no operand: " + where(); });
    for (const auto* side : {&l, &r})
      for (int id : *side)
        check(has(n.ids, id) || (has(l, id) && has(r, id)), [&] { return "an id summed over one operand only: " + where(); });
  }
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    check(parents[i] == (static_cast<int>(i) == t.root ? 0 : 1),
          [&] { return "node " + std::to_string(i) + " has " + std::to_string(parents[i]) + " parents: " + where(); });
  // Leaves are the inputs, numbered left to right.
  std::vector<int> inputs;
  const auto collect = [&](auto&& self, int k) -> void {
    const EinsumNode& n = t.nodes[static_cast<std::size_t>(k)];
    if (n.kind == Kind::leaf) inputs.push_back(n.input);
    if (n.left >= 0) self(self, n.left);
    if (n.right >= 0) self(self, n.right);
  };
  collect(collect, t.root);
  check(static_cast<int>(inputs.size()) == t.num_inputs(), [&] { return "leaves unreachable from the root: " + where(); });
  std::vector<int> sorted = inputs;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    check(sorted[i] == static_cast<int>(i), [&] { return "leaf inputs are not 0..n-1: " + where(); });
}

bool same_structure(const EinsumTree& a, const EinsumTree& b) {
  if (a.nodes.size() != b.nodes.size() || a.root != b.root) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const EinsumNode &x = a.nodes[i], &y = b.nodes[i];
    if (x.kind != y.kind || x.ids != y.ids || x.left != y.left || x.right != y.right || x.input != y.input) return false;
  }
  return true;
}

// A dense row-major tensor over `ids`, in double.
struct Tensor {
  std::vector<int> ids;
  std::vector<double> value, magnitude;  // magnitude: the same sums over absolute values
};

std::int64_t elements(const EinsumTree& t, const std::vector<int>& ids) {
  std::int64_t e = 1;
  for (int id : ids) e = weft::fuzz::sat_mul(e, t.dim_sizes[static_cast<std::size_t>(id)]);
  return e;
}

// Offset of the point `index` (indexed by id) in a tensor over `ids`.
std::int64_t offset(const EinsumTree& t, const std::vector<int>& ids, const std::vector<std::int64_t>& index) {
  std::int64_t o = 0;
  for (int id : ids) o = o * t.dim_sizes[static_cast<std::size_t>(id)] + index[static_cast<std::size_t>(id)];
  return o;
}

// Calls f(index) for every point over `ids` (index is indexed by id).
template <class F>
void for_each_point(const EinsumTree& t, const std::vector<int>& ids, F&& f) {
  std::vector<std::int64_t> index(t.dim_sizes.size(), 0);
  for (;;) {
    f(index);
    std::size_t k = ids.size();
    while (k > 0) {
      const auto id = static_cast<std::size_t>(ids[k - 1]);
      if (++index[id] < t.dim_sizes[id]) break;
      index[id] = 0;
      --k;
    }
    if (k == 0) return;
  }
}

Tensor evaluate(const EinsumTree& t, int node, const std::vector<std::vector<float>>& inputs) {
  const EinsumNode& n = t.nodes[static_cast<std::size_t>(node)];
  Tensor out{n.ids, {}, {}};
  const auto size = static_cast<std::size_t>(elements(t, n.ids));
  out.value.assign(size, 0.0);
  out.magnitude.assign(size, 0.0);
  if (n.kind == Kind::leaf) {
    const auto& in = inputs[static_cast<std::size_t>(n.input)];
    for (std::size_t i = 0; i < size; ++i) {
      out.value[i] = in[i];
      out.magnitude[i] = std::abs(in[i]);
    }
    return out;
  }
  const Tensor l = evaluate(t, n.left, inputs);
  if (n.kind == Kind::permutation) {
    for_each_point(t, n.ids, [&](const std::vector<std::int64_t>& index) {
      const auto o = static_cast<std::size_t>(offset(t, n.ids, index));
      const auto i = static_cast<std::size_t>(offset(t, l.ids, index));
      out.value[o] = l.value[i];
      out.magnitude[o] = l.magnitude[i];
    });
    return out;
  }
  const Tensor r = evaluate(t, n.right, inputs);
  std::vector<int> all = n.ids;
  for (const auto* side : {&l.ids, &r.ids})
    for (int id : *side)
      if (!has(all, id)) all.push_back(id);
  for_each_point(t, all, [&](const std::vector<std::int64_t>& index) {
    const auto o = static_cast<std::size_t>(offset(t, n.ids, index));
    const auto a = static_cast<std::size_t>(offset(t, l.ids, index));
    const auto b = static_cast<std::size_t>(offset(t, r.ids, index));
    out.value[o] += l.value[a] * r.value[b];
    out.magnitude[o] += l.magnitude[a] * r.magnitude[b];
  });
  return out;
}

bool tiny(const EinsumTree& t) {
  double work = 0;
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const EinsumNode& n = t.nodes[i];
    if (elements(t, n.ids) > kTinyElements) return false;
    if (n.kind != Kind::contraction) continue;
    double points = 1;
    std::set<int> all(n.ids.begin(), n.ids.end());
    for (int k : {n.left, n.right})
      for (int id : t.nodes[static_cast<std::size_t>(k)].ids) all.insert(id);
    for (int id : all) points *= static_cast<double>(t.dim_sizes[static_cast<std::size_t>(id)]);
    work += points;
  }
  return work <= kTinyWork;
}

std::vector<int> leaf_ids(const EinsumTree& t, int input) {
  for (const EinsumNode& n : t.nodes)
    if (n.kind == Kind::leaf && n.input == input) return n.ids;
  return {};
}

void run_case(const Case& c, std::uint64_t seed) {
  EinsumTree tree;
  bool positive_sizes = true;
  for (std::int64_t s : c.sizes) positive_sizes = positive_sizes && s > 0;
  try {
    tree = weft::tensor::parse_einsum_tree(c.text, c.sizes);
  } catch (const weft::tensor::EinsumParseError& e) {
    check(e.position() <= c.text.size(), [&] {
      return "EinsumParseError position " + std::to_string(e.position()) + " beyond the text: " + describe(c);
    });
    return;
  } catch (const weft::Error&) {
    return;
  } catch (const std::exception& e) {
    fail("parse_einsum_tree threw a non-weft exception: " + std::string(e.what()) + "\n" + describe(c));
  }
  check(positive_sizes, [&] { return "parse_einsum_tree accepted a size <= 0: " + describe(c); });
  for (const EinsumNode& n : tree.nodes) {
    std::int64_t count = 1;
    bool overflow = false;
    for (int id : n.ids) overflow = overflow || __builtin_mul_overflow(count, c.sizes[static_cast<std::size_t>(id)], &count);
    check(!overflow, [&] { return "parse_einsum_tree accepted a tensor of more than 2^63 - 1 elements: " + describe(c); });
  }
  check_tree(tree, c, "parsed");

  // The seed notation round-trips.
  const std::string text = tree.to_string();
  try {
    const EinsumTree again = weft::tensor::parse_einsum_tree(text, c.sizes);
    check(again.to_string() == text && same_structure(again, tree),
          [&] { return "to_string() \"" + text + "\" parses to another tree: " + describe(c); });
  } catch (const weft::Error& e) {
    fail("to_string() \"" + text + "\" does not parse: " + e.what() + "\n" + describe(c));
  }

  EinsumTree optimized = tree;
  try {
    weft::tensor::optimize_einsum_tree(optimized);
  } catch (const std::exception& e) {
    fail("optimize_einsum_tree threw on a valid tree: " + std::string(e.what()) + "\n" + describe(c));
  }
  check_tree(optimized, c, "optimized");
  check(optimized.flops() == tree.flops(), [&] {
    return "optimize_einsum_tree changed flops() from " + std::to_string(tree.flops()) + " to " +
           std::to_string(optimized.flops()) + ": " + optimized.to_string() + "\n" + describe(c);
  });
  check(optimized.num_inputs() == tree.num_inputs() &&
            optimized.nodes[static_cast<std::size_t>(optimized.root)].ids == tree.nodes[static_cast<std::size_t>(tree.root)].ids,
        [&] { return "optimize_einsum_tree changed the inputs or the output's layout: " + optimized.to_string() + "\n" + describe(c); });
  for (int i = 0; i < tree.num_inputs(); ++i)
    check(leaf_ids(optimized, i) == leaf_ids(tree, i),
          [&] { return "optimize_einsum_tree changed input " + std::to_string(i) + "'s layout: " + optimized.to_string() + "\n" + describe(c); });

  if (!tiny(tree) || !tiny(optimized)) return;
  weft::fuzz::Rng rng(seed);
  std::vector<std::vector<float>> inputs(static_cast<std::size_t>(tree.num_inputs()));
  for (int i = 0; i < tree.num_inputs(); ++i) {
    auto& in = inputs[static_cast<std::size_t>(i)];
    in.resize(static_cast<std::size_t>(elements(tree, leaf_ids(tree, i))));
    for (float& v : in) v = static_cast<float>(rng.range(-1000, 1000)) / 1000.0f;
  }
  const Tensor want = evaluate(tree, tree.root, inputs);
  const Tensor also = evaluate(optimized, optimized.root, inputs);
  for (std::size_t i = 0; i < want.value.size(); ++i)
    check(std::abs(want.value[i] - also.value[i]) <= 1e-9 * want.magnitude[i] + 1e-12,
          [&] { return "optimize_einsum_tree changed the value of the tree: " + optimized.to_string() + "\n" + describe(c); });
  if (tree.nodes.size() == 1) return;  // a single tensor: nothing to execute (documented error)

  for (const bool use_optimized : {false, true}) {
    const EinsumTree& t = use_optimized ? optimized : tree;
    weft::fuzz::GuardedFloats out(static_cast<std::size_t>(elements(t, t.nodes[static_cast<std::size_t>(t.root)].ids)));
    std::vector<std::unique_ptr<weft::fuzz::GuardedFloats>> guarded;
    std::vector<const float*> pointers;
    for (const auto& in : inputs) {
      guarded.push_back(std::make_unique<weft::fuzz::GuardedFloats>(in.size()));
      std::copy(in.begin(), in.end(), guarded.back()->data());
      pointers.push_back(guarded.back()->data());
    }
    try {
      weft::tensor::EinsumOptions options;
      options.threads = c.threads;
      const weft::tensor::EinsumTreeOperation op(t, options);
      op.execute(pointers, out.data());
    } catch (const std::exception& e) {
      fail(std::string("EinsumTreeOperation failed on a valid tree") + (use_optimized ? " (optimized)" : "") + ": " +
           e.what() + "\n" + describe(c));
    }
    check(out.canary_intact(), [&] { return "execution wrote before the output tensor: " + describe(c); });
    for (const auto& g : guarded)
      check(g->canary_intact(), [&] { return "execution wrote before an input tensor: " + describe(c); });
    for (std::size_t i = 0; i < want.value.size(); ++i) {
      const double got = out[i];
      check(std::abs(got - want.value[i]) <= 1e-4 * want.magnitude[i] + 1e-6, [&] {
        return "element " + std::to_string(i) + " of the result is " + std::to_string(got) + ", expected " +
               std::to_string(want.value[i]) + (use_optimized ? " (optimized tree " + optimized.to_string() + ")" : "") +
               ": " + describe(c);
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The structured generator

using weft::fuzz::Rng;

struct Generated {
  std::string text;  // as an operand: "[...]"
  std::vector<int> ids;
};

std::string list(const std::vector<int>& ids, Rng& rng) {
  const auto space = [&] { return rng.chance(1, 10) ? std::string(" ") : std::string(); };
  std::string s = "[" + space();
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? "," + space() : "") + std::to_string(ids[i]) + space();
  return s + "]";
}

template <class T>
void shuffle(std::vector<T>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(rng.below(i))]);
}

// An operand: a leaf or a bracketed subtree. `top` returns the subtree unbracketed.
Generated operand(Rng& rng, int depth, int num_ids, bool top) {
  if (depth == 0 || (!top && rng.chance(1, 2))) {
    std::vector<int> all(static_cast<std::size_t>(num_ids));
    for (int i = 0; i < num_ids; ++i) all[static_cast<std::size_t>(i)] = i;
    shuffle(all, rng);
    all.resize(1 + static_cast<std::size_t>(rng.below(std::min(num_ids, 4))));
    return {list(all, rng), all};
  }
  Generated left = operand(rng, depth - 1, num_ids, false);
  std::vector<int> out;
  std::string body;
  if (rng.chance(1, 5)) {  // a permutation
    out = left.ids;
    shuffle(out, rng);
    body = left.text + "->" + list(out, rng);
  } else {
    Generated right = operand(rng, depth - 1, num_ids, false);
    for (int id : left.ids)
      if (!has(right.ids, id) || rng.chance(1, 3)) out.push_back(id);
    for (int id : right.ids)
      if (!has(left.ids, id)) out.push_back(id);
    if (out.empty()) out.push_back(left.ids.front());
    shuffle(out, rng);
    body = left.text + "," + right.text + "->" + list(out, rng);
  }
  return {top ? body : "[" + body + "]", out};
}

std::string generate(Rng& rng) {
  const int num_ids = 2 + static_cast<int>(rng.below(6));
  std::string sizes;
  for (int i = 0; i < num_ids + static_cast<int>(rng.below(2)); ++i) {
    std::int64_t s = rng.range(1, 4);
    if (rng.chance(1, 10)) s = rng.range(5, 12);
    if (rng.chance(1, 100)) {
      static const std::int64_t odd[] = {0, -1, 1 << 20, 2147483647, 2147483648LL, 4611686018427387904LL};
      s = rng.pick(odd);
    }
    sizes += (i ? "," : "") + std::to_string(s);
  }
  std::string text = operand(rng, static_cast<int>(rng.below(4)), num_ids, true).text;
  if (rng.chance(1, 10)) {
    static const char* const tokens[] = {"[", "]", ",", "->", "-", ">", " ", "[]", "99", "1000001", "\t", "0"};
    const int edits = 1 + static_cast<int>(rng.below(3));
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = static_cast<std::size_t>(rng.below(text.size() + 1));
      if (rng.chance(1, 2) && at < text.size()) text.erase(at, 1 + rng.below(3));
      else text.insert(at, rng.pick(tokens));
    }
  }
  return "sizes=" + sizes + "\nthreads=" + std::to_string(1 + rng.below(2)) + "\ntree=" + text;
}

}  // namespace

namespace weft::fuzz {
const Target& target() {
  static const Target t{"einsum", &::generate};
  return t;
}
}  // namespace weft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_case(decode(std::string_view(reinterpret_cast<const char*>(data), size)), weft::fuzz::hash_bytes(data, size));
  return 0;
}
