//===- LowerQueries.cpp - Solve and sweep blocks against their graphs -----===//
//
// Part of lower-to-graph, run after the scenarios.
// Each `solve` and `sweep` of the main file becomes a query::Query:
//  - every `LEAF in LO .. HI [step S]` or `LEAF in [v, ...]` line names a
//    decision variable: the leaf node of the scenario graph that the field
//    lowered to, and its range or grid (folded constants, in SI units);
//  - conditions and metrics become nodes appended to the graph, so they
//    stay in topological order and re-evaluate with the rest.
// Diagnoses MalformedQuery (a line that is not a variable, a missing
// objective, an empty range), NotALeaf (a field the graph does not read, or
// reads only through a derived value) and SweepTooLarge.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerQueries.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace mlsc {

using query::Query;
using query::Term;
using query::Variable;

namespace {

/// The entity and field path a field reference ends at, following
/// entity-typed fields (`dgx.accelerator.hbm.bandwidth`).
std::optional<std::pair<const ir::Entity *, std::string>>
finalField(const ir::Expr &E) {
  const ir::Entity *Target = E.Target;
  size_t Begin = 0;
  auto join = [&](size_t From, size_t To) {
    std::string Joined;
    for (size_t I = From; I < To; ++I)
      Joined += (I > From ? "." : "") + E.Path[I];
    return Joined;
  };
  while (Target) {
    std::string Rest = join(Begin, E.Path.size());
    if (Target->field(Rest))
      return std::make_pair(Target, Rest);
    // Step through the longest prefix that names an entity-typed field.
    bool Advanced = false;
    for (size_t End = E.Path.size() - 1; End > Begin && !Advanced; --End) {
      const ir::Field *F = Target->field(join(Begin, End));
      if (F && F->Folded && F->Folded->Kind == ir::TypeKind::Entity) {
        Target = F->Folded->Ref;
        Begin = End;
        Advanced = true;
      }
    }
    if (!Advanced) // a field the entity does not write (a default)
      return std::make_pair(Target, Rest);
  }
  return std::nullopt;
}

class QueryLowering {
public:
  QueryLowering(Compilation &C, const ir::Entity &Q,
                const std::vector<const ir::Entity *> &Scenarios,
                std::vector<std::unique_ptr<LoweringContext>> &Lowerings)
      : C(C), QE(Q), Scenarios(Scenarios), Lowerings(Lowerings),
        MaxPoints(C.Options.MaxGridPoints) {}

  std::optional<Query> run() {
    Query Q;
    Q.K = QE.Kind == "solve"    ? Query::Kind::Solve
          : QE.Kind == "anchor" ? Query::Kind::Anchor
                                : Query::Kind::Sweep;
    Q.Name = QE.Name;
    Q.NameRange = QE.NameRange;
    const ir::Field *SF = QE.field("scenario");
    if (!SF || !SF->Folded || !SF->Folded->Ref)
      return std::nullopt; // diagnosed by build-ir
    auto It = std::find(Scenarios.begin(), Scenarios.end(), SF->Folded->Ref);
    if (It == Scenarios.end()) {
      C.Diags.report(DiagKind::MalformedQuery, SF->Range,
                     fmt::format("scenario `{}` is not declared in this "
                                 "file, so it has no graph to query",
                                 SF->Folded->Ref->Name));
      return std::nullopt;
    }
    Q.Graph = It - Scenarios.begin();
    QueryGraph = Q.Graph;
    L = Lowerings[Q.Graph].get();
    G = &C.Graphs[Q.Graph];
    bool Unstepped = G->DecoderTraining && !G->has(MetricId::StepTime);
    // A scenario whose lowering reported an error has said why already.
    if (Unstepped && G->NotLowered.empty() && C.Diags.hasErrors())
      return std::nullopt;
    if (Unstepped || G->Nodes.empty()) {
      C.Diags.report(
          DiagKind::MalformedQuery, SF->Range,
          fmt::format("scenario `{}` cannot be queried: {}",
                      SF->Folded->Ref->Name,
                      Unstepped ? "a solve, sweep or anchor needs the "
                                  "steps and feasibility of its workload, "
                                  "and its training step is not evaluated: " +
                                      G->NotLowered
                                : "it is not evaluated (see `mlsc eval`)"));
      return std::nullopt;
    }
    if (Q.K == Query::Kind::Anchor) {
      anchor(Q);
      return Failed ? std::nullopt : std::optional<Query>(std::move(Q));
    }
    if (Q.K == Query::Kind::Solve)
      solve(Q);
    else
      sweep(Q);
    // Entity variables last: their leaves are those the graph reads from
    // the entity once every term and condition has been lowered.
    for (Deferred &D : DeferredEntities) {
      size_t Before = Q.Vars.size();
      entityVariable(Q, *D.E, *D.E->Operands[0], *D.E->Operands[1],
                     std::move(D.V));
      if (Q.Vars.size() > Before) // move it from the end to its place
        std::rotate(Q.Vars.begin() + D.Position, Q.Vars.end() - 1,
                    Q.Vars.end());
    }
    checkOverlap(Q);
    if (Q.K == Query::Kind::Sweep || !Q.Objectives.empty())
      gridSize(Q,
               Q.K == Query::Kind::Sweep ? MaxPoints : C.Options.MaxGridPoints);
    if (Failed)
      return std::nullopt;
    return Q;
  }

private:
  Compilation &C;
  const ir::Entity &QE;
  const std::vector<const ir::Entity *> &Scenarios;
  std::vector<std::unique_ptr<LoweringContext>> &Lowerings;
  LoweringContext *L = nullptr;
  graph::Graph *G = nullptr;
  bool Failed = false;
  double MaxPoints; ///< the file's `max_points`, within --max-points
  /// Entity variables, resolved last, with the position each takes among
  /// the variables (the order of the `vary` lines is the table's order).
  struct Deferred {
    const ir::Expr *E;
    Variable V;
    size_t Position;
  };
  std::vector<Deferred> DeferredEntities;
  size_t QueryGraph = 0;

