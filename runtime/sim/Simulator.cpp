//===- Simulator.cpp - A discrete-event simulator of LLM serving ----------===//
//
// Events are arrivals, the ends of replicas' iterations and the landings
// of KV-cache transfers, in time order (ties by creation order, so runs
// are reproducible). A replica's decoding sequences advance one token an
// iteration together, so the replica keeps their count, the sum of their
// contexts and a heap of the iterations they finish in, instead of
// visiting each one every iteration.
//
//===----------------------------------------------------------------------===//

#include "runtime/sim/Simulator.h"
#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <limits>
#include <list>
#include <numbers>
#include <queue>
#include <random>
#include <stdexcept>
#include <tuple>

namespace mlsc::sim {

namespace {

constexpr double MinSeconds = 1e-9, BinWidth = 0.01;
const double LogStep = std::log1p(BinWidth);
constexpr size_t NumBins = 4860; // 1 ns x 1.01^4860 > 10^12 s
constexpr uint32_t NoGroup = std::numeric_limits<uint32_t>::max();

/// Uniform on [0, 1) from the engine's 53 high bits: the same numbers on
/// every platform (std::mt19937_64 is specified exactly; the standard
/// distributions are not).
class Rng {
public:
  explicit Rng(uint64_t Seed) : E(Seed) {}
  double uniform() { return static_cast<double>(E() >> 11) * 0x1.0p-53; }
  double exponential(double Rate) { return -std::log1p(-uniform()) / Rate; }
  double normal() {
    // Box-Muller, one of the pair.
    double U1 = uniform(), U2 = uniform();
    return std::sqrt(-2 * std::log1p(-U1)) *
           std::cos(2 * std::numbers::pi * U2);
  }
  /// Gamma of shape K and scale 1: Marsaglia and Tsang, "A simple method
  /// for generating gamma variables", ACM TOMS 26(3), 2000; a shape below
  /// 1 through Gamma(K + 1) U^(1/K).
  double gamma(double K) {
    if (K < 1)
      return gamma(K + 1) * std::pow(uniform(), 1 / K);
    double D = K - 1.0 / 3, C = 1 / std::sqrt(9 * D);
    for (;;) {
      double X = normal(), V = 1 + C * X;
      if (V <= 0)
        continue;
      V = V * V * V;
      double U = uniform();
      if (U < 1 - 0.0331 * X * X * X * X ||
          std::log(U) < 0.5 * X * X + D * (1 - V + std::log(V)))
        return D * V;
    }
  }

private:
  std::mt19937_64 E;
};

uint32_t draw(const Length &L, Rng &R) {
  double V = L.A;
  switch (L.K) {
  case Length::Kind::Fixed:
    break;
  case Length::Kind::Uniform:
    V = L.A + std::floor(R.uniform() * (L.B - L.A + 1));
    break;
  case Length::Kind::Geometric: {
    // P(k) = p (1 - p)^(k - 1), k >= 1.
    double P = 1 / L.A;
    V = P >= 1 ? 1 : 1 + std::floor(std::log1p(-R.uniform()) / std::log1p(-P));
    break;
  }
  case Length::Kind::Lognormal: {
    double S2 = std::log1p(L.B * L.B);
    double Mu = std::log(L.A) - S2 / 2;
    V = std::round(std::exp(Mu + std::sqrt(S2) * R.normal()));
    break;
  }
  case Length::Kind::Empirical: {
    double U = R.uniform() * L.Bins.back().Cumulative;
    auto It = std::upper_bound(
        L.Bins.begin(), L.Bins.end(), U,
        [](double X, const Length::Bin &B) { return X < B.Cumulative; });
    const Length::Bin &B = It == L.Bins.end() ? L.Bins.back() : *It;
    V = B.Lo + std::floor(R.uniform() * (B.Hi - B.Lo + 1));
    break;
  }
  }
  return static_cast<uint32_t>(std::clamp(V, 1.0, 4.0e9));
}

struct Request {
  double Arrival = 0, FirstToken = 0, LastToken = 0;
  uint64_t Id = 0;
  uint32_t Prompt = 0, Output = 0;
  /// The tokens its next prefill runs: the prompt, and after a preemption
  /// the prompt and the tokens generated so far (recomputed, as vLLM's
  /// default preemption does); Done of them have run (a cached prefix's
  /// from the start).
  uint32_t Prefill = 0, Done = 0;
  uint32_t Generated = 0; ///< output tokens emitted
  uint32_t Reserved = 0;  ///< to_completion: the KV tokens it reserved
  /// The tokens its decode runs to: its output, or a static batch's
  /// longest (the rest padding).
  uint32_t Until = 0;
  /// While decoding: the iteration it joined, its context then and the
  /// tokens it had generated then.
  uint64_t JoinIter = 0;
  uint32_t JoinCtx = 0, JoinGenerated = 0;
  uint32_t Group = NoGroup; ///< its shared prefix, or its conversation's
  uint32_t GroupGen = 0;    ///< its conversation's generation (0: a prefix)
  /// A conversation's turn: the conversation's entry and generation. Its
  /// Group is that entry, or the conversation's shared prefix (a system
  /// prompt) while its context is not cached where it runs.
  uint32_t Session = NoGroup, SessionGen = 0;
  uint32_t Cached = 0; ///< prompt tokens a prefix cache held
  uint32_t Preempted = 0;
  uint32_t Gen = 0; ///< bumped when it leaves a replica's running set
  uint16_t Class = 0;
  uint8_t Level = 0; ///< its class's priority rank, 0 first
  bool Decoding = false;
  bool Waited = false;  ///< its wait for a slot is recorded (once)
  bool Shared = false;  ///< it holds a reference on its cached prefix
  bool KVReady = false; ///< its prompt's KV cache arrived from a prefill
                        ///< replica: it joins the decodes
  bool Swapped = false; ///< preempted to the replica's swap space
  uint32_t SwapCtx = 0; ///< the KV tokens it swapped out
  unsigned Replica = 0;
};

/// A request's slot, reused once it completes.
using Slot = uint32_t;

struct Chunk {
  Slot S;
  uint32_t Tokens;
};

/// Waiting requests, by priority level, each level first come first
/// served.
class WaitQueue {
public:
  void setLevels(size_t N) { Levels.resize(N); }
  bool empty() const { return Size == 0; }
  size_t size() const { return Size; }
  void pushBack(Slot S, unsigned Level) {
    Levels[Level].push_back(S);
    ++Size;
  }
  void pushFront(Slot S, unsigned Level) {
    Levels[Level].push_front(S);
    ++Size;
  }
  Slot front() const {
    for (const auto &L : Levels)
      if (!L.empty())
        return L.front();
    assert(false && "front of an empty queue");
    return 0;
  }
  void popFront() {
    for (auto &L : Levels)
      if (!L.empty()) {
        L.pop_front();
        --Size;
        return;
      }
  }

private:
  std::vector<std::deque<Slot>> Levels;
  size_t Size = 0;
};

/// A shared prefix in a replica's cache: resident (its KV held), ready
/// (computed; a request computing it holds it before), and referenced by
/// the running requests that use it; an unreferenced resident prefix is on
/// the replica's LRU list, evicted when the cache needs room.
struct PrefixEntry {
  uint32_t Refs = 0;
  /// The tokens it holds (a shared prefix's, or a conversation's context
  /// when a turn left the replica) and the conversation's generation: an
  /// entry of a generation since closed is no one's prefix.
  uint32_t Tokens = 0, Gen = 0;
  bool Resident = false, Ready = false;
  std::list<uint32_t>::iterator Lru;
};

/// What one KV tier below HBM holds: prefixes (their tokens, 0: none, and
/// generations), least recently used first, and when its link is next
/// free.
struct TierCache {
  std::vector<uint32_t> In, InGen;
  std::vector<std::list<uint32_t>::iterator> Pos;
  std::list<uint32_t> Lru;
  double Used = 0, LinkFree = 0;
};

/// A conversation: its context so far (the last turn's prompt and
/// output), its generation (bumped when another conversation takes its
/// place) and whether a turn of it is in flight.
struct Conversation {
  uint64_t Context = 0;
  uint32_t Gen = 0;
  uint32_t Prefix = NoGroup; ///< the shared prefix it opens with, if any
  bool Busy = false;
  uint32_t IdleAt = 0; ///< its place in the idle list
};

struct Replica {
  WaitQueue Waiting;
  std::deque<Slot> Prefilling;
  double Decoding = 0;  ///< sequences decoding
  double DecodeCtx = 0; ///< the cached tokens of their next step, summed
  /// (finishing iteration, slot, generation), earliest first; entries of a
  /// request preempted since are stale.
  std::priority_queue<std::tuple<uint64_t, Slot, uint32_t>,
                      std::vector<std::tuple<uint64_t, Slot, uint32_t>>,
                      std::greater<>>
      Finishing;
  /// Running requests in admission order (slot, generation), for
  /// preemption from the newest; entries of requests gone since are stale.
  std::deque<std::pair<Slot, uint32_t>> Admitted;
  /// The decodes' iterations so far (every iteration but, under
  /// PromptsFirst, those of prompts alone): what a decoding request's
  /// JoinIter and its Finishing entry count in.
  uint64_t Iter = 0;
  unsigned Running = 0;  ///< admitted and not complete
  unsigned Incoming = 0; ///< KV transfers on their way here
  double KVUsed = 0;     ///< tokens whose KV the cache holds
  double Reserved = 0;   ///< to_completion: its running requests' reservations
  bool Busy = false;
  bool PrefillOnly = false;
  /// Autoscaling: serving (routed to), starting (not yet), draining (no new
  /// request; off once empty) or off.
  enum class State : uint8_t { Serving, Starting, Draining, Off };
  State St = State::Serving;
  unsigned Pool = 0;
  double Started = 0, DecodersNow = 0;
  /// This iteration runs prompts alone (Config::PromptsFirst): the
  /// decodes wait, and Iter (which counts the decodes' iterations) stays.
  bool PromptsAlone = false;
  /// PromptsFirst: when the decodes last emitted, and the first tokens
  /// given since by iterations of prompts alone (when, how many): the
  /// gaps the next decode iteration ends.
  double DecodedAt = 0;
  std::vector<std::pair<double, double>> Fresh;
  std::vector<Chunk> Chunks;    ///< this iteration's prompt chunks
  std::vector<Slot> Joined;     ///< transferred requests' first decodes
  std::vector<Slot> Loading;    ///< admitted, their prefix loading from a tier
  std::vector<Slot> SwappedIn;  ///< swapped back in this iteration
  double SwapUsed = 0;          ///< KV tokens in its swap space
  double SwapBytes = 0;         ///< KV bytes this iteration copies in or out
  std::vector<TierCache> Tiers; ///< its own KV tiers (by tier index)
  std::vector<PrefixEntry> Prefix; ///< by group
  std::list<uint32_t> Idle;        ///< unreferenced prefixes, oldest first
  double IdleTokens = 0;
  double LinkFree = 0; ///< when its link is next free (disaggregation)
  double BusyTime = 0, KVArea = 0;
  double Ends = 0;    ///< when its iteration under way ends
  double Took = 0;    ///< that iteration's time (the busy time it adds)
  unsigned Slots = 0; ///< running sequences it holds at most
  /// Static batching: the iterations in which the batch's sequences
  /// emit their last real token (earliest first), and the sequences
  /// decoding past it (padding until the batch's longest ends).
  /// (iteration, slot, generation); an entry of a slot reused since is
  /// stale.
  std::priority_queue<std::tuple<uint64_t, Slot, uint32_t>,
                      std::vector<std::tuple<uint64_t, Slot, uint32_t>>,
                      std::greater<>>
      RealEnds;
  double Padding = 0;
};

/// Replicas that serve the same requests: every replica, or under
/// disaggregation the decode pool (0) and the prefill pool (1).
struct Pool {
  unsigned First = 0, Count = 0;
  bool UsesShared = false; ///< a shared queue instead of routing
  WaitQueue Shared;
  unsigned Next = 0; ///< round robin's next
};

enum class EventKind : uint8_t {
  Arrival,
  IterationEnd,
  KVArrived,
  KVLoaded, ///< a prefix a KV tier held is in HBM
  Scale,    ///< the autoscaler decides
  Sample,   ///< every replica's state is sampled
  Ready,    ///< a replica the autoscaler started serves
  Dispatch  ///< a batcher's window closes (Config::Batch)
};

struct Event {
  double Time;
  uint64_t Seq;
  EventKind Kind;
  unsigned Replica;
  Slot S;
  uint32_t Gen; ///< KVLoaded: the request's generation when it started
  bool operator>(const Event &O) const {
    return Time != O.Time ? Time > O.Time : Seq > O.Seq;
  }
};

Stats stats(const Histogram &H) {
  Stats S;
  S.Count = H.count();
  if (!S.Count)
    return S;
  S.Mean = H.mean();
  S.P50 = H.quantile(0.5);
  S.P90 = H.quantile(0.9);
  S.P99 = H.quantile(0.99);
  S.P999 = H.quantile(0.999);
  return S;
}

struct ClassHistograms {
  Histogram TTFT, TPOT, E2E;
  uint64_t Completed = 0, Rejected = 0, Met = 0, Shed = 0;
};

class Simulation {
public:
  /// \p ReplicaSlots: under pipeline parallelism (Cfg's replicas its
  /// engines), a replica's slots, shared out among its engines.
  Simulation(const Config &Cfg, const StepFunction &Step,
             const RequestSink &Sink, unsigned ReplicaSlots = 0)
      : C(Cfg), PromptsFirst(Cfg.PromptsFirst && !Cfg.Static), Step(Step),
        Sink(Sink), R(Cfg.Seed) {
    SessionBase = C.Prefix.Groups;
    Groups = C.Prefix.Groups + C.Session.Open;
    Classes = C.Classes;
    if (Classes.empty()) {
      RequestClass One;
      One.Prompt = C.Prompt;
      One.Output = C.Output;
      Classes.push_back(One);
    }
    for (const RequestClass &K : Classes)
      TotalShare += K.Share;
    // Priority levels: the classes' distinct priorities, lowest first.
    std::vector<int> Ps;
    for (const RequestClass &K : Classes)
      Ps.push_back(K.Priority);
    std::sort(Ps.begin(), Ps.end());
    Ps.erase(std::unique(Ps.begin(), Ps.end()), Ps.end());
    NumLevels = Ps.size();
    for (const RequestClass &K : Classes)
      LevelOf.push_back(static_cast<uint8_t>(
          std::lower_bound(Ps.begin(), Ps.end(), K.Priority) - Ps.begin()));
    PerClass.resize(Classes.size());
    Stages = std::max(1u, C.PipelineStages);
    Disaggregated = C.Disagg.PrefillReplicas > 0;
    // An autoscaled pool has room for its most replicas; those beyond the
    // starting count are off.
    unsigned First = C.Replicas;
    if (C.Scale.Enabled)
      First = std::clamp(C.Replicas, C.Scale.Min, C.Scale.Max);
    unsigned Cap = C.Scale.Enabled ? C.Scale.Max : C.Replicas;
    unsigned PrefillFirst = C.Disagg.PrefillReplicas;
    if (C.PrefillScale.Enabled)
      PrefillFirst =
          std::clamp(PrefillFirst, C.PrefillScale.Min, C.PrefillScale.Max);
    unsigned PrefillCap =
        C.PrefillScale.Enabled ? C.PrefillScale.Max : C.Disagg.PrefillReplicas;
    unsigned N = Cap + PrefillCap;
    Replicas.resize(N);
    if (Stages > 1)
      StageFree.assign(N, 0);
    Pools.resize(Disaggregated ? 2 : 1);
    Pools[0] = {0, Cap, C.Route == Routing::SharedQueue && !Disaggregated,
                WaitQueue(), 0};
    if (Disaggregated)
      Pools[1] = {Cap, PrefillCap, C.Route == Routing::SharedQueue, WaitQueue(),
                  0};
    Bucket = C.Admit.Burst;
    for (const KVTier &T : C.Tiers)
      SharedTiers.push_back(T.Shared ? tierFor() : TierCache());
    TierHits.assign(C.Tiers.size(), 0);
    for (Pool &Pl : Pools)
      Pl.Shared.setLevels(NumLevels);
    Caching =
        C.PrefixCaching &&
        ((C.Prefix.Groups > 0 && C.Prefix.Tokens > 0) || C.Session.Open > 0);
    Conversations.resize(C.Session.Open);
    if ((Spec = C.Speculate.Tokens > 0)) {
      PerStep = walls::speculativeTokensPerStep(
                    q::in<q::Number>(C.Speculate.Acceptance),
                    q::in<q::Number>(C.Speculate.Tokens))
                    .value();
      Verify = C.Speculate.Tokens + 1.0;
    }
    for (unsigned I = 0; I < N; ++I) {
      Replica &P = Replicas[I];
      P.Waiting.setLevels(NumLevels);
      // A pipelined replica's B slots: B / P an engine, the first B % P
      // engines one more.
      P.Slots = Stages > 1 ? ReplicaSlots / Stages +
                                 (I % Stages < ReplicaSlots % Stages)
                           : C.MaxSequences;
      P.Pool = I < Cap ? 0 : 1;
      P.PrefillOnly = P.Pool == 1;
      if (P.Pool == 0 && I >= First)
        P.St = Replica::State::Off;
      if (P.Pool == 1 && I - Cap >= PrefillFirst)
        P.St = Replica::State::Off;
      if (Caching)
        P.Prefix.resize(Groups);
      if (Caching)
        for (const KVTier &T : C.Tiers)
          P.Tiers.push_back(T.Shared ? TierCache() : tierFor());
    }
  }

