//===- Locality.cpp - Wall 10: bisection bandwidth by topology ------------===//
//
// Known answers: test/unit/WallsTest.cpp (Locality.*) and
// test/lit/eval/locality.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <cmath>

namespace mlsc::walls {

using namespace q;

Bandwidth bisectionBandwidth(Number Topology, Number Nodes,
                             Bandwidth NodeBandwidth, Number Oversubscription) {
  double N = Nodes.value(), B = NodeBandwidth.value();
  if (N < 2)
    return in<Bandwidth>(0); // one node: nothing to cut
  switch (static_cast<int>(Topology.value())) {
  case 3:
    return in<Bandwidth>(std::cbrt(N) * std::cbrt(N) * B / 3);
  case 4:
    return in<Bandwidth>(N * B / 4);
  case 5:
    return NodeBandwidth;
  default:
    return in<Bandwidth>(N * B / (2 * Oversubscription.value()));
  }
}

} // namespace mlsc::walls