  /// Two variables must not set the same leaf: the later would silently
  /// override the earlier.
  void checkOverlap(const Query &Q) {
    std::map<graph::NodeId, const Variable *> Owner;
    for (const Variable &V : Q.Vars) {
      std::vector<graph::NodeId> Leaves = V.Leaves;
      if (!V.isEntity())
        Leaves.push_back(V.Leaf);
      for (graph::NodeId Leaf : Leaves) {
        auto [It, New] = Owner.emplace(Leaf, &V);
        if (!New && It->second != &V) {
          error(DiagKind::MalformedQuery, V.Range,
                fmt::format("`{}` and `{}` both set `{}`; vary it once",
                            It->second->Name, V.Name, G->node(Leaf).Name));
          return;
        }
      }
    }
  }

  /// What to do with an entity or a choice where a number is solved for.
  const char *notANumberHint() const {
    return QE.Kind == "anchor"
               ? "an inverse anchor solves for a number, the published "
                 "value's (a sweep or a Pareto solve can list it in `vary`)"
               : "list it in `vary` (a sweep, or a Pareto solve)";
  }

  void error(DiagKind K, llvm::SMRange R, std::string Message) {
    C.Diags.report(K, R, std::move(Message));
    Failed = true;
  }

  const std::vector<ir::ExprPtr> *items(llvm::StringRef Path) {
    const ir::Field *F = QE.field(Path);
    return F ? &F->Conditions : nullptr;
  }

  double number(const ir::Field *F, double Default) {
    return F && F->Folded ? F->Folded->Number : Default;
  }

  void solve(Query &Q) {
    const auto *Min = items("minimize"), *Max = items("maximize");
    const auto *Vary = items("vary");
    if (Min && Max) {
      error(DiagKind::MalformedQuery, QE.field("maximize")->Range,
            "a solve either minimizes or maximizes; write one of the two");
      return;
    }
    if (!Min && !Max) {
      error(DiagKind::MalformedQuery, QE.NameRange,
            fmt::format("solve `{}` needs `minimize {{ LEAF in LO .. HI }}` "
                        "or `maximize {{ ... }}`",
                        QE.Name));
      return;
    }
    Q.Direction = Max ? 1 : -1;
    const auto &Objective = Max ? *Max : *Min;
    if (Vary) {
      // A grid of several variables and metrics to trade off (Pareto).
      for (const ir::ExprPtr &E : *Vary)
        variable(Q, *E, /*AllowContinuous=*/false);
      for (const ir::ExprPtr &E : Objective)
        if (std::optional<Term> T = term(*E, "an objective"))
          Q.Objectives.push_back(*T);
      if (Q.Objectives.size() != 2 && !Failed)
        error(DiagKind::MalformedQuery,
              QE.field(Max ? "maximize" : "minimize")->Range,
              "a solve over `vary` trades off exactly two metrics (a Pareto "
              "front): write `minimize { METRIC; METRIC }`");
    } else {
      if (Objective.size() != 1) {
        error(DiagKind::MalformedQuery,
              QE.field(Max ? "maximize" : "minimize")->Range,
              "one decision variable, `LEAF in LO .. HI`; for several, list "
              "them in `vary { ... }` and the metrics to trade off here");
        return;
      }
      variable(Q, *Objective.front(), /*AllowContinuous=*/true);
      if (!Q.Vars.empty()) {
        Variable &V = Q.Vars.back();
        if (const ir::Field *I = QE.field("integer"); I && I->Folded) {
          V.Integer = I->Folded->Number != 0;
          if (!V.Integer && V.WholeValued)
            error(DiagKind::DomainError, I->Range,
                  fmt::format("`{}` is a whole number (a count, a batch); "
                              "it cannot be solved as continuous",
                              V.Name));
        }
        if (V.Integer && V.Continuous && std::ceil(V.Lo) > std::floor(V.Hi))
          error(DiagKind::DomainError, V.Range,
                fmt::format("`{}` is whole-valued, but no whole number lies "
                            "in its range",
                            V.Name));
      }
    }
    // An anchor's `tolerance` is its allowance, not the solve's precision.
    if (const ir::Field *T = QE.field("tolerance");
        T && Q.K != Query::Kind::Anchor) {
      Q.Tolerance = number(T, 1e-3);
      if (!(Q.Tolerance > 0 && Q.Tolerance < 1))
        error(DiagKind::DomainError, T->Range,
              "`tolerance` is relative, between 0 and 1 (0.001 is 0.1%)");
    }
    conditions(Q, "such_that");
  }

