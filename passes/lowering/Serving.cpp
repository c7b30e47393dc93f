//===- Serving.cpp - Wall 4: a decoder's requests -------------------------===//
//
// One request's service after the prefill and decode steps are lowered:
//  - its prefill (a prefix cache skips the hit part; chunked prefill rides
//    the chunks on decode iterations, Sarathi-Serve; static batching
//    prefills the whole batch), the KV transfer of prefill/decode
//    disaggregation (DistServe), then output x TPOT;
//  - the interference of other requests' prefills with its decode;
//  - the throughput of a replica, its slots full (its replicas and the
//    batch the load keeps running come from lowerRunningBatch).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Phase.h"
#include "passes/lowering/Steps.h"

namespace mlsc {

using graph::Op;

bool lowerRequests(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;

  NodeId Computed = D.Computed;
  NodeId RequestPrefill = D.RequestPrefill;

  // Chunked prefill (Sarathi-Serve): chunks of C prompt tokens ride on
  // decode iterations, so the prefill takes ceil(S/C) iterations of
  // max(T_prefill*C/S, T_decode), and a decode iteration that carries a
  // chunk is the slow one: the p99 inter-token latency. Not under
  // disaggregation: a prefill replica has no decodes for its chunks to
  // ride on, and a decode replica carries no chunk.
  NodeId ITLTail = D.TPOT;
  const ir::Entity *Fabric = Ctx.entity(W, "disaggregation.fabric");
  D.ChunksRide = D.Chunk && !D.Static && !Fabric;
  // The iterations chunks ride on: decode steps, or under speculative
  // decoding the draft's k steps and the target's verifying step.
  PhaseTimes Carrier = D.Decode;
  Carrier.Step = D.iteration();
  if (D.ChunksRide) {
    RequestPrefill =
        chunksOnStep(Ctx, RequestPrefill, Carrier, Computed, *D.Chunk);
    B.publish(MetricId::RequestChunkedPrefillTime, RequestPrefill);
    B.publish(MetricId::PrefillChunks,
              B.apply(FormulaId::PrefillChunks, {Computed, *D.Chunk}, ""));
    NodeId Hybrid = chunksOnStep(Ctx, D.RequestPrefill, Carrier, Computed,
                                 *D.Chunk, /*Hybrid=*/true);
    B.publish(MetricId::HybridIterationTime, Hybrid);
    ITLTail = B.op(Op::Max, {D.TPOT, Hybrid});
    B.label(ITLTail, "itl.tail_step");
  }

  // Prefill/decode disaggregation (DistServe): the prompt's KV cache moves
  // from the prefill to the decode replica over a fabric, each TP shard its
  // share in parallel.
  NodeId FirstToken = RequestPrefill;
  if (Fabric) {
    NodeId BW = Ctx.required(*Fabric, "bandwidth", "the KV-cache transfer");
    NodeId Latency = Ctx.required(*Fabric, "latency", "the KV-cache transfer");
    if (Ctx.Failed)
      return false;
    NodeId Shard = B.op(Op::Div, {D.KV, D.KVGroupShards});
    NodeId Rate = B.op(Op::Mul, {BW, D.Machine.EtaComm});
    NodeId Transfer = B.apply(FormulaId::KVTransferTime,
                              {D.Prompt, Shard, Rate, Latency}, "");
    D.TransferShard = Shard;
    D.TransferRate = Rate;
    D.TransferLatency = Latency;
    B.publish(MetricId::RequestKVTransferTime, Transfer);
    FirstToken =
        B.apply(FormulaId::TimeToFirstToken,
                {Ctx.none("s", "0 s", "the queue's wait is added by wall 7"),
                 RequestPrefill, Transfer},
                "request.first_token_time");
  }

  // Static batching at load: a token gap is the decode step at the batch
  // the load gives; a request's TPOT, (E2E - TTFT) / (output - 1), counts
  // the batch's decode to its longest output over its own output's gaps
  // (the shorter outputs decode on as padding; static_request_tpot).
  std::optional<NodeId> StaticTpot50, StaticTpot99;
  if (D.StaticAtLoad) {
    const DecoderState::StaticLoad &S = *D.StaticAtLoad;
    ITLTail = S.Step;
    auto tpotAt = [&](double Q, const char *Why, const char *Label) {
      return B.apply(
          FormulaId::StaticRequestTpot,
          {S.Step, S.Batch, D.OutputDrawn, S.CV, S.Cap, B.constant(Q, Why)},
          std::string("static.tpot_") + Label);
    };
    StaticTpot50 = tpotAt(0.5, "the median", "p50");
    StaticTpot99 = tpotAt(0.99, "the 99th percentile", "p99");
  }
  B.publish(MetricId::ItlP50, D.StaticAtLoad ? D.StaticAtLoad->Step : D.TPOT);
  NodeId Replicas = D.Replicas;

  // Prefill interference (Sarathi-Serve): with continuous batching on a
  // colocated replica, the other requests' prefills (their rate from
  // lowerRunningBatch) take time from its decode iterations: all of it
  // without chunked prefill, only what the chunks add to the iterations
  // with it.
  // The replica's capacity, its slots full: the decode steps' rate, and
  // what the requests' prefills leave of it (the part of a prefill that
  // does not hide under decode steps; none when another pool prefills).
  std::optional<NodeId> Capacity;
  if (!D.Static) {
    B.publish(
        MetricId::DecodeThroughput,
        B.apply(FormulaId::DecodeThroughput, {D.Batch, D.CapacityTPOT}, ""));
    NodeId PrefillExtra;
    if (Fabric) {
      PrefillExtra =
          Ctx.none("s", "0 s",
                   "a disaggregated decode replica runs no prefills: the "
                   "prefill pool does");
    } else if (D.Chunk) {
      NodeId Chunked = chunksOnStep(Ctx, D.RequestPrefill, D.CapacityPhase,
                                    Computed, *D.Chunk);
      PrefillExtra = B.op(
          Op::Sub, {Chunked, B.op(Op::Mul, {B.apply(FormulaId::PrefillChunks,
                                                    {Computed, *D.Chunk}, ""),
                                            D.CapacityStep})});
      B.label(PrefillExtra, "capacity.prefill_extra_time");
      // Under pipeline parallelism the chunks' slow cycles, which other
      // engines' chunks share (one stage: the extra time, as before).
      Capacity = B.apply(FormulaId::PipelinedChunkedCapacity,
                         {D.Output, PrefillExtra,
                          B.apply(FormulaId::ChunkPassage,
                                  {Chunked, D.CapacityStep, Computed, *D.Chunk},
                                  "capacity.chunk_passage"),
                          D.CapacityTPOT, D.Batch, D.Stages},
                         "");
    } else {
      PrefillExtra = D.PrefillShare;
    }
    if (!Capacity && !Fabric && !D.BatcherSequences) {
      // Unchunked prompts' convoys under pipeline parallelism cost the
      // replica more than a stage's share (one stage: the same); with the
      // slots full, each replaces a decode step at the slots.
      NodeId Stall = B.apply(FormulaId::PipelinePrefillStall,
                             {D.PrefillShare, D.Stages, D.CapacityStep},
                             "capacity.convoy");
      Capacity = B.apply(
          FormulaId::PipelinedCapacity,
          {D.Output, D.PrefillShare, Stall, D.CapacityTPOT, D.Batch, D.Stages},
          "");
    } else if (!Capacity) {
      Capacity = B.apply(FormulaId::ContinuousCapacity,
                         {D.Output, PrefillExtra, D.CapacityTPOT, D.Batch}, "");
    }
  }
  NodeId MeanTPOT = D.TPOT;
  std::optional<NodeId> OfferedTPOT; // the arrivals' own, for sizing
  // A request's TPOT as benchmarks report it, (E2E - TTFT) / (output - 1):
  // without other requests' prefills every gap is a decode step.
  NodeId TpotP50 = StaticTpot50.value_or(D.TPOT),
         TpotP99 = StaticTpot99.value_or(D.TPOT);
  std::optional<NodeId> Arrival = D.SeqArrival;
  if (D.OtherPrefills) {
    // Past the replica's capacity its slots stay full and it admits a
    // request only as one completes: the prefills that stall its decodes
    // come at the capacity's rate (n / X requests a second, X the
    // capacity in tokens), not the arrivals'. The queue in front of the
    // slots takes the excess (wall 7: UNSTABLE, TTFT infinite), and a
    // running request's TPOT stays what the full slots give.
    NodeId Admitted = B.op(
        Op::Mul,
        {B.op(Op::Mul, {B.op(Op::Div, {*Capacity, D.Output}),
                        Ctx.quantity(1, "req", "1 req",
                                     "a request for each output's tokens")}),
         B.op(Op::Div,
              {B.op(Op::Sub, {D.Batch, B.constant(1, "the request itself")}),
               D.Batch})});
    NodeId Offered = *D.OtherPrefills;
    NodeId Rate = B.op(Op::Min, {Offered, Admitted});
    B.label(Rate, "admitted_interfering_prefill_rate");
    NodeId Extra = D.Chunk ? RequestPrefill : *D.PrefillStall;
    if (D.Chunk) {
      // The chunks' time beyond the decode iterations they ride on, which
      // the prompts packed into one iteration share.
      NodeId Packed = B.apply(FormulaId::PackedChunkPrompts,
                              {Rate, D.RequestPrefill, *D.Chunk, Computed}, "");
      B.publish(MetricId::PackedChunkPrompts, Packed);
      auto [Gemm, Hiding, StepTokens] = chunkHiding(Ctx, D.Decode);
      Extra = B.apply(FormulaId::ChunkExtraTime,
                      {D.RequestPrefill, Carrier.Step, Computed, *D.Chunk, Gemm,
                       Hiding, StepTokens, Packed, D.ChunkCarried,
                       *D.Machine.Overlap},
                      "chunks_extra_time");
      // Under pipeline parallelism the micro-batches behind a chunk follow
      // it through every stage (a convoy): while an engine carries chunks
      // every engine's iteration is as slow, and other engines' chunks
      // ride in the same slow cycles (chunk_convoy_stall, below).
      if (D.ChunksRide)
        D.ChunkExtra = Extra;
    }
    // A dispatcher's batches (unchunked): the prompts of a batch stall the
    // decodes together, back to back, K times rarer and K times longer
    // (the mean interference is the same; its spread across requests and
    // the stalled gaps are not).
    NodeId Stall = RequestPrefill;
    NodeId OfferedExtra = Extra;
    if (D.BatcherSequences && !D.Chunk) {
      Rate = B.op(Op::Div, {Rate, *D.BatcherSequences});
      B.label(Rate, "batcher.stall_rate");
      Offered = B.op(Op::Div, {Offered, *D.BatcherSequences});
      Extra = B.op(Op::Mul, {Extra, *D.BatcherSequences});
      B.label(Extra, "batcher.batch_stall");
      OfferedExtra = Extra;
      // A stalled gap waits out the batch's passes (a request's own
      // prefill for a batch of one, as without a batcher).
      if (D.BatcherBusy)
        Stall = *D.BatcherBusy;
    } else if (D.ChunksRide) {
      // Chunks on several engines at once share their slow cycles: a
      // prompt's mean stall, over its chunked passage (one stage: its
      // extra time whole).
      NodeId Passage =
          B.apply(FormulaId::ChunkPassage,
                  {RequestPrefill, Carrier.Step, Computed, *D.Chunk}, "");
      OfferedExtra = B.apply(FormulaId::ChunkConvoyStall,
                             {Offered, Extra, Passage, D.Stages},
                             "offered_chunk_convoy_stall");
      Extra = B.apply(FormulaId::ChunkConvoyStall,
                      {Rate, Extra, Passage, D.Stages}, "");
    } else if (!D.Chunk) {
      // Unchunked, the convoys of prompts in different micro-batches
      // chain: fewer, longer stalls (merged_convoy_rate; without pipeline
      // parallelism the same, one prompt after another). A batcher's
      // batches come a window apart and do not.
      NodeId OfferedConvoys =
          B.apply(FormulaId::MergedConvoyRate,
                  {Offered, D.PrefillShare, D.Stages}, "offered_convoy_rate");
      OfferedExtra = B.apply(FormulaId::MergedConvoyStall,
                             {Offered, Extra, D.PrefillShare, D.Stages},
                             "offered_merged_convoy_stall");
      Offered = OfferedConvoys;
      NodeId Convoys = B.apply(FormulaId::MergedConvoyRate,
                               {Rate, D.PrefillShare, D.Stages}, "");
      Extra = B.apply(FormulaId::MergedConvoyStall,
                      {Rate, Extra, D.PrefillShare, D.Stages}, "");
      Rate = Convoys;
      // A stalled gap waits out the convoy, at least the prompt's prefill.
      Stall = B.op(Op::Max, {Stall, Extra});
      B.label(Stall, "convoy_stalled_gap");
    }
    NodeId F = B.apply(FormulaId::PrefillInterference, {Rate, Extra}, "");
    B.publish(MetricId::PrefillInterference, F);
    MeanTPOT = B.apply(FormulaId::InterferedTokenTime, {D.TPOT, F}, "");
    B.publish(MetricId::TpotMean, MeanTPOT);
    // What the arrivals would stall if the slots took them all: sizing
    // reads it (wall 7), since more replicas each see fewer of them. The
    // same as the above below capacity.
    D.OfferedStallShare =
        B.apply(FormulaId::PrefillInterference, {Offered, OfferedExtra},
                "offered_prefill_interference");
    OfferedTPOT = B.apply(FormulaId::InterferedTokenTime,
                          {D.TPOT, *D.OfferedStallShare}, "offered_tpot_mean");
    // Prompts that arrive during a stall run before the decode resumes
    // (prefills first), a busy period; a batcher's batches come a window
    // apart and do not chain. Under pipeline parallelism only those given
    // to the request's own engine (1 / m of them) run before its
    // micro-batch's next iteration; the others' prefills pass through the
    // stages beside it (the simulator at pp 8: ITL p99 213.5 ms at 2
    // req/s, where chaining them all read 581.7 ms). Unchunked, the
    // stalls are the chained convoys, r x of them a second.
    NodeId Chain = D.BatcherSequences
                       ? Ctx.none("req/s", "0 req/s",
                                  "a batcher's batches come a window apart")
                       : B.op(Op::Div, {Rate, D.Stages});
    B.label(Chain, "stall_chain_rate");
    // Across requests: the prefills (or chunks' extra time) that land in
    // one request's decode, with those that arrive during their stalls.
    // With outputs that spread, over the requests' own lengths (short
    // ones weigh on the tail).
    std::optional<NodeId> OutputCV = Ctx.field(W, "output_cv");
    auto quantile = [&](double Q, const char *Why) {
      if (OutputCV)
        return B.apply(
            FormulaId::RequestTpotQuantileSpread,
            {D.TPOT, MeanTPOT, Extra, Rate, Chain, D.OutputDrawn, *OutputCV,
             D.OutputLimit.value_or(Ctx.quantity(
                 std::numeric_limits<double>::infinity(), "tok", "no limit",
                 "no max_output and no context window: the draws uncut")),
             B.constant(Q, Why)},
            "");
      return B.apply(
          FormulaId::RequestTpotQuantile,
          {D.TPOT, MeanTPOT, Extra, Rate, Chain, D.Output, B.constant(Q, Why)},
          "");
    };
    D.StallRate = Rate;
    D.StallExtra = Extra;
    D.StallChain = Chain;
    TpotP50 = quantile(0.5, "the median");
    TpotP99 = quantile(0.99, "the 99th percentile");
    if (!D.Chunk) {
      B.publish(
          MetricId::ItlStallProbability,
          B.apply(FormulaId::PrefillStallProbability, {D.TPOT, Rate}, ""));
      ITLTail = B.apply(FormulaId::PrefillStallItl,
                        {D.TPOT, Stall, Extra, Rate, Chain,
                         B.constant(0.99, "the 99th percentile")},
                        "itl.stalled_p99");
    }
  }
  B.publish(MetricId::TpotP50, TpotP50);
  B.publish(MetricId::TpotP99, TpotP99);
  B.publish(MetricId::ItlP99, ITLTail);

  NodeId Throughput;
  if (D.Static) {
    // An engine's full batch (the replica's, without pp) prefills in one
    // pass and decodes until its longest output ends (the cap, without a
    // spread given; with one, the longest of its slots' draws); the
    // replica's m engines serve batch sequences in that time.
    const DecoderState::StaticEngine &E = *D.StaticEngines;
    NodeId Longest = B.apply(FormulaId::LongestOutputOfBatch,
                             {E.Slots, D.OutputDrawn, E.CV, E.Cap},
                             "static.longest_output_at_slots");
    D.Service =
        B.apply(FormulaId::EndToEndLatency, {FirstToken, D.TPOT, Longest}, "");
    B.publish(MetricId::RequestServiceTime, D.Service);
    // The batch's tokens over the batch's time.
    NodeId Tokens = B.op(Op::Mul, {D.Batch, D.Output});
    Throughput = B.op(Op::Div, {Tokens, D.Service});
  } else {
    // A sized decode pool's slot holds the decode alone, from the KV cache's
    // arrival; otherwise the request's slot holds its prefill too.
    NodeId InSlot = D.PrefillReplicas ? B.G.get(MetricId::RequestKVTransferTime)
                                      : FirstToken;
    D.Service =
        B.apply(FormulaId::EndToEndLatency, {InSlot, MeanTPOT, D.Output}, "");
    B.publish(MetricId::RequestServiceTime, D.Service);
    if (OfferedTPOT)
      D.OfferedService =
          B.apply(FormulaId::EndToEndLatency, {InSlot, *OfferedTPOT, D.Output},
                  "offered_service_time");
    Throughput = *Capacity;
  }
  B.publish(MetricId::Throughput, Throughput);
  NodeId System = B.op(Op::Mul, {Replicas, Throughput});
  NodeId PerDevice;
  if (D.PrefillReplicas) {
    // Sized pools: the system serves what the slower pool does (the
    // prefill pool completes P / T_prefill requests a second, n tokens
    // each), and a device's share counts both pools' devices.
    NodeId PrefillPool = B.op(
        Op::Div, {B.op(Op::Mul, {*D.PrefillReplicas,
                                 B.op(Op::Div, {D.Output, D.RequestPrefill})}),
                  B.constant(1, "one request a prefill")});
    B.label(PrefillPool, "prefill_pool_capacity");
    System = B.op(Op::Min, {System, PrefillPool});
    NodeId AllDevices =
        B.op(Op::Mul,
             {B.op(Op::Add, {Replicas, *D.PrefillReplicas}), D.ReplicaDevices});
    PerDevice =
        B.apply(FormulaId::ThroughputPerDevice, {System, AllDevices}, "");
  } else {
    PerDevice = B.apply(FormulaId::ThroughputPerDevice,
                        {Throughput, D.ReplicaDevices}, "");
  }
  B.publish(MetricId::ThroughputPerDevice, PerDevice);
  B.publish(MetricId::SystemThroughput, System);
  // One output token is the prefill's: no decode step runs, and the
  // prefill is what binds.
  if (Ctx.foldedNumber(W, "output") <= 1 && !D.Thinking)
    B.G.MainPhase = D.Static ? PhaseId::Prefill : PhaseId::RequestPrefill;
  D.FirstToken = FirstToken;
  D.MeanTPOT = MeanTPOT;
  D.Arrival = Arrival;
  return true;
}

} // namespace mlsc