  Result run() {
    for (size_t K = 0; K < Pools.size(); ++K) {
      for (unsigned I = Pools[K].First; I < Pools[K].First + Pools[K].Count;
           ++I)
        Scaled[K] += Replicas[I].St != Replica::State::Off;
      PeakScaled[K] = Scaled[K];
    }
    if (C.Scale.Enabled)
      push(C.Scale.Interval, EventKind::Scale, 0);
    if (C.PrefillScale.Enabled && Disaggregated)
      push(C.PrefillScale.Interval, EventKind::Scale, 1);
    if (C.SampleEvery > 0) {
      LastBusy.assign(Replicas.size(), 0);
      push(C.SampleEvery, EventKind::Sample, 0);
    }
    if (C.Replay) {
      if (toServe() > 0)
        issue((*C.Replay)[0].Arrival);
    } else if (C.Arrive.K == Arrivals::Kind::Closed) {
      for (unsigned U = 0; U < C.Arrive.Users && Issued < C.Requests; ++U)
        issue(think());
    } else {
      if (C.Arrive.K == Arrivals::Kind::OnOff)
        BurstEnd = R.exponential(1 / C.Arrive.On);
      issue(nextArrival(0));
    }
    while (!Events.empty()) {
      Event E = Events.top();
      Events.pop();
      advance(E.Time);
      switch (E.Kind) {
      case EventKind::Arrival:
        arrive();
        break;
      case EventKind::IterationEnd:
        finishIteration(E.Replica);
        break;
      case EventKind::KVArrived:
        landed(E.Replica, E.S);
        break;
      case EventKind::Scale:
        scale(E.Replica);
        break;
      case EventKind::KVLoaded:
        loaded(E.Replica, E.S, E.Gen);
        break;
      case EventKind::Ready:
        ready(E.Replica);
        break;
      case EventKind::Sample:
        sample();
        break;
      case EventKind::Dispatch:
        // A batch sent early (full) leaves its window's event stale.
        if (E.Gen == HeldGen[E.Replica])
          flush(E.Replica);
        break;
      }
      if (C.CheckInvariants)
        checkInvariants();
    }
    return result();
  }

private:
  const Config &C;
  /// Config::PromptsFirst where it applies (not to a static batch).
  const bool PromptsFirst;
  const StepFunction &Step;
  const RequestSink &Sink;
  Rng R;
  std::vector<RequestClass> Classes;
  std::vector<uint8_t> LevelOf;
  size_t NumLevels = 1;
  double TotalShare = 0;
  bool Disaggregated = false, Caching = false;
  /// Speculative decoding: the tokens a sequence emits an iteration on
  /// average (E), and those the target verifies (k + 1).
  bool Spec = false;
  double PerStep = 1, Verify = 1;
  /// Cache entries: the shared prefixes, then one a conversation (from
  /// SessionBase).
  uint32_t SessionBase = 0, Groups = 0;
  std::vector<Conversation> Conversations;
  std::vector<uint32_t> IdleConversations; ///< no turn in flight
  uint32_t Opened = 0;                     ///< conversation places used so far
  uint64_t NumConversations = 0, FollowUps = 0;
  std::vector<Replica> Replicas;
  std::vector<Pool> Pools;
  std::vector<Request> Requests;
  std::vector<Slot> Free;
  /// Each pool's open batch (Config::Batch) and the generation of its
  /// window's event.
  std::vector<Slot> Held[2];
  uint32_t HeldGen[2] = {0, 0};
  std::priority_queue<Event, std::vector<Event>, std::greater<>> Events;
  uint64_t Seq = 0, Issued = 0, Arrived = 0, Completed = 0, Rejected = 0,
           OutputTokens = 0, Iterations = 0, Preemptions = 0, Transfers = 0,
           LocalPrefills = 0, RejectedContext = 0;
  double Now = 0, First = 0, Last = 0, Area = 0, BatchSum = 0, PeakKV = 0;
  /// The time of the iterations BatchSum counts, those that run the
  /// decodes: BatchSum sums their sequences times their duration.
  double BatchTime = 0;
  double BurstEnd = 0; ///< Arrivals::OnOff: when the current burst ends
  double PromptTokens = 0, CachedTokens = 0;
  uint64_t Shed = 0, ScaleUps[2] = {0, 0}, ScaleDowns[2] = {0, 0};
  /// Autoscaling: pool 0's replicas that are not off, their peak and
  /// time integral, when the autoscaler last acted, its samples.
  /// (By pool: the colocated or decode pool, then the prefill pool.)
  double Scaled[2] = {0, 0}, PeakScaled[2] = {0, 0}, ScaledArea[2] = {0, 0},
         LastAction[2] = {-1e300, -1e300};
  std::vector<Result::Sample> Timeline;
  /// Sampling: each replica's busy time at the last sample, the samples.
  std::vector<double> LastBusy;
  /// Pipeline parallelism: the stages of a replica (Config::PipelineStages
  /// engines, Replicas[I] an engine of replica I / Stages), and when each
  /// stage is next free (StageFree[I]: stage I % Stages of that replica).
  unsigned Stages = 1;
  std::vector<double> StageFree;
  /// The first engine of engine \p I's replica (its engines are that one
  /// and the next Stages - 1).
  unsigned firstEngine(unsigned I) const { return I / Stages * Stages; }
  std::vector<Result::ReplicaSample> ReplicaSamples;
  bool SamplesTruncated = false;
  /// The admission bucket's tokens, as of LastRefill.
  double Bucket = 0, LastRefill = 0;
  /// Shared KV tiers (by tier index), prompt tokens each tier served,
  /// loads.
  std::vector<TierCache> SharedTiers;
  std::vector<double> TierHits;
  uint64_t Loads = 0, SwapOuts = 0, SwapIns = 0;
  Histogram LoadTime;

  /// Recounts the cache accounting from the requests and entries
  /// (Config::CheckInvariants): each replica's KV tokens in use are what
  /// its running requests hold (less the entry a shared one references)
  /// and its resident entries; its idle list is exactly its resident,
  /// ready, unreferenced entries; no conversation entry, in HBM or a
  /// tier, is of a closed generation; each tier's use is what it holds,
  /// within its capacity.
  void checkInvariants() {
    auto fail = [&](unsigned I, const std::string &M) {
      throw std::logic_error(
          "simulator invariant at t = " + std::to_string(Now) + ", replica " +
          std::to_string(I) + ": " + M);
    };
    auto live = [&](uint32_t G, uint32_t Gen) {
      return G < SessionBase || Conversations[G - SessionBase].Gen == Gen;
    };
    for (unsigned I = 0; I < Replicas.size(); ++I) {
      Replica &P = Replicas[I];
      double Expect = 0;
      std::vector<uint32_t> Refs(P.Prefix.size(), 0);
      auto hold = [&](Slot S, double H) {
        const Request &Q = Requests[S];
        if (Q.Shared) {
          if (Q.Group >= P.Prefix.size() || !P.Prefix[Q.Group].Resident ||
              P.Prefix[Q.Group].Gen != Q.GroupGen)
            fail(I, "a request shares an entry that is not its own");
          ++Refs[Q.Group];
          H -= P.Prefix[Q.Group].Tokens;
          if (H < 0)
            fail(I, "a request holds less than its shared entry");
        }
        Expect += H;
      };
      for (Slot S : P.Prefilling)
        hold(S, Requests[S].Prefill);
      for (Slot S : P.Loading)
        hold(S, Requests[S].Prefill);
      double Decoding = 0;
      for (Slot S = 0; S < Requests.size(); ++S)
        if (Requests[S].Decoding && Requests[S].Replica == I) {
          ++Decoding;
          hold(S, contextOf(P, Requests[S]) +
                      (P.Busy && !P.PromptsAlone
                           ? static_cast<double>(emitted(P.Iter, P.Iter + 1))
                           : 0));
        }
      if (Decoding != P.Decoding)
        fail(I, "decoding count");
      double Idle = 0;
      size_t ShouldIdle = 0;
      for (uint32_t G = 0; G < P.Prefix.size(); ++G) {
        const PrefixEntry &E = P.Prefix[G];
        if (E.Resident)
          Expect += E.Tokens;
        if (E.Refs != Refs[G])
          fail(I, "an entry's references");
        if (E.Resident && !E.Ready && E.Refs == 0)
          fail(I, "an entry neither ready nor referenced");
        if (!E.Resident && E.Refs)
          fail(I, "a referenced entry not resident");
        if (E.Resident && !live(G, E.Gen))
          fail(I, "a closed conversation's entry");
        ShouldIdle += E.Resident && E.Ready && E.Refs == 0;
      }
      for (uint32_t G : P.Idle) {
        const PrefixEntry &E = P.Prefix[G];
        if (!(E.Resident && E.Ready && E.Refs == 0))
          fail(I, "an entry on the idle list in use");
        Idle += E.Tokens;
      }
      if (ShouldIdle != P.Idle.size() || std::abs(Idle - P.IdleTokens) > 1e-6)
        fail(I, "the idle list");
      if (std::abs(Expect - P.KVUsed) > 1e-6)
        fail(I, "KV tokens in use " + std::to_string(P.KVUsed) +
                    ", recounted " + std::to_string(Expect));
      if (C.KVCapacityTokens > 0 && P.KVUsed > C.KVCapacityTokens + 1e-6)
        fail(I, "over the KV capacity");
      for (size_t T = 0; Caching && T < C.Tiers.size(); ++T) {
        TierCache &Tc = tierOf(P, T);
        double Used = 0;
        size_t Held = 0;
        for (uint32_t G = 0; G < Tc.In.size(); ++G)
          if (Tc.In[G]) {
            Used += Tc.In[G];
            ++Held;
            if (!live(G, Tc.InGen[G]))
              fail(I, "a closed conversation's context in a tier");
          }
        if (std::abs(Used - Tc.Used) > 1e-6 || Held != Tc.Lru.size() ||
            Tc.Used > C.Tiers[T].CapacityTokens + 1e-6)
          fail(I, "a tier's use");
      }
    }
  }

  /// An empty tier with room for every prefix group.
  TierCache tierFor() const {
    TierCache T;
    T.In.assign(Groups, 0);
    T.InGen.assign(Groups, 0);
    T.Pos.resize(Groups);
    return T;
  }

  TierCache &tierOf(Replica &P, size_t T) {
    return C.Tiers[T].Shared ? SharedTiers[T] : P.Tiers[T];
  }

