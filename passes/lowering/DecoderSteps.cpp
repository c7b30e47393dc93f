//===- DecoderSteps.cpp - Wall 1: a decoder's prefill and decode steps ----===//
//
// The batch's prefill and one decode step, each lowered by the phase helper
// on the device's roofline (walls 1-3, with weight streaming, wall 6, and
// tensor-parallel communication, wall 14); the time to read the weights,
// the batch at which decode turns compute-bound, and the ridge point.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Phase.h"
#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

/// A decode step of \p Batch sequences. Pipeline parallelism (pp stages):
/// the batch decodes as m = min(pp, B) micro-batches of B/m sequences. A
/// micro-batch's token crosses every stage in turn, so its step, the
/// per-token latency, is the whole model's work at B/m sequences plus the
/// sends between stages; the stages meanwhile work on the other
/// micro-batches, so the replica emits B tokens per step: the throughput is
/// B over the step (wall 4). pp = 1 is one micro-batch of B. Unless
/// \p Hidden names it, this is the decode phase: published, with its
/// micro-batches, weights read and step kept in the decoder's state.
PhaseTimes lowerDecodeAt(LoweringContext &Ctx, NodeId Batch,
                         const std::string &Hidden,
                         std::optional<NodeId> Verify) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  DecoderShape DecodeShape{D.ComputeParams, D.Layers, D.DecodeAttnDim, D.KV,
                           D.KVShards,      D.Groups};
  NodeId MicroBatches =
      B.op(Op::Max, {B.constant(1, "at least one micro-batch"),
                     B.op(Op::Min, {D.PP, Batch})});
  NodeId Micro = B.op(Op::Div, {Batch, MicroBatches});
  B.label(Micro, Hidden.empty() ? "decode.microbatch" : Hidden + ".microbatch");
  NodeId PerSequence =
      Verify ? B.op(Op::Mul, {*Verify, D.OneToken}) : D.OneToken;
  NodeId StepTokens = B.op(Op::Mul, {Micro, PerSequence});
  std::optional<PhaseId> Publish;
  if (Hidden.empty())
    Publish = PhaseId::Decode;
  NodeId Weights = weightsRead(Ctx, StepTokens, Publish);
  PhaseWork Decode =
      decoderWork(Ctx, PhaseId::Decode, DecoderPass::Decode, DecodeShape,
                  Weights, Micro, PerSequence, D.Context, D.TP, Hidden);
  if (Verify) {
    // A speculative target step verifies k draft tokens and samples one
    // more: k + 1 positions a sequence, each through every GEMM and
    // attending to the sequence's cache (and the positions before it, a
    // rounding at these contexts), with the weights and the cache read
    // once; its all-reduces carry the k + 1 positions.
    Decode.Flops = B.op(Op::Mul, {Decode.Flops, *Verify});
    B.label(Decode.Flops, Hidden + ".positions_flops");
    Decode.AttentionFlops = B.op(Op::Mul, {Decode.AttentionFlops, *Verify});
    B.label(Decode.AttentionFlops, Hidden + ".positions_attention_flops");
  }
  PhaseTimes T =
      lowerHiddenPhase(Ctx, PhaseId::Decode, D.Machine, Decode, Hidden);
  T.Tokens = StepTokens;
  if (Verify)
    return T;
  // The weights the slots' step reads (crossover and best batch): the
  // published step's, or under load the last hidden one's, at the slots.
  if (!D.Loaded || !Hidden.empty())
    D.DecodeWeights = Weights;
  if (Hidden.empty()) {
    B.publish(MetricId::PipelineMicrobatches, MicroBatches);
    D.DecodeStep = T.Step;
    D.MicroBatch = Micro;
    D.DecodeBatch = Batch;
    D.Decode = T;
  }
  return T;
}

