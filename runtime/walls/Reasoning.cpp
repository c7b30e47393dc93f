//===- Reasoning.cpp - Wall 12: test-time compute -------------------------===//
//
// An answer's tokens and latency when a model thinks and samples. Known
// answers: test/unit/WallsTest.cpp (Reasoning.*) and
// test/lit/eval/reasoning.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>

namespace mlsc::walls {

using namespace q;

Tokens tokensPerAnswer(Number Samples, Tokens Thinking, Tokens Output) {
  return Samples * (Thinking + Output);
}

Time answerLatency(Time FirstToken, Tokens Decoded, Time PerToken) {
  double After = std::max(0.0, Decoded.value() - 1);
  return FirstToken + in<Number>(After) * PerToken;
}

} // namespace mlsc::walls