  /// Writes a prefix evicted from HBM (or from tier From - 1) to tier
  /// From, making room by moving that tier's least recently used down.
  /// A tier holding a conversation's longer context keeps it.
  void offload(Replica &P, uint32_t G, uint32_t Tokens, uint32_t Gen,
               size_t From) {
    // A closed conversation's context is no one's prefix: it is dropped,
    // never written over the live one's.
    if (G >= SessionBase && Conversations[G - SessionBase].Gen != Gen)
      return;
    for (size_t T = From; T < C.Tiers.size(); ++T) {
      if (C.Tiers[T].CapacityTokens < Tokens)
        continue; // too small for it
      TierCache &Tc = tierOf(P, T);
      if (Tc.In[G]) {
        Tc.Lru.splice(Tc.Lru.end(), Tc.Lru, Tc.Pos[G]);
        if (Tc.InGen[G] == Gen && Tc.In[G] >= Tokens)
          return;
        Tc.Used -= Tc.In[G]; // an older context, or a closed conversation's
      } else {
        Tc.Pos[G] = Tc.Lru.insert(Tc.Lru.end(), G);
      }
      Tc.In[G] = Tokens;
      Tc.InGen[G] = Gen;
      Tc.Used += Tokens;
      while (Tc.Used > C.Tiers[T].CapacityTokens) {
        uint32_t H = Tc.Lru.front();
        Tc.Lru.pop_front();
        uint32_t HTokens = Tc.In[H];
        Tc.In[H] = 0;
        Tc.Used -= HTokens;
        offload(P, H, HTokens, Tc.InGen[H], T + 1);
      }
      return;
    }
  }

  /// The first tier that holds prefix \p G of generation \p Gen for
  /// replica \p P, or -1.
  int tierHolding(Replica &P, uint32_t G, uint32_t Gen) {
    for (size_t T = 0; T < C.Tiers.size(); ++T)
      if (tierOf(P, T).In[G] && tierOf(P, T).InGen[G] == Gen)
        return static_cast<int>(T);
    return -1;
  }
  Histogram TTFT, TPOT, ITL, E2E, Wait, Transfer;
  std::vector<ClassHistograms> PerClass;

  Result result() {
    Result Out;
    Out.TTFT = stats(TTFT);
    Out.TPOT = stats(TPOT);
    Out.ITL = stats(ITL);
    Out.E2E = stats(E2E);
    Out.QueueWait = stats(Wait);
    Out.Transfer = stats(Transfer);
    Out.Arrived = Arrived;
    Out.Completed = Completed;
    Out.Rejected = Rejected;
    Out.RejectedContext = RejectedContext;
    Out.Preemptions = Preemptions;
    Out.PeakKVTokens = PeakKV;
    Out.OutputTokens = OutputTokens;
    Out.Iterations = Iterations;
    Out.Transfers = Transfers;
    Out.LocalPrefills = LocalPrefills;
    Out.PromptTokens = PromptTokens;
    Out.CachedTokens = CachedTokens;
    Out.PrefixHitRate = PromptTokens > 0 ? CachedTokens / PromptTokens : 0;
    Out.Makespan = Completed ? Last - First : 0;
    for (size_t K = 0; K < Classes.size(); ++K) {
      ClassResult CR;
      CR.Name = Classes[K].Name;
      CR.TTFT = stats(PerClass[K].TTFT);
      CR.TPOT = stats(PerClass[K].TPOT);
      CR.E2E = stats(PerClass[K].E2E);
      CR.Completed = PerClass[K].Completed;
      CR.Rejected = PerClass[K].Rejected;
      CR.MetTargets = PerClass[K].Met;
      Out.MetTargets += CR.MetTargets;
      if (Classes[K].TTFTTarget > 0 || Classes[K].TPOTTarget > 0)
        Out.WithTargets += CR.Completed;
      Out.Classes.push_back(CR);
    }
    if (Out.Makespan > 0) {
      Out.Throughput = static_cast<double>(OutputTokens) / Out.Makespan;
      // Little's L of what a client sees: the engine's requests and, by
      // Little's law for a pure delay, the completed ones' time outside it.
      Out.MeanInSystem =
          (Area + static_cast<double>(Completed) * C.RequestOverhead) /
          Out.Makespan;
      Out.ArrivalRateSeen = static_cast<double>(Completed) / Out.Makespan;
      Out.Goodput = static_cast<double>(Out.MetTargets) / Out.Makespan;
      for (ClassResult &CR : Out.Classes)
        CR.Goodput = static_cast<double>(CR.MetTargets) / Out.Makespan;
      double Busy = 0, KV = 0;
      for (const Replica &P : Replicas) {
        Busy += P.BusyTime;
        KV += P.KVArea;
      }
      // Replica time: an autoscaled pool's replicas count while they are
      // not off.
      double Span = ScaledArea[0] + ScaledArea[1];
      Out.Utilisation = Busy / Span;
      if (C.KVCapacityTokens > 0)
        Out.KVUtilisation = KV / (Span * C.KVCapacityTokens);
    }
    Out.MeanBatch = BatchTime > 0 ? BatchSum / BatchTime : 0;
    Out.Shed = Shed;
    Out.ScaleUps = ScaleUps[0];
    Out.ScaleDowns = ScaleDowns[0];
    Out.PeakReplicas = PeakScaled[0];
    Out.PrefillScaleUps = ScaleUps[1];
    Out.PrefillScaleDowns = ScaleDowns[1];
    Out.PeakPrefillReplicas = PeakScaled[1];
    if (Out.Makespan > 0 && C.Scale.Enabled)
      Out.MeanReplicas = ScaledArea[0] / Out.Makespan;
    if (Out.Makespan > 0 && C.PrefillScale.Enabled)
      Out.MeanPrefillReplicas = ScaledArea[1] / Out.Makespan;
    Out.Timeline = std::move(Timeline);
    Out.Replicas = std::move(ReplicaSamples);
    Out.ReplicasTruncated = SamplesTruncated;
    Out.TierHitTokens = TierHits;
    Out.Loads = Loads;
    Out.SwapOuts = SwapOuts;
    Out.SwapIns = SwapIns;
    Out.Conversations = NumConversations;
    Out.FollowUps = FollowUps;
    Out.Load = stats(LoadTime);
    for (size_t K = 0; K < Classes.size(); ++K)
      Out.Classes[K].Shed = PerClass[K].Shed;
    return Out;
  }

  /// The requests to serve: a trace's first C.Requests, or C.Requests.
  uint64_t toServe() const {
    return C.Replay ? std::min<uint64_t>(C.Requests, C.Replay->size())
                    : C.Requests;
  }

  void push(double T, EventKind K, unsigned Rep, Slot S = 0, uint32_t Gen = 0) {
    Events.push({T, Seq++, K, Rep, S, Gen});
  }

  void issue(double T) {
    ++Issued;
    push(T, EventKind::Arrival, 0);
  }

  /// A closed-loop client's think time.
  double think() {
    return C.Arrive.Think > 0 ? Now + R.exponential(1 / C.Arrive.Think) : Now;
  }

  /// The next arrival of an open process after \p T.
  double nextArrival(double T) {
    const Arrivals &A = C.Arrive;
    switch (A.K) {
    case Arrivals::Kind::Poisson:
    case Arrivals::Kind::Closed:
      return T + R.exponential(C.ArrivalRate);
    case Arrivals::Kind::Gamma: {
      // Gaps of mean 1 / rate and coefficient of variation CV: shape
      // 1 / CV^2, scale CV^2 / rate. Past a shape of 1e12 (CV below 1e-6)
      // a gap is 1 / rate to double precision, and CV = 0 is that exactly
      // (evenly spaced arrivals; the shape would overflow).
      double K = 1 / (A.CV * A.CV);
      if (!(K <= 1e12))
        return T + 1 / C.ArrivalRate;
      return T + R.gamma(K) / (K * C.ArrivalRate);
    }
    case Arrivals::Kind::OnOff: {
      // Memoryless both ways: an arrival past the burst's end is dropped
      // and drawn again from the next burst's start.
      double Rate = C.ArrivalRate * (A.On + A.Off) / A.On;
      for (;;) {
        double X = T + R.exponential(Rate);
        if (X <= BurstEnd)
          return X;
        T = BurstEnd + R.exponential(1 / A.Off);
        BurstEnd = T + R.exponential(1 / A.On);
      }
    }
    case Arrivals::Kind::Diurnal: {
      // Thinning (Lewis and Shedler, 1979): candidates at the peak rate,
      // each kept with the rate at its time over the peak.
      double Peak = C.ArrivalRate * (1 + A.Amplitude);
      for (;;) {
        T += R.exponential(Peak);
        double Rate =
            C.ArrivalRate *
            (1 + A.Amplitude * std::sin(2 * std::numbers::pi * T / A.Period));
        if (R.uniform() * Peak <= Rate)
          return T;
      }
    }
    }
    return T;
  }

  /// Moves the clock, integrating the requests in the system (Little's L).
  void advance(double T) {
    Area +=
        static_cast<double>(Arrived - Completed - Rejected - Shed) * (T - Now);
    if (Arrived > 0 && !finished())
      for (int K = 0; K < 2; ++K)
        ScaledArea[K] += Scaled[K] * (T - Now);
    Now = T;
  }

  unsigned drawClass() {
    if (Classes.size() == 1)
      return 0;
    double U = R.uniform() * TotalShare;
    for (size_t K = 0; K + 1 < Classes.size(); ++K) {
      if (U < Classes[K].Share)
        return static_cast<unsigned>(K);
      U -= Classes[K].Share;
    }
    return static_cast<unsigned>(Classes.size() - 1);
  }

  void arrive() {
    if (Arrived == 0)
      First = Now;
    Slot S;
    if (Free.empty()) {
      S = static_cast<Slot>(Requests.size());
      Requests.emplace_back();
    } else {
      S = Free.back();
      Free.pop_back();
    }
    Request &Q = Requests[S];
    // A reused slot keeps its generation, so that entries stale from its
    // earlier requests never match this one.
    uint32_t Gen = Q.Gen;
    Q = Request();
    Q.Gen = Gen;
    Q.Id = Arrived++;
    Q.Arrival = Now;
    const graph::TraceRow *Row =
        C.Replay ? &(*C.Replay)[static_cast<size_t>(Q.Id)] : nullptr;
    unsigned K =
        Row && Row->Class != graph::NoTraceClass && Row->Class < Classes.size()
            ? Row->Class
            : drawClass();
    Q.Class = static_cast<uint16_t>(K);
    Q.Level = LevelOf[K];
    if (Row) {
      // The trace's lengths; its prefix is already in the prompt.
      Q.Prompt = Row->Prompt;
      Q.Output = Row->Output;
      if (Row->Group != graph::NoTraceGroup && Row->Group < C.Prefix.Groups &&
          Row->Prompt > C.Prefix.Tokens)
        Q.Group = Row->Group;
    } else {
      Q.Prompt = draw(Classes[K].Prompt, R);
      Q.Output = draw(Classes[K].Output, R);
    }
    // The engine stops a request at its max_tokens (`max_output`).
    if (C.OutputCap > 0 && Q.Output > C.OutputCap)
      Q.Output = static_cast<uint32_t>(C.OutputCap);
    // A conversation's turn, or a request on its own (when every
    // conversation has a turn in flight), which may open with a prefix.
    bool Turn = !Row && C.Session.Open > 0 && converse(Q);
    if (!Row && !Turn && C.Prefix.Groups > 0 && C.Prefix.Tokens > 0 &&
        R.uniform() < C.Prefix.Share) {
      Q.Group = drawPrefix();
      Q.Prompt = static_cast<uint32_t>(std::min<uint64_t>(
          uint64_t(Q.Prompt) + C.Prefix.Tokens, 4000000000u));
    }
    Q.Prefill = Q.Prompt;
    Q.Until = Q.Output;
    if (Row) {
      if (Issued < toServe())
        issue((*C.Replay)[Issued].Arrival);
    } else if (C.Arrive.K != Arrivals::Kind::Closed && Issued < C.Requests)
      issue(nextArrival(Now));
    // A request longer than the model's context is refused; one that
    // would not fit an empty replica never could run.
    bool TooLong = !withinContext(Q.Prompt, Q.Output);
    if (TooLong || !fitsEmpty(Q.Prompt, Q.Output)) {
      RejectedContext += TooLong;
      ++Rejected;
      ++PerClass[K].Rejected;
      record(Q, true);
      endTurn(Q, false);
      Free.push_back(S);
      nextOfClient();
      return;
    }
    bool Remote = Disaggregated && Q.Prompt >= C.Disagg.LocalBelow;
    if (shed(Classes[K], Remote ? 1 : 0)) {
      ++Shed;
      ++PerClass[K].Shed;
      record(Q, true, false, true);
      endTurn(Q, false);
      Free.push_back(S);
      nextOfClient();
      return;
    }
    if (Disaggregated && !Remote)
      ++LocalPrefills;
    if (C.Batch.Window > 0)
      hold(Remote ? 1 : 0, S);
    else
      enqueue(Remote ? 1 : 0, S);
  }

  /// The batcher (Config::Batch): a request joins its pool's open batch;
  /// the first opens it and sets its window's end, a full one goes at once.
  void hold(unsigned PoolIndex, Slot S) {
    std::vector<Slot> &Batch = Held[PoolIndex];
    Batch.push_back(S);
    if (Batch.size() == 1)
      push(Now + C.Batch.Window, EventKind::Dispatch, PoolIndex, 0,
           HeldGen[PoolIndex]);
    if (C.Batch.MaxRequests > 0 && Batch.size() >= C.Batch.MaxRequests)
      flush(PoolIndex);
  }

  /// Sends a pool's open batch: to its shared queue, or all of it to the
  /// replica the router picks for its first request.
  void flush(unsigned PoolIndex) {
    std::vector<Slot> Batch;
    Batch.swap(Held[PoolIndex]);
    ++HeldGen[PoolIndex];
    if (Batch.empty())
      return;
    Pool &Pl = Pools[PoolIndex];
    if (Pl.UsesShared) {
      // The whole batch joins the shared queue before an idle replica
      // takes from it, so the first takes as many as fit.
      for (Slot S : Batch)
        Pl.Shared.pushBack(S, Requests[S].Level);
      for (unsigned K = 0; K < Pl.Count && !Pl.Shared.empty(); ++K)
        if (unsigned I = at(Pl, K); !Replicas[I].Busy && routable(Replicas[I]))
          startIteration(I);
      return;
    }
    unsigned To = route(Pl, Requests[Batch.front()]);
    for (Slot S : Batch)
      Replicas[To].Waiting.pushBack(S, Requests[S].Level);
    if (!Replicas[To].Busy)
      startIteration(To);
  }