ChunkHiding chunkHiding(LoweringContext &Ctx, const PhaseTimes &Step) {
  GraphBuilder &B = Ctx.B;
  NodeId Gemm = Step.GemmCompute, Weights = Step.WeightRead;
  if (Step.Streaming.isValid() && Weights.isValid()) {
    // Streamed weights: the chunk's GEMMs hide under the stream as under a
    // weight read.
    Gemm = Step.GemmAlone;
    Weights = B.op(Op::Max, {Weights, Step.Streaming});
  }
  if (!Gemm.isValid() || !Weights.isValid())
    Gemm = Weights = B.constant(0, "one roofline: no kernel classes");
  NodeId Tokens =
      Step.Tokens.isValid() ? Step.Tokens : B.constant(1, "one token");
  return {Gemm, Weights, Tokens};
}

NodeId chunksOnStep(LoweringContext &Ctx, NodeId Prefill,
                    const PhaseTimes &Step, NodeId Prompt, NodeId Chunk,
                    bool Hybrid, std::optional<NodeId> Carried) {
  auto [Gemm, Weights, Tokens] = chunkHiding(Ctx, Step);
  return Ctx.B.apply(Hybrid ? FormulaId::HybridIterationTime
                            : FormulaId::ChunkedPrefillTime,
                     {Prefill, Step.Step, Prompt, Chunk, Gemm, Weights, Tokens,
                      Carried ? *Carried : Ctx.Decoder.ChunkCarried,
                      *Ctx.Decoder.Machine.Overlap},
                     "");
}

NodeId chunkCarried(LoweringContext &Ctx, const PhaseTimes &Parts,
                    NodeId CommLatency) {
  GraphBuilder &B = Ctx.B;
  NodeId Attention =
      Parts.AttentionCompute.isValid()
          ? B.op(Op::Max, {Parts.AttentionCompute, Parts.KVTraffic})
          : B.constant(0, "one roofline: no attention class apart");
  return B.op(Op::Add, {Attention, B.op(Op::Sub, {Parts.Comm, CommLatency})});
}

