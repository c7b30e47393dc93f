//===- Fragility.cpp - Wall 15: how often a job is interrupted ------------===//
//
// The fleet's MTBF from its components' MTTFs and the chance of a run
// without failure. Known answers: test/unit/WallsTest.cpp (Fragility.*),
// test/lit/eval/reliability.mls and validation/t60-llama3-interruptions.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <cmath>

namespace mlsc::walls {

using namespace q;

Time fleetMtbf(Number Devices, Time DeviceMttf, Number Nodes, Time NodeMttf,
               Number Attachments, Time NetworkMttf) {
  double Rate = 0; // failures per second
  auto add = [&](Number Count, Time Mttf) {
    if (Count.value() != 0)
      Rate += Count.value() / Mttf.value();
  };
  add(Devices, DeviceMttf);
  add(Nodes, NodeMttf);
  add(Attachments, NetworkMttf);
  return in<Time>(1 / Rate);
}

Number uninterruptedProbability(Time Run, Time Mtbf) {
  return in<Number>(std::exp(-(Run / Mtbf).value()));
}

} // namespace mlsc::walls
