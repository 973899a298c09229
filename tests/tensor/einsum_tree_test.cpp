// Einsum trees: the parser (and its errors with positions), the tree pass, and execution against a
// naive evaluation of the same tree, with and without the pass, on 1-3 threads.
#include <omp.h>

#include <functional>
#include <map>

#include "tensor_test_support.hpp"
#include "weft/tensor/einsum_tree.hpp"

namespace weft::tensor::test {
namespace {

const char* const kSeedTrees[] = {
    "[[8,4],[7,3,8]->[7,3,4]],[[[2,6,7],[1,5,6]->[1,2,5,7]],[0,5]->[0,1,2,7]]->[0,1,2,3,4]",
    "[[[[3,6,8,9]->[8,6,9,3]],[[2,5,7,9]->[7,5,2,9]]->[7,8,5,6,2,3]],[0,4,5,6]->[0,4,7,8,2,3]],"
    "[1,4,7,8]->[0,1,2,3]",
    "[[7,3,8],[8,4]->[7,3,4]],[[0,5],[[5,1,6],[6,2,7]->[5,1,2,7]]->[0,1,2,7]]->[0,1,2,3,4]",
    "[1,4,7,8],[[0,4,5,6],[[2,5,7,9],[3,6,8,9]->[2,5,7,3,6,8]]->[0,4,2,7,3,8]]->[0,1,2,3]",
    "[[2,7,3],[3,8,4]->[2,7,8,4]],[[4,9,0],[[0,5,1],[1,6,2]->[0,5,6,2]]->[4,9,5,6,2]]->[5,6,7,8,9]",
};

// Naive evaluation in double: every node over the union of its ids.
std::vector<double> evaluate(const EinsumTree& t, int index, const std::vector<std::vector<float>>& inputs) {
  const EinsumNode& n = t.nodes[static_cast<std::size_t>(index)];
  if (n.kind == EinsumNode::Kind::leaf) {
    const auto& in = inputs[static_cast<std::size_t>(n.input)];
    return std::vector<double>(in.begin(), in.end());
  }
  const std::vector<double> a = evaluate(t, n.left, inputs);
  std::vector<double> b;
  std::vector<int> ids = n.ids;
  const auto add_ids = [&](const std::vector<int>& more) {
    for (int id : more)
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  add_ids(t.nodes[static_cast<std::size_t>(n.left)].ids);
  if (n.kind == EinsumNode::Kind::contraction) {
    b = evaluate(t, n.right, inputs);
    add_ids(t.nodes[static_cast<std::size_t>(n.right)].ids);
  }
  const auto offset = [&](const std::vector<int>& layout, const std::map<int, std::int64_t>& at) {
    std::int64_t o = 0;
    for (int id : layout) o = o * t.dim_sizes[static_cast<std::size_t>(id)] + at.at(id);
    return o;
  };
  std::vector<double> out(static_cast<std::size_t>(t.elements(index)), 0.0);
  std::map<int, std::int64_t> at;
  std::function<void(std::size_t)> loop = [&](std::size_t depth) {
    if (depth == ids.size()) {
      double v = a[static_cast<std::size_t>(offset(t.nodes[static_cast<std::size_t>(n.left)].ids, at))];
      if (n.kind == EinsumNode::Kind::contraction)
        v *= b[static_cast<std::size_t>(offset(t.nodes[static_cast<std::size_t>(n.right)].ids, at))];
      out[static_cast<std::size_t>(offset(n.ids, at))] += v;
      return;
    }
    for (std::int64_t i = 0; i < t.dim_sizes[static_cast<std::size_t>(ids[depth])]; ++i) {
      at[ids[depth]] = i;
      loop(depth + 1);
    }
  };
  loop(0);
  return out;
}

void check_tree(const EinsumTree& original, const EinsumTree& run, const EinsumOptions& options) {
  std::vector<std::vector<float>> inputs(static_cast<std::size_t>(original.num_inputs()));
  for (const EinsumNode& n : original.nodes)
    if (n.kind == EinsumNode::Kind::leaf)
      inputs[static_cast<std::size_t>(n.input)] =
          random_vector(static_cast<std::size_t>(original.elements(static_cast<int>(&n - original.nodes.data()))),
                        static_cast<std::uint32_t>(100 + n.input));
  const std::vector<double> want = evaluate(original, original.root, inputs);
  EinsumTreeOperation op(run, options);
  std::vector<const float*> pointers;
  for (const auto& in : inputs) pointers.push_back(in.data());
  std::vector<float> got(want.size(), -7.0f);
  op.execute(pointers, got.data());
  int bad = 0;
  for (std::size_t i = 0; i < want.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-4 * (1.0 + std::fabs(want[i])))) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i] << "\n" << run.to_string();
      ++bad;
    }
}

