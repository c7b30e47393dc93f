//===- Locality.cpp - Wall 10: bisection bandwidth by topology ------------===//
//
// Known answers: test/unit/WallsTest.cpp (Locality.*) and
// test/lit/eval/locality.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <cmath>

namespace mlsc::walls {

using namespace q;

Bandwidth bisectionBandwidth(Number Topology, Number Nodes,
                             Bandwidth NodeBandwidth, Number Oversubscription,
                             Number PodNodes) {
  double N = Nodes.value(), B = NodeBandwidth.value();
  if (N < 2)
    return in<Bandwidth>(0); // one node: nothing to cut
  switch (static_cast<int>(Topology.value())) {
  case 0:
    return in<Bandwidth>(N * B / 2); // one non-blocking switch
  case 3:
    return in<Bandwidth>(std::cbrt(N) * std::cbrt(N) * B / 3);
  case 4:
    return in<Bandwidth>(N * B / 4);
  case 5:
    return NodeBandwidth;
  default:
    // One pod is non-blocking; the oversubscribed tier joins pods.
    if (N <= PodNodes.value())
      return in<Bandwidth>(N * B / 2);
    return in<Bandwidth>(N * B / (2 * Oversubscription.value()));
  }
}

Number networkDiameter(Number Topology, Number Nodes, Number NodeNics,
                       Number Radix) {
  double N = Nodes.value();
  if (N <= 1)
    return in<Number>(1);
  switch (static_cast<int>(Topology.value())) {
  case 0:
    return in<Number>(1);
  case 3: {
    // The smallest cube of side k that holds the nodes.
    double K = std::ceil(std::cbrt(N) - 1e-9);
    return in<Number>(3 * std::floor(K / 2) + 1);
  }
  case 4:
    return in<Number>(4);
  case 5:
    return in<Number>(std::floor(N / 2) + 1);
  default: {
    // The fewest tiers whose k-ary fat tree connects every NIC.
    double E = N * NodeNics.value(), R = Radix.value();
    // t tiers connect 2 (r/2)^t NICs: r, r^2/2, r^3/4, r^4/8, ...
    double Tiers = 1;
    while (E > 2 * std::pow(R / 2, Tiers) && Tiers < 16)
      ++Tiers;
    return in<Number>(2 * Tiers - 1);
  }
  }
}

Time pathLatency(Time FabricLatency, Number Switches, Time SwitchLatency) {
  return FabricLatency + std::max(Switches.value() - 1.0, 0.0) * SwitchLatency;
}

} // namespace mlsc::walls