bool lowerDecoderSteps(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  DecoderShape Shape{D.ComputeParams, D.Layers, D.AttnDim, D.KV,
                     D.KVShards,      D.Groups};
  NodeId PromptTokens = B.op(Op::Mul, {D.Batch, D.Prompt});
  NodeId PrefillWeights = weightsRead(Ctx, PromptTokens, PhaseId::Prefill);
  PhaseWork Prefill =
      decoderWork(Ctx, PhaseId::Prefill, DecoderPass::Prefill, Shape,
                  PrefillWeights, D.Batch, D.Prompt, D.Prompt, D.TP);
  D.PrefillParts = lowerPhaseParts(Ctx, PhaseId::Prefill, D.Machine, Prefill);
  D.PrefillTime = D.PrefillParts.Step;

  // Continuous batching under an arrival rate runs the batch the load
  // keeps in the slots (lowerRunningBatch solves it from the step at one
  // sequence and at the slot limit, then lowers the decode phase at it);
  // otherwise every decode step runs the slots full.
  D.Loaded = Ctx.field(*Ctx.Workload, "arrival") && !D.Static;
  if (D.Loaded) {
    D.DecodeAtOne =
        lowerDecodeAt(Ctx, B.constant(1, "one sequence"), "decode.at_one");
    D.DecodeAtSlots = lowerDecodeAt(Ctx, D.Batch, "decode.at_slots");
    D.CapacityStep = D.DecodeAtSlots.Step;
    D.CapacityPhase = D.DecodeAtSlots;
    D.DecodeEta = D.DecodeAtSlots.Efficiency;
  } else {
    PhaseTimes Decode = lowerDecodeAt(Ctx, D.Batch, "");
    D.CapacityStep = Decode.Step;
    D.CapacityPhase = Decode;
    D.DecodeEta = Decode.Efficiency;
    D.TPOT = D.DecodeStep;
  }
  D.CapacityTPOT = D.CapacityStep;
  NodeId DecodeWeights = D.DecodeWeights;
  NodeId Eta = D.DecodeEta;
  B.publish(MetricId::DecodeCrossoverBatch,
            B.apply(FormulaId::DecodeCrossoverBatch,
                    {D.ComputeParams, D.Layers, D.DecodeAttnDim, D.Context,
                     D.WorkShards, DecodeWeights, D.KV, D.KVWorkShards, D.Peak,
                     Eta, D.BW, D.Machine.EtaMem},
                    ""));
  B.publish(MetricId::RidgePoint,
            B.apply(FormulaId::RidgePoint, {D.Peak, D.BW}, ""));

  // Export what the prefill and decode steps were made of, so that a
  // caller with its own state (the serving simulator) can time any batch,
  // context and number of new tokens without lowering again.
  const Roofline &M = D.Machine;
  graph::StepInputs In;
  In.Params = D.ComputeParams;
  In.Layers = D.Layers;
  In.AttnDim = D.AttnDim;
  In.DecodeAttnDim = D.DecodeAttnDim;
  In.Hidden = M.Hidden;
  In.KV = D.KV;
  In.KVShards = D.KVShards;
  In.TP = D.TP;
  In.PP = D.PP;
  In.EP = D.EP;
  In.BytesPerWeight = D.WeightBytes;
  In.WeightsPerDevice = D.Weights;
  In.Peak = M.Peak;
  In.EtaGemm = M.EtaGemm;
  In.EtaAttention = M.EtaAttention;
  In.BW = M.BW;
  In.EtaMem = M.EtaMem;
  In.ActivationBytes = M.ActivationBytes;
  if (M.FabricBW) {
    In.FabricBW = *M.FabricBW;
    In.FabricLatency = *M.FabricLatency;
    In.InterBW = M.InterBW;
    In.InterLatency = M.InterLatency;
    In.NodeRanks = M.NodeRanks;
    In.EtaComm = M.EtaComm;
    In.CollectiveOverhead = M.CollectiveOverhead;
  }
  if (M.InjectBW)
    In.InjectBW = *M.InjectBW;
  if (M.StepOverhead) {
    In.StepOverhead = *M.StepOverhead;
    In.LayerOverhead = *M.LayerOverhead;
  }
  if (M.Overlap)
    In.Overlap = *M.Overlap;
  if (D.Moe) {
    In.MoeParams = D.Moe->Params;
    In.MoeActive = D.Moe->Active;
    In.MoeExperts = D.Moe->Experts;
    In.MoeTopK = D.Moe->TopK;
    In.MoeLayers = M.MoeLayers;
    if (D.MoeImbalance)
      In.MoeImbalance = *D.MoeImbalance;
    if (M.AllToAllBW) {
      In.MoeInterBW = *M.AllToAllBW;
      In.MoeInterLatency = *M.AllToAllLatency;
    }
    if (M.Routing) {
      In.MoeGroups = M.Routing->Groups;
      In.MoeGroupsPerToken = M.Routing->GroupsPerToken;
      In.MoeDispatchRatio = M.Routing->DispatchRatio;
    }
  }
  B.G.Step = In;
  return true;
}

bool lowerBestBatch(LoweringContext &Ctx) {
  // Wall 5: the throughput-optimal batch under a TPOT limit. Decode
  // throughput B / T(B) never falls as B grows, so it is the largest batch
  // whose kernel-class roofline step meets the limit (communication not
  // counted).
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  std::optional<NodeId> Limit = Ctx.field(*Ctx.Workload, "tpot_limit");
  if (!Limit)
    return true;
  NodeId PerSequenceFlops =
      B.apply(FormulaId::DecodeStepFlops,
              {D.ComputeParams, D.Layers, D.DecodeAttnDim,
               B.constant(1, "one sequence"), D.Context, D.WorkShards},
              "decode.flops_per_sequence");
  NodeId PerSequenceAttention =
      B.apply(FormulaId::DecodeAttentionFlops,
              {D.Layers, D.DecodeAttnDim, B.constant(1, "one sequence"),
               D.Context, D.WorkShards},
              "decode.attention_flops_per_sequence");
  NodeId PerSequenceBytes =
      B.op(Op::Div, {B.op(Op::Mul, {D.Context, D.KV}), D.KVWorkShards});
  B.label(PerSequenceBytes, "decode.kv_bytes_per_sequence");
  const Roofline &M = D.Machine;
  B.publish(
      MetricId::MaxBatchUnderTpot,
      B.apply(FormulaId::MaxBatchUnderTPOT,
              {*Limit, B.op(Op::Sub, {PerSequenceFlops, PerSequenceAttention}),
               PerSequenceAttention, D.DecodeWeights, PerSequenceBytes,
               B.op(Op::Mul, {M.Peak, M.EtaGemm}),
               B.op(Op::Mul, {M.Peak, M.EtaAttention}),
               B.op(Op::Mul, {D.BW, M.EtaMem}), D.MaxSequences, *M.Overlap},
              ""));
  return true;
}

