//===- RunningBatch.cpp - Wall 5: the decode batch the load keeps running -===//
//
// `batch` is the slot limit of a replica (vLLM's max_num_seqs). Without an
// arrival rate, or with static batching, every decode step runs the slots
// full. Under an arrival rate, continuous batching admits requests as they
// come, so a decode step runs the requests the load keeps in the slots:
// by Little's law lambda_r x S of them, S a request's time in its slot,
// which itself grows with the batch through the step time. This step
// lowers a request's own prefill and the system's replicas, solves that
// fixed point (running_decode_batch, runtime/walls/Batching.cpp) and
// lowers the decode phase at the batch found; the step at the slot limit
// stays the replica's capacity, its throughput. Static batching under an
// arrival rate takes what waits when a replica empties: its batch follows
// the load too (static_batch_at_load), its prefill and decode lowered at
// that batch for the latencies; the slots' batch stays the capacity.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Phase.h"
#include "passes/lowering/Steps.h"

#include <fmt/format.h>

namespace mlsc {

using graph::Op;

namespace {

/// An MoE step's weight read on the curve of the experts its tokens touch,
/// each token missing a given expert with probability (1 - k/E)^imbalance;
/// 0 for a dense model, whose weight read is the same at any batch.
NodeId expertMissCurve(LoweringContext &Ctx, const std::string &Prefix) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  if (!D.Moe)
    return B.constant(0, "a dense step's weight read is the same at any "
                         "batch");
  NodeId Curve = B.op(Op::Sub, {B.constant(1, "all experts"),
                                B.op(Op::Div, {D.Moe->TopK, D.Moe->Experts})});
  if (D.MoeImbalance)
    Curve = B.op(Op::Pow, {Curve, *D.MoeImbalance});
  B.label(Curve, Prefix + ".expert_miss_per_token");
  return Curve;
}

/// A static batch's prefill of \p Batch prompts in one pass, lowered as a
/// hidden phase (the published prefill stays the slots').
PhaseTimes staticPrefillAt(LoweringContext &Ctx, NodeId Batch,
                           const std::string &Label) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  DecoderShape Shape{D.ComputeParams, D.Layers, D.AttnDim, D.KV,
                     D.KVShards,      D.Groups};
  NodeId Tokens = B.op(Op::Mul, {Batch, D.Prompt});
  PhaseWork Work = decoderWork(Ctx, PhaseId::Prefill, DecoderPass::Prefill,
                               Shape, weightsRead(Ctx, Tokens, std::nullopt),
                               Batch, D.Prompt, D.Prompt, D.TP, Label);
  return lowerHiddenPhase(Ctx, PhaseId::Prefill, D.Machine, Work, Label);
}

