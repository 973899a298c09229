// The ResNet-50 layer list: the file in the tree holds the network's 23 distinct convolutions, and
// the reader names the file, the line and the fault of a malformed line.
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <weft/jit/error.hpp>

#include "resnet50_layers.hpp"

namespace {

using weft::samples::ConvLayer;
using weft::samples::parse_resnet50_layers;
using weft::samples::read_resnet50_layers;

std::vector<ConvLayer> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_resnet50_layers(in, "list.txt");
}

// The message of the weft::Error that `read` throws ("" when it does not throw).
template <class Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const weft::Error& e) {
    return e.what();
  }
  return "";
}

const std::string kFwd = " | fwd Afgbdced 64 64 7 1 1 1 1 0 0";
const std::string kBwd = " | bwd Afgcbde 32 32 1 1 4 1 2";
const std::string kUpd = " | upd Aefdcb 32 32 1 1 0 0 0 0 0 1 1 1 0 1 0";

TEST(Resnet50Layers, TheListHasTheNetworksShapes) {
  const std::vector<ConvLayer> layers = read_resnet50_layers(WEFT_RESNET50_LAYERS);
  ASSERT_EQ(layers.size(), 23u);
  std::set<std::tuple<long, long, long, long, long, long, long>> shapes;
  int convolutions = 0, strided = 0;
  for (const ConvLayer& l : layers) {
    shapes.insert({l.H, l.W, l.C, l.K, l.R, l.stride, l.pad});
    convolutions += l.count;
    EXPECT_EQ(l.R, l.S) << l.name;
    EXPECT_EQ(l.pad, l.R / 2) << l.name;  // "same" padding: a stride-1 layer keeps its size
    EXPECT_TRUE(l.fwd.has_value()) << l.name;
    EXPECT_TRUE(l.upd.has_value()) << l.name;
    EXPECT_EQ(l.bwd.has_value(), l.id != 1) << l.name;  // no input gradient for the first layer
    if (l.stride == 2) ++strided;
  }
  EXPECT_EQ(shapes.size(), 23u) << "two lines have the same shape";
  EXPECT_EQ(convolutions, 53);  // 1 + 16 bottlenecks x 3 + 4 projections
  // conv1, then per stage 3-5 (v1.5) the 3x3 of the first block and the projection shortcut.
  EXPECT_EQ(strided, 7);
  const ConvLayer& conv1 = layers.front();
  EXPECT_EQ(std::tie(conv1.H, conv1.C, conv1.K, conv1.R, conv1.stride, conv1.pad),
            std::make_tuple(224, 3, 64, 7, 2, 3));
  EXPECT_EQ(conv1.ofh(), 112);
  for (const ConvLayer& l : layers) {
    if (l.R == 3 && l.stride == 2) {
      EXPECT_EQ(l.ofh() * 2, l.H) << l.name;  // v1.5: the 3x3 halves the size
    }
    if (l.R == 1 && l.stride == 2) {
      EXPECT_THAT(l.name, testing::EndsWith("branch1"));
    }
  }
  EXPECT_EQ(layers.back().ofh(), 7);
}

TEST(Resnet50Layers, ReadsEveryField) {
  const auto layers = parse("# comment\n\n 1 res4  14 14 1024 256 1 1 1 0 5" + kFwd + kBwd + kUpd + " # tail\n" +
                            "2 conv1 224 224 3 64 7 7 2 3 1 | fwd Abcdefg 4 64 1 2 1 1 1 0 1 | bwd - | upd -\n");
  ASSERT_EQ(layers.size(), 2u);
  const ConvLayer& a = layers[0];
  EXPECT_EQ(a.name, "res4");
  EXPECT_EQ(std::tie(a.H, a.W, a.C, a.K, a.R, a.S, a.stride, a.pad), std::make_tuple(14, 14, 1024, 256, 1, 1, 1, 0));
  EXPECT_EQ(a.count, 5);
  ASSERT_TRUE(a.fwd && a.bwd && a.upd);
  EXPECT_EQ(a.fwd->loop_string, "Afgbdced");
  EXPECT_EQ(std::tie(a.fwd->bc, a.fwd->bk, a.fwd->h_block, a.fwd->pack_input), std::make_tuple(64, 64, 7, 0));
  EXPECT_EQ(std::tie(a.bwd->bc, a.bwd->c_block, a.bwd->h_in_gemm), std::make_tuple(32, 4, 2));
  EXPECT_EQ(a.upd->loop_string, "Aefdcb");
  EXPECT_EQ(a.upd->bf16_knobs.size(), 13u);
  const ConvLayer& b = layers[1];
  EXPECT_EQ(b.fwd->w_block, 2);
  EXPECT_EQ(b.fwd->logical_padding, 1);
  EXPECT_FALSE(b.bwd.has_value());
  EXPECT_FALSE(b.upd.has_value());
  EXPECT_EQ(b.ofh(), 112);
  EXPECT_EQ(b.ofw(), 112);
}

TEST(Resnet50Layers, MalformedLinesNameFileLineAndFault) {
  const std::string shape = "1 l 14 14 64 64 3 3 1 1 1";
  const std::pair<std::string, std::string> cases[] = {
      {"# only comments\n", "list.txt: no layers"},
      {"1 l 14 14 64 64 3 3 1 1\n",
       "list.txt:1: a layer needs 11 fields (id name H W C K R S stride pad count), got 10"},
      {"\n1 l 14 14 6x4 64 3 3 1 1 1\n", "list.txt:2: C is '6x4', not an integer"},
      {"1 l 14 14 64 0 3 3 1 1 1\n", "list.txt:1: K is 0, must be at least 1"},
      {"1 l 14 14 64 3000000000 3 3 1 1 1\n", "list.txt:1: K is 3000000000, more than 2147483647"},
      {"2 l 14 14 64 64 3 3 1 1 1\n", "list.txt:1: ids count up from 1 in file order: expected 1, got 2"},
      {"1 l 2 2 64 64 7 7 1 1 1\n", "list.txt:1: the 7x7 filter does not fit in the 2x2 input padded by 1"},
      {shape + " | fwd Abc 64 64 1 1 1 1 1 0\n", "list.txt:1: fwd needs 9 numbers after its loop string (bc bk "},
      {shape + " | fwd Abc 64 64 1 1 1 1 1 2 0\n", "list.txt:1: pack_input is 2, must be 0 or 1"},
      {shape + " | bwd Abc 32 32 0 1 1 1 1\n", "list.txt:1: h_block is 0, must be at least 1"},
      {shape + " | upd Abc 32 32 1\n", "list.txt:1: upd needs 15 numbers after its loop string"},
      {shape + " | fwd\n", "list.txt:1: fwd needs a loop string and its settings, or '-'"},
      {shape + " | bwd - 1\n", "list.txt:1: bwd - takes nothing after the '-'"},
      {shape + " | \n", "list.txt:1: an empty part between '|'"},
      {shape + " | gemm Abc\n", "list.txt:1: unknown pass 'gemm'"},
      {shape + " | bwd - | bwd -\n", "list.txt:1: pass bwd is given twice"},
  };
  // Clang 14 cannot capture a structured binding in a lambda, so the case is named whole.
  for (const auto& c : cases) EXPECT_THAT(error_of([&] { parse(c.first); }), testing::StartsWith(c.second)) << c.first;
}

TEST(Resnet50Layers, AMissingFileIsAnError) {
  EXPECT_THAT(error_of([] { read_resnet50_layers("/nonexistent/resnet50_layers.txt"); }),
              testing::StartsWith("cannot open the ResNet-50 layer list '/nonexistent/resnet50_layers.txt': "));
}

}  // namespace
