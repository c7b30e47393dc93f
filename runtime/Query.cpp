//===- Query.cpp - Inverse queries and sweeps on a compiled graph ---------===//

#include "runtime/Query.h"
#include "runtime/Format.h"
#include "runtime/Parallel.h"
#include "runtime/sim/Simulator.h"
#include "runtime/walls/Formulas.h"

#include "llvm/ADT/ArrayRef.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace mlsc {

using query::Query;
using query::Term;
using query::Variable;

namespace {

/// Samples taken over a range before bracketing.
constexpr unsigned SampleCount = 9;

/// Whether every condition holds.
bool conditionsHold(const Evaluator &E, const Query &Q) {
  for (const Term &C : Q.Conditions) {
    double V = E.value(C.Node);
    if (!(V != 0) || std::isnan(V))
      return false;
  }
  return true;
}

/// Whether every condition holds and every computed field is within its
/// domain.
bool holds(const Evaluator &E, const Query &Q) {
  return conditionsHold(E, Q) && firstInvalid(E) < 0;
}

/// The memory a device needs and what it has, when it needs more (and
/// both are finite and positive).
std::optional<std::pair<double, double>> memoryOverrun(const Evaluator &E) {
  const graph::Graph &G = E.graph();
  std::optional<graph::NodeId> Need = G.find(MetricId::MemoryPerDevice),
                               Have = G.find(MetricId::DeviceMemory);
  if (!Need || !Have)
    return std::nullopt;
  double N = E.value(*Need), H = E.value(*Have);
  if (!(N > H) || !(H > 0) || !std::isfinite(N))
    return std::nullopt;
  return std::pair{N, H};
}

/// How far a failed comparison is from holding, relative to its bound; 0
/// when it holds, +inf when it is not a comparison.
double violation(const Evaluator &E, const Term &C) {
  const graph::Graph &G = E.graph();
  if (E.value(C.Node) != 0)
    return 0;
  // The queue (the solver's or the user's `queue_stable`): how far past
  // 100% the busier of the slots and the prefills is, so that of two
  // unstable ends the nearer is the closer.
  if (G.find(MetricId::QueueStable) == C.Node) {
    double Load = 0;
    for (MetricId M : {MetricId::Utilisation, MetricId::PrefillUtilisation})
      if (std::optional<graph::NodeId> N = G.find(M))
        Load = std::max(Load, E.value(*N));
    return std::isfinite(Load) ? std::max(Load - 1, 1e-9)
                               : std::numeric_limits<double>::infinity();
  }
  // Feasibility: how far the memory a device needs is past what it has,
  // when that is what fails; any other check, no distance.
  if (G.find(MetricId::Feasible) == C.Node) {
    if (std::optional<std::pair<double, double>> M = memoryOverrun(E))
      return M->first / M->second - 1;
    return std::numeric_limits<double>::infinity();
  }
  const graph::Node &N = G.node(C.Node);
  if (N.Kind < graph::Op::Lt || N.Kind > graph::Op::Ge)
    return std::numeric_limits<double>::infinity();
  double L = E.value(G.inputOf(C.Node, 0)), R = E.value(G.inputOf(C.Node, 1));
  double Scale = std::max(std::fabs(R), 1e-300);
  double D = std::fabs(L - R) / Scale;
  // A strict comparison fails with equal sides: still a (tiny) violation.
  return std::isnan(D) ? std::numeric_limits<double>::infinity()
                       : std::max(D, std::numeric_limits<double>::min());
}

/// How far a point is from meeting the conditions: first the conditions
/// no finite distance measures (a latency that is infinite because the
/// queue is not), then the sum of the others' violations, so that of two
/// points whose TTFT is unbounded the less loaded is the closer. A point
/// outside a field's domain is farther than any. \p FirstFailing, when
/// given, receives the first condition that fails (-1 when none does).
struct Shortfall {
  double Unbounded = 0, Sum = 0;
  bool operator<(const Shortfall &O) const {
    return Unbounded != O.Unbounded ? Unbounded < O.Unbounded : Sum < O.Sum;
  }
};

Shortfall shortfall(const Evaluator &E, const Query &Q,
                    int *FirstFailing = nullptr) {
  Shortfall S;
  if (firstInvalid(E) >= 0)
    S.Unbounded = std::numeric_limits<double>::infinity();
  if (FirstFailing)
    *FirstFailing = -1;
  for (size_t K = 0; K < Q.Conditions.size(); ++K) {
    double V = violation(E, Q.Conditions[K]);
    if (FirstFailing && *FirstFailing < 0 && V > 0)
      *FirstFailing = static_cast<int>(K);
    if (std::isfinite(V))
      S.Sum += V;
    else
      S.Unbounded += 1;
  }
  return S;
}

/// The variable's domain: continuous (optionally in log space) or a sorted
/// list of values (a grid, or the whole numbers of a range).
class Domain {
public:
  explicit Domain(const Variable &V) : V(V) {
    if (V.Continuous && V.Integer) {
      First = std::ceil(V.Lo);
      Count = std::floor(V.Hi) - First + 1;
      Discrete = true;
    } else if (!V.Continuous) {
      Values = V.Values;
      std::sort(Values.begin(), Values.end());
      Values.erase(std::unique(Values.begin(), Values.end()), Values.end());
      Count = static_cast<double>(Values.size());
      Discrete = true;
    }
    Log = !Discrete && V.Lo > 0 && V.Hi / V.Lo >= 10;
  }