/// Static batching under an arrival rate (Orca's request-level batching,
/// as the simulator plays it): a replica admits what waits when it
/// empties, so its batch is the arrivals during the last batch's time, a
/// fixed point solved from the prefill and decode steps at one sequence
/// and at the slots; the prefill and the decode are then lowered at it
/// (hidden: the published phases stay the slots', the capacity).
void lowerStaticAtLoad(LoweringContext &Ctx, NodeId Arrival) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  NodeId PerReplica = B.op(Op::Div, {Arrival, D.Replicas});
  B.label(PerReplica, "static.arrival_per_replica");
  // The hidden decode steps must not move the weights the published
  // step reads (the crossover, the fidelity wall).
  NodeId Weights = D.DecodeWeights;
  PhaseTimes P1 = staticPrefillAt(Ctx, B.constant(1, "one sequence"),
                                  "static.prefill_at_one");
  PhaseTimes S1 =
      lowerDecodeAt(Ctx, B.constant(1, "one sequence"), "static.decode_at_one");
  const PhaseTimes &PB = D.PrefillParts, &SB = D.CapacityPhase;
  const DecoderState::StaticEngine &E = *D.StaticEngines;
  NodeId CV = E.CV, Cap = E.Cap;
  // The fixed point's arguments; the replica's arrival rate is the 23rd,
  // which the sizing search (lowerQueue) replaces with the scenario's.
  std::vector<NodeId> Args{P1.GemmCompute,
                           P1.WeightRead,
                           P1.AttentionCompute,
                           P1.KVTraffic,
                           P1.Added,
                           PB.GemmCompute,
                           PB.WeightRead,
                           PB.AttentionCompute,
                           PB.KVTraffic,
                           PB.Added,
                           S1.GemmCompute,
                           S1.WeightRead,
                           S1.AttentionCompute,
                           S1.KVTraffic,
                           S1.Added,
                           SB.GemmCompute,
                           SB.WeightRead,
                           SB.AttentionCompute,
                           SB.KVTraffic,
                           SB.Added,
                           D.Batch,
                           D.PP,
                           PerReplica,
                           D.OutputDrawn,
                           CV,
                           Cap,
                           *D.Machine.Overlap,
                           expertMissCurve(Ctx, "static")};
  NodeId K = B.apply(FormulaId::StaticBatchAtLoad, Args, "");
  B.publish(MetricId::RunningBatch, K);
  // Under pipeline parallelism the replica's m = min(pp, B) engines each
  // batch on their own: a batch, its prefill, its longest output and its
  // wait are an engine's, b = K / m of B / m slots at lambda_r / m; its
  // decode step is the replica's step at K, whose micro-batch is b.
  NodeId EngineRate = B.op(Op::Div, {PerReplica, E.Count});
  B.label(EngineRate, "static.arrival_per_engine");
  NodeId EngineBatch = B.op(Op::Div, {K, E.Count});
  B.label(EngineBatch, "static.engine_batch");
  NodeId Longest =
      B.apply(FormulaId::LongestOutputOfBatch,
              {EngineBatch, D.OutputDrawn, CV, Cap}, "static.longest_output");
  NodeId Prefill =
      staticPrefillAt(Ctx, EngineBatch, "static.prefill_at_load").Step;
  NodeId Step = lowerDecodeAt(Ctx, K, "static.decode_at_load").Step;
  D.DecodeWeights = Weights;
  NodeId Cycle = B.apply(FormulaId::EndToEndLatency, {Prefill, Step, Longest},
                         "static.batch_time");
  D.StaticAtLoad = DecoderState::StaticLoad{
      EngineRate, EngineBatch, E.Slots, Prefill, Step,
      Cycle,      Longest,     CV,      Cap,     std::move(Args)};
}

} // namespace

