// The convolution layouts' conversions (weft/ops/conv_layout.hpp): plain NCHW activations and
// KCRS filters to and from the blocked layouts, in f32 and bf16 (VNNI-2 filter tiles), checked
// element by element against the layouts' offsets on sizes that cross the conversions' 16 x 16
// patches and leave partial channel blocks.
#include <weft/ops/conv_layout.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace weft::ops {
namespace {

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// Distinct values, all exact in bf16 (consecutive bf16 bit patterns from 1.0 on, wrapping before
// infinity), so that a misplaced element cannot go unseen and f32 and bf16 compare exactly.
std::vector<float> distinct_values(std::int64_t count) {
  std::vector<float> values(at(count));
  for (std::int64_t i = 0; i < count; ++i)
    values[at(i)] = jit::to_float(jit::bfloat16{static_cast<std::uint16_t>(0x3f80 + i % 0x3f00)});
  return values;
}

std::vector<jit::bfloat16> bf16_of(const std::vector<float>& values) {
  std::vector<jit::bfloat16> out;
  for (float v : values) out.push_back(jit::to_bfloat16(v));
  return out;
}

std::vector<float> floats_of(const std::vector<jit::bfloat16>& values) { return to_floats(values.data(), std::ssize(values)); }

TEST(ConvLayout, ActivationsRoundTripWithZeroRimsAndChannelPadding) {
  const ActivationLayout l{.images = 2, .channels = {5, 4}, .h = 3, .w = 4, .pad_h = 1, .pad_w = 2};
  EXPECT_EQ(l.size(), 2 * 2 * 5 * 8 * 4);
  std::vector<float> plain(2 * 5 * 3 * 4);
  for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<float>(i + 1);
  const std::vector<float> blocked = nchw_to_blocked(plain.data(), l);
  EXPECT_EQ(nonzero_rim_elements(blocked.data(), l), 0);
  // Channel 2 of image 1, pixel (y 1, x 3): padded coordinates (2, 5).
  EXPECT_EQ(blocked[at(l.offset(1, 0, 2, 5) + 2)], plain[((1 * 5 + 2) * 3 + 1) * 4 + 3]);
  // Channel 6 and 7 (padding) of block 1 are zero everywhere.
  for (std::int64_t y = 0; y < l.padded_h(); ++y)
    for (std::int64_t x = 0; x < l.padded_w(); ++x)
      for (std::int64_t c = 1; c < 4; ++c) EXPECT_EQ(blocked[at(l.offset(0, 1, y, x) + c)], 0.0f);
  std::vector<float> back(plain.size());
  blocked_to_nchw(blocked.data(), back.data(), l);
  EXPECT_EQ(back, plain);

  std::vector<float> dirty = blocked;
  dirty[at(l.offset(1, 1, 0, 0))] = 1.0f;        // top rim
  dirty[at(l.offset(0, 0, 2, 7) + 3)] = -2.0f;   // right rim
  EXPECT_EQ(nonzero_rim_elements(dirty.data(), l), 2);
}

// Every element of the blocked buffer, real, rim or padding channel, against the layout's offsets:
// 37 channels in blocks of 32 (a partial block), a row of 21 pixels (a partial patch), rims; the
// buffer starts dirty, as a kept scratch does, so every element must be written.
TEST(ConvLayout, ActivationsWriteEveryElementAcrossPatchesInF32AndBf16) {
  const ActivationLayout l{.images = 2, .channels = {37, 32}, .h = 5, .w = 21, .pad_h = 1, .pad_w = 2};
  const std::int64_t C = 37;
  const std::vector<float> plain = distinct_values(l.images * C * l.h * l.w);
  std::vector<float> blocked(at(l.size()), -7.0f);
  nchw_to_blocked(plain.data(), l, blocked.data());
  for (std::int64_t n = 0; n < l.images; ++n)
    for (std::int64_t c = 0; c < l.channels.padded(); ++c)
      for (std::int64_t y = 0; y < l.padded_h(); ++y)
        for (std::int64_t x = 0; x < l.padded_w(); ++x) {
          const bool inside = c < C && y >= l.pad_h && y < l.pad_h + l.h && x >= l.pad_w && x < l.pad_w + l.w;
          const float expected = inside ? plain[at(((n * C + c) * l.h + y - l.pad_h) * l.w + x - l.pad_w)] : 0.0f;
          ASSERT_EQ(blocked[at(l.offset(n, c / 32, y, x) + c % 32)], expected) << n << " " << c << " " << y << " " << x;
        }
  std::vector<float> back(plain.size(), -7.0f);
  blocked_to_nchw(blocked.data(), back.data(), l);
  EXPECT_EQ(back, plain);

  // bf16 moves the same bits.
  const std::vector<jit::bfloat16> plain_h = bf16_of(plain);
  std::vector<jit::bfloat16> blocked_h(at(l.size()), jit::to_bfloat16(-7.0f));
  nchw_to_blocked(plain_h.data(), l, blocked_h.data());
  EXPECT_EQ(floats_of(blocked_h), blocked);
  std::vector<jit::bfloat16> back_h(plain.size());
  blocked_to_nchw(blocked_h.data(), back_h.data(), l);
  EXPECT_EQ(floats_of(back_h), plain);
}

// The ReLU's backward fused into the activation conversion: as nchw_to_blocked of the masked
// gradient (forward outputs > 0 or NaN pass), rims and padding channels zero, on a dirty buffer.
TEST(ConvLayout, ReluBackwardConvertsTheMaskedGradientInF32AndBf16) {
  const ActivationLayout l{.images = 2, .channels = {37, 32}, .h = 5, .w = 21, .pad_h = 1, .pad_w = 2};
  const std::int64_t count = l.images * 37 * l.h * l.w;
  const std::vector<float> grad = distinct_values(count);
  std::vector<float> forward(at(count)), masked(at(count));
  for (std::int64_t i = 0; i < count; ++i) {
    const float f = i % 3 == 0 ? 0.5f : i % 3 == 1 ? -0.0f : (i % 7 == 2 ? std::numeric_limits<float>::quiet_NaN() : -1.0f);
    forward[at(i)] = f;
    masked[at(i)] = f > 0.0f || f != f ? grad[at(i)] : 0.0f;
  }
  std::vector<float> expected(at(l.size())), got(at(l.size()), -7.0f);
  nchw_to_blocked(masked.data(), l, expected.data());
  nchw_to_blocked_relu_backward(grad.data(), forward.data(), l, got.data());
  EXPECT_EQ(got, expected);

  std::vector<jit::bfloat16> got_h(at(l.size()), jit::to_bfloat16(-7.0f));
  nchw_to_blocked_relu_backward(bf16_of(grad).data(), bf16_of(forward).data(), l, got_h.data());
  EXPECT_EQ(floats_of(got_h), expected);
}

TEST(ConvLayout, FiltersRoundTripAsBkByBcTiles) {
  const FilterLayout l{.k = {6, 4}, .c = {3, 2}, .r = 2, .s = 3};
  std::vector<float> kcrs(6 * 3 * 2 * 3);
  for (std::size_t i = 0; i < kcrs.size(); ++i) kcrs[i] = static_cast<float>(i + 1);
  const std::vector<float> blocked = kcrs_to_blocked(kcrs.data(), l);
  EXPECT_EQ(blocked.size(), static_cast<std::size_t>(2 * 2 * 2 * 3 * 2 * 4));
  // k 5, c 2, r 1, s 2 -> block (1, 1), tap (1, 2), element (c 0, k 1) of the tile.
  EXPECT_EQ(blocked[at(l.offset(1, 1, 1, 2) + 0 * 4 + 1)], kcrs[((5 * 3 + 2) * 2 + 1) * 3 + 2]);
  std::vector<float> back(kcrs.size());
  blocked_to_kcrs(blocked.data(), back.data(), l);
  EXPECT_EQ(back, kcrs);
}

// K = 40 in blocks of 32 and C = 50 in blocks of 32 (partial blocks, several 16 x 16 patches per
// block): 3 x 3 taps (f32: a transpose per input channel; bf16: the patches) and 1 x 1 (a
// transpose per tile; bf16: of the channel pairs); then a 1 x 1 filter of an odd C = 21, smaller
// than one block (bf16: element by element, its last channel pair half padding). The buffer starts dirty.
// bf16: kcrs_to_vnni2 is filter_to_vnni2 of the f32 conversion, bit for bit, and vnni2_to_kcrs its
// inverse.
TEST(ConvLayout, FiltersWriteEveryElementAcrossPatchesInF32AndVnni2) {
  for (const auto& [taps_r, C] : {std::pair<std::int64_t, std::int64_t>{3, 50}, {1, 50}, {1, 21}}) {
    SCOPED_TRACE(std::to_string(taps_r) + "x" + std::to_string(taps_r) + ", C " + std::to_string(C));
    const FilterLayout l{.k = {40, 32}, .c = {C, 32}, .r = taps_r, .s = taps_r};
    const std::int64_t K = 40, taps = taps_r * taps_r;
    const std::vector<float> kcrs = distinct_values(K * C * taps);
    std::vector<float> blocked(at(l.size()), -7.0f);
    kcrs_to_blocked(kcrs.data(), l, blocked.data());
    for (std::int64_t k = 0; k < l.k.padded(); ++k)
      for (std::int64_t c = 0; c < l.c.padded(); ++c)
        for (std::int64_t t = 0; t < taps; ++t) {
          const float expected = k < K && c < C ? kcrs[at((k * C + c) * taps + t)] : 0.0f;
          ASSERT_EQ(blocked[at(l.offset(k / 32, c / 32, t / taps_r, t % taps_r) + (c % 32) * 32 + k % 32)], expected)
              << k << " " << c << " " << t;
        }
    std::vector<float> back(kcrs.size(), -7.0f);
    blocked_to_kcrs(blocked.data(), back.data(), l);
    EXPECT_EQ(back, kcrs);

    const std::vector<jit::bfloat16> kcrs_h = bf16_of(kcrs);
    std::vector<jit::bfloat16> tiles(at(l.size()), jit::to_bfloat16(-7.0f));
    kcrs_to_vnni2(kcrs_h.data(), l, tiles.data());
    EXPECT_EQ(floats_of(tiles), floats_of(filter_to_vnni2(blocked, l)));
    std::vector<jit::bfloat16> back_h(kcrs.size());
    vnni2_to_kcrs(tiles.data(), back_h.data(), l);
    EXPECT_EQ(floats_of(back_h), kcrs);
  }
}

}  // namespace
}  // namespace weft::ops