  bool Discrete = false, Log = false;
  double Count = 0; ///< discrete values

  double at(double Index) const { // discrete
    return Values.empty() ? First + Index : Values[static_cast<size_t>(Index)];
  }
  double lerp(double T) const { // continuous, T in [0, 1]
    return Log ? V.Lo * std::pow(V.Hi / V.Lo, T) : V.Lo + (V.Hi - V.Lo) * T;
  }
  double mid(double A, double B) const {
    return Log ? std::sqrt(A * B) : 0.5 * (A + B);
  }

private:
  const Variable &V;
  std::vector<double> Values;
  double First = 0;
};

/// Whether \p N is the node of one of \p Metrics in \p G.
bool isOneOf(const graph::Graph &G, graph::NodeId N,
             std::initializer_list<MetricId> Metrics) {
  for (MetricId M : Metrics)
    if (G.find(M) == N)
      return true;
  return false;
}

/// The step a failing condition is about: a TTFT or prefill metric points
/// at a prefill; everything else at the main phase (decode or batch).
std::optional<PhaseId> phaseOf(const Evaluator &E, const Query &Q,
                               int Condition) {
  if (Condition < 0)
    return std::nullopt;
  const graph::Graph &G = E.graph();
  graph::NodeId Node = Q.Conditions[Condition].Node;
  const graph::Node &N = G.node(Node);
  if (N.Kind < graph::Op::Lt || N.Kind > graph::Op::Ge)
    return std::nullopt;
  graph::NodeId Lhs = G.inputOf(Node, 0);
  bool Ttft = isOneOf(G, Lhs,
                      {MetricId::TtftP50, MetricId::TtftP90, MetricId::TtftP99,
                       MetricId::TtftP999});
  if (Ttft && G.has(PhaseId::RequestPrefill, PhaseMetricId::ComputeTime))
    return PhaseId::RequestPrefill;
  bool Prefill =
      isOneOf(G, Lhs,
              {MetricId::PrefillTime, MetricId::RequestPrefillTime,
               MetricId::RequestChunkedPrefillTime, MetricId::PrefillChunks,
               MetricId::PrefillInterference});
  for (PhaseId P : {PhaseId::Prefill, PhaseId::RequestPrefill})
    for (const PhaseMetricInfo &M : allPhaseMetrics())
      Prefill |= G.find(P, M.Id) == Lhs;
  if (Ttft || Prefill)
    return PhaseId::Prefill;
  return std::nullopt;
}

/// A failing `ttft.pX` or `latency.pX` upper bound that the parts outside
/// any engine exceed alone (the request's time outside the engine and its
/// batcher's wait, `outside_engine.pX`): why, or empty.
std::string outsideFloor(const Evaluator &E, const Query &Q, int Condition) {
  if (Condition < 0)
    return "";
  const graph::Graph &G = E.graph();
  graph::NodeId Node = Q.Conditions[Condition].Node;
  graph::Op Kind = G.node(Node).Kind;
  if (Kind != graph::Op::Lt && Kind != graph::Op::Le)
    return "";
  graph::NodeId Lhs = G.inputOf(Node, 0);
  static const struct {
    MetricId Ttft, Latency;
    const char *Name;
  } Levels[] = {{MetricId::TtftP50, MetricId::LatencyP50, "p50"},
                {MetricId::TtftP90, MetricId::LatencyP90, "p90"},
                {MetricId::TtftP99, MetricId::LatencyP99, "p99"},
                {MetricId::TtftP999, MetricId::LatencyP999, "p999"}};
  for (const auto &L : Levels) {
    if (!isOneOf(G, Lhs, {L.Ttft, L.Latency}))
      continue;
    std::optional<graph::NodeId> Outside =
        G.findNamed(std::string("outside_engine.") + L.Name);
    if (!Outside)
      return "";
    double Floor = E.value(*Outside), Bound = E.value(G.inputOf(Node, 1));
    if (!(Kind == graph::Op::Lt ? Floor >= Bound : Floor > Bound))
      return "";
    const Dimension Sec = Dimension::base(BaseDim::Time);
    double Batcher = E.value(G.inputOf(*Outside, 1));
    return fmt::format(
        "the time outside the engine alone: {} at {} (overhead.request {}{}) "
        "against {}; no engine meets the bound",
        formatQuantity(Floor, Sec), L.Name,
        formatQuantity(E.value(G.inputOf(*Outside, 0)), Sec),
        Batcher > 0 ? fmt::format(" + the batcher's wait {}",
                                  formatQuantity(Batcher, Sec))
                    : std::string(),
        formatQuantity(Bound, Sec));
  }
  return "";
}

/// `queue_stable` (written or implicit) failing at the evaluator's point:
/// what saturates (queueSaturation), or empty.
std::string queueReason(const Evaluator &E, const Query &Q, int Condition) {
  if (Condition < 0 ||
      E.graph().find(MetricId::QueueStable) != Q.Conditions[Condition].Node)
    return "";
  return queueSaturation(E);
}

/// The inverse roofline at the answer (SolveResult::ClosedForm).
void closedForm(const Evaluator &E, const Query &Q, SolveResult &R) {
  const graph::Graph &G = E.graph();
  const graph::Node &Leaf = G.node(Q.Vars.front().Leaf);
  if (Leaf.Origin >= G.Origins.size())
    return;
  llvm::StringRef Field = G.Origins[Leaf.Origin].Field;
  bool Memory = Field == "hbm.bandwidth";
  if (!Memory && !Field.startswith("peak."))
    return;
  using PM = PhaseMetricId;
  auto value = [&](PhaseId P, PM M, double &Out) {
    std::optional<graph::NodeId> N = G.find(P, M);
    if (N)
      Out = E.value(*N);
    return N.has_value();
  };
  const PhaseId Steps[] = {PhaseId::Decode, PhaseId::Prefill,
                           PhaseId::RequestPrefill, PhaseId::Batch};
  for (const Term &C : Q.Conditions) {
    const graph::Node &N = G.node(C.Node);
    if (N.Kind != graph::Op::Lt && N.Kind != graph::Op::Le)
      continue;
    graph::NodeId Lhs = G.inputOf(C.Node, 0);
    for (PhaseId Phase : Steps) {
      MetricId StepTime = phaseInfo(Phase).StepTime;
      if (G.find(StepTime) != Lhs)
        continue;
      BindingWall B = bindingWall(E, Phase);
      if (!B.Known || B.Number != (Memory ? 2u : 1u))
        continue;
      // The inverse roofline holds while one side bounds the whole step; a
      // decoder's kernel classes on opposite sides add (wall 1), and only
      // the general solver's answer stands.
      double Roof = 0, Compute = 0, Mem = 0;
      if (value(Phase, PM::RooflineTime, Roof) &&
          value(Phase, PM::ComputeTime, Compute) &&
          value(Phase, PM::MemoryTime, Mem) &&
          Roof > std::max(Compute, Mem) * (1 + 1e-9))
        continue;
      double T = E.value(G.inputOf(C.Node, 1)), Comm = 0, Work, Time;
      value(Phase, PM::CommTime, Comm);
      const char *Prefix = phaseInfo(Phase).Prefix;
      const char *Metric = metricInfo(StepTime).Name;
      if (Memory) {
        if (!value(Phase, PM::Bytes, Work) ||
            !value(Phase, PM::MemoryTime, Time))
          continue;
        // eta_mem as the graph applies it: M = BW * eta_mem * T_memory.
        double Eta = Work / (R.Answer * Time);
        R.ClosedForm = walls::requiredBandwidth(q::in<q::Bytes>(Work),
                                                q::in<q::Time>(T - Comm),
                                                q::in<q::Number>(Eta))
                           .value();
        R.ClosedFormRule =
            fmt::format("{}.bytes / (({} - comm) x eta_mem)", Prefix, Metric);
      } else {
        double Eta;
        if (!value(Phase, PM::Flops, Work) ||
            !value(Phase, PM::Efficiency, Eta))
          continue;
        R.ClosedForm =
            walls::requiredPeak(q::in<q::Flops>(Work), q::in<q::Time>(T - Comm),
                                q::in<q::Number>(Eta))
                .value();
        R.ClosedFormRule =
            fmt::format("{}.flops / (({} - comm) x eta)", Prefix, Metric);
      }
      return;
    }
  }
}

/// Why the evaluator's current point is invalid; empty when it is not.
std::string invalidHere(const Evaluator &E) {
  int Bad = firstInvalid(E);
  if (Bad < 0)
    return "";
  return invalidReason(E.graph(), Bad,
                       E.value(E.graph().DomainChecks[Bad].Node));
}

/// Whether the query reads a simulated metric: each point it evaluates is
/// then simulated too (docs/simulator.md, "In sweeps and solves").
bool readsSimulated(const Evaluator &E, const Query &Q) {
  std::vector<graph::NodeId> Nodes;
  for (const std::vector<Term> *Ts :
       {&Q.Conditions, &Q.Objectives, &Q.Report, &Q.SortBy})
    for (const Term &T : *Ts)
      Nodes.push_back(T.Node);
  return sim::readsSimulated(E.graph(), Nodes);
}

/// Simulates the evaluator's point when the query reads what it gives.
void simulateIf(bool Sim, Evaluator &E) {
  if (!Sim)
    return;
  std::string Why;
  sim::simulateInto(E, Why);
}

/// Records each condition at the evaluator's current point.
void recordConditions(const Evaluator &E, const Query &Q, SolveResult &R) {
  for (const Term &C : Q.Conditions)
    R.Conditions.push_back(
        {E.value(C.Node) != 0, comparisonOperands(E, C.Node)});
}

} // namespace

