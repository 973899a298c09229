// Operand packing: a large GEMM whose A blocks would be read in place with a long leading dimension
// (1600^3 column-major: 6400 bytes between the 128-byte columns of a 32-row block) runs as
//
//   for m blocks of one register panel (shared among the threads)
//     for k chunks (only when the panel would outgrow max_panel_bytes)
//       for n blocks
//         C(m, n) = last(first(C(m, n)) + A_packed(m, k chunk) * B(k chunk, n))
//
// with A copied once per (m block, k chunk) into the thread's contiguous buffer (pack_in0): the
// kernel streams a dense panel that stays in L2 across the whole n sweep, while B and C are read
// in place (the lowering prefetches their strided columns). Block sizes, measured on the 1600^3
// GEMM (Zen 3, 1 thread, ours and OpenBLAS interleaved in one process, median ratios):
//   - 32-row panels (one AVX2 register panel of the BRGEMM): a 64-row block packed with lda = 64
//     makes each 32-row panel read half of every A line: 0.63-0.67 against 0.85-0.90;
//   - the whole K per call, so C is loaded and stored once: K chunks of 160 / 320 / 800 (A panel
//     of 20 / 40 / 100 KiB) gave 0.68-0.73 / 0.65-0.79 / 0.86-0.92 against 0.88-0.90 for 1600
//     (200 KiB): every chunk revisits C tiles whose 50 columns each sit on their own page;
//   - n blocks of 50: 32, 40, 64, 80 and 100 are within noise of it (0.94-0.96 with prefetch);
//   - on two threads, m blocks that split evenly: on Zen 4 (AVX-512) 64-row panels make 25 blocks
//     of 1600 rows, 13 + 12, and ran 0.95-1.02x OpenBLAS; 32-row panels (50 blocks, the whole K per
//     call) 1.03-1.05x (phases of 5 runs each, 300 ms apart so neither runtime's idle threads
//     spin during the other's runs); on one thread the two are within noise (1.02-1.03x);
// and the layouts tried before (prepacked buffers, without packing costs): A and B packed in
// blocks with K chunks of 5 x 64 and C in place (the GEMM sample's structure) 0.86-0.90; the same
// with C blocked too 1.01-1.03, but packing C and unpacking it again through memory, on top of A
// and B, costs 8 % of the time; B packed into 64 x 50 blocks under a 25-block batch 0.50 (75 short
// runs of B per register tile; B read in place streams its columns contiguously along k).
#include <algorithm>
#include <cstdlib>

#include "weft/jit/cpu.hpp"
#include "weft/jit/isa_traits.hpp"
#include "prim_dims.hpp"
#include "weft/tensor/passes.hpp"

