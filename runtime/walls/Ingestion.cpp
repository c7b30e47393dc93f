//===- Ingestion.cpp - Wall 8: data demand against storage ----------------===//
//
// Bytes per token id and the share of time devices wait on storage. Known
// answers: test/unit/WallsTest.cpp (Ingestion.*), test/lit/eval/data.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>

namespace mlsc::walls {

using namespace q;

BytesPerToken tokenIdBytes(Number Vocab) {
  return in<BytesPerToken>(Vocab.value() < 65500 ? 2 : 4);
}

Number ingestionStall(Bandwidth Demand, Bandwidth Supply) {
  if (!(Demand.value() > 0))
    return in<Number>(0);
  return in<Number>(std::max(0.0, 1 - (Supply / Demand).value()));
}

} // namespace mlsc::walls
