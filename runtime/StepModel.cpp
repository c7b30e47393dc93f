//===- StepModel.cpp - A decoder's step time as a function ----------------===//

#include "runtime/StepModel.h"
#include "runtime/walls/Formulas.h"

#include <algorithm>

namespace mlsc {

using namespace walls;
using namespace q;

std::optional<StepModel> StepModel::of(const Evaluator &E) {
  const graph::Graph &G = E.graph();
  if (!G.Step)
    return std::nullopt;
  return of(E, *G.Step);
}

std::optional<StepModel> StepModel::draftOf(const Evaluator &E) {
  const graph::Graph &G = E.graph();
  if (!G.Draft)
    return std::nullopt;
  return of(E, G.Draft->Step);
}

StepModel StepModel::of(const Evaluator &E, const graph::StepInputs &In) {
  auto v = [&](graph::NodeId N) { return E.value(N); };
  StepModel M;
  M.Params = v(In.Params);
  M.Layers = v(In.Layers);
  M.AttnDim = v(In.AttnDim);
  M.DecodeAttnDim = v(In.DecodeAttnDim);
  M.Hidden = v(In.Hidden);
  M.KV = v(In.KV);
  M.KVShards = v(In.KVShards);
  M.TP = v(In.TP);
  M.PP = v(In.PP);
  M.EP = v(In.EP);
  M.BytesPerWeight = v(In.BytesPerWeight);
  M.WeightsPerDevice = v(In.WeightsPerDevice);
  M.Peak = v(In.Peak);
  M.EtaGemm = v(In.EtaGemm);
  M.EtaAttention = v(In.EtaAttention);
  M.BW = v(In.BW);
  M.EtaMem = v(In.EtaMem);
  M.ActivationBytes = v(In.ActivationBytes);
  if ((M.Fabric = In.FabricBW.isValid())) {
    M.FabricBW = v(In.FabricBW);
    M.FabricLatency = v(In.FabricLatency);
    M.InterBW = v(In.InterBW);
    M.InterLatency = v(In.InterLatency);
    M.NodeRanks = v(In.NodeRanks);
    M.EtaComm = v(In.EtaComm);
    M.CollectiveOverhead = v(In.CollectiveOverhead);
  }
  if (In.StepOverhead.isValid()) {
    M.StepOverhead = v(In.StepOverhead);
    M.LayerOverhead = v(In.LayerOverhead);
  }
  if (In.Overlap.isValid())
    M.Overlap = v(In.Overlap);
  if ((M.Streams = In.InjectBW.isValid()))
    M.InjectBW = v(In.InjectBW);
  if ((M.Moe = In.MoeParams.isValid())) {
    M.MoeParams = v(In.MoeParams);
    M.MoeActive = v(In.MoeActive);
    M.MoeExperts = v(In.MoeExperts);
    M.MoeTopK = v(In.MoeTopK);
    M.MoeLayers = v(In.MoeLayers);
    if (In.MoeImbalance.isValid())
      M.MoeImbalance = v(In.MoeImbalance);
    const double PerExpert =
        (M.MoeParams - M.MoeActive) / (M.MoeExperts - M.MoeTopK);
    M.MoeAlways = M.MoeParams - M.MoeExperts * PerExpert;
    M.MoeRouted = M.MoeImbalance * (M.MoeActive - M.MoeAlways);
    M.MoeInterBW = M.InterBW;
    M.MoeInterLatency = M.InterLatency;
    if (In.MoeInterBW.isValid()) {
      M.MoeInterBW = v(In.MoeInterBW);
      M.MoeInterLatency = v(In.MoeInterLatency);
    }
    if (In.MoeGroups.isValid()) {
      M.MoeGroups = v(In.MoeGroups);
      M.MoeGroupsPerToken = v(In.MoeGroupsPerToken);
      M.MoeDispatchRatio = v(In.MoeDispatchRatio);
    }
  }
  return M;
}

StepTime StepModel::step(double Batch, double Cached, double New) const {
  // Attention pairs per sequence: each new token attends to the cached
  // ones and to the new ones up to itself.
  const double Pairs = Batch * (New * Cached + New * (New + 1) / 2);
  StepShape S;
  S.Sequences = Batch;
  S.Tokens = Batch * New;
  // A one-token step attends as decode does (MLA: over the latent); more
  // tokens as a prefill.
  (New == 1 ? S.DecodePairs : S.PrefillPairs) = Pairs;
  S.ContextTokens = Batch * (Cached + New);
  if (New == 1) {
    S.DecodeTokens = S.DecodeSequences = Batch;
    S.DecodeContextTokens = S.ContextTokens;
  }
  return shape(S);
}

StepTime StepModel::shape(const StepShape &S) const {
  const double New = 1; // messages and routing count the step's tokens
  const Number L = in<Number>(Layers), Tp = in<Number>(TP);
  const FlopsPerToken Two = in<FlopsPerToken>(2);
  const Tokens OneToken = in<Tokens>(1);
  StepTime T;
  // Expert parallelism over ep > 1 (as the graph's decoderWork): the
  // decodes spread over the ep groups and each prompt chunk stays whole on
  // one, so the busiest group carries G(n) = max(n / ep, min(n, 1)) of
  // each kind's n sequences: their attention, KV reads, all-reduces and
  // always-active parameters; each rank computes the routed experts (the
  // busiest's imbalance x the mean) for Tokens / ep.
  double DecodeShare = 1, PromptShare = 1;
  double GroupTokens = S.Tokens, Flopping = Params * S.Tokens;
  double Context = S.ContextTokens;
  if (Moe && EP > 1) {
    auto share = [&](double N) {
      return N > 0 ? std::max(N / EP, std::min(N, 1.0)) / N : 0.0;
    };
    DecodeShare = share(S.DecodeSequences);
    PromptShare = share(S.Sequences - S.DecodeSequences);
    const double PromptTokens = S.Tokens - S.DecodeTokens;
    GroupTokens = S.DecodeTokens * DecodeShare + PromptTokens * PromptShare;
    Flopping = MoeAlways * GroupTokens + MoeRouted * S.Tokens / EP;
    Context = S.DecodeContextTokens * DecodeShare +
              (S.ContextTokens - S.DecodeContextTokens) * PromptShare;
  }
  // The pairs' attention (wall 3's count): decode over its own width (MLA:
  // the latent), prompt chunks over theirs.
  Flops Attention =
      attentionPairFlops(L, in<Number>(DecodeAttnDim),
                         in<Number>(S.DecodePairs * DecodeShare), Tp) +
      attentionPairFlops(L, in<Number>(AttnDim),
                         in<Number>(S.PrefillPairs * PromptShare), Tp);
  Flops Weights = Two * OneToken * in<Number>(Flopping) / Tp;
  Flops Total = Weights + Attention;
  // A step runs every pipeline stage in turn: a tensor-parallel rank reads
  // its share of every stage's weights (an MoE model's: sharded tp ways).
  Bytes Read = in<Bytes>(WeightsPerDevice) * in<Number>(PP);
  if (Streams)
    Read = in<Bytes>(0); // the weights come over the inject link (wall 6)
  else if (Moe)
    Read = moeWeightBytesRead(in<Number>(MoeParams), in<Number>(MoeActive),
                              in<Number>(MoeExperts), in<Number>(MoeTopK),
                              in<Tokens>(S.Tokens * MoeImbalance),
                              in<Bytes>(BytesPerWeight), Tp, in<Number>(EP));
  Bytes Moved =
      Read + in<Tokens>(Context) * in<BytesPerToken>(KV) / in<Number>(KVShards);
  Number Eta = blendedEfficiency(Total, Attention, in<Number>(EtaGemm),
                                 in<Number>(EtaAttention));
  Time Compute = computeTime(Total, in<FlopRate>(Peak), Eta);
  Time Memory = memoryTime(Moved, in<Bandwidth>(BW), in<Number>(EtaMem));
  Time Gemm =
      computeTime(Total - Attention, in<FlopRate>(Peak), in<Number>(EtaGemm));
  Time WeightRead = memoryTime(Read, in<Bandwidth>(BW), in<Number>(EtaMem));
  Time Attend =
      computeTime(Attention, in<FlopRate>(Peak), in<Number>(EtaAttention));
  Time KVTraffic =
      memoryTime(Moved - Read, in<Bandwidth>(BW), in<Number>(EtaMem));
  Time Bound = kernelClassRooflineTime(Gemm, WeightRead, Attend, KVTraffic,
                                       in<Number>(Overlap));
  T.Flops = Total.value();
  T.AttentionFlops = Attention.value();
  T.Bytes = Moved.value();
  T.Efficiency = Eta.value();
  T.Compute = Compute.value();
  T.Memory = Memory.value();
  if (Streams) {
    Time Layer = weightStreamingLayerTime(
        in<Number>(Params / (Layers * TP)), in<Bytes>(BytesPerWeight),
        in<Bandwidth>(InjectBW), in<Tokens>(S.Tokens), in<FlopRate>(Peak),
        in<Number>(EtaGemm));
    Time Streaming = weightStreamingModelTime(L, Layer);
    T.Streaming = Streaming.value();
    Bound = std::max(Bound, Streaming);
  }
  Time Comm = in<Time>(0);
  if (Fabric) {
    // The step's tokens' hidden states, whichever sequences they are of.
    Bytes Message =
        tensorParallelMessage(in<Number>(GroupTokens), in<Tokens>(New),
                              in<Number>(Hidden), in<Bytes>(ActivationBytes));
    Comm = L * tensorParallelLayerTime(
                   Message, Tp, in<Number>(NodeRanks), in<Bandwidth>(FabricBW),
                   in<Time>(FabricLatency), in<Bandwidth>(InterBW),
                   in<Time>(InterLatency), in<Number>(EtaComm),
                   in<Time>(CollectiveOverhead));
    T.PipelineSends =
        pipelineP2PTime(Message, in<Number>(PP), Tp, in<Number>(NodeRanks),
                        in<Bandwidth>(FabricBW), in<Time>(FabricLatency),
                        in<Bandwidth>(InterBW), in<Time>(InterLatency),
                        in<Number>(EtaComm))
            .value();
    Comm = Comm + in<Time>(T.PipelineSends);
    if (Moe) {
      // The busiest rank receives imbalance x the mean rank's tokens, or
      // sends its own group's, whichever is more.
      double Share = S.Tokens / EP * MoeImbalance;
      if (EP > 1)
        Share = std::max(Share, GroupTokens);
      Bytes Routed = tensorParallelMessage(in<Number>(Share), in<Tokens>(New),
                                           in<Number>(Hidden),
                                           in<Bytes>(ActivationBytes)) *
                     in<Number>(MoeTopK);
      T.ExpertAllToAll =
          (in<Number>(MoeLayers) *
           expertAllToAllTime(
               Routed, in<Number>(EP), in<Number>(TP * PP * EP),
               in<Number>(NodeRanks), in<Bandwidth>(FabricBW),
               in<Time>(FabricLatency), in<Bandwidth>(MoeInterBW),
               in<Time>(MoeInterLatency), in<Number>(EtaComm),
               in<Number>(MoeTopK),
               // Decodes alone send each copy directly (as
               // the graph's decode step); a step with a
               // prompt uses the node-forwarded dispatch.
               in<Number>(S.PrefillPairs > 0 ? MoeGroups : 0),
               in<Number>(MoeGroupsPerToken), in<Number>(MoeDispatchRatio)))
              .value();
      Comm = Comm + in<Time>(T.ExpertAllToAll);
    }
  }
  T.Comm = Comm.value();
  T.Overhead =
      stepOverheadTime(in<Time>(StepOverhead), in<Time>(LayerOverhead), L)
          .value();
  T.Time = stepTime(Bound, Comm).value() + T.Overhead;
  return T;
}

} // namespace mlsc