SolveResult solveOne(Evaluator &E, const Query &Q) {
  const Variable &V = Q.Vars.front();
  EvalPlan Plan = E.plan({V.Leaf});
  E.run();
  bool Sim = readsSimulated(E, Q);
  Domain D(V);
  SolveResult R;
  auto eval = [&](double X) {
    E.setLeaf(V.Leaf, X);
    E.run(Plan);
    simulateIf(Sim, E);
    ++R.Evaluations;
    return holds(E, Q);
  };

  // 1. Sample the range: positions (indices when discrete) and outcomes.
  std::vector<double> Pos;
  if (D.Discrete) {
    double Last = D.Count - 1;
    for (unsigned K = 0; K < SampleCount; ++K) {
      double I = std::round(Last * K / (SampleCount - 1));
      if (Pos.empty() || I != Pos.back())
        Pos.push_back(I);
    }
  } else {
    for (unsigned K = 0; K < SampleCount; ++K)
      Pos.push_back(D.lerp(static_cast<double>(K) / (SampleCount - 1)));
  }
  auto valueAt = [&](double P) { return D.Discrete ? D.at(P) : P; };
  std::vector<char> Ok;
  for (double P : Pos)
    Ok.push_back(eval(valueAt(P)));
  R.Samples = R.Evaluations;
  unsigned Changes = 0;
  for (size_t K = 1; K < Ok.size(); ++K)
    Changes += Ok[K] != Ok[K - 1];
  R.Monotone = Changes <= 1;

  bool Minimize = Q.Direction < 0;
  auto First = std::find(Ok.begin(), Ok.end(), 1);
  if (First == Ok.end()) {
    // 2a. Nothing meets the conditions: report the end of the range that
    // comes closest, and what fails there.
    // On a tie, the end the objective favours least is the more generous
    // one: "even at the highest bandwidth, compute binds".
    const double Inf = std::numeric_limits<double>::infinity();
    Shortfall Best{Inf, Inf};
    double Ends[] = {Minimize ? Pos.back() : Pos.front(),
                     Minimize ? Pos.front() : Pos.back()};
    for (double P : Ends) {
      eval(valueAt(P));
      Shortfall Total = shortfall(E, Q);
      if (Total < Best) {
        Best = Total;
        R.Closest = valueAt(P);
      }
    }
    eval(R.Closest);
    R.InvalidAtClosest = invalidHere(E);
    for (size_t K = 0; K < Q.Conditions.size(); ++K)
      if (violation(E, Q.Conditions[K]) > 0) {
        R.FailingCondition = static_cast<int>(K);
        break;
      }
    // No wall binds a point whose inputs make no sense.
    if (R.InvalidAtClosest.empty()) {
      R.Binding = bindingWall(E, phaseOf(E, Q, R.FailingCondition));
      R.OutsideFloor = outsideFloor(E, Q, R.FailingCondition);
      R.QueueReason = queueReason(E, Q, R.FailingCondition);
    }
    recordConditions(E, Q, R);
    return R;
  }

  // 2b. Bracket the first value that holds (minimise) or the last
  // (maximise) between a sample that fails and one that holds.
  size_t Index = Minimize
                     ? First - Ok.begin()
                     : Ok.size() - 1 -
                           (std::find(Ok.rbegin(), Ok.rend(), 1) - Ok.rbegin());
  double Good = Pos[Index];
  bool AtEnd = Minimize ? Index == 0 : Index + 1 == Pos.size();
  double BadEnd = Good;
  if (!AtEnd) {
    double Bad = Pos[Minimize ? Index - 1 : Index + 1];
    // 3. Bisect: Good always holds, Bad never does.
    if (D.Discrete) {
      while (std::fabs(Good - Bad) > 1) {
        double M = std::floor(0.5 * (Good + Bad));
        if (M == Good || M == Bad)
          break; // indices beyond 2^53 are no longer all doubles
        (eval(D.at(M)) ? Good : Bad) = M;
      }
    } else {
      while (std::fabs(Good - Bad) >
             Q.Tolerance * std::max(std::fabs(Good), std::fabs(Bad))) {
        double M = D.mid(Good, Bad);
        if (M == Good || M == Bad)
          break; // no double between them
        (eval(M) ? Good : Bad) = M;
      }
    }
    BadEnd = Bad;
  }
  R.Found = true;
  R.Answer = valueAt(Good);
  if (!AtEnd) {
    // What stops the answer from going further: the first condition that
    // fails just beyond it.
    R.Beyond = valueAt(BadEnd);
    eval(R.Beyond);
    R.InvalidBeyond = invalidHere(E);
    for (size_t K = 0; K < Q.Conditions.size(); ++K)
      if (violation(E, Q.Conditions[K]) > 0) {
        R.LimitingCondition = static_cast<int>(K);
        break;
      }
  }
  eval(R.Answer);
  int UserCondition = -1;
  for (size_t K = 0; K < Q.Conditions.size() && UserCondition < 0; ++K)
    if (!Q.Conditions[K].Implicit)
      UserCondition = static_cast<int>(K);
  R.Binding = bindingWall(E, phaseOf(E, Q, UserCondition));
  closedForm(E, Q, R);
  recordConditions(E, Q, R);
  return R;
}