std::vector<std::int64_t> small_sizes(std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<std::int64_t> sizes(10);
  for (auto& s : sizes) s = 2 + static_cast<std::int64_t>(gen() % 4);
  return sizes;
}

TEST(EinsumTree, ParsesAndPrintsTheSeedTrees) {
  for (const char* text : kSeedTrees) {
    const EinsumTree t = parse_einsum_tree(text, small_sizes(1));
    EXPECT_EQ(t.to_string(), text);
  }
  const EinsumTree t = parse_einsum_tree(kSeedTrees[0], {100, 72, 128, 128, 3, 71, 305, 32, 3});
  EXPECT_EQ(t.num_inputs(), 5);
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.root)].ids, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(EinsumTree, ParseErrorsNameThePosition) {
  struct Case {
    const char* text;
    std::size_t position;
    const char* problem;
  };
  const Case cases[] = {
      {"[0,1],[1,2]->[0,2", 17, "expected ']'"},
      {"[0,1],[1,2][0,2]", 11, "'->'"},
      {"[0,1],[1,12]->[0,2]", 9, "no size"},
      {"[0,1,0],[1,2]->[0,2]", 5, "twice"},
      {"[0,1],[1,2]->[0,3]", 14, "appears in no operand"},
      {"[0,1],[2,3]->[0,3]", 14, "summed over one operand"},
      {"[0,1]->[1]", 8, "keep every dimension"},
      {"[0,1],[1,2]->[0,2]]", 18, "after the tree"},
      {"[0,a]", 3, "dimension id"},
      {"", 0, "expected '['"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse_einsum_tree(c.text, {4, 4, 4, 4});
      ADD_FAILURE() << "no error";
    } catch (const EinsumParseError& e) {
      EXPECT_EQ(e.position(), c.position) << e.what();
      EXPECT_NE(e.problem().find(c.problem), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find('^'), std::string::npos);
    }
  }
}

TEST(EinsumTree, TreePassSwapsOperandsOfTheSeedsFirstTree) {
  // The seed's optimization input: swaps suffice, no permutation is needed.
  EinsumTree t = parse_einsum_tree(kSeedTrees[2], small_sizes(2));
  EXPECT_EQ(optimize_einsum_tree(t), 0);
  EXPECT_EQ(t.to_string(),
            "[[8,4],[7,3,8]->[7,3,4]],[[[6,2,7],[5,1,6]->[5,1,2,7]],[0,5]->[0,1,2,7]]->[0,1,2,3,4]");
  // Its third tree needs permutations above the leaves whose layout no order choice fixes.
  EinsumTree third = parse_einsum_tree(kSeedTrees[4], small_sizes(3));
  EXPECT_GT(optimize_einsum_tree(third), 0);
}

