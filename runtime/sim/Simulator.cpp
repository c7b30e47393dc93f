//===- Simulator.cpp - A discrete-event simulator of LLM serving ----------===//
//
// Events are arrivals and the ends of replicas' iterations, in time order
// (ties by creation order, so runs are reproducible). A replica's
// decoding sequences advance one token an iteration together, so the
// replica keeps their count, the sum of their contexts and a heap of the
// iterations they finish in, instead of visiting each one every iteration.
//
//===----------------------------------------------------------------------===//

#include "runtime/sim/Simulator.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <numbers>
#include <queue>
#include <random>
#include <stdexcept>
#include <tuple>

namespace mlsc::sim {

namespace {

constexpr double MinSeconds = 1e-9, BinWidth = 0.01;
const double LogStep = std::log1p(BinWidth);
constexpr size_t NumBins = 3500; // 1 ns x 1.01^3500 > 10^6 s

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
  }
  return static_cast<uint32_t>(std::clamp(V, 1.0, 4.0e9));
}

struct Request {
  double Arrival = 0, FirstToken = 0, LastToken = 0;
  uint32_t Prompt = 0, Output = 0;
  /// The tokens its next prefill runs: the prompt, and after a preemption
  /// the prompt and the tokens generated so far (recomputed, as vLLM's
  /// default preemption does); Done of them have run.
  uint32_t Prefill = 0, Done = 0;
  uint32_t Generated = 0; ///< output tokens emitted
  /// While decoding: the iteration it joined, its context then and the
  /// tokens it had generated then.
  uint64_t JoinIter = 0;
  uint32_t JoinCtx = 0, JoinGenerated = 0;
  bool Decoding = false;
  bool Waited = false; ///< its wait for a slot is recorded (once)
  uint32_t Gen = 0;    ///< bumped when it leaves a replica's running set
};

/// A request's slot, reused once it completes.
using Slot = uint32_t;

struct Chunk {
  Slot S;
  uint32_t Tokens;
};

struct Replica {
  std::deque<Slot> Waiting, Prefilling;
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
  uint64_t Iter = 0;
  unsigned Running = 0; ///< admitted and not complete
  double KVUsed = 0;    ///< tokens whose KV the cache holds
  bool Busy = false;
  double Started = 0, DecodersNow = 0;
  std::vector<Chunk> Chunks; ///< this iteration's prompt chunks
};

enum class EventKind : uint8_t { Arrival, IterationEnd };

struct Event {
  double Time;
  uint64_t Seq;
  EventKind Kind;
  unsigned Replica;
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

class Simulation {
public:
  Simulation(const Config &C, const StepFunction &Step)
      : C(C), Step(Step), R(C.Seed), Replicas(C.Replicas) {}

  Result run() {
    push(R.exponential(C.ArrivalRate), EventKind::Arrival, 0);
    while (!Events.empty()) {
      Event E = Events.top();
      Events.pop();
      advance(E.Time);
      if (E.Kind == EventKind::Arrival)
        arrive();
      else
        finishIteration(E.Replica);
    }
    Result Out;
    Out.TTFT = stats(TTFT);
    Out.TPOT = stats(TPOT);
    Out.ITL = stats(ITL);
    Out.E2E = stats(E2E);
    Out.QueueWait = stats(Wait);
    Out.Arrived = Arrived;
    Out.Completed = Completed;
    Out.Rejected = Rejected;
    Out.Preemptions = Preemptions;
    Out.PeakKVTokens = PeakKV;
    Out.OutputTokens = OutputTokens;
    Out.Iterations = Iterations;
    Out.Makespan = Completed ? Last - First : 0;
    if (Out.Makespan > 0) {
      Out.Throughput = static_cast<double>(OutputTokens) / Out.Makespan;
      Out.MeanInSystem = Area / Out.Makespan;
      Out.ArrivalRateSeen = static_cast<double>(Completed) / Out.Makespan;
    }
    Out.MeanBatch = Iterations ? BatchSum / static_cast<double>(Iterations) : 0;
    return Out;
  }

private:
  const Config &C;
  const StepFunction &Step;
  Rng R;
  std::vector<Replica> Replicas;
  std::vector<Request> Requests;
  std::vector<Slot> Free;
  std::deque<Slot> Shared; ///< the shared queue (Routing::SharedQueue)
  std::priority_queue<Event, std::vector<Event>, std::greater<>> Events;
  uint64_t Seq = 0, Arrived = 0, Completed = 0, Rejected = 0, OutputTokens = 0,
           Iterations = 0, Preemptions = 0;
  unsigned NextReplica = 0;
  double Now = 0, First = 0, Last = 0, Area = 0, BatchSum = 0, PeakKV = 0;
  Histogram TTFT, TPOT, ITL, E2E, Wait;

