//===- Simulator.h - A discrete-event simulator of LLM serving -----*- C++
//-*-===//
//
// The serving simulator's core (docs/simulator.md): requests arrive
// (Poisson, Gamma, bursts, a diurnal curve or a closed loop), each of a
// class, a router sends each to a replica (or a prefill replica, whose
// KV cache then crosses to a decode replica), and each replica runs a
// vLLM-style continuous-batching scheduler - decodes first, then prompt
// chunks up to a token budget, admitting waiting requests while slots,
// budget and KV capacity allow (or, without chunked prefill, prompts in
// iterations of their own, the decodes waiting: Config::PromptsFirst). Every
// iteration's time comes from a step function over the iteration's shape
// (StepModel::shape, the same code the closed forms use), never from a copy of
// the walls.
//
// Seeded and deterministic: the same configuration and seed give the same
// result, bit for bit. Memory does not grow with the number of requests:
// arrivals are drawn one at a time, a request's slot is reused once it
// completes, and latencies go into fixed-size log-binned histograms (a
// percentile is within half a bin, 0.5%, of the exact one).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_SIM_SIMULATOR_H
#define MLSC_RUNTIME_SIM_SIMULATOR_H

#include "runtime/StepModel.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlsc::sim {

/// A distribution of token counts, at least 1.
struct Length {
  enum class Kind {
    Fixed,     ///< A
    Uniform,   ///< whole numbers from A to B
    Geometric, ///< on 1, 2, ...: mean A (success probability 1/A)
    Lognormal, ///< mean A, coefficient of variation B, rounded
    Empirical  ///< a bin drawn by its weight, then a whole number
               ///< uniformly within it (Bins)
  };
  Kind K = Kind::Fixed;
  double A = 1, B = 0;
  /// Empirical: each bin's bounds (whole tokens, Lo <= Hi) and the running
  /// sum of the weights up to it (what a draw searches).
  struct Bin {
    double Lo = 1, Hi = 1, Cumulative = 0;
  };
  std::vector<Bin> Bins = {};
  /// An empirical histogram of bins {Lo, Hi, Weight}.
  static Length empirical(const std::vector<Bin> &Weighted);
  double mean() const;
};

/// How requests arrive, at the configuration's mean `ArrivalRate`.
struct Arrivals {
  enum class Kind {
    Poisson, ///< exponential gaps
    Gamma,   ///< Gamma gaps of coefficient of variation CV (1: Poisson)
    OnOff,   ///< Poisson bursts of mean length On (exponential) between
             ///< silences of mean length Off; the rate in a burst is the
             ///< mean rate x (On + Off) / On
    Diurnal, ///< Poisson at rate x (1 + Amplitude sin(2 pi t / Period))
    Closed   ///< Users clients, each sending its next request an
             ///< exponential think time (mean Think) after the last
             ///< completes; no arrival rate
  };
  Kind K = Kind::Poisson;
  double CV = 1;
  double On = 0, Off = 0;
  double Amplitude = 0, Period = 0;
  unsigned Users = 0;
  double Think = 0;
};

/// A class of requests: its share of the arrivals, its lengths, its
/// service-level targets and its priority.
struct RequestClass {
  std::string Name;
  double Share = 1; ///< relative to the other classes' shares
  Length Prompt, Output;
  /// A request meets its class's targets when its TTFT is at most
  /// TTFTTarget and its TPOT at most TPOTTarget (0: no target).
  double TTFTTarget = 0, TPOTTarget = 0;
  /// A lower value is admitted first and preempted last (vLLM's priority
  /// scheduling).
  int Priority = 0;
};

/// Shared prompt prefixes (system prompts): a request opens with one of
/// Groups prefixes of Tokens tokens, each as likely, with probability
/// Share; its prompt is the prefix and its drawn length.
struct Prefixes {
  unsigned Groups = 0; ///< 0: no shared prefixes
  uint32_t Tokens = 0;
  double Share = 1;
};