  /// Admission control: no token in the bucket, or a long queue for a
  /// class that is shed first.
  bool shed(const RequestClass &K, unsigned PoolIndex) {
    const Admission &A = C.Admit;
    if (A.ShedPriority >= 0 && K.Priority >= A.ShedPriority) {
      const Pool &Pl = Pools[PoolIndex];
      double Waiting = static_cast<double>(Pl.Shared.size()), Serving = 0;
      for (unsigned I = Pl.First; I < Pl.First + Pl.Count; ++I)
        if (routable(Replicas[I])) {
          Waiting += static_cast<double>(Replicas[I].Waiting.size());
          ++Serving;
        }
      // Waiting a replica: under pipeline parallelism, its engines'.
      if (Serving > 0 && Waiting / (Serving / Stages) > A.ShedQueue)
        return true;
    }
    if (A.Rate > 0) {
      Bucket = std::min(A.Burst, Bucket + (Now - LastRefill) * A.Rate);
      LastRefill = Now;
      if (Bucket < 1)
        return true;
      Bucket -= 1;
    }
    return false;
  }

  static bool routable(const Replica &P) {
    return P.St == Replica::State::Serving;
  }

  /// Every request has arrived and left.
  bool finished() const {
    return Arrived >= toServe() && Completed + Rejected + Shed == Arrived;
  }

  void setState(Replica &P, Replica::State S) {
    bool WasOn = P.St != Replica::State::Off, On = S != Replica::State::Off;
    P.St = S;
    if (WasOn != On)
      Scaled[P.Pool] += On ? 1 : -1;
    PeakScaled[P.Pool] = std::max(PeakScaled[P.Pool], Scaled[P.Pool]);
  }

  /// Samples every replica that is not off (Config::SampleEvery): its busy
  /// share since the last sample (an iteration under way counts up to
  /// now), what it runs and holds.
  void sample() {
    // A replica's engines (one without pipeline parallelism) together.
    for (unsigned G = 0; G < Replicas.size(); G += Stages) {
      double Busy = 0, KV = 0;
      unsigned Running = 0, Waiting = 0;
      for (unsigned I = G; I < G + Stages; ++I) {
        const Replica &P = Replicas[I];
        // Busy time counts an iteration when it starts: less what is
        // ahead (a share of it, when it waits for pipeline stages).
        double Ahead = 0;
        if (P.Busy && Stages == 1)
          Ahead = std::max(0.0, P.Ends - Now);
        else if (P.Busy && P.Ends > P.Started)
          Ahead = P.Took * std::max(0.0, P.Ends - Now) / (P.Ends - P.Started);
        double BusyNow = P.BusyTime - Ahead;
        Busy += (BusyNow - LastBusy[I]) / C.SampleEvery;
        LastBusy[I] = BusyNow;
        KV += kvInUse(P);
        Running += P.Running;
        Waiting += static_cast<unsigned>(P.Waiting.size());
      }
      const Replica &P = Replicas[G];
      if (P.St == Replica::State::Off)
        continue;
      if (ReplicaSamples.size() >= Result::MaxReplicaSamples) {
        SamplesTruncated = true;
        continue;
      }
      Result::ReplicaSample X;
      X.Time = Now - First;
      X.Replica = G / Stages;
      X.Prefill = P.PrefillOnly;
      X.Starting = P.St == Replica::State::Starting;
      X.Draining = P.St == Replica::State::Draining;
      // The busy time is a difference of running sums: an interval with
      // none reads 0, not the sums' round-off (1e-16).
      X.Busy = std::clamp(Busy / Stages, 0.0, 1.0);
      if (X.Busy < 1e-12)
        X.Busy = 0;
      X.KV = C.KVCapacityTokens > 0 ? KV / (Stages * C.KVCapacityTokens) : 0;
      X.Running = Running;
      X.Waiting = Waiting;
      ReplicaSamples.push_back(X);
    }
    if (!finished())
      push(Now + C.SampleEvery, EventKind::Sample, 0);
  }

  /// The autoscaler's decision (Autoscaling): its signal over pool 0's
  /// serving replicas, then one replica more or less.
  void scale(unsigned PoolIndex) {
    const Autoscaling &A = PoolIndex ? C.PrefillScale : C.Scale;
    const Pool &Pl = Pools[PoolIndex];
    double Serving = 0, Starting = 0, Waiting = Pl.Shared.size(), Running = 0;
    for (unsigned I = Pl.First; I < Pl.First + Pl.Count; ++I) {
      const Replica &P = Replicas[I];
      if (routable(P)) {
        ++Serving;
        Waiting += static_cast<double>(P.Waiting.size());
        Running += P.Running;
      }
      Starting += P.St == Replica::State::Starting;
    }
    double Signal =
        A.On == Autoscaling::Signal::Queue
            ? (Serving > 0 ? Waiting / Serving : Waiting)
            : (Serving > 0 ? Running / (Serving * C.MaxSequences) : 1);
    if (Arrived > 0 && Timeline.size() < Result::MaxTimeline)
      Timeline.push_back({Now - First, static_cast<unsigned>(Serving),
                          static_cast<unsigned>(Starting), Signal,
                          PoolIndex == 1});
    double &Last = LastAction[PoolIndex];
    if (Now - Last >= A.Cooldown) {
      if (Signal > A.Up && Serving + Starting < A.Max) {
        // A draining replica serves again; else an off one starts.
        Replica *Pick = nullptr;
        unsigned Index = 0;
        for (unsigned I = Pl.First; I < Pl.First + Pl.Count && !Pick; ++I)
          if (Replicas[I].St == Replica::State::Draining)
            Pick = &Replicas[Index = I];
        for (unsigned I = Pl.First; I < Pl.First + Pl.Count && !Pick; ++I)
          if (Replicas[I].St == Replica::State::Off)
            Pick = &Replicas[Index = I];
        if (Pick) {
          ++ScaleUps[PoolIndex];
          Last = Now;
          if (Pick->St == Replica::State::Draining || A.StartUp <= 0) {
            setState(*Pick, Replica::State::Serving);
            ready(Index);
          } else {
            setState(*Pick, Replica::State::Starting);
            push(Now + A.StartUp, EventKind::Ready, Index);
          }
        }
      } else if (Signal < A.Down && Serving > A.Min) {
        // The last serving replica drains.
        for (unsigned I = Pl.First + Pl.Count; I-- > Pl.First;)
          if (routable(Replicas[I])) {
            ++ScaleDowns[PoolIndex];
            Last = Now;
            setState(Replicas[I], Replica::State::Draining);
            if (!Replicas[I].Busy)
              startIteration(I); // stops at once when it holds nothing
            break;
          }
      }
    }
    if (!finished())
      push(Now + A.Interval, EventKind::Scale, PoolIndex);
  }

  /// A prefix loaded from a tier is in HBM: its request's prompt runs on.
  void loaded(unsigned I, Slot S, uint32_t Gen) {
    Request &Q = Requests[S];
    if (Q.Gen != Gen)
      return; // preempted while it loaded
    Replica &P = Replicas[I];
    P.Prefix[Q.Group].Ready = true;
    P.Loading.erase(std::find(P.Loading.begin(), P.Loading.end(), S));
    P.Prefilling.push_back(S);
    if (!P.Busy)
      startIteration(I);
  }

  /// A started replica serves: it takes from a shared queue at once.
  void ready(unsigned I) {
    Replica &P = Replicas[I];
    if (P.St == Replica::State::Starting)
      setState(P, Replica::State::Serving);
    if (!P.Busy && Pools[P.Pool].UsesShared && !Pools[P.Pool].Shared.empty())
      startIteration(I);
  }

  /// A closed-loop client whose request finished sends its next one.
  /// A closed-loop client's next request: it reaches the engine after the
  /// answer's way back to the client, the client's think time and the
  /// request's way in (RequestOverhead, both ways together).
  void nextOfClient() {
    if (!C.Replay && C.Arrive.K == Arrivals::Kind::Closed &&
        Issued < C.Requests)
      issue(think() + C.RequestOverhead);
  }

  /// A request joins pool \p Pl: its shared queue (the first idle replica
  /// takes it) or a replica's queue.
  void enqueue(unsigned PoolIndex, Slot S) {
    Pool &Pl = Pools[PoolIndex];
    Request &Q = Requests[S];
    if (Pl.UsesShared) {
      Pl.Shared.pushBack(S, Q.Level);
      for (unsigned K = 0; K < Pl.Count; ++K)
        if (unsigned I = at(Pl, K);
            !Replicas[I].Busy && routable(Replicas[I])) {
          startIteration(I);
          break;
        }
      return;
    }
    unsigned To = route(Pl, Q);
    Replicas[To].Waiting.pushBack(S, Q.Level);
    if (!Replicas[To].Busy)
      startIteration(To);
  }

  size_t outstanding(const Replica &P) const {
    return P.Waiting.size() + P.Running + P.Incoming;
  }

  /// The KV tokens running requests hold (cached prefixes no request uses
  /// are free to evict).
  double kvInUse(const Replica &P) const { return P.KVUsed - P.IdleTokens; }

  bool caches(const Replica &P, const Request &Q) const {
    return Caching && Q.Group != NoGroup && P.Prefix[Q.Group].Resident &&
           P.Prefix[Q.Group].Gen == Q.GroupGen;
  }

  /// The pool's K-th replica in the order routers scan them: under
  /// pipeline parallelism the replicas' first engines, then their second
  /// ones, and so on, so that a tie goes to another replica before
  /// another engine of the same one.
  unsigned at(const Pool &Pl, unsigned K) const {
    if (Stages == 1)
      return Pl.First + K;
    const unsigned Physical = Pl.Count / Stages;
    return Pl.First + K % Physical * Stages + K / Physical;
  }

  /// The first serving replica of a pool (there is one: an autoscaled
  /// pool keeps at least its minimum serving).
  unsigned firstServing(const Pool &Pl) const {
    for (unsigned K = 0; K < Pl.Count; ++K)
      if (routable(Replicas[at(Pl, K)]))
        return at(Pl, K);
    return Pl.First;
  }

  unsigned leastOutstanding(const Pool &Pl) const {
    unsigned Best = firstServing(Pl);
    size_t BestLoad = SIZE_MAX;
    for (unsigned K = 0; K < Pl.Count; ++K)
      if (unsigned I = at(Pl, K);
          routable(Replicas[I]) && outstanding(Replicas[I]) < BestLoad) {
        Best = I;
        BestLoad = outstanding(Replicas[I]);
      }
    return Best;
  }

  /// Routes among the pool's serving replicas.
  unsigned route(Pool &Pl, const Request &Q) {
    unsigned End = Pl.First + Pl.Count;
    switch (C.Route) {
    case Routing::RoundRobin: {
      for (unsigned K = 0; K < Pl.Count; ++K) {
        // Under pipeline parallelism, replicas in turn, and each
        // replica's engines in turn.
        unsigned To = at(Pl, Pl.Next);
        Pl.Next = (Pl.Next + 1) % Pl.Count;
        if (routable(Replicas[To]))
          return To;
      }
      return firstServing(Pl);
    }
    case Routing::Random: {
      unsigned Serving = 0;
      for (unsigned I = Pl.First; I < End; ++I)
        Serving += routable(Replicas[I]);
      unsigned Pick =
          std::min(static_cast<unsigned>(R.uniform() * Serving), Serving - 1);
      for (unsigned I = Pl.First; I < End; ++I)
        if (routable(Replicas[I]) && Pick-- == 0)
          return I;
      return firstServing(Pl);
    }
    case Routing::LeastOutstanding:
    case Routing::SharedQueue: // a decode pool under disaggregation
      return leastOutstanding(Pl);
    case Routing::LeastKV: {
      unsigned Best = firstServing(Pl);
      for (unsigned K = 0; K < Pl.Count; ++K) {
        const unsigned I = at(Pl, K);
        const Replica &P = Replicas[I], &B = Replicas[Best];
        if (routable(P) &&
            (kvInUse(P) < kvInUse(B) ||
             (kvInUse(P) == kvInUse(B) && outstanding(P) < outstanding(B))))
          Best = I;
      }
      return Best;
    }
    case Routing::PrefixAffinity: {
      unsigned Best = End;
      for (unsigned K = 0; K < Pl.Count; ++K)
        if (unsigned I = at(Pl, K);
            routable(Replicas[I]) && caches(Replicas[I], Q) &&
            (Best == End ||
             outstanding(Replicas[I]) < outstanding(Replicas[Best])))
          Best = I;
      return Best != End ? Best : leastOutstanding(Pl);
    }
    case Routing::Weighted: {
      // llm-d's scorers, each in [0, 1]: the share of the prompt cached;
      // the queue, 1 for the shortest and 0 for the longest; the free KV
      // cache.
      size_t MinQ = SIZE_MAX, MaxQ = 0;
      for (unsigned I = Pl.First; I < End; ++I)
        if (routable(Replicas[I])) {
          MinQ = std::min(MinQ, outstanding(Replicas[I]));
          MaxQ = std::max(MaxQ, outstanding(Replicas[I]));
        }
      unsigned Best = firstServing(Pl);
      double BestScore = -std::numeric_limits<double>::infinity();
      for (unsigned K = 0; K < Pl.Count; ++K) {
        const unsigned I = at(Pl, K);
        const Replica &P = Replicas[I];
        if (!routable(P))
          continue;
        double Hit = caches(P, Q) ? static_cast<double>(std::min(
                                        P.Prefix[Q.Group].Tokens, Q.Prompt)) /
                                        Q.Prompt
                                  : 0;
        double Queue = MaxQ == MinQ
                           ? 1
                           : static_cast<double>(MaxQ - outstanding(P)) /
                                 static_cast<double>(MaxQ - MinQ);
        double KV =
            C.KVCapacityTokens > 0 ? 1 - kvInUse(P) / C.KVCapacityTokens : 1;
        double Score = C.Weights.Prefix * Hit + C.Weights.Queue * Queue +
                       C.Weights.KV * KV;
        if (Score > BestScore) {
          Best = I;
          BestScore = Score;
        }
      }
      return Best;
    }
    }
    return firstServing(Pl);
  }

