//===- Sustainability.cpp - Wall 18: power and energy ---------------------===//
//
// Every workload: the system's power at nameplate (devices x TDP + nodes x
// node overhead, an upper bound on the draw) and the energy per unit of
// work at the system's throughput - per token for a decoder, per sample
// for a CNN or encoder. Operational carbon, water and embodied carbon are
// not lowered yet (docs/walls.md).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerEnergy(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  const System &Sys = *Ctx.Sys;
  NodeId Power = B.apply(FormulaId::SystemPower,
                         {Sys.Devices, Sys.TDP, Sys.Nodes, Sys.Overhead}, "");
  B.publish(MetricId::Power, Power);
  if (std::optional<NodeId> X = G.find(MetricId::SystemThroughput))
    B.publish(MetricId::EnergyPerToken,
              B.apply(FormulaId::EnergyPerToken, {Power, *X}, ""));
  if (std::optional<NodeId> X = G.find(MetricId::SystemSampleThroughput))
    B.publish(MetricId::EnergyPerSample, B.op(Op::Div, {Power, *X}));
  return true;
}

} // namespace mlsc
