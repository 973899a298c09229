// Tiles of a blocked operand, transposed for BRGEMM (which reads its operands untransposed), as
// the backward passes need them. The source is a grid of [outer][inner] tiles, each `rows x cols`
// column-major; tile (o, i), transposed to `cols x rows`, goes to slot (o, i) of the copy, or with
// `swap` to slot (i, o) of an [inner][outer] grid.
//
// In bf16 a tile may instead be repacked for BRGEMM's A operand (TileTransform; layouts in
// blocked_layout.hpp): vnni2_pack keeps a column-major tile's shape and interleaves its column
// pairs; vnni2_transpose turns a VNNI-2 tile (pairs of columns) into the VNNI-2 form of its
// transpose (pairs of rows). vnni2_pack is the unary TPP; the transposes are TileTranspose's
// (tile_transpose.hpp), vnni2_transpose through a tile of scratch per thread.
//
// The source may also be a plain column-major matrix read in place (source_ld > 0, its leading
// dimension): tile (o, i) is then the window at o * cols * source_ld + i * rows (ActivationTiles in
// gemm_layout.hpp: an activation as PyTorch holds it, o its batch block and i its feature block),
// every window whole (the grid divides the matrix).
//
// Either every tile is reformatted up front by a parallel loop into one shared copy, or
// (per_thread) each thread reformats the tiles it reads on first use into its own copy: no second
// parallel phase and no barrier, at the cost of a copy per thread.
//
//   TransposedTiles wt(bm, bk, Mb, Kb, /*swap=*/true, private_trans);   // W^T tiles
//   wt.start(weight);                                                    // once per run
//   loop([&](int* ind) {
//     const float* tiles = wt.tiles<float>(ThreadedLoop<3>::get_tid(ind), im, count, ik);
//     args.a = tiles + wt.offset(im, ik);
//   });
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <weft/jit/data_type.hpp>
#include <weft/ops/tile_transpose.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

enum class TileTransform {
  transpose,        // rows x cols column-major -> cols x rows column-major (f32, bf16 or f64)
  vnni2_pack,       // bf16: rows x cols column-major -> rows x cols VNNI-2 (cols even)
  vnni2_transpose,  // bf16: rows x cols VNNI-2 -> cols x rows VNNI-2 (rows and cols even)
};

class TransposedTiles {
 public:
  // Throws weft::Error for a transform the type does not have (VNNI-2 in f32 or f64) or odd pair
  // counts.
  // With PassCode::check the kernels and the loop are planned only (pass_code.hpp), and start() and
  // tiles() must not be called.
  TransposedTiles(std::int64_t rows, std::int64_t cols, std::int64_t outer, std::int64_t inner, bool swap,
                  bool per_thread, jit::DataType type = jit::DataType::f32,
                  TileTransform transform = TileTransform::transpose, PassCode code = PassCode::build,
                  std::int64_t source_ld = 0);

  // Before every run over `source` (elements of the type): reformats every tile now (shared copy),
  // or forgets which tiles the threads have reformatted (per-thread copies).
  void start(const void* source) const;
  // The copy thread `tid` reads, holding (at least) tiles (o, inner) for o in [outer_first,
  // outer_first + count): with per-thread copies, first reformats those this thread has not yet.
  // T is the element type given to the constructor.
  template <class T>
  const T* tiles(int tid, std::int64_t outer_first, std::int64_t count, std::int64_t inner) const {
    return static_cast<const T*>(copy_for(tid, outer_first, count, inner));
  }
  // Elements from the start of a copy to reformatted tile (o, i).
  std::int64_t offset(std::int64_t o, std::int64_t i) const {
    return (swap_ ? i * outer_ + o : o * inner_ + i) * tile_;
  }
  // Bytes start() allocates for a team of `threads`.
  std::uint64_t memory_bytes(int threads) const;

 private:
  const void* copy_for(int tid, std::int64_t outer_first, std::int64_t count, std::int64_t inner) const {
    if (!per_thread_) return shared_.data();
    for (std::int64_t o = outer_first; o < outer_first + count; ++o) transform_once(tid, o, inner);
    return copies_[static_cast<std::size_t>(tid)].data();
  }
  void transform_once(int tid, std::int64_t o, std::int64_t i) const;
  void transform(std::int64_t o, std::int64_t i, std::byte* copy) const;  // tile (o, i) of source_ into its slot

  std::int64_t rows_, cols_, outer_, inner_, tile_;
  std::int64_t source_ld_;  // 0: contiguous source tiles
  bool swap_, per_thread_;
  std::size_t element_bytes_;
  TileTransform transform_;
  std::optional<TileTranspose> transpose_;   // transpose, vnni2_transpose
  std::optional<tpp::Unary> pack_;           // vnni2_pack
  std::optional<parlooper::ThreadedLoop<2>> all_tiles_;  // (outer, inner), "AB": the up-front reformatting
  mutable const std::byte* source_ = nullptr;
  // Byte buffers holding elements of the type; std::vector's allocation is aligned for float.
  mutable std::vector<std::byte> shared_;
  mutable std::vector<std::vector<std::byte>> copies_;  // per thread
  mutable std::vector<std::vector<char>> done_;         // per thread, per tile: reformatted in this run
  mutable std::vector<std::vector<std::byte>> scratch_;  // per thread: a tile between the two steps
};

}  // namespace weft::ops