  /// Tokens a decoding sequence emits by the start of a replica's
  /// iteration \p I, counted from iteration 0: I, or under speculative
  /// decoding floor(I E) (Speculation).
  uint64_t emittedBy(uint64_t I) const {
    return Spec ? static_cast<uint64_t>(
                      std::floor(static_cast<double>(I) * PerStep))
                : I;
  }
  /// Tokens a decoding sequence emits in iterations From to To - 1.
  uint64_t emitted(uint64_t From, uint64_t To) const {
    return emittedBy(To) - emittedBy(From);
  }
  /// The iteration in which a decoding request emits its token number
  /// \p Until (its last: Q.Until).
  uint64_t lastIteration(const Request &Q, uint32_t Until) const {
    uint64_t Left = Until - Q.JoinGenerated; // at least 1
    if (!Spec)
      return Q.JoinIter + Left - 1;
    uint64_t Target = emittedBy(Q.JoinIter) + Left;
    auto M =
        static_cast<uint64_t>(std::ceil(static_cast<double>(Target) / PerStep));
    M = std::max(M, Q.JoinIter + 1);
    while (M > Q.JoinIter + 1 && emittedBy(M - 1) >= Target)
      --M;
    while (emittedBy(M) < Target)
      ++M;
    return M - 1;
  }

  /// The context of a decoding request's next step (its KV tokens held).
  double contextOf(const Replica &P, const Request &Q) const {
    return Q.JoinCtx + static_cast<double>(emitted(Q.JoinIter, P.Iter));
  }

  /// kv_allocation = to_completion: whether \p Q, holding \p Held tokens
  /// when admitted, can reserve them and the rest of its output beside the
  /// running requests' reservations; if so, reserves them. What it holds
  /// at its last step is counted as fitsEmpty counts it, so that a request
  /// that fits an empty replica is admitted once the others leave.
  /// A prefill replica holds the prompt alone (its KV cache leaves with
  /// the request), and reserves only that. Under `max_output` the engine
  /// reserves the cap (its max_tokens), not the output the request will
  /// turn out to have, and at least that.
  bool reserve(Replica &P, Request &Q, double Held) {
    if (!C.ReserveToCompletion || C.KVCapacityTokens <= 0)
      return true;
    double R = std::ceil(Held);
    if (!P.PrefillOnly) {
      double Output = std::max<double>(Q.Output, C.OutputCap);
      R += std::max(0.0, Output - Q.Generated - 2 + Verify);
    }
    if (P.Reserved + R > C.KVCapacityTokens)
      return false;
    Q.Reserved = static_cast<uint32_t>(R);
    P.Reserved += Q.Reserved;
    return true;
  }

  /// A request leaving a replica's running set gives its reservation back.
  void unreserve(Replica &P, Request &Q) {
    P.Reserved -= Q.Reserved;
    Q.Reserved = 0;
  }

  /// Evicts unreferenced cached prefixes, oldest first, until \p Need more
  /// tokens fit; false (evicting nothing) when they cannot.
  bool makeRoom(Replica &P, double Need) {
    if (C.KVCapacityTokens <= 0)
      return true;
    if (kvInUse(P) + Need > C.KVCapacityTokens)
      return false;
    while (P.KVUsed + Need > C.KVCapacityTokens) {
      uint32_t G = P.Idle.front();
      P.Idle.pop_front();
      PrefixEntry &E = P.Prefix[G];
      E.Resident = E.Ready = false;
      P.KVUsed -= E.Tokens;
      P.IdleTokens -= E.Tokens;
      offload(P, G, E.Tokens, E.Gen, 0);
    }
    return true;
  }

  /// Frees an unreferenced cached entry (a closed conversation's, or an
  /// older context of the conversation a request leaves).
  void drop(Replica &P, uint32_t G) {
    PrefixEntry &E = P.Prefix[G];
    assert(E.Resident && E.Ready && E.Refs == 0 && "only idle entries");
    P.Idle.erase(E.Lru);
    P.IdleTokens -= E.Tokens;
    P.KVUsed -= E.Tokens;
    E.Resident = E.Ready = false;
  }

  /// A request leaves replica \p P (completed, or its prompt sent to a
  /// decode replica) holding \p Held tokens of context. A conversation's
  /// turn leaves that context cached, the next turn's prefix (its
  /// reference, or an older copy, grows into it); else its cache is
  /// freed.
  void leave(Replica &P, Request &Q, double Held) {
    if (Caching && Q.Session != NoGroup && Q.Group != Q.Session) {
      // A turn that shared its conversation's system prompt: its
      // reference goes, and its context is kept as the conversation's
      // (a copy holding the prompt's tokens too) if it fits.
      release(P, Q, Held);
      keepContext(P, Q.Session, Q.SessionGen, Held);
      return;
    }
    if (!Caching || Q.Group == NoGroup || Q.Group < SessionBase) {
      release(P, Q, Held);
      return;
    }
    PrefixEntry &E = P.Prefix[Q.Group];
    if (Q.Shared) {
      Q.Shared = false;
      if (--E.Refs > 0) { // cannot be: one turn of a conversation at once
        P.KVUsed -= Held - E.Tokens;
        return;
      }
    } else if (E.Resident) {
      if (E.Refs > 0) {
        release(P, Q, Held);
        return;
      }
      drop(P, Q.Group);
    }
    // It keeps the whole context it held (KVUsed unchanged), idle.
    idle(P, Q.Group, Q.GroupGen, Held);
  }

  /// Makes entry \p G of replica \p P a cached copy of \p Held tokens of
  /// generation \p Gen, unreferenced, the most recently used (its tokens
  /// already counted in KVUsed).
  void idle(Replica &P, uint32_t G, uint32_t Gen, double Held) {
    PrefixEntry &E = P.Prefix[G];
    E.Resident = E.Ready = true;
    E.Refs = 0;
    E.Tokens = static_cast<uint32_t>(Held);
    E.Gen = Gen;
    E.Lru = P.Idle.insert(P.Idle.end(), G);
    P.IdleTokens += E.Tokens;
  }

  /// Caches \p Held tokens of conversation \p G's context on replica \p P,
  /// idle, in place of an older idle copy, when they fit (evicting older
  /// idle entries as needed); else writes them to a KV tier, as an
  /// eviction would.
  void keepContext(Replica &P, uint32_t G, uint32_t Gen, double Held) {
    PrefixEntry &E = P.Prefix[G];
    if (E.Resident) {
      if (E.Refs > 0 || !E.Ready)
        return; // in use: cannot be, one turn of a conversation at once
      drop(P, G);
    }
    if (!makeRoom(P, Held)) {
      // No room beside what is in use: it goes where an evicted entry
      // goes, to the first KV tier that takes it (if any).
      offload(P, G, static_cast<uint32_t>(Held), Gen, 0);
      return;
    }
    P.KVUsed += Held;
    idle(P, G, Gen, Held);
  }

  /// A later turn of a conversation that opened with a shared prefix,
  /// about to be admitted on replica \p P: its context if \p P holds it
  /// (in HBM or a tier), else the system prompt if \p P holds that in HBM,
  /// else its context (computed whole).
  void chooseTurnPrefix(Replica &P, Request &Q) {
    const Conversation &Cv = Conversations[Q.Session - SessionBase];
    Q.Group = Q.Session;
    Q.GroupGen = Q.SessionGen;
    if (Cv.Prefix == NoGroup)
      return;
    const PrefixEntry &Own = P.Prefix[Q.Session];
    if ((Own.Resident && Own.Ready && Own.Gen == Q.SessionGen) ||
        (!C.Tiers.empty() && tierHolding(P, Q.Session, Q.SessionGen) >= 0))
      return;
    const PrefixEntry &Sys = P.Prefix[Cv.Prefix];
    if (Sys.Resident && Sys.Ready) {
      Q.Group = Cv.Prefix;
      Q.GroupGen = 0;
    }
  }

  /// Frees a request's KV cache (\p Held tokens of context), and its
  /// reference on its cached prefix.
  void release(Replica &P, Request &Q, double Held) {
    if (!Q.Shared) {
      P.KVUsed -= Held;
      return;
    }
    PrefixEntry &E = P.Prefix[Q.Group];
    P.KVUsed -= Held - E.Tokens;
    Q.Shared = false;
    if (--E.Refs > 0)
      return;
    if (E.Ready) {
      E.Lru = P.Idle.insert(P.Idle.end(), Q.Group);
      P.IdleTokens += E.Tokens;
    } else { // its computing request left before it was computed
      E.Resident = false;
      P.KVUsed -= E.Tokens;
    }
  }

  /// Takes a reference on a resident prefix (off the LRU list).
  void pin(Replica &P, uint32_t G) {
    PrefixEntry &E = P.Prefix[G];
    if (E.Refs++ == 0 && E.Ready) {
      P.Idle.erase(E.Lru);
      P.IdleTokens -= E.Tokens;
    }
  }

  /// A request given a token at \p At by an iteration of prompts alone
  /// leaves the decodes before their next iteration.
  static void dropFresh(Replica &P, double At) {
    for (auto It = P.Fresh.begin(); It != P.Fresh.end(); ++It)
      if (It->first == At) {
        if ((It->second -= 1) <= 0)
          P.Fresh.erase(It);
        return;
      }
  }

  /// Preempts a running request (vLLM's recompute preemption): with one
  /// priority the most recently admitted (vLLM's FCFS policy pops the last
  /// of its running list), else the lowest priority's latest arrival
  /// (vLLM's priority policy: the largest (priority, arrival time)). Its
  /// cache is freed, and it waits at the head of its level to run its
  /// prompt and what it generated again. False when none runs.
  bool preemptOne(Replica &P, WaitQueue &Waiting) {
    // A static batch reserves its growth when admitted (startIteration),
    // so that its padding is never preempted.
    assert(!C.Static && "a static batch is never preempted");
    auto Victim = P.Admitted.end();
    auto Later = [&](const Request &A, const Request &B) {
      return std::tie(A.Level, A.Arrival, A.Id) >
             std::tie(B.Level, B.Arrival, B.Id);
    };
    for (auto It = P.Admitted.end(); It != P.Admitted.begin();) {
      --It;
      const Request &Q = Requests[It->first];
      if (Q.Gen != It->second)
        continue; // completed or preempted since
      if (NumLevels == 1) {
        Victim = It;
        break;
      }
      if (Victim == P.Admitted.end() || Later(Q, Requests[Victim->first]))
        Victim = It;
    }
    if (Victim == P.Admitted.end()) {
      P.Admitted.clear();
      return false;
    }
    Slot S = Victim->first;
    P.Admitted.erase(Victim);
    Request &Q = Requests[S];
    ++Q.Gen;
    if (Q.Decoding) {
      double Ctx = contextOf(P, Q);
      Q.Generated =
          Q.JoinGenerated + static_cast<uint32_t>(emitted(Q.JoinIter, P.Iter));
      P.Decoding -= 1;
      P.DecodeCtx -= Ctx;
      release(P, Q, Ctx);
      Q.Decoding = false;
      if (PromptsFirst) {
        // Its last token came from its prompt since the decodes last ran
        // (then the next decode iteration owes it no gap), or from the
        // decodes' last iteration.
        if (Q.JoinIter == P.Iter)
          dropFresh(P, Q.LastToken);
        else
          Q.LastToken = P.DecodedAt;
      } else {
        Q.LastToken = Now; // it emitted at the end of the last iteration
      }
      // Swap preemption: its KV cache is copied to the replica's swap
      // space during this iteration, and back when it is readmitted (a
      // replica of a shared queue recomputes: another could take it).
      if (C.Preempt == Preemption::Swap && !Pools[P.Pool].UsesShared &&
          P.SwapUsed + Ctx <= C.SwapTokens) {
        Q.Swapped = true;
        Q.SwapCtx = static_cast<uint32_t>(Ctx);
        P.SwapUsed += Ctx;
        P.SwapBytes += Ctx * C.SwapBytesPerToken;
        ++SwapOuts;
      }
    } else {
      auto It = std::find(P.Prefilling.begin(), P.Prefilling.end(), S);
      if (It != P.Prefilling.end()) {
        P.Prefilling.erase(It);
      } else {
        auto L = std::find(P.Loading.begin(), P.Loading.end(), S);
        assert(L != P.Loading.end() && "a running request prefills or loads");
        P.Loading.erase(L); // its load, when it lands, is stale
      }
      release(P, Q, Q.Prefill);
    }
    Q.Prefill = Q.Prompt + Q.Generated;
    Q.Done = 0;
    Q.KVReady = false; // recomputed where it is
    unreserve(P, Q);
    --P.Running;
    ++Preemptions;
    ++Q.Preempted;
    Waiting.pushFront(S, Q.Level);
    return true;
  }