  /// One expression of a Terms field that must hold exactly one.
  const ir::Expr *single(const char *Field, const char *What) {
    const auto *Items = items(Field);
    if (!Items || Items->size() != 1) {
      const ir::Field *F = QE.field(Field);
      error(DiagKind::MalformedQuery, F ? F->Range : QE.NameRange,
            fmt::format("`{}` holds exactly one {}", Field, What));
      return nullptr;
    }
    return Items->front().get();
  }

  void anchor(Query &Q) {
    query::Anchor &A = Q.A;
    // An inverse anchor: a one-variable solve whose answer (or a metric
    // read there) is the measured quantity, such as the highest arrival
    // rate a benchmark's latency limits allow.
    A.Inverse = QE.field("minimize") || QE.field("maximize");
    if (A.Inverse) {
      solve(Q);
      if (Failed || Q.Vars.size() != 1)
        return;
      if (!QE.field("such_that")) {
        error(DiagKind::MissingInput, QE.NameRange,
              fmt::format("inverse anchor `{}` needs `such_that {{ ... }}`: "
                          "without conditions its answer is the end of its "
                          "range",
                          Q.Name));
        return;
      }
      checkOverlap(Q); // A.SolvePrecision stays the solve's default:
                       // `tolerance` is the anchor's allowance
    } else if (QE.field("such_that")) {
      error(DiagKind::MalformedQuery, QE.field("such_that")->Range,
            "`such_that` holds the conditions of an inverse anchor; give "
            "the leaf it solves for in `maximize { LEAF in LO .. HI }` or "
            "`minimize { ... }`");
      return;
    }
    if (!QE.field("metric") && !A.Inverse) {
      error(DiagKind::MissingInput, QE.NameRange,
            fmt::format("anchor `{}` needs `metric {{ ... }}`, the quantity "
                        "measured (or `maximize`/`minimize` to anchor the "
                        "answer of an inverse query)",
                        Q.Name));
      return;
    }
    const ir::Expr *Published =
        single("published", "value with its unit, e.g. `19694 tok/s`");
    std::optional<Term> T;
    if (QE.field("metric")) {
      const ir::Expr *Metric = single("metric", "quantity, e.g. `ttft.p99`");
      if (!Metric || !Published)
        return;
      T = term(*Metric, "the anchor's metric");
    } else if (Published) {
      // The answer itself: the decision variable's leaf, read at it.
      const Variable &V = Q.Vars.front();
      T = Term{fmt::format("{} {}", Q.Direction > 0 ? "max" : "min", V.Name),
               V.Leaf,
               V.Dim,
               false,
               false,
               false,
               V.Range};
    }
    if (!T || !Published)
      return;
    if (T->IsBool) {
      error(DiagKind::MalformedQuery, T->Range,
            fmt::format("`{}` is true or false; an anchor compares numbers",
                        T->Text));
      return;
    }
    std::optional<ir::Value> V = foldConstant(C, *Published);
    if (!V || V->Kind != ir::TypeKind::Quantity) {
      if (!C.Diags.hasErrors())
        error(DiagKind::MalformedQuery, Published->Range,
              "the published value must be a constant with its unit, e.g. "
              "`19694 tok/s`");
      Failed = true;
      return;
    }
    if (V->Dim != T->Dim) {
      error(DiagKind::UnitMismatch, Published->Range,
            fmt::format("the published value is [{}], but `{}` is [{}]",
                        V->Dim.str(), T->Text, T->Dim.str()));
      return;
    }
    if (!(V->Number > 0) || !std::isfinite(V->Number)) {
      error(DiagKind::DomainError, Published->Range,
            "a published value is positive and finite: the error is "
            "relative to it");
      return;
    }
    Q.Report.push_back(*T);
    A.Published = V->Number;
    A.PublishedText = ir::sourceText(Published->Range);
    Q.Tolerance = number(QE.field("tolerance"), 0.25);
    A.Calibration = QE.field("role") && QE.field("role")->Folded &&
                    QE.field("role")->Folded->Text == "calibration";
    if (const ir::Field *S = QE.field("sets"); S && S->Folded)
      A.Sets = S->Folded->Text;
    if (const ir::Field *K = QE.field("known_miss"); K && K->Folded) {
      A.KnownMiss = K->Folded->Text;
      if (llvm::StringRef(A.KnownMiss).trim().empty())
        error(DiagKind::MalformedQuery, K->Range,
              "`known_miss` says why the model misses the measurement; an "
              "empty reason hides the miss");
    }
    if (A.Calibration && A.Sets.empty())
      error(DiagKind::MissingInput, QE.NameRange,
            fmt::format("calibration anchor `{}` must say which factor it "
                        "sets: `sets = \"memory_efficiency\"`",
                        Q.Name));
    if (A.Calibration && !A.KnownMiss.empty())
      error(DiagKind::MalformedQuery, QE.field("known_miss")->Range,
            "`known_miss` marks a validation anchor the model misses; a "
            "calibration anchor sets a factor to meet its figure");
    if (!A.Calibration && !A.Sets.empty())
      error(DiagKind::MalformedQuery, QE.field("sets")->Range,
            "a validation anchor sets no factor: no factor may be tuned on "
            "it (`role = calibration` if one is)");
    if (const ir::Field *S = QE.field("source");
        S && S->Folded && S->Folded->Ref) {
      const ir::Entity &Src = *S->Folded->Ref;
      A.Source = Src.Name;
      if (const ir::Field *F = Src.field("title"); F && F->Folded)
        A.SourceTitle = F->Folded->Text;
      if (const ir::Field *F = Src.field("url"); F && F->Folded)
        A.SourceUrl = F->Folded->Text;
    }
  }

