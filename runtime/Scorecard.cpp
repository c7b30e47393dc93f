//===- Scorecard.cpp - The three-level scorecard, text and JSON -----------===//

#include "runtime/Binding.h"
#include "runtime/Format.h"
#include "runtime/Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace mlsc {

using graph::Graph;
using graph::Op;
using json = nlohmann::ordered_json;

std::string location(llvm::SourceMgr &SM, llvm::SMRange R) {
  if (!R.isValid())
    return "";
  unsigned Buf = SM.FindBufferContainingLoc(R.Start);
  if (!Buf)
    return "";
  auto LC = SM.getLineAndColumn(R.Start, Buf);
  return fmt::format(
      "{}:{}:{}",
      llvm::sys::path::filename(SM.getMemoryBuffer(Buf)->getBufferIdentifier())
          .str(),
      LC.first, LC.second);
}

Verdict verdict(const graph::Condition &C, const Evaluator &E) {
  if (!C.At)
    return Verdict::Unknown;
  return E.value(*C.At) != 0 ? Verdict::Pass : Verdict::Fail;
}

static const char *verdictWord(Verdict V) {
  return V == Verdict::Pass ? "PASS" : V == Verdict::Fail ? "FAIL" : "UNKNOWN";
}

std::string comparisonOperands(const Evaluator &E, graph::NodeId Node) {
  const Graph &G = E.graph();
  const graph::Node &N = G.node(Node);
  if (N.Kind < Op::Lt || N.Kind > Op::Ne)
    return "";
  graph::NodeId L = G.inputOf(Node, 0), R = G.inputOf(Node, 1);
  return fmt::format(
      "{} vs {}", formatQuantity(E.value(L), G.node(L).Dim, G.node(L).IsBool),
      formatQuantity(E.value(R), G.node(R).Dim, G.node(R).IsBool));
}

json quantityJSON(double SI, const Dimension &D, bool IsBool) {
  json J;
  if (IsBool) {
    J["value"] = SI != 0;
    J["unit"] = "bool";
  } else {
    J["value"] = SI;
    J["unit"] = D.str();
  }
  J["display"] = formatQuantity(SI, D, IsBool);
  return J;
}

namespace {

/// Reads named values of an evaluated scenario graph.
struct View {
  const Evaluator &E;
  const Graph &G;
  explicit View(const Evaluator &E) : E(E), G(E.graph()) {}