/// The machine the speculative draft runs on: the target's, with the
/// draft's shape (a dense model: it routes nothing, whatever the target's
/// expert parallelism).
static Roofline draftMachine(LoweringContext &Ctx) {
  const DraftModel &Dr = *Ctx.Decoder.Draft;
  Roofline M = Ctx.Decoder.Machine;
  M.Layers = Dr.Layers;
  M.Hidden = Dr.Hidden;
  M.Params = Dr.Params;
  M.EP.reset();
  M.Routing.reset();
  M.AllToAllBW.reset();
  M.AllToAllLatency.reset();
  M.MoeImbalance.reset();
  return M;
}

/// The draft's weights a pass reads per device: like the target's, every
/// pipeline stage's.
static NodeId draftWeightsRead(LoweringContext &Ctx,
                               const std::string &Hidden) {
  DecoderState &D = Ctx.Decoder;
  if (D.Machine.InjectBW)
    return weightsRead(Ctx, NodeId(), std::nullopt);
  return Ctx.B.apply(FormulaId::WeightBytesPerRank,
                     {D.Draft->Params, D.WeightBytes, D.TP},
                     Hidden.empty() ? "draft.weights_per_tp_rank"
                                    : Hidden + ".weights_per_tp_rank");
}

/// The draft model's decode step over \p Micro sequences. Published as the
/// draft's phase unless \p Hidden names it.
static NodeId draftStepAt(LoweringContext &Ctx, NodeId Micro,
                          const std::string &Hidden) {
  DecoderState &D = Ctx.Decoder;
  const DraftModel &Dr = *D.Draft;
  Roofline DraftMachine = draftMachine(Ctx);
  PhaseWork Work = decoderWork(
      Ctx, PhaseId::DraftDecode, DecoderPass::Decode,
      DecoderShape{Dr.Params, Dr.Layers, Dr.AttnDim, Dr.KV, Dr.KVShards},
      draftWeightsRead(Ctx, Hidden), Micro, D.OneToken, D.Context, D.TP,
      Hidden);
  if (Hidden.empty())
    return lowerPhase(Ctx, PhaseId::DraftDecode, DraftMachine, Work);
  return lowerHiddenPhase(Ctx, PhaseId::DraftDecode, DraftMachine, Work, Hidden)
      .Step;
}

PhaseTimes draftPrefill(LoweringContext &Ctx, NodeId Tokens) {
  DecoderState &D = Ctx.Decoder;
  const DraftModel &Dr = *D.Draft;
  PhaseWork Work = decoderWork(
      Ctx, PhaseId::DraftDecode, DecoderPass::Prefill,
      DecoderShape{Dr.Params, Dr.Layers, Dr.AttnDim, Dr.KV, Dr.KVShards},
      draftWeightsRead(Ctx, "draft.prefill"), Ctx.B.constant(1, "one sequence"),
      Tokens, Tokens, D.TP, "draft.prefill");
  return lowerHiddenPhase(Ctx, PhaseId::DraftDecode, draftMachine(Ctx), Work,
                          "draft.prefill");
}