  void sweep(Query &Q) {
    const double Cap = C.Options.MaxGridPoints;
    MaxPoints = number(QE.field("max_points"), Cap);
    if (!(MaxPoints >= 1))
      error(DiagKind::DomainError, QE.field("max_points")->Range,
            "`max_points` must be at least 1");
    if (MaxPoints > Cap) {
      error(DiagKind::SweepTooLarge, QE.field("max_points")->Range,
            fmt::format("`max_points = {:.4g}` is above the {:.4g} points the "
                        "command line allows; a file may lower the limit, "
                        "not raise it (pass --max-points={:.4g})",
                        MaxPoints, Cap, MaxPoints));
      MaxPoints = Cap;
    }
    if (const auto *Vary = items("vary"))
      for (const ir::ExprPtr &E : *Vary)
        variable(Q, *E, /*AllowContinuous=*/false);
    if (const auto *Report = items("report")) {
      for (const ir::ExprPtr &E : *Report)
        if (std::optional<Term> T = term(*E, "a reported metric"))
          Q.Report.push_back(*T);
    } else {
      for (MetricId M : G->Metrics) {
        Term T;
        T.Text = metricInfo(M).Name;
        T.Node = G->get(M);
        T.Dim = G->node(T.Node).Dim;
        T.IsBool = G->node(T.Node).IsBool;
        Q.Report.push_back(T);
      }
    }
    if (const auto *Sort = items("sort_by"))
      for (const ir::ExprPtr &E : *Sort) {
        bool Descending =
            E->Kind == ir::ExprKind::Unary && E->UOp == ir::UnaryOp::Negate;
        const ir::Expr &Inner = Descending ? *E->Operands[0] : *E;
        if (std::optional<Term> T = term(Inner, "a sort key")) {
          T->Descending = Descending;
          T->Text = ir::sourceText(E->Range);
          Q.SortBy.push_back(*T);
        }
      }
    if (const ir::Field *Top = QE.field("top")) {
      Q.Top = number(Top, 0);
      if (!(Q.Top >= 1) || Q.Top != std::floor(Q.Top))
        error(DiagKind::DomainError, Top->Range,
              "`top` keeps the first N rows: a whole number of at least 1");
    }
    if (const ir::Field *O = QE.field("output"); O && O->Folded) {
      Q.Output = O->Folded->Text;
      Q.OutputRange = O->Range;
      checkOutputName(Q.Output, O->Range);
    }
    Q.MaxPoints = MaxPoints;
    conditions(Q, "where");
  }

  /// A file may name an output only inside the working directory: a
  /// relative path, not empty, with no `..` (docs/driver.md). The command
  /// line's --output is the user's own and is not limited so.
  void checkOutputName(llvm::StringRef Name, llvm::SMRange R) {
    if (Name.empty()) {
      error(DiagKind::OutputOutsideTree, R,
            "`output` is empty; name a file, or leave `output` out to print "
            "the table");
      return;
    }
    if (llvm::sys::path::is_absolute(Name) || Name.startswith("~")) {
      error(DiagKind::OutputOutsideTree, R,
            fmt::format("`output = \"{}\"` is an absolute path; a scenario "
                        "file may write only below the working directory "
                        "(use a relative path, or --output on the command "
                        "line)",
                        Name.str()));
      return;
    }
    for (auto It = llvm::sys::path::begin(Name),
              End = llvm::sys::path::end(Name);
         It != End; ++It)
      if (*It == "..") {
        error(DiagKind::OutputOutsideTree, R,
              fmt::format("`output = \"{}\"` climbs out with `..`; a "
                          "scenario file may write only below the working "
                          "directory (use --output on the command line)",
                          Name.str()));
        return;
      }
    if (Name.endswith("/") || llvm::sys::path::filename(Name) == ".") {
      error(DiagKind::OutputOutsideTree, R,
            fmt::format("`output = \"{}\"` names a folder, not a file",
                        Name.str()));
    }
  }

  /// Refuses grids larger than \p Max points before anything runs.
  void gridSize(const Query &Q, double Max) {
    if (Failed)
      return;
    double Points = 1;
    for (const Variable &V : Q.Vars)
      Points *= static_cast<double>(V.Values.size());
    if (Points <= Max)
      return;
    std::vector<std::string> Sizes;
    for (const Variable &V : Q.Vars)
      Sizes.push_back(std::to_string(V.Values.size()));
    error(DiagKind::SweepTooLarge, QE.NameRange,
          fmt::format("{} `{}` has {} = {:.4g} points, more than the {:.4g} "
                      "allowed; narrow a range, coarsen a step, or raise "
                      "`max_points`",
                      QE.Kind, QE.Name, llvm::join(Sizes, " x "), Points, Max));
  }

