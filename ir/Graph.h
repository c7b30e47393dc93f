//===- Graph.h - The evaluation graph of a scenario ---------------*- C++
//-*-===//
//
// Lowering turns a scenario (a workload on a system) into a graph: leaves are
// values with their origins; other nodes apply an arithmetic operator or a
// wall formula (by its index in the runtime's formula library) to earlier
// nodes. Nodes are stored in topological order, so one forward pass over
// plain doubles evaluates everything; changing a leaf and evaluating again
// needs no re-parsing or re-lowering.
//
// The graph holds no pointer into the IR: leaf origins are names and source
// ranges, so a graph outlives the IR and AST it was lowered from. Its
// metrics (ir/Metrics.def) are found by id; asking for one the graph lacks
// is an error at that point.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_GRAPH_H
#define MLSC_IR_GRAPH_H

#include "ir/Dimension.h"
#include "ir/Domain.h"
#include "ir/Metrics.h"
#include "ir/Walls.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlsc {
namespace graph {

/// A node of a graph. Default-constructed, it names no node.
class NodeId {
public:
  constexpr NodeId() = default;
  constexpr explicit NodeId(uint32_t Index) : Index(Index) {}
  constexpr uint32_t index() const { return Index; }
  constexpr bool isValid() const { return Index != ~0u; }
  friend constexpr bool operator==(NodeId A, NodeId B) {
    return A.Index == B.Index;
  }
  friend constexpr bool operator!=(NodeId A, NodeId B) {
    return A.Index != B.Index;
  }
  friend constexpr bool operator<(NodeId A, NodeId B) {
    return A.Index < B.Index;
  }

private:
  uint32_t Index = ~0u;
};

enum class Op : uint8_t {
  Leaf,
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Neg,
  Min,
  Max,
  Ceil,
  Floor,
  Round,
  Abs,
  Sqrt,
  Log,
  Log2,
  Log10,
  Exp,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Not,
  Apply, ///< a formula of the library
};

const char *opSpelling(Op O);
inline bool isComparison(Op O) { return O >= Op::Lt && O <= Op::Ne; }

/// Where a leaf's value came from.
struct LeafOrigin {
  std::string Entity;     ///< "H100_SXM"; "" for lets and formula constants
  std::string Field;      ///< "hbm.bandwidth", or a let's name
  llvm::SMRange Range;    ///< where it was written; invalid for defaults
  std::string Source;     ///< `from SOURCE`: the source record's name
  std::string SourceKind; ///< its `kind`: "datasheet", "estimate", ...
  std::vector<std::string> Notes;
  std::string Spelling;    ///< "3.35 TB/s" as written
  bool Assumed = false;    ///< a documented default, not given by the user
  bool Calibrated = false; ///< an efficiency or overlap factor
  /// A choice, not a quantity: a flag (0 or 1) or an enumeration's symbol
  /// (its position: `recompute = selective` is 1). Sweeps vary it by name;
  /// sensitivity leaves it alone.
  bool Choice = false;
};

struct Node {
  Op Kind = Op::Leaf;
  uint32_t FirstInput = 0; ///< into Graph::Inputs
  uint32_t NumInputs = 0;
  /// Apply only: the formula's index in the runtime's formula library
  /// (runtime/walls/Formulas.h, FormulaId).
  uint16_t Formula = 0;
  Dimension Dim;
  bool IsBool = false;
  std::string Name;      ///< "decode.memory_time"; "" when anonymous
  uint32_t Origin = ~0u; ///< Leaf only: into Graph::Origins
};

/// An SLA condition or an assert, lowered to a boolean node.
struct Condition {
  std::string Text; ///< `ttft.p99 < 500 ms` as written
  llvm::SMRange Range;
  bool IsAssert = false;
  std::string Message;      ///< an assert's message
  std::optional<NodeId> At; ///< none: it uses a metric no wall computes yet
  std::string Missing;      ///< the unavailable metric, when !At
};

/// A field computed from other values (`batch = w.batch - 3`): a solve or
/// sweep that varies those values may take it outside what the field can
/// be, so the runtime checks it at every point (runtime/Query.h).
struct DomainCheck {
  NodeId Node;
  ValueDomain Domain = ValueDomain::Any;
  std::string Field; ///< "v.batch"
  llvm::SMRange Range;
};

/// The inputs of a decoder's step model (runtime/StepModel.h): the nodes
/// whose values make its prefill and decode step times a function of
/// (batch, context, new tokens). Optional ones are invalid when absent.
struct StepInputs {
  NodeId Params; ///< parameters a token computes with (active, MoE)
  NodeId Layers, AttnDim, Hidden;
  NodeId DecodeAttnDim; ///< a one-token step's attention width (MLA)
  NodeId KV;            ///< KV-cache bytes per token
  NodeId KVShards;      ///< ways tp splits the KV cache
  NodeId TP, PP, EP;
  NodeId BytesPerWeight, WeightsPerDevice;
  NodeId Peak, EtaGemm, EtaAttention, BW, EtaMem;
  NodeId ActivationBytes;
  NodeId FabricBW, FabricLatency, EtaComm; ///< tensor-parallel fabric
  NodeId CollectiveOverhead; ///< an all-reduce call's fixed cost (wall 14)
  NodeId InterBW, InterLatency, NodeRanks; ///< scale-out fabric, node size
  NodeId InjectBW;                         ///< weight streaming (wall 6)
  NodeId MoeParams, MoeActive, MoeExperts, MoeTopK; ///< MoE routing
  NodeId MoeLayers;    ///< layers with experts (their all-to-alls)
  NodeId MoeImbalance; ///< busiest EP rank's tokens over the mean's
  /// Group-limited routing (0 and 0: none) and the dispatch's bytes over
  /// the activations' (wall 14).
  NodeId MoeGroups, MoeGroupsPerToken, MoeDispatchRatio;
  /// What the all-to-all gets across nodes: the scale-out bandwidth capped
  /// at a device's share of the bisection, and the far latency (wall 10).
  NodeId MoeInterBW, MoeInterLatency;
  NodeId StepOverhead, LayerOverhead; ///< a step's fixed costs (wall 3)
  NodeId Overlap; ///< GEMM arithmetic and weight reads overlapping (wall 3)
};

/// A request of a replayed trace (`simulate.trace`): when it arrives (s
/// from the trace's start), its prompt (its shared prefix included) and
/// output tokens, its prefix group (NoTraceGroup for none) and its class
/// (an index into SimInputs::Classes; NoTraceClass: drawn by the shares).
struct TraceRow {
  double Arrival = 0;
  uint32_t Prompt = 1, Output = 1;
  uint32_t Group = UINT32_MAX;
  uint32_t Class = UINT32_MAX;
};
inline constexpr uint32_t NoTraceGroup = UINT32_MAX, NoTraceClass = UINT32_MAX;
using Trace = std::vector<TraceRow>;

/// What the serving simulator needs of a scenario with a `simulate` block
/// (docs/simulator.md): its options, the replicas and their slots, the
/// load and its lengths, and the KV-cache tokens a replica holds.
struct SimInputs {
  NodeId Requests, Seed, Router, MaxBatchedTokens;
  /// Chunked prefill: the prompt tokens an iteration runs at most (the
  /// workload's `prefill_chunk`); invalid when the workload gives none.
  NodeId PromptChunk;
  NodeId Replicas, Slots, Arrival;
  NodeId Prompt, PromptCV, Output, OutputCV;
  /// Uniform lengths instead, when the block gives both ends.
  NodeId PromptMin, PromptMax, OutputMin, OutputMax;
  NodeId KVTokens;
  /// The arrival process (its code in SimArrivals) and its parameters;
  /// those it does not use are invalid.
  NodeId Arrivals, ArrivalCV, Burst, Silence, Amplitude, Period, Users, Think;
  /// An empirical histogram's bin: its weight and bounds (tokens).
  struct Bin {
    NodeId Weight, Lo, Hi;
  };
  /// Empirical histograms of the lengths instead, when given (else empty).
  std::vector<Bin> PromptHist, OutputHist;
  /// A request class: its share, lengths, targets (invalid: none) and
  /// priority.
  struct Class {
    std::string Name;
    NodeId Share, Prompt, PromptCV, Output, OutputCV, TTFTTarget, TPOTTarget,
        Priority;
    std::vector<Bin> PromptHist, OutputHist;
  };
  std::vector<Class> Classes;
  /// Shared prefixes (invalid without them) and prefix caching (a flag).
  NodeId PrefixGroups, PrefixTokens, PrefixShare, PrefixCaching;
  /// Multi-turn conversations (invalid without them): how many open at
  /// once, and the probability an arrival continues one.
  NodeId Sessions, SessionReuse;
  /// How often replicas are sampled (invalid: never).
  NodeId SampleEvery;
  NodeId WeightPrefix, WeightQueue, WeightKV; ///< the weighted router's
  /// Disaggregation (invalid without it): the prefill pool, a token's KV
  /// bytes on one link, the link's bandwidth and latency, and the prompts
  /// prefilled locally.
  NodeId PrefillReplicas, KVBytesPerToken, KVBandwidth, KVLatency, LocalBelow;
  /// A replayed trace (read when the scenario was lowered), its name as
  /// written and the prefix groups it names; none without one.
  std::shared_ptr<const Trace> Replay;
  std::string ReplayName;
  uint32_t ReplayGroups = 0;
  /// Autoscaling (invalid without it) and admission control (invalid
  /// parts are not used).
  NodeId ScaleMax, ScaleMin, ScaleSignal, ScaleUp, ScaleDown, ScaleStartUp,
      ScaleCooldown, ScaleInterval;
  /// Autoscaling of the prefill pool (invalid without it; the signal,
  /// cooldown and interval are the ones above).
  NodeId PrefillScaleMax, PrefillScaleMin, PrefillScaleUp, PrefillScaleDown,
      PrefillScaleStartUp;
  NodeId AdmitRate, AdmitBurst, ShedPriority, ShedQueue;
  /// KV tiers below HBM: each one's capacity (tokens), bandwidth, latency
  /// and sharing (a flag); a token's KV bytes on a replica.
  struct Tier {
    std::string Name;
    NodeId Capacity, Bandwidth, Latency, Shared;
  };
  std::vector<Tier> Tiers;
  NodeId TierBytesPerToken;
  /// Swap preemption (invalid: recompute): the swap space in KV tokens,
  /// its bandwidth and a token's KV bytes.
  NodeId SwapTokens, SwapBandwidth, SwapBytesPerToken;
  /// A declared linear step model (invalid: the walls' step model).
  NodeId StepFixed, StepPrefill, StepDecode, StepKV;
  /// Pipeline stages a replica runs (the workload's pp).
  NodeId Stages;
  /// Why the scenario is not simulated ("" when it is).
  std::string NotSimulated;
  /// The scenario has a `simulate` block (else the inputs were exported
  /// for `mlsc validate`, and `mlsc eval` does not simulate).
  bool Requested = false;
  /// Static batching (`batching = static`).
  bool Static = false;
  /// kv_allocation = to_completion: admission reserves a request's KV
  /// cache to the end of its output.
  bool ReserveToCompletion = false;
  /// Prompts run in iterations of their own, the decodes waiting: a
  /// colocated replica batching continuously with no `prefill_chunk`,
  /// as the closed forms read it (sim::Config::PromptsFirst).
  bool PromptsFirst = false;
  /// The model's context, and the cap on a request's output (`max_output`)
  /// an engine checks against it and a to_completion engine reserves;
  /// invalid: no context given, or each request's own output.
  NodeId ContextTokens, OutputCap;
  /// A request's time outside the engine (`overhead.request`), added to
  /// its simulated TTFT and E2E.
  NodeId RequestOverhead;
  /// A dispatcher's batches (`batcher.window`, `batcher.max_requests`, 0
  /// for no bound); invalid: each request dispatched at its arrival.
  NodeId BatcherWindow, BatcherMax;
};

struct Graph {
  std::string Scenario;
  llvm::SMRange ScenarioRange; ///< where the scenario's name is declared
  std::vector<Node> Nodes;     ///< topological: inputs precede users
  std::vector<uint32_t> Inputs;
  std::vector<LeafOrigin> Origins;
  std::vector<double> LeafValues; ///< per node; meaningful for leaves
  /// Every named node (metrics and the labels explain shows), by name.
  llvm::StringMap<NodeId> Named;
  /// The main file's lets that read this scenario's values, by name
  /// (lower-to-graph): `explain` of a let, `eval -e`.
  llvm::StringMap<NodeId> Lets;
  /// The node of each metric and phase metric; invalid when absent.
  std::vector<NodeId> MetricNodes = std::vector<NodeId>(NumMetrics, NodeId());
  std::vector<NodeId> PhaseNodes =
      std::vector<NodeId>(NumPhases * NumPhaseMetrics, NodeId());
  std::vector<MetricId> Metrics;     ///< public metrics, in table order
  std::vector<MetricId> Unavailable; ///< public metrics no wall computes
  std::vector<Condition> Conditions;
  std::vector<DomainCheck> DomainChecks;
  /// The phase whose times name the binding wall, when it is not the
  /// family's usual one: a request's prefill when the output is one token
  /// (there is no decode step).
  std::optional<PhaseId> MainPhase;
  /// Why the family's steps stopped without an error: a workload the
  /// lowering does not model yet (the scorecard says so); empty otherwise.
  std::string NotLowered;
  /// A decoder LLM trained: the family whose steps are lowered only in
  /// part (the walls that need no step model).
  bool DecoderTraining = false;
  /// A decoder's step model inputs; none for other workloads.
  std::optional<StepInputs> Step;
  /// Speculative decoding: the draft model's step inputs (its shape on the
  /// target's devices), its tokens a step (k) and their acceptance rate.
  struct DraftInputs {
    StepInputs Step;
    NodeId Tokens, Acceptance;
  };
  std::optional<DraftInputs> Draft;
  /// A `simulate` block's inputs; none without one.
  std::optional<SimInputs> Sim;