namespace {

/// Sets a variable's leaves for one of its values.
void setVariable(Evaluator &E, const Variable &V, double X) {
  if (!V.isEntity()) {
    E.setLeaf(V.Leaf, X);
    return;
  }
  const std::vector<double> &Option = V.Options[static_cast<size_t>(X)];
  for (size_t K = 0; K < V.Leaves.size(); ++K)
    E.setLeaf(V.Leaves[K], Option[K]);
}

} // namespace

void evaluateAt(Evaluator &E, const Query &Q, const std::vector<double> &Vars) {
  for (size_t K = 0; K < Q.Vars.size() && K < Vars.size(); ++K)
    setVariable(E, Q.Vars[K], Vars[K]);
  E.run();
  simulateIf(readsSimulated(E, Q), E);
}

std::vector<RowPart> compareRows(const Evaluator &Base, const Query &Q,
                                 const GridRow &Best, const GridRow &RunnerUp) {
  const graph::Graph &G = Base.graph();
  PhaseId P = mainPhase(G);
  std::vector<RowPart> Parts;
  Evaluator A = Base, B = Base;
  evaluateAt(A, Q, Best.Vars);
  evaluateAt(B, Q, RunnerUp.Vars);
  for (const PhaseMetricInfo &M : allPhaseMetrics()) {
    if (!M.Binds)
      continue;
    std::optional<graph::NodeId> N = G.find(P, M.Id);
    if (!N)
      continue;
    // The part as a reader says it: "exposed communication", or
    // "decode compute" outside a training step.
    llvm::StringRef Suffix = M.Suffix;
    std::string Part = Suffix == "compute_time"     ? "compute"
                       : Suffix == "memory_time"    ? "memory traffic"
                       : Suffix == "comm_time"      ? "exposed communication"
                       : Suffix == "bubble_time"    ? "pipeline bubble"
                       : Suffix == "streaming_time" ? "weight streaming"
                       : Suffix == "overhead_time"  ? "fixed overhead"
                                                    : Suffix.str();
    if (P != PhaseId::Train)
      Part = std::string(phaseInfo(P).Prefix) + " " + Part;
    Parts.push_back({Part, G.node(*N).Dim, A.value(*N), B.value(*N)});
  }
  std::stable_sort(
      Parts.begin(), Parts.end(), [](const RowPart &X, const RowPart &Y) {
        return std::fabs(X.RunnerUp - X.Best) > std::fabs(Y.RunnerUp - Y.Best);
      });
  return Parts;
}

