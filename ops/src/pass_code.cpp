#include <weft/ops/pass_code.hpp>

#include <weft/jit/cpu.hpp>
#include <weft/parlooper/loop_string.hpp>

namespace weft::ops {

void plan_kernel(const tpp::BrgemmDesc& desc) { tpp::plan_brgemm(desc, jit::selected_isa()); }
void plan_kernel(const tpp::UnaryDesc& desc) { tpp::plan_unary(desc, jit::selected_isa()); }
void plan_kernel(const tpp::BinaryDesc& desc) { tpp::plan_binary(desc, jit::selected_isa()); }

parlooper::LoopNest checked_nest(const std::string& loop_string, std::span<const parlooper::LoopSpecs> specs) {
  parlooper::LoopNest nest = parlooper::parse_loop_string(loop_string, static_cast<int>(specs.size()));
  parlooper::make_nest_bounds(nest, specs);
  return nest;
}

}  // namespace weft::ops
