// The einsum tree pass. A contraction node runs as a BRGEMM when its left operand (in0) is
// contiguous along the output's unit-stride dim (M) and its right operand (in1) along a summed dim
// (K). The pass walks the tree from the root: each node states what it needs of its children's
// layouts; an interior child adopts the order asked for when it can produce that unit-stride dim
// itself, a leaf (fixed layout) or a child that cannot gets a permutation node above it. Orders
// keep shared dims in the same relative order in operands and output, so the optimizer's fusion
// pass can merge them afterwards.
#include <algorithm>
#include <vector>

#include "weft/tensor/einsum_tree.hpp"

namespace weft::tensor {

namespace {

using Kind = EinsumNode::Kind;

bool has(const std::vector<int>& v, int id) { return std::find(v.begin(), v.end(), id) != v.end(); }

class TreePass {
 public:
  explicit TreePass(EinsumTree& tree) : t_(tree) {}

  int run() {
    EinsumNode& root = node(t_.root);
    if (root.kind == Kind::contraction) {
      // The root's order is fixed: when it cannot be produced, or only as a GEMM with short rows,
      // compute in an order that makes a good GEMM, then permute.
      const std::vector<int> wanted = root.ids;
      std::vector<int> better;
      if (gemm_order_pays(t_.root, better)) {
        root.ids = better;
        t_.root = add_permutation(t_.root, wanted);
        chosen_permutation_ = t_.root;  // not to be merged back into the contraction
      } else if (!can_end_with(t_.root, wanted.back())) {
        root.ids = own_order(t_.root);
        t_.root = add_permutation(t_.root, wanted);
      }
    }
    process(t_.root);
    drop_unreachable();
    return inserted_;
  }

 private:
  EinsumNode& node(int i) { return t_.nodes[static_cast<std::size_t>(i)]; }
  std::int64_t size(int id) const { return t_.dim_sizes[static_cast<std::size_t>(id)]; }

  int add_permutation(int child, std::vector<int> ids) {
    EinsumNode p;
    p.kind = Kind::permutation;
    p.ids = std::move(ids);
    p.left = child;
    t_.nodes.push_back(std::move(p));
    ++inserted_;
    return static_cast<int>(t_.nodes.size()) - 1;
  }

  // Whether node i can produce a layout whose unit-stride dim is id without a permutation.
  bool can_end_with(int i, int id) {
    const EinsumNode& n = node(i);
    switch (n.kind) {
      case Kind::leaf: return n.ids.back() == id;
      case Kind::permutation: return has(n.ids, id);
      case Kind::contraction: return has(node(n.left).ids, id) != has(node(n.right).ids, id);
    }
    return false;
  }

  // A contraction's own choice when nobody asks: its current order with an id it can end with
  // (the largest one) moved last.
  std::vector<int> own_order(int i) {
    std::vector<int> ids = node(i).ids;
    if (can_end_with(i, ids.back())) return ids;
    int best = -1;
    for (int id : ids)
      if (can_end_with(i, id) && (best < 0 || size(id) > size(best))) best = id;
    if (best >= 0) {
      ids.erase(std::find(ids.begin(), ids.end(), best));
      ids.push_back(best);
    }
    return ids;
  }

  std::int64_t extent(const std::vector<int>& ids) const {
    std::int64_t e = 1;
    for (int id : ids) e *= size(id);
    return e;
  }

  // The GEMM rows (M) of contraction i in its current order are the trailing run of output ids
  // from one operand: only those fuse into one unit-stride dimension in both that operand and the
  // output. When that run is short (an AVX2 GEMM wants 64 rows and more) but the ids of one
  // operand span many more rows, the order (shared ids, other operand's ids, that operand's ids)
  // makes them all rows; the permutation back then moves each output element once, cheap next
  // to a reduction of kMinDepth or more multiply-adds per element. Sets `order` when it pays.
  bool gemm_order_pays(int i, std::vector<int>& order) const {
    constexpr std::int64_t kMinRows = 64, kMinDepth = 64;
    const EinsumNode& n = t_.nodes[static_cast<std::size_t>(i)];
    const std::vector<int>& l = t_.nodes[static_cast<std::size_t>(n.left)].ids;
    const std::vector<int>& r = t_.nodes[static_cast<std::size_t>(n.right)].ids;
    std::vector<int> batch, left_only, right_only, summed;
    for (int id : n.ids) (has(l, id) && has(r, id) ? batch : has(l, id) ? left_only : right_only).push_back(id);
    for (int id : l)
      if (has(r, id) && !has(n.ids, id)) summed.push_back(id);
    const int last = n.ids.back();
    const std::vector<int>* rows_side = has(left_only, last) ? &left_only : has(right_only, last) ? &right_only : nullptr;
    std::int64_t rows = 1;
    if (rows_side != nullptr)
      for (auto it = n.ids.rbegin(); it != n.ids.rend() && has(*rows_side, *it); ++it) rows *= size(*it);
    const bool left_rows = extent(left_only) >= extent(right_only);
    const std::vector<int>& ms = left_rows ? left_only : right_only;
    const std::vector<int>& ns = left_rows ? right_only : left_only;
    if (rows >= kMinRows || extent(ms) < 2 * std::max(rows, kMinRows / 2) || extent(summed) < kMinDepth)
      return false;
    order = batch;
    order.insert(order.end(), ns.begin(), ns.end());
    order.insert(order.end(), ms.begin(), ms.end());
    return true;
  }

