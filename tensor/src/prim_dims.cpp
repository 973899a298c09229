#include "prim_dims.hpp"

#include "weft/jit/cpu.hpp"
#include "weft/jit/isa_traits.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace weft::tensor::detail {

namespace {
// A size-1 dimension is contiguous whatever its stride says.
bool unit(std::int64_t stride, std::int64_t size) { return stride == 1 || size == 1; }

std::string list(const std::vector<std::size_t>& dims) {
  std::string s;
  for (std::size_t i : dims) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return s.empty() ? "none" : s;
}
}  // namespace

std::int64_t brgemm_panel_rows(std::size_t element_bytes) {
  const jit::IsaTraits& traits = jit::isa_traits(jit::selected_isa());
  return std::max(1, traits.brgemm.panel_vectors * traits.lanes(static_cast<int>(element_bytes)));
}

std::vector<std::size_t> loop_dims(const Contraction& op) {
  std::vector<std::size_t> loops;
  for (std::size_t i = 0; i < op.dims.size(); ++i)
    if (op.dims[i].exec != exec_t::prim) loops.push_back(i);
  return loops;
}

std::size_t ragged_partner(const Contraction& op, std::size_t outer) {
  const Dim& o = op.dims[outer];
  std::size_t found = kNoDim;
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim& d = op.dims[i];
    if (i == outer || d.type != o.type || d.size < 2 || d.last_block != 0) continue;
    if (o.stride_in0 != d.size * d.stride_in0 || o.stride_in1 != d.size * d.stride_in1 ||
        o.stride_out != d.size * d.stride_out)
      continue;
    if (found != kNoDim) return kNoDim;  // ambiguous
    found = i;
  }
  return found;
}

std::vector<std::size_t> ragged_partners(const Contraction& op) {
  std::vector<std::size_t> partner(op.dims.size(), kNoDim);
  for (std::size_t j = 0; j < op.dims.size(); ++j)
    if (op.dims[j].last_block != 0) partner[j] = ragged_partner(op, j);
  return partner;
}

bool is_ragged_partner(const Contraction& op, std::size_t i) {
  const std::vector<std::size_t> partner = ragged_partners(op);
  return std::find(partner.begin(), partner.end(), i) != partner.end();
}

GemmRoles find_gemm_roles(const Contraction& op) {
  std::vector<std::size_t> by_type[4];
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim& d = op.dims[i];
    if (d.exec != exec_t::prim) continue;
    if (d.type == dim_t::c)
      throw ConfigError(error_t::err_invalid_primitive_configuration,
                        name_dimension(op, i) + " is prim, but a GEMM primitive has no c dimension: "
                                                "make it seq or shared");
    by_type[static_cast<int>(d.type)].push_back(i);
  }
  const std::size_t want_k = op.main == prim_t::brgemm ? 2 : 1;
  auto require = [&](dim_t t, std::size_t want) {
    const auto& got = by_type[static_cast<int>(t)];
    if (got.size() != want)
      throw ConfigError(error_t::err_invalid_primitive_configuration,
                        to_string(op.main) + " needs " + std::to_string(want) + " prim " +
                            to_string(t) + " dimension" + (want > 1 ? "s" : "") + ", found " +
                            std::to_string(got.size()) + " (dimensions: " + list(got) + ")");
  };
  require(dim_t::m, 1);
  require(dim_t::n, 1);
  require(dim_t::k, want_k);
  GemmRoles g;
  g.m = by_type[1][0];
  g.n = by_type[2][0];
  const auto& ks = by_type[3];
  if (ks.size() == 1) {
    g.k = ks[0];
  } else {
    // The GEMM's K is the one contiguous in B; the other one is reduced over the batch.
    const Dim& k0 = op.dims[ks[0]];
    const Dim& k1 = op.dims[ks[1]];
    const bool second_is_k =
        unit(k1.stride_in1, k1.size) ||
        (!unit(k0.stride_in1, k0.size) && k1.stride_in1 < k0.stride_in1);
    g.k = second_is_k ? ks[1] : ks[0];
    g.br = second_is_k ? ks[0] : ks[1];
  }
  return g;
}

bool fits_brgemm(const Contraction& op, const GemmRoles& g) {
  const Dim& m = op.dims[g.m];
  const Dim& k = op.dims[g.k];
  return unit(m.stride_in0, m.size) && unit(m.stride_out, m.size) && unit(k.stride_in1, k.size);
}

std::vector<std::size_t> find_elementwise_block(const Contraction& op) {
  std::vector<std::size_t> prims;
  for (std::size_t i = 0; i < op.dims.size(); ++i)
    if (op.dims[i].exec == exec_t::prim) prims.push_back(i);
  if (prims.size() > 2)
    throw ConfigError(error_t::err_invalid_primitive_configuration,
                      to_string(op.main) + " is a 2D primitive but " +
                          std::to_string(prims.size()) + " dimensions are prim (" +
                          list(prims) + "): make all but two seq or shared");
  if (prims.size() == 2 && op.dims[prims[1]].stride_out == 1 && op.dims[prims[0]].stride_out != 1)
    std::swap(prims[0], prims[1]);
  return prims;
}

}  // namespace weft::tensor::detail