NodeId speculativeVerifyPositions(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  NodeId Positions = B.op(Op::Add, {Ctx.Decoder.Draft->Tokens,
                                    B.constant(1, "the target's own token")});
  B.label(Positions, "verify.positions");
  return Positions;
}

NodeId speculativeTokenTimeAt(LoweringContext &Ctx, NodeId Batch,
                              const std::string &Label) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const DraftModel &Dr = *D.Draft;
  NodeId Micro = B.op(
      Op::Div, {Batch, B.op(Op::Max, {B.constant(1, "at least one micro-batch"),
                                      B.op(Op::Min, {D.PP, Batch})})});
  NodeId Draft = draftStepAt(Ctx, Micro, Label + ".draft");
  NodeId Verify = lowerDecodeAt(Ctx, Batch, Label + ".verify",
                                speculativeVerifyPositions(Ctx))
                      .Step;
  return B.apply(FormulaId::SpeculativeTimePerToken,
                 {Draft, Verify, Dr.Tokens, Dr.Acceptance},
                 Label + ".time_per_token");
}

bool lowerSpeculative(LoweringContext &Ctx) {
  // With speculative decoding a target step verifies k draft tokens and
  // emits E = (1 - a^(k+1)) / (1 - a) of them on average; the target's
  // step runs k + 1 positions a sequence (free while decode is
  // memory-bound, k + 1 times the GEMMs and attention once they bind).
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  if (!D.Draft)
    return true;
  const DraftModel &Dr = *D.Draft;
  NodeId DraftStep = draftStepAt(Ctx, D.MicroBatch, "");
  B.publish(MetricId::SpeculativeTokensPerStep,
            B.apply(FormulaId::SpeculativeTokensPerStep,
                    {Dr.Acceptance, Dr.Tokens}, ""));
  // The target's step verifies the k draft tokens: k + 1 positions a
  // sequence. Free while the step is memory-bound (the weights and the
  // cache are read once either way); k + 1 times the GEMMs and attention
  // once they bind, at large batches, where speculation stops paying.
  NodeId Verify = lowerDecodeAt(Ctx, D.DecodeBatch, "verify",
                                speculativeVerifyPositions(Ctx))
                      .Step;
  D.TPOT = B.apply(FormulaId::SpeculativeTimePerToken,
                   {DraftStep, Verify, Dr.Tokens, Dr.Acceptance}, "");
  D.SpeculativeIteration =
      B.op(Op::Add, {B.op(Op::Mul, {Dr.Tokens, DraftStep}), Verify});
  B.label(*D.SpeculativeIteration, "speculative.iteration");
  B.publish(MetricId::SpeculativeTimePerToken, D.TPOT);
  // The draft's step model, for the serving simulator: the target's
  // machine with the draft's shape (a dense model, every pipeline stage).
  if (B.G.Step) {
    graph::Graph::DraftInputs Out;
    graph::StepInputs &S = Out.Step;
    S = *B.G.Step;
    S.Params = Dr.Params;
    S.Layers = Dr.Layers;
    S.AttnDim = S.DecodeAttnDim = Dr.AttnDim;
    S.Hidden = Dr.Hidden;
    S.KV = Dr.KV;
    S.KVShards = Dr.KVShards;
    S.WeightsPerDevice = Dr.Weights;
    S.MoeParams = S.MoeActive = S.MoeExperts = S.MoeTopK = S.MoeLayers =
        S.MoeImbalance = S.MoeGroups = S.MoeGroupsPerToken =
            S.MoeDispatchRatio = S.MoeInterBW = S.MoeInterLatency = NodeId();
    Out.Tokens = Dr.Tokens;
    Out.Acceptance = Dr.Acceptance;
    B.G.Draft = Out;
  }
  // The capacity: a token's time at the slot limit, the draft's step
  // there too (lowerRunningBatch).
  D.CapacityTPOT =
      D.Loaded && D.SpeculativeAtSlots ? *D.SpeculativeAtSlots : D.TPOT;
  return true;
}

} // namespace mlsc