/// Multi-turn conversations: at most Open at once. An arrival continues
/// an open conversation whose last turn has completed (one drawn at
/// random) with probability Reuse: its prompt is the conversation so far
/// (the last turn's prompt and output) and its new message (the drawn
/// prompt length), and a replica that served the conversation holds that
/// context in its prefix cache (vLLM's automatic prefix caching keeps a
/// finished request's blocks). Otherwise, or when the context would no
/// longer fit an empty replica's KV cache, it opens a new conversation,
/// in place of an idle one (drawn at random) once Open are open; when
/// every conversation has a turn in flight, it is a request on its own.
/// With shared Prefixes, a new conversation opens with one as a request
/// would (its first turn shares the system prompt's cache entry), and its
/// context holds it; a later turn that does not find its context on the
/// replica it is admitted to (in HBM or a tier) shares the system prompt
/// if that replica holds a computed copy in HBM. A cached context is a
/// copy: it holds the system prompt's tokens again, and is kept in HBM
/// only if it fits beside what is in use (else in a KV tier, if any).
struct Sessions {
  unsigned Open = 0; ///< 0: no conversations
  double Reuse = 0;
};

enum class Routing {
  RoundRobin,       ///< in turn
  LeastOutstanding, ///< the replica with the fewest requests, waiting or
                    ///< running
  SharedQueue,      ///< no routing at arrival: one queue, a request goes to
                    ///< the first replica with room when it starts an
                    ///< iteration (late binding; M/M/c's queue)
  Random,           ///< a replica drawn at random
  LeastKV,          ///< the replica with the fewest KV tokens in use
  PrefixAffinity,   ///< a replica that caches the request's prefix (the
                    ///< least outstanding of them), else least outstanding
  Weighted          ///< the best score: prefix hit, queue and KV weighted
                    ///< (llm-d's scorers)
};

/// "round_robin" (\p Symbol: as the language spells it) or "round robin".
const char *routingName(Routing R, bool Symbol);

/// The weighted router's weights (llm-d's scorers): the fraction of the
/// prompt a replica's prefix cache holds, its queue depth relative to the
/// other replicas' (1 for the shortest, 0 for the longest) and its free KV
/// cache.
struct ScorerWeights {
  double Prefix = 3, Queue = 2, KV = 0;
};

/// Prefill/decode disaggregation: PrefillReplicas replicas prefill and
/// send each prompt's KV cache to a decode replica over a fabric; a prompt
/// shorter than LocalBelow tokens is prefilled on its decode replica.
struct Disaggregation {
  unsigned PrefillReplicas = 0; ///< 0: every replica does both
  double BytesPerToken = 0;     ///< KV bytes a token sends on one link
  double Bandwidth = 0;         ///< of a replica's link, B/s
  double Latency = 0;           ///< of a transfer, s
  uint32_t LocalBelow = 0;
};

/// Autoscaling of the colocated (or decode) pool: every Interval seconds
/// the signal over the serving replicas - waiting requests a replica
/// (Queue), or running sequences over their slots (Utilisation) - adds a
/// replica (serving after StartUp) above Up, or drains one (it takes no new
/// request and stops when empty) below Down, within [Min, Max] and at
/// most one action a Cooldown.
struct Autoscaling {
  bool Enabled = false;
  enum class Signal { Queue, Utilisation } On = Signal::Queue;
  double Up = 0, Down = 0;
  unsigned Min = 1, Max = 1;
  double StartUp = 0, Cooldown = 0, Interval = 1;
};

/// Admission control at arrival: a token bucket (Rate requests a second,
/// Burst at most; Rate 0: none) sheds what it has no token for, and when
/// more than ShedQueue requests wait a serving replica, requests of
/// classes whose priority is ShedPriority or more are shed (ShedPriority
/// -1: none).
struct Admission {
  double Rate = 0, Burst = 1;
  int ShedPriority = -1;
  double ShedQueue = 0;
};

/// A tier of the KV cache below HBM (host DRAM, local NVMe, a shared
/// store): prefixes evicted from HBM are written to the first tier, and
/// from a full tier to the next (least recently used first); a request
/// whose prefix a tier holds loads it into HBM (Latency plus its bytes over
/// Bandwidth, loads queued on the tier's link) instead of computing it. A
/// Shared tier is one for every replica; others are a replica's own.
struct KVTier {
  std::string Name;
  double CapacityTokens = 0, Bandwidth = 0, Latency = 0;
  bool Shared = false;
};