  const Node &node(NodeId N) const { return Nodes[N.index()]; }
  Node &node(NodeId N) { return Nodes[N.index()]; }
  NodeId inputOf(NodeId N, unsigned I) const {
    return NodeId(Inputs[node(N).FirstInput + I]);
  }
  size_t size() const { return Nodes.size(); }

  bool has(MetricId M) const {
    return MetricNodes[static_cast<unsigned>(M)].isValid();
  }
  std::optional<NodeId> find(MetricId M) const {
    NodeId N = MetricNodes[static_cast<unsigned>(M)];
    return N.isValid() ? std::optional<NodeId>(N) : std::nullopt;
  }
  /// The node of metric \p M; the graph must have it (a bug otherwise).
  NodeId get(MetricId M) const;

  bool has(PhaseId P, PhaseMetricId M) const {
    return PhaseNodes[phaseSlot(P, M)].isValid();
  }
  std::optional<NodeId> find(PhaseId P, PhaseMetricId M) const {
    NodeId N = PhaseNodes[phaseSlot(P, M)];
    return N.isValid() ? std::optional<NodeId>(N) : std::nullopt;
  }
  NodeId get(PhaseId P, PhaseMetricId M) const;

  /// A named node (a metric or a label), for user-facing lookups such as
  /// `mlsc explain SCENARIO.NAME`.
  std::optional<NodeId> findNamed(llvm::StringRef Name) const {
    auto It = Named.find(Name);
    return It == Named.end() ? std::nullopt : std::optional<NodeId>(It->second);
  }

  static unsigned phaseSlot(PhaseId P, PhaseMetricId M) {
    return static_cast<unsigned>(P) * NumPhaseMetrics +
           static_cast<unsigned>(M);
  }
};

} // namespace graph
} // namespace mlsc

#endif
