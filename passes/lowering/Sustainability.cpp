//===- Sustainability.cpp - Wall 18: power and energy ---------------------===//
//
// Every workload: the system's power at nameplate (devices x TDP + nodes x
// node overhead, an upper bound on the draw), its power at the load, and
// the energy per unit of work - per token for a decoder, per sample for a
// CNN or encoder. In inference a device draws its idle share of TDP with a
// model resident, and its busy share while it runs steps: all the time
// without an arrival rate, else while any request is in its replica's
// slots. A system that trains draws a measured share of its nameplate
// (`power.training`). At a site (a cluster's `site`): the facility's power
// (PUE), operational carbon at the grid's intensity, water (WUE) and, for a
// training run, its electricity bill. On nodes, the devices' embodied
// carbon amortised over the node's life (docs/walls.md).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerEnergy(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  const System &Sys = *Ctx.Sys;
  NodeId Nameplate =
      B.apply(FormulaId::SystemPower,
              {Sys.Devices, Sys.TDP, Sys.Nodes, Sys.Overhead}, "");
  B.publish(MetricId::PowerNameplate, Nameplate);
  NodeId Power = Nameplate;
  const ir::Entity &W = *Ctx.Workload;
  if (Ctx.enumField<WorkloadMode>(W, "mode") == WorkloadMode::Training) {
    Power =
        B.op(Op::Mul,
             {Nameplate, Ctx.orDefault(*Sys.Accel, DefaultId::TrainingPower)});
    B.label(Power, "training_power");
  } else {
    const DecoderState &D = Ctx.Decoder;
    NodeId Share;
    if (D.StaticAtLoad) {
      // Static batches at load: busy while a batch runs (wall 7).
      Share = B.G.get(MetricId::SlotWaitProbability);
    } else if (D.Arrival && D.Service.isValid())
      Share = B.apply(FormulaId::BusyShare,
                      {B.op(Op::Div, {*D.Arrival, D.Replicas}), D.Service}, "");
    else
      Share = B.constant(1, "no arrival rate: the devices run steps all the "
                            "time");
    B.publish(MetricId::BusyShare, Share);
    // The busy draw follows the batch a step runs: the load's under an
    // arrival rate, else the slots (or samples) full.
    std::optional<NodeId> Batch = G.find(MetricId::RunningBatch);
    if (!Batch)
      Batch = G.find(MetricId::Batch);
    NodeId Busy = B.apply(FormulaId::BusyPowerFraction,
                          {Ctx.orDefault(*Sys.Accel, DefaultId::BusyPowerSmall),
                           Ctx.orDefault(*Sys.Accel, DefaultId::BusyPower),
                           Batch ? *Batch : B.constant(1, "one sequence")},
                          "busy_power_fraction");
    NodeId Device = B.apply(
        FormulaId::DevicePowerAtLoad,
        {Sys.TDP, Ctx.orDefault(*Sys.Accel, DefaultId::IdlePower), Busy, Share},
        "device_power");
    Power = B.apply(FormulaId::SystemPower,
                    {Sys.Devices, Device, Sys.Nodes, Sys.Overhead}, "");
  }
  B.publish(MetricId::Power, Power);
  const ir::Entity *Site = Ctx.SystemEntity->Kind == "cluster"
                               ? Ctx.entity(*Ctx.SystemEntity, "site")
                               : nullptr;
  std::optional<NodeId> PUE, Grid, WUE;
  if (Site) {
    PUE = Ctx.required(*Site, "pue", "the facility's power");
    Grid = Ctx.required(*Site, "carbon_intensity", "operational carbon");
    WUE = Ctx.field(*Site, "wue");
    NodeId Facility = B.apply(FormulaId::FacilityPower, {Power, *PUE}, "");
    B.publish(MetricId::FacilityPower, Facility);
    // The same per hour, which a fleet sums by site.
    B.publish(MetricId::CarbonRate, B.op(Op::Mul, {Facility, *Grid}));
    if (WUE)
      B.publish(MetricId::WaterRate, B.op(Op::Mul, {Power, *WUE}));
  }
  // Embodied carbon: the devices' manufacturing over the node's life.
  std::optional<NodeId> Embodied;
  if (Sys.Node)
    Embodied = B.apply(FormulaId::EmbodiedCarbonRate,
                       {Sys.Devices,
                        Ctx.orDefault(*Sys.Accel, DefaultId::EmbodiedCarbon),
                        Ctx.orDefault(*Sys.Node, DefaultId::NodeLife)},
                       "");
  // Per token or sample: operational carbon and water at the site.
  auto perUnit = [&](NodeId Energy, MetricId Carbon,
                     std::optional<MetricId> Water) {
    if (!Site)
      return;
    NodeId AtMeter = B.op(Op::Mul, {Energy, *PUE});
    B.publish(Carbon, B.op(Op::Mul, {AtMeter, *Grid}));
    if (WUE && Water)
      B.publish(*Water, B.op(Op::Mul, {Energy, *WUE}));
  };
  if (std::optional<NodeId> X = G.find(MetricId::SystemThroughput)) {
    // The tokens served: what arrives, up to the capacity.
    NodeId Served = *X;
    if (Ctx.Decoder.Arrival)
      Served =
          B.op(Op::Min,
               {*X, B.apply(FormulaId::ServedTokenRate,
                            {*Ctx.Decoder.Arrival, Ctx.Decoder.Output}, "")});
    B.publish(MetricId::ServedThroughput, Served);
    NodeId PerToken = B.apply(FormulaId::EnergyPerToken, {Power, Served}, "");
    B.publish(MetricId::EnergyPerToken, PerToken);
    perUnit(PerToken, MetricId::CarbonPerToken, MetricId::WaterPerToken);
    if (Embodied)
      B.publish(MetricId::EmbodiedCarbonPerToken,
                B.op(Op::Div, {*Embodied, Served}));
  }
  // A training run: its IT energy, at the site's meter (PUE), its carbon,
  // water and electricity bill.
  if (std::optional<NodeId> Run = G.find(MetricId::TimeToTrain)) {
    NodeId IT = B.op(Op::Mul, {Power, *Run});
    B.label(IT, "training_it_energy");
    if (Embodied) {
      // The hardware is held for the run's wall time, failures included.
      std::optional<NodeId> Held = G.find(MetricId::TimeToTrainWithFailures);
      B.publish(MetricId::TrainingEmbodiedCarbon,
                B.op(Op::Mul, {*Embodied, Held ? *Held : *Run}));
    }
    if (!Site) {
      B.publish(MetricId::TrainingEnergy, IT);
      return true;
    }
    NodeId Energy = B.op(
        Op::Mul, {B.apply(FormulaId::FacilityPower, {Power, *PUE}, ""), *Run});
    B.publish(MetricId::TrainingEnergy, Energy);
    B.publish(MetricId::TrainingCarbon,
              B.apply(FormulaId::OperationalCarbon, {Energy, *Grid}, ""));
    if (std::optional<NodeId> Market =
            Ctx.field(*Site, "carbon_intensity_market"))
      B.publish(MetricId::TrainingCarbonMarket,
                B.apply(FormulaId::OperationalCarbon, {Energy, *Market}, ""));
    if (WUE)
      B.publish(MetricId::TrainingWater,
                B.apply(FormulaId::WaterUse, {IT, *WUE}, ""));
    if (std::optional<NodeId> Price = Ctx.field(*Site, "electricity_price"))
      B.publish(MetricId::TrainingEnergyCost,
                B.apply(FormulaId::EnergyCost, {Energy, *Price}, ""));
  }
  if (std::optional<NodeId> X = G.find(MetricId::SystemSampleThroughput)) {
    NodeId PerSample = B.op(Op::Div, {Power, *X});
    B.publish(MetricId::EnergyPerSample, PerSample);
    perUnit(PerSample, MetricId::CarbonPerSample, std::nullopt);
  }
  return true;
}

} // namespace mlsc
