#include <weft/tuner/tile_bound.hpp>

#include <gtest/gtest.h>

#include "weft/jit/error.hpp"

namespace weft::tuner {
namespace {

TEST(TileBound, KeysTakeTheOneValueEverySettingGivesATile) {
  const WorkloadKey free{.kind = "conv_fwd", .shape = {{"N", 1}}, .dtype = "fp32", .threads = 2};
  const std::vector<Knobs> choices{{{"bc", 32}, {"bk", 64}, {"h_in_gemm", 1}}, {{"bc", 32}, {"bk", 64}, {"h_in_gemm", 7}}};
  const WorkloadKey bound = tile_bound_key(free, choices, {"bc", "bk"});
  EXPECT_EQ(bound.tiles, (Knobs{{"bc", 32}, {"bk", 64}}));
  EXPECT_EQ(bound.shape, free.shape);
  EXPECT_NE(bound, free);
  EXPECT_THROW(tile_bound_key(free, {{{"bc", 32}}, {{"bc", 64}}}, {"bc"}), Error);  // two values
  EXPECT_THROW(tile_bound_key(free, {{{"bc", 32}}}, {"bk"}), Error);                 // no such knob
  EXPECT_THROW(tile_bound_key(free, {}, {"bc"}), Error);                            // nothing to bind
}

TEST(TileBound, ConfigurationsHaveOrGetTiles) {
  TunedConfig config;
  config.knobs = {{"bm", 32}, {"bn", 16}};
  config.loop_string = "aBC";
  EXPECT_TRUE(has_tiles(config, {}));
  EXPECT_TRUE(has_tiles(config, {{"bm", 32}}));
  EXPECT_FALSE(has_tiles(config, {{"bm", 64}}));
  EXPECT_FALSE(has_tiles(config, {{"bk", 32}}));  // a knob it does not set
  const TunedConfig tiled = with_tiles(config, {{"bm", 64}, {"bk", 16}});
  EXPECT_EQ(tiled.knobs, (Knobs{{"bm", 64}, {"bn", 16}, {"bk", 16}}));
  EXPECT_EQ(tiled.loop_string, "aBC");
}

}  // namespace
}  // namespace weft::tuner