namespace {

/// Evaluates the grid points Offset + k Stride, k in [Begin, End), of Q's
/// Cartesian product (the first variable outermost) into Rows[0, End -
/// Begin), reading \p Terms.
void evaluateRange(Evaluator E, const EvalPlan &Plan, const Query &Q,
                   const std::vector<Term> &Terms, size_t Begin, size_t End,
                   GridRow *Rows, std::atomic<size_t> &Done, bool Sim,
                   bool Grade, size_t Offset, size_t Stride) {
  BindingProbe Probe(E.graph());
  std::optional<graph::NodeId> Feasible = E.graph().find(MetricId::Feasible);
  size_t N = Q.Vars.size();
  std::vector<size_t> Sizes(N);
  for (size_t K = 0; K < N; ++K)
    Sizes[K] = Q.Vars[K].Values.size();
  for (size_t J = Begin; J < End; ++J) {
    size_t I = Offset + J * Stride;
    GridRow &Row = Rows[J - Begin];
    Row.Point = I;
    Row.Vars.resize(N);
    size_t Rest = I;
    for (size_t K = N; K-- > 0;) {
      Row.Vars[K] = Q.Vars[K].Values[Rest % Sizes[K]];
      Rest /= Sizes[K];
      setVariable(E, Q.Vars[K], Row.Vars[K]);
    }
    E.run(Plan);
    simulateIf(Sim, E);
    Row.Values.resize(Terms.size());
    for (size_t K = 0; K < Terms.size(); ++K)
      Row.Values[K] = E.value(Terms[K].Node);
    Row.InvalidCheck = firstInvalid(E);
    Row.InvalidValue =
        Row.InvalidCheck < 0
            ? 0
            : E.value(E.graph().DomainChecks[Row.InvalidCheck].Node);
    Row.Meets = Row.InvalidCheck < 0 && conditionsHold(E, Q);
    Row.Failing = -1;
    Row.Unbounded = Row.Violation = 0;
    if (Grade && !Row.Meets && Row.InvalidCheck < 0) {
      Shortfall S = shortfall(E, Q, &Row.Failing);
      Row.Unbounded = S.Unbounded;
      Row.Violation = S.Sum;
    }
    // Wall 0: the point does not fit (feasibility failed).
    Row.Binding = Feasible && E.value(*Feasible) == 0 ? 0 : Probe.at(E).Number;
    // A simulated point takes long enough to count one by one.
    if (Sim)
      Done += 1;
    else if ((J - Begin) % 4096 == 4095)
      Done += 4096;
  }
}

/// Evaluates the grid a block of \p BlockRows points at a time, each block
/// on \p Threads threads, and hands the blocks to \p Consume in grid
/// order. Memory is one block, however many points the grid has.
void forEachBlock(const Evaluator &Base, const Query &Q,
                  const std::vector<Term> &Terms, unsigned Threads,
                  size_t BlockRows, const Progress &P,
                  llvm::function_ref<void(llvm::ArrayRef<GridRow>)> Consume,
                  size_t Offset = 0, size_t Stride = 1, bool Grade = false) {
  // The points Offset, Offset + Stride, ...: all of them, or a rank's.
  size_t Points = gridPoints(Q);
  size_t Total = Offset < Points ? (Points - Offset + Stride - 1) / Stride : 0;
  std::vector<graph::NodeId> Leaves;
  for (const Variable &V : Q.Vars) {
    Leaves.push_back(V.Leaf);
    Leaves.insert(Leaves.end(), V.Leaves.begin(), V.Leaves.end());
  }
  Evaluator Start = Base;
  Start.run();
  bool Sim = readsSimulated(Start, Q);
  // Only what a row reads: its terms, the conditions, feasibility, the
  // fields' domain checks, the binding wall's times and the loads that
  // grade a missed point, memory among them (evaluateRange, violation);
  // the rest of the graph keeps its values from Start. The simulator reads
  // the whole step model.
  std::vector<graph::NodeId> Wanted;
  if (!Sim) {
    const graph::Graph &G = Start.graph();
    for (const Term &T : Terms)
      Wanted.push_back(T.Node);
    for (const Term &C : Q.Conditions)
      Wanted.push_back(C.Node);
    for (const graph::DomainCheck &C : G.DomainChecks)
      Wanted.push_back(C.Node);
    for (MetricId M : {MetricId::Feasible, MetricId::Utilisation,
                       MetricId::PrefillUtilisation, MetricId::MemoryPerDevice,
                       MetricId::DeviceMemory})
      if (std::optional<graph::NodeId> N = G.find(M))
        Wanted.push_back(*N);
    for (graph::NodeId N : BindingProbe(G).nodes())
      Wanted.push_back(N);
  }
  EvalPlan Plan = Start.plan(Leaves, Wanted);
  std::atomic<size_t> Done{0};
  std::function<void()> Poll;
  if (P)
    Poll = [&] { P(std::min(Done.load(), Total), Total); };
  BlockRows = std::max<size_t>(1, BlockRows);
  std::vector<GridRow> Rows(std::min(Total, BlockRows));
  for (size_t First = 0; First < Total; First += BlockRows) {
    size_t N = std::min(BlockRows, Total - First);
    // Simulated points are few and slow: one a chunk.
    parallelChunks(
        N, Threads, Sim ? 1 : 1024,
        [&](unsigned, size_t B, size_t E) {
          evaluateRange(Start, Plan, Q, Terms, First + B, First + E,
                        Rows.data() + B, Done, Sim, Grade, Offset, Stride);
        },
        Poll);
    Consume(llvm::ArrayRef<GridRow>(Rows.data(), N));
  }
  if (P)
    P(Total, Total);
}

/// Counts a block's points outside the fields' domains, remembering the
/// first.
void countInvalid(const graph::Graph &G, llvm::ArrayRef<GridRow> Block,
                  GridResult &R) {
  for (const GridRow &Row : Block) {
    if (Row.InvalidCheck < 0)
      continue;
    if (R.Invalid++ == 0) {
      R.FirstInvalidVars = Row.Vars;
      R.FirstInvalidPoint = Row.Point;
      R.FirstInvalidReason =
          invalidReason(G, Row.InvalidCheck, Row.InvalidValue);
    }
  }
}

} // namespace

