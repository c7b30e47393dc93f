//===- Phase.cpp - Lowering one phase of a workload on the roofline -------===//

#include "passes/lowering/Phase.h"

namespace mlsc {

using graph::Op;
using PM = PhaseMetricId;

namespace {

/// Publishes phase \p P's values, or, for a hidden lowering, only labels
/// them Label + "." + suffix.
struct PhasePublisher {
  GraphBuilder &B;
  PhaseId P;
  const std::string &Hidden;

  void operator()(PM M, NodeId N) const {
    if (Hidden.empty())
      B.publish(P, M, N);
    else
      B.label(N, Hidden + "." + phaseMetricInfo(M).Suffix);
  }
  std::string prefix() const {
    return Hidden.empty() ? std::string(phaseInfo(P).Prefix) : Hidden;
  }
};

} // namespace

PhaseWork decoderWork(LoweringContext &Ctx, PhaseId P, DecoderPass Pass,
                      const DecoderShape &S, NodeId Weights, NodeId Sequences,
                      NodeId Tokens, NodeId Span, NodeId TP,
                      const std::string &Hidden) {
  GraphBuilder &B = Ctx.B;
  PhasePublisher Pub{B, P, Hidden};
  bool Prefill = Pass == DecoderPass::Prefill;
  PhaseWork W;
  W.Sequences = Sequences;
  W.Tokens = Tokens;
  // Expert parallelism: the busiest group attends over, and reads the KV
  // cache of, its G = max(B / ep, min(B, 1)) sequences and computes the
  // always-active parameters a for them; each rank computes the routed
  // experts' r (imbalance x the mean) for B / ep sequences' tokens.
  // Together: the FLOPs of G sequences at a + r min(1, B / ep) parameters
  // (G = B / ep from B = ep on; one sequence below it).
  NodeId Seqs = Sequences, Params = S.Params;
  if (S.Groups) {
    NodeId One = B.constant(1, "one sequence");
    NodeId PerGroup = B.op(Op::Div, {Sequences, S.Groups->EP});
    Seqs = B.op(Op::Max, {PerGroup, B.op(Op::Min, {Sequences, One})});
    B.label(Seqs, Pub.prefix() + ".group_sequences");
    Params = B.op(Op::Add, {S.Groups->AlwaysActive,
                            B.op(Op::Mul, {S.Groups->Routed,
                                           B.op(Op::Min, {PerGroup, One})})});
    B.label(Params, Pub.prefix() + ".group_params");
    W.GroupSequences = Seqs;
  }
  // Built in the order the graph has always listed them: bytes, attention
  // FLOPs, FLOPs.
  W.Bytes =
      B.apply(Prefill ? FormulaId::PrefillBytes : FormulaId::DecodeStepBytes,
              {Weights, S.KV, Seqs, Span, S.KVShards}, "");
  Pub(PM::Bytes, W.Bytes);
  W.AttentionFlops = B.apply(Prefill ? FormulaId::PrefillAttentionFlops
                                     : FormulaId::DecodeAttentionFlops,
                             {S.Layers, S.AttnDim, Seqs, Span, TP}, "");
  Pub(PM::AttentionFlops, W.AttentionFlops);
  W.Flops =
      B.apply(Prefill ? FormulaId::PrefillFlops : FormulaId::DecodeStepFlops,
              {Params, S.Layers, S.AttnDim, Seqs, Span, TP}, "");
  Pub(PM::Flops, W.Flops);
  W.WeightBytes = Weights;
  return W;
}

/// A decode step (the target's or the draft's): one token a sequence.
static bool oneTokenPhase(PhaseId P) {
  return P == PhaseId::Decode || P == PhaseId::DraftDecode;
}

/// The communication of a step of \p Sequences x \p Tokens tokens on
/// machine \p M: tensor-parallel all-reduces in every layer, the sends
/// across pipeline stages and the expert all-to-alls, each affine in its
/// message (a latency plus bytes over bandwidth); a \p Decode step sends
/// each routed copy straight to its expert. Publishes its parts through
/// \p Pub when given.
static NodeId machineComm(LoweringContext &Ctx, const Roofline &M,
                          NodeId Sequences, std::optional<NodeId> InGroup,
                          NodeId Tokens, const std::string &Prefix,
                          const PhasePublisher *Pub, bool Decode) {
  GraphBuilder &B = Ctx.B;
  NodeId Comm;
  if (M.FabricBW) {
    // A group's all-reduces and sends carry its own sequences' tokens.
    NodeId Message = B.apply(
        FormulaId::TensorParallelMessage,
        {InGroup ? *InGroup : Sequences, Tokens, M.Hidden, M.ActivationBytes},
        Prefix + ".tp_message");
    NodeId Layer =
        B.apply(FormulaId::TensorParallelLayerTime,
                {Message, M.TP, M.NodeRanks, *M.FabricBW, *M.FabricLatency,
                 M.InterBW, M.InterLatency, M.EtaComm, M.CollectiveOverhead},
                Prefix + ".tp_layer_time");
    Comm = B.op(Op::Mul, {M.Layers, Layer});
    if (M.PP) {
      // The hidden state crosses the pp - 1 stage boundaries in sequence
      // (each tensor-parallel rank sends its copy to its counterpart).
      NodeId Sends =
          B.apply(FormulaId::PipelineP2PTime,
                  {Message, *M.PP, M.TP, M.NodeRanks, *M.FabricBW,
                   *M.FabricLatency, M.InterBW, M.InterLatency, M.EtaComm},
                  "");
      if (Pub)
        (*Pub)(PM::PipelineSendTime, Sends);
      Comm = B.op(Op::Add, {Comm, Sends});
    }
    if (M.EP) {
      // Each expert-parallel rank routes its share of the tokens to their
      // top_k experts and back, in every MoE layer. The busiest rank
      // receives imbalance x the mean rank's tokens, or sends its own
      // group's, whichever is more (a lone prompt's group sends all of it).
      NodeId Share = B.op(Op::Div, {Sequences, *M.EP});
      if (M.MoeImbalance)
        Share = B.op(Op::Mul, {Share, *M.MoeImbalance});
      if (InGroup)
        Share = B.op(Op::Max, {Share, *InGroup});
      NodeId Routed = B.op(
          Op::Mul, {B.apply(FormulaId::TensorParallelMessage,
                            {Share, Tokens, M.Hidden, M.ActivationBytes}, ""),
                    M.TopK});
      B.label(Routed, Prefix + ".expert_routed_bytes");
      NodeId Layer =
          B.apply(FormulaId::ExpertAllToAllTime,
                  {Routed, *M.EP, M.ReplicaDevices, M.NodeRanks, *M.FabricBW,
                   *M.FabricLatency, *M.AllToAllBW, *M.AllToAllLatency,
                   M.EtaComm, M.TopK,
                   // A decode step sends each copy straight to its expert
                   // (DeepEP's low-latency kernels, pure RDMA); prompts use
                   // the node-forwarded dispatch of group-limited routing.
                   Decode ? B.constant(0, "decode: every copy sent directly")
                          : M.Routing->Groups,
                   M.Routing->GroupsPerToken, M.Routing->DispatchRatio},
                  "");
      NodeId AllToAll = B.op(Op::Mul, {M.MoeLayers, Layer});
      if (Pub)
        (*Pub)(PM::ExpertAllToAllTime, AllToAll);
      Comm = B.op(Op::Add, {Comm, AllToAll});
    }
  } else {
    Comm = Ctx.none("s", "0 s",
                    "no intra-node fabric: no tensor-parallel communication "
                    "is modelled");
  }
  return Comm;
}

static PhaseTimes lowerPhaseTimes(LoweringContext &Ctx, PhaseId P,
                                  const Roofline &M, const PhaseWork &W,
                                  const std::string &Hidden) {
  GraphBuilder &B = Ctx.B;
  PhasePublisher Pub{B, P, Hidden};
  PhaseTimes Out;
  NodeId Eta =
      W.Efficiency
          ? *W.Efficiency
          : B.apply(FormulaId::BlendedEfficiency,
                    {W.Flops, W.AttentionFlops, M.EtaGemm, M.EtaAttention}, "");
  Pub(PM::Efficiency, Eta);
  Out.Efficiency = Eta;
  NodeId Compute = B.apply(FormulaId::ComputeTime, {W.Flops, M.Peak, Eta}, "");
  Pub(PM::ComputeTime, Compute);
  NodeId Memory = B.apply(FormulaId::MemoryTime, {W.Bytes, M.BW, M.EtaMem}, "");
  Pub(PM::MemoryTime, Memory);
  Pub(PM::Intensity, B.apply(FormulaId::Intensity, {W.Flops, W.Bytes}, ""));
  Out.Compute = Compute;
  Out.Memory = Memory;
  std::string Prefix = Pub.prefix();
  NodeId Roof;
  if (W.WeightBytes && !W.Efficiency) {
    // A decoder's GEMMs and attention each wait for their own slower
    // resource, one class after the other.
    Out.GemmCompute =
        B.apply(FormulaId::ComputeTime,
                {B.op(Op::Sub, {W.Flops, W.AttentionFlops}), M.Peak, M.EtaGemm},
                Prefix + ".gemm_compute_time");
    Out.WeightRead =
        B.apply(FormulaId::MemoryTime, {*W.WeightBytes, M.BW, M.EtaMem},
                Prefix + ".weight_read_time");
    Out.AttentionCompute = B.apply(FormulaId::ComputeTime,
                                   {W.AttentionFlops, M.Peak, M.EtaAttention},
                                   Prefix + ".attention_compute_time");
    Out.KVTraffic =
        B.apply(FormulaId::MemoryTime,
                {B.op(Op::Sub, {W.Bytes, *W.WeightBytes}), M.BW, M.EtaMem},
                Prefix + ".kv_traffic_time");
    Roof = B.apply(
        FormulaId::KernelClassRooflineTime,
        {Out.GemmCompute, Out.WeightRead, Out.AttentionCompute, Out.KVTraffic,
         M.Overlap ? *M.Overlap : B.constant(1, "the roofline: full overlap")},
        "");
  } else {
    // A phase given as a whole (a CNN's batch, a training step) has one
    // roofline.
    Roof = B.apply(FormulaId::RooflineTime, {Compute, Memory}, "");
  }
  Pub(PM::RooflineTime, Roof);
  if (M.InjectBW) {
    // Wall 6: each layer waits for the slower of its weights streaming in
    // and its GEMMs; attention and the KV cache stay on the device.
    NodeId LayerParams =
        B.op(Op::Div, {M.Params, B.op(Op::Mul, {M.Layers, M.TP})});
    NodeId BatchTokens = B.op(Op::Mul, {W.Sequences, W.Tokens});
    NodeId Layer = B.apply(FormulaId::WeightStreamingLayerTime,
                           {LayerParams, M.WeightBytes, *M.InjectBW,
                            BatchTokens, M.Peak, M.EtaGemm},
                           "");
    Pub(PM::StreamingLayerTime, Layer);
    NodeId Streaming =
        B.apply(FormulaId::WeightStreamingModelTime, {M.Layers, Layer}, "");
    Pub(PM::StreamingTime, Streaming);
    // The next layer's weights stream in while this layer's kernels run.
    Roof = B.op(Op::Max, {Roof, Streaming});
    B.label(Roof, Prefix + ".bound_time");
    Out.Streaming = Streaming;
    Out.GemmAlone = Out.GemmCompute;
    // For the running batch's fixed point the GEMMs wait for the stream:
    // at most attention's time more than the step.
    if (Out.GemmCompute.isValid())
      Out.GemmCompute = B.op(Op::Max, {Out.GemmCompute, Streaming});
    Out.Compute = B.op(Op::Max, {Compute, Streaming});
  }
  NodeId Comm = W.Comm ? *W.Comm
                       : machineComm(Ctx, M, W.Sequences, W.GroupSequences,
                                     W.Tokens, Prefix, &Pub, oneTokenPhase(P));
  Pub(PM::CommTime, Comm);
  Out.Comm = Comm;
  Out.Added = Comm;
  Out.Step = B.apply(FormulaId::StepTime, {Roof, Comm}, "");
  if (M.StepOverhead) {
    // Wall 3: the engine's fixed cost of a step and of each of its layers.
    NodeId Overhead =
        B.apply(FormulaId::StepOverheadTime,
                {*M.StepOverhead, *M.LayerOverhead, M.Layers}, "");
    Pub(PM::OverheadTime, Overhead);
    Out.Added = B.op(Op::Add, {Comm, Overhead});
    B.label(Out.Step, Prefix + ".kernel_time");
    Out.Step = B.op(Op::Add, {Out.Step, Overhead});
  }
  if (Hidden.empty())
    B.publish(phaseInfo(P).StepTime, Out.Step);
  else
    B.label(Out.Step, Hidden + ".step_time");
  return Out;
}

NodeId lowerPhase(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                  const PhaseWork &W) {
  return lowerPhaseTimes(Ctx, P, M, W, "").Step;
}

PhaseTimes lowerPhaseParts(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                           const PhaseWork &W) {
  return lowerPhaseTimes(Ctx, P, M, W, "");
}

NodeId lowerCommLatency(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                        const PhaseWork &W) {
  std::string Prefix = phaseInfo(P).Prefix;
  NodeId Latency =
      W.Comm ? Ctx.B.constant(0, "communication given whole")
             : machineComm(Ctx, M, Ctx.B.constant(0, "no tokens"), std::nullopt,
                           W.Tokens, Prefix + ".no_tokens", nullptr,
                           oneTokenPhase(P));
  Ctx.B.label(Latency, Prefix + ".comm_latency_time");
  return Latency;
}

PhaseTimes lowerHiddenPhase(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                            const PhaseWork &W, const std::string &Label) {
  return lowerPhaseTimes(Ctx, P, M, W, Label);
}

NodeId weightsRead(LoweringContext &Ctx, NodeId Tokens,
                   std::optional<PhaseId> P) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  if (D.Machine.InjectBW) // wall 6: weights come over the inject link
    return Ctx.none("B", "0 B",
                    "weights stream in from off the device (wall 6); HBM "
                    "holds the KV cache");
  // A pass runs every pipeline stage in turn: a tensor-parallel rank's
  // share of all the stages' weights, pp times one device's.
  if (!D.Moe)
    return B.apply(FormulaId::WeightBytesPerRank,
                   {D.Params, D.WeightBytes, D.TP}, "");
  // The busiest expert-parallel rank's experts see imbalance x the tokens.
  NodeId Routed =
      D.MoeImbalance ? B.op(Op::Mul, {Tokens, *D.MoeImbalance}) : Tokens;
  NodeId Read = B.apply(FormulaId::MoeWeightBytesRead,
                        {D.Moe->Params, D.Moe->Active, D.Moe->Experts,
                         D.Moe->TopK, Routed, D.WeightBytes, D.TP, D.EP},
                        "");
  if (P)
    B.publish(*P, PhaseMetricId::WeightBytes, Read);
  return Read;
}

} // namespace mlsc