  void push(double T, EventKind K, unsigned Rep) {
    Events.push({T, Seq++, K, Rep});
  }

  /// Moves the clock, integrating the requests in the system (Little's L).
  void advance(double T) {
    Area += static_cast<double>(Arrived - Completed - Rejected) * (T - Now);
    Now = T;
  }

  void arrive() {
    if (Arrived == 0)
      First = Now;
    ++Arrived;
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
    Q.Arrival = Now;
    Q.Prompt = draw(C.Prompt, R);
    Q.Output = draw(C.Output, R);
    Q.Prefill = Q.Prompt;
    if (Arrived < C.Requests)
      push(Now + R.exponential(C.ArrivalRate), EventKind::Arrival, 0);
    // A request whose cache (its prompt and every output token but the
    // last, whose KV is never stored) would not fit an empty replica
    // never could.
    if (C.KVCapacityTokens > 0 &&
        static_cast<double>(Q.Prompt) + Q.Output - 1 > C.KVCapacityTokens) {
      ++Rejected;
      Free.push_back(S);
      return;
    }
    if (C.Route == Routing::SharedQueue) {
      Shared.push_back(S);
      // The first idle replica takes it; busy ones take from the queue
      // when their iteration ends.
      for (unsigned I = 0; I < C.Replicas; ++I)
        if (!Replicas[I].Busy) {
          startIteration(I);
          break;
        }
      return;
    }
    unsigned To = route();
    Replicas[To].Waiting.push_back(S);
    if (!Replicas[To].Busy)
      startIteration(To);
  }

  unsigned route() {
    if (C.Route == Routing::RoundRobin) {
      unsigned To = NextReplica;
      NextReplica = (NextReplica + 1) % C.Replicas;
      return To;
    }
    unsigned Best = 0;
    size_t BestLoad = SIZE_MAX;
    for (unsigned I = 0; I < C.Replicas; ++I) {
      size_t Load = Replicas[I].Waiting.size() + Replicas[I].Running;
      if (Load < BestLoad) {
        Best = I;
        BestLoad = Load;
      }
    }
    return Best;
  }

  /// The context of a decoding request's next step (its KV tokens held).
  static double contextOf(const Replica &P, const Request &Q) {
    return Q.JoinCtx + static_cast<double>(P.Iter - Q.JoinIter);
  }

  /// Preempts the newest running request (vLLM's recompute preemption): its
  /// cache is freed, and it waits at the head of the queue to run its
  /// prompt and what it generated again. False when none runs.
  bool preemptNewest(Replica &P, std::deque<Slot> &Waiting) {
    while (!P.Admitted.empty()) {
      auto [S, G] = P.Admitted.back();
      P.Admitted.pop_back();
      Request &Q = Requests[S];
      if (Q.Gen != G)
        continue; // completed or preempted since
      ++Q.Gen;
      if (Q.Decoding) {
        double Ctx = contextOf(P, Q);
        Q.Generated =
            Q.JoinGenerated + static_cast<uint32_t>(P.Iter - Q.JoinIter);
        P.Decoding -= 1;
        P.DecodeCtx -= Ctx;
        P.KVUsed -= Ctx;
        Q.Decoding = false;
        Q.LastToken = Now; // it emitted at the end of the last iteration
      } else {
        auto It = std::find(P.Prefilling.begin(), P.Prefilling.end(), S);
        assert(It != P.Prefilling.end() && "a running request prefills");
        P.Prefilling.erase(It);
        P.KVUsed -= Q.Prefill;
      }
      Q.Prefill = Q.Prompt + Q.Generated;
      Q.Done = 0;
      --P.Running;
      ++Preemptions;
      Waiting.push_front(S);
      return true;
    }
    return false;
  }