TEST(EinsumTree, TreePassGivesAShortRowRootLongRowsAndAPermutation) {
  // The third tree's root writes [5,6,7,8,9]: as given, only id 9 (5 rows) can be the GEMM's
  // rows. Computing [7,8,5,6,9] makes 5, 6 and 9 the rows (125) and permutes afterwards.
  const std::vector<std::int64_t> sizes{8, 8, 8, 8, 8, 5, 5, 5, 5, 5};
  const EinsumTree original = parse_einsum_tree(kSeedTrees[4], sizes);
  EinsumTree t = original;
  optimize_einsum_tree(t);
  const EinsumNode& root = t.nodes[static_cast<std::size_t>(t.root)];
  ASSERT_EQ(root.kind, EinsumNode::Kind::permutation);
  EXPECT_EQ(root.ids, (std::vector<int>{5, 6, 7, 8, 9}));
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(root.left)].ids, (std::vector<int>{7, 8, 5, 6, 9}));
  for (int threads = 1; threads <= 2; ++threads) {
    omp_set_num_threads(threads);
    check_tree(original, t, {.allow_generic_primitives = false});
  }
  // A long-row root keeps its order: the first tree's root rows (3, 4) are contiguous already.
  EinsumTree first = parse_einsum_tree(kSeedTrees[2], {100, 72, 128, 128, 3, 71, 305, 32, 3});
  optimize_einsum_tree(first);
  EXPECT_EQ(first.nodes[static_cast<std::size_t>(first.root)].kind, EinsumNode::Kind::contraction);
  omp_set_num_threads(2);
}

TEST(EinsumTree, TreePassLeavesNoNodeUnreachable) {
  // fuzz/corpus/einsum/optimize-removes-permutation-flops.txt: the root permutation merges into the
  // contraction below it; the contraction's old node stayed behind, unreachable, and counted in
  // flops() (and the optimized tree failed validate()).
  const EinsumTree original = parse_einsum_tree("[[2,3,0],[3,2,1]->[0,3,1,2]]->[1,3,2,0]", {9, 4, 4, 1});
  EinsumTree t = original;
  optimize_einsum_tree(t);
  EXPECT_EQ(t.nodes.size(), 3u) << t.to_string();
  EXPECT_EQ(t.flops(), original.flops());
  EXPECT_NO_THROW(validate(t));
  check_tree(original, t, {});
}

TEST(EinsumTree, TensorsOfMoreThanInt64MaxElementsAreRejected) {
  // fuzz/corpus/einsum/ubsan-tree-pass-size-overflow.txt: the tree pass multiplied the sizes of
  // the tensor [0,1] (2^62 x 2) in int64.
  const std::vector<std::int64_t> sizes{std::int64_t{1} << 62, 2, 3};
  const char* const text = "[0,1],[2]->[2,0,1]";
  try {
    parse_einsum_tree(text, sizes);
    FAIL() << "parse_einsum_tree accepted a tensor of 2^63 elements";
  } catch (const EinsumParseError& e) {
    EXPECT_EQ(e.position(), 1u);
    EXPECT_NE(e.problem().find("tensor [0,1]"), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find("4611686018427387904 x 2"), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find("limit 9223372036854775807"), std::string::npos) << e.what();
  }
  // The same tree built by hand: validate() (and so the tree pass) rejects it.
  EinsumTree t = parse_einsum_tree(text, {4, 2, 3});
  t.dim_sizes = sizes;
  try {
    optimize_einsum_tree(t);
    FAIL() << "optimize_einsum_tree accepted a tensor of 2^63 elements";
  } catch (const weft::Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("limit 9223372036854775807"), std::string::npos) << e.what();
  }
  // 2^62 x 1 x 1 elements fit.
  EXPECT_NO_THROW(parse_einsum_tree("[0,1],[2]->[0,1,2]", {std::int64_t{1} << 62, 1, 1}));
}

TEST(EinsumTree, ExecutionMatchesNaiveEvaluation) {
  for (int threads = 1; threads <= 3; ++threads) {
    omp_set_num_threads(threads);
    for (std::size_t i = 0; i < std::size(kSeedTrees); ++i) {
      SCOPED_TRACE(kSeedTrees[i]);
      const EinsumTree original = parse_einsum_tree(kSeedTrees[i], small_sizes(static_cast<std::uint32_t>(i + 10 * threads)));
      check_tree(original, original, {});  // without the tree pass (portable kernels where needed)
      check_tree(original, original, {.optimize_nodes = false});
      EinsumTree optimized = original;
      optimize_einsum_tree(optimized);
      check_tree(original, optimized, {});
      check_tree(original, optimized, {.allow_generic_primitives = false});  // all on TPPs
    }
  }
  omp_set_num_threads(2);
}

}  // namespace
}  // namespace weft::tensor::test
