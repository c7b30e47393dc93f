//===- Complexity.cpp - Wall 11: training compute and Chinchilla ----------===//
//
// C = 6 * N * D for a decoder trained on D tokens (Kaplan et al. 2020), and
// the compute-optimal N*, D* of a budget C under D = r * N (Hoffmann et al.
// 2022). Known answers: test/unit/ComplexityTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <cmath>

namespace mlsc::walls {

using namespace q;

namespace {
/// Six FLOPs per parameter per training token: 2 forward, 4 backward.
const FlopsPerToken SixPerToken = in<FlopsPerToken>(6.0);
} // namespace

Flops trainingCompute(Number Params, Tokens Data) {
  return SixPerToken * Params * Data;
}

Number computeOptimalParams(Flops Budget, Number TokensPerParam) {
  Number Squared = Budget / (SixPerToken * TokensPerParam * OneToken);
  return Number::from_value(std::sqrt(Squared.value()));
}

Number tokensPerParam(Tokens Data, Number Params) {
  return Data / (Params * OneToken);
}

Tokens computeOptimalTokens(Number Params, Number TokensPerParam) {
  return TokensPerParam * Params * OneToken;
}

} // namespace mlsc::walls
