//===- Phase.cpp - Lowering one phase of a workload on the roofline -------===//

#include "passes/lowering/Phase.h"

namespace mlsc {

using graph::Op;
using PM = PhaseMetricId;

PhaseWork decoderWork(LoweringContext &Ctx, PhaseId P, DecoderPass Pass,
                      const DecoderShape &S, NodeId Weights, NodeId Sequences,
                      NodeId Tokens, NodeId Span, NodeId TP) {
  GraphBuilder &B = Ctx.B;
  bool Prefill = Pass == DecoderPass::Prefill;
  PhaseWork W;
  W.Sequences = Sequences;
  W.Tokens = Tokens;
  // Built in the order the graph has always listed them: bytes, attention
  // FLOPs, FLOPs.
  W.Bytes =
      B.apply(Prefill ? FormulaId::PrefillBytes : FormulaId::DecodeStepBytes,
              {Weights, S.KV, Sequences, Span, TP}, "");
  B.publish(P, PM::Bytes, W.Bytes);
  W.AttentionFlops = B.apply(Prefill ? FormulaId::PrefillAttentionFlops
                                     : FormulaId::DecodeAttentionFlops,
                             {S.Layers, S.AttnDim, Sequences, Span, TP}, "");
  B.publish(P, PM::AttentionFlops, W.AttentionFlops);
  W.Flops =
      B.apply(Prefill ? FormulaId::PrefillFlops : FormulaId::DecodeStepFlops,
              {S.Params, S.Layers, S.AttnDim, Sequences, Span, TP}, "");
  B.publish(P, PM::Flops, W.Flops);
  return W;
}

NodeId lowerPhase(LoweringContext &Ctx, PhaseId P, const Roofline &M,
                  const PhaseWork &W) {
  GraphBuilder &B = Ctx.B;
  NodeId Eta =
      W.Efficiency
          ? *W.Efficiency
          : B.apply(FormulaId::BlendedEfficiency,
                    {W.Flops, W.AttentionFlops, M.EtaGemm, M.EtaAttention}, "");
  B.publish(P, PM::Efficiency, Eta);
  NodeId Compute = B.apply(FormulaId::ComputeTime, {W.Flops, M.Peak, Eta}, "");
  B.publish(P, PM::ComputeTime, Compute);
  NodeId Memory = B.apply(FormulaId::MemoryTime, {W.Bytes, M.BW, M.EtaMem}, "");
  B.publish(P, PM::MemoryTime, Memory);
  B.publish(P, PM::Intensity,
            B.apply(FormulaId::Intensity, {W.Flops, W.Bytes}, ""));
  NodeId Roof = B.apply(FormulaId::RooflineTime, {Compute, Memory}, "");
  B.publish(P, PM::RooflineTime, Roof);
  std::string Prefix = phaseInfo(P).Prefix;
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
    B.publish(P, PM::StreamingLayerTime, Layer);
    NodeId Streaming =
        B.apply(FormulaId::WeightStreamingModelTime, {M.Layers, Layer}, "");
    B.publish(P, PM::StreamingTime, Streaming);
    Roof = B.op(Op::Max, {Roof, Streaming});
    B.label(Roof, Prefix + ".bound_time");
  }
  NodeId Comm;
  if (W.Comm) {
    Comm = *W.Comm;
  } else if (M.FabricBW) {
    NodeId Message =
        B.apply(FormulaId::TensorParallelMessage,
                {W.Sequences, W.Tokens, M.Hidden, M.ActivationBytes},
                Prefix + ".tp_message");
    NodeId Layer =
        B.apply(FormulaId::TensorParallelLayerTime,
                {Message, M.TP, M.NodeRanks, *M.FabricBW, *M.FabricLatency,
                 M.InterBW, M.InterLatency, M.EtaComm},
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
      B.publish(P, PM::PipelineSendTime, Sends);
      Comm = B.op(Op::Add, {Comm, Sends});
    }
    if (M.EP) {
      // Each expert-parallel rank routes its share of the tokens to their
      // top_k experts and back, in every MoE layer.
      NodeId Routed =
          B.op(Op::Mul, {B.apply(FormulaId::TensorParallelMessage,
                                 {B.op(Op::Div, {W.Sequences, *M.EP}), W.Tokens,
                                  M.Hidden, M.ActivationBytes},
                                 ""),
                         M.TopK});
      B.label(Routed, Prefix + ".expert_routed_bytes");
      NodeId Layer =
          B.apply(FormulaId::ExpertAllToAllTime,
                  {Routed, *M.EP, M.ReplicaDevices, M.NodeRanks, *M.FabricBW,
                   *M.FabricLatency, M.InterBW, M.InterLatency, M.EtaComm},
                  "");
      NodeId AllToAll = B.op(Op::Mul, {M.MoeLayers, Layer});
      B.publish(P, PM::ExpertAllToAllTime, AllToAll);
      Comm = B.op(Op::Add, {Comm, AllToAll});
    }
  } else {
    Comm = Ctx.none("s", "0 s",
                    "no intra-node fabric: no tensor-parallel communication "
                    "is modelled");
  }
  B.publish(P, PM::CommTime, Comm);
  NodeId Step = B.apply(FormulaId::StepTime, {Roof, Comm}, "");
  B.publish(phaseInfo(P).StepTime, Step);
  return Step;
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
  NodeId Read = B.apply(FormulaId::MoeWeightBytesRead,
                        {D.Moe->Params, D.Moe->Active, D.Moe->Experts,
                         D.Moe->TopK, Tokens, D.WeightBytes, D.TP, D.EP},
                        "");
  if (P)
    B.publish(*P, PhaseMetricId::WeightBytes, Read);
  return Read;
}

} // namespace mlsc
