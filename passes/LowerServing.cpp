//===- LowerServing.cpp - A decoder LLM's requests and queue --------------===//
//
// Part of lower-to-graph (ScenarioLowering.h), after LowerDecoder.cpp has
// built the prefill and decode steps:
//  - one request's service (wall 4): its prefill (a prefix cache skips the
//    hit part; chunked prefill rides the chunks on decode iterations,
//    Sarathi-Serve; static batching prefills the whole batch), the KV
//    transfer of prefill/decode disaggregation (DistServe), then
//    output x TPOT;
//  - throughput, replicas and nameplate power (walls 5, 18);
//  - the M/G/c queue in front of the replicas' slots (wall 7);
//  - the fidelity of a quantized workload (wall 13).
//
//===----------------------------------------------------------------------===//

#include "passes/ScenarioLowering.h"
#include "runtime/walls/Formulas.h"

#include <fmt/format.h>

namespace mlsc {

using graph::Op;

void ScenarioLowering::serving(Decoder &D) {
  const ir::Entity &W = *D.W;
  const Dimension One;
  const Dimension Second = unit("s");
  const Dimension Tok = unit("tok");

  // The prompt tokens a request computes: a prefix cache skips the hits.
  uint32_t OneSequence = B.constant(1, "one sequence");
  uint32_t Computed = D.Prompt;
  if (std::optional<uint32_t> Hit = field(W, "prefix_hit_rate")) {
    checkFraction(W, "prefix_hit_rate");
    Computed = B.apply(FormulaId::PrefillTokensComputed, {D.Prompt, *Hit},
                       "request.prefill_tokens");
  }

  // Continuous batching prefills each request alone; static batching
  // prefills the whole batch at once and holds every slot until the batch
  // ends (Orca, OSDI 2022). `max_output` is the batch's longest output.
  uint32_t RequestPrefill;
  if (D.Static) {
    RequestPrefill = D.PrefillTime;
  } else {
    uint32_t PrefillWeights =
        weightsRead(D, Computed, "request.prefill.weight_bytes");
    RequestPrefill =
        phase("request.prefill", "request.prefill_time", D.Machine, OneSequence,
              Computed,
              B.apply(FormulaId::PrefillFlops,
                      {D.ComputeParams, D.Layers, D.AttnDim, OneSequence,
                       Computed, D.TP},
                      "request.prefill.flops"),
              B.apply(FormulaId::PrefillAttentionFlops,
                      {D.Layers, D.AttnDim, OneSequence, Computed, D.TP},
                      "request.prefill.attention_flops"),
              B.apply(FormulaId::PrefillBytes,
                      {PrefillWeights, D.KV, OneSequence, Computed, D.TP},
                      "request.prefill.bytes"));
  }

  // Chunked prefill (Sarathi-Serve): chunks of C prompt tokens ride on
  // decode iterations, so the prefill takes ceil(S/C) iterations of
  // max(T_prefill*C/S, T_decode), and a decode iteration that carries a
  // chunk is the slow one: the p99 inter-token latency.
  uint32_t ITLTail = D.TPOT;
  if (D.Chunk && !D.Static) {
    RequestPrefill = B.apply(FormulaId::ChunkedPrefillTime,
                             {RequestPrefill, D.DecodeStep, Computed, *D.Chunk},
                             "request.chunked_prefill_time");
    B.apply(FormulaId::PrefillChunks, {Computed, *D.Chunk}, "prefill_chunks");
    uint32_t Hybrid = B.apply(FormulaId::HybridIterationTime,
                              {G.Named.lookup("request.prefill_time"),
                               D.DecodeStep, Computed, *D.Chunk},
                              "hybrid_iteration_time");
    ITLTail = B.op(Op::Max, {D.TPOT, Hybrid}, Second);
    B.name(ITLTail, "itl.tail_step");
  }

  // Prefill/decode disaggregation (DistServe): the prompt's KV cache moves
  // from the prefill to the decode replica over a fabric, each TP shard its
  // share in parallel.
  uint32_t FirstToken = RequestPrefill;
  if (const ir::Entity *Fabric = entity(W, "disaggregation.fabric")) {
    const Dimension BWDim = unit("B/s");
    uint32_t BW = required(*Fabric, "bandwidth", "the KV-cache transfer");
    uint32_t Latency = required(*Fabric, "latency", "the KV-cache transfer");
    if (Failed)
      return;
    uint32_t Shard = B.op(Op::Div, {D.KV, D.TP}, G.Nodes[D.KV].Dim);
    uint32_t Transfer =
        B.apply(FormulaId::KVTransferTime,
                {D.Prompt, Shard, B.op(Op::Mul, {BW, D.Machine.EtaComm}, BWDim),
                 Latency},
                "request.kv_transfer_time");
    FirstToken =
        B.apply(FormulaId::TimeToFirstToken,
                {none(Second, "0 s", "the queue's wait is added by wall 7"),
                 RequestPrefill, Transfer},
                "request.first_token_time");
  }

  B.name(D.TPOT, "tpot.p50");
  B.name(D.TPOT, "itl.p50");
  bool Disaggregated = entity(W, "disaggregation.fabric") != nullptr;
  // Every replica (tp x pp x ep devices) serves `batch` requests at once:
  // the queue has replicas x batch servers.
  uint32_t Replicas = B.op(
      Op::Floor, {B.op(Op::Div, {D.Sys.Devices, D.ReplicaDevices}, One)}, One);
  B.name(Replicas, "replicas");
  uint32_t Servers = B.op(Op::Mul, {Replicas, D.Batch}, One);
  B.name(Servers, "servers");

  // Prefill interference (Sarathi-Serve): with continuous batching on a
  // colocated replica, the other requests' prefills take time from its
  // decode iterations: all of it without chunked prefill, only what the
  // chunks add to the iterations with it. They arrive at
  // lambda / replicas x (B - 1) / B (a request's own prefill precedes its
  // decode; a lone slot sees none).
  uint32_t MeanTPOT = D.TPOT;
  std::optional<uint32_t> Arrival = field(W, "arrival");
  if (Arrival && !D.Static && !Disaggregated) {
    const Dimension RateDim = G.Nodes[*Arrival].Dim;
    uint32_t Others = B.op(
        Op::Div,
        {B.op(Op::Sub, {D.Batch, B.constant(1, "the request itself")}, One),
         D.Batch},
        One);
    uint32_t Rate =
        B.op(Op::Mul, {B.op(Op::Div, {*Arrival, Replicas}, RateDim), Others},
             RateDim);
    B.name(Rate, "interfering_prefill_rate");
    uint32_t Extra = RequestPrefill;
    if (D.Chunk) {
      // The chunks' time beyond the decode iterations they ride on.
      uint32_t Ridden = B.op(
          Op::Mul, {G.Named.lookup("prefill_chunks"), D.DecodeStep}, Second);
      Extra = B.op(Op::Sub, {RequestPrefill, Ridden}, Second);
      B.name(Extra, "chunks_extra_time");
    }
    uint32_t F = B.apply(FormulaId::PrefillInterference, {Rate, Extra},
                         "prefill_interference");
    MeanTPOT =
        B.apply(FormulaId::InterferedTokenTime, {D.TPOT, F}, "tpot.mean");
    if (!D.Chunk) {
      B.apply(FormulaId::PrefillStallProbability, {D.TPOT, Rate},
              "itl.stall_probability");
      ITLTail = B.apply(FormulaId::PrefillStallItl,
                        {D.TPOT, RequestPrefill, Rate,
                         B.constant(0.99, "the 99th percentile")},
                        "itl.stalled_p99");
    }
  }
  B.name(ITLTail, "tpot.p99");
  B.name(ITLTail, "itl.p99");

  uint32_t Service;
  if (D.Static) {
    uint32_t Longest =
        field(W, "max_output") ? *field(W, "max_output") : D.Output;
    Service = B.apply(FormulaId::EndToEndLatency, {FirstToken, D.TPOT, Longest},
                      "request.service_time");
    // The batch's tokens over the batch's time.
    uint32_t Tokens = B.op(Op::Mul, {D.Batch, D.Output}, Tok);
    uint32_t X = B.op(Op::Div, {Tokens, Service}, unit("tok/s"));
    B.name(X, "throughput");
  } else {
    Service = B.apply(FormulaId::EndToEndLatency,
                      {FirstToken, MeanTPOT, D.Output}, "request.service_time");
    B.apply(FormulaId::DecodeThroughput, {D.Batch, D.TPOT}, "throughput");
  }
  B.apply(FormulaId::ThroughputPerDevice,
          {G.Named.lookup("throughput"), D.ReplicaDevices},
          "throughput_per_device");

  // Wall 18 (part): nameplate power and energy per token at the throughput
  // of every replica.
  uint32_t Power =
      B.apply(FormulaId::SystemPower,
              {D.Sys.Devices, D.TDP, D.Sys.Nodes, D.Sys.Overhead}, "power");
  uint32_t SystemThroughput =
      B.op(Op::Mul, {Replicas, G.Named.lookup("throughput")}, unit("tok/s"));
  B.name(SystemThroughput, "system_throughput");
  B.apply(FormulaId::EnergyPerToken, {Power, SystemThroughput},
          "energy_per_token");
  if (!Arrival)
    return; // no load given: the percentiles stay unavailable

  // Wall 7: the M/G/c queue in front of the servers.
  uint32_t CV = orDefault(W, "service_cv", 1, One,
                          "default: exponential service times (M/M/c)",
                          /*Calibrated=*/true);
  B.apply(FormulaId::Utilisation, {*Arrival, Service, Servers}, "utilisation");
  uint32_t Stable = B.apply(FormulaId::QueueIsStable,
                            {*Arrival, Service, Servers}, "queue_stable");
  G.Nodes[Stable].IsBool = true;
  // ln C(c, a) once; every percentile reads it.
  uint32_t LogC = B.apply(FormulaId::LogErlangC, {*Arrival, Service, Servers},
                          "queue.log_erlang_c");
  const std::pair<double, const char *> Percentiles[] = {
      {0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}, {0.999, "p999"}};
  for (const auto &[P, Suffix] : Percentiles) {
    uint32_t Level = B.constant(P, "the percentile");
    B.apply(FormulaId::TtftQuantileGiven,
            {LogC, *Arrival, Service, Servers, CV, FirstToken, Level},
            std::string("ttft.") + Suffix);
    B.apply(FormulaId::LatencyQuantileGiven,
            {LogC, *Arrival, Service, Servers, CV, Level},
            std::string("latency.") + Suffix);
  }
  // Sizing: the fewest replicas of `batch` slots whose P99 meets a target.
  if (std::optional<uint32_t> Target = field(W, "latency_target")) {
    checkPositive(W, "latency_target");
    uint32_t Slots =
        B.apply(FormulaId::ServersForP99Latency,
                {*Arrival, Service, CV, *Target}, "servers_needed");
    uint32_t Needed =
        B.op(Op::Ceil, {B.op(Op::Div, {Slots, D.Batch}, One)}, One);
    B.name(Needed, "replicas_needed");
  }
}

void ScenarioLowering::fidelity(Decoder &D) {
  const ir::Entity &W = *D.W;
  // Wall 13: the accuracy cost of the precision is a sourced leaf.
  if (std::optional<uint32_t> Delta = field(W, "accuracy_delta"))
    B.apply(FormulaId::AccuracyDelta, {*Delta}, "accuracy_delta");
  // Weight-only quantization and pruning: the decode step against the same
  // step with dense weights at the math precision. A compute-bound step
  // gains only from structured sparsity on sparse tensor cores (the math
  // precision, so the peak, is unchanged).
  if ((!entity(W, "weight_precision") && !D.GemmFactor) || D.Machine.InjectBW)
    return;
  const Dimension One;
  // The weights the step reads (all of them, or an MoE step's experts),
  // scaled to the math precision.
  const Dimension Data = G.Nodes[D.Weights].Dim;
  uint32_t Read = G.Named.lookup("decode.weight_bytes");
  if (!G.Named.count("decode.weight_bytes"))
    Read = D.Weights;
  uint32_t Baseline =
      B.op(Op::Mul, {Read, B.op(Op::Div, {D.Bytes, D.WeightBytes}, One)}, Data);
  B.name(Baseline, "fidelity.baseline_weight_bytes");
  uint32_t BaselineBytes = B.apply(FormulaId::DecodeStepBytes,
                                   {Baseline, D.KV, D.Batch, D.Context, D.TP},
                                   "fidelity.baseline_decode_bytes");
  uint32_t ComputeBound = B.op(Op::Ge,
                               {G.Named.lookup("decode.compute_time"),
                                G.Named.lookup("decode.memory_time")},
                               One, true);
  // Structured sparsity raises the effective peak of a compute-bound step.
  uint32_t Peak =
      D.GemmFactor ? B.op(Op::Div, {D.Peak, *D.GemmFactor}, G.Nodes[D.Peak].Dim)
                   : D.Peak;
  B.apply(FormulaId::QuantizationSpeedup,
          {BaselineBytes, G.Named.lookup("decode.bytes"), D.Peak, Peak,
           ComputeBound},
          "fidelity.decode_speedup");
}

} // namespace mlsc