  /// vLLM's order: the decodes, then the running prompts' chunks, then
  /// waiting requests, by priority, while slots, token budget and KV
  /// capacity allow; under PromptsFirst the decodes join only an
  /// iteration without prompts to compute (vLLM V0 without chunked
  /// prefill), or one a swapped-in or transferred request joins. A decode
  /// stores one more token; when the cache cannot hold them, unused cached
  /// prefixes are evicted and then running requests preempted.
  void startIteration(unsigned I) {
    Replica &P = Replicas[I];
    Pool &Pl = Pools[P.Pool];
    // A draining replica takes nothing new from a shared queue; what it
    // preempted waits on it, and is served first when it serves again.
    WaitQueue &Waiting = Pl.UsesShared && routable(P) && P.Waiting.empty()
                             ? Pl.Shared
                             : P.Waiting;
    bool Preempted = false;
    // The KV tokens each decoding sequence adds this iteration.
    const double Emit = static_cast<double>(emitted(P.Iter, P.Iter + 1));
    if (C.KVCapacityTokens > 0)
      while (!makeRoom(P, P.Decoding * Emit) && preemptOne(P, Waiting))
        Preempted = true;
    StepShape Shape;
    // A static batch prefills its prompts in one pass.
    double Budget =
        C.Static ? std::numeric_limits<double>::infinity() : C.MaxBatchedTokens;
    // Static batching admits a batch only into an empty replica, while
    // the cache holds every sequence grown to the batch's longest output.
    const bool Admits = !C.Static || P.Running == 0;
    double BatchPrompts = 0, BatchN = 0;
    uint32_t Longest = 0;
    std::vector<Slot> Batch;
    // A decode step of a sequence with c cached tokens: c + 1 pairs, c + 1
    // tokens of KV read; a speculative one verifies v = k + 1 tokens: v c +
    // v (v + 1) / 2 pairs, c + v tokens.
    auto addDecodes = [&](double N, double Ctx) {
      Shape.Sequences += N;
      Shape.Tokens += N * Verify;
      Shape.DecodeTokens += N * Verify;
      Shape.DecodePairs += Verify * Ctx + N * Verify * (Verify + 1) / 2;
      Shape.ContextTokens += Ctx + N * Verify;
      Shape.DecodeSequences += N;
      Shape.DecodeContextTokens += Ctx + N * Verify;
      Budget -= N * Verify;
    };
    // Prompts first: the decodes run only in an iteration without prompts
    // (added below), with what they were before any joins this iteration.
    const double Decoders0 = P.Decoding, DecodeCtx0 = P.DecodeCtx;
    if (!PromptsFirst)
      addDecodes(P.Decoding, P.DecodeCtx);
    P.Chunks.clear();
    P.Joined.clear();
    P.SwappedIn.clear();
    // Chunked prefill's own bound on the prompt tokens of an iteration.
    double PromptRoom = C.PromptChunk > 0
                            ? C.PromptChunk
                            : std::numeric_limits<double>::infinity();
    auto chunk = [&](Slot S) {
      Request &Q = Requests[S];
      double N = std::min<double>(
          {static_cast<double>(Q.Prefill - Q.Done), Budget, PromptRoom});
      Shape.Sequences += 1;
      Shape.Tokens += N;
      Shape.PrefillPairs += N * Q.Done + N * (N + 1) / 2;
      Shape.ContextTokens += Q.Done + N;
      Budget -= N;
      PromptRoom -= N;
      P.Chunks.push_back({S, static_cast<uint32_t>(N)});
    };
    for (Slot S : P.Prefilling) {
      if (Budget < 1 || PromptRoom < 1)
        break;
      chunk(S);
    }
    // A request whose KV cache (Ctx tokens) is already here - swapped back
    // in, or sent by a prefill replica - joins this step's decodes with
    // the tokens it has generated.
    auto joinDecodes = [&](Slot S, double Ctx) {
      Request &Q = Requests[S];
      P.KVUsed += Ctx;
      ++P.Running;
      Q.Replica = I;
      Q.Decoding = true;
      Q.JoinIter = P.Iter;
      Q.JoinCtx = static_cast<uint32_t>(Ctx);
      Q.JoinGenerated = Q.Generated;
      P.Decoding += 1;
      P.DecodeCtx += Ctx;
      P.Finishing.push({lastIteration(Q, Q.Until), S, Q.Gen});
      P.Admitted.push_back({S, Q.Gen});
      addDecodes(1, Ctx);
    };
    // After a preemption no request is admitted this iteration (vLLM's
    // scheduler does the same): the one just preempted would come back.
    while (Admits && (!Preempted || P.Running == 0) && Budget >= 1 &&
           !Waiting.empty() && P.Running < P.Slots) {
      Slot S = Waiting.front();
      Request &Q = Requests[S];
      if (C.Static) {
        uint32_t L = std::max(Longest, Q.Output);
        if (C.KVCapacityTokens > 0 &&
            BatchPrompts + Q.Prefill + (BatchN + 1) * (L - 2.0 + Verify) >
                C.KVCapacityTokens)
          break;
        Longest = L;
        BatchPrompts += Q.Prefill;
        BatchN += 1;
        Batch.push_back(S);
      }
      if (Q.Swapped) {
        // Its KV cache comes back from the swap space, copied during this
        // iteration, and it decodes on.
        double Ctx = Q.SwapCtx;
        // Held as a prompt is: its context and the token it computes next.
        if (!reserve(P, Q, Ctx + 1))
          break;
        if (!makeRoom(P, (P.Decoding + 1) * Emit + Ctx)) {
          unreserve(P, Q);
          break;
        }
        Waiting.popFront();
        P.SwapUsed -= Ctx;
        P.SwapBytes += Ctx * C.SwapBytesPerToken;
        Q.Swapped = false;
        ++SwapIns;
        joinDecodes(S, Ctx);
        P.SwappedIn.push_back(S);
        continue;
      }
      if (Q.KVReady) {
        // Its prompt's KV cache arrived from a prefill replica but for the
        // last token's, which this step runs (vLLM's connectors recompute
        // it for its logits): it joins the decodes. A shared prefix this
        // replica holds is shared, not held twice (the transfer left it
        // out, sendKV); one it does not hold is cached here from the
        // arrived blocks, for the requests after it.
        double Ctx = Q.Prefill - 1.0;
        if (!reserve(P, Q, Q.Prefill))
          break;
        DecodeShare Sharing = decodeSideSharing(P, Q, Ctx);
        if (Sharing != DecodeShare::None) {
          // A conversation's turn shares its system prompt here (leave()
          // then keeps its context as the conversation's).
          Q.Group = decodeSidePrefix(Q);
          Q.GroupGen = 0;
        }
        bool Shares = Sharing == DecodeShare::Shares;
        double Held = Shares ? P.Prefix[Q.Group].Tokens : 0;
        if (Shares)
          pin(P, Q.Group);
        if (!makeRoom(P, (P.Decoding + 1) * Emit + Ctx - Held)) {
          if (Shares) {
            Q.Shared = true;
            release(P, Q, Held);
          }
          unreserve(P, Q);
          break;
        }
        Waiting.popFront();
        joinDecodes(S, Ctx);
        if (Shares) {
          Q.Shared = true;
          P.KVUsed -= Held;
        } else if (Sharing == DecodeShare::Seeds) {
          PrefixEntry &E = P.Prefix[Q.Group];
          E.Resident = E.Ready = true;
          E.Refs = 1;
          E.Tokens = C.Prefix.Tokens;
          E.Gen = Q.GroupGen;
          Q.Shared = true;
        }
        P.Joined.push_back(S);
        continue;
      }
      // A prompt to compute needs room in the iteration's prompt tokens
      // (and a to_completion engine room for its whole sequence).
      if (PromptRoom < 1 || !reserve(P, Q, Q.Prefill))
        break;
      // Admitted when the cache holds its prompt beside the decodes' next
      // tokens; a prefix the replica has computed is not computed again.
      double Need = Q.Prefill;
      bool Hit = false, Own = false;
      // A later turn (its conversation has a context) looks for it here.
      if (Caching && Q.Session != NoGroup &&
          Conversations[Q.Session - SessionBase].Context > 0)
        chooseTurnPrefix(P, Q);
      bool Session = Q.Group != NoGroup && Q.Group >= SessionBase;
      int Tier = -1; // a tier that holds the prefix: load, not compute
      if (Caching && Q.Group != NoGroup) {
        PrefixEntry &E = P.Prefix[Q.Group];
        if (E.Resident && E.Gen != Q.GroupGen && E.Refs == 0)
          drop(P, Q.Group); // a closed conversation's
        if (E.Resident && E.Ready && E.Gen == Q.GroupGen) {
          Hit = true;
          Need -= E.Tokens;
        } else if (!E.Resident) {
          Own = true;
        }
      }
      if (Hit)
        pin(P, Q.Group); // not evicted to make its own room
      if (!makeRoom(P, P.Decoding * Emit + Need)) {
        if (Hit) {
          // Back on the LRU list, as the most recently used.
          Q.Shared = true;
          release(P, Q, P.Prefix[Q.Group].Tokens);
        }
        unreserve(P, Q);
        break; // waits for a completion to free its cache
      }
      Waiting.popFront();
      P.KVUsed += Need;
      // A prefix HBM does not hold may be in a tier (looked up after
      // makeRoom, whose evictions move prefixes between tiers).
      if (Own && !C.Tiers.empty())
        Tier = tierHolding(P, Q.Group, Q.GroupGen);
      // A conversation's context in a tier may be older than its prompt
      // holds; at least the last prompt token is computed.
      uint32_t Loaded =
          Tier >= 0 ? std::min(tierOf(P, Tier).In[Q.Group], Q.Prefill - 1) : 0;
      // What this admission found cached (a recomputation may find the
      // prefix evicted); the hit rate counts first admissions.
      Q.Cached = Hit ? P.Prefix[Q.Group].Tokens : Loaded;
      if (!Q.Waited) {
        PromptTokens += Q.Prompt;
        CachedTokens += Q.Cached;
        if (Tier >= 0)
          TierHits[Tier] += Loaded;
      }
      if (Hit) {
        Q.Shared = true;
        Q.Done = P.Prefix[Q.Group].Tokens;
      } else if (Own && (!Session || Tier >= 0)) {
        // It computes (or loads) the prefix, which others then share; a
        // conversation's context is cached when its turn leaves.
        PrefixEntry &E = P.Prefix[Q.Group];
        E.Resident = true;
        E.Ready = false;
        E.Refs = 1;
        E.Tokens = Session ? Loaded : C.Prefix.Tokens;
        E.Gen = Q.GroupGen;
        Q.Shared = true;
      }
      ++P.Running;
      Q.Replica = I;
      if (!Q.Waited) {
        Wait.add(Now - Q.Arrival);
        Q.Waited = true;
      }
      P.Admitted.push_back({S, Q.Gen});
      if (Tier >= 0) {
        // The prefix comes from the tier, queued on its link; the rest of
        // the prompt runs once it is in HBM.
        TierCache &Tc = tierOf(P, Tier);
        Tc.Lru.splice(Tc.Lru.end(), Tc.Lru, Tc.Pos[Q.Group]);
        const KVTier &T = C.Tiers[Tier];
        double Busy = Loaded * C.TierBytesPerToken / T.Bandwidth;
        double Start = std::max(Now, Tc.LinkFree);
        Tc.LinkFree = Start + Busy;
        double At = Start + Busy + T.Latency;
        LoadTime.add(At - Now);
        ++Loads;
        Q.Done = Loaded;
        P.Loading.push_back(S);
        push(At, EventKind::KVLoaded, I, S, Q.Gen);
        continue;
      }
      P.Prefilling.push_back(S);
      chunk(S);
    }
    for (Slot S : Batch)
      Requests[S].Until = Longest;
    // Prompts to compute run alone; otherwise the decodes run (with the
    // requests that joined them this iteration, already counted).
    P.PromptsAlone = PromptsFirst && !P.Chunks.empty() && P.Joined.empty() &&
                     P.SwappedIn.empty();
    if (PromptsFirst && !P.PromptsAlone)
      addDecodes(Decoders0, DecodeCtx0);
    if (Shape.Tokens == 0) {
      P.Busy = false;
      // A draining replica that holds nothing is off.
      if (P.St == Replica::State::Draining && P.Running == 0 &&
          P.Waiting.empty() && P.Incoming == 0)
        setState(P, Replica::State::Off);
      return;
    }
    // The stale entries of completed requests, once they are many.
    if (P.Admitted.size() > 2 * static_cast<size_t>(P.Running) + 64) {
      std::deque<std::pair<Slot, uint32_t>> Live;
      for (auto E : P.Admitted)
        if (Requests[E.first].Gen == E.second)
          Live.push_back(E);
      P.Admitted.swap(Live);
    }
    P.Busy = true;
    P.Started = Now;
    // A request preempted into a shared queue goes to the first idle
    // replica, as an arrival would.
    if (Preempted && Pl.UsesShared && !Pl.Shared.empty())
      for (unsigned K = 0; K < Pl.Count; ++K)
        if (unsigned J = at(Pl, K);
            !Replicas[J].Busy && routable(Replicas[J])) {
          startIteration(J);
          break;
        }
    // The sequences this iteration decodes (none when prompts run alone).
    const double Decoders = P.PromptsAlone ? 0 : P.Decoding;
    P.DecodersNow = Decoders;
    P.KVUsed += Decoders * Emit;
    double Held = 0; // the replica's, its engines together
    for (unsigned K = firstEngine(I); K < firstEngine(I) + Stages; ++K)
      Held += Replicas[K].KVUsed;
    PeakKV = std::max(PeakKV, Held);
    ++Iterations;
    // Swaps copy over the host link in the same step (vLLM's cache engine
    // swaps before the model runs).
    double Took =
        Step(Shape) + (P.SwapBytes > 0 ? P.SwapBytes / C.SwapBandwidth : 0);
    if (Spec && C.Speculate.Draft) {
      // The draft runs the iteration's prompt chunks and a step of every
      // decode, then k - 1 more decode steps, its context growing by one
      // token a step.
      const double Extra = Decoders * (Verify - 1);
      const double Ctx = Decoders > 0 ? P.DecodeCtx : 0;
      StepShape Draft = Shape;
      Draft.Tokens -= Extra;
      Draft.DecodeTokens -= Extra;
      Draft.DecodePairs = Ctx + Decoders;
      Draft.ContextTokens -= Extra;
      Draft.DecodeContextTokens -= Extra;
      Took += C.Speculate.Draft(Draft);
      for (unsigned J = 1; J < C.Speculate.Tokens && Decoders > 0; ++J) {
        StepShape D;
        D.Sequences = D.Tokens = D.DecodeTokens = Decoders;
        D.DecodePairs = D.ContextTokens = Ctx + Decoders * (J + 1);
        D.DecodeSequences = Decoders;
        D.DecodeContextTokens = D.ContextTokens;
        Took += C.Speculate.Draft(D);
      }
    }
    P.SwapBytes = 0;
    // Under pipeline parallelism the iteration's micro-batch takes Took /
    // Stages on each of its replica's stages in turn, a stage serving the
    // engines' micro-batches first come, first served (a flow shop).
    double End = Now + Took;
    if (Stages > 1) {
      const double Each = Took / Stages;
      End = Now;
      for (unsigned K = firstEngine(I); K < firstEngine(I) + Stages; ++K) {
        End = std::max(End, StageFree[K]) + Each;
        StageFree[K] = End;
      }
    }
    // The running batch: a time-average over the decodes' iterations (an
    // iteration of prompts alone is not the batch the running sequences
    // decode in), as Little's law counts the sequences in the slots; each
    // weighs the time its engine takes for it (through every stage under
    // pipeline parallelism, as the KV area below). A mean per iteration
    // would weigh the short iterations of the run's drain, when its last
    // long outputs finish a few at a time, as much as the full ones (V02:
    // 633 sequences against 743 by Little's law).
    const double Span = Stages > 1 ? End - Now : Took;
    if (!P.PromptsAlone) {
      BatchSum += Shape.Sequences * Span;
      BatchTime += Span;
    }
    P.Took = Took;
    P.BusyTime += Took;
    P.Ends = End;
    P.KVArea += P.KVUsed * Span;
    push(End, EventKind::IterationEnd, I);
  }

