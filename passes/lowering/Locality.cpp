//===- Locality.cpp - Wall 10: the cluster's bisection --------------------===//
//
// The bandwidth across a cluster's narrowest cut, from its topology, its
// nodes' scale-out bandwidth (a NIC of the node's `inter` fabric per
// device, as DGX and HGX nodes have) and a fat tree's oversubscription.
// Wall 14's collectives do not read it yet (docs/walls.md).
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
  if (!Inter)
    return true;
  NodeId PerNode = B.op(
      Op::Mul, {*Sys.NodeDevices,
                Ctx.required(*Inter, "bandwidth", "the cluster's bisection")});
  B.label(PerNode, "node_scale_out_bandwidth");
  NodeId Topology = Ctx.choice(
      Cluster, "topology", 1,
      "0: one switch, 1: fat tree, 2: rail-optimised, 3: 3-D torus, 4: "
      "dragonfly, 5: ring");
  NodeId Bisection =
      B.apply(FormulaId::BisectionBandwidth,
              {Topology, Sys.Nodes, PerNode,
               Ctx.orDefault(Cluster, DefaultId::Oversubscription)},
              "");
  B.publish(MetricId::BisectionBandwidth, Bisection);
  B.publish(
      MetricId::BisectionPerNode,
      B.op(Op::Div,
           {Bisection, B.op(Op::Div, {Sys.Nodes, B.constant(2, "half the "
                                                               "nodes")})}));
  return true;
}

} // namespace mlsc