  void conditions(Query &Q, llvm::StringRef Field) {
    // A solve's answer must fit, whatever the conditions say; a sweep keeps
    // the points that do not (marked infeasible) unless `where` drops them.
    // Nor can it be a load the replicas do not keep up with: past it TTFT
    // grows without bound while a running request's TPOT stays finite, so
    // a bound on TPOT or ITL alone would answer a rate past capacity.
    for (auto [M, Text] : {std::pair{MetricId::Feasible, "feasible"},
                           std::pair{MetricId::QueueStable, "queue_stable"}})
      if (G->has(M) && Q.K == Query::Kind::Solve) {
        Term T;
        T.Text = Text;
        T.Node = G->get(M);
        T.IsBool = true;
        T.Implicit = true;
        Q.Conditions.push_back(T);
      }
    if (const auto *Conds = items(Field))
      for (const ir::ExprPtr &E : *Conds)
        if (std::optional<Term> T = term(*E, "a condition")) {
          // Written by the user too: keep theirs only.
          llvm::erase_if(Q.Conditions, [&](const Term &C) {
            return C.Implicit && C.Node == T->Node;
          });
          Q.Conditions.push_back(*T);
        }
  }

  std::optional<Term> term(const ir::Expr &E, const char *What) {
    std::string Missing;
    std::optional<graph::NodeId> Node = L->expr(E, Missing);
    if (!Node) {
      auto [Owner, Name] = llvm::StringRef(Missing).split('.');
      std::optional<MetricId> M = findMetric(Name);
      if (M && metricInfo(*M).Where == Applies::Simulated &&
          !(G->Sim && G->Sim->Requested)) {
        error(DiagKind::MalformedQuery, E.Range,
              fmt::format("`{}` comes from the serving simulator, and "
                          "scenario `{}` has no `simulate` block; give it "
                          "one: `simulate {{ requests = 10000 }}`",
                          Missing, Owner.str()));
        return std::nullopt;
      }
      error(DiagKind::MalformedQuery, E.Range,
            Missing.empty()
                ? fmt::format("{} must be computed from the scenario's "
                              "metrics and fields",
                              What)
                : fmt::format("`{}` is not computed for this scenario (see "
                              "`mlsc eval` for the metrics it has)",
                              Missing));
      return std::nullopt;
    }
    Term T;
    T.Text = ir::sourceText(E.Range);
    T.Node = *Node;
    T.Dim = G->node(*Node).Dim;
    T.IsBool = G->node(*Node).IsBool;
    T.Range = E.Range;
    return T;
  }

  /// Every `owner.field` reachable from the scenario that refers to
  /// \p Target, as "`owner.field`".
  void usesOf(const ir::Entity &Target, std::vector<std::string> &Out) {
    std::vector<const ir::Entity *> Work{Scenarios[QueryGraph]};
    std::set<const ir::Entity *> Seen;
    while (!Work.empty()) {
      const ir::Entity *E = Work.back();
      Work.pop_back();
      if (!Seen.insert(E).second)
        continue;
      for (const ir::Field &F : E->Fields) {
        if (!F.Folded || F.Folded->Kind != ir::TypeKind::Entity ||
            !F.Folded->Ref)
          continue;
        if (F.Folded->Ref == &Target)
          Out.push_back(fmt::format("`{}.{}`", E->Name, F.Path));
        Work.push_back(F.Folded->Ref);
      }
    }
    std::sort(Out.begin(), Out.end());
  }

