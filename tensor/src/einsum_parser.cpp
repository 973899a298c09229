// Recursive-descent parser of the einsum tree notation:
//   tree    := operand [ ',' operand ] '->' list  |  operand
//   operand := '[' ( ids | tree ) ']'
//   list    := '[' ids ']'       ids := [ id { ',' id } ]
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "weft/jit/checked_arithmetic.hpp"
#include "weft/tensor/einsum_tree.hpp"

namespace weft::tensor {

namespace {

bool has_id(const std::vector<int>& v, int id) { return std::find(v.begin(), v.end(), id) != v.end(); }

// What is wrong with an interior node's dimension lists given its children's, or "" when nothing.
std::string node_problem(const EinsumNode& node, const std::vector<int>& l, const std::vector<int>& r) {
  if (node.ids.empty()) return "the output of an operation needs at least one dimension id";
  for (int id : node.ids)
    if (!has_id(l, id) && !has_id(r, id)) return "output dimension " + std::to_string(id) + " appears in no operand";
  if (node.kind == EinsumNode::Kind::permutation) {
    if (node.ids.size() != l.size()) return "a permutation must keep every dimension of its operand";
  } else {
    for (const auto* side : {&l, &r})
      for (int id : *side)
        if (!has_id(node.ids, id) && !(has_id(l, id) && has_id(r, id)))
          return "dimension " + std::to_string(id) +
                 " is summed over one operand only; weft's contractions sum over dimensions both operands share";
  }
  return "";
}

std::string to_list(const std::vector<int>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

// Every element of every tensor of a tree has an int64 index (the tree pass, the executor and
// elements() multiply sizes in int64): throws weft::Error naming the tensor and the limit when the
// product of its sizes is larger.
void check_element_count(const std::vector<int>& ids, const std::vector<std::int64_t>& sizes) {
  std::int64_t elements = 1;
  for (int id : ids)
    elements = checked_mul(elements, sizes[static_cast<std::size_t>(id)], [&] {
      return "the element count of the tensor " + to_list(ids) + " (dimension " + std::to_string(id) + " of size " +
             std::to_string(sizes[static_cast<std::size_t>(id)]) + ")";
    });
}

std::string with_caret(const std::string& problem, std::string_view text, std::size_t position) {
  return "einsum tree: " + problem + " at position " + std::to_string(position) + "\n  " +
         std::string(text) + "\n  " + std::string(position, ' ') + "^";
}

class Parser {
 public:
  Parser(std::string_view text, EinsumTree& tree) : text_(text), tree_(tree) {}

  int parse() {
    skip();
    const int first = operand();
    skip();
    if (at_end()) return first;
    const int node = rest_of_tree(first);
    skip();
    if (!at_end()) fail("unexpected '" + std::string(1, text_[pos_]) + "' after the tree");
    return node;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { throw EinsumParseError(problem, text_, pos_); }
  bool at_end() const { return pos_ >= text_.size(); }
  void skip() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip();
    if (at_end() || text_[pos_] != c)
      fail(std::string("expected '") + c + "'" +
           (at_end() ? std::string(" but the text ends") : " but found '" + std::string(1, text_[pos_]) + "'"));
    ++pos_;
  }
  bool peek(char c) {
    skip();
    return !at_end() && text_[pos_] == c;
  }

  // ids up to (not including) ']'; checks range and duplicates.
  std::vector<int> ids() {
    std::vector<int> out;
    skip();
    const std::size_t list_start = pos_;
    if (peek(']')) return out;
    for (;;) {
      skip();
      const std::size_t start = pos_;
      if (at_end() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
        fail("expected a dimension id");
      long long value = 0;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        value = value * 10 + (text_[pos_] - '0');
        if (value > 1000000) fail("dimension id too large");
        ++pos_;
      }
      if (value >= static_cast<long long>(tree_.dim_sizes.size())) {
        pos_ = start;
        fail("dimension id " + std::to_string(value) + " has no size (" +
             std::to_string(tree_.dim_sizes.size()) + " sizes given)");
      }
      if (std::find(out.begin(), out.end(), static_cast<int>(value)) != out.end()) {
        pos_ = start;
        fail("dimension id " + std::to_string(value) + " appears twice in one tensor");
      }
      out.push_back(static_cast<int>(value));
      if (!peek(',')) break;
      ++pos_;
    }
    try {
      check_element_count(out, tree_.dim_sizes);
    } catch (const weft::Error& e) {
      pos_ = list_start;
      fail(e.what());
    }
    return out;
  }

  int add(EinsumNode node) {
    tree_.nodes.push_back(std::move(node));
    return static_cast<int>(tree_.nodes.size()) - 1;
  }

  int operand() {
    expect('[');
    skip();
    if (peek('[')) {
      const int first = operand();
      const int node = rest_of_tree(first);
      expect(']');
      return node;
    }
    EinsumNode leaf;
    leaf.ids = ids();
    if (leaf.ids.empty()) fail("a tensor needs at least one dimension id");
    leaf.input = inputs_++;
    expect(']');
    return add(std::move(leaf));
  }

  int rest_of_tree(int first) {
    int second = -1;
    if (peek(',')) {
      ++pos_;
      skip();
      second = operand();
    }
    skip();
    if (text_.substr(pos_, 2) != "->") fail(second < 0 ? "expected ',' or '->'" : "expected '->'");
    pos_ += 2;
    expect('[');
    const std::size_t list_pos = pos_;
    EinsumNode node;
    node.ids = ids();
    expect(']');
    node.kind = second < 0 ? EinsumNode::Kind::permutation : EinsumNode::Kind::contraction;
    node.left = first;
    node.right = second;
    check(node, list_pos);
    return add(std::move(node));
  }

  void check(const EinsumNode& node, std::size_t list_pos) {
    const auto& l = tree_.nodes[static_cast<std::size_t>(node.left)].ids;
    const std::vector<int> none;
    const auto& r = node.right < 0 ? none : tree_.nodes[static_cast<std::size_t>(node.right)].ids;
    const std::string problem = node_problem(node, l, r);
    if (problem.empty()) return;
    pos_ = list_pos;
    fail(problem);
  }

  std::string_view text_;
  EinsumTree& tree_;
  std::size_t pos_ = 0;
  int inputs_ = 0;
};

}  // namespace

EinsumParseError::EinsumParseError(const std::string& problem, std::string_view text,
                                   std::size_t position)
    : weft::Error(with_caret(problem, text, position)), problem_(problem), position_(position) {}

EinsumTree parse_einsum_tree(std::string_view text, std::vector<std::int64_t> dim_sizes) {
  EinsumTree tree;
  tree.dim_sizes = std::move(dim_sizes);
  for (std::size_t i = 0; i < tree.dim_sizes.size(); ++i)
    if (tree.dim_sizes[i] <= 0)
      throw weft::Error("einsum tree: dimension " + std::to_string(i) + " has size " +
                        std::to_string(tree.dim_sizes[i]) + "; sizes must be positive");
  Parser parser(text, tree);
  tree.root = parser.parse();
  return tree;
}

int EinsumTree::num_inputs() const {
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(), [](const EinsumNode& n) {
    return n.kind == EinsumNode::Kind::leaf;
  }));
}

