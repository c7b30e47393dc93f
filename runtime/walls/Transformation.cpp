//===- Transformation.cpp - Wall 9: CPU preprocessing ---------------------===//
//
// Cores needed for the input pipeline and the share of time devices wait
// on it. Known answers: test/unit/WallsTest.cpp (Transformation.*),
// test/lit/eval/data.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>

namespace mlsc::walls {

using namespace q;

Number preprocessCores(SampleRate Consumed, SampleRate PerCore) {
  return Consumed / PerCore;
}

Number preprocessStall(SampleRate Consumed, Number Cores, SampleRate PerCore) {
  if (!(Consumed.value() > 0))
    return in<Number>(0);
  return in<Number>(std::max(0.0, 1 - (Cores * PerCore / Consumed).value()));
}

} // namespace mlsc::walls
