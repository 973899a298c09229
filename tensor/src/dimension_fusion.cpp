// Dimension fusion: two adjacent dimensions that walk every tensor like one longer dimension
// (stride(outer) == stride(inner) * size(inner) in in0, in1 and out) become one. Small dimensions
// merged this way give the splitting pass sizes it can cut into good primitive blocks, e.g.
// (64, 25) with strides (25, 1) -> 1600 with stride 1 -> 25 x 64.
#include "prim_dims.hpp"
#include "weft/tensor/passes.hpp"

namespace weft::tensor {

namespace {
bool walks_as_one(const Dim& outer, const Dim& inner) {
  return outer.stride_in0 == inner.stride_in0 * inner.size &&
         outer.stride_in1 == inner.stride_in1 * inner.size &&
         outer.stride_out == inner.stride_out * inner.size;
}
}  // namespace

int fuse_dimensions(Contraction& op, const FusionOptions& options) {
  int fusions = 0;
  for (std::size_t i = 0; i + 1 < op.dims.size();) {
    Dim& outer = op.dims[i];
    const Dim& inner = op.dims[i + 1];
    // A remainder and its inner block keep their shape (fused, the last block would be lost).
    const bool ragged = outer.last_block != 0 || inner.last_block != 0 ||
                        detail::is_ragged_partner(op, i) || detail::is_ragged_partner(op, i + 1);
    const bool fusible = !ragged && outer.type == inner.type && outer.exec == inner.exec &&
                         outer.exec != exec_t::shared && walks_as_one(outer, inner) &&
                         std::min(outer.size, inner.size) < options.small_size &&
                         outer.size * inner.size <= options.max_fused_size;
    if (!fusible) {
      ++i;
      continue;
    }
    outer = Dim{inner.type, inner.exec, outer.size * inner.size, inner.stride_in0,
                inner.stride_in1, inner.stride_out};
    op.dims.erase(op.dims.begin() + static_cast<std::ptrdiff_t>(i + 1));
    ++fusions;  // stay at i: the fused dim may fuse with the next one too
  }
  return fusions;
}

}  // namespace weft::tensor