  /// `node.accelerator in [H100_SXM, H200]`: every leaf the graph reads
  /// from the current entity takes each option's value for the same field.
  void entityVariable(Query &Q, const ir::Expr &E, const ir::Expr &Ref,
                      const ir::Expr &Set, Variable V) {
    (void)E;
    auto Final = finalField(Ref);
    const ir::Field *F = Final ? Final->first->field(Final->second) : nullptr;
    const ir::Entity *Current =
        F && F->Folded && F->Folded->Kind == ir::TypeKind::Entity
            ? F->Folded->Ref
            : nullptr;
    if (Set.Kind != ir::ExprKind::List || !Current) {
      error(
          DiagKind::MalformedQuery, Set.Range,
          fmt::format("`{}` takes a list of entities, `[A, B, ...]`", V.Name));
      return;
    }
    // Swapping leaves can replace numbers, not the graph's shape: a model,
    // a precision (it picks the peak the graph reads) or a node (it picks
    // the accelerator) shapes the graph.
    if (Current->Kind != "accelerator" && Current->Kind != "fabric" &&
        Current->Kind != "site") {
      error(DiagKind::MalformedQuery, Ref.Range,
            fmt::format("`{}` is a {}, which shapes the scenario's graph; "
                        "only accelerators, fabrics and sites vary as "
                        "entities: write one scenario per {}",
                        V.Name, Current->Kind, Current->Kind));
      return;
    }
    // Varying the entity swaps every value read from it, so it must be
    // reached through this field alone.
    std::vector<std::string> Uses;
    usesOf(*Current, Uses);
    if (Uses.size() > 1) {
      error(DiagKind::MalformedQuery, Ref.Range,
            fmt::format("`{}` is used by {} in scenario `{}`; varying `{}` "
                        "would change all of them: give each use its own "
                        "entity (`{} {}_b : {} {{}}`)",
                        Current->Name, llvm::join(Uses, " and "), G->Scenario,
                        V.Name, Current->Kind, Current->Name, Current->Name));
      return;
    }
    // The leaves the graph reads from the current entity.
    struct Read {
      graph::NodeId Leaf;
      std::string Field;
      bool Assumed;
    };
    std::vector<Read> Reads;
    for (uint32_t I = 0; I < G->Nodes.size(); ++I) {
      const graph::Node &N = G->Nodes[I];
      if (N.Kind == graph::Op::Leaf && N.Origin < G->Origins.size() &&
          G->Origins[N.Origin].Entity == Current->Name)
        Reads.push_back({graph::NodeId(I), G->Origins[N.Origin].Field,
                         G->Origins[N.Origin].Assumed});
    }
    if (Reads.empty()) {
      error(DiagKind::NotALeaf, Ref.Range,
            fmt::format("scenario `{}` reads nothing from `{}`, so varying "
                        "`{}` changes nothing",
                        G->Scenario, Current->Name, V.Name));
      return;
    }
    for (const ir::ExprPtr &Item : Set.Operands) {
      const ir::Entity *Option =
          Item->Kind == ir::ExprKind::EntityRef ? Item->Target : nullptr;
      if (!Option || Option->Kind != Current->Kind) {
        error(DiagKind::MalformedQuery, Item->Range,
              fmt::format("`{}` takes {}s, like `{}`", V.Name, Current->Kind,
                          Current->Name));
        return;
      }
      std::vector<double> Values;
      for (const Read &R : Reads) {
        const ir::Field *OF = Option->field(R.Field);
        if (OF && OF->Folded && OF->Folded->Kind == ir::TypeKind::Quantity) {
          Values.push_back(OF->Folded->Number);
        } else if (R.Assumed) {
          Values.push_back(G->LeafValues[R.Leaf.index()]); // the same default
        } else {
          error(DiagKind::MalformedQuery, Item->Range,
                fmt::format("`{}` cannot stand in for `{}`: scenario `{}` "
                            "reads `{}.{}`, and `{}` gives no constant `{}`",
                            Option->Name, Current->Name, G->Scenario,
                            Current->Name, R.Field, Option->Name, R.Field));
          return;
        }
      }
      V.Values.push_back(static_cast<double>(V.Labels.size()));
      V.Labels.push_back(Option->Name);
      V.Options.push_back(std::move(Values));
    }
    for (const Read &R : Reads)
      V.Leaves.push_back(R.Leaf);
    V.Leaf = V.Leaves.front();
    V.Lo = 0;
    V.Hi = static_cast<double>(V.Values.size() - 1);
    Q.Vars.push_back(std::move(V));
  }

  /// Whether the scenario's graph reads some field \p E writes (the
  /// entity is part of the scenario).
  bool entityRead(const ir::Entity &E) {
    graph::NodeId Leaf;
    for (const ir::Field &F : E.Fields)
      if (L->leafFor(E, F.Path, Leaf) == LeafStatus::Leaf)
        return true;
    return false;
  }

  /// The leaf field \p Final lowered to, and whether it is one.
  template <class FinalField>
  LeafStatus leafOf(const FinalField &Final, graph::NodeId &Leaf) {
    return Final ? L->leafFor(*Final->first, Final->second, Leaf)
                 : LeafStatus::Unread;
  }

