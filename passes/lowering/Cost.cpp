//===- Cost.cpp - Wall 17: what the system costs -------------------------===//
//
// A system's cost an hour: the rent of its nodes when they give one (a
// cloud instance, energy included); else, at a site, its hardware
// amortised over its life with yearly maintenance (the nodes' price, or
// their accelerators' x a server factor, and the interconnect's share),
// its facility's capital cost per watt amortised, and the electricity at
// the meter. From it: the cost per device-hour, of a training run (with
// failures and restarts when wall 19 models them) and per million tokens
// served.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerCost(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  const System &Sys = *Ctx.Sys;
  const ir::Entity *Cluster =
      Ctx.SystemEntity->Kind == "cluster" ? Ctx.SystemEntity : nullptr;
  const ir::Entity *Site = Cluster ? Ctx.entity(*Cluster, "site") : nullptr;
  std::optional<NodeId> Rate;
  if (Sys.Node)
    if (std::optional<NodeId> Rent = Ctx.field(*Sys.Node, "rental")) {
      Rate = B.op(Op::Mul, {Sys.Nodes, *Rent});
      B.label(*Rate, "rent");
    }
  std::optional<NodeId> AtMeter = G.find(MetricId::FacilityPower);
  std::optional<NodeId> Price =
      Site ? Ctx.field(*Site, "electricity_price") : std::nullopt;
  if (!Rate && Sys.Node && Sys.NodeDevices && AtMeter && Price) {
    std::optional<NodeId> NodePrice = Ctx.field(*Sys.Node, "price");
    if (!NodePrice)
      if (std::optional<NodeId> Device = Ctx.field(*Sys.Accel, "price"))
        NodePrice =
            B.apply(FormulaId::NodePrice,
                    {*Sys.NodeDevices, *Device,
                     Ctx.orDefault(*Sys.Node, DefaultId::ServerCostFactor)},
                    "");
    if (!NodePrice)
      return true; // no price: Result says the costs are not computed
    NodeId Capex =
        B.apply(FormulaId::ClusterCapex,
                {Sys.Nodes, *NodePrice,
                 Ctx.orDefault(*Cluster, DefaultId::NetworkCostShare)},
                "");
    B.publish(MetricId::Capex, Capex);
    NodeId Own = B.apply(FormulaId::OwnershipCostRate,
                         {Capex, Ctx.orDefault(*Sys.Node, DefaultId::NodeLife),
                          Ctx.orDefault(*Sys.Node, DefaultId::Maintenance)},
                         "");
    NodeId Facility = B.apply(FormulaId::FacilityCostRate,
                              {Ctx.orDefault(*Site, DefaultId::FacilityCost),
                               *G.find(MetricId::PowerNameplate),
                               Ctx.orDefault(*Site, DefaultId::FacilityLife)},
                              "");
    NodeId Energy = B.op(Op::Mul, {*AtMeter, *Price});
    B.label(Energy, "energy_cost_rate");
    Rate = B.op(Op::Add, {B.op(Op::Add, {Own, Facility}), Energy});
  }
  if (!Rate)
    return true;
  B.publish(MetricId::CostPerHour, *Rate);
  B.publish(MetricId::CostPerDeviceHour, B.op(Op::Div, {*Rate, Sys.Devices}));
  std::optional<NodeId> Run = G.find(MetricId::TimeToTrainWithFailures);
  if (!Run)
    Run = G.find(MetricId::TimeToTrain);
  if (Run)
    B.publish(MetricId::TrainingCost, B.op(Op::Mul, {*Rate, *Run}));
  if (std::optional<NodeId> Served = G.find(MetricId::ServedThroughput)) {
    NodeId Million =
        Ctx.quantity(1e6, "tok", "1e6 tok", "cost per million tokens");
    B.publish(MetricId::CostPerMtok,
              B.op(Op::Mul, {B.op(Op::Div, {*Rate, *Served}), Million}));
  }
  return true;
}

} // namespace mlsc