bool lowerRunningBatch(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;

  // The prompt tokens a request computes: a prefix cache skips the hits.
  // Continuous batching prefills each request alone (static batching
  // prefills the whole batch at once, lowerDecoderSteps).
  D.Computed = D.Prompt;
  std::optional<PhaseTimes> DraftPrefill;
  if (std::optional<NodeId> Hit = Ctx.field(W, "prefix_hit_rate")) {
    D.Computed = B.apply(FormulaId::PrefillTokensComputed, {D.Prompt, *Hit},
                         "request.prefill_tokens");
  }
  if (D.Static) {
    // Under pipeline parallelism a replica runs m = min(pp, batch) engines
    // (vLLM V0's virtual engines, as the simulator plays them), each a
    // static batcher of batch / m slots whose batch prefills in one pass
    // through every stage; m = 1 without, the engine the replica.
    NodeId Engines = B.op(Op::Max, {B.constant(1, "at least one engine"),
                                    B.op(Op::Min, {D.PP, D.Batch})});
    B.label(Engines, "static.engines");
    NodeId Slots = B.op(Op::Div, {D.Batch, Engines});
    B.label(Slots, "static.engine_slots");
    D.StaticEngines = DecoderState::StaticEngine{
        Engines, Slots,
        Ctx.field(W, "output_cv")
            .value_or(B.constant(0, "outputs of one length")),
        D.OutputCap.value_or(Ctx.none("tok", "0 tok", "no cap"))};
    D.RequestPrefill =
        staticPrefillAt(Ctx, Slots, "static.engine_prefill").Step;
  } else {
    NodeId Weights = weightsRead(Ctx, D.Computed, PhaseId::RequestPrefill);
    PhaseWork Work = decoderWork(
        Ctx, PhaseId::RequestPrefill, DecoderPass::Prefill,
        DecoderShape{D.ComputeParams, D.Layers, D.AttnDim, D.KV, D.KVShards,
                     D.Groups},
        Weights, B.constant(1, "one sequence"), D.Computed, D.Computed, D.TP);
    // After a prefix-cache hit the computed tokens also attend to the
    // cached ones, whose KV the prefill reads: computed x cached pairs
    // more, as the serving simulator counts them (until December 2026 the
    // closed forms left them out: a 16k prompt with 75% hits read 26 TFLOP
    // short).
    if (D.Computed != D.Prompt) {
      NodeId Cached = B.op(Op::Sub, {D.Prompt, D.Computed});
      B.label(Cached, "request.prefill_cached_tokens");
      NodeId Pairs = B.op(Op::Div, {B.op(Op::Mul, {D.Computed, Cached}),
                                    B.op(Op::Mul, {D.OneToken, D.OneToken})});
      NodeId Extra = B.apply(FormulaId::AttentionPairFlops,
                             {D.Layers, D.AttnDim, Pairs, D.TP},
                             "request.prefill.cached_attention_flops");
      Work.Flops = B.op(Op::Add, {Work.Flops, Extra});
      Work.AttentionFlops = B.op(Op::Add, {Work.AttentionFlops, Extra});
      Work.Bytes =
          B.op(Op::Add,
               {Work.Bytes,
                B.op(Op::Div, {B.op(Op::Mul, {Cached, D.KV}), D.KVShards})});
      B.label(Work.Flops, "request.prefill.flops_with_cached");
    }
    PhaseTimes Parts =
        lowerPhaseParts(Ctx, PhaseId::RequestPrefill, D.Machine, Work);
    D.RequestPrefill = Parts.Step;
    // Under speculative decoding the draft prefills the prompt too, for its
    // own KV cache, before it proposes the first tokens (the serving
    // simulator runs it in the prompt's iterations).
    if (D.Draft) {
      DraftPrefill = draftPrefill(Ctx, D.Computed);
      D.RequestPrefill = B.op(Op::Add, {Parts.Step, DraftPrefill->Step});
      B.label(D.RequestPrefill, "request.prefill_with_draft");
    }
    // What the prompt's chunks carry into the iterations they ride on
    // besides their GEMMs: attention (its kernel class, compute or KV
    // traffic, whichever is longer) and the bytes of the prompt's
    // communication; its latencies the iteration's own collectives pay,
    // the chunk's tokens riding in their messages. Lowered only for
    // chunks: the evaluator runs every node it is given.
    if (D.Chunk) {
      D.PrefillCommLatency =
          lowerCommLatency(Ctx, PhaseId::RequestPrefill, D.Machine, Work);
      D.ChunkCarried = chunkCarried(Ctx, Parts, D.PrefillCommLatency);
      B.label(D.ChunkCarried, "request_prefill.chunk_carried_time");
    }
  }
  // Under load the runtime batches the waiting prompts into passes of up
  // to its token budget, which read the weights once: a request's share
  // of the replica's time (its own first token still takes a pass).
  D.PrefillShare = D.RequestPrefill;
  // Pipeline stages prefill different prompts at once, m = min(pp,
  // batch) of them: a prompt holds each stage for 1 / m of its prefill's
  // latency, its share of the capacity.
  D.Stages = B.op(Op::Min, {D.PP, D.Batch});
  B.label(D.Stages, "pipeline.prefilling_microbatches");
  if (!D.Static && !D.Chunk) {
    NodeId Budget = Ctx.orDefault(W, DefaultId::MaxBatchTokens);
    D.PrefillShare =
        B.apply(FormulaId::BatchedPrefillShare,
                {B.G.get(PhaseId::RequestPrefill, PhaseMetricId::ComputeTime),
                 B.G.get(PhaseId::RequestPrefill, PhaseMetricId::MemoryTime),
                 B.G.get(MetricId::RequestPrefillTime), Budget, D.Computed},
                "request.prefill_share");
    // The draft's prefill batches as the target's does.
    if (DraftPrefill) {
      D.PrefillShare =
          B.op(Op::Add, {D.PrefillShare,
                         B.apply(FormulaId::BatchedPrefillShare,
                                 {DraftPrefill->Compute, DraftPrefill->Memory,
                                  DraftPrefill->Step, Budget, D.Computed},
                                 "draft.prefill_share")});
      B.label(D.PrefillShare, "request.prefill_share_with_draft");
    }
    D.PrefillShare = B.op(Op::Div, {D.PrefillShare, D.Stages});
    B.label(D.PrefillShare, "request.prefill_share_per_stage");
    if (D.Groups) {
      // Expert parallelism: the ep groups prefill different prompts at
      // once, min(ep, batch) of them, each on its own group for the
      // always-active parameters a; the routed experts' r / ep on every
      // rank is not shared. Of a prompt's a + r / ep, the share a / (a +
      // r / ep) divides (attention, which also divides, is left with the
      // experts: an upper bound).
      const ExpertGroups &G = *D.Groups;
      NodeId Own =
          B.op(Op::Add, {G.AlwaysActive, B.op(Op::Div, {G.Routed, G.EP})});
      NodeId Divides = B.op(Op::Div, {G.AlwaysActive, Own});
      NodeId Together = B.op(Op::Min, {G.EP, D.Batch});
      NodeId Factor =
          B.op(Op::Add, {B.op(Op::Div, {Divides, Together}),
                         B.op(Op::Sub, {B.constant(1, "all of it"), Divides})});
      B.label(Factor, "request.prefill_share_over_ep_groups");
      D.PrefillShare = B.op(Op::Mul, {D.PrefillShare, Factor});
      B.label(D.PrefillShare, "request.prefill_share_per_group");
    }
  }
  // A dispatcher's batches (`batcher.window`) land on a replica K requests
  // at once (K from the requests' rate; each brings its samples).
  // Unchunked, the runtime prefills them in passes of m = min(batch,
  // budget / prompt) prompts, back to back (its GEMMs at a pass's
  // tokens); a request's first token comes at the end of its own pass,
  // (passes + 1) / 2 passes on average, and a prompt's share of the
  // replica is a pass's m-th when it is below the share of a pass batched
  // from prompts arriving one by one.
  if (W.field("batcher.max_requests") && !W.field("batcher.window")) {
    Ctx.C.Diags.report(
        DiagKind::MissingInput, W.field("batcher.max_requests")->Range,
        fmt::format("`{}.batcher.max_requests` bounds the batches a "
                    "dispatcher sends, but `{}` gives no `batcher.window`, "
                    "the longest a batch's first request waits; give one "
                    "(MLPerf's AMD harness: 300 ms), or drop the bound",
                    W.Name, W.Name));
    Ctx.Failed = true;
    return false;
  }
  if (std::optional<NodeId> Window = Ctx.field(W, "batcher.window"))
    D.Batcher = DecoderState::BatcherInputs{
        *Window,
        Ctx.field(W, "batcher.max_requests")
            .value_or(B.constant(0, "no bound on a batch")),
        Ctx.field(W, "arrival")};
  if (D.Batcher && D.Batcher->Rate && D.SeqArrival && !D.Static) {
    D.BatcherRequests =
        B.apply(FormulaId::BatcherRequests,
                {*D.Batcher->Rate, D.Batcher->Window, D.Batcher->MaxRequests},
                "batcher.requests");
    B.publish(MetricId::BatcherRequests, *D.BatcherRequests);
    D.BatcherSequences = *D.BatcherRequests;
    if (D.Samples) {
      D.BatcherSequences = B.op(Op::Mul, {*D.BatcherRequests, *D.Samples});
      B.publish(MetricId::BatcherSequences, *D.BatcherSequences);
    }
    if (!D.Chunk) {
      NodeId PerPass =
          B.op(Op::Max,
               {B.constant(1, "at least one prompt a pass"),
                B.op(Op::Min,
                     {D.Batch,
                      B.op(Op::Floor,
                           {B.op(Op::Div,
                                 {Ctx.orDefault(W, DefaultId::MaxBatchTokens),
                                  D.Computed})})})});
      B.label(PerPass, "batcher.prompts_per_pass");
      NodeId InPass = B.op(Op::Min, {*D.BatcherSequences, PerPass});
      NodeId Tokens = B.op(Op::Mul, {InPass, D.Computed});
      PhaseWork Work =
          decoderWork(Ctx, PhaseId::RequestPrefill, DecoderPass::Prefill,
                      DecoderShape{D.ComputeParams, D.Layers, D.AttnDim, D.KV,
                                   D.KVShards, D.Groups},
                      weightsRead(Ctx, Tokens, std::nullopt), InPass,
                      D.Computed, D.Computed, D.TP, "batcher.batch_prefill");
      NodeId Pass = lowerHiddenPhase(Ctx, PhaseId::RequestPrefill, D.Machine,
                                     Work, "batcher.batch_prefill")
                        .Step;
      NodeId Passes =
          B.op(Op::Max, {B.constant(1, "one pass"),
                         B.op(Op::Div, {*D.BatcherSequences, PerPass})});
      B.label(Passes, "batcher.passes");
      D.BatcherFirstToken = B.op(
          Op::Mul,
          {Pass, B.op(Op::Div, {B.op(Op::Add, {Passes, B.constant(1, "one")}),
                                B.constant(2, "half")})});
      B.label(*D.BatcherFirstToken, "batcher.first_token_time");
      D.BatcherBusy = B.op(Op::Mul, {Pass, Passes});
      B.label(*D.BatcherBusy, "batcher.busy_time");
      D.PrefillShare = B.op(
          Op::Min, {D.PrefillShare,
                    B.op(Op::Div, {B.op(Op::Div, {Pass, InPass}), D.Stages})});
      B.label(D.PrefillShare, "batcher.prefill_share");
    }
  }

  // Every replica (tp x pp x ep devices) serves `batch` requests at once:
  // the queue has replicas x batch servers. Sized prefill/decode pools
  // (DistServe) take the prefill pool's replicas out of the decode ones.
  D.Replicas =
      B.op(Op::Floor, {B.op(Op::Div, {Ctx.Sys->Devices, D.ReplicaDevices})});
  if (!Ctx.entity(W, "disaggregation.fabric") &&
      W.field("disaggregation.prefill_replicas")) {
    Ctx.C.Diags.report(
        DiagKind::MissingInput,
        W.field("disaggregation.prefill_replicas")->Range,
        fmt::format("`{}.disaggregation.prefill_replicas` sizes a prefill "
                    "pool, but `{}` gives no `disaggregation.fabric` for the "
                    "KV cache to cross to the decode pool; give one, or "
                    "drop the pool's size",
                    W.Name, W.Name));
    Ctx.Failed = true;
    return false;
  }
  if (Ctx.entity(W, "disaggregation.fabric")) {
    if (std::optional<NodeId> P =
            Ctx.field(W, "disaggregation.prefill_replicas")) {
      D.PrefillReplicas = *P;
      B.publish(MetricId::PrefillReplicas, *P);
      D.Replicas = B.op(Op::Sub, {D.Replicas, *P});
      B.label(D.Replicas, "decode_replicas");
      if (!checkPools(Ctx, D.ReplicaDevices, D.Replicas))
        return false;
    }
  }
  B.publish(MetricId::Replicas, D.Replicas);
  D.Servers = B.op(Op::Mul, {D.Replicas, D.Batch});
  B.publish(MetricId::Servers, D.Servers);
  if (D.Static && D.SeqArrival) {
    // A sized prefill pool queues each prompt on its own (M/G/c), which a
    // static batch's prefill of the whole batch does not.
    if (D.PrefillReplicas) {
      Ctx.C.Diags.report(
          DiagKind::InvalidLayout,
          W.field("disaggregation.prefill_replicas")->Range,
          fmt::format("`{}` batches statically under an arrival rate, "
                      "but `disaggregation.prefill_replicas` sizes a "
                      "prefill pool that prefills one request at a time; "
                      "static batches with a sized prefill pool are not "
                      "modelled: give `batching = continuous`, or drop the "
                      "pool's size",
                      W.Name));
      Ctx.Failed = true;
      return false;
    }
    lowerStaticAtLoad(Ctx, *D.SeqArrival);
  }
  if (!D.Loaded)
    return true;

  // Prefill interference (Sarathi-Serve, wall 4): on a colocated replica
  // the other requests' prefills, arriving at lambda / replicas x (B - 1) /
  // B (a request's own prefill precedes its decode; a lone slot sees none),
  // take time from its decode iterations.
  NodeId Arrival = *D.SeqArrival;
  NodeId PerReplica = B.op(Op::Div, {Arrival, D.Replicas});
  B.label(PerReplica, "arrival_per_replica");
  const bool Colocated = !Ctx.entity(W, "disaggregation.fabric");
  // A sized decode pool's slot holds the decode alone.
  NodeId InSlotFixed =
      D.PrefillReplicas ? Ctx.none("s", "0 s",
                                   "the prefill pool prefills; a decode slot "
                                   "holds the decode alone")
                        : D.RequestPrefill;
  NodeId F = B.constant(0, "a disaggregated decode replica runs no prefills");
  std::optional<NodeId> OtherRate;
  if (Colocated) {
    NodeId Others = B.op(
        Op::Div, {B.op(Op::Sub, {D.Batch, B.constant(1, "the request itself")}),
                  D.Batch});
    NodeId Rate = B.op(Op::Mul, {PerReplica, Others});
    B.label(Rate, "interfering_prefill_rate");
    D.OtherPrefills = Rate;
    OtherRate = Rate;
    // What each prefill adds to the replica's iterations: all of it (with
    // chunked prefill, what its chunks add beyond the decode steps they
    // ride on, which grows with the batch: solved below at each batch).
    // A running sequence waits longer than the stage's share, the convoy
    // of pipeline_prefill_stall (the decode step it replaces taken at one
    // sequence: the stall's upper bound), less what the convoys of
    // prompts in different micro-batches share as they merge.
    if (!D.Chunk) {
      D.PrefillStall =
          B.apply(FormulaId::PipelinePrefillStall,
                  {D.PrefillShare, D.Stages, D.DecodeAtOne.Step}, "");
      NodeId Convoys =
          B.apply(FormulaId::MergedConvoyRate, {Rate, D.PrefillShare, D.Stages},
                  "running_batch.convoy_rate");
      NodeId Merged = B.apply(FormulaId::MergedConvoyStall,
                              {Rate, *D.PrefillStall, D.PrefillShare, D.Stages},
                              "running_batch.merged_convoy_stall");
      F = B.apply(FormulaId::PrefillInterference, {Convoys, Merged},
                  "running_batch.interference");
    }
  }

  // The batch: b = min(B, 1 + lambda_r x S(b)), the step at b interpolated
  // between the step at one sequence and at the slots; an MoE step's
  // weight read on the curve of the experts its tokens touch, each token
  // missing a given expert with probability (1 - k/E)^imbalance.
  const PhaseTimes &One = D.DecodeAtOne, &Slots = D.DecodeAtSlots;
  NodeId Curve = expertMissCurve(Ctx, "running_batch");
  // Speculative decoding: a token takes k draft steps and the target's
  // verifying step over the E tokens it emits, not a decode step. The
  // step's kernel-class parts at one sequence and at the slots are scaled
  // to that time (the step is homogeneous in its parts), so the batch the
  // load keeps follows it; between the two it is interpolated as the
  // step is. (Until December 2026 the batch was the plain decode's, and a
  // verifying step that binds on compute at a large batch left the queue
  // reading stable past the capacity.)
  PhaseTimes PartsOne = One, PartsSlots = Slots;
  if (D.Draft) {
    auto scale = [&](PhaseTimes &T, NodeId Spec, const std::string &Name) {
      NodeId R = B.op(Op::Div, {Spec, T.Step});
      B.label(R, Name);
      for (NodeId *Part : {&T.GemmCompute, &T.WeightRead, &T.AttentionCompute,
                           &T.KVTraffic, &T.Added})
        *Part = B.op(Op::Mul, {*Part, R});
    };
    NodeId SpecOne = speculativeTokenTimeAt(Ctx, B.constant(1, "one sequence"),
                                            "speculative.at_one");
    D.SpeculativeAtSlots =
        speculativeTokenTimeAt(Ctx, D.Batch, "speculative.at_slots");
    scale(PartsOne, SpecOne, "running_batch.speculative_factor_at_one");
    scale(PartsSlots, *D.SpeculativeAtSlots,
          "running_batch.speculative_factor_at_slots");
  }
  NodeId Running;
  if (OtherRate && D.Chunk) {
    ChunkHiding HideOne = chunkHiding(Ctx, One),
                HideSlots = chunkHiding(Ctx, Slots);
    NodeId Packed =
        B.apply(FormulaId::PackedChunkPrompts,
                {*OtherRate, D.RequestPrefill, *D.Chunk, D.Computed}, "");
    Running = B.apply(FormulaId::RunningDecodeBatchChunked,
                      {PartsOne.GemmCompute,
                       PartsOne.WeightRead,
                       PartsOne.AttentionCompute,
                       PartsOne.KVTraffic,
                       PartsOne.Added,
                       PartsSlots.GemmCompute,
                       PartsSlots.WeightRead,
                       PartsSlots.AttentionCompute,
                       PartsSlots.KVTraffic,
                       PartsSlots.Added,
                       D.Batch,
                       D.PP,
                       PerReplica,
                       D.Output,
                       D.RequestPrefill,
                       D.Computed,
                       *D.Chunk,
                       *OtherRate,
                       Packed,
                       HideOne.Gemm,
                       HideOne.Weights,
                       HideSlots.Gemm,
                       HideSlots.Weights,
                       D.ChunkCarried,
                       *D.Machine.Overlap,
                       Curve},
                      "");
  } else {
    Running = B.apply(
        FormulaId::RunningDecodeBatch,
        {PartsOne.GemmCompute, PartsOne.WeightRead, PartsOne.AttentionCompute,
         PartsOne.KVTraffic, PartsOne.Added, PartsSlots.GemmCompute,
         PartsSlots.WeightRead, PartsSlots.AttentionCompute,
         PartsSlots.KVTraffic, PartsSlots.Added, D.Batch, D.PP, PerReplica,
         InSlotFixed, D.Output, F, *D.Machine.Overlap, Curve},
        "");
  }
  B.publish(MetricId::RunningBatch, Running);
  lowerDecodeAt(Ctx, Running, "");
  D.TPOT = D.DecodeStep;
  return true;
}

} // namespace mlsc