/// A dispatcher in front of the router that sends requests in batches (an
/// MLPerf harness's batcher, Triton's dynamic batcher): a batch opens with
/// a request (past admission control), collects the requests that arrive
/// for its pool until its first has waited Window seconds, or at once when
/// it holds MaxRequests (0: no bound), and goes to one replica, chosen by
/// the router for its first request, or to the pool's shared queue.
/// Window 0: each request is routed at its arrival.
struct Batcher {
  double Window = 0;
  unsigned MaxRequests = 0;
};

enum class Preemption { Recompute, Swap };

/// An iteration's time from its shape.
using StepFunction = std::function<double(const StepShape &)>;

/// Speculative decoding (Leviathan et al., ICML 2023): each iteration a
/// draft model proposes Tokens (k) tokens for every decoding sequence, one
/// draft step after another, and the target verifies them in one pass of
/// k + 1 tokens a sequence; a sequence emits E = (1 - a^(k+1)) / (1 - a)
/// tokens an iteration on average (a the Acceptance rate). The simulator
/// emits them deterministically: floor((i + 1) E) - floor(i E) at the
/// replica's iteration i, the same for every sequence, so that E is met
/// over any run of iterations (the acceptance's spread is not drawn).
/// Draft times the draft's steps; none with a linear step model, which is
/// taken to include them.
struct Speculation {
  unsigned Tokens = 0; ///< 0: no speculative decoding
  double Acceptance = 0;
  StepFunction Draft;
};

