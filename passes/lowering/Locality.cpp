//===- Locality.cpp - Wall 10: the cluster's bisection --------------------===//
//
// The bandwidth across a cluster's narrowest cut, from its topology, its
// nodes' scale-out bandwidth (a NIC of the node's `inter` fabric per
// device, as DGX and HGX nodes have) and a fat tree's oversubscription
// above pods of `pod_nodes`; the network's diameter in switches and the
// latency of a path across it. Wall 14's expert all-to-alls that leave a
// node run at most at a device's share of the bisection, with the far
// latency; a data-parallel all-reduce whose group spans pods adds a level
// for the tier above, at 1/o of the NIC (docs/walls.md).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerLocality(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  const System &Sys = *Ctx.Sys;
  if (Ctx.SystemEntity->Kind != "cluster" || !Sys.Node || !Sys.NodeDevices)
    return true;
  const ir::Entity &Cluster = *Ctx.SystemEntity;
  const ir::Entity *Inter = Ctx.entity(*Sys.Node, "inter");
  // One node has no network between nodes to describe.
  if (!Inter || Ctx.foldedNumber(Cluster, "nodes") <= 1)
    return true;
  NodeId PerNode = B.op(
      Op::Mul, {*Sys.NodeDevices,
                Ctx.required(*Inter, "bandwidth", "the cluster's bisection")});
  B.label(PerNode, "node_scale_out_bandwidth");
  NodeId Topology = Ctx.choice(
      Cluster, "topology", 1,
      "0: one switch, 1: fat tree, 2: rail-optimised, 3: 3-D torus, 4: "
      "dragonfly, 5: ring");
  NodeId Oversub = Ctx.orDefault(Cluster, DefaultId::Oversubscription);
  NodeId Pod = Ctx.orDefault(Cluster, DefaultId::PodNodes);
  NodeId Bisection = B.apply(FormulaId::BisectionBandwidth,
                             {Topology, Sys.Nodes, PerNode, Oversub, Pod}, "");
  B.publish(MetricId::BisectionBandwidth, Bisection);
  NodeId PerNodeShare = B.op(
      Op::Div,
      {Bisection, B.op(Op::Div, {Sys.Nodes, B.constant(2, "half the nodes")})});
  B.publish(MetricId::BisectionPerNode, PerNodeShare);
  Ctx.BisectionPerDevice = B.op(Op::Div, {PerNodeShare, *Sys.NodeDevices});
  B.label(*Ctx.BisectionPerDevice, "bisection_per_device");
  // Hops: the switches on the longest minimal path, and what they add to
  // the fabric's one-switch latency.
  NodeId Diameter = B.apply(FormulaId::NetworkDiameter,
                            {Topology, Sys.Nodes, *Sys.NodeDevices,
                             Ctx.orDefault(*Inter, DefaultId::SwitchRadix)},
                            "");
  B.publish(MetricId::NetworkDiameter, Diameter);
  NodeId Far =
      B.apply(FormulaId::PathLatency,
              {Ctx.required(*Inter, "latency", "the cluster's paths"), Diameter,
               Ctx.orDefault(*Inter, DefaultId::SwitchLatency)},
              "");
  B.publish(MetricId::FarLatency, Far);
  Ctx.Network = LoweringContext::Tiers{Pod, Oversub, Far};
  return true;
}

} // namespace mlsc
