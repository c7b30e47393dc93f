//===- Checkpoint.cpp - Wall 19: checkpoints, their interval, goodput -----===//
//
// A checkpoint's size, Young's and Daly's optimum intervals, and Daly's
// expected wall time with failures and restarts. Known answers:
// test/unit/WallsTest.cpp (Checkpoint.*) and test/lit/eval/reliability.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <cmath>

namespace mlsc::walls {

using namespace q;

Bytes checkpointSize(Number Params, Bytes WeightBytes, Bytes OptimizerBytes) {
  return Params * (WeightBytes + OptimizerBytes);
}

Time youngInterval(Time Write, Time Mtbf) {
  return in<Time>(std::sqrt(2 * Write.value() * Mtbf.value()));
}

Time dalyInterval(Time Write, Time Mtbf) {
  double D = Write.value(), M = Mtbf.value();
  if (!(D < 2 * M))
    return Mtbf;
  double X = D / (2 * M);
  return in<Time>(std::sqrt(2 * D * M) * (1 + std::sqrt(X) / 3 + X / 9) - D);
}

Time dalyWallTime(Time Solve, Time Interval, Time Write, Time Restart,
                  Time Mtbf) {
  double M = Mtbf.value();
  // expm1 keeps the result exact when failures are rare (tau + delta << M).
  return in<Time>(M * std::exp(Restart.value() / M) *
                  std::expm1((Interval + Write).value() / M) *
                  (Solve / Interval).value());
}

} // namespace mlsc::walls
