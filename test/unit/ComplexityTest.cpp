//===- ComplexityTest.cpp - Known answers for wall 11 (complexity) --------===//
//
// Chinchilla (Hoffmann et al. 2022, arXiv 2203.15556): Gopher's budget of
// 5.76e23 FLOP is spent compute-optimally by a model of about 70B
// parameters on about 1.4T tokens (ANCHORS T6). Each expected value is that
// published figure or a hand calculation written out here.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlsc;
using namespace mlsc::q;
using namespace mlsc::walls;

namespace {

const Number Twenty = in<Number>(20);

TEST(ComplexityWall, SixFlopsPerParameterPerToken) {
  // Chinchilla itself: 6 x 70e9 x 1.4e12 = 5.88e23 FLOP (ANCHORS T6 notes
  // the paper's 5.76e23 is Gopher's budget, which 6ND rounds up to this).
  EXPECT_DOUBLE_EQ(
      trainingCompute(in<Number>(70e9), in<Tokens>(1.4e12)).value(), 5.88e23);
  // Llama 3.1 8B on 1e12 tokens: 6 x 8.03e9 x 1e12 = 4.818e22.
  EXPECT_DOUBLE_EQ(
      trainingCompute(in<Number>(8.03e9), in<Tokens>(1e12)).value(), 4.818e22);
}

TEST(ComplexityWall, ChinchillaOptimumOfGophersBudget) {
  // N* = sqrt(5.76e23 / (6 x 20)) = sqrt(4.8e21) = 69.28e9;
  // D* = 20 x N* = 1.386e12.
  Flops C = in<Flops>(5.76e23);
  double N = computeOptimalParams(C, Twenty).value();
  double D = computeOptimalTokens(in<Number>(N), Twenty).value();
  EXPECT_NEAR(N, std::sqrt(4.8e21), 1);
  EXPECT_NEAR(N, 69.282e9, 0.001e9);
  EXPECT_NEAR(D, 1.38564e12, 0.00001e12);
  // Within 2% of the published 70B and 1.4T.
  EXPECT_NEAR(N / 70e9, 1, 0.02);
  EXPECT_NEAR(D / 1.4e12, 1, 0.02);
}

TEST(ComplexityWall, TheOptimumSpendsTheBudget) {
  // 6 N* D* = C for any budget and ratio.
  for (double C : {1e18, 5.76e23, 3.8e25})
    for (double R : {10.0, 20.0, 40.0}) {
      Number N = computeOptimalParams(in<Flops>(C), in<Number>(R));
      Tokens D = computeOptimalTokens(N, in<Number>(R));
      EXPECT_NEAR(trainingCompute(N, D).value() / C, 1, 1e-12);
    }
}

} // namespace
