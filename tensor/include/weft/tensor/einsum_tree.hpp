// Einsum trees in the seed documents' notation, their optimization pass and their execution.
//
//   [[8,4],[7,3,8]->[7,3,4]],[[[2,6,7],[1,5,6]->[1,2,5,7]],[0,5]->[0,1,2,7]]->[0,1,2,3,4]
//
// A bracketed list of dimension ids is a tensor; the last id is its unit-stride dimension (tensors
// are dense, row-major in their id order). "A,B->C" contracts A and B into C (ids of A and B that C
// lacks are summed over), "A->C" permutes A into C. Operands are leaves (input tensors, numbered
// left to right) or bracketed subtrees. Dimension sizes are given as a list indexed by id.
//
//   EinsumTree tree = parse_einsum_tree(text, {100, 72, 128, 128, 3, 71, 305, 32, 3});
//   optimize_einsum_tree(tree);                 // swap operands, reorder ids, insert permutations
//   EinsumTreeOperation op(tree);               // one TensorOperation per node, buffers between
//   op.execute(inputs, output);                 // inputs[i] = leaf i
//
// Contraction nodes lower with the left operand as in0: it holds the output's unit-stride dim
// (the BRGEMM's M), the right operand's unit-stride dim is summed over (the K).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/jit/error.hpp"
#include "weft/tensor/types.hpp"

namespace weft::tensor {

struct EinsumNode {
  enum class Kind { leaf, contraction, permutation };
  Kind kind = Kind::leaf;
  std::vector<int> ids;  // dimensions of this node's tensor, the last one unit-stride
  int left = -1;         // contraction: both children; permutation: left only (node indices)
  int right = -1;
  int input = -1;        // leaf: index of the input tensor
};

struct EinsumTree {
  std::vector<EinsumNode> nodes;
  int root = -1;
  std::vector<std::int64_t> dim_sizes;

  int num_inputs() const;
  // Elements of a node's tensor; throws weft::MemoryError when their number overflows 64 bits.
  std::int64_t elements(int node) const;
  // 2 * multiply-adds of every contraction node.
  double flops() const;
  // The seed notation (round-trips through parse_einsum_tree).
  std::string to_string() const;
};

// Errors name the position: "expected ']' at position 5" followed by the text and a caret.
class EinsumParseError : public weft::Error {
 public:
  EinsumParseError(const std::string& problem, std::string_view text, std::size_t position);
  std::size_t position() const { return position_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string problem_;
  std::size_t position_;
};

EinsumTree parse_einsum_tree(std::string_view text, std::vector<std::int64_t> dim_sizes);

// Throws weft::Error naming the node when a tree (built or edited by hand) is not one that
// parse_einsum_tree could have made: a root, kind, child, input or dimension id out of range, a node
// shared or unreachable, or dimension lists that do not form a contraction or permutation.
// optimize_einsum_tree and EinsumTreeOperation check their tree with it.
void validate(const EinsumTree& tree);

// The tree pass: for each contraction, swap the operands so the left one holds the output's
// unit-stride dim, choose the dimension order of every interior node (its parent's needs first),
// and insert permutation nodes above leaves (or subtrees) whose layout no order choice can fix.
// Permutation nodes whose child can produce their order directly are removed. Returns the number
// of permutation nodes inserted.
int optimize_einsum_tree(EinsumTree& tree);

struct EinsumOptions {
  dtype_t dtype = dtype_t::fp32;         // of every tensor, the inputs, intermediates and output
  int threads = 0;                       // 0: omp_get_max_threads()
  bool optimize_nodes = true;            // run the TensorOperation optimizer on every node
  bool allow_generic_primitives = true;  // nodes whose layout fits no TPP run portable kernels
};

class EinsumTreeOperation {
 public:
  // Throws weft::Error for an invalid tree (validate) and weft::MemoryError when the intermediate
  // tensors do not fit this machine (before allocating them), saying how much memory they need.
  explicit EinsumTreeOperation(const EinsumTree& tree, const EinsumOptions& options = {});
  ~EinsumTreeOperation();
  EinsumTreeOperation(EinsumTreeOperation&&) noexcept;
  EinsumTreeOperation& operator=(EinsumTreeOperation&&) noexcept;

  // inputs[i] is the tensor of leaf i (row-major in its ids); output is the root's tensor. The
  // overload must match EinsumOptions::dtype (float: fp32, double: fp64); throws weft::Error
  // otherwise, as for a wrong number of inputs or a null tensor.
  void execute(std::span<const float* const> inputs, float* output) const;
  void execute(std::span<const double* const> inputs, double* output) const;

  const EinsumTree& tree() const;
  std::string describe() const;

 private:
  void execute_typed(dtype_t dtype, std::span<const void* const> inputs, void* output) const;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace weft::tensor
