//===- Simulation.cpp - What the serving simulator needs of a scenario ----===//
//
// A scenario with a `simulate` block exports graph::SimInputs: the
// simulation's options (requests, seed, router, the iteration's token
// budget), the replicas and their slots, the arrival rate, the prompt and
// output lengths (mean and spread), and the KV-cache tokens a replica's
// free memory holds. The simulator (runtime/sim/, docs/simulator.md)
// reads their values after evaluation; it never reads the IR. A scenario
// the simulator cannot play yet says why (NotSimulated).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

#include "runtime/Format.h"

#include <fmt/format.h>

#include <limits>
#include <set>
#include <tuple>

namespace mlsc {

using graph::Op;

/// Requests a validation anchor's scenario is simulated with when it has
/// no `simulate` block: enough for a P99 within a few percent.
constexpr double ValidationRequests = 20000;

namespace {

/// The arrival process and the parameters it needs; a closed loop needs no
/// arrival rate.
bool lowerArrivals(LoweringContext &Ctx, graph::SimInputs &In) {
  const ir::Entity &S = Ctx.Scenario;
  std::optional<SimArrivals> Kind =
      Ctx.enumField<SimArrivals>(S, "simulate.arrivals");
  SimArrivals K = Kind.value_or(SimArrivals::Poisson);
  In.Arrivals = Ctx.choice(S, "simulate.arrivals", 0,
                           "0: Poisson, 1: Gamma, 2: on/off bursts, 3: a "
                           "diurnal curve, 4: a closed loop");
  auto need = [&](const char *Path, NodeId &Out) {
    if (std::optional<NodeId> N = Ctx.field(S, Path)) {
      Out = *N;
      return true;
    }
    Ctx.C.Diags.report(
        DiagKind::MissingInput, S.field("simulate.arrivals")->Range,
        fmt::format("`arrivals = {}` needs `{}`",
                    Ctx.enumValue(S, "simulate.arrivals"), Path + 9));
    Ctx.Failed = true;
    return false;
  };
  bool OK = true;
  switch (K) {
  case SimArrivals::Poisson:
    break;
  case SimArrivals::Gamma:
    OK = need("simulate.arrival_cv", In.ArrivalCV);
    break;
  case SimArrivals::OnOff:
    OK = need("simulate.burst", In.Burst) &&
         need("simulate.silence", In.Silence);
    break;
  case SimArrivals::Diurnal:
    OK = need("simulate.amplitude", In.Amplitude) &&
         need("simulate.period", In.Period);
    break;
  case SimArrivals::Closed: {
    OK = need("simulate.users", In.Users);
    std::optional<NodeId> Think = Ctx.field(S, "simulate.think");
    In.Think = Think ? *Think
                     : Ctx.quantity(0, "s", "0 s",
                                    "a client sends its next request at once");
    break;
  }
  }
  if (!OK)
    return false;
  if (Ctx.Decoder.Arrival)
    In.Arrival = *Ctx.Decoder.Arrival;
  else if (K == SimArrivals::Closed)
    In.Arrival = Ctx.quantity(0, "req/s", "0 req/s",
                              "a closed loop: the clients set the rate");
  else
    In.NotSimulated = "the workload gives no arrival rate";
  return true;
}

/// How far the mean of the simulated lengths may stray from the
/// workload's before a warning: the closed forms use the workload's mean,
/// so the scorecard's side-by-side columns would compare two workloads.
constexpr double LengthMeanTolerance = 0.05;

/// The value of a literal (or a folded `let`), else none.
std::optional<double> literal(const ir::Expr &E) {
  if (E.Kind == ir::ExprKind::Number)
    return E.Number;
  if (E.Kind == ir::ExprKind::Unary && E.UOp != ir::UnaryOp::Not)
    if (std::optional<double> V = literal(*E.Operands[0]))
      return E.UOp == ir::UnaryOp::Negate ? -*V : *V;
  if (E.Kind == ir::ExprKind::LetRef && E.LetTarget && E.LetTarget->Folded &&
      E.LetTarget->Folded->Kind == ir::TypeKind::Quantity)
    return E.LetTarget->Folded->Number;
  return std::nullopt;
}

/// A field's folded number, or 0 when it has none.
double foldedOrZero(const ir::Entity &E, const char *Path) {
  const ir::Field *F = E.field(Path);
  return F && F->Folded ? F->Folded->Number : 0;
}

/// Whether \p W's outputs are drawn with a spread and cut at a cap.
bool outputCut(const ir::Entity &W) {
  return foldedOrZero(W, "output_cv") > 0 && foldedOrZero(W, "max_output") > 0;
}

/// The mean answer the closed forms use for \p W: its `output`, or with
/// `output_cv` and `max_output` the mean of the draws cut at the cap (the
/// thinking tokens drawn and cut with the answer); 0 when not folded.
double closedOutput(const ir::Entity &W) {
  double Output = foldedOrZero(W, "output"), CV = foldedOrZero(W, "output_cv"),
         Cap = foldedOrZero(W, "max_output");
  if (!(Output > 0 && CV > 0 && Cap > 0))
    return Output;
  double Thinking = foldedOrZero(W, "reasoning.tokens");
  using namespace q;
  return (walls::cappedLengthMean(in<Tokens>(Output + Thinking), in<Number>(CV),
                                  in<Tokens>(Cap + Thinking)) /
          OneToken)
             .value() -
         Thinking;
}

/// Warns when simulated lengths of mean \p Simulated stray from the
/// closed forms' \p Closed (of \p What: "prompt" or "output").
void compareMeans(LoweringContext &Ctx, llvm::SMRange At, const char *What,
                  double Simulated, double Closed, const std::string &Owner,
                  bool Cut = false) {
  if (!(Closed > 0) || std::abs(Simulated / Closed - 1) <= LengthMeanTolerance)
    return;
  // Cut lengths: `output` is the mean of the draws before the cap, so
  // setting it to the simulated mean would not make the two agree.
  std::string Fix =
      Cut ? fmt::format("the closed forms' {} is the mean of `output` drawn "
                        "with `output_cv` and cut at `max_output`: make the "
                        "simulated lengths average {} tok, or drop "
                        "`output_cv` or `max_output`",
                        What, formatNumber(Closed))
          : fmt::format("set `{} = {} tok`", What, formatNumber(Simulated));
  Ctx.C.Diags.report(
      DiagKind::SimulatedLengthsDiffer, At,
      fmt::format("the simulated {0} lengths average {1} tok, {2:.0f}% {3} the "
                  "{0} of {4} ({5} tok) that the closed forms use; the "
                  "scorecard's analytic and simulated columns then describe "
                  "different workloads: {6}",
                  What, formatNumber(Simulated),
                  std::abs(Simulated / Closed - 1) * 100,
                  Simulated > Closed ? "above" : "below", Owner,
                  formatNumber(Closed), Fix));
}

/// An empirical histogram's bins (`WEIGHT in LO .. HI` lines, shaped by
/// check-dimensions), checked where they are literals; \p Out stays empty
/// without the field. \p Closed is the mean the closed forms use.
bool lowerHistogram(LoweringContext &Ctx, const ir::Entity &E, const char *Path,
                    const char *What, double Closed,
                    std::vector<graph::SimInputs::Bin> &Out, bool Cut = false) {
  const ir::Field *F = E.field(Path);
  if (!F)
    return true;
  auto fail = [&](DiagKind K, llvm::SMRange At, std::string Msg) {
    Ctx.C.Diags.report(K, At, std::move(Msg));
    Ctx.Failed = true;
    return false;
  };
  if (F->Conditions.empty())
    return fail(DiagKind::MalformedSimulation, F->Range,
                fmt::format("`{}` has no bin; give one a line, `WEIGHT in LO "
                            ".. HI`, or drop the block",
                            F->Path));
  double Weights = 0, Sum = 0;
  bool Known = true;
  for (const ir::ExprPtr &Line : F->Conditions) {
    const ir::Expr &W = *Line->Operands[0], &Rg = *Line->Operands[1];
    const ir::Expr &Lo = Rg.Kind == ir::ExprKind::Range ? *Rg.Operands[0] : Rg;
    const ir::Expr &Hi = Rg.Kind == ir::ExprKind::Range ? *Rg.Operands[1] : Rg;
    std::optional<double> Wv = literal(W), L = literal(Lo), H = literal(Hi);
    if (Wv && !(*Wv >= 0))
      return fail(DiagKind::DomainError, W.Range,
                  fmt::format("a bin's weight is at least 0, got {}",
                              ir::sourceText(W.Range)));
    for (auto [V, X] : {std::pair{L, &Lo}, std::pair{H, &Hi}})
      if (V && !(*V >= 1 && *V <= 4e9 && *V == std::floor(*V)))
        return fail(DiagKind::DomainError, X->Range,
                    fmt::format("a bin's bound is a whole number of tokens "
                                "from 1 to 4e9, got {}",
                                ir::sourceText(X->Range)));
    if (L && H && *L > *H)
      return fail(DiagKind::DomainError, Rg.Range,
                  fmt::format("the bin `{}` runs backwards: its low bound "
                              "exceeds its high one",
                              ir::sourceText(Rg.Range)));
    std::string Missing;
    graph::SimInputs::Bin B;
    std::optional<NodeId> Wn = Ctx.expr(W, Missing), Ln = Ctx.expr(Lo, Missing),
                          Hn = Ctx.expr(Hi, Missing);
    if (!Wn || !Ln || !Hn)
      return fail(DiagKind::MalformedSimulation, Line->Range,
                  fmt::format("a bin of `{}` reads `{}`, which the scenario "
                              "does not compute; a bin is made of constants",
                              F->Path, Missing));
    Out.push_back({*Wn, *Ln, *Hn});
    if (Wv && L && H) {
      Weights += *Wv;
      Sum += *Wv * (*L + *H) / 2;
    } else {
      Known = false;
    }
  }
  if (Known && !(Weights > 0))
    return fail(DiagKind::DomainError, F->Range,
                fmt::format("the weights of `{}` add up to 0; give a bin a "
                            "positive weight",
                            F->Path));
  if (Known)
    compareMeans(Ctx, F->Range, What, Sum / Weights, Closed,
                 E.Kind == "request_class" ? "class `" + E.Name + "`"
                                           : std::string("the workload"),
                 Cut);
  return true;
}

/// The request classes a `classes` block lists.
bool lowerClasses(LoweringContext &Ctx, graph::SimInputs &In) {
  const ir::Entity &S = Ctx.Scenario;
  const ir::Field *F = S.field("simulate.classes");
  if (!F)
    return true;
  auto malformed = [&](llvm::SMRange At, std::string Msg, const char *Hint) {
    Ctx.C.Diags.report(DiagKind::MalformedSimulation, At, Msg + "; " + Hint);
    Ctx.Failed = true;
    return false;
  };
  if (F->Conditions.empty())
    return malformed(F->Range, "`classes` lists no request class",
                     "list `request_class` entities, one per line, or drop "
                     "the block");
  for (const char *Uniform :
       {"simulate.prompt_min", "simulate.output_min",
        "simulate.prompt_histogram", "simulate.output_histogram"})
    if (const ir::Field *U = S.field(Uniform))
      return malformed(U->Range,
                       fmt::format("`{}` draws the lengths of a simulation "
                                   "without classes; with `classes` each "
                                   "class gives its own",
                                   Uniform + 9),
                       "give the classes `prompt` and `prompt_cv` (or "
                       "`prompt_histogram`, and the same for outputs) "
                       "instead");
  GraphBuilder &B = Ctx.B;
  std::set<const ir::Entity *> Seen;
  for (const ir::ExprPtr &E : F->Conditions) {
    const ir::Entity *K =
        E->Kind == ir::ExprKind::EntityRef ? E->Target : nullptr;
    bool Shadowed =
        E->Kind == ir::ExprKind::MetricRef || E->Kind == ir::ExprKind::FieldRef;
    if (!K || K->Kind != "request_class")
      return malformed(E->Range,
                       fmt::format("`{}` is not a request class{}",
                                   ir::sourceText(E->Range),
                                   Shadowed ? " (in a scenario it names the "
                                              "scenario's own metric or field)"
                                            : ""),
                       Shadowed ? "give the class a name no metric or field "
                                  "has"
                                : "declare it as `request_class NAME { share "
                                  "= ...; ttft_target = ... }`");
    if (!Seen.insert(K).second)
      return malformed(
          E->Range, fmt::format("request class `{}` is listed twice", K->Name),
          "list each class once; its `share` sets how often it "
          "arrives");
    graph::SimInputs::Class C;
    C.Name = K->Name;
    auto orElse = [&](const char *Path, NodeId Default) {
      std::optional<NodeId> N = Ctx.field(*K, Path);
      return N ? *N : Default;
    };
    C.Share = orElse("share", B.constant(1, "a class's share: default 1"));
    C.Prompt = orElse("prompt", In.Prompt);
    C.PromptCV = orElse("prompt_cv", In.PromptCV);
    // A class's `output` is its answer, as the workload's is: the
    // workload's thinking tokens decode before it (wall 12).
    C.Output = In.Output;
    if (std::optional<NodeId> Answer = Ctx.field(*K, "output")) {
      std::optional<NodeId> Thinking = Ctx.Decoder.Thinking;
      C.Output = Thinking ? B.op(Op::Add, {*Answer, *Thinking}) : *Answer;
    }
    C.OutputCV = orElse("output_cv", In.OutputCV);
    C.TTFTTarget = orElse("ttft_target", NodeId());
    C.TPOTTarget = orElse("tpot_target", NodeId());
    C.Priority =
        orElse("priority", B.constant(0, "a class's priority: default 0"));
    for (auto [Hist, CV, What, Out] :
         {std::tuple{"prompt_histogram", "prompt_cv", "prompt", &C.PromptHist},
          std::tuple{"output_histogram", "output_cv", "output",
                     &C.OutputHist}}) {
      if (K->field(Hist) && K->field(CV))
        return malformed(K->field(CV)->Range,
                         fmt::format("class `{}` gives both `{}` and `{}`",
                                     K->Name, CV, Hist),
                         "the histogram draws the lengths: drop one");
      double Closed = K->field(What) ? foldedOrZero(*K, What)
                                     : foldedOrZero(*Ctx.Workload, What);
      if (!lowerHistogram(Ctx, *K, Hist, What, Closed, *Out))
        return false;
    }
    In.Classes.push_back(C);
  }
  return true;
}

/// The KV tiers a `kv_tiers` block lists: what they hold in tokens of a
/// replica's KV cache. They hold shared prefixes, which must be given.
bool lowerTiers(LoweringContext &Ctx, graph::SimInputs &In) {
  const ir::Entity &S = Ctx.Scenario;
  const ir::Field *F = S.field("simulate.kv_tiers");
  if (!F)
    return true;
  GraphBuilder &B = Ctx.B;
  auto malformed = [&](llvm::SMRange At, const std::string &Msg) {
    Ctx.C.Diags.report(DiagKind::MalformedSimulation, At, Msg);
    Ctx.Failed = true;
    return false;
  };
  if (!In.PrefixGroups.isValid() && !In.Sessions.isValid())
    return malformed(F->Range,
                     "KV tiers hold the shared prefixes and conversation "
                     "contexts HBM evicts, and the block has none; give "
                     "`prefix_groups` and `prefix_tokens` (or a trace with a "
                     "`prefix` column), or `sessions` and `session_reuse`");
  std::set<const ir::Entity *> Seen;
  In.TierBytesPerToken = Ctx.Decoder.KV;
  for (const ir::ExprPtr &E : F->Conditions) {
    const ir::Entity *T =
        E->Kind == ir::ExprKind::EntityRef ? E->Target : nullptr;
    if (!T || T->Kind != "kv_tier")
      return malformed(E->Range,
                       fmt::format("`{}` is not a KV tier; declare it as "
                                   "`kv_tier NAME {{ capacity = ...; "
                                   "bandwidth = ...; latency = ... }}`",
                                   ir::sourceText(E->Range)));
    if (!Seen.insert(T).second)
      return malformed(E->Range,
                       fmt::format("KV tier `{}` is listed twice", T->Name));
    graph::SimInputs::Tier Tr;
    Tr.Name = T->Name;
    Tr.Capacity = B.op(
        Op::Floor, {B.op(Op::Div, {Ctx.required(*T, "capacity", "a KV tier"),
                                   Ctx.Decoder.KV})});
    Tr.Bandwidth = Ctx.required(*T, "bandwidth", "a KV tier");
    Tr.Latency = Ctx.required(*T, "latency", "a KV tier");
    Tr.Shared = Ctx.choice(*T, "shared", 0, "1: one tier for every replica");
    In.Tiers.push_back(Tr);
  }
  return !Ctx.Failed;
}

/// An autoscaler's thresholds and bounds (\p Name: `autoscale` or
/// `prefill_autoscale`): `up` at or above `down`, `min` at most `max`.
bool checkScaleBounds(LoweringContext &Ctx, const std::string &Name) {
  const ir::Entity &S = Ctx.Scenario;
  std::string Path = "simulate." + Name + ".";
  auto fail = [&](const char *Field, std::string Msg) {
    Ctx.C.Diags.report(DiagKind::DomainError, S.field(Path + Field)->Range,
                       std::move(Msg));
    Ctx.Failed = true;
    return false;
  };
  if (Ctx.foldedNumber(S, Path + "up") < Ctx.foldedNumber(S, Path + "down"))
    return fail("up", fmt::format("`{0}.up` is below `{0}.down`: the "
                                  "autoscaler would add and drain replicas "
                                  "in turn",
                                  Name));
  if (S.field(Path + "min") &&
      Ctx.foldedNumber(S, Path + "min") > Ctx.foldedNumber(S, Path + "max"))
    return fail("min", fmt::format("`{0}.min` exceeds `{0}.max`", Name));
  return true;
}

/// Autoscaling (turned on by any `autoscale` field; `max`, `up`, `down`
/// and `startup` then required) and admission control.
bool lowerScaling(LoweringContext &Ctx, graph::SimInputs &In) {
  const ir::Entity &S = Ctx.Scenario;
  GraphBuilder &B = Ctx.B;
  const char *const Scale[] = {
      "simulate.autoscale.max",      "simulate.autoscale.min",
      "simulate.autoscale.signal",   "simulate.autoscale.up",
      "simulate.autoscale.down",     "simulate.autoscale.startup",
      "simulate.autoscale.cooldown", "simulate.autoscale.interval"};
  const ir::Field *Any = nullptr;
  for (const char *P : Scale)
    if (!Any)
      Any = S.field(P);
  if (Any) {
    for (const char *P :
         {"simulate.autoscale.max", "simulate.autoscale.up",
          "simulate.autoscale.down", "simulate.autoscale.startup"})
      if (!S.field(P)) {
        Ctx.C.Diags.report(
            DiagKind::MissingInput, Any->Range,
            fmt::format("autoscaling needs `{}` too (and `max`, `up`, `down` "
                        "and `startup`: how far it scales, on what signal, "
                        "and how long a replica takes to start)",
                        P + 9));
        Ctx.Failed = true;
        return false;
      }
    In.ScaleMax = *Ctx.field(S, "simulate.autoscale.max");
    std::optional<NodeId> Min = Ctx.field(S, "simulate.autoscale.min");
    In.ScaleMin = Min ? *Min : B.constant(1, "at least one serving replica");
    In.ScaleUp = *Ctx.field(S, "simulate.autoscale.up");
    In.ScaleDown = *Ctx.field(S, "simulate.autoscale.down");
    In.ScaleStartUp = *Ctx.field(S, "simulate.autoscale.startup");
    if (!checkScaleBounds(Ctx, "autoscale"))
      return false;
  }
  // The prefill pool's autoscaler: its own bounds, thresholds and
  // start-up; the signal, cooldown and interval the pool autoscaler's.
  const ir::Field *AnyPrefill = nullptr;
  for (const char *P :
       {"simulate.prefill_autoscale.max", "simulate.prefill_autoscale.min",
        "simulate.prefill_autoscale.up", "simulate.prefill_autoscale.down",
        "simulate.prefill_autoscale.startup"})
    if (!AnyPrefill)
      AnyPrefill = S.field(P);
  if (AnyPrefill) {
    if (!In.PrefillReplicas.isValid()) {
      Ctx.C.Diags.report(DiagKind::MalformedSimulation, AnyPrefill->Range,
                         "`prefill_autoscale` scales the prefill pool of a "
                         "disaggregated platform, and the workload has none; "
                         "give it `disaggregation.prefill_replicas` and "
                         "`disaggregation.fabric`, or use `autoscale`");
      Ctx.Failed = true;
      return false;
    }
    for (const char *P :
         {"simulate.prefill_autoscale.max", "simulate.prefill_autoscale.up",
          "simulate.prefill_autoscale.down"})
      if (!S.field(P)) {
        Ctx.C.Diags.report(
            DiagKind::MissingInput, AnyPrefill->Range,
            fmt::format("prefill autoscaling needs `{}` too (and `max`, `up` "
                        "and `down`: how far it scales and on what signal)",
                        P + 9));
        Ctx.Failed = true;
        return false;
      }
    std::optional<NodeId> Start =
        Ctx.field(S, "simulate.prefill_autoscale.startup");
    if (!Start)
      Start = Ctx.field(S, "simulate.autoscale.startup");
    if (!Start) {
      Ctx.C.Diags.report(DiagKind::MissingInput, AnyPrefill->Range,
                         "prefill autoscaling needs `prefill_autoscale."
                         "startup` (or `autoscale.startup`): how long a "
                         "prefill replica takes to start");
      Ctx.Failed = true;
      return false;
    }
    if (!checkScaleBounds(Ctx, "prefill_autoscale"))
      return false;
    std::optional<NodeId> Min = Ctx.field(S, "simulate.prefill_autoscale.min");
    In.PrefillScaleMax = *Ctx.field(S, "simulate.prefill_autoscale.max");
    In.PrefillScaleMin =
        Min ? *Min : B.constant(1, "at least one serving prefill replica");
    In.PrefillScaleUp = *Ctx.field(S, "simulate.prefill_autoscale.up");
    In.PrefillScaleDown = *Ctx.field(S, "simulate.prefill_autoscale.down");
    In.PrefillScaleStartUp = *Start;
  }
  // The signal, cooldown and interval both autoscalers share.
  if (Any || AnyPrefill) {
    In.ScaleSignal = Ctx.choice(S, "simulate.autoscale.signal", 0,
                                "0: the queue, 1: the slots' utilisation");
    std::optional<NodeId> Cool = Ctx.field(S, "simulate.autoscale.cooldown");
    In.ScaleCooldown =
        Cool ? *Cool : Ctx.quantity(0, "s", "0 s", "no cooldown unless given");
    In.ScaleInterval = Ctx.orDefault(S, DefaultId::SimScaleInterval);
  }
  if (std::optional<NodeId> R = Ctx.field(S, "simulate.admission.rate")) {
    In.AdmitRate = *R;
    std::optional<NodeId> Burst = Ctx.field(S, "simulate.admission.burst");
    In.AdmitBurst = Burst ? *Burst : B.constant(1, "one request at a time");
  }
  if (std::optional<NodeId> P =
          Ctx.field(S, "simulate.admission.shed_priority")) {
    In.ShedPriority = *P;
    std::optional<NodeId> Q = Ctx.field(S, "simulate.admission.shed_queue");
    In.ShedQueue = Q ? *Q : B.constant(0, "shed while any request waits");
  }
  return true;
}

} // namespace

/// Costs of the simulated platform, from the walls' cost an hour and power
/// at the load and the simulated tokens served (wall 17-18's figures with
/// the simulator's throughput).
bool lowerSimulatedCost(LoweringContext &Ctx) {
  GraphBuilder &B = Ctx.B;
  graph::Graph &G = B.G;
  if (!G.Sim || !G.Sim->Requested || !G.has(MetricId::SimThroughput))
    return true;
  NodeId Share = G.get(MetricId::SimReplicaShare);
  NodeId PerToken = B.op(Op::Div, {Share, G.get(MetricId::SimThroughput)});
  if (G.has(MetricId::CostPerHour))
    B.publish(MetricId::SimCostPerMtok,
              B.op(Op::Mul,
                   {B.op(Op::Mul, {G.get(MetricId::CostPerHour), PerToken}),
                    Ctx.quantity(1e6, "tok", "1e6 tok", "a million tokens")}));
  if (G.has(MetricId::Power))
    B.publish(MetricId::SimEnergyPerToken,
              B.op(Op::Mul, {G.get(MetricId::Power), PerToken}));
  return true;
}

bool lowerSimulation(LoweringContext &Ctx) {
  const ir::Entity &S = Ctx.Scenario;
  std::optional<NodeId> Requests = Ctx.field(S, "simulate.requests");
  bool Trace = S.field("simulate.trace") != nullptr;
  if (!Requests && !Trace && !Ctx.C.Options.SimulateServing)
    return true;
  GraphBuilder &B = Ctx.B;
  DecoderState &D = Ctx.Decoder;
  const ir::Entity &W = *Ctx.Workload;
  graph::SimInputs In;
  In.Requested = Requests.has_value() || Trace;
  if (Requests && Ctx.foldedNumber(S, "simulate.requests") >
                      Ctx.C.Options.MaxSimulatedRequests) {
    Ctx.C.Diags.report(
        DiagKind::DomainError, S.field("simulate.requests")->Range,
        fmt::format("`simulate.requests` is {}; a simulation plays at most "
                    "{} requests (about a second a million); simulate fewer, "
                    "their percentiles settle within a few percent by "
                    "100,000",
                    formatNumber(Ctx.foldedNumber(S, "simulate.requests")),
                    formatNumber(Ctx.C.Options.MaxSimulatedRequests)));
    Ctx.Failed = true;
    return false;
  }
  // A trace without `requests` replays all of it (its length is known
  // once it is read).
  In.Requests = Requests ? *Requests
                : Trace  ? B.constant(4e15, "every request of the trace")
                         : B.constant(ValidationRequests,
                                      "requests `mlsc validate` simulates");
  In.Seed = Ctx.orDefault(S, DefaultId::SimSeed);
  In.Router = Ctx.choice(S, "simulate.router", 0,
                         "0: round robin, 1: least outstanding, 2: a shared "
                         "queue");
  // The iteration's token budget is the engine's, the workload's
  // `max_batch_tokens` (the closed forms' too), unless the simulation
  // tries another.
  std::optional<NodeId> Budget = Ctx.field(S, "simulate.max_batched_tokens");
  In.MaxBatchedTokens =
      Budget ? *Budget : Ctx.orDefault(W, DefaultId::MaxBatchTokens);
  In.Replicas = D.Replicas;
  In.Slots = D.Batch;
  In.Prompt = D.Prompt;
  In.Output = D.OutputDrawn; // the simulator cuts its draws at OutputCap
  auto spread = [&](const char *Field) {
    std::optional<NodeId> CV = Ctx.field(W, Field);
    return CV ? *CV : B.constant(0, "one length: the workload gives no spread");
  };
  In.PromptCV = spread("prompt_cv");
  In.OutputCV = spread("output_cv");
  // Uniform lengths: both ends, or neither.
  for (auto [Min, Max, Lo, Hi] :
       {std::tuple{"simulate.prompt_min", "simulate.prompt_max", &In.PromptMin,
                   &In.PromptMax},
        std::tuple{"simulate.output_min", "simulate.output_max", &In.OutputMin,
                   &In.OutputMax}}) {
    std::optional<NodeId> A = Ctx.field(S, Min), B2 = Ctx.field(S, Max);
    if (A.has_value() != B2.has_value()) {
      const char *Given = A ? Min : Max;
      Ctx.C.Diags.report(
          DiagKind::MissingInput, S.field(Given)->Range,
          fmt::format("`{}` needs `{}` too: simulated lengths are uniform "
                      "between the two",
                      Given, A ? Max : Min));
      Ctx.Failed = true;
      return false;
    }
    if (A) {
      const char *Hist = Lo == &In.PromptMin ? "simulate.prompt_histogram"
                                             : "simulate.output_histogram";
      if (const ir::Field *H = S.field(Hist)) {
        Ctx.C.Diags.report(DiagKind::MalformedSimulation, H->Range,
                           fmt::format("`{}` and `{}` both draw the simulated "
                                       "lengths; drop one",
                                       Hist + 9, Min + 9));
        Ctx.Failed = true;
        return false;
      }
      if (Ctx.foldedNumber(S, Min) > Ctx.foldedNumber(S, Max)) {
        Ctx.C.Diags.report(DiagKind::DomainError, S.field(Min)->Range,
                           fmt::format("`{}` exceeds `{}`", Min, Max));
        Ctx.Failed = true;
        return false;
      }
      *Lo = *A;
      *Hi = *B2;
      // Uniform answers follow the thinking tokens (wall 12).
      if (Lo == &In.OutputMin && D.Thinking) {
        *Lo = B.op(Op::Add, {*A, *D.Thinking});
        *Hi = B.op(Op::Add, {*B2, *D.Thinking});
      }
      const char *What = Lo == &In.PromptMin ? "prompt" : "output";
      if (!S.field("simulate.classes"))
        compareMeans(Ctx, S.field(Min)->Range, What,
                     (Ctx.foldedNumber(S, Min) + Ctx.foldedNumber(S, Max)) / 2,
                     Lo == &In.PromptMin ? foldedOrZero(W, What)
                                         : closedOutput(W),
                     "the workload", Lo != &In.PromptMin && outputCut(W));
    }
  }
  if (!lowerHistogram(Ctx, S, "simulate.prompt_histogram", "prompt",
                      foldedOrZero(W, "prompt"), In.PromptHist) ||
      !lowerHistogram(Ctx, S, "simulate.output_histogram", "output",
                      closedOutput(W), In.OutputHist, outputCut(W)))
    return false;
  // The tokens whose KV the free memory holds: free bytes over a token's
  // bytes on a device.
  NodeId Free =
      B.op(Op::Sub, {B.op(Op::Sub, {D.Capacity, D.FixedMemory}), D.Reserve});
  In.KVTokens =
      B.op(Op::Floor,
           {B.op(Op::Div, {B.op(Op::Mul, {Free, D.KVStoreShards}), D.KV})});
  B.label(In.KVTokens, "sim_kv_tokens");
  if (!lowerArrivals(Ctx, In) || !lowerClasses(Ctx, In) ||
      !readSimTrace(Ctx, In))
    return false;
  if (In.Replay) {
    // The trace gives the arrivals, the lengths and the prefixes.
    for (const char *Path :
         {"simulate.arrivals", "simulate.prompt_min", "simulate.output_min",
          "simulate.prompt_histogram", "simulate.output_histogram",
          "simulate.prefix_groups"})
      if (const ir::Field *F = S.field(Path)) {
        Ctx.C.Diags.report(
            DiagKind::MalformedSimulation, F->Range,
            fmt::format("`{}` draws what the trace `{}` gives; drop one of "
                        "the two",
                        Path + 9, In.ReplayName));
        Ctx.Failed = true;
        return false;
      }
    if (In.NotSimulated == "the workload gives no arrival rate")
      In.NotSimulated.clear();
    if (!In.Arrival.isValid())
      In.Arrival = Ctx.quantity(0, "req/s", "0 req/s",
                                "a replayed trace: its arrivals set the rate");
    if (In.ReplayGroups) {
      In.PrefixGroups = B.constant(In.ReplayGroups, "the trace's prefixes");
      In.PrefixTokens = *Ctx.field(S, "simulate.prefix_tokens");
      In.PrefixShare = B.constant(1, "the trace names each request's prefix");
    }
  }
  // Shared prefixes: groups and their length together (a trace names its
  // own groups).
  std::optional<NodeId> Groups = Ctx.field(S, "simulate.prefix_groups"),
                        Tokens = Ctx.field(S, "simulate.prefix_tokens");
  if (In.Replay && In.ReplayGroups) {
    Groups = In.PrefixGroups;
  } else if (Groups.has_value() != Tokens.has_value()) {
    const char *Given =
        Groups ? "simulate.prefix_groups" : "simulate.prefix_tokens";
    Ctx.C.Diags.report(
        DiagKind::MissingInput, S.field(Given)->Range,
        fmt::format("`{}` needs `{}` too: shared prefixes have a count and "
                    "a length",
                    Given + 9, Groups ? "prefix_tokens" : "prefix_groups"));
    Ctx.Failed = true;
    return false;
  }
  if (Groups) {
    In.PrefixGroups = *Groups;
    In.PrefixTokens = *Tokens;
    std::optional<NodeId> Share = Ctx.field(S, "simulate.prefix_share");
    In.PrefixShare =
        Share ? *Share
              : B.constant(1, "every request opens with a shared prefix");
  }
  // Multi-turn conversations: how many, and how often a turn continues
  // one (each opening with a shared prefix as often as a request would);
  // not with a trace yet.
  {
    std::optional<NodeId> Open = Ctx.field(S, "simulate.sessions"),
                          Reuse = Ctx.field(S, "simulate.session_reuse");
    if (Open.has_value() != Reuse.has_value()) {
      const char *Given = Open ? "simulate.sessions" : "simulate.session_reuse";
      Ctx.C.Diags.report(
          DiagKind::MissingInput, S.field(Given)->Range,
          fmt::format("`{}` needs `{}` too: conversations have a count and "
                      "the probability that a turn continues one",
                      Given + 9, Open ? "session_reuse" : "sessions"));
      Ctx.Failed = true;
      return false;
    }
    if (Open) {
      if (In.Replay) {
        Ctx.C.Diags.report(
            DiagKind::MalformedSimulation, S.field("simulate.sessions")->Range,
            "conversations are not simulated together with `trace` yet; "
            "drop one of the two");
        Ctx.Failed = true;
        return false;
      }
      if (Ctx.foldedNumber(S, "simulate.sessions") > 1e7) {
        Ctx.C.Diags.report(DiagKind::DomainError,
                           S.field("simulate.sessions")->Range,
                           "at most 10^7 conversations are open at once");
        Ctx.Failed = true;
        return false;
      }
      In.Sessions = *Open;
      In.SessionReuse = *Reuse;
    }
  }
  // The workload's `prefix_hit_rate`, the share of every prompt the closed
  // forms take from a prefix cache: played as one prefix every request
  // opens with, that share of the mean prompt (at least one token left to
  // compute), the drawn prompt the rest, so the prompt keeps its mean and
  // its spread. Not under static batching (whose closed forms prefill the
  // whole batch), nor with prefixes, conversations, classes or a trace of
  // the simulation's own, nor with a range or a histogram of prompt
  // lengths, which say what is drawn (docs/simulator.md).
  if (std::optional<NodeId> Hit = Ctx.field(W, "prefix_hit_rate");
      Hit && !D.Static && !In.PrefixGroups.isValid() &&
      !In.Sessions.isValid() && !In.Replay && In.Classes.empty() &&
      !In.PromptMin.isValid() && In.PromptHist.empty()) {
    In.PrefixGroups =
        B.constant(1, "the workload's prefix_hit_rate: one shared prefix");
    In.PrefixTokens =
        B.op(Op::Min,
             {B.op(Op::Mul, {D.Prompt, *Hit}),
              B.op(Op::Sub, {D.Prompt, Ctx.quantity(1, "tok", "1 tok",
                                                    "the last prompt token is "
                                                    "computed")})});
    B.label(In.PrefixTokens, "simulate.prefix_hit_tokens");
    In.PrefixShare = B.constant(1, "every request opens with it");
    In.Prompt = B.op(Op::Sub, {D.Prompt, In.PrefixTokens});
    B.label(In.Prompt, "simulate.prompt_after_prefix");
    In.PromptCV = B.op(
        Op::Min,
        {B.op(Op::Mul, {In.PromptCV, B.op(Op::Div, {D.Prompt, In.Prompt})}),
         B.constant(100, "the largest spread the simulator draws")});
    B.label(In.PromptCV, "simulate.prompt_after_prefix_cv");
  }
  if (std::optional<NodeId> Every = Ctx.field(S, "simulate.sample_every"))
    In.SampleEvery = *Every;
  In.PrefixCaching = Ctx.choice(S, "simulate.prefix_caching", 1,
                                "1: computed prefixes stay cached");
  In.WeightPrefix = Ctx.orDefault(S, DefaultId::SimWeightPrefix);
  In.WeightQueue = Ctx.orDefault(S, DefaultId::SimWeightQueue);
  In.WeightKV = Ctx.orDefault(S, DefaultId::SimWeightKV);
  // Disaggregation: the prefill pool, and the KV cache's path to the
  // decode pool as wall 4 costs it (each TP shard its share on its link).
  if (D.PrefillReplicas) {
    const ir::Entity *Fabric = Ctx.entity(W, "disaggregation.fabric");
    if (!Fabric) {
      In.NotSimulated = "disaggregation without a `disaggregation.fabric` "
                        "is not simulated: the KV cache needs a path";
    } else {
      In.PrefillReplicas = *D.PrefillReplicas;
      In.KVBytesPerToken = B.op(Op::Div, {D.KV, D.KVGroupShards});
      In.KVBandwidth =
          B.op(Op::Mul, {Ctx.required(*Fabric, "bandwidth", "the KV transfer"),
                         D.Machine.EtaComm});
      In.KVLatency = Ctx.required(*Fabric, "latency", "the KV transfer");
      std::optional<NodeId> Local = Ctx.field(S, "simulate.local_below");
      In.LocalBelow =
          Local ? *Local
                : Ctx.quantity(0, "tok", "0 tok",
                               "every prompt is prefilled in the prefill pool");
    }
  } else if (Ctx.field(S, "simulate.local_below")) {
    Ctx.C.Diags.report(DiagKind::MalformedSimulation,
                       S.field("simulate.local_below")->Range,
                       "`local_below` chooses where prompts are prefilled "
                       "under disaggregation, and the workload has none; "
                       "give the workload `disaggregation.prefill_replicas` "
                       "and `disaggregation.fabric`, or drop the line");
    Ctx.Failed = true;
    return false;
  }
  if (!lowerScaling(Ctx, In) || !lowerTiers(Ctx, In))
    return false;
  // Swap preemption needs its space and bandwidth.
  if (Ctx.enumField<SimPreemption>(S, "simulate.preemption") ==
      SimPreemption::Swap) {
    for (const char *P : {"simulate.swap_space", "simulate.swap_bandwidth"})
      if (!S.field(P)) {
        Ctx.C.Diags.report(DiagKind::MissingInput,
                           S.field("simulate.preemption")->Range,
                           fmt::format("`preemption = swap` needs `{}` (and "
                                       "`swap_space` and `swap_bandwidth`: "
                                       "where the KV caches go, and how fast)",
                                       P + 9));
        Ctx.Failed = true;
        return false;
      }
    In.SwapTokens =
        B.op(Op::Floor,
             {B.op(Op::Div, {*Ctx.field(S, "simulate.swap_space"), D.KV})});
    In.SwapBandwidth = *Ctx.field(S, "simulate.swap_bandwidth");
    In.SwapBytesPerToken = D.KV;
  }
  // A linear step model: all four coefficients, or none.
  {
    const char *const Step[] = {"simulate.step.fixed", "simulate.step.prefill",
                                "simulate.step.decode", "simulate.step.kv"};
    NodeId *Out[] = {&In.StepFixed, &In.StepPrefill, &In.StepDecode,
                     &In.StepKV};
    const ir::Field *Any = nullptr;
    for (const char *P : Step)
      if (!Any)
        Any = S.field(P);
    if (Any)
      for (size_t K = 0; K < 4; ++K) {
        std::optional<NodeId> N = Ctx.field(S, Step[K]);
        if (!N) {
          Ctx.C.Diags.report(
              DiagKind::MissingInput, Any->Range,
              fmt::format("a linear step model needs `{}` too (`fixed`, "
                          "`prefill`, `decode` and `kv`)",
                          Step[K] + 9));
          Ctx.Failed = true;
          return false;
        }
        *Out[K] = *N;
      }
  }
  // The simulated metrics: leaves the simulator fills in after each
  // evaluation (sim::simulateInto), so that SLAs, sweeps and solves read
  // them like any metric.
  if (In.Requested)
    for (const MetricInfo &M : allMetrics()) {
      // The simulator's figures; the costs derived from them are lowered
      // later (lowerSimulatedCost).
      if (M.Where != Applies::Simulated || M.Id == MetricId::SimCostPerMtok ||
          M.Id == MetricId::SimEnergyPerToken)
        continue;
      graph::LeafOrigin O;
      O.Entity = S.Name;
      O.Field = M.Name;
      O.Notes.push_back("filled in by the serving simulator after each "
                        "evaluation (docs/simulator.md)");
      // Not an input: sensitivity leaves it alone.
      O.Choice = true;
      B.publish(M.Id, B.leaf(std::numeric_limits<double>::quiet_NaN(), M.Dim,
                             std::move(O)));
    }
  In.Static = D.Static;
  // Without `prefill_chunk`, on a colocated replica batching continuously,
  // the closed forms run each prompt in a pass of its own that the decodes
  // wait for (wall 4's interference); a declared chunk (riding on the
  // decodes or not) and a disaggregated platform do not.
  In.PromptsFirst = !D.Static && !D.Chunk && !D.TransferRate;
  In.ReserveToCompletion = D.ReserveToCompletion && !D.Static;
  if (std::optional<NodeId> Context = B.G.find(MetricId::ModelContext))
    In.ContextTokens = *Context;
  if (D.OutputCap)
    In.OutputCap = *D.OutputCap;
  In.RequestOverhead = Ctx.orDefault(W, DefaultId::RequestOverhead);
  if (D.Batcher) {
    In.BatcherWindow = D.Batcher->Window;
    In.BatcherMax = D.Batcher->MaxRequests;
  }
  // Chunked prefill, as the closed forms take it (wall 4): at most C prompt
  // tokens an iteration, riding on the decodes.
  if (D.ChunksRide)
    In.PromptChunk = *D.Chunk;
  In.Stages = D.PP;
  B.G.Sim = In;
  return true;
}

} // namespace mlsc
