//===- WeightStreamingTest.cpp - Known answers for wall 6 -----------------===//
//
// Each expected value is a hand calculation written out in the test.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

// A layer of 1e9 bf16 parameters streamed at 1 TB/s into a 1 PFLOP/s engine
// running at 50%: streaming takes 2e9 B / 1e12 B/s = 2 ms whatever the
// batch; compute takes 2 x 1e9 x B / 5e14 = 4 us per token.
const Number Params = in<Number>(1e9), Eta = in<Number>(0.5);
const Bytes Bf16 = in<Bytes>(2);
const Bandwidth Inject = in<Bandwidth>(1e12);
const FlopRate Peak = in<FlopRate>(1e15);

double layerMs(double BatchTokens) {
  return weightStreamingLayerTime(Params, Bf16, Inject, in<Tokens>(BatchTokens),
                                  Peak, Eta)
             .value() *
         1e3;
}

TEST(WeightStreamingWall, CrossoverBatchByHand) {
  // B* = 1e15 x 0.5 x 2 B / (2 x 1e12 B/s) = 500 tokens.
  EXPECT_DOUBLE_EQ(
      weightStreamingCrossoverBatch(Bf16, Inject, Peak, Eta).value(), 500.0);
}

TEST(WeightStreamingWall, MaxSwitchesRegimeAtTheCrossover) {
  // Below 500 tokens streaming bounds the layer at 2 ms.
  EXPECT_DOUBLE_EQ(layerMs(250), 2.0);
  EXPECT_DOUBLE_EQ(layerMs(499), 2.0);
  // At the crossover both terms are 2 ms.
  EXPECT_DOUBLE_EQ(layerMs(500), 2.0);
  // Above it compute bounds: 501 x 4 us = 2.004 ms; 1,000 x 4 us = 4 ms.
  EXPECT_DOUBLE_EQ(layerMs(501), 2.004);
  EXPECT_DOUBLE_EQ(layerMs(1000), 4.0);
}

TEST(WeightStreamingWall, ModelIsLayersInSequence) {
  // 24 such layers at 1,000 tokens: 24 x 4 ms = 96 ms.
  Time Layer = in<Time>(layerMs(1000) / 1e3);
  EXPECT_DOUBLE_EQ(
      weightStreamingModelTime(in<Number>(24), Layer).value() * 1e3, 96.0);
}

TEST(WeightStreamingWall, FormulasCarryWallAndDimensions) {
  EXPECT_EQ(formula(FormulaId::WeightStreamingLayerTime).W,
            Wall::WeightStreaming);
  EXPECT_EQ(formula(FormulaId::WeightStreamingLayerTime).Result.str(), "s");
  EXPECT_EQ(formula(FormulaId::WeightStreamingLayerTime).Params[3].str(),
            "tok");
  EXPECT_EQ(formula(FormulaId::WeightStreamingCrossoverBatch).Result.str(),
            "tok");
  EXPECT_EQ(formula(FormulaId::WeightStreamingModelTime).W,
            Wall::WeightStreaming);
}

} // namespace