struct Config {
  unsigned Replicas = 1;          ///< colocated replicas, or the decode pool's
  unsigned MaxSequences = 256;    ///< running sequences a replica holds
  double MaxBatchedTokens = 8192; ///< new tokens an iteration runs
  /// Chunked prefill: the prompt tokens an iteration runs at most, within
  /// MaxBatchedTokens (Sarathi-Serve's chunk; the workload's
  /// `prefill_chunk`); 0: only MaxBatchedTokens bounds them.
  double PromptChunk = 0;
  /// Prompts before decodes, in iterations of their own (vLLM V0's and
  /// SGLang's schedulers without chunked prefill; the closed forms'
  /// reading of a workload without `prefill_chunk`): when a prompt can be
  /// admitted, or one is part-way through its prefill, the iteration runs
  /// the prompts alone, up to MaxBatchedTokens, and the decodes wait for
  /// the next. false: every iteration runs the decodes, and prompts ride
  /// in the token budget they leave (vLLM V1, TensorRT-LLM's in-flight
  /// batching). Ignored by static batching. An iteration a swapped-in
  /// request joins runs the decodes too (after the prompts).
  bool PromptsFirst = false;
  /// KV-cache tokens a replica holds: a request takes its prompt's when
  /// admitted and one a decoded token; when the cache runs out unused
  /// cached prefixes are evicted, then a running request is preempted
  /// (recomputed later; preemptOne says which). 0: unlimited.
  double KVCapacityTokens = 0;
  double ArrivalRate = 1; ///< requests a second, on average
  Arrivals Arrive;
  /// The lengths of a scenario without classes (one class, no targets).
  Length Prompt, Output;
  /// Request classes; none: one, of Prompt and Output.
  std::vector<RequestClass> Classes;
  Prefixes Prefix;
  Sessions Session;
  /// A trace to replay instead of drawing arrivals and lengths: its
  /// requests in arrival order (the first Requests of them), their prefix
  /// groups (of Prefix.Tokens tokens, already in their prompts; Prefix.Groups
  /// of them) and classes (drawn by the shares where it names none).
  std::shared_ptr<const graph::Trace> Replay;
  std::string ReplayName; ///< as the scenario names it
  /// Cached prefixes are kept in the KV cache while it has room (vLLM's
  /// automatic prefix caching): a request whose prefix a replica holds
  /// computes only the rest of its prompt.
  bool PrefixCaching = true;
  uint64_t Requests = 10000;
  uint64_t Seed = 1;
  Routing Route = Routing::RoundRobin;
  ScorerWeights Weights;
  Disaggregation Disagg;
  Autoscaling Scale;
  /// Autoscaling of a disaggregated platform's prefill pool (its
  /// replicas the starting count), on the same signals over that pool.
  Autoscaling PrefillScale;
  Admission Admit;
  /// KV tiers below HBM, first tier first, and a token's KV bytes on a
  /// replica (what a load moves).
  std::vector<KVTier> Tiers;
  double TierBytesPerToken = 0;
  /// What a preempted decoding request loses: its KV cache, recomputed
  /// later (vLLM's default), or nothing, its cache swapped to the
  /// replica's swap space (SwapTokens of it) over the host link
  /// (SwapBandwidth, SwapBytesPerToken a token) and back when it is
  /// readmitted. A prompt preempted mid-prefill is recomputed either way.
  Preemption Preempt = Preemption::Recompute;
  double SwapTokens = 0, SwapBandwidth = 0, SwapBytesPerToken = 0;
  Speculation Speculate;
  /// Static (request-level) batching: a replica admits a batch only when
  /// it is empty, as many requests as slots and a cache that holds every
  /// sequence grown to the batch's longest output allow, prefills their
  /// prompts in one pass and decodes them together until the longest
  /// ends (the others padding), when every request of the batch completes
  /// (Orca, OSDI 2022, section 2).
  bool Static = false;
  /// kv_allocation = to_completion (TensorRT-LLM's GUARANTEED_NO_EVICT
  /// capacity scheduler): a request is admitted only while the cache holds
  /// every running request's reservation, its prompt (or the context it
  /// arrives with) and the rest of its output, and its own beside them; the
  /// cache never runs out, so nothing is preempted.
  bool ReserveToCompletion = false;
  /// The model's context (tokens; 0: none). An engine refuses a request
  /// whose prompt and output, or prompt and OutputCap, exceed it (vLLM and
  /// SGLang check prompt + max_tokens against the model's length).
  double ContextTokens = 0;
  /// The cap on a request's output (the engine's max_tokens, `max_output`):
  /// what it checks against the context, where a drawn output stops, and
  /// what a to_completion engine reserves; 0: each request's own output.
  double OutputCap = 0;
  /// Time a request spends outside the engine (s; `overhead.request`):
  /// its HTTP server, its prompt's tokenization, the hops to the engine.
  /// Added once to each request's TTFT and E2E as a client measures them
  /// (and so to the goodput's targets and the requests in the system);
  /// the engine's queues and steps never see it.
  double RequestOverhead = 0;
  /// Requests dispatched in batches (`batcher.window`).
  Batcher Batch;
  /// Pipeline parallelism: each replica is PipelineStages stages, run as
  /// vLLM V0 runs them, as that many virtual engines, each with its own
  /// scheduler, its share of the replica's MaxSequences slots (B / P, the
  /// first B % P engines one more; B >= P), 1/PipelineStages of its KV
  /// cache, and the whole token budget. An engine's iteration
  /// (Step: through every stage) takes Step / PipelineStages on each
  /// stage in turn, the stages shared by the engines first come, first
  /// served (a flow shop), so that while one engine's micro-batch is on a
  /// stage the others' are on the rest. The router sees the engines as
  /// replicas; results name the replica (Result::Replicas adds its
  /// engines up). Not with disaggregation, autoscaling, KV tiers or
  /// speculative decoding (refused).
  unsigned PipelineStages = 1;
  /// Every SampleEvery seconds of simulated time, each replica's state
  /// (Result::Replicas); 0: none.
  double SampleEvery = 0;
  /// For tests: after every event, recount each replica's KV cache, prefix
  /// entries and tiers from scratch and throw std::logic_error when the
  /// running figures disagree (a cost that grows with the requests in
  /// flight; never set by a scenario).
  bool CheckInvariants = false;
};