  void record(const Request &Q, bool Rejected, bool Met = false,
              bool WasShed = false) {
    if (!Sink)
      return;
    RequestRecord Rec;
    Rec.Id = Q.Id;
    Rec.Class = Q.Class;
    Rec.Arrival = Q.Arrival - First;
    Rec.Prompt = Q.Prompt;
    Rec.Output = Q.Output;
    Rec.CachedPrompt = Q.Cached;
    Rec.Preemptions = Q.Preempted;
    Rec.Replica = Q.Replica / Stages;
    Rec.Rejected = Rejected && !WasShed;
    Rec.Shed = WasShed;
    Rec.MetTargets = Met;
    if (!Rejected) {
      Rec.TTFT = Q.FirstToken - Q.Arrival + C.RequestOverhead;
      Rec.E2E = Now - Q.Arrival + C.RequestOverhead;
    }
    Sink(Rec);
  }

  void firstToken(Request &Q) {
    Q.FirstToken = Now;
    double ToFirst = Now - Q.Arrival + C.RequestOverhead;
    TTFT.add(ToFirst);
    PerClass[Q.Class].TTFT.add(ToFirst);
  }

  void complete(Slot S) {
    Request &Q = Requests[S];
    ++Q.Gen;
    const RequestClass &K = Classes[Q.Class];
    ClassHistograms &H = PerClass[Q.Class];
    double Latency = Now - Q.Arrival + C.RequestOverhead,
           ToFirst = Q.FirstToken - Q.Arrival + C.RequestOverhead;
    E2E.add(Latency);
    H.E2E.add(Latency);
    bool Met = !(K.TTFTTarget > 0 && ToFirst > K.TTFTTarget);
    if (Q.Output > 1) {
      double Tpot = (Now - Q.FirstToken) / (Q.Output - 1);
      TPOT.add(Tpot);
      H.TPOT.add(Tpot);
      Met = Met && !(K.TPOTTarget > 0 && Tpot > K.TPOTTarget);
    }
    // Goodput counts the requests of classes with targets that meet them.
    Met = Met && (K.TTFTTarget > 0 || K.TPOTTarget > 0);
    ++H.Completed;
    H.Met += Met;
    ++Completed;
    Last = Now;
    record(Q, false, Met);
    endTurn(Q, true);
    Free.push_back(S);
    nextOfClient();
  }

  void addIdle(uint32_t V) {
    Conversations[V].IdleAt = static_cast<uint32_t>(IdleConversations.size());
    IdleConversations.push_back(V);
  }
  void removeIdle(uint32_t V) {
    uint32_t At = Conversations[V].IdleAt, Last = IdleConversations.back();
    IdleConversations[At] = Last;
    Conversations[Last].IdleAt = At;
    IdleConversations.pop_back();
  }

  /// Makes an arriving request a turn of a conversation (Sessions): the
  /// next turn of an idle one, or the first of a new one; false when
  /// every conversation has a turn in flight.
  bool converse(Request &Q) {
    auto pick = [&] {
      size_t N = IdleConversations.size();
      return IdleConversations[std::min(
          static_cast<size_t>(R.uniform() * static_cast<double>(N)), N - 1)];
    };
    uint32_t V = NoGroup;
    bool Next = false;
    if (!IdleConversations.empty() && R.uniform() < C.Session.Reuse) {
      V = pick();
      const Conversation &Cv = Conversations[V];
      // Its context and this turn must fit an empty replica's cache, else
      // a new conversation takes its place.
      Next =
          Cv.Context > 0 &&
          fitsEmpty(static_cast<double>(Cv.Context) + Q.Prompt, Q.Output) &&
          withinContext(static_cast<double>(Cv.Context) + Q.Prompt, Q.Output);
    }
    if (V == NoGroup) {
      if (Opened < C.Session.Open) {
        V = Opened++;
        addIdle(V);
      } else if (!IdleConversations.empty()) {
        V = pick();
      } else {
        return false; // every conversation has a turn in flight
      }
    }
    Conversation &Cv = Conversations[V];
    removeIdle(V);
    Cv.Busy = true;
    if (Next) {
      Q.Prompt = static_cast<uint32_t>(
          std::min<uint64_t>(Cv.Context + Q.Prompt, 4000000000u));
      ++FollowUps;
    } else {
      ++Cv.Gen; // a new conversation: the old one's contexts serve no one
      Cv.Context = 0;
      ++NumConversations;
      forget(SessionBase + V);
      // It opens with a shared prefix (a system prompt) as a request
      // does, which its context then holds.
      Cv.Prefix = NoGroup;
      if (C.Prefix.Groups > 0 && C.Prefix.Tokens > 0 &&
          R.uniform() < C.Prefix.Share) {
        Cv.Prefix = drawPrefix();
        Q.Prompt = static_cast<uint32_t>(std::min<uint64_t>(
            uint64_t(Q.Prompt) + C.Prefix.Tokens, 4000000000u));
      }
    }
    Q.Session = SessionBase + V;
    Q.SessionGen = Cv.Gen;
    // A first turn has no context to find: its prefix is its system
    // prompt's (admission chooses again for a later turn, replica by
    // replica).
    Q.Group = Next || Cv.Prefix == NoGroup ? Q.Session : Cv.Prefix;
    Q.GroupGen = Q.Group == Q.Session ? Cv.Gen : 0;
    return true;
  }

  /// Whether the engine admits a request of \p Prompt tokens and \p
  /// Output: prompt + max_tokens within the model's context, max_tokens
  /// being the output's cap where one is given, else the request's own
  /// output (as benchmark clients send it).
  bool withinContext(double Prompt, uint32_t Output) const {
    double Out = C.OutputCap > 0 ? C.OutputCap : Output;
    return C.ContextTokens <= 0 || Prompt + Out <= C.ContextTokens;
  }

  /// Whether a request of \p Prompt tokens and \p Output output tokens fits
  /// an empty replica's KV cache at its last step: its prompt, every output
  /// token but the last (whose KV is never stored) and the Verify - 1
  /// tokens a speculative last step verifies beyond them; reserved to
  /// completion, the output the engine reserves (reserve()).
  bool fitsEmpty(double Prompt, uint32_t Output) const {
    double Out =
        C.ReserveToCompletion ? std::max<double>(Output, C.OutputCap) : Output;
    return C.KVCapacityTokens <= 0 ||
           Prompt + Out - 2 + Verify <= C.KVCapacityTokens;
  }

  /// One of the shared prefixes, uniformly.
  uint32_t drawPrefix() {
    return std::min(static_cast<uint32_t>(R.uniform() * C.Prefix.Groups),
                    C.Prefix.Groups - 1);
  }

  /// Frees what caches hold of a closed conversation \p G (its place now
  /// another's): idle HBM entries and tier copies.
  void forget(uint32_t G) {
    if (!Caching)
      return;
    for (Replica &P : Replicas) {
      PrefixEntry &E = P.Prefix[G];
      if (E.Resident && E.Ready && E.Refs == 0)
        drop(P, G);
    }
    auto purge = [&](TierCache &Tc) {
      if (!Tc.In[G])
        return;
      Tc.Used -= Tc.In[G];
      Tc.In[G] = 0;
      Tc.Lru.erase(Tc.Pos[G]);
    };
    for (size_t T = 0; T < C.Tiers.size(); ++T) {
      if (C.Tiers[T].Shared)
        purge(SharedTiers[T]);
      else
        for (Replica &P : Replicas)
          purge(P.Tiers[T]);
    }
  }

  /// A conversation's turn ends: completed, its context is its prompt and
  /// output; rejected or shed, the conversation is as it was.
  void endTurn(const Request &Q, bool Completed) {
    if (Q.Session == NoGroup)
      return;
    uint32_t V = Q.Session - SessionBase;
    Conversation &Cv = Conversations[V];
    if (Completed)
      Cv.Context = static_cast<uint64_t>(Q.Prompt) + Q.Output;
    Cv.Busy = false;
    addIdle(V);
  }

  /// How a transferred request with \p Ctx tokens of context uses the
  /// shared prefix of decode replica \p D: Shares the prefix \p D holds
  /// (computed, resident), Seeds its own copy there (\p D holds none), or
  /// None (no shared prefix, or one \p D is computing itself).
  /// Conversations' contexts are not shared across the two pools.
  enum class DecodeShare { None, Shares, Seeds };
  DecodeShare decodeSideSharing(const Replica &D, const Request &Q,
                                double Ctx) const {
    uint32_t G = decodeSidePrefix(Q);
    if (!Caching || G == NoGroup || C.Prefix.Tokens > Ctx)
      return DecodeShare::None;
    const PrefixEntry &E = D.Prefix[G];
    if (!E.Resident)
      return DecodeShare::Seeds;
    return E.Ready && E.Gen == 0 ? DecodeShare::Shares : DecodeShare::None;
  }

  /// The shared prefix a transferred request may share on its decode
  /// replica: its own, or, for a conversation's turn (whose prefill may
  /// have reused the conversation's context instead), the system prompt
  /// the conversation opened with; NoGroup when it has none.
  uint32_t decodeSidePrefix(const Request &Q) const {
    if (Q.Group != NoGroup && Q.Group < SessionBase)
      return Q.Group;
    if (Q.Session != NoGroup)
      return Conversations[Q.Session - SessionBase].Prefix;
    return NoGroup;
  }

  /// A prefill replica finished a prompt: its KV cache goes to a decode
  /// replica over the two replicas' links, after the transfers queued on
  /// either. The blocks of a shared prefix the decode replica holds are
  /// not sent (vLLM's and Dynamo's decode side asks only for the blocks
  /// its own prefix cache misses); were that prefix evicted before the
  /// request is admitted there, the request is taken to have it.
  void sendKV(Replica &P, Slot S) {
    Request &Q = Requests[S];
    unsigned To = route(Pools[0], Q);
    Replica &D = Replicas[To];
    double Sent = static_cast<double>(Q.Prompt);
    if (decodeSideSharing(D, Q, Q.Prefill - 1.0) == DecodeShare::Shares)
      Sent -= D.Prefix[decodeSidePrefix(Q)].Tokens;
    double Bytes = Sent * C.Disagg.BytesPerToken;
    double Busy = Bytes / C.Disagg.Bandwidth;
    double Start = std::max({Now, P.LinkFree, D.LinkFree});
    P.LinkFree = D.LinkFree = Start + Busy;
    double At = Start + Busy + C.Disagg.Latency;
    Transfer.add(At - Now);
    ++Transfers;
    ++D.Incoming;
    push(At, EventKind::KVArrived, To, S);
  }

  void landed(unsigned To, Slot S) {
    Replica &D = Replicas[To];
    --D.Incoming;
    Request &Q = Requests[S];
    Q.KVReady = true;
    D.Waiting.pushBack(S, Q.Level);
    if (!D.Busy)
      startIteration(To);
  }