  /// vLLM's order: the decodes, then the running prompts' chunks, then new
  /// requests while slots, token budget and KV capacity allow. A decode
  /// stores one more token; when the cache cannot hold them, the newest
  /// requests are preempted.
  void startIteration(unsigned I) {
    Replica &P = Replicas[I];
    std::deque<Slot> &Waiting =
        C.Route == Routing::SharedQueue ? Shared : P.Waiting;
    bool Preempted = false;
    if (C.KVCapacityTokens > 0)
      while (P.KVUsed + P.Decoding > C.KVCapacityTokens &&
             preemptNewest(P, Waiting))
        Preempted = true;
    StepShape Shape;
    double Budget = C.MaxBatchedTokens;
    Shape.Sequences = P.Decoding;
    Shape.Tokens = P.Decoding;
    // A decode step of a sequence with c cached tokens: c + 1 pairs, c + 1
    // tokens of KV read.
    Shape.DecodePairs = P.DecodeCtx + P.Decoding;
    Shape.ContextTokens = P.DecodeCtx + P.Decoding;
    Budget -= P.Decoding;
    P.Chunks.clear();
    auto chunk = [&](Slot S) {
      Request &Q = Requests[S];
      double N = std::min<double>(Q.Prefill - Q.Done, Budget);
      Shape.Sequences += 1;
      Shape.Tokens += N;
      Shape.PrefillPairs += N * Q.Done + N * (N + 1) / 2;
      Shape.ContextTokens += Q.Done + N;
      Budget -= N;
      P.Chunks.push_back({S, static_cast<uint32_t>(N)});
    };
    for (Slot S : P.Prefilling) {
      if (Budget < 1)
        break;
      chunk(S);
    }
    // After a preemption no request is admitted this iteration (vLLM's
    // scheduler does the same): the one just preempted would come back.
    while ((!Preempted || P.Running == 0) && Budget >= 1 && !Waiting.empty() &&
           P.Running < C.MaxSequences) {
      Slot S = Waiting.front();
      Request &Q = Requests[S];
      // Admitted when the cache holds its prompt beside the decodes'
      // next tokens.
      if (C.KVCapacityTokens > 0 &&
          P.KVUsed + P.Decoding + Q.Prefill > C.KVCapacityTokens)
        break; // waits for a completion to free its cache
      Waiting.pop_front();
      P.KVUsed += Q.Prefill;
      ++P.Running;
      if (!Q.Waited) {
        Wait.add(Now - Q.Arrival);
        Q.Waited = true;
      }
      P.Prefilling.push_back(S);
      P.Admitted.push_back({S, Q.Gen});
      chunk(S);
    }
    if (Shape.Tokens == 0) {
      P.Busy = false;
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
    // A request preempted into the shared queue goes to the first idle
    // replica, as an arrival would.
    if (Preempted && C.Route == Routing::SharedQueue && !Shared.empty())
      for (unsigned J = 0; J < C.Replicas; ++J)
        if (!Replicas[J].Busy) {
          startIteration(J);
          break;
        }
    P.DecodersNow = P.Decoding;
    P.KVUsed += P.Decoding;
    PeakKV = std::max(PeakKV, P.KVUsed);
    BatchSum += Shape.Sequences;
    ++Iterations;
    push(Now + Step(Shape), EventKind::IterationEnd, I);
  }

  void complete(Slot S) {
    Request &Q = Requests[S];
    ++Q.Gen;
    E2E.add(Now - Q.Arrival);
    if (Q.Output > 1)
      TPOT.add((Now - Q.FirstToken) / (Q.Output - 1));
    ++Completed;
    Last = Now;
    Free.push_back(S);
  }

  void finishIteration(unsigned I) {
    Replica &P = Replicas[I];
    double Took = Now - P.Started;
    // Every sequence that decoded emits a token, after a gap of this
    // iteration (it emitted in the one before, which ended when this began).
    if (P.DecodersNow > 0) {
      ITL.add(Took, static_cast<uint64_t>(P.DecodersNow));
      OutputTokens += static_cast<uint64_t>(P.DecodersNow);
      P.DecodeCtx += P.DecodersNow;
    }
    while (!P.Finishing.empty() && std::get<0>(P.Finishing.top()) <= P.Iter) {
      auto [At, S, G] = P.Finishing.top();
      P.Finishing.pop();
      Request &Q = Requests[S];
      if (Q.Gen != G)
        continue; // preempted since
      double Ctx = Q.JoinCtx + static_cast<double>(Q.Output - Q.JoinGenerated);
      P.Decoding -= 1;
      P.DecodeCtx -= Ctx;
      P.KVUsed -= Ctx;
      --P.Running;
      Q.Decoding = false;
      complete(S);
    }
    for (const Chunk &K : P.Chunks) {
      Request &Q = Requests[K.S];
      Q.Done += K.Tokens;
      if (Q.Done < Q.Prefill)
        continue;
      // The prompt's last chunk samples the next token: the first, or,
      // after a preemption, the next one of its output.
      P.Prefilling.erase(
          std::find(P.Prefilling.begin(), P.Prefilling.end(), K.S));
      if (Q.Generated == 0) {
        Q.FirstToken = Now;
        TTFT.add(Now - Q.Arrival);
      } else {
        ITL.add(Now - Q.LastToken);
      }
      ++Q.Generated;
      ++OutputTokens;
      if (Q.Generated >= Q.Output) {
        P.KVUsed -= Q.Prefill;
        --P.Running;
        complete(K.S);
        continue;
      }
      Q.Decoding = true;
      Q.JoinIter = P.Iter + 1;
      Q.JoinCtx = Q.Prefill;
      Q.JoinGenerated = Q.Generated;
      P.Decoding += 1;
      P.DecodeCtx += Q.Prefill;
      P.Finishing.push({P.Iter + Q.Output - Q.Generated, K.S, Q.Gen});
    }
    ++P.Iter;
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
  }
  return "";
}

double Length::mean() const {
  switch (K) {
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
  Bins[static_cast<size_t>(std::clamp(Index, 0.0, NumBins - 1.0))] += Count;
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
  return MinSeconds * std::exp(static_cast<double>(NumBins) * LogStep);
}

Result simulate(const Config &C, const StepFunction &Step) {
  if (C.Replicas == 0 || C.MaxSequences == 0 || !(C.ArrivalRate > 0) ||
      C.Requests == 0)
    throw std::invalid_argument(
        "a simulation needs replicas, slots, requests and an arrival rate");
  if (C.MaxBatchedTokens < C.MaxSequences)
    throw std::invalid_argument(
        "the token budget of an iteration must hold every running "
        "sequence's decode token (max batched tokens >= max sequences)");
  for (const Length *L : {&C.Prompt, &C.Output})
    if (!(L->A >= 1) || (L->K == Length::Kind::Uniform && !(L->B >= L->A)) ||
        (L->K == Length::Kind::Lognormal && !(L->B >= 0)))
      throw std::invalid_argument("a length distribution needs a mean of at "
                                  "least 1 token (and B >= A for a uniform "
                                  "one, a spread >= 0 for a lognormal one)");
  return Simulation(C, Step).run();
}

} // namespace mlsc::sim