  /// `w.recompute in [none, full]`, `w.sequence_parallel in [true,
  /// false]`: each option sets the choice's leaf to the symbol's position
  /// (or the flag's 0 or 1) and is shown by name.
  void choiceVariable(Query &Q, const ir::Expr &Ref, const ir::Expr &Set,
                      Variable V, bool OneVariableSolve) {
    bool Flag = Ref.Ty.Kind == ir::TypeKind::Bool;
    if (OneVariableSolve) {
      error(DiagKind::MalformedQuery, Ref.Range,
            fmt::format("`{}` is a choice: it cannot be minimized or "
                        "maximized; {}",
                        V.Name, notANumberHint()));
      return;
    }
    auto Final = finalField(Ref);
    graph::NodeId Leaf;
    LeafStatus Status = leafOf(Final, Leaf);
    const graph::Node *N =
        Status == LeafStatus::Leaf ? &G->node(Leaf) : nullptr;
    if (!N || N->Origin >= G->Origins.size() || !G->Origins[N->Origin].Choice) {
      error(DiagKind::NotALeaf, Ref.Range,
            fmt::format("`{}` is not an input of scenario `{}` that a sweep "
                        "can vary: the scenario does not read it, or it "
                        "shapes the graph as it is lowered (write one "
                        "scenario per value); `mlsc explain --leaves` lists "
                        "the inputs",
                        V.Name, G->Scenario));
      return;
    }
    const FieldSchema *FS = Final->first->Schema
                                ? Final->first->Schema->field(Final->second)
                                : nullptr;
    if (Set.Kind != ir::ExprKind::List || Set.Operands.empty()) {
      error(DiagKind::MalformedQuery, Set.Range,
            fmt::format("`{}` takes a list of {}, `[{}]`", V.Name,
                        Flag ? "flags" : "its symbols",
                        Flag ? "true, false"
                        : FS ? llvm::join(FS->Allowed, ", ")
                             : std::string("A, B")));
      return;
    }
    for (const ir::ExprPtr &Item : Set.Operands) {
      double Code = 0;
      std::string Label;
      if (Flag && Item->Kind == ir::ExprKind::Bool) {
        Code = Item->BoolValue ? 1 : 0;
        Label = Item->BoolValue ? "true" : "false";
      } else if (!Flag && Item->Kind == ir::ExprKind::EnumSymbol && FS) {
        Code = static_cast<double>(llvm::find(FS->Allowed, Item->Spelling) -
                                   FS->Allowed.begin());
        Label = Item->Spelling;
      } else {
        error(DiagKind::MalformedQuery, Item->Range,
              fmt::format("`{}` takes {}", V.Name,
                          Flag ? "`true` or `false`"
                          : FS ? "one of " + llvm::join(FS->Allowed, ", ")
                               : std::string("its symbols")));
        return;
      }
      if (llvm::is_contained(V.Labels, Label)) {
        error(DiagKind::MalformedQuery, Item->Range,
              fmt::format("`{}` lists `{}` twice", V.Name, Label));
        return;
      }
      V.Values.push_back(static_cast<double>(V.Labels.size()));
      V.Labels.push_back(Label);
      V.Options.push_back({Code});
    }
    V.Leaf = Leaf;
    V.Leaves.push_back(Leaf);
    V.Choice = true;
    V.Lo = 0;
    V.Hi = static_cast<double>(V.Values.size() - 1);
    Q.Vars.push_back(std::move(V));
  }