  bool has(llvm::StringRef Name) const { return G.findNamed(Name).has_value(); }
  /// The value of a named node; NaN when the graph has no such node, so a
  /// report that asks for a value its workload lacks prints `nan`, never
  /// reads out of bounds.
  double operator[](llvm::StringRef Name) const {
    std::optional<graph::NodeId> Id = G.findNamed(Name);
    return !Id ? std::nan("") : E.value(*Id);
  }
  std::string show(llvm::StringRef Name) const {
    std::optional<graph::NodeId> Id = G.findNamed(Name);
    if (!Id)
      return "n/a";
    const graph::Node &N = G.node(*Id);
    return formatQuantity((*this)[Name], N.Dim, N.IsBool);
  }
};

/// The Performance level: FAIL when an SLA condition fails or the queue in
/// front of the replicas is unstable, WARN when a condition cannot be
/// evaluated yet, else PASS. Text and JSON scorecards share it.
const char *performanceStatus(const View &V) {
  bool AnyFail = V.has("queue_stable") && V["queue_stable"] == 0;
  bool AnyUnknown = false;
  for (const graph::Condition &C : V.G.Conditions)
    if (!C.IsAssert) {
      AnyFail |= verdict(C, V.E) == Verdict::Fail;
      AnyUnknown |= verdict(C, V.E) == Verdict::Unknown;
    }
  return AnyFail ? "FAIL" : AnyUnknown ? "WARN" : "PASS";
}

/// Which wall binds a phase, and by how much (runtime/Binding.h).
struct Bound : BindingWall {
  bool Compute() const { return Number == 1; }
  bool Memory() const { return Number == 2; }
};

Bound bound(const View &V, const std::string &Phase) {
  Bound B;
  static_cast<BindingWall &>(B) = bindingWall(V.E, findPhase(Phase));
  return B;
}

std::string boundText(const View &V, const std::string &Phase) {
  double C = V[Phase + ".compute_time"], M = V[Phase + ".memory_time"];
  bool IsCompute = C >= M;
  double Lo = std::min(C, M);
  std::string S;
  if (V.has(Phase + ".streaming_time") &&
      V[Phase + ".streaming_time"] > std::max(C, M))
    S = fmt::format("weight-streaming-bound: each layer waits {} for its "
                    "weights; the on-device roofline needs {}; ",
                    V.show(Phase + ".streaming_layer_time"),
                    V.show(Phase + ".roofline_time"));
  S += fmt::format(
      "{}-bound: intensity {} {} the ridge {}; {} time is {}x smaller",
      IsCompute ? "compute" : "memory", V.show(Phase + ".intensity"),
      IsCompute ? "above" : "below", V.show("ridge_point"),
      IsCompute ? "memory" : "compute",
      formatNumber(Lo > 0 ? std::max(C, M) / Lo : 0));
  if (Phase != "batch" && V.has(Phase + ".comm_time") &&
      V[Phase + ".comm_time"] > 0)
    S += "; TP all-reduces add " + V.show(Phase + ".comm_time");
  return S;
}

void row(llvm::raw_ostream &OS, llvm::StringRef Label, llvm::StringRef Value,
         llvm::StringRef Note = "") {
  OS << "  " << Label;
  OS.indent(Label.size() < 20 ? 20 - Label.size() : 1);
  OS << Value;
  if (!Note.empty())
    OS << "   " << Note;
  OS << "\n";
}

} // namespace

