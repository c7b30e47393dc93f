//===- ScorecardText.cpp - The scorecard of `mlsc eval` as text -----------===//
//
// Renders a ScenarioResult (runtime/Result.h): three levels, a row per
// figure, each with the note that says where it comes from. Reads only the
// result model.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Render.h"
#include "tools/mlsc/RenderTables.h"

#include "runtime/Format.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mlsc::driver {

namespace {

using PM = PhaseMetricId;
using M = MetricId;

/// A metric's value as text.
std::string show(const ScenarioResult &R, MetricId Id) {
  const Quantity &Q = R.get(Id);
  return formatQuantity(Q.SI, Q.Dim, Q.IsBool);
}
std::string show(const ScenarioResult &R, PhaseId P, PhaseMetricId Id) {
  const Quantity &Q = R.get(P, Id);
  return formatQuantity(Q.SI, Q.Dim, Q.IsBool);
}

void row(llvm::raw_ostream &OS, llvm::StringRef Label, llvm::StringRef Value,
         llvm::StringRef Note = "", size_t Width = 20) {
  OS << "  " << Label;
  OS.indent(Label.size() < Width ? Width - Label.size() : 1);
  OS << Value;
  if (!Note.empty())
    OS << "   " << Note;
  OS << "\n";
}

/// What bounds a phase: the roofline's side, by how much, and what the
/// weights' streaming, the tensor-parallel all-reduces and the sends
/// between pipeline stages add.
std::string boundText(const ScenarioResult &R, PhaseId P) {
  double C = R(P, PM::ComputeTime), Mem = R(P, PM::MemoryTime);
  bool IsCompute = C >= Mem;
  double Lo = std::min(C, Mem);
  std::string S;
  if (R.has(P, PM::StreamingTime) && R(P, PM::StreamingTime) > std::max(C, Mem))
    S = fmt::format("weight-streaming-bound: each layer waits {} for its "
                    "weights; the on-device roofline needs {}; ",
                    show(R, P, PM::StreamingLayerTime),
                    show(R, P, PM::RooflineTime));
  S += fmt::format(
      "{}-bound: intensity {} {} the ridge {}; {} time is {}x smaller",
      IsCompute ? "compute" : "memory", show(R, P, PM::Intensity),
      IsCompute ? "above" : "below", show(R, M::RidgePoint),
      IsCompute ? "memory" : "compute",
      formatNumber(Lo > 0 ? std::max(C, Mem) / Lo : 0));
  // A decoder's GEMMs and attention on opposite sides of the roofline:
  // neither hides the other (kernel_class_roofline_time).
  if (R.has(P, PM::RooflineTime) && !R.has(P, PM::StreamingTime) &&
      R(P, PM::RooflineTime) > std::max(C, Mem) * (1 + 1e-9))
    S += "; GEMMs and attention, each on its own roofline, run in "
         "sequence: " +
         show(R, P, PM::RooflineTime);
  if (P != PhaseId::Batch && R.has(P, PM::CommTime) && R(P, PM::CommTime) > 0) {
    double Sends =
        R.has(P, PM::PipelineSendTime) ? R(P, PM::PipelineSendTime) : 0;
    double AllToAll =
        R.has(P, PM::ExpertAllToAllTime) ? R(P, PM::ExpertAllToAllTime) : 0;
    double AllReduces = R(P, PM::CommTime) - Sends - AllToAll;
    // Parts below a picosecond are rounding, not all-reduces.
    if (AllReduces > 1e-12)
      S += "; TP all-reduces add " +
           formatQuantity(AllReduces, R.get(P, PM::CommTime).Dim);
    if (Sends > 0)
      S += "; sends between the pipeline's stages add " +
           show(R, P, PM::PipelineSendTime);
    if (AllToAll > 0)
      S += "; expert all-to-alls add " + show(R, P, PM::ExpertAllToAllTime);
  }
  return S;
}

/// The walls whose figures the rows of this file lay out by hand. A public
/// metric of any other wall is shown by levelRows under its level
/// (ir/Metrics.def), so a new wall needs no edit here.
bool laidOut(Wall W) {
  switch (W) {
  case Wall::Compute:
  case Wall::Memory:
  case Wall::SoftwareEfficiency:
  case Wall::Serving:
  case Wall::Batching:
  case Wall::WeightStreaming:
  case Wall::TailLatency:
  case Wall::Fidelity:
  case Wall::Communication:
  case Wall::Sustainability:
  case Wall::Capital:
    return true;
  default:
    return false;
  }
}

/// A row per computed public metric of level \p L that no hand-laid row
/// shows: its name, value, and its contract's description and wall.
void levelRows(const ScenarioResult &R, Level L, llvm::raw_ostream &OS) {
  std::vector<std::pair<std::string, MetricId>> Rows;
  size_t Width = 20;
  for (MetricId Id : R.Public) {
    const MetricInfo &I = metricInfo(Id);
    if (I.Shown != L || laidOut(I.W))
      continue;
    std::string Label = I.Name;
    std::replace(Label.begin(), Label.end(), '_', ' ');
    Width = std::max(Width, Label.size() + 2);
    Rows.emplace_back(std::move(Label), Id);
  }
  for (const auto &[Label, Id] : Rows) {
    const MetricInfo &I = metricInfo(Id);
    const WallInfo *W = wallInfo(I.W);
    row(OS, Label, show(R, Id),
        fmt::format("{} [wall {}: {}]", I.Doc, W->Number, W->Name), Width);
  }
}

/// Whether some computed public metric of level \p L has no hand-laid row.
bool hasLevelRows(const ScenarioResult &R, Level L) {
  for (MetricId Id : R.Public)
    if (metricInfo(Id).Shown == L && !laidOut(metricInfo(Id).W))
      return true;
  return false;
}

/// The Macro level's heading: what it holds, and what it does not compute.
std::string macroNote(const ScenarioResult &R, const char *Holds) {
  std::vector<std::string> Parts{Holds};
  for (const NotComputed &N : R.Missing)
    Parts.push_back(N.What + " are not computed: " + N.Why);
  return llvm::join(Parts, "; ");
}

/// The power row: at the load in inference, the measured share of
/// nameplate in training.
void printPowerAtLoad(const ScenarioResult &R, llvm::raw_ostream &OS) {
  if (R.Training && R[M::PowerNameplate] > 0) {
    row(OS, "power", show(R, M::Power),
        fmt::format("{}% of the nameplate {} (devices x TDP + node "
                    "overhead) while training [wall 18]",
                    formatNumber(100 * R[M::Power] / R[M::PowerNameplate]),
                    show(R, M::PowerNameplate)));
    return;
  }
  if (!R.has(M::BusyShare) || R[M::Power] == R[M::PowerNameplate]) {
    row(OS, "power", show(R, M::Power),
        "devices x TDP + node overhead: an upper bound [wall 18]");
    return;
  }
  row(OS, "power", show(R, M::Power),
      fmt::format("devices busy {}% of the time between their idle and busy "
                  "draw, + node overhead; nameplate {} [wall 18]",
                  formatNumber(100 * R[M::BusyShare]),
                  show(R, M::PowerNameplate)));
}

/// At a site: the facility's power, carbon, water and the electricity
/// bill, each where computed.
void printSiteRows(const ScenarioResult &R, llvm::raw_ostream &OS) {
  auto at = [&](MetricId Id, const char *Label, const std::string &Note) {
    if (R.has(Id))
      row(OS, Label, show(R, Id), Note);
  };
  if (R.has(M::FacilityPower) && R.has(M::Power) && R[M::Power] > 0)
    at(M::FacilityPower, "facility power",
       fmt::format("power x the site's PUE ({}) [wall 18]",
                   formatNumber(R[M::FacilityPower] / R[M::Power])));
  at(M::CarbonPerToken, "carbon per token",
     "energy per token x PUE x the grid's intensity (location-based) "
     "[wall 18]");
  at(M::CarbonPerSample, "carbon per sample",
     "energy per sample x PUE x the grid's intensity (location-based) "
     "[wall 18]");
  at(M::EmbodiedCarbonPerToken,
     R.has(M::CarbonPerToken) ? "  embodied" : "embodied carbon",
     "making the devices, amortised over the node's life, per token "
     "[wall 18]");
  at(M::WaterPerToken, "water per token",
     "energy per token x the site's WUE [wall 18]");
  at(M::TrainingCarbon, "training carbon",
     "training energy x the grid's intensity (location-based) [wall 18]");
  at(M::TrainingCarbonMarket, "  market-based",
     "training energy x the site's market-based intensity [wall 18]");
  at(M::TrainingEmbodiedCarbon,
     R.has(M::TrainingCarbon) ? "  embodied" : "embodied carbon",
     "making the devices, amortised over the node's life, for the run's "
     "time [wall 18]");
  at(M::TrainingWater, "training water",
     "IT energy x the site's WUE [wall 18]");
  at(M::TrainingEnergyCost, "electricity cost",
     "training energy x the site's electricity price [wall 17]");
  at(M::Capex, "capex",
     "nodes x node price / (1 - the network's share) [wall 17]");
  at(M::CostPerHour, "cost per hour",
     R.has(M::Capex) ? "hardware amortised and maintained, facility "
                       "amortised, electricity [wall 17]"
                     : "the nodes' rent [wall 17]");
  at(M::CostPerDeviceHour, "per device-hour", "[wall 17]");
  at(M::TrainingCost, "training cost",
     R.has(M::TimeToTrainWithFailures)
         ? "cost per hour x time to train with failures [wall 17]"
         : "cost per hour x time to train [wall 17]");
  at(M::CostPerMtok, "cost per Mtok",
     "cost per hour over the tokens served an hour, per million [wall 17]");
}

/// "batch time 26.98 ms ..." and the binding wall of a batch step.
void printBatchSteps(const ScenarioResult &R, llvm::raw_ostream &OS) {
  row(OS, R.Training ? "step time" : "batch time", show(R, M::BatchTime),
      boundText(R, PhaseId::Batch));
  if (R.has(PhaseId::Batch, PM::CommTime) &&
      R(PhaseId::Batch, PM::CommTime) > 0)
    row(OS, "gradient all-reduce", show(R, PhaseId::Batch, PM::CommTime),
        "ring over the devices, not overlapped [wall 14]");
  row(OS, "throughput", show(R, M::SampleThroughput),
      "per device; " + show(R, M::SystemSampleThroughput) + " in all");
  if (R.has(M::Mfu))
    row(OS, "MFU", formatNumber(100 * R[M::Mfu]) + "%",
        "model FLOPs (3x forward) / (step time x dense peak)");
  row(OS, "efficiency", formatNumber(R(PhaseId::Batch, PM::Efficiency)),
      "of dense peak [wall 3: software efficiency]");
  const BindingWall &D = *R.Binding;
  row(OS, "binding wall",
      fmt::format("{} (batch of {}), {}x ahead of {}", D.label(),
                  formatNumber(R[M::Batch]), formatNumber(D.Margin),
                  D.RunnerUp));
}

/// The levels of a CNN or encoder scenario: batches of samples per device.
void printSampleLevels(const ScenarioResult &R, llvm::raw_ostream &OS) {
  OS << "\nFeasibility  " << (R.Feasible ? "PASS" : "FAIL") << "\n";
  std::string What =
      !R.Training ? "of weights"
      : R.has(M::ActivationsPerDevice)
          ? fmt::format("(weights, gradients, optimizer {} + activations {})",
                        show(R, M::TrainingStatePerDevice),
                        show(R, M::ActivationsPerDevice))
          : "of weights, gradients and optimizer state";
  row(OS, "memory per device",
      fmt::format("{} {} {} {}", show(R, M::MemoryPerDevice), What,
                  R.Feasible ? "in" : "exceed", show(R, M::DeviceMemory)),
      "[wall 2: memory capacity]");
  levelRows(R, Level::Feasibility, OS);
  OS << "\n";
  if (!R.Feasible) {
    OS << "Performance  not evaluated: the scenario does not fit "
          "(feasibility failed)\n";
    return;
  }
  OS << "Performance  " << R.Performance << "\n";
  printBatchSteps(R, OS);
  levelRows(R, Level::Performance, OS);
  OS << "\nMacro        ("
     << macroNote(R, R.Training ? "power while training" : "power at the load")
     << ")\n";
  printPowerAtLoad(R, OS);
  row(OS, "energy per sample", show(R, M::EnergyPerSample),
      "at " + show(R, M::SystemSampleThroughput) + " over all devices");
  printSiteRows(R, OS);
  levelRows(R, Level::Macro, OS);
}

/// The Feasibility level of a decoder: what fills a device's memory.
void printDecoderFeasibility(const ScenarioResult &R, llvm::raw_ostream &OS) {
  OS << "\nFeasibility  " << (R.Feasible ? "PASS" : "FAIL") << "\n";
  double Mem = R[M::MemoryPerDevice], Cap = R[M::DeviceMemory];
  std::string MemText =
      R[M::MemoryFits] != 0
          ? fmt::format("{} of {} ({}%)", show(R, M::MemoryPerDevice),
                        show(R, M::DeviceMemory), formatNumber(100 * Mem / Cap))
          : fmt::format(
                "{} exceeds {} by {}", show(R, M::MemoryPerDevice),
                show(R, M::DeviceMemory),
                formatQuantity(Mem - Cap, Dimension::base(BaseDim::Data)));
  row(OS, "memory per device", MemText, "[wall 2: memory capacity]");
  std::string Weights = R.has(M::ResidentWeightsPerDevice)
                            ? show(R, M::ResidentWeightsPerDevice) +
                                  " resident weights (2 layers)"
                            : show(R, M::WeightsPerDevice) + " weights";
  if (R.has(M::DraftWeightsPerDevice))
    Weights += " + " + show(R, M::DraftWeightsPerDevice) + " draft weights";
  row(OS, "  made of",
      fmt::format("{} + {} KV cache + {} activations + {} runtime reserve",
                  Weights, show(R, M::KVCachePerDevice),
                  show(R, M::ActivationsPerDevice),
                  show(R, M::RuntimeReserve)));
  // A cache with no room (the weights and the reserve take more than the
  // device has) is said so, not printed as a negative size.
  std::string Cache;
  if (R.has(M::KVCapacityTokens))
    Cache = R[M::KVCapacityTokens] > 0
                ? " of " + show(R, M::KVCapacityTokens)
                : " with no room: the weights, activations and reserve "
                  "take the whole device";
  row(OS, "concurrent seqs",
      fmt::format("up to {} per replica in a paged KV cache{}{}; batch {}{}",
                  formatNumber(R[M::MaxConcurrentSequences]), Cache,
                  R.has(M::KVReservedToCompletion)
                      ? ", each slot reserved to its last token"
                      : "",
                  formatNumber(R[M::Batch]),
                  R[M::BatchFits] != 0 ? "" : " does not fit"),
      "[wall 5: batching]");
  // What the engine checks against the context after the prompt: the
  // output or its cap, after any thinking tokens.
  std::string Decoded = R.has(M::OutputCap) ? "max_output" : "output";
  if (R.has(M::ThinkingTokens))
    Decoded = "thinking + " + Decoded;
  if (R.has(M::ContextFits) && R[M::ContextFits] == 0)
    row(OS, "context",
        fmt::format("prompt + {} {} exceeds the model's context {}", Decoded,
                    show(R, M::LongestRequest), show(R, M::ModelContext)),
        "FAIL: an engine refuses the request");
  else if (R.has(M::ContextRefused) && R[M::ContextRefused] >= 1e-4) {
    // The mean request fits; the spread of the lengths reaches past the
    // context, for one request in 10,000 or more (rarer shares are in
    // JSON only). The percentiles above 1 - share are of requests an
    // engine would refuse.
    double Share = R[M::ContextRefused];
    row(OS, "context",
        fmt::format(
            "{}% of requests refused: with the lengths' spread, "
            "prompt + {} exceeds the model's context {}{}",
            formatNumber(100 * Share), Decoded, show(R, M::ModelContext),
            Share > 0.001 ? fmt::format("; percentiles above p{} are of "
                                        "requests it refuses",
                                        formatNumber(100 * (1 - Share)))
                          : ""),
        "[wall 5: batching]");
  }
  double EP = R.has(M::ReplicaDevices)
                  ? R[M::ReplicaDevices] / (R[M::TP] * R[M::PP])
                  : 1;
  row(OS, "parallelism",
      fmt::format("tp {} x pp {}{} on {} device{}", formatNumber(R[M::TP]),
                  formatNumber(R[M::PP]),
                  EP != 1 ? " x ep " + formatNumber(EP) : "",
                  formatNumber(R[M::Devices]), R[M::Devices] == 1 ? "" : "s"),
      R[M::ParallelismFits] != 0 ? "" : "FAIL: more shards than devices");
  if (R.has(M::PipelineMicrobatches) && R[M::PP] > 1) {
    double Micro = R[M::PipelineMicrobatches];
    row(OS, "pipeline",
        fmt::format("{} micro-batch{} of {} sequence{} in flight; a token "
                    "crosses the {} stages in turn, so the decode step is "
                    "its latency and the replica emits batch tokens per step",
                    formatNumber(Micro), Micro == 1 ? "" : "es",
                    formatNumber(R[M::Batch] / Micro),
                    R[M::Batch] == Micro ? "" : "s", formatNumber(R[M::PP])),
        "[wall 14: communication]");
  }
  levelRows(R, Level::Feasibility, OS);
  OS << "\n";
}

/// Rows for the serving options a workload turned on (walls 3-6, 13).
void printServingOptions(const ScenarioResult &R, llvm::raw_ostream &OS) {
  row(OS, "efficiency",
      fmt::format("prefill {}, decode {} of dense peak",
                  formatNumber(R(PhaseId::Prefill, PM::Efficiency)),
                  formatNumber(R(PhaseId::Decode, PM::Efficiency))),
      "GEMM and attention kernels blended [wall 3]");
  if (R.has(PhaseId::Decode, PM::WeightBytes) && R.has(M::WeightsPerDevice))
    row(OS, "MoE weights read",
        fmt::format("{} of {} per decode step (the experts a batch of {} "
                    "touches)",
                    show(R, PhaseId::Decode, PM::WeightBytes),
                    show(R, M::WeightsPerDevice), formatNumber(R[M::Batch])),
        "[wall 2]");
  if (R.has(PhaseId::Decode, PM::StreamingTime))
    row(OS, "weight streaming",
        fmt::format("{} per decode step, {} per layer",
                    show(R, PhaseId::Decode, PM::StreamingTime),
                    show(R, PhaseId::Decode, PM::StreamingLayerTime)),
        "[wall 6: weight streaming]");
  if (R.has(M::SpeculativeTimePerToken))
    row(OS, "TPOT", show(R, M::SpeculativeTimePerToken),
        fmt::format("speculative decoding: {} tokens per target step, "
                    "draft step {}",
                    formatNumber(R[M::SpeculativeTokensPerStep]),
                    show(R, M::DraftDecodeStepTime)));
  if (R.has(M::HybridIterationTime))
    row(OS, "chunked prefill",
        fmt::format("{} chunks over {}; an iteration carrying a chunk takes "
                    "{} (ITL p99)",
                    formatNumber(R[M::PrefillChunks]),
                    show(R, M::RequestChunkedPrefillTime),
                    show(R, M::HybridIterationTime)),
        "[wall 4: Sarathi-Serve]");
  if (R.has(M::RequestKVTransferTime))
    row(OS, "KV transfer", show(R, M::RequestKVTransferTime),
        "prefill to decode replica, added to TTFT [wall 4: disaggregation]");
  if (R.has(M::FidelityDecodeSpeedup))
    row(OS,
        R.has(M::PruningBytesPerParam) ? "pruned weights" : "quantized weights",
        fmt::format("{} per device; decode {}x faster than with dense "
                    "weights at the math precision{}",
                    show(R, M::WeightsPerDevice),
                    formatNumber(R[M::FidelityDecodeSpeedup]),
                    R.has(M::PruningGemmTimeFactor) &&
                            R[M::PruningGemmTimeFactor] < 1
                        ? fmt::format("; GEMMs take {}x the dense time",
                                      formatNumber(R[M::PruningGemmTimeFactor]))
                        : ""),
        "[wall 13: fidelity]");
  if (R.has(M::AccuracyDelta))
    row(OS, "accuracy delta", formatNumber(R[M::AccuracyDelta]),
        "a sourced measurement [wall 13: fidelity]");
}

/// The queue in front of the replicas' slots (wall 7).
/// Static batching: a request's service is published without a prefill of
/// its own (the batch's prompts prefill together).
bool staticBatching(const ScenarioResult &R) {
  return R.has(M::RequestServiceTime) && !R.has(M::RequestPrefillTime);
}

void printQueue(const ScenarioResult &R, llvm::raw_ostream &OS) {
  if (!R.has(M::Utilisation)) {
    row(OS, "queueing", "not modelled: the workload has no `arrival` rate",
        "[wall 7: tail latency]");
    return;
  }
  bool Unstable = R.has(M::QueueStable) && R[M::QueueStable] == 0;
  std::string Slots = slotsText(R[M::Servers], R[M::Replicas]);
  std::string Line, Note = "[wall 7: tail latency]";
  if (!Unstable) {
    Line = fmt::format("utilisation {}% of {}",
                       formatNumber(100 * R[M::Utilisation]), Slots);
    // The share that finds them all taken, once it is worth a word; with
    // prefills stalling the running requests the slots fill in bursts.
    if (R.has(M::SlotWaitProbability) && R[M::SlotWaitProbability] >= 1e-3) {
      // A static batch admits no one until it ends (static batching
      // publishes no request prefill of its own).
      Line += fmt::format(
          "; {}% of requests {}", formatNumber(100 * R[M::SlotWaitProbability]),
          R.has(M::RequestPrefillTime) ? "find them all taken"
                                       : "arrive while a batch runs");
      if (R.has(M::PrefillInterference) && R[M::PrefillInterference] > 0 &&
          !R.has(M::PrefillReplicas))
        Note = fmt::format("in bursts: prefills stall the running requests "
                           "{}% of their time [wall 7: tail latency]",
                           formatNumber(100 * R[M::PrefillInterference]));
    }
  } else {
    // The slots' utilisation names them; the other reasons add them.
    std::string Why = queueSaturation(R);
    bool BySlots = llvm::StringRef(Why).startswith("utilisation");
    Line = fmt::format("UNSTABLE: {} (>= 100%); waits grow without bound{}",
                       Why, BySlots ? "" : "; " + Slots);
  }
  row(OS, "queue", Line, Note);
  if (R.has(M::BatcherRequests)) {
    // A batch goes whole to one replica; more requests than its slots
    // leave some waiting for a slot inside their own batch, which the
    // closed forms do not count (the simulator plays it).
    // Each of a request's reasoning samples takes a slot of its own.
    double K = R[M::BatcherRequests],
           Sequences = R.has(M::BatcherSequences) ? R[M::BatcherSequences] : K,
           PerReplica = R[M::Servers] / R[M::Replicas];
    row(OS, "batcher",
        fmt::format("{} request{} a batch on average{}, each batch to one "
                    "replica",
                    formatNumber(K), K == 1 ? "" : "s",
                    Sequences != K
                        ? fmt::format(" ({} sequences with their samples)",
                                      formatNumber(Sequences))
                        : std::string()),
        Sequences > PerReplica
            ? fmt::format("more than a replica's {} slots: the sequences "
                          "beyond them wait for a slot, which the closed "
                          "forms do not count (a `simulate` block does; "
                          "`batcher.max_requests` bounds a batch) [wall 7]",
                          formatNumber(PerReplica))
        : R.has(M::PrefillReplicas)
            ? std::string("with a prefill pool the closed forms add the "
                          "batcher's wait only, not the batch's prompts "
                          "prefilled and queued together (a `simulate` "
                          "block plays them) [wall 7]")
            : std::string("[wall 7: tail latency]"));
  }
  if (R.has(M::PrefillReplicas))
    row(OS, "prefill pool",
        fmt::format("{} replica{}, utilisation {}%; the {} above decode",
                    formatNumber(R[M::PrefillReplicas]),
                    R[M::PrefillReplicas] == 1 ? "" : "s",
                    formatNumber(100 * R[M::PrefillUtilisation]),
                    formatNumber(R[M::Replicas]) +
                        (R[M::Replicas] == 1 ? " replica" : " replicas")),
        "prefill/decode disaggregation: TTFT waits in the prefill pool's "
        "M/G/c queue [wall 7]");
  // One slot a replica runs one sequence at any load.
  // Static batching publishes no request prefill of its own (below).
  if (R.has(M::RunningBatch) && R[M::Servers] > R[M::Replicas]) {
    // A pipelined replica's engines batch apart under static batching.
    const double Engines =
        R.has(M::PP) && R[M::PP] > 1
            ? std::max(1.0, std::min(R[M::PP], R[M::Servers] / R[M::Replicas]))
            : 1;
    row(OS, "running batch",
        fmt::format("{} of {} slots", formatNumber(R[M::RunningBatch]),
                    formatNumber(R[M::Servers] / R[M::Replicas])),
        R.has(M::RequestPrefillTime)
            ? "decode steps run the load: 1 + arrival per replica x time in "
              "a slot (Little's law) [wall 5: batching]"
        : Engines > 1
            ? fmt::format("static batches hold what waits when an engine "
                          "empties, on each of a replica's {} pipeline "
                          "engines: x + e^-x, x = arrival per engine x a "
                          "batch's time to its longest output [wall 5: "
                          "batching]",
                          formatNumber(Engines))
            : "static batches hold what waits when a replica empties: x + "
              "e^-x, x = arrival per replica x a batch's time to its "
              "longest output [wall 5: batching]");
  }
  if (R.has(M::PrefillInterference) && R[M::PrefillInterference] > 0)
    row(OS, "token gap",
        R[M::PrefillInterference] < 1
            ? fmt::format("{} mean, ITL p99 {}; TPOT per request p50 {}, "
                          "p99 {}",
                          show(R, M::TpotMean), show(R, M::ItlP99),
                          show(R, M::TpotP50), show(R, M::TpotP99))
            : std::string("unbounded: prefills alone fill the replica"),
        fmt::format(
            "other requests' prefills stall a running sequence {}% of "
            "its time{} [wall 4]",
            formatNumber(100 * R[M::PrefillInterference]),
            R.has(M::ItlStallProbability)
                ? fmt::format(", stalling {}% of token gaps",
                              formatNumber(100 * R[M::ItlStallProbability]))
                : ""));
  if (!Unstable) {
    row(OS, "TTFT p50 / p99", show(R, M::TtftP50) + " / " + show(R, M::TtftP99),
        "p99.9 " + show(R, M::TtftP999));
    row(OS, "latency p50 / p99",
        show(R, M::LatencyP50) + " / " + show(R, M::LatencyP99),
        "p99.9 " + show(R, M::LatencyP999));
  }
  if (R.has(M::ReplicasNeeded)) {
    // The count is searched at this configuration's own service; another
    // count would run another batch at another time per token (with more
    // than one slot a replica). Past the configuration's limit that service
    // is the overloaded one (full slots, stalled tokens): no count is read
    // off it. Otherwise the count is exact when it is the configuration's
    // own, and the note says which way it leans when it is not.
    double Needed = R[M::ReplicasNeeded];
    // One slot a replica: a request's service does not hang on the load,
    // and the count is exact at any count given. Static batching solves
    // each count's own batch: exact too.
    bool Static = staticBatching(R);
    bool LoadDependent = R[M::Batch] > 1 && !Static;
    // The replicas the count compares with (none where it is exact, or
    // where a disaggregated platform's pools are sized apart).
    double Given =
        LoadDependent && R.has(M::Replicas) && !R.has(M::PrefillReplicas)
            ? R[M::Replicas]
            : NAN;
    std::string Count =
        std::isfinite(Needed)
            ? fmt::format("{} of batch {}", formatNumber(Needed),
                          formatNumber(R[M::Batch]))
            : std::string("none");
    std::string Solve = "`mlsc solve` over the replica count (a cluster's "
                        "`nodes`) sizes it exactly";
    std::string Value, Note = "[wall 7: tail latency]";
    if (Unstable && LoadDependent) {
      Value = "not sized: the replicas given are overloaded (the queue "
              "above), and their time per token is not what more replicas "
              "would see";
      Note = Count + " at their own service; " + Solve + " " + Note;
    } else if (std::isnan(Needed)) {
      Value = "not computed: an input to the search is not a number";
    } else if (!std::isfinite(Needed) && Static) {
      Value = "none: a P99 request's own batch (its prefill and its decode "
              "to the batch's longest output) on an idle replica, with its "
              "time outside the engine (overhead.request), any batcher's "
              "wait (batcher.window) and any KV transfer to a decode pool, "
              "exceeds the target (or the arrivals would need more than "
              "2^53 replicas)";
    } else if (!std::isfinite(Needed)) {
      Value = "none: at this configuration's time per token a P99 request's "
              "own service, with its time outside the engine "
              "(overhead.request) and any batcher's wait and batch "
              "(batcher.window), exceeds the target";
    } else {
      Value = Count + " for latency p99 <= the target";
      if (Needed < Given) {
        Value +=
            fmt::format(" at the service of the {} given", formatNumber(Given));
        Note = "fewer replicas each run a larger batch, more slowly, so "
               "this may be too few; " +
               Solve + " " + Note;
      } else if (Needed > Given)
        Note = fmt::format("at the service of the {} given: more replicas "
                           "each serve faster, so this may be too many; ",
                           formatNumber(Given)) +
               Solve + " " + Note;
    }
    row(OS, "replicas needed", Value, Note);
  }
}

/// The Performance level of a decoder.
void printDecoderPerformance(const ScenarioResult &R, llvm::raw_ostream &OS) {
  OS << "Performance  " << R.Performance << "\n";
  // Continuous batching prefills each request alone: the batch's prompts
  // at once is a bound, and a request's own prefill is what it waits for.
  std::string OwnPrefill;
  if (R.has(M::RequestPrefillTime) && R[M::Batch] > 1)
    OwnPrefill =
        fmt::format("; the batch's {} prompts at once, a request's own {}",
                    formatNumber(R[M::Batch]),
                    show(R, R.has(M::RequestChunkedPrefillTime)
                                ? M::RequestChunkedPrefillTime
                                : M::RequestPrefillTime));
  row(OS, "prefill time", show(R, M::PrefillTime),
      boundText(R, PhaseId::Prefill) + OwnPrefill);
  row(OS, "decode step time", show(R, M::DecodeStepTime),
      boundText(R, PhaseId::Decode));
  printServingOptions(R, OS);
  bool Static = staticBatching(R);
  std::string PerDevice =
      "; " + show(R, M::ThroughputPerDevice) + " per device";
  row(OS, "throughput", show(R, M::Throughput),
      (Static ? "per replica, static batching: the batch's tokens over its "
                "prefill and longest decode"
       : R.has(M::RunningBatch) ? "per replica, its slots full (capacity)"
                                : "per replica") +
          PerDevice);
  if (R.has(M::MaxBatchUnderTpot))
    row(OS, "best batch",
        fmt::format("{} (the largest whose decode step meets the TPOT "
                    "limit; communication not counted)",
                    formatNumber(R[M::MaxBatchUnderTpot])),
        "[wall 5: batching]");
  printQueue(R, OS);
  const BindingWall &D = *R.Binding;
  std::string Crossover;
  if (D.Number == 2 && R.has(M::DecodeCrossoverBatch)) {
    double BStar = R[M::DecodeCrossoverBatch];
    Crossover =
        std::isfinite(BStar)
            ? fmt::format("; compute would bind at {}x the batch (batch {})",
                          formatNumber(BStar / R[M::Batch]),
                          formatNumber(BStar))
            : "; compute never binds: KV reads grow faster than FLOPs";
  }
  // A one-token output is all prefill: no decode step runs.
  const char *Phase = D.Phase == PhaseId::Decode ? "decode step"
                      : D.Phase == PhaseId::RequestPrefill
                          ? "a request's prefill; the output is one token"
                          : "the batch's prefill; the output is one token";
  if (D.Phase != PhaseId::Decode)
    Crossover.clear();
  row(OS, "binding wall",
      fmt::format("{} ({}), {}x ahead of {}{}", D.label(), Phase,
                  formatNumber(D.Margin), D.RunnerUp, Crossover));
  levelRows(R, Level::Performance, OS);
}

/// The levels of a decoder's training: memory by part, the step by part,
/// utilisation and the run.
void printTrainingLevels(const ScenarioResult &R, llvm::raw_ostream &OS) {
  OS << "\nFeasibility  " << (R.Feasible ? "PASS" : "FAIL") << "\n";
  double Mem = R[M::MemoryPerDevice], Cap = R[M::DeviceMemory];
  row(OS, "memory per device",
      R.Feasible
          ? fmt::format("{} of {} ({}%)", show(R, M::MemoryPerDevice),
                        show(R, M::DeviceMemory), formatNumber(100 * Mem / Cap))
          : fmt::format(
                "{} exceeds {} by {}", show(R, M::MemoryPerDevice),
                show(R, M::DeviceMemory),
                formatQuantity(Mem - Cap, Dimension::base(BaseDim::Data))),
      "[wall 2: memory capacity]");
  row(OS, "  made of",
      fmt::format("{} weights + {} gradients + {} optimizer state + {} "
                  "activations{}{}",
                  show(R, M::WeightsPerDevice), show(R, M::GradientsPerDevice),
                  show(R, M::OptimizerPerDevice),
                  show(R, M::ActivationsPerDevice),
                  R.has(M::PerSampleGradientsPerDevice) &&
                          R[M::PerSampleGradientsPerDevice] > 0
                      ? " + " + show(R, M::PerSampleGradientsPerDevice) +
                            " per-sample gradients (DP-SGD)"
                      : std::string(),
                  R.has(M::RuntimeReserve)
                      ? " + " + show(R, M::RuntimeReserve) + " buffers"
                      : std::string(" (buffers not counted: "
                                    "`memory_reserve`)")));
  std::string Layout = fmt::format(
      "tp {} x pp {} x cp {} x dp {} = {} of {} device{}",
      formatNumber(R[M::TP]), formatNumber(R[M::PP]), formatNumber(R[M::CP]),
      formatNumber(R[M::DP]), formatNumber(R[M::TrainingDevices]),
      formatNumber(R[M::Devices]), R[M::Devices] == 1 ? "" : "s");
  if (R[M::VP] > 1)
    Layout += ", vp " + formatNumber(R[M::VP]);
  row(OS, "parallelism", Layout, "[wall 14: communication]");
  row(OS, "batch",
      fmt::format(
          "{} sequences a step, {} micro-batch{} of {} per pipeline",
          formatNumber(R[M::GlobalBatch]), formatNumber(R[M::Microbatches]),
          R[M::Microbatches] == 1 ? "" : "es", formatNumber(R[M::Batch])));
  levelRows(R, Level::Feasibility, OS);
  OS << "\n";
  if (!R.Feasible) {
    OS << "Performance  not evaluated: the scenario does not fit "
          "(feasibility failed)";
    // The run's compute (wall 11) does not depend on the layout.
    if (hasLevelRows(R, Level::Performance)) {
      OS << "; the run's compute still is:\n";
      levelRows(R, Level::Performance, OS);
    } else {
      OS << "\n";
    }
    OS << "\nMacro        not evaluated: the scenario does not fit\n";
    return;
  }
  OS << "Performance  " << R.Performance << "\n";
  PhaseId P = PhaseId::Train;
  row(OS, "step time", show(R, M::StepTime),
      fmt::format("{} micro-batch{} of {} each, then the gradient sync and "
                  "the optimizer",
                  formatNumber(R[M::Microbatches]),
                  R[M::Microbatches] == 1 ? "" : "es",
                  show(R, M::MicrobatchTime)));
  row(OS, "  compute", show(R, P, PM::ComputeTime),
      "GEMMs and attention on the slowest stage [walls 1, 3]");
  row(OS, "  memory", show(R, P, PM::MemoryTime),
      "the non-GEMM operations' traffic and the optimizer step (" +
          show(R, M::OptimizerTime) + ") [wall 2]");
  row(OS, "  communication", show(R, P, PM::CommTime),
      fmt::format("exposed: tp {}, cp {}, pp {}, dp {}{} [wall 14]",
                  show(R, M::TpCommTime), show(R, M::CpCommTime),
                  show(R, M::PpCommTime), show(R, M::DpCommTime),
                  R.has(M::EpCommTime) && R[M::EpCommTime] > 0
                      ? ", ep " + show(R, M::EpCommTime)
                      : ""));
  row(OS, "  pipeline bubble", show(R, P, PM::BubbleTime),
      fmt::format("(pp - 1) / (vp x micro-batches) = {}% of the ideal step",
                  formatNumber(100 * R[M::BubbleFraction])));
  if (R.has(M::DpSgdSlowdownFactor) && R[M::DpSgdSlowdownFactor] != 1) {
    double S = R[M::DpSgdSlowdownFactor];
    row(OS, "  DP-SGD",
        formatQuantity(R[M::StepTime] * (1 - 1 / S),
                       Dimension::base(BaseDim::Time)),
        fmt::format("the step x {}: per-example clipping and noise "
                    "(the implementation's measured slowdown) [wall 20]",
                    formatNumber(S)));
  }
  row(OS, "MFU", formatNumber(100 * R[M::Mfu]) + "%",
      fmt::format("model FLOPs at {} per device; {}",
                  show(R, M::ModelFlopsPerDevice),
                  R[M::Hfu] > R[M::Mfu]
                      ? "HFU " + formatNumber(100 * R[M::Hfu]) +
                            "% with the recomputed FLOPs"
                      : std::string("no recomputation: HFU is the MFU")));
  row(OS, "throughput", show(R, M::TrainingThroughput), "tokens per second");
  if (R.has(M::TimeToTrain))
    row(OS, "time to train", show(R, M::TimeToTrain),
        fmt::format("{} device-hours; failures and restarts not counted",
                    formatNumber(R[M::DeviceHours] / 3600)));
  // The step's parts, largest first: the bubble and the exposed
  // communication are both wall 14, so the part is named with the wall.
  struct Part {
    const char *Name;
    PM Id;
  };
  std::vector<Part> Parts{{"compute", PM::ComputeTime},
                          {"memory traffic", PM::MemoryTime},
                          {"exposed communication", PM::CommTime},
                          {"pipeline bubble", PM::BubbleTime}};
  std::stable_sort(
      Parts.begin(), Parts.end(),
      [&](const Part &A, const Part &B) { return R(P, A.Id) > R(P, B.Id); });
  const BindingWall &D = *R.Binding;
  row(OS, "binding wall",
      fmt::format("{}: the {} ({}), {}x ahead of the {} ({})", D.label(),
                  Parts[0].Name, show(R, P, Parts[0].Id),
                  formatNumber(D.Margin), Parts[1].Name,
                  show(R, P, Parts[1].Id)));
  levelRows(R, Level::Performance, OS);
  OS << "\nMacro        (" << macroNote(R, "power while training") << ")\n";
  printPowerAtLoad(R, OS);
  if (R.has(M::TrainingEnergy))
    row(OS, "training energy", show(R, M::TrainingEnergy),
        "power x time to train (x the site's PUE)");
  printSiteRows(R, OS);
  levelRows(R, Level::Macro, OS);
}

void printConditions(const ScenarioResult &R, llvm::raw_ostream &OS) {
  if (R.Conditions.empty())
    return;
  OS << "\nConditions\n";
  for (const ConditionResult &C : R.Conditions) {
    std::string Detail = C.Infeasible ? "not evaluated: infeasible" : C.Detail;
    OS << "  " << (C.IsAssert ? "assert " : "sla    ") << C.Text;
    OS.indent(C.Text.size() < 30 ? 30 - C.Text.size() : 1);
    OS << verdictWord(C.V);
    if (!Detail.empty())
      OS << "  (" << Detail << ")";
    OS << "  " << C.Location << "\n";
  }
}

} // namespace

