//===- Locality.cpp - Wall 10: the cluster's bisection --------------------===//
//
// The bandwidth across a cluster's narrowest cut, from its topology, its
// nodes' scale-out bandwidth (a NIC of the node's `inter` fabric per
// device, as DGX and HGX nodes have) and a fat tree's oversubscription.
// Wall 14's expert all-to-alls that leave a node run at most at a device's
// share of it; rings and trees, whose traffic stays mostly within a pod
// when the ranks are placed well, do not read it (docs/walls.md).
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
  NodeId PerNodeShare = B.op(
      Op::Div,
      {Bisection, B.op(Op::Div, {Sys.Nodes, B.constant(2, "half the nodes")})});
  B.publish(MetricId::BisectionPerNode, PerNodeShare);
  Ctx.BisectionPerDevice = B.op(Op::Div, {PerNodeShare, *Sys.NodeDevices});
  B.label(*Ctx.BisectionPerDevice, "bisection_per_device");
  return true;
}

} // namespace mlsc