namespace {

/// "batch time 26.98 ms ..." and the binding wall of a batch step.
void printBatchSteps(const View &V, llvm::raw_ostream &OS, bool Training) {
  row(OS, Training ? "step time" : "batch time", V.show("batch_time"),
      boundText(V, "batch"));
  if (V.has("batch.comm_time") && V["batch.comm_time"] > 0)
    row(OS, "gradient all-reduce", V.show("batch.comm_time"),
        "ring over the devices, not overlapped [wall 14]");
  row(OS, "throughput", V.show("sample_throughput"),
      "per device; " + V.show("system_sample_throughput") + " in all");
  if (V.has("mfu"))
    row(OS, "MFU", formatNumber(100 * V["mfu"]) + "%",
        "model FLOPs (3x forward) / (step time x dense peak)");
  row(OS, "efficiency", formatNumber(V["batch.efficiency"]),
      "of dense peak [wall 3: software efficiency]");
  Bound D = bound(V, "batch");
  row(OS, "binding wall",
      fmt::format("{} (batch of {}), {}x ahead of {}", D.label(),
                  formatNumber(V["batch"]), formatNumber(D.Margin),
                  D.RunnerUp));
}

/// The levels of a CNN or encoder scenario: batches of samples per device.
bool printSampleLevels(const View &V, llvm::raw_ostream &OS) {
  bool Feasible = V["feasible"] != 0;
  bool Training = V.has("step_time");
  OS << "\nFeasibility  " << (Feasible ? "PASS" : "FAIL") << "\n";
  std::string What =
      !Training ? "of weights"
      : V.has("activations_per_device")
          ? fmt::format("(weights, gradients, optimizer {} + activations {})",
                        V.show("training_state_per_device"),
                        V.show("activations_per_device"))
          : "of weights, gradients and optimizer state";
  row(OS, "memory per device",
      fmt::format("{} {} {} {}", V.show("memory_per_device"), What,
                  Feasible ? "in" : "exceed", V.show("device_memory")),
      "[wall 2: memory capacity]");
  OS << "\n";
  if (!Feasible) {
    OS << "Performance  not evaluated: the scenario does not fit "
          "(feasibility failed)\n";
    return false;
  }
  OS << "Performance  " << performanceStatus(V) << "\n";
  printBatchSteps(V, OS, Training);
  OS << "\nMacro        (power at nameplate; cost and carbon come with walls "
        "17-18)\n";
  row(OS, "power", V.show("power"),
      "devices x TDP + node overhead: an upper bound [wall 18]");
  row(OS, "energy per sample", V.show("energy_per_sample"),
      "at " + V.show("system_sample_throughput") + " over all devices");
  return true;
}

/// The Feasibility level of a decoder: what fills a device's memory.
bool printDecoderFeasibility(const View &V, llvm::raw_ostream &OS) {
  bool Feasible = V["feasible"] != 0;
  OS << "\nFeasibility  " << (Feasible ? "PASS" : "FAIL") << "\n";
  double Mem = V["memory_per_device"], Cap = V["device_memory"];
  std::string MemText =
      V["memory_fits"] != 0
          ? fmt::format("{} of {} ({}%)", V.show("memory_per_device"),
                        V.show("device_memory"), formatNumber(100 * Mem / Cap))
          : fmt::format(
                "{} exceeds {} by {}", V.show("memory_per_device"),
                V.show("device_memory"),
                formatQuantity(Mem - Cap, Dimension::base(BaseDim::Data)));
  row(OS, "memory per device", MemText, "[wall 2: memory capacity]");
  std::string Weights = V.has("resident_weights_per_device")
                            ? V.show("resident_weights_per_device") +
                                  " resident weights (2 layers)"
                            : V.show("weights_per_device") + " weights";
  row(OS, "  made of",
      fmt::format("{} + {} KV cache + {} activations + {} runtime reserve",
                  Weights, V.show("kv_cache_per_device"),
                  V.show("activations_per_device"), V.show("runtime_reserve")));
  row(OS, "concurrent seqs",
      fmt::format("up to {} per replica in a paged KV cache; batch {}{}",
                  formatNumber(V["max_concurrent_sequences"]),
                  formatNumber(V["batch"]),
                  V["batch_fits"] != 0 ? "" : " does not fit"),
      "[wall 5: batching]");
  double EP =
      V.has("replica_devices") ? V["replica_devices"] / (V["tp"] * V["pp"]) : 1;
  row(OS, "parallelism",
      fmt::format("tp {} x pp {}{} on {} device{}", formatNumber(V["tp"]),
                  formatNumber(V["pp"]),
                  EP != 1 ? " x ep " + formatNumber(EP) : "",
                  formatNumber(V["devices"]), V["devices"] == 1 ? "" : "s"),
      V["parallelism_fits"] != 0 ? "" : "FAIL: more shards than devices");
  OS << "\n";
  return Feasible;
}

/// Rows for the serving options a workload turned on (walls 3-6, 13).
void printServingOptions(const View &V, llvm::raw_ostream &OS) {
  row(OS, "efficiency",
      fmt::format("prefill {}, decode {} of dense peak",
                  formatNumber(V["prefill.efficiency"]),
                  formatNumber(V["decode.efficiency"])),
      "GEMM and attention kernels blended [wall 3]");
  if (V.has("decode.weight_bytes") && V.has("weights_per_device"))
    row(OS, "MoE weights read",
        fmt::format("{} of {} per decode step (the experts a batch of {} "
                    "touches)",
                    V.show("decode.weight_bytes"), V.show("weights_per_device"),
                    formatNumber(V["batch"])),
        "[wall 2]");
  if (V.has("decode.streaming_time"))
    row(OS, "weight streaming",
        fmt::format("{} per decode step, {} per layer",
                    V.show("decode.streaming_time"),
                    V.show("decode.streaming_layer_time")),
        "[wall 6: weight streaming]");
  if (V.has("speculative.time_per_token"))
    row(OS, "TPOT", V.show("speculative.time_per_token"),
        fmt::format("speculative decoding: {} tokens per target step, "
                    "draft step {}",
                    formatNumber(V["speculative.tokens_per_step"]),
                    V.show("draft.decode_step_time")));
  if (V.has("hybrid_iteration_time"))
    row(OS, "chunked prefill",
        fmt::format("{} chunks over {}; an iteration carrying a chunk takes "
                    "{} (ITL p99)",
                    formatNumber(V["prefill_chunks"]),
                    V.show("request.chunked_prefill_time"),
                    V.show("hybrid_iteration_time")),
        "[wall 4: Sarathi-Serve]");
  if (V.has("request.kv_transfer_time"))
    row(OS, "KV transfer", V.show("request.kv_transfer_time"),
        "prefill to decode replica, added to TTFT [wall 4: disaggregation]");
  if (V.has("fidelity.decode_speedup"))
    row(OS,
        V.has("pruning.bytes_per_param") ? "pruned weights"
                                         : "quantized weights",
        fmt::format(
            "{} per device; decode {}x faster than with dense "
            "weights at the math precision{}",
            V.show("weights_per_device"),
            formatNumber(V["fidelity.decode_speedup"]),
            V.has("pruning.gemm_time_factor") &&
                    V["pruning.gemm_time_factor"] < 1
                ? fmt::format("; GEMMs take {}x the dense time",
                              formatNumber(V["pruning.gemm_time_factor"]))
                : ""),
        "[wall 13: fidelity]");
  if (V.has("accuracy_delta"))
    row(OS, "accuracy delta", formatNumber(V["accuracy_delta"]),
        "a sourced measurement [wall 13: fidelity]");
}

/// The Performance level of a decoder.
void printDecoderPerformance(const View &V, llvm::raw_ostream &OS) {
  bool Unstable = V.has("queue_stable") && V["queue_stable"] == 0;
  OS << "Performance  " << performanceStatus(V) << "\n";
  row(OS, "prefill time", V.show("prefill_time"), boundText(V, "prefill"));
  row(OS, "decode step time", V.show("decode_step_time"),
      boundText(V, "decode"));
  printServingOptions(V, OS);
  bool Static = V.has("request.service_time") && !V.has("request.prefill_time");
  std::string PerDevice =
      "; " + V.show("throughput_per_device") + " per device";
  row(OS, "throughput", V.show("throughput"),
      (Static ? "per replica, static batching: the batch's tokens over its "
                "prefill and longest decode"
              : "per replica") +
          PerDevice);
  if (V.has("max_batch_under_tpot"))
    row(OS, "best batch",
        fmt::format("{} (the largest whose decode step meets the TPOT "
                    "limit; communication not counted)",
                    formatNumber(V["max_batch_under_tpot"])),
        "[wall 5: batching]");
  if (!V.has("utilisation")) {
    row(OS, "queueing", "not modelled: the workload has no `arrival` rate",
        "[wall 7: tail latency]");
  } else {
    std::string Slots = fmt::format(
        "{} slots ({} replica{} x batch {})", formatNumber(V["servers"]),
        formatNumber(V["replicas"]), V["replicas"] == 1 ? "" : "s",
        formatNumber(V["servers"] / V["replicas"]));
    row(OS, "queue",
        Unstable ? fmt::format("UNSTABLE: utilisation {}% of {} (>= 100%); "
                               "waits grow without bound",
                               formatNumber(100 * V["utilisation"]), Slots)
                 : fmt::format("utilisation {}% of {}",
                               formatNumber(100 * V["utilisation"]), Slots),
        "[wall 7: tail latency]");
    if (V.has("prefill_interference") && V["prefill_interference"] > 0)
      row(OS, "token gap",
          V["prefill_interference"] < 1
              ? fmt::format("{} mean, {} p99", V.show("tpot.mean"),
                            V.show("itl.p99"))
              : std::string("unbounded: prefills alone fill the replica"),
          fmt::format(
              "other requests' prefills take {}% of a replica's "
              "time{} [wall 4]",
              formatNumber(100 * V["prefill_interference"]),
              V.has("itl.stall_probability")
                  ? fmt::format(", stalling {}% of token gaps",
                                formatNumber(100 * V["itl.stall_probability"]))
                  : ""));
    if (!Unstable) {
      row(OS, "TTFT p50 / p99", V.show("ttft.p50") + " / " + V.show("ttft.p99"),
          "p99.9 " + V.show("ttft.p999"));
      row(OS, "latency p50 / p99",
          V.show("latency.p50") + " / " + V.show("latency.p99"),
          "p99.9 " + V.show("latency.p999"));
    }
    if (V.has("replicas_needed"))
      row(OS, "replicas needed",
          std::isfinite(V["replicas_needed"])
              ? fmt::format("{} of batch {} for latency p99 <= the target",
                            formatNumber(V["replicas_needed"]),
                            formatNumber(V["batch"]))
              : "none: the target is below the service time itself",
          "[wall 7: tail latency]");
  }
  Bound D = bound(V, "decode");
  std::string Crossover;
  if (D.Memory() && V.has("decode.crossover_batch")) {
    double BStar = V["decode.crossover_batch"];
    double Batch = V["batch"];
    Crossover =
        std::isfinite(BStar)
            ? fmt::format("; compute would bind at {}x the batch (batch {})",
                          formatNumber(BStar / Batch), formatNumber(BStar))
            : "; compute never binds: KV reads grow faster than FLOPs";
  }
  row(OS, "binding wall",
      fmt::format("{} (decode step), {}x ahead of {}{}", D.label(),
                  formatNumber(D.Margin), D.RunnerUp, Crossover));
}

void printConditions(const View &V, bool Feasible, llvm::SourceMgr &SM,
                     llvm::raw_ostream &OS) {
  if (V.G.Conditions.empty())
    return;
  OS << "\nConditions\n";
  for (const graph::Condition &C : V.G.Conditions) {
    Verdict Vd = Feasible ? verdict(C, V.E) : Verdict::Unknown;
    std::string Detail = !C.At       ? "`" + C.Missing + "` is not computed yet"
                         : !Feasible ? "not evaluated: infeasible"
                                     : comparisonOperands(V.E, *C.At);
    OS << "  " << (C.IsAssert ? "assert " : "sla    ") << C.Text;
    OS.indent(C.Text.size() < 30 ? 30 - C.Text.size() : 1);
    OS << verdictWord(Vd);
    if (!Detail.empty())
      OS << "  (" << Detail << ")";
    OS << "  " << location(SM, C.Range) << "\n";
  }
}

} // namespace