/// A `simulate` block: the simulator's percentiles next to the closed
/// forms' (docs/simulator.md).
void printSimulated(const ScenarioResult &R, llvm::raw_ostream &OS) {
  if (!R.HasSimulate)
    return;
  if (!R.Simulated) {
    OS << "\nSimulated    not run: " << R.NotSimulated << "\n";
    return;
  }
  const sim::Config &C = R.Simulated->Cfg;
  const sim::Result &S = R.Simulated->R;
  const Dimension Sec = Dimension::base(BaseDim::Time);
  OS << fmt::format(
      "\nSimulated    {} requests, seed {}, {}, {} replica{} of {} "
      "slots, {} tokens an iteration{} [docs/simulator.md]\n",
      formatNumber(static_cast<double>(C.Requests)), C.Seed,
      sim::routingName(C.Route, false), C.Replicas, C.Replicas == 1 ? "" : "s",
      C.MaxSequences, formatNumber(C.MaxBatchedTokens),
      C.PromptChunk > 0 ? fmt::format(", at most {} of them prompt tokens",
                                      formatNumber(C.PromptChunk))
                        : std::string());
  if (const std::optional<sim::LinearStep> &L = R.Simulated->Linear) {
    OS << fmt::format(
        "  steps: the scenario's linear model, {} + {} a "
        "prompt token + {} a decode token + {} a KV token "
        "read\n",
        formatQuantity(L->Fixed, Sec), formatQuantity(L->Prefill, Sec),
        formatQuantity(L->Decode, Sec), formatQuantity(L->KV, Sec));
  }
  const sim::Arrivals &A = C.Arrive;
  if (C.Replay)
    OS << fmt::format("  trace: {}, {} requests over {}\n", C.ReplayName,
                      C.Requests,
                      formatQuantity((*C.Replay)[C.Requests - 1].Arrival -
                                         C.Replay->front().Arrival,
                                     Sec));
  else
    switch (A.K) {
    case sim::Arrivals::Kind::Poisson:
      break;
    case sim::Arrivals::Kind::Gamma:
      OS << fmt::format("  arrivals: Gamma gaps of CV {}\n",
                        formatNumber(A.CV));
      break;
    case sim::Arrivals::Kind::OnOff:
      OS << fmt::format("  arrivals: bursts of {} between silences of {} "
                        "(mean)\n",
                        formatQuantity(A.On, Sec), formatQuantity(A.Off, Sec));
      break;
    case sim::Arrivals::Kind::Diurnal:
      OS << fmt::format("  arrivals: the rate x (1 + {} sin(2 pi t / {}))\n",
                        formatNumber(A.Amplitude),
                        formatQuantity(A.Period, Sec));
      break;
    case sim::Arrivals::Kind::Closed:
      OS << fmt::format("  arrivals: {} clients in a closed loop, thinking {} "
                        "(mean)\n",
                        A.Users, formatQuantity(A.Think, Sec));
      break;
    }
  if (C.Batch.Window > 0)
    OS << fmt::format(
        "  batcher: a batch to one replica when its first has waited {}{}\n",
        formatQuantity(C.Batch.Window, Sec),
        C.Batch.MaxRequests > 0
            ? fmt::format(", or at {} request{}", C.Batch.MaxRequests,
                          C.Batch.MaxRequests == 1 ? "" : "s")
            : std::string());
  for (const sim::KVTier &T : C.Tiers)
    OS << fmt::format(
        "  KV tier {}: {} tokens{}, {} at {}, {} a load\n", T.Name,
        formatNumber(T.CapacityTokens), T.Shared ? " shared" : " a replica",
        formatQuantity(T.CapacityTokens * C.TierBytesPerToken,
                       Dimension::base(BaseDim::Data)),
        formatQuantity(T.Bandwidth, Dimension::base(BaseDim::Data) /
                                        Dimension::base(BaseDim::Time)),
        formatQuantity(T.Latency, Sec));
  for (auto [A, What] :
       {std::pair{&C.Scale, ""}, std::pair{&C.PrefillScale, " prefill"}})
    if (A->Enabled)
      OS << fmt::format(
          "  autoscaled: {} to {}{} replicas on the {} (up above {}, down "
          "below {}), deciding every {}, {} to start, {} between actions\n",
          A->Min, A->Max, What,
          A->On == sim::Autoscaling::Signal::Queue ? "queue a replica"
                                                   : "slots' utilisation",
          formatNumber(A->Up), formatNumber(A->Down),
          formatQuantity(A->Interval, Sec), formatQuantity(A->StartUp, Sec),
          formatQuantity(A->Cooldown, Sec));
  if (C.Admit.Rate > 0)
    OS << fmt::format(
        "  admission: a bucket of {} requests at {}\n",
        formatNumber(C.Admit.Burst),
        formatQuantity(C.Admit.Rate, Dimension::base(BaseDim::Request) /
                                         Dimension::base(BaseDim::Time)));
  if (C.Admit.ShedPriority >= 0)
    OS << fmt::format("  admission: classes of priority {} or more are shed "
                      "while more than {} requests wait a replica\n",
                      C.Admit.ShedPriority, formatNumber(C.Admit.ShedQueue));
  if (C.Prefix.Groups)
    OS << fmt::format("  prefixes: {} shared of {} tokens, on {}% of "
                      "requests; prefix caching {}\n",
                      C.Prefix.Groups, C.Prefix.Tokens,
                      formatNumber(100 * C.Prefix.Share),
                      C.PrefixCaching ? "on" : "off");
  if (C.PipelineStages > 1) {
    const unsigned Base = C.MaxSequences / C.PipelineStages;
    OS << fmt::format(
        "  pipeline: {} stages a replica, run as {} engines (vLLM V0's "
        "virtual engines) of {} slots and 1/{} of its KV cache each; the "
        "running batch is an engine's micro-batch\n",
        C.PipelineStages, C.PipelineStages,
        C.MaxSequences % C.PipelineStages
            ? fmt::format("{} or {}", Base + 1, Base)
            : fmt::format("{}", Base),
        C.PipelineStages);
  }
  if (C.Disagg.PrefillReplicas)
    OS << fmt::format(
        "  disaggregated: {} prefill replica{} the KV cache at {} a "
        "token over {} links, {} latency{}\n",
        C.Disagg.PrefillReplicas,
        C.Disagg.PrefillReplicas == 1 ? " sends" : "s send",
        formatQuantity(C.Disagg.BytesPerToken, Dimension::base(BaseDim::Data)),
        formatQuantity(C.Disagg.Bandwidth, Dimension::base(BaseDim::Data) /
                                               Dimension::base(BaseDim::Time)),
        formatQuantity(C.Disagg.Latency, Sec),
        C.Disagg.LocalBelow
            ? fmt::format("; prompts under {} tokens prefill locally",
                          C.Disagg.LocalBelow)
            : "");
  std::vector<std::vector<std::string>> Table{{"", "closed form", "simulated"}};
  // A statistic no request gave (all rejected, one-token outputs) is "-".
  auto line = [&](const char *Label, std::optional<MetricId> Id,
                  const sim::Stats &St, double Simulated) {
    Table.push_back({Label, Id && R.has(*Id) ? show(R, *Id) : "-",
                     St.Count ? formatQuantity(Simulated, Sec) : "-"});
  };
  line("TTFT p50", M::TtftP50, S.TTFT, S.TTFT.P50);
  line("TTFT p99", M::TtftP99, S.TTFT, S.TTFT.P99);
  line("TPOT p50", M::TpotP50, S.TPOT, S.TPOT.P50);
  line("TPOT p99", M::TpotP99, S.TPOT, S.TPOT.P99);
  line("ITL p50", M::ItlP50, S.ITL, S.ITL.P50);
  line("ITL p99", M::ItlP99, S.ITL, S.ITL.P99);
  line("latency p50", M::LatencyP50, S.E2E, S.E2E.P50);
  line("latency p99", M::LatencyP99, S.E2E, S.E2E.P99);
  line("queue wait", std::nullopt, S.QueueWait, S.QueueWait.Mean);
  Table.back()[0] = "wait, mean";
  // Under pipeline parallelism both columns give an engine's micro-batch:
  // the closed form's replica batch b over min(pp, b).
  std::string ClosedBatch = "-";
  if (R.has(M::RunningBatch)) {
    ClosedBatch = show(R, M::RunningBatch);
    if (C.PipelineStages > 1 && R.has(M::PP)) {
      double B = R[M::RunningBatch];
      ClosedBatch = formatNumber(B / std::max(1.0, std::min(R[M::PP], B)));
    }
  }
  Table.push_back({"running batch", ClosedBatch, formatNumber(S.MeanBatch)});
  Table.push_back(
      {"tokens served",
       R.has(M::ServedThroughput) ? show(R, M::ServedThroughput) : "-",
       formatQuantity(S.Throughput, Dimension::base(BaseDim::Token) /
                                        Dimension::base(BaseDim::Time))});
  const Dimension PerSec =
      Dimension::base(BaseDim::Request) / Dimension::base(BaseDim::Time);
  bool Targets = false;
  for (const sim::RequestClass &K : C.Classes)
    Targets = Targets || K.TTFTTarget > 0 || K.TPOTTarget > 0;
  if (Targets)
    Table.push_back(
        {"goodput", "-",
         fmt::format("{} ({}% of {} requests with targets)",
                     formatQuantity(S.Goodput, PerSec),
                     formatNumber(S.WithTargets
                                      ? 100.0 * S.MetTargets / S.WithTargets
                                      : 0),
                     S.WithTargets)});
  if (C.Session.Open)
    Table.push_back(
        {"conversations", "-",
         fmt::format(
             "{} opened; {}% of requests continued one", S.Conversations,
             formatNumber(S.Arrived ? 100.0 * S.FollowUps / S.Arrived : 0))});
  if (C.Prefix.Groups || C.Session.Open)
    Table.push_back(
        {"prefix cache hits", "-",
         formatNumber(100 * S.PrefixHitRate) + "% of prompt tokens"});
  for (size_t T = 0; T < C.Tiers.size() && T < S.TierHitTokens.size(); ++T)
    Table.push_back(
        {"  from " + C.Tiers[T].Name, "-",
         formatNumber(S.PromptTokens > 0
                          ? 100 * S.TierHitTokens[T] / S.PromptTokens
                          : 0) +
             "% of prompt tokens"});
  if (S.Loads) {
    line("KV load p50", std::nullopt, S.Load, S.Load.P50);
    line("KV load p99", std::nullopt, S.Load, S.Load.P99);
  }
  if (S.Transfers) {
    line("KV transfer p50", M::RequestKVTransferTime, S.Transfer,
         S.Transfer.P50);
    line("KV transfer p99", std::nullopt, S.Transfer, S.Transfer.P99);
  }
  // The walls' cost and power over the simulated tokens served.
  for (auto [Label, Closed, Sim] :
       {std::tuple{"cost per Mtok", M::CostPerMtok, M::SimCostPerMtok},
        std::tuple{"energy per token", M::EnergyPerToken,
                   M::SimEnergyPerToken}})
    if (R.has(Sim) && std::isfinite(R[Sim]))
      Table.push_back(
          {Label, R.has(Closed) ? show(R, Closed) : "-", show(R, Sim)});
  if (C.Scale.Enabled)
    Table.push_back(
        {"replicas", "-",
         fmt::format("{} on average, {} at most ({} added, {} drained)",
                     formatNumber(S.MeanReplicas), formatNumber(S.PeakReplicas),
                     S.ScaleUps, S.ScaleDowns)});
  if (C.PrefillScale.Enabled)
    Table.push_back(
        {"prefill replicas", "-",
         fmt::format("{} on average, {} at most ({} added, {} drained)",
                     formatNumber(S.MeanPrefillReplicas),
                     formatNumber(S.PeakPrefillReplicas), S.PrefillScaleUps,
                     S.PrefillScaleDowns)});
  Table.push_back(
      {"replicas busy", "-", formatNumber(100 * S.Utilisation) + "%"});
  // The sampled busy shares' spread: how unevenly load fell on the
  // replicas and over time.
  if (!S.Replicas.empty()) {
    std::vector<double> Busy;
    for (const sim::Result::ReplicaSample &X : S.Replicas)
      Busy.push_back(X.Busy);
    std::sort(Busy.begin(), Busy.end());
    auto at = [&](double Q) {
      return formatNumber(
          100 *
          Busy[static_cast<size_t>(Q * static_cast<double>(Busy.size() - 1))]);
    };
    Table.push_back(
        {"  by interval", "-",
         fmt::format(
             "p10 {}%, median {}%, p90 {}% of {} samples every {}{}", at(0.1),
             at(0.5), at(0.9), Busy.size(),
             formatQuantity(C.SampleEvery, Dimension::base(BaseDim::Time)),
             S.ReplicasTruncated ? " (truncated)" : "")});
  }
  if (C.KVCapacityTokens > 0)
    Table.push_back({"KV cache held", "-",
                     formatNumber(100 * S.KVUtilisation) + "% (peak " +
                         formatNumber(S.PeakKVTokens) + " tokens)"});
  OS << alignedColumns(Table, 2, 3);
  // Per class, when the scenario lists them.
  if (!C.Classes.empty()) {
    std::vector<std::vector<std::string>> Rows{
        {"class", "completed", "TTFT p50", "TTFT p99", "TPOT p99",
         "targets met", "goodput"}};
    for (size_t I = 0; I < S.Classes.size(); ++I) {
      const sim::ClassResult &K = S.Classes[I];
      const sim::RequestClass &RC = C.Classes[I];
      auto q = [&](const sim::Stats &St, double V) {
        return St.Count ? formatQuantity(V, Sec) : std::string("-");
      };
      bool Has = RC.TTFTTarget > 0 || RC.TPOTTarget > 0;
      Rows.push_back(
          {K.Name, formatNumber(static_cast<double>(K.Completed)),
           q(K.TTFT, K.TTFT.P50), q(K.TTFT, K.TTFT.P99), q(K.TPOT, K.TPOT.P99),
           Has && K.Completed
               ? formatNumber(100.0 * K.MetTargets / K.Completed) + "%"
               : "-",
           Has ? formatQuantity(K.Goodput, PerSec) : "-"});
    }
    OS << alignedColumns(Rows, 2, 3);
  }
  if (S.Preemptions && S.SwapOuts)
    OS << fmt::format(
        "  {} preemptions: the KV cache ran out; {} swapped their "
        "cache out and back in, the rest ran their prompt and "
        "output again\n",
        S.Preemptions, S.SwapOuts);
  else if (S.Preemptions)
    OS << fmt::format("  {} preemptions: the KV cache ran out, and the newest "
                      "requests ran their prompt and output again\n",
                      S.Preemptions);
  if (S.Shed)
    OS << fmt::format("  {} requests shed by admission control ({}% of "
                      "those that arrived)\n",
                      S.Shed, formatNumber(100.0 * S.Shed / S.Arrived));
  if (S.Rejected > S.RejectedContext)
    OS << fmt::format("  {} requests rejected: their prompt and output "
                      "exceed a replica's KV cache\n",
                      S.Rejected - S.RejectedContext);
  if (S.RejectedContext)
    OS << fmt::format("  {} requests refused: their prompt and output (or "
                      "max_output) exceed the model's context\n",
                      S.RejectedContext);
}