  void finishIteration(unsigned I) {
    Replica &P = Replicas[I];
    double Took = Now - P.Started;
    // A transferred request's first decode gives its first token; every
    // other sequence that decoded emits a token after a gap of this
    // iteration (it emitted in the one before, which ended when this
    // began).
    for (Slot S : P.Joined)
      firstToken(Requests[S]);
    // A request swapped back in emitted its last token before it was
    // preempted: its gap spans the wait.
    for (Slot S : P.SwappedIn)
      ITL.add(Now - Requests[S].LastToken);
    // Under speculative decoding a sequence's tokens of an iteration come
    // together: the gap is the iteration's (vLLM's benchmark counts a
    // chunk of tokens as one).
    const uint64_t Emit = emitted(P.Iter, P.Iter + 1);
    // A static batch's sequence whose output ended before this iteration
    // decoded in it as padding.
    while (!P.RealEnds.empty() && std::get<0>(P.RealEnds.top()) < P.Iter) {
      auto [At, S, G] = P.RealEnds.top();
      P.RealEnds.pop();
      P.Padding += Requests[S].Gen == G;
    }
    if (P.DecodersNow > 0) {
      uint64_t Gaps = static_cast<uint64_t>(P.DecodersNow - P.Padding) -
                      P.Joined.size() - P.SwappedIn.size();
      if (PromptsFirst) {
        // Prompts first: the sequences given a token by iterations of
        // prompts alone since the decodes last ran wait from that token,
        // the others from the decodes' last iteration.
        for (auto [At, N] : P.Fresh) {
          ITL.add(Now - At, static_cast<uint64_t>(N));
          Gaps -= static_cast<uint64_t>(N);
        }
        P.Fresh.clear();
        Took = Now - P.DecodedAt;
      }
      if (Gaps > 0)
        ITL.add(Took, Gaps);
      OutputTokens += static_cast<uint64_t>(P.DecodersNow) * Emit;
      P.DecodeCtx += P.DecodersNow * static_cast<double>(Emit);
    }
    // Iterations of prompts alone end no decode.
    while (!P.PromptsAlone && !P.Finishing.empty() &&
           std::get<0>(P.Finishing.top()) <= P.Iter) {
      auto [At, S, G] = P.Finishing.top();
      P.Finishing.pop();
      Request &Q = Requests[S];
      if (Q.Gen != G)
        continue; // preempted since
      // Its KV tokens, a speculative last step's beyond its output
      // included; the tokens past its output are not emitted.
      uint64_t Made = emitted(Q.JoinIter, P.Iter + 1);
      double Ctx = Q.JoinCtx + static_cast<double>(Made);
      OutputTokens -= Q.JoinGenerated + Made - Q.Output;
      P.Decoding -= 1;
      P.DecodeCtx -= Ctx;
      // What it keeps (a conversation's context) is its real context: a
      // speculative step's tokens past its output and a static batch's
      // padding are freed.
      double Real =
          Q.JoinCtx + static_cast<double>(Q.Output > Q.JoinGenerated
                                              ? Q.Output - Q.JoinGenerated
                                              : 0);
      P.KVUsed -= Ctx - Real;
      leave(P, Q, Real);
      unreserve(P, Q);
      --P.Running;
      Q.Decoding = false;
      complete(S);
    }
    for (const Chunk &K : P.Chunks) {
      Request &Q = Requests[K.S];
      Q.Done += K.Tokens;
      // The request computing a shared prefix makes it ready for others.
      if (Q.Shared && Q.Done >= P.Prefix[Q.Group].Tokens)
        P.Prefix[Q.Group].Ready = true;
      if (Q.Done < Q.Prefill)
        continue;
      P.Prefilling.erase(
          std::find(P.Prefilling.begin(), P.Prefilling.end(), K.S));
      if (P.PrefillOnly) {
        leave(P, Q, Q.Prefill);
        unreserve(P, Q);
        --P.Running;
        ++Q.Gen;
        sendKV(P, K.S);
        continue;
      }
      // The prompt's last chunk samples the next token: the first, or,
      // after a preemption, the next one of its output.
      if (Q.Generated == 0)
        firstToken(Q);
      else
        ITL.add(Now - Q.LastToken);
      Q.LastToken = Now;
      ++Q.Generated;
      ++OutputTokens;
      if (Q.Generated >= Q.Until) {
        leave(P, Q, Q.Prefill);
        unreserve(P, Q);
        --P.Running;
        complete(K.S);
        continue;
      }
      Q.Decoding = true;
      // Its first decode is the decodes' next iteration: this one's
      // successor, or, after prompts alone, the one Iter still names.
      Q.JoinIter = P.PromptsAlone ? P.Iter : P.Iter + 1;
      if (P.PromptsAlone) {
        if (P.Fresh.empty() || P.Fresh.back().first != Now)
          P.Fresh.push_back({Now, 0});
        P.Fresh.back().second += 1;
      }
      Q.JoinCtx = Q.Prefill;
      Q.JoinGenerated = Q.Generated;
      P.Decoding += 1;
      P.DecodeCtx += Q.Prefill;
      P.Finishing.push({lastIteration(Q, Q.Until), K.S, Q.Gen});
      if (Q.Until > Q.Output) {
        // Its real output ends before the batch's: in the iteration its
        // decoding would end in, or now.
        P.RealEnds.push(
            {Q.Generated < Q.Output ? lastIteration(Q, Q.Output) : P.Iter, K.S,
             Q.Gen});
      }
    }
    if (P.Running == 0)
      P.Padding = 0; // a static batch ends together
    if (!P.PromptsAlone) {
      ++P.Iter;
      P.DecodedAt = Now;
    }
    startIteration(I);
  }
};

} // namespace

const char *routingName(Routing R, bool Symbol) {
  switch (R) {
  case Routing::RoundRobin:
    return Symbol ? "round_robin" : "round robin";
  case Routing::LeastOutstanding:
    return Symbol ? "least_outstanding" : "least outstanding";
  case Routing::SharedQueue:
    return Symbol ? "shared_queue" : "a shared queue";
  case Routing::Random:
    return Symbol ? "random" : "random";
  case Routing::LeastKV:
    return Symbol ? "least_kv" : "least KV in use";
  case Routing::PrefixAffinity:
    return Symbol ? "prefix_affinity" : "prefix affinity";
  case Routing::Weighted:
    return Symbol ? "weighted" : "weighted scores";
  }
  return "";
}

Length Length::empirical(const std::vector<Bin> &Weighted) {
  Length L;
  L.K = Kind::Empirical;
  double Sum = 0, Mean = 0;
  for (const Bin &B : Weighted) {
    Sum += B.Cumulative;
    Mean += B.Cumulative * (B.Lo + B.Hi) / 2;
    L.Bins.push_back({B.Lo, B.Hi, Sum});
  }
  L.A = Sum > 0 ? Mean / Sum : 0;
  return L;
}

double Length::mean() const {
  switch (K) {
  case Kind::Empirical:
  case Kind::Fixed:
  case Kind::Geometric:
  case Kind::Lognormal:
    return A;
  case Kind::Uniform:
    return (A + B) / 2;
  }
  return A;
}

Histogram::Histogram() : Bins(NumBins, 0) {}

void Histogram::add(double Seconds, uint64_t Count) {
  if (!Count)
    return;
  N += Count;
  Sum += Seconds * static_cast<double>(Count);
  double Index = Seconds <= MinSeconds
                     ? 0
                     : std::floor(std::log(Seconds / MinSeconds) / LogStep);
  // Past the last bin (10^12 s) no bin holds it: a quantile that lands
  // there is beyond the histogram's range (+inf), not the last bin's.
  if (!(Index < static_cast<double>(NumBins))) {
    Over += Count;
    return;
  }
  Bins[static_cast<size_t>(Index)] += Count;
}

double Histogram::quantile(double Q) const {
  if (!N)
    return 0;
  // The smallest bin holding the ceil(Q N)-th sample; its geometric middle.
  uint64_t Rank = static_cast<uint64_t>(std::ceil(Q * static_cast<double>(N)));
  Rank = std::max<uint64_t>(Rank, 1);
  uint64_t Seen = 0;
  for (size_t I = 0; I < Bins.size(); ++I) {
    Seen += Bins[I];
    if (Seen >= Rank)
      return MinSeconds * std::exp((static_cast<double>(I) + 0.5) * LogStep);
  }
  return std::numeric_limits<double>::infinity(); // among the Over samples
}

namespace {

bool validLength(const Length &L) {
  if (L.K == Length::Kind::Empirical) {
    double Last = 0;
    for (const Length::Bin &B : L.Bins) {
      if (!(B.Lo >= 1 && B.Hi >= B.Lo && B.Hi <= 4e9 && B.Cumulative >= Last &&
            std::isfinite(B.Cumulative)))
        return false;
      Last = B.Cumulative;
    }
    return !L.Bins.empty() && Last > 0;
  }
  return L.A >= 1 && std::isfinite(L.A) && std::isfinite(L.B) &&
         (L.K != Length::Kind::Uniform || L.B >= L.A) &&
         (L.K != Length::Kind::Lognormal || (L.B >= 0 && L.B <= 100));
}

} // namespace

Result simulate(const Config &C, const StepFunction &Step,
                const RequestSink &Sink) {
  auto refuse = [](const char *Why) { throw std::invalid_argument(Why); };
  const Arrivals &A = C.Arrive;
  bool Closed = A.K == Arrivals::Kind::Closed || C.Replay;
  if (C.Replicas == 0 || C.MaxSequences == 0 || C.Requests == 0 ||
      (!Closed && !(C.ArrivalRate > 0 && std::isfinite(C.ArrivalRate))))
    refuse("a simulation needs replicas, slots, requests and an arrival "
           "rate");
  if (!(C.MaxBatchedTokens >= C.MaxSequences) ||
      !std::isfinite(C.MaxBatchedTokens) || !(C.KVCapacityTokens >= 0) ||
      !std::isfinite(C.KVCapacityTokens))
    refuse("the token budget of an iteration must hold every running "
           "sequence's decode token (max batched tokens >= max sequences)");
  if (!(C.PromptChunk == 0 || C.PromptChunk >= 1) ||
      !std::isfinite(C.PromptChunk))
    refuse("a prompt chunk is a finite count of at least one token (0: "
           "none)");
  if (A.K == Arrivals::Kind::Closed && !C.Replay &&
      (A.Users == 0 || !(A.Think >= 0) || !std::isfinite(A.Think)))
    refuse("a closed loop needs at least one user and a think time >= 0");
  if (A.K == Arrivals::Kind::Gamma && !(A.CV >= 0 && A.CV <= 100))
    refuse("Gamma arrivals need a coefficient of variation in [0, 100]");
  if (A.K == Arrivals::Kind::OnOff &&
      !(A.On > 0 && A.Off > 0 && std::isfinite(A.On) && std::isfinite(A.Off)))
    refuse("on/off arrivals need bursts and silences longer than 0 s");
  if (A.K == Arrivals::Kind::Diurnal &&
      !(A.Amplitude >= 0 && A.Amplitude <= 1 && A.Period > 0 &&
        std::isfinite(A.Period)))
    refuse("a diurnal curve needs an amplitude from 0 to 1 and a period "
           "longer than 0 s");
  std::vector<const Length *> Lengths{&C.Prompt, &C.Output};
  double Shares = 0;
  for (const RequestClass &K : C.Classes) {
    Lengths.push_back(&K.Prompt);
    Lengths.push_back(&K.Output);
    if (!(K.Share >= 0) || !std::isfinite(K.Share))
      refuse("a class's share must be a number >= 0");
    Shares += K.Share;
  }
  if (!C.Classes.empty() && !(Shares > 0))
    refuse("the classes' shares add up to 0");
  if (C.Classes.size() > 255)
    refuse("at most 255 request classes");
  for (const Length *L : Lengths)
    if (!validLength(*L))
      refuse("a length distribution needs a mean of at least 1 token (and "
             "B >= A for a uniform one, a spread from 0 to 100 for a lognormal "
             "one, bins of 1 <= low <= high tokens and weights >= 0 adding up "
             "to more than 0 for a histogram), all finite");
  if (!(C.Prefix.Share >= 0 && C.Prefix.Share <= 1))
    refuse("the share of requests with a shared prefix is from 0 to 1");
  if (C.Session.Open > 0) {
    if (!(C.Session.Reuse >= 0 && C.Session.Reuse <= 1))
      refuse("the share of turns that continue a conversation is from 0 "
             "to 1");
    if (C.Session.Open > 10000000)
      refuse("at most 10^7 conversations open at once");
    if (C.Replay)
      refuse("conversations are not simulated with a replayed trace yet");
  }
  if (C.Replay) {
    double Last = 0;
    for (const graph::TraceRow &Row : *C.Replay) {
      if (!(Row.Arrival >= Last) || !std::isfinite(Row.Arrival) ||
          Row.Prompt < 1 || Row.Output < 1)
        refuse("a trace's arrivals must be finite and in order, its "
               "lengths at least 1 token");
      Last = Row.Arrival;
    }
    if (C.Replay->empty())
      refuse("the trace has no requests");
  }
  for (const Autoscaling *S : {&C.Scale, &C.PrefillScale})
    if (S->Enabled &&
        !(S->Min >= 1 && S->Max >= S->Min && S->Max <= 100000 &&
          S->Interval > 0 && std::isfinite(S->Interval) && S->StartUp >= 0 &&
          std::isfinite(S->StartUp) && S->Cooldown >= 0 &&
          std::isfinite(S->Cooldown) && S->Up >= S->Down &&
          std::isfinite(S->Up) && S->Down >= 0))
      refuse("autoscaling needs 1 <= min <= max, an interval above 0, a "
             "start-up and cooldown >= 0, and a scale-up threshold at or "
             "above the scale-down one");
  if (C.Speculate.Tokens > 64 ||
      (C.Speculate.Tokens > 0 &&
       !(C.Speculate.Acceptance >= 0 && C.Speculate.Acceptance <= 1)))
    refuse("speculative decoding needs from 1 to 64 draft tokens and an "
           "acceptance rate from 0 to 1");
  if (C.Static && (C.Disagg.PrefillReplicas > 0 || !C.Tiers.empty()))
    refuse("static batching is not simulated with disaggregation or KV "
           "tiers yet");
  if (C.PrefillScale.Enabled && C.Disagg.PrefillReplicas == 0)
    refuse("the prefill pool scales only under disaggregation");
  if (!(C.Batch.Window >= 0 && std::isfinite(C.Batch.Window)))
    refuse("the batcher's window must be a number >= 0");
  const Admission &Ad = C.Admit;
  if (!(Ad.Rate >= 0 && std::isfinite(Ad.Rate) && Ad.Burst >= 1 &&
        std::isfinite(Ad.Burst) && Ad.ShedQueue >= 0))
    refuse("admission control needs a rate >= 0, a burst of at least 1 and "
           "a shedding queue >= 0");
  if (C.Preempt == Preemption::Swap &&
      !(C.SwapTokens >= 0 && C.SwapBandwidth > 0 &&
        std::isfinite(C.SwapBandwidth) && C.SwapBytesPerToken > 0))
    refuse("swap preemption needs a swap space >= 0, a swap bandwidth "
           "above 0 and the bytes a token's KV takes");
  for (const KVTier &T : C.Tiers)
    if (!(T.CapacityTokens >= 0 && T.Bandwidth > 0 &&
          std::isfinite(T.Bandwidth) && T.Latency >= 0 &&
          std::isfinite(T.Latency)))
      refuse("a KV tier needs a capacity >= 0, a bandwidth above 0 and a "
             "latency >= 0");
  if (!C.Tiers.empty() && !(C.TierBytesPerToken > 0))
    refuse("KV tiers need the bytes a token's KV takes");
  if (!(C.SampleEvery >= 0 && std::isfinite(C.SampleEvery)))
    refuse("the sampling interval must be a number >= 0");
  if (!(C.Weights.Prefix >= 0 && C.Weights.Queue >= 0 && C.Weights.KV >= 0))
    refuse("the weighted router's weights must be numbers >= 0");
  if (C.Disagg.PrefillReplicas > 0 &&
      !(C.Disagg.Bandwidth > 0 && C.Disagg.BytesPerToken >= 0 &&
        C.Disagg.Latency >= 0 && std::isfinite(C.Disagg.Latency)))
    refuse("disaggregation needs a KV fabric bandwidth above 0, and bytes "
           "and a latency >= 0");
  if (C.PipelineStages == 0 || C.PipelineStages > 1024)
    refuse("pipeline parallelism needs from 1 to 1024 stages");
  if (C.PipelineStages > 1) {
    if (C.Disagg.PrefillReplicas > 0 || C.Scale.Enabled || !C.Tiers.empty() ||
        C.Speculate.Tokens > 0)
      refuse("pipeline parallelism is not simulated with disaggregation, "
             "autoscaling, KV tiers or speculative decoding yet");
    // Its engines, each a replica to the scheduler and the router, with
    // their shares of the slots and of the KV cache.
    const unsigned P = C.PipelineStages;
    if (static_cast<uint64_t>(C.Replicas) * P > 1000000)
      refuse("at most 10^6 pipeline engines (replicas x stages)");
    Config E = C;
    E.Replicas = C.Replicas * P;
    if (C.MaxSequences < P)
      refuse("a pipelined replica needs a slot for each of its engines "
             "(batch >= pp)");
    E.MaxSequences = (C.MaxSequences + P - 1) / P; // the most an engine has
    E.KVCapacityTokens = std::floor(C.KVCapacityTokens / P);
    E.SwapTokens = std::floor(C.SwapTokens / P);
    if (C.KVCapacityTokens > 0 && E.KVCapacityTokens < 1)
      refuse("a pipeline stage's engine has no KV-cache token of its own");
    return Simulation(E, Step, Sink, C.MaxSequences).run();
  }
  return Simulation(C, Step, Sink).run();
}

} // namespace mlsc::sim