void printScorecard(const Evaluator &E, llvm::SourceMgr &SM,
                    llvm::raw_ostream &OS) {
  View V(E);
  const Graph &G = E.graph();
  OS << "scenario " << G.Scenario << "\n";
  bool Feasible = true;
  if (G.Training) {
    OS << "  training of decoder LLMs is not evaluated yet: the training "
          "walls (parallelism, checkpointing) come in later work\n";
  } else if (V.has("sample_throughput")) {
    Feasible = printSampleLevels(V, OS);
  } else if (V.has("feasible")) {
    Feasible = printDecoderFeasibility(V, OS);
    if (!Feasible)
      OS << "Performance  not evaluated: the scenario does not fit "
            "(feasibility failed)\n";
    else
      printDecoderPerformance(V, OS);
    if (Feasible && V.has("power")) {
      OS << "\nMacro        (energy at nameplate power; cost and carbon come "
            "with walls 17-18)\n";
      row(OS, "power", V.show("power"),
          "devices x TDP + node overhead: an upper bound [wall 18]");
      row(OS, "energy per token", V.show("energy_per_token"),
          "at " + V.show("system_throughput") + " over all replicas");
    } else {
      OS << "\nMacro        not evaluated: cost and carbon come with walls "
            "17-18\n";
    }
  }
  printConditions(V, Feasible, SM, OS);
  if (!G.Unavailable.empty() && !G.Training) {
    std::vector<std::string> Names;
    for (MetricId M : G.Unavailable)
      Names.push_back(metricInfo(M).Name);
    OS << "\nnot computed yet: " << llvm::join(Names, ", ") << "\n";
  }
}