/// One request, as the per-request record gives it (times in seconds from
/// the first arrival; TTFT and E2E 0 for a rejected request).
struct RequestRecord {
  uint64_t Id = 0;
  unsigned Class = 0;
  double Arrival = 0, TTFT = 0, E2E = 0;
  uint32_t Prompt = 0, Output = 0, CachedPrompt = 0, Preemptions = 0;
  unsigned Replica = 0;
  bool Rejected = false, Shed = false, MetTargets = false;
};

/// A calibrated linear step model (Vidur's and BLIS's kind): an iteration
/// takes Fixed + Prefill x its prompt tokens + Decode x its decode tokens
/// + KV x the KV tokens it reads, seconds.
struct LinearStep {
  double Fixed = 0, Prefill = 0, Decode = 0, KV = 0;
  double operator()(const StepShape &S) const {
    return Fixed + Prefill * (S.Tokens - S.DecodeTokens) +
           Decode * S.DecodeTokens + KV * S.ContextTokens;
  }
};

/// Latencies in log-spaced bins 1% wide, from 1 ns to 10^12 s: fixed
/// memory, a quantile within 0.5% (half a bin) of the exact one; the mean
/// is exact. A quantile among the samples beyond 10^12 s is +inf.
class Histogram {
public:
  Histogram();
  void add(double Seconds, uint64_t Count = 1);
  uint64_t count() const { return N; }
  double mean() const { return N ? Sum / static_cast<double>(N) : 0; }
  /// The value below which a fraction \p Q of the samples lie.
  double quantile(double Q) const;

private:
  std::vector<uint64_t> Bins;
  uint64_t Over = 0; ///< samples past the last bin
  uint64_t N = 0;
  double Sum = 0;
};

struct Stats {
  uint64_t Count = 0;
  double Mean = 0, P50 = 0, P90 = 0, P99 = 0, P999 = 0;
};

/// A class's figures.
struct ClassResult {
  std::string Name;
  Stats TTFT, TPOT, E2E;
  uint64_t Completed = 0, Rejected = 0, Shed = 0;
  uint64_t MetTargets = 0; ///< completed within its targets (0 without)
  double Goodput = 0;      ///< MetTargets over the makespan, req/s
};