std::int64_t EinsumTree::elements(int node) const {
  std::int64_t e = 1;
  bool overflow = false;
  for (int id : nodes[static_cast<std::size_t>(node)].ids)
    overflow = overflow || __builtin_mul_overflow(e, dim_sizes[static_cast<std::size_t>(id)], &e);
  if (overflow) {
    std::string dims;
    for (int id : nodes[static_cast<std::size_t>(node)].ids)
      dims += (dims.empty() ? "" : " x ") + std::to_string(dim_sizes[static_cast<std::size_t>(id)]);
    throw weft::MemoryError("einsum tree: the tensor of node " + std::to_string(node) + " (" + dims + ")",
                            weft::kBytesOverflow, weft::MemoryError::Reason::overflow);
  }
  return e;
}

void validate(const EinsumTree& tree) {
  const auto count = static_cast<int>(tree.nodes.size());
  auto fail = [&](int node, const std::string& problem) {
    throw weft::Error("einsum tree: node " + std::to_string(node) + ": " + problem);
  };
  if (tree.root < 0 || tree.root >= count)
    throw weft::Error("einsum tree: root " + std::to_string(tree.root) + " is no node (the tree has " +
                      std::to_string(count) + ")");
  for (std::size_t i = 0; i < tree.dim_sizes.size(); ++i)
    if (tree.dim_sizes[i] <= 0)
      throw weft::Error("einsum tree: dimension " + std::to_string(i) + " has size " +
                        std::to_string(tree.dim_sizes[i]) + "; sizes must be positive");
  const int leaves = tree.num_inputs();
  std::vector<int> parents(tree.nodes.size(), 0);
  std::vector<bool> input_seen(static_cast<std::size_t>(leaves), false);
  for (int i = 0; i < count; ++i) {
    const EinsumNode& n = tree.nodes[static_cast<std::size_t>(i)];
    if (n.kind != EinsumNode::Kind::leaf && n.kind != EinsumNode::Kind::contraction &&
        n.kind != EinsumNode::Kind::permutation)
      fail(i, "kind " + std::to_string(static_cast<int>(n.kind)) + " is none of leaf, contraction, permutation");
    for (std::size_t k = 0; k < n.ids.size(); ++k) {
      if (n.ids[k] < 0 || static_cast<std::size_t>(n.ids[k]) >= tree.dim_sizes.size())
        fail(i, "dimension id " + std::to_string(n.ids[k]) + " has no size (" + std::to_string(tree.dim_sizes.size()) +
                    " sizes given)");
      if (std::find(n.ids.begin(), n.ids.begin() + static_cast<std::ptrdiff_t>(k), n.ids[k]) !=
          n.ids.begin() + static_cast<std::ptrdiff_t>(k))
        fail(i, "dimension id " + std::to_string(n.ids[k]) + " appears twice in one tensor");
    }
    try {
      check_element_count(n.ids, tree.dim_sizes);
    } catch (const weft::Error& e) {
      fail(i, e.what());
    }
    if (n.kind == EinsumNode::Kind::leaf) {
      if (n.ids.empty()) fail(i, "a tensor needs at least one dimension id");
      if (n.input < 0 || n.input >= leaves || input_seen[static_cast<std::size_t>(n.input)])
        fail(i, "input " + std::to_string(n.input) + " is not one of 0.." + std::to_string(leaves - 1) +
                    " or belongs to another leaf too");
      input_seen[static_cast<std::size_t>(n.input)] = true;
      continue;
    }
    const bool two = n.kind == EinsumNode::Kind::contraction;
    for (int child : two ? std::vector<int>{n.left, n.right} : std::vector<int>{n.left}) {
      if (child < 0 || child >= count || child == i)
        fail(i, "child " + std::to_string(child) + " is no other node of the tree");
      ++parents[static_cast<std::size_t>(child)];
    }
    const std::vector<int> none;
    const std::string problem = node_problem(n, tree.nodes[static_cast<std::size_t>(n.left)].ids,
                                             two ? tree.nodes[static_cast<std::size_t>(n.right)].ids : none);
    if (!problem.empty()) fail(i, problem);
  }
  // A tree: the root has no parent, every other node exactly one, and all of them hang off the root.
  for (int i = 0; i < count; ++i) {
    const int expected = i == tree.root ? 0 : 1;
    if (parents[static_cast<std::size_t>(i)] != expected)
      fail(i, "is the operand of " + std::to_string(parents[static_cast<std::size_t>(i)]) + " nodes, not " +
                  std::to_string(expected) + (i == tree.root ? " (it is the root)" : ""));
  }
  int reached = 0;
  std::vector<int> stack{tree.root};
  while (!stack.empty() && reached <= count) {
    const EinsumNode& n = tree.nodes[static_cast<std::size_t>(stack.back())];
    stack.pop_back();
    ++reached;
    if (n.kind == EinsumNode::Kind::leaf) continue;
    stack.push_back(n.left);
    if (n.kind == EinsumNode::Kind::contraction) stack.push_back(n.right);
  }
  if (reached != count)
    throw weft::Error("einsum tree: " + std::to_string(count - reached) + " nodes are not reached from the root " +
                      std::to_string(tree.root) + " (or the nodes form a cycle)");
}

double EinsumTree::flops() const {
  double total = 0.0;
  for (const EinsumNode& n : nodes) {
    if (n.kind != EinsumNode::Kind::contraction) continue;
    std::set<int> all(n.ids.begin(), n.ids.end());
    for (int child : {n.left, n.right})
      for (int id : nodes[static_cast<std::size_t>(child)].ids) all.insert(id);
    double points = 2.0;
    for (int id : all) points *= static_cast<double>(dim_sizes[static_cast<std::size_t>(id)]);
    total += points;
  }
  return total;
}

std::string EinsumTree::to_string() const {
  // Children are written as operands: a leaf as its list, a subtree in brackets.
  auto write = [&](auto&& self, int index, bool top) -> std::string {
    const EinsumNode& n = nodes[static_cast<std::size_t>(index)];
    if (n.kind == EinsumNode::Kind::leaf) return to_list(n.ids);
    std::string s = self(self, n.left, false);
    if (n.kind == EinsumNode::Kind::contraction) s += "," + self(self, n.right, false);
    s += "->" + to_list(n.ids);
    return top ? s : "[" + s + "]";
  };
  return write(write, root, true);
}

}  // namespace weft::tensor
