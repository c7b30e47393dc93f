//===- Safety.cpp - Wall 20: differentially private training --------------===//
//
// DP-SGD's slowdown and per-sample gradient memory, by implementation.
// Known answers: test/unit/WallsTest.cpp (Safety.*) and
// test/lit/eval/dp-sgd.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

namespace mlsc::walls {

using namespace q;

Number dpSgdSlowdown(Number Method, Number Naive, Number Ghost,
                     Number Bookkeeping) {
  switch (static_cast<int>(Method.value())) {
  case 1:
    return Naive;
  case 2:
    return Ghost;
  case 3:
    return Bookkeeping;
  default:
    return in<Number>(1);
  }
}

Bytes perSampleGradientBytes(Number Method, Number MicroBatch, Number Params,
                             Bytes GradientBytes) {
  if (static_cast<int>(Method.value()) != 1)
    return in<Bytes>(0);
  return MicroBatch * Params * GradientBytes;
}

} // namespace mlsc::walls