  void variable(Query &Q, const ir::Expr &E, bool AllowContinuous) {
    if (E.Kind != ir::ExprKind::Binary || E.BOp != ir::BinaryOp::In ||
        E.Operands[0]->Kind != ir::ExprKind::FieldRef) {
      error(DiagKind::MalformedQuery, E.Range,
            "a decision variable is written `FIELD in LO .. HI`, `FIELD in "
            "LO .. HI step S` or `FIELD in [A, B, ...]`");
      return;
    }
    const ir::Expr &Ref = *E.Operands[0];
    const ir::Expr &Set = *E.Operands[1];
    Variable V;
    V.Name = ir::sourceText(Ref.Range);
    V.Range = E.Range;
    V.Dim = Ref.Ty.Dim;
    if (Ref.Ty.Kind == ir::TypeKind::Entity) {
      if (AllowContinuous) { // a one-variable solve
        error(DiagKind::MalformedQuery, E.Range,
              fmt::format("`{}` is an entity: it cannot be minimized or "
                          "maximized; {}",
                          V.Name, notANumberHint()));
        return;
      }
      DeferredEntities.push_back(
          {&E, std::move(V), Q.Vars.size() + DeferredEntities.size()});
      return;
    }
    if (Ref.Ty.Kind == ir::TypeKind::Enum ||
        Ref.Ty.Kind == ir::TypeKind::Bool) {
      choiceVariable(Q, Ref, Set, std::move(V), AllowContinuous);
      return;
    }
    if (Ref.Ty.Kind != ir::TypeKind::Quantity) {
      error(DiagKind::MalformedQuery, Ref.Range,
            fmt::format("`{}` is neither a number nor an entity, so it "
                        "cannot vary",
                        V.Name));
      return;
    }
    auto Final = finalField(Ref);
    graph::NodeId Leaf;
    LeafStatus Status = leafOf(Final, Leaf);
    if (Status != LeafStatus::Leaf) {
      error(DiagKind::NotALeaf, Ref.Range,
            Status == LeafStatus::Derived
                ? fmt::format("`{}` is computed from other fields; vary "
                              "the fields it is computed from instead",
                              V.Name)
            : Final && !Final->first->field(Final->second) &&
                    entityRead(*Final->first)
                ? fmt::format("`{}` is not set, so scenario `{}` does not "
                              "read it: give it a value in the file to vary "
                              "it (leaving a field out can change what is "
                              "computed, as a batcher without "
                              "`max_requests` has no bound)",
                              V.Name, G->Scenario)
                : fmt::format("`{}` is not an input of scenario `{}`: its "
                              "graph never reads it (`mlsc explain "
                              "--leaves` lists the inputs)",
                              V.Name, G->Scenario));
      return;
    }
    V.Leaf = Leaf;
    std::optional<ir::Value> Folded = foldConstant(C, Set);
    if (!Folded) {
      Failed = true; // the folder reported why (e.g. an empty range)
      if (!C.Diags.hasErrors())
        error(DiagKind::MalformedQuery, Set.Range,
              "the values of a decision variable must be constants");
      return;
    }
    if (Set.Kind == ir::ExprKind::Range) {
      const auto &It = Folded->Items;
      V.Lo = It[0].Number;
      V.Hi = It[1].Number;
      if (!(V.Lo < V.Hi)) {
        error(DiagKind::DomainError, Set.Range,
              fmt::format("the range of `{}` is empty: its lower bound must "
                          "be below its upper bound",
                          V.Name));
        return;
      }
      if (It.size() >= 3) {
        double Step = It[2].Number;
        if (!(Step > 0)) {
          error(DiagKind::DomainError, Set.Range,
                fmt::format("the step of `{}` must be positive", V.Name));
          return;
        }
        double N = std::floor((V.Hi - V.Lo) / Step + 1e-9) + 1;
        // Checked before the values are made: with the variables before
        // it, a grid of 10^21 points must not allocate the first 10^7.
        double Before = 1;
        for (const Variable &Prev : Q.Vars)
          Before *=
              static_cast<double>(std::max<size_t>(1, Prev.Values.size()));
        if (N * Before > MaxPoints) {
          error(DiagKind::SweepTooLarge, Set.Range,
                Before == 1
                    ? fmt::format("`{}` alone takes {:.4g} values, more than "
                                  "the {:.4g} points allowed; coarsen its "
                                  "step or raise `max_points`",
                                  V.Name, N, MaxPoints)
                    : fmt::format("`{}` takes {:.4g} values, {:.4g} points "
                                  "with the lines before it, more than the "
                                  "{:.4g} allowed; coarsen a step or raise "
                                  "`max_points`",
                                  V.Name, N, N * Before, MaxPoints));
          return;
        }
        for (double K = 0; K < N; ++K)
          V.Values.push_back(V.Lo + K * Step);
        V.Integer = Step == std::floor(Step) && V.Lo == std::floor(V.Lo);
      } else if (AllowContinuous) {
        V.Continuous = true;
      } else {
        error(DiagKind::MalformedQuery, Set.Range,
              fmt::format("`{}` needs a grid: give a step (`LO .. HI step "
                          "S`) or a list of values",
                          V.Name));
        return;
      }
    } else if (Set.Kind == ir::ExprKind::List) {
      for (const ir::Value &I : Folded->Items)
        V.Values.push_back(I.Number);
      if (V.Values.empty()) {
        error(DiagKind::DomainError, Set.Range,
              fmt::format("`{}` has no values to take", V.Name));
        return;
      }
      V.Lo = *std::min_element(V.Values.begin(), V.Values.end());
      V.Hi = *std::max_element(V.Values.begin(), V.Values.end());
    } else {
      error(DiagKind::MalformedQuery, Set.Range,
            "a decision variable takes a range `LO .. HI` or a list `[A, B]`");
      return;
    }
    // What the field can physically be (Schema.def, DOMAIN) bounds the
    // range: no solve or sweep evaluates a negative bandwidth or tp = 0.
    const FieldSchema *S = Final->first->Schema
                               ? Final->first->Schema->field(Final->second)
                               : nullptr;
    if (S && S->Domain != ValueDomain::Any) {
      std::optional<double> Bad;
      bool WholeValued = S->Domain == ValueDomain::Whole ||
                         S->Domain == ValueDomain::WholeOrZero;
      if (V.Continuous) {
        // The ends of a continuous range need not be whole: the solver
        // takes whole values only (below), and 1.5 .. 8.5 holds 2 .. 8.
        double Lo = WholeValued ? std::ceil(V.Lo) : V.Lo;
        double Hi = WholeValued ? std::floor(V.Hi) : V.Hi;
        if (!inDomain(S->Domain, Lo))
          Bad = V.Lo;
        else if (!inDomain(S->Domain, Hi) && Hi >= Lo)
          Bad = V.Hi;
      } else {
        for (double X : V.Values)
          if (!Bad && !inDomain(S->Domain, X))
            Bad = X;
      }
      if (Bad) {
        error(DiagKind::ValueOutOfDomain, Set.Range,
              fmt::format("`{}` must be {}; this range reaches {:.6g}{}",
                          V.Name, describeDomain(S->Domain), *Bad,
                          V.Dim.isDimensionless() ? "" : " " + V.Dim.str()));
        return;
      }
      if (WholeValued) {
        V.Integer = true;
        V.WholeValued = true;
      }
    }
    Q.Vars.push_back(std::move(V));
  }
};

} // namespace

void lowerQueries(Compilation &C,
                  const std::vector<const ir::Entity *> &Scenarios,
                  std::vector<std::unique_ptr<LoweringContext>> &Lowerings) {
  for (const auto &E : C.Program.Entities) {
    if ((E->Kind != "solve" && E->Kind != "sweep" && E->Kind != "anchor") ||
        C.SM.FindBufferContainingLoc(E->NameRange.Start) !=
            C.Program.MainBufferId)
      continue;
    if (std::optional<Query> Q =
            QueryLowering(C, *E, Scenarios, Lowerings).run())
      C.Queries.push_back(std::move(*Q));
  }
}

} // namespace mlsc