size_t gridPoints(const Query &Q) {
  size_t P = 1;
  for (const Variable &V : Q.Vars)
    P *= V.Values.size();
  return P;
}

int firstInvalid(const Evaluator &E) {
  const std::vector<graph::DomainCheck> &Checks = E.graph().DomainChecks;
  for (size_t K = 0; K < Checks.size(); ++K)
    if (!inDomain(Checks[K].Domain, E.value(Checks[K].Node)))
      return static_cast<int>(K);
  return -1;
}

std::string invalidReason(const graph::Graph &G, int Check, double Value) {
  const graph::DomainCheck &C = G.DomainChecks[Check];
  return fmt::format("`{}` is {}; it must be {}", C.Field,
                     formatQuantity(Value, G.node(C.Node).Dim),
                     describeDomain(C.Domain));
}

GridResult runSweep(const Evaluator &Base, const Query &Q, unsigned Threads,
                    const Progress &P, const RowSink &Sink, size_t BlockRows,
                    const SweepSplit *Split) {
  bool Splitting = Split && Split->Ranks > 1 && Split->Gather;
  // Columns: the reported terms, then sort keys not among them.
  std::vector<Term> Terms = Q.Report;
  std::vector<size_t> SortColumn;
  for (const Term &S : Q.SortBy) {
    auto It = std::find_if(Terms.begin(), Terms.end(),
                           [&](const Term &T) { return T.Node == S.Node; });
    SortColumn.push_back(It - Terms.begin());
    if (It == Terms.end())
      Terms.push_back(S);
  }
  // The sort order: the keys (NaN last), then the grid order, so that the
  // result does not depend on how the rows arrived.
  auto Before = [&](const GridRow &A, const GridRow &B) {
    for (size_t K = 0; K < Q.SortBy.size(); ++K) {
      double X = A.Values[SortColumn[K]], Y = B.Values[SortColumn[K]];
      if (X == Y || (std::isnan(X) && std::isnan(Y)))
        continue;
      if (std::isnan(X) != std::isnan(Y))
        return std::isnan(Y); // NaN last
      return Q.SortBy[K].Descending ? X > Y : X < Y;
    }
    return A.Point < B.Point;
  };
  bool Sorted = !Q.SortBy.empty();
  // `top` beyond any row count keeps every row.
  size_t Top = Q.Top >= 1 && Q.Top < 1e18 ? static_cast<size_t>(Q.Top) : 0;
  GridResult R;
  R.Streamed = Sink && !Sorted && Top == 0 && !Splitting;
  // A streamed block's kept rows; their buffers are reused block to block.
  // Streamed sweeps have no sort keys, so their terms are the report's.
  std::vector<GridRow> Kept;
  forEachBlock(
      Base, Q, Terms, Threads, BlockRows, P,
      [&](llvm::ArrayRef<GridRow> B) {
        R.Points += B.size();
        countInvalid(Base.graph(), B, R);
        size_t NumKept = 0;
        for (const GridRow &Row : B) {
          if (!Row.Meets)
            continue;
          ++R.Kept;
          if (R.Streamed) {
            if (NumKept == Kept.size())
              Kept.push_back(Row);
            else
              Kept[NumKept] = Row;
            ++NumKept;
          } else if (!Sorted) {
            // The first `top` rows, or all of them.
            if (Top == 0 || R.Rows.size() < Top)
              R.Rows.push_back(Row);
          } else if (Top == 0) {
            R.Rows.push_back(Row);
          } else if (R.Rows.size() < Top) {
            // The best `top` rows so far, the worst of them on top of
            // a heap.
            R.Rows.push_back(Row);
            std::push_heap(R.Rows.begin(), R.Rows.end(), Before);
          } else if (Before(Row, R.Rows.front())) {
            std::pop_heap(R.Rows.begin(), R.Rows.end(), Before);
            R.Rows.back() = Row;
            std::push_heap(R.Rows.begin(), R.Rows.end(), Before);
          }
        }
        if (NumKept)
          Sink(llvm::ArrayRef<GridRow>(Kept.data(), NumKept));
      },
      Splitting ? Split->Rank : 0, Splitting ? Split->Ranks : 1);
  if (Splitting) {
    R = Split->Gather(std::move(R), Q.Vars.size(), Terms.size());
    if (Split->Rank != 0)
      return R;
    // Each rank kept its best (or first) `top`: the union holds the
    // grid's, in grid order once sorted by point.
    std::sort(
        R.Rows.begin(), R.Rows.end(),
        [](const GridRow &A, const GridRow &B) { return A.Point < B.Point; });
    if (Sorted)
      std::sort(R.Rows.begin(), R.Rows.end(), Before);
    if (Top && R.Rows.size() > Top)
      R.Rows.resize(Top);
    for (GridRow &Row : R.Rows)
      Row.Values.resize(Q.Report.size());
    return R;
  }
  if (Sorted)
    std::sort(R.Rows.begin(), R.Rows.end(), Before);
  for (GridRow &Row : R.Rows)
    Row.Values.resize(Q.Report.size());
  return R;
}