json scorecardJSON(const Evaluator &E, llvm::SourceMgr &SM) {
  View V(E);
  const Graph &G = E.graph();
  json J;
  J["scenario"] = G.Scenario;
  J["mode"] = G.Training || V.has("step_time") ? "training" : "inference";
  bool Feasible = !V.has("feasible") || V["feasible"] != 0;
  if (V.has("feasible")) {
    json F;
    F["status"] = Feasible ? "PASS" : "FAIL";
    F["memory_per_device"] = quantityJSON(
        V["memory_per_device"], G.node(G.get(MetricId::MemoryPerDevice)).Dim);
    F["device_memory"] = quantityJSON(
        V["device_memory"], G.node(G.get(MetricId::DeviceMemory)).Dim);
    F["memory_fits"] = V["memory_fits"] != 0;
    // What fills the memory (a decoder's parts; a batch model's state).
    json Parts = json::object();
    for (const char *Part :
         {"weights_per_device", "resident_weights_per_device",
          "kv_cache_per_device", "activations_per_device", "runtime_reserve",
          "training_state_per_device"})
      if (V.has(Part))
        Parts[Part] = quantityJSON(V[Part], G.node(*G.findNamed(Part)).Dim);
    F["memory_parts"] = Parts;
    if (V.has("parallelism_fits"))
      F["parallelism_fits"] = V["parallelism_fits"] != 0;
    if (V.has("batch_fits")) {
      F["max_concurrent_sequences"] = V["max_concurrent_sequences"];
      F["batch_fits"] = V["batch_fits"] != 0;
    }
    J["feasibility"] = F;
  }
  json P;
  json Metrics = json::object();
  if (Feasible)
    for (MetricId M : G.Metrics) {
      const graph::Node &N = G.node(G.get(M));
      Metrics[metricInfo(M).Name] = quantityJSON(E.value(M), N.Dim, N.IsBool);
    }
  std::string Phase = V.has("decode_step_time") ? "decode" : "batch";
  if (V.has(Phase + ".compute_time") && Feasible) {
    P["status"] = performanceStatus(V);
    P["metrics"] = Metrics;
    Bound D = bound(V, Phase);
    json W;
    W["wall"] = D.Short;
    W["number"] = D.Number;
    W["phase"] = Phase;
    W["margin"] = D.Margin;
    if (D.Memory() && V.has("decode.crossover_batch")) {
      double BStar = V["decode.crossover_batch"];
      W["crossover_batch"] = std::isfinite(BStar) ? json(BStar) : json(nullptr);
    }
    P["binding_wall"] = W;
  } else {
    P["status"] = "NOT_EVALUATED";
    P["reason"] =
        G.Training ? "training walls are not implemented yet" : "infeasible";
  }
  J["performance"] = P;
  json Conds = json::array();
  for (const graph::Condition &C : G.Conditions) {
    json CJ;
    CJ["kind"] = C.IsAssert ? "assert" : "sla";
    CJ["text"] = C.Text;
    CJ["location"] = location(SM, C.Range);
    Verdict Vd = Feasible ? verdict(C, E) : Verdict::Unknown;
    CJ["verdict"] = Vd == Verdict::Pass   ? "pass"
                    : Vd == Verdict::Fail ? "fail"
                                          : "unknown";
    if (!C.Message.empty())
      CJ["message"] = C.Message;
    if (!C.At)
      CJ["missing_metric"] = C.Missing;
    Conds.push_back(CJ);
  }
  J["conditions"] = Conds;
  json Unavailable = json::array();
  for (MetricId M : G.Unavailable)
    Unavailable.push_back(metricInfo(M).Name);
  J["unavailable_metrics"] = Unavailable;
  return J;
}

} // namespace mlsc