void printScorecard(const ScenarioResult &R, llvm::raw_ostream &OS) {
  OS << "scenario " << R.Scenario << "\n";
  switch (R.Kind) {
  case ResultKind::DecoderTraining:
    if (R.has(M::StepTime) || (R.has(M::Feasible) && !R.Feasible)) {
      printTrainingLevels(R, OS);
      break;
    }
    for (const NotComputed &N : R.Missing)
      OS << "  " << N.What << " are not evaluated: " << N.Why << "\n";
    for (auto [L, Name] : {std::pair{Level::Feasibility, "Feasibility"},
                           std::pair{Level::Performance, "Performance"},
                           std::pair{Level::Macro, "Macro"}})
      if (hasLevelRows(R, L)) {
        OS << "\n" << Name;
        if (L == Level::Performance)
          OS << "  " << R.Performance << " (in part)";
        OS << "\n";
        levelRows(R, L, OS);
      }
    break;
  case ResultKind::PerSample:
    printSampleLevels(R, OS);
    break;
  case ResultKind::Decoder:
    if (!R.has(M::Feasible))
      break;
    printDecoderFeasibility(R, OS);
    if (!R.Feasible) {
      OS << "Performance  not evaluated: the scenario does not fit "
            "(feasibility failed)\n";
      OS << "\nMacro        not evaluated: the scenario does not fit\n";
      break;
    }
    printDecoderPerformance(R, OS);
    OS << "\nMacro        (" << macroNote(R, "energy at the load's power")
       << ")\n";
    printPowerAtLoad(R, OS);
    row(OS, "energy per token", show(R, M::EnergyPerToken),
        R.has(M::ServedThroughput) &&
                R[M::ServedThroughput] < R[M::SystemThroughput]
            ? "at " + show(R, M::ServedThroughput) +
                  " served (arrival x output; capacity " +
                  show(R, M::SystemThroughput) + ")"
            : "at " + show(R, M::SystemThroughput) +
                  " over all replicas, their slots full");
    printSiteRows(R, OS);
    levelRows(R, Level::Macro, OS);
    break;
  }
  printSimulated(R, OS);
  printConditions(R, OS);
  if (!R.Unavailable.empty()) {
    std::vector<std::string> Names;
    for (MetricId Id : R.Unavailable)
      Names.push_back(metricInfo(Id).Name);
    OS << "\nnot computed yet: " << llvm::join(Names, ", ") << "\n";
  }
}

} // namespace mlsc::driver
