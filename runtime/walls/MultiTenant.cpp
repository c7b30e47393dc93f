//===- MultiTenant.cpp - Wall 16: the wait for a shared cluster -----------===//
//
// The mean queueing delay of jobs for a cluster's slots. Known answers:
// test/unit/WallsTest.cpp (MultiTenant.*) and test/lit/eval/tenancy.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <cmath>
#include <limits>

namespace mlsc::walls {

using namespace q;

Time jobQueueWait(Number LogC, RequestRate ArrivalRate, Time ServiceTime,
                  Number Servers, Number ServiceCV) {
  double A = (ArrivalRate * ServiceTime / in<Requests>(1.0)).value();
  double C = Servers.value();
  if (!(A < C))
    return in<Time>(std::numeric_limits<double>::infinity());
  double F = (1 + ServiceCV.value() * ServiceCV.value()) / 2;
  return in<Time>(F * std::exp(LogC.value()) * ServiceTime.value() / (C - A));
}

} // namespace mlsc::walls
