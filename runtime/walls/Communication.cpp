//===- Communication.cpp - Wall 14: collectives (alpha-beta) --------------===//
//
// Alpha-beta times of ring all-reduce, all-gather and reduce-scatter
// (Thakur, Rabenseifner, Gropp 2005), the tensor-parallel traffic of one
// transformer layer in inference (two all-reduces of the hidden state,
// Megatron-LM), and the nccl-tests bandwidth relations that published
// measurements are quoted in. beta is the per-rank link bandwidth in one
// direction; eta the achieved fraction of it (a calibrated factor). A
// collective over ranks in several nodes is hierarchical: rings in the
// nodes, and across them on the scale-out fabric (Mikami et al. 2018); the
// sends between pipeline stages cross the fabric their boundary is on.
// Across nodes the faster of a ring and NCCL's double binary tree; in-switch
// reduction (NVLink SHARP) is not modelled.
// Known answers: test/unit/CommunicationTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <cmath>

namespace mlsc::walls {

using namespace q;

Time ringAllReduceTime(Bytes Message, Number Ranks, Bandwidth LinkBW,
                       Number Efficiency, Time Latency) {
  // Reduce-scatter then all-gather: 2(N-1) steps, each moving M/N bytes.
  return 2.0 * ringAllGatherTime(Message, Ranks, LinkBW, Efficiency, Latency);
}

Time ringAllGatherTime(Bytes Message, Number Ranks, Bandwidth LinkBW,
                       Number Efficiency, Time Latency) {
  Number Steps = Ranks - 1.0;
  return Steps / Ranks * Message / (LinkBW * Efficiency) + Steps * Latency;
}

Time ringReduceScatterTime(Bytes Message, Number Ranks, Bandwidth LinkBW,
                           Number Efficiency, Time Latency) {
  return ringAllGatherTime(Message, Ranks, LinkBW, Efficiency, Latency);
}

Time treeAllReduceTime(Bytes Message, Number Ranks, Bandwidth LinkBW,
                       Number Efficiency, Time Latency) {
  if (Ranks.value() <= 1)
    return in<Time>(0);
  return 2.0 * Message / (LinkBW * Efficiency) +
         2.0 * std::log2(Ranks.value()) * Latency;
}

/// Across nodes NCCL runs the faster of its ring and its tree.
static Time acrossNodes(Bytes Message, Number Nodes, Bandwidth BW,
                        Number Efficiency, Time Latency) {
  return std::min(ringAllReduceTime(Message, Nodes, BW, Efficiency, Latency),
                  treeAllReduceTime(Message, Nodes, BW, Efficiency, Latency));
}

Bytes tensorParallelMessage(Number Batch, Tokens Length, Number Hidden,
                            Bytes ActivationPrecision) {
  return Batch * (Length / OneToken) * Hidden * ActivationPrecision;
}

Time hierarchicalAllReduceTime(Bytes Message, Number Ranks, Number NodeRanks,
                               Bandwidth IntraBW, Time IntraLatency,
                               Bandwidth InterBW, Time InterLatency,
                               Number Efficiency) {
  if (Ranks <= NodeRanks)
    return ringAllReduceTime(Message, Ranks, IntraBW, Efficiency, IntraLatency);
  // Ranks fill whole nodes of g; a partial last node still costs a node.
  Number G = NodeRanks;
  Number Nodes = in<Number>(std::ceil((Ranks / G).value()));
  return ringReduceScatterTime(Message, G, IntraBW, Efficiency, IntraLatency) +
         acrossNodes(Message / G, Nodes, InterBW, Efficiency, InterLatency) +
         ringAllGatherTime(Message, G, IntraBW, Efficiency, IntraLatency);
}

Time tieredAllReduceTime(Bytes Message, Number Ranks, Number NodeRanks,
                         Number Pods, Bandwidth IntraBW, Time IntraLatency,
                         Bandwidth InterBW, Time InterLatency,
                         Number Oversubscription, Time CrossLatency,
                         Number Efficiency) {
  Number G = NodeRanks;
  double Nodes = std::ceil((Ranks / G).value());
  // A non-blocking network has no tier to cross: its rings keep their
  // neighbours near (the one-switch latency) at the NIC's rate.
  if (Pods.value() <= 1 || Nodes <= 1 || Oversubscription.value() <= 1)
    return hierarchicalAllReduceTime(Message, Ranks, NodeRanks, IntraBW,
                                     IntraLatency, InterBW, InterLatency,
                                     Efficiency);
  // The group's nodes spread evenly over the pods it spans.
  double PerPod = std::max(1.0, std::floor(Nodes / Pods.value()));
  Number Q = in<Number>(PerPod);
  Number Across = in<Number>(std::ceil(Nodes / PerPod));
  Bytes Shard = Message / G;
  return ringReduceScatterTime(Message, G, IntraBW, Efficiency, IntraLatency) +
         ringReduceScatterTime(Shard, Q, InterBW, Efficiency, InterLatency) +
         acrossNodes(Shard / Q, Across, InterBW / Oversubscription, Efficiency,
                     CrossLatency) +
         ringAllGatherTime(Shard, Q, InterBW, Efficiency, InterLatency) +
         ringAllGatherTime(Message, G, IntraBW, Efficiency, IntraLatency);
}

Time tensorParallelLayerTime(Bytes Message, Number TP, Number NodeRanks,
                             Bandwidth IntraBW, Time IntraLatency,
                             Bandwidth InterBW, Time InterLatency,
                             Number Efficiency, Time CallOverhead) {
  // One rank has no all-reduce to call.
  Time Call = TP.value() > 1 ? CallOverhead : in<Time>(0);
  return 2.0 * (hierarchicalAllReduceTime(Message, TP, NodeRanks, IntraBW,
                                          IntraLatency, InterBW, InterLatency,
                                          Efficiency) +
                Call);
}

Time pipelineP2PTime(Bytes Message, Number PP, Number TP, Number NodeRanks,
                     Bandwidth IntraBW, Time IntraLatency, Bandwidth InterBW,
                     Time InterLatency, Number Efficiency) {
  double Boundaries = std::max(PP.value() - 1.0, 0.0);
  double StagesPerNode = std::max(std::floor((NodeRanks / TP).value()), 1.0);
  double Inter =
      std::min(Boundaries, std::ceil(PP.value() / StagesPerNode) - 1.0);
  Time Intra = IntraLatency + Message / (IntraBW * Efficiency);
  Time Across = InterLatency + Message / (InterBW * Efficiency);
  return (Boundaries - Inter) * Intra + Inter * Across;
}

Time expertAllToAllTime(Bytes RoutedBytes, Number EP, Number ReplicaDevices,
                        Number NodeRanks, Bandwidth IntraBW, Time IntraLatency,
                        Bandwidth InterBW, Time InterLatency, Number Efficiency,
                        Number TopK, Number Groups, Number GroupsPerToken,
                        Number DispatchRatio) {
  double Ep = EP.value();
  if (Ep <= 1)
    return in<Time>(0);
  // Expert-parallel ranks on a node and the nodes the group spans.
  double PerRank = std::max(1.0, ReplicaDevices.value() / Ep);
  double G = std::clamp(std::floor(NodeRanks.value() / PerRank), 1.0, Ep);
  double Nodes = std::ceil(Ep / G);
  // The slowest rank sits on the least-filled node: the ranks left over
  // when g does not divide ep.
  double Own = Ep - G * (Nodes - 1);
  double K = std::max(1.0, TopK.value());
  Bytes PerCopy = RoutedBytes / K;
  auto oneWay = [&](double Ratio) -> Time {
    if (Nodes <= 1)
      return (Ep - 1) * IntraLatency +
             Ratio * (Ep - 1) / Ep * RoutedBytes / (IntraBW * Efficiency);
    double OutCopies, InCopies, OutPeers, InPeers;
    if (Groups.value() >= 1) {
      double Reach =
          GroupsPerToken.value() * std::max(1.0, Nodes / Groups.value());
      double Distinct = Nodes * (1 - std::pow(1 - 1 / Nodes, K));
      OutCopies = std::min(Reach, Distinct) * (Nodes - 1) / Nodes;
      InCopies = K * (G - 1) / G;
      OutPeers = Nodes - 1;
      InPeers = G - 1;
    } else {
      OutCopies = K * (Ep - Own) / Ep;
      InCopies = K * (Own - 1) / Ep;
      OutPeers = Ep - Own;
      InPeers = Own - 1;
    }
    Time Out = OutPeers * InterLatency +
               Ratio * OutCopies * PerCopy / (InterBW * Efficiency);
    Time In = InPeers * IntraLatency +
              Ratio * InCopies * PerCopy / (IntraBW * Efficiency);
    return Out > In ? Out : In;
  };
  return oneWay(DispatchRatio.value()) + oneWay(1);
}

Bandwidth algorithmBandwidth(Bytes Message, Time Elapsed) {
  return Message / Elapsed;
}

Bandwidth allReduceBusBandwidth(Bandwidth AlgBW, Number Ranks) {
  return AlgBW * 2.0 * (Ranks - 1.0) / Ranks;
}

Number moeBusiestRankParams(Number Params, Number ActiveParams, Number Experts,
                            Number TopK, Number Imbalance) {
  Number PerExpert = (Params - ActiveParams) / (Experts - TopK);
  Number AlwaysActive = Params - Experts * PerExpert;
  return AlwaysActive + Imbalance * (ActiveParams - AlwaysActive);
}

Time dataParallelSyncTime(Number Params, Bytes GradientBytes, Bytes WeightBytes,
                          Number Stage, Number Ranks, Number NodeRanks,
                          Number Pods, Bandwidth IntraBW, Time IntraLatency,
                          Bandwidth InterBW, Time InterLatency,
                          Number Oversubscription, Time CrossLatency,
                          Number Efficiency) {
  if (Ranks.value() <= 1)
    return in<Time>(0);
  auto allReduce = [&](Bytes M) {
    return tieredAllReduceTime(M, Ranks, NodeRanks, Pods, IntraBW, IntraLatency,
                               InterBW, InterLatency, Oversubscription,
                               CrossLatency, Efficiency);
  };
  Time Gradients = allReduce(Params * GradientBytes);
  if (Stage.value() < 1)
    return Gradients;
  Time Weights = allReduce(Params * WeightBytes);
  // ZeRO 1-2: reduce-scatter the gradients, all-gather the updated
  // weights. ZeRO 3: reduce-scatter the gradients, all-gather the weights
  // before the forward and again before the backward pass.
  return Gradients / 2.0 + Weights / 2.0 * (Stage.value() >= 3 ? 2.0 : 1.0);
}

Time pipelineStageSendTime(Bytes Message, Number VirtualStages,
                           Number StageStride, Number NodeRanks,
                           Bandwidth IntraBW, Time IntraLatency,
                           Bandwidth InterBW, Time InterLatency,
                           Number Efficiency) {
  bool Across = StageStride.value() >= NodeRanks.value();
  Bandwidth BW = Across ? InterBW : IntraBW;
  Time Alpha = Across ? InterLatency : IntraLatency;
  return 2.0 * VirtualStages * (Alpha + Message / (BW * Efficiency));
}

Time contextParallelRingTime(Bytes KVChunk, Number CP, Number Span,
                             Number NodeRanks, Bandwidth IntraBW,
                             Time IntraLatency, Bandwidth InterBW,
                             Time InterLatency, Number Efficiency) {
  if (CP.value() <= 1)
    return in<Time>(0);
  bool Across = Span.value() > NodeRanks.value();
  Bandwidth BW = Across ? InterBW : IntraBW;
  Time Alpha = Across ? InterLatency : IntraLatency;
  return 3.0 * (CP - 1.0) * (Alpha + KVChunk / (BW * Efficiency));
}

} // namespace mlsc::walls