struct Result {
  /// Time to first token; time per output token of each request, (E2E -
  /// TTFT) / (output - 1); gaps between tokens; end to end; waiting for a
  /// slot.
  Stats TTFT, TPOT, ITL, E2E, QueueWait;
  /// Every request that arrives completes, is rejected (its prompt and
  /// output would not fit an empty replica's KV cache, or exceed the
  /// model's context) or is shed by admission control.
  uint64_t Shed = 0;
  uint64_t Arrived = 0, Completed = 0, Rejected = 0, OutputTokens = 0,
           Iterations = 0;
  /// Of the rejected, those longer than the model's context.
  uint64_t RejectedContext = 0;
  /// Requests preempted when the KV cache ran out, each counted every time
  /// (vLLM's recompute: it runs its prompt and output so far again).
  uint64_t Preemptions = 0;
  double PeakKVTokens = 0;    ///< the most KV tokens a replica held at once
                              ///< (its engines' together)
  double Makespan = 0;        ///< first arrival to last completion
  double Throughput = 0;      ///< output tokens a second over the makespan
  double MeanInSystem = 0;    ///< time-average requests in the system (L)
  double ArrivalRateSeen = 0; ///< completed requests over the makespan
  /// Sequences an iteration that runs the decodes, averaged over those
  /// iterations' time (under PromptsFirst an iteration of prompts alone is
  /// not counted).
  double MeanBatch = 0;
  /// Per class, in the configuration's order (one without classes).
  std::vector<ClassResult> Classes;
  /// Completed requests of classes with targets, those within them, and
  /// those a second over the makespan (the goodput).
  uint64_t WithTargets = 0, MetTargets = 0;
  double Goodput = 0;
  /// The requests' prompt tokens and those a prefix cache held, at each
  /// request's first admission.
  double PromptTokens = 0, CachedTokens = 0;
  double PrefixHitRate = 0; ///< CachedTokens / PromptTokens
  /// Busy time over replicas x makespan; KV tokens held over capacity,
  /// time-averaged (0 for an unlimited cache).
  double Utilisation = 0, KVUtilisation = 0;
  /// Disaggregation: KV transfers, their time (queueing on the links
  /// included) and the prompts prefilled on their decode replica.
  uint64_t Transfers = 0, LocalPrefills = 0;
  Stats Transfer;
  /// KV tiers: the prompt tokens each tier's loads served (at first
  /// admissions; CachedTokens less their sum were HBM's), the loads and
  /// their time (queueing on the tier's link included).
  std::vector<double> TierHitTokens;
  uint64_t Loads = 0;
  Stats Load;
  /// Swap preemption: requests swapped out and back in.
  uint64_t SwapOuts = 0, SwapIns = 0;
  /// Conversations opened, and requests that continued one.
  uint64_t Conversations = 0, FollowUps = 0;
  /// Autoscaling: replicas added and drained, the time-average and peak
  /// replicas (serving, starting or draining) of the scaled pool, and a
  /// sample at each decision (at most MaxTimeline of them).
  uint64_t ScaleUps = 0, ScaleDowns = 0;
  double MeanReplicas = 0, PeakReplicas = 0;
  /// The same for the prefill pool when it scales.
  uint64_t PrefillScaleUps = 0, PrefillScaleDowns = 0;
  double MeanPrefillReplicas = 0, PeakPrefillReplicas = 0;
  struct Sample {
    double Time = 0; ///< from the first arrival
    unsigned Serving = 0, Starting = 0;
    double Signal = 0;    ///< the autoscaler's signal then
    bool Prefill = false; ///< the prefill pool's autoscaler
  };
  std::vector<Sample> Timeline;
  static constexpr size_t MaxTimeline = 100000;
  /// A replica's state at a sample (Config::SampleEvery): its busy share
  /// of the interval just ended, the sequences running, the requests
  /// waiting and its KV cache in use (tokens requests hold, over the
  /// capacity; 0 without one). Off replicas are not sampled.
  struct ReplicaSample {
    double Time = 0; ///< from the first arrival
    unsigned Replica = 0;
    bool Prefill = false; ///< of a disaggregated platform's prefill pool
    bool Starting = false, Draining = false;
    double Busy = 0, KV = 0;
    unsigned Running = 0, Waiting = 0;
  };
  std::vector<ReplicaSample> Replicas;
  bool ReplicasTruncated = false; ///< more than MaxReplicaSamples
  static constexpr size_t MaxReplicaSamples = 1000000;
};

/// Called for each request when it completes or is rejected.
using RequestSink = std::function<void(const RequestRecord &)>;

/// Runs \p C to completion: every request arrives and completes or is
/// rejected.
/// Throws std::invalid_argument for a configuration it cannot run.
Result simulate(const Config &C, const StepFunction &Step,
                const RequestSink &Sink = nullptr);

/// A scenario's simulation: the configuration its `simulate` block and
/// graph gave, and what it found.
struct Simulated {
  Config Cfg;
  Result R;
  /// The scenario's linear step model, when it declares one instead of
  /// the walls' step model.
  std::optional<LinearStep> Linear;
};

/// Simulates the scenario of an evaluated graph with a `simulate` block,
/// timing iterations with its step model; none without a block, or, with
/// \p Why set, when the scenario cannot be simulated yet.
/// \p Sink, when set, receives each simulated request.
std::optional<Simulated> simulateScenario(const Evaluator &E, std::string &Why,
                                          const RequestSink &Sink = nullptr);

/// Whether the graph has the simulated metrics (a `simulate` block) and
/// one of \p Nodes depends on them.
bool readsSimulated(const graph::Graph &G, llvm::ArrayRef<graph::NodeId> Nodes);

/// Simulates the scenario at the evaluator's current point (not when it
/// does not fit: \p Why says so), sets the simulated metrics' leaves
/// (NaN for what was not simulated) and re-evaluates what depends on
/// them. Does nothing without a `simulate` block.
std::optional<Simulated> simulateInto(Evaluator &E, std::string &Why,
                                      const RequestSink &Sink = nullptr);

} // namespace mlsc::sim

#endif