  // How well child i can end with id: 0 best (a leaf ending with it, or a contraction whose leaf
  // operand ends with it), 1 feasible, 2 needs a permutation.
  int cost_of_ending(int i, int id) {
    const EinsumNode& n = node(i);
    if (!can_end_with(i, id)) return 2;
    if (n.kind == Kind::leaf) return 0;
    if (n.kind == Kind::contraction)
      for (int c : {n.left, n.right})
        if (node(c).kind == Kind::leaf && node(c).ids.back() == id) return 0;
    return 1;
  }

  // Makes child `slot` of `parent` produce `wanted` (or at least end with wanted.back()).
  void require(int parent, bool left_slot, const std::vector<int>& wanted) {
    const int child = left_slot ? node(parent).left : node(parent).right;
    EinsumNode& c = node(child);
    int replacement = child;
    if (c.kind == Kind::leaf) {
      if (c.ids.back() != wanted.back()) replacement = add_permutation(child, wanted);
    } else if (can_end_with(child, wanted.back())) {
      c.ids = wanted;
    } else {
      c.ids = own_order(child);
      replacement = add_permutation(child, wanted);
    }
    (left_slot ? node(parent).left : node(parent).right) = replacement;
  }

  void process(int i) {
    EinsumNode& n = node(i);
    if (n.kind == Kind::leaf) return;
    if (n.kind == Kind::permutation) {
      const int c = n.left;
      if (node(c).kind == Kind::contraction && can_end_with(c, n.ids.back()) && i != chosen_permutation_) {
        // The child can write this order itself: the permutation disappears.
        EinsumNode merged = node(c);
        merged.ids = n.ids;
        node(i) = merged;
        process(i);
        return;
      }
      if (node(c).kind == Kind::contraction && i != chosen_permutation_) node(c).ids = own_order(c);
      process(node(i).left);
      return;
    }
    const int u = n.ids.back();
    if (!has(node(n.left).ids, u)) std::swap(n.left, n.right);
    const std::vector<int> out = n.ids;
    const std::vector<int>& l = node(n.left).ids;
    const std::vector<int>& r = node(n.right).ids;
    std::vector<int> batch, ms, ns, ks;
    for (int id : out) (has(l, id) && has(r, id) ? batch : has(l, id) ? ms : ns).push_back(id);
    for (int id : l)
      if (has(r, id) && !has(out, id)) ks.push_back(id);
    if (!ks.empty()) {
      // The summed dim contiguous in the right operand: the one it can provide most cheaply.
      int best = ks.back();
      for (int id : ks)
        if (cost_of_ending(n.right, id) < cost_of_ending(n.right, best) ||
            (cost_of_ending(n.right, id) == cost_of_ending(n.right, best) && size(id) > size(best)))
          best = id;
      ks.erase(std::find(ks.begin(), ks.end(), best));
      ks.push_back(best);
    }
    std::vector<int> left_order = batch, right_order = batch;
    left_order.insert(left_order.end(), ks.begin(), ks.end());
    left_order.insert(left_order.end(), ms.begin(), ms.end());
    right_order.insert(right_order.end(), ns.begin(), ns.end());
    right_order.insert(right_order.end(), ks.begin(), ks.end());
    if (!ms.empty()) require(i, true, left_order);
    if (!ks.empty()) require(i, false, right_order);
    process(node(i).left);
    process(node(i).right);
  }

  // A permutation merged into its contraction child takes the child's place (process() has no
  // handle on the parent's link), which leaves the child's old node unreachable: it would still
  // count in flops() and fail validate(). Removes such nodes, keeping the others' order.
  void drop_unreachable() {
    std::vector<int> renumbered(t_.nodes.size(), -1);
    std::vector<int> stack{t_.root};
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      renumbered[static_cast<std::size_t>(i)] = 0;
      for (int child : {node(i).left, node(i).right})
        if (child >= 0) stack.push_back(child);
    }
    std::vector<EinsumNode> kept;
    for (std::size_t i = 0; i < t_.nodes.size(); ++i) {
      if (renumbered[i] < 0) continue;
      renumbered[i] = static_cast<int>(kept.size());
      kept.push_back(std::move(t_.nodes[i]));
    }
    for (EinsumNode& n : kept)
      for (int* child : {&n.left, &n.right})
        if (*child >= 0) *child = renumbered[static_cast<std::size_t>(*child)];
    t_.root = renumbered[static_cast<std::size_t>(t_.root)];
    t_.nodes = std::move(kept);
  }

  EinsumTree& t_;
  int inserted_ = 0;
  int chosen_permutation_ = -1;
};

}  // namespace

int optimize_einsum_tree(EinsumTree& tree) {
  validate(tree);
  return TreePass(tree).run();
}

}  // namespace weft::tensor