namespace weft::tensor {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// The divisor of `size` in [lo, hi] nearest `target` (ties: the larger), or 0.
std::int64_t nearest_divisor(std::int64_t size, std::int64_t lo, std::int64_t hi, std::int64_t target,
                             std::int64_t multiple_of = 1) {
  std::int64_t best = 0;
  for (std::int64_t b = std::max<std::int64_t>(lo, 1); b <= std::min(hi, size); ++b) {
    if (size % b != 0 || b % multiple_of != 0) continue;
    if (best == 0 || std::llabs(b - target) <= std::llabs(best - target)) best = b;
  }
  return best;
}

// Rows of one vector register (8 / 16 floats, 4 / 8 doubles on AVX2 / AVX-512).
std::int64_t vector_rows(std::size_t element_bytes) {
  return jit::isa_traits(jit::selected_isa()).lanes(static_cast<int>(element_bytes));
}

// The packing's block sizes were measured in fp32 (the figures above), where a block is one
// register panel. Each m block streams all of B (from L3 or memory, once per block), doing
// 2 * rows / element_bytes flops per byte of it: a panel of doubles has half the rows of a panel of
// floats at twice the bytes, which would quarter that, so wider elements get as many more rows as
// keep it (fp64: 128 rows, four register panels of 32, on AVX-512; 64 on AVX2). The lowering packs
// and multiplies such a block panel by panel (lowering.cpp, Primitives), so the A panel budget
// (max_panel_bytes) is what one register panel streams per call: the K chunk is the same for fp32
// and fp64 (1024 for 256 KiB on AVX-512). Measured on 2048^3 fp64 (Zen 4, 1 MiB L2, one thread,
// ours and OpenBLAS dgemm alternating, median ratios of three runs): blocks of one f64 register
// panel (32 x 1024) 0.94-0.98; 128 x 256 0.96; 128 x 512 1.00 (one call per block: 0.97-0.98 with
// the block packed as one); 128 x 1024 1.02-1.04; the whole K (128 x 2048) 1.02.
std::int64_t default_block_rows(std::size_t element_bytes) {
  return detail::brgemm_panel_rows(4) * static_cast<std::int64_t>(element_bytes) / 4;
}

// How much longer the busiest of `threads` threads works than the average, sharing `blocks` blocks.
double imbalance(std::int64_t blocks, int threads) {
  const std::int64_t per_thread = (blocks + threads - 1) / threads;
  return static_cast<double>(per_thread * threads) / static_cast<double>(blocks) - 1.0;
}

// Rows per m block: the whole dim when it fits one panel; else a divisor filling at least half a
// panel, nearest a full one, in whole vector registers (else in multiples of 8 rows), preferring
// the divisors whose blocks split evenly over the threads; 0 when no divisor fits.
std::int64_t choose_block_rows(std::int64_t rows, std::int64_t panel, std::int64_t vector,
                               const PackOptions& options) {
  if (rows <= panel) return rows;
  const std::int64_t lo = (panel + 1) / 2;
  for (const bool balanced : {true, false})
    for (const std::int64_t multiple : {vector, std::int64_t{8}}) {
      std::int64_t best = 0;
      for (std::int64_t b = lo; b <= panel; ++b) {
        if (rows % b != 0 || b % multiple != 0) continue;
        if (balanced && imbalance(rows / b, std::max(1, options.threads)) > options.imbalance) continue;
        if (best == 0 || std::llabs(b - panel) <= std::llabs(best - panel)) best = b;
      }
      if (best != 0) return best;
    }
  return 0;
}

// Splits d into (outer, inner = block) and returns the outer part; d becomes the inner part. When
// block does not divide the size, the outer part's last iteration covers the remainder.
Dim split(Dim& d, std::int64_t block) {
  Dim outer = d;
  outer.size = (d.size + block - 1) / block;
  outer.stride_in0 = d.stride_in0 * block;
  outer.stride_in1 = d.stride_in1 * block;
  outer.stride_out = d.stride_out * block;
  outer.last_block = d.size % block;
  d.size = block;
  return outer;
}

}  // namespace

