// Tiles of a blocked operand, transposed for BRGEMM (which reads its operands untransposed), as
// the backward samples need them. The source is a grid of [outer][inner] tiles, each `rows x cols`
// column-major; tile (o, i), transposed to `cols x rows`, goes to slot (o, i) of the copy, or with
// `swap` to slot (i, o) of an [inner][outer] grid.
//
// Either every tile is transposed up front by a parallel loop into one shared copy, or
// (per_thread) each thread transposes the tiles it reads on first use into its own copy: no second
// parallel phase and no barrier, at the cost of a copy per thread.
//
//   TransposedTiles wt(bm, bk, Mb, Kb, /*swap=*/true, private_trans);   // W^T tiles
//   wt.start(weight);                                                    // once per run
//   loop([&](int* ind) {
//     const float* tiles = wt.tiles(ThreadedLoop<3>::get_tid(ind), im, count, ik);
//     args.a = tiles + wt.offset(im, ik);
//   });
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::samples {

class TransposedTiles {
 public:
  TransposedTiles(std::int64_t rows, std::int64_t cols, std::int64_t outer, std::int64_t inner, bool swap,
                  bool per_thread);

  // Before every run over `source`: transposes every tile now (shared copy), or forgets which
  // tiles the threads have transposed (per-thread copies).
  void start(const float* source) const;
  // The copy thread `tid` reads, holding (at least) tiles (o, inner) for o in [outer_first,
  // outer_first + count): with per-thread copies, first transposes those this thread has not yet.
  const float* tiles(int tid, std::int64_t outer_first, std::int64_t count, std::int64_t inner) const {
    if (!per_thread_) return shared_.data();
    for (std::int64_t o = outer_first; o < outer_first + count; ++o) transpose_once(tid, o, inner);
    return copies_[static_cast<std::size_t>(tid)].data();
  }
  // Floats from the start of a copy to transposed tile (o, i).
  std::int64_t offset(std::int64_t o, std::int64_t i) const {
    return (swap_ ? i * outer_ + o : o * inner_ + i) * tile_;
  }
  // Bytes start() allocates for a team of `threads`.
  std::uint64_t memory_bytes(int threads) const;

 private:
  void transpose_once(int tid, std::int64_t o, std::int64_t i) const;

  std::int64_t outer_, inner_, tile_;
  bool swap_, per_thread_;
  tpp::Unary transpose_;                  // one tile, rows x cols -> cols x rows
  parlooper::ThreadedLoop<2> all_tiles_;  // (outer, inner), "AB": the up-front transposes
  mutable const float* source_ = nullptr;
  mutable std::vector<float> shared_;
  mutable std::vector<std::vector<float>> copies_;  // per thread
  mutable std::vector<std::vector<char>> done_;     // per thread, per tile: transposed in this run
};

}  // namespace weft::samples