namespace {

/// The Pareto front of \p Candidates (in grid order where objectives tie),
/// sorted by the first objective: the points no other beats in both.
std::vector<GridRow> frontOf(std::vector<GridRow> Candidates, double Sign) {
  // Sort by the first objective, then the second; a point is on the front
  // when its second objective beats every point before it.
  std::stable_sort(Candidates.begin(), Candidates.end(),
                   [&](const GridRow &A, const GridRow &B) {
                     if (A.Values[0] != B.Values[0])
                       return Sign * A.Values[0] < Sign * B.Values[0];
                     return Sign * A.Values[1] < Sign * B.Values[1];
                   });
  // The first candidate (best first objective) is always on the front,
  // even with an infinite second one; points tying the last kept point in
  // both objectives are kept too (different settings, same outcome).
  std::vector<GridRow> Front;
  for (GridRow &Row : Candidates) {
    bool Keep = Front.empty();
    if (!Keep) {
      const GridRow &Last = Front.back();
      double Best = Sign * Last.Values[1], Here = Sign * Row.Values[1];
      Keep = Here < Best || (Here == Best && Row.Values[0] == Last.Values[0]);
    }
    if (Keep)
      Front.push_back(std::move(Row));
  }
  return Front;
}

} // namespace

GridResult paretoFront(const Evaluator &Base, const Query &Q, unsigned Threads,
                       size_t BlockRows) {
  GridResult R;
  double Sign = Q.Direction < 0 ? 1 : -1; // compare as minimisation
  // The front so far, merged with each block's candidates: a point off the
  // front of some points is off the front of all of them.
  GridMiss Miss;
  Miss.FailsFirst.assign(Q.Conditions.size(), 0);
  std::optional<GridRow> Closest;
  forEachBlock(
      Base, Q, Q.Objectives, Threads, BlockRows, nullptr,
      [&](llvm::ArrayRef<GridRow> B) {
        R.Points += B.size();
        countInvalid(Base.graph(), B, R);
        // What misses, and the point that comes closest (the first of
        // equals, in grid order).
        for (const GridRow &Row : B)
          if (Row.Failing >= 0) {
            ++Miss.FailsFirst[Row.Failing];
            if (!Closest ||
                Shortfall{Row.Unbounded, Row.Violation} <
                    Shortfall{Closest->Unbounded, Closest->Violation})
              Closest = Row;
          }
        std::vector<GridRow> Candidates = std::move(R.Rows);
        // Stable sorting keeps the front (earlier points) ahead
        // of this block's points where objectives tie.
        std::stable_sort(Candidates.begin(), Candidates.end(),
                         [](const GridRow &A, const GridRow &B) {
                           return A.Point < B.Point;
                         });
        for (const GridRow &Row : B)
          if (Row.Meets && !std::isnan(Row.Values[0]) &&
              !std::isnan(Row.Values[1])) {
            ++R.Kept;
            Candidates.push_back(Row);
          }
        R.Rows = frontOf(std::move(Candidates), Sign);
      },
      0, 1, /*Grade=*/true);
  if (R.Kept == 0 && Closest) {
    // Back to the closest point, to say what fails there.
    Evaluator E = Base;
    evaluateAt(E, Q, Closest->Vars);
    Miss.Vars = Closest->Vars;
    Miss.Failing = Closest->Failing;
    Miss.Operands = comparisonOperands(E, Q.Conditions[Miss.Failing].Node);
    std::optional<std::pair<double, double>> Memory = memoryOverrun(E);
    const graph::Graph &G = E.graph();
    if (Memory &&
        G.find(MetricId::Feasible) == Q.Conditions[Miss.Failing].Node) {
      const Dimension &Bytes = G.node(G.get(MetricId::DeviceMemory)).Dim;
      Miss.Operands = fmt::format("memory per device {} vs {}",
                                  formatQuantity(Memory->first, Bytes),
                                  formatQuantity(Memory->second, Bytes));
    }
    Miss.QueueReason = queueReason(E, Q, Miss.Failing);
    R.Miss = std::move(Miss);
  }
  return R;
}

} // namespace mlsc