bool pack_operands(Contraction& op, const PackOptions& options) {
  const std::size_t element_bytes = element_size(op.dtype);
  if (!is_gemm_like(op.main) || element_bytes == 0) return false;
  if (std::any_of(op.dims.begin(), op.dims.end(), [](const Dim& d) { return d.last_block != 0; }))
    return false;  // split with remainders already
  // Roles, as primitive identification picks them (any prim/shared marks are the caller's old
  // choice: this pass chooses all of them again).
  std::size_t m = kNone, n = kNone, k = kNone;
  double columns = 1.0, rows = 1.0;
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim& d = op.dims[i];
    if (d.type == dim_t::m && d.stride_in0 == 1 && d.stride_out == 1 &&
        (m == kNone || d.size > op.dims[m].size))
      m = i;
    if (d.type == dim_t::k && d.stride_in1 == 1 && (k == kNone || d.size > op.dims[k].size)) k = i;
    if (d.type == dim_t::n && (n == kNone || d.stride_out < op.dims[n].stride_out)) n = i;
    if (d.type == dim_t::n) columns *= static_cast<double>(d.size);
    if (d.type == dim_t::m) rows *= static_cast<double>(d.size);
  }
  if (m == kNone || n == kNone || k == kNone) return false;
  const Dim M = op.dims[m], N = op.dims[n], K = op.dims[k];
  const std::int64_t panel = options.panel_rows > 0 ? options.panel_rows : default_block_rows(element_bytes);
  // Rows per block: the whole m dim when it fits one panel, else the divisor in whole vectors filling
  // most of a panel (at least half of it), else full panels and a remainder.
  std::int64_t bm = choose_block_rows(M.size, panel, vector_rows(element_bytes), options);
  if (bm == 0) bm = panel;
  // Packing pays when the A block is strided (a leading dimension other than its rows) and every
  // packed panel serves many columns; small GEMMs stay as they are.
  const std::int64_t lda = K.size == 1 ? bm : K.stride_in0;
  const double a_bytes = rows * static_cast<double>(K.size) * static_cast<double>(element_bytes);
  if (lda == bm || columns < static_cast<double>(options.min_columns) ||
      a_bytes < static_cast<double>(options.min_a_bytes))
    return false;
  // The reduction per call: all of K unless the panel outgrows max_panel_bytes, then a divisor in
  // the upper half of what fits (a multiple of 8, the kernel's k unroll, when there is one), else
  // what fits, rounded down to a multiple of 8, and a remainder.
  // (The bytes of A one register panel of the kernel streams per call: a block of several panels
  // is packed and multiplied panel by panel.)
  const std::int64_t streamed_rows = std::min(bm, detail::brgemm_panel_rows(element_bytes));
  const auto panel_bytes = [&](std::int64_t kc) { return streamed_rows * kc * static_cast<std::int64_t>(element_bytes); };
  std::int64_t kc = K.size;
  if (panel_bytes(kc) > options.max_panel_bytes) {
    const std::int64_t max_kc = std::max<std::int64_t>(1, options.max_panel_bytes / panel_bytes(1));
    kc = nearest_divisor(K.size, (max_kc + 1) / 2, max_kc, max_kc, 8);
    if (kc == 0) kc = nearest_divisor(K.size, (max_kc + 1) / 2, max_kc, max_kc);
    if (kc == 0) kc = max_kc >= 8 ? max_kc / 8 * 8 : max_kc;
  }
  // Columns per block: a divisor near block_cols, else block_cols and a remainder.
  std::int64_t bn = N.size;
  if (N.size > 2 * options.block_cols) {
    bn = nearest_divisor(N.size, (options.block_cols + 1) / 2, 2 * options.block_cols, options.block_cols);
    if (bn == 0) bn = options.block_cols;
  }

  // The new order: c loops, m loops (the m blocks last), other k loops and the k chunks (each A
  // panel is packed once for all of the n sweep below them), n loops; then the prim blocks.
  std::vector<Dim> c_loops, m_loops, k_loops, n_loops;
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    if (i == m || i == n || i == k) continue;
    Dim d = op.dims[i];
    d.exec = exec_t::seq;
    (d.type == dim_t::c ? c_loops : d.type == dim_t::m ? m_loops : d.type == dim_t::k ? k_loops : n_loops)
        .push_back(d);
  }
  const auto by_out_stride = [](const Dim& a, const Dim& b) { return a.stride_out > b.stride_out; };
  std::stable_sort(m_loops.begin(), m_loops.end(), by_out_stride);
  std::stable_sort(n_loops.begin(), n_loops.end(), by_out_stride);
  Dim m_in = M, n_in = N, k_in = K;
  m_in.exec = n_in.exec = k_in.exec = exec_t::prim;
  if (bm < M.size) m_loops.push_back(split(m_in, bm));
  if (kc < K.size) k_loops.push_back(split(k_in, kc));
  if (bn < N.size) n_loops.push_back(split(n_in, bn));
  std::vector<Dim> dims;
  for (auto* group : {&c_loops, &m_loops, &k_loops, &n_loops})
    for (Dim& d : *group) {
      d.exec = exec_t::seq;
      dims.push_back(d);
    }
  dims.push_back(m_in);
  dims.push_back(n_in);
  dims.push_back(k_in);
  op.dims = std::move(dims);
  op.main = prim_t::gemm;
  op.pack_in0 = true;
  return true;
}

}  // namespace weft::tensor
