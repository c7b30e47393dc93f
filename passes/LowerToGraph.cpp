//===- LowerToGraph.cpp - Scenarios to evaluation graphs ------------------===//
//
// Consumes the folded IR; produces one graph::Graph per scenario of the main
// file. Leaves are the IR values the walls read (with their origins) and the
// documented defaults they fall back on; derived fields are lowered as
// arithmetic over their own inputs, so changing a leaf later changes
// everything computed from it. Then the workload's lowering (a decoder
// LLM, or a CNN or encoder: see ScenarioLowering.h) adds the walls'
// formulas and names its metrics, and the scenario's SLA conditions and the
// file's asserts become boolean nodes. Diagnoses MissingInput,
// MetricUnavailable (a warning: the condition stays unknown) and
// AssertSpansScenarios.
//
//===----------------------------------------------------------------------===//

#include "ir/Units.h"
#include "passes/ScenarioLowering.h"
#include "runtime/Defaults.h"
#include "runtime/walls/Formulas.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <set>

namespace mlsc {

using graph::Graph;
using graph::LeafOrigin;
using graph::Op;

namespace {
/// Fields that are calibrated factors rather than measurements.
bool isCalibrated(llvm::StringRef Path) {
  return Path == "efficiency" || Path == "memory_efficiency" ||
         Path == "comm_efficiency" || Path == "service_cv" ||
         Path == "memory_utilization" || Path.startswith("kernels.");
}
} // namespace

void ScenarioLowering::run() {
  const ir::Entity *Workload = entity(S, "workload");
  const ir::Entity *SystemEntity = entity(S, "system");
  if (!Workload || !SystemEntity)
    return; // already diagnosed by build-ir
  const ir::Entity *Model = entity(*Workload, "model");
  const ir::Entity *Precision = entity(*Workload, "precision");
  std::optional<System> Sys = system(*SystemEntity);
  bool Training = enumValue(*Workload, "mode") == "training";
  std::string Family = Model ? enumValue(*Model, "family") : "";
  bool PerSample = Family == "cnn" || Family == "encoder";
  if (Model && Precision && Sys && PerSample)
    perSample(*Workload, *Model, *Precision, *Sys, Family == "cnn", Training);
  else if (Training)
    G.Training = true; // decoder training: the training walls come later
  else if (Model && Precision && Sys)
    decoder(*Workload, *Sys);
  reportMissing();
  finishMetrics();
}

void ScenarioLowering::condition(const ir::Expr &E, llvm::SMRange R,
                                 bool IsAssert, const std::string &Message) {
  graph::Condition Cond;
  Cond.Range = R;
  Cond.Text = ir::sourceText(E.Range);
  Cond.IsAssert = IsAssert;
  Cond.Message = Message;
  std::string Missing;
  std::optional<uint32_t> Node = expr(E, Missing);
  if (Node) {
    Cond.NodeId = static_cast<int>(*Node);
  } else if (!Missing.empty()) {
    Cond.Missing = Missing;
    C.Diags.report(DiagKind::MetricUnavailable, E.Range,
                   fmt::format("`{}` is not computed yet: no implemented "
                               "wall provides it (see `mlsc walls`); this "
                               "condition stays unknown",
                               Missing));
  }
  G.Conditions.push_back(std::move(Cond));
}

const ir::Entity *ScenarioLowering::entity(const ir::Entity &E,
                                           llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Folded || F->Folded->Kind != ir::TypeKind::Entity)
    return nullptr;
  return F->Folded->Ref;
}

void ScenarioLowering::missing(const ir::Entity &Owner, llvm::StringRef Path,
                               llvm::StringRef Why) {
  MissingInputs.push_back(
      fmt::format("`{}.{}` ({})", Owner.Name, Path.str(), Why.str()));
  if (!llvm::is_contained(MissingOwners, &Owner))
    MissingOwners.push_back(&Owner);
  Failed = true;
}

/// One diagnostic per scenario lists every missing input.
void ScenarioLowering::reportMissing() {
  if (MissingInputs.empty())
    return;
  Diagnostic &D = C.Diags.report(DiagKind::MissingInput, S.NameRange,
                                 fmt::format("scenario `{}` needs {}", S.Name,
                                             llvm::join(MissingInputs, ", ")));
  for (const ir::Entity *Owner : MissingOwners)
    D.note(DiagKind::DeclaredHere, Owner->NameRange,
           fmt::format("{} `{}` is declared here", Owner->Kind, Owner->Name));
}

/// The node of a field: its literal as a leaf, or its expression lowered.
std::optional<uint32_t> ScenarioLowering::field(const ir::Entity &E,
                                                llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Value || F->Value->Ty.Kind != ir::TypeKind::Quantity)
    return std::nullopt;
  auto It = FieldNodes.find(F);
  if (It != FieldNodes.end())
    return It->second;
  std::optional<uint32_t> Id;
  if (F->Value->Kind == ir::ExprKind::Number) {
    LeafOrigin O;
    O.Entity = E.Name;
    O.Field = F->Path;
    O.Range = F->Range;
    if (F->Source) {
      O.Source = F->Source->Name;
      O.SourceKind = enumValue(*F->Source, "kind");
    }
    O.Notes = F->Notes;
    O.Spelling = F->Value->Spelling;
    O.Calibrated = isCalibrated(F->Path);
    Id = B.leaf(F->Value->Number, F->Value->Ty.Dim, std::move(O));
  } else {
    std::string Ignored;
    Id = expr(*F->Value, Ignored);
  }
  if (Id) {
    B.name(*Id, E.Name + "." + F->Path);
    FieldNodes[F] = *Id;
  }
  return Id;
}

uint32_t ScenarioLowering::required(const ir::Entity &E, llvm::StringRef Path,
                                    llvm::StringRef Why) {
  if (std::optional<uint32_t> Id = field(E, Path))
    return *Id;
  missing(E, Path, Why);
  return B.constant(0, "placeholder for a missing input");
}

/// A field, or a documented default when the field is not given.
uint32_t ScenarioLowering::orDefault(const ir::Entity &E, llvm::StringRef Path,
                                     double Value, Dimension D,
                                     const std::string &Why, bool Calibrated) {
  if (std::optional<uint32_t> Id = field(E, Path))
    return *Id;
  LeafOrigin O;
  O.Entity = E.Name;
  O.Field = Path.str();
  O.Spelling = fmt::format("{}", Value);
  O.Notes.push_back(Why);
  O.Assumed = true;
  O.Calibrated = Calibrated;
  uint32_t Id = B.leaf(Value, D, std::move(O));
  B.name(Id, E.Name + "." + Path.str());
  return Id;
}

/// Lowers an IR expression; nullopt when it uses an unavailable metric
/// (named in \p Missing) or cannot be lowered.
std::optional<uint32_t> ScenarioLowering::expr(const ir::Expr &E,
                                               std::string &Missing) {
  using K = ir::ExprKind;
  switch (E.Kind) {
  case K::Number: {
    LeafOrigin O;
    O.Range = E.Range;
    O.Spelling = E.Spelling;
    return B.leaf(E.Number, E.Ty.Dim, std::move(O));
  }
  case K::Bool: {
    LeafOrigin O;
    O.Range = E.Range;
    O.Spelling = E.BoolValue ? "true" : "false";
    return B.leaf(E.BoolValue ? 1 : 0, Dimension(), std::move(O), "", true);
  }
  case K::FieldRef:
    return fieldRef(E);
  case K::MetricRef: {
    std::string Name = llvm::join(E.Path, ".");
    if (E.Target != &S) {
      Missing = E.Target->Name + "." + Name;
      return std::nullopt;
    }
    int Id = G.find(Name);
    if (Id < 0) {
      Missing = S.Name + "." + Name;
      return std::nullopt;
    }
    return static_cast<uint32_t>(Id);
  }
  case K::LetRef: {
    auto It = LetNodes.find(E.LetTarget);
    if (It != LetNodes.end())
      return It->second;
    if (!E.LetTarget->Value)
      return std::nullopt;
    std::optional<uint32_t> Id = expr(*E.LetTarget->Value, Missing);
    if (Id) {
      LetNodes[E.LetTarget] = *Id;
      B.name(*Id, E.LetTarget->Name);
    }
    return Id;
  }
  case K::Unary: {
    std::optional<uint32_t> O = expr(*E.Operands[0], Missing);
    if (!O)
      return std::nullopt;
    if (E.UOp == ir::UnaryOp::Plus)
      return O;
    bool Not = E.UOp == ir::UnaryOp::Not;
    return B.op(Not ? Op::Not : Op::Neg, {*O}, E.Ty.Dim, Not);
  }
  case K::Binary: {
    std::optional<uint32_t> L = expr(*E.Operands[0], Missing);
    std::optional<uint32_t> R = expr(*E.Operands[1], Missing);
    if (!L || !R || E.BOp == ir::BinaryOp::In)
      return std::nullopt;
    static const Op Ops[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Pow,
                             Op::Lt,  Op::Le,  Op::Gt,  Op::Ge,  Op::Eq,
                             Op::Ne,  Op::Add, Op::And, Op::Or};
    Op O = Ops[static_cast<unsigned>(E.BOp)];
    return B.op(O, {*L, *R}, E.Ty.Dim, E.Ty.Kind == ir::TypeKind::Bool);
  }
  case K::Call: {
    std::vector<uint32_t> In;
    for (const ir::ExprPtr &A : E.Operands) {
      std::optional<uint32_t> Id = expr(*A, Missing);
      if (!Id)
        return std::nullopt;
      In.push_back(*Id);
    }
    static const Op Ops[] = {Op::Min,   Op::Max,   Op::Ceil, Op::Floor,
                             Op::Round, Op::Abs,   Op::Sqrt, Op::Log,
                             Op::Log2,  Op::Log10, Op::Exp};
    return B.op(Ops[static_cast<unsigned>(E.Fn)], In, E.Ty.Dim);
  }
  default:
    return std::nullopt;
  }
}

/// Follows entity-typed fields to the final field's node.
std::optional<uint32_t> ScenarioLowering::fieldRef(const ir::Expr &E) {
  const ir::Entity *Target = E.Target;
  size_t Begin = 0;
  while (Target) {
    bool Advanced = false;
    for (size_t End = E.Path.size(); End > Begin; --End) {
      std::string Joined;
      for (size_t I = Begin; I < End; ++I)
        Joined += (I > Begin ? "." : "") + E.Path[I];
      if (!Target->field(Joined))
        continue;
      if (End == E.Path.size())
        return field(*Target, Joined);
      Target = entity(*Target, Joined);
      Begin = End;
      Advanced = true;
      break;
    }
    if (!Advanced)
      return std::nullopt;
  }
  return std::nullopt;
}

Dimension ScenarioLowering::unit(const char *Text) {
  UnitParseError Err;
  return parseUnit(Text, Err)->Dim;
}

/// A fraction must lie in [0, 1]; the check uses the folded value, so a
/// later change of the leaf (a sweep) is the caller's to bound.
void ScenarioLowering::checkFraction(const ir::Entity &E,
                                     llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Folded)
    return;
  double V = F->Folded->Number;
  if (V >= 0 && V <= 1)
    return;
  C.Diags.report(
      DiagKind::DomainError, F->Value->Range,
      fmt::format("`{}` is a fraction between 0 and 1, got {}", Path.str(), V));
  Failed = true;
}

void ScenarioLowering::checkPositive(const ir::Entity &E,
                                     llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Folded || F->Folded->Number > 0)
    return;
  C.Diags.report(DiagKind::DomainError, F->Value->Range,
                 fmt::format("`{}` must be positive, got `{}`", Path.str(),
                             ir::sourceText(F->Value->Range)));
  Failed = true;
}
/// A field's folded number, or 1 when it is not a constant.
double ScenarioLowering::foldedNumber(const ir::Entity &E,
                                      llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  return F && F->Folded ? F->Folded->Number : 1;
}

/// Metrics that no implemented wall computes for this kind of workload
/// are listed as unavailable; those that do not apply to it (per-sample
/// throughput for an LLM, token latencies for a CNN) are left out.
void ScenarioLowering::finishMetrics() {
  // Metrics that do not apply to the workload are left out: per-sample
  // throughput for an LLM, token latencies for a CNN, training figures for
  // inference; and those that only echo or answer an optional input
  // (accuracy_delta, max_batch_under_tpot) when the input is not given.
  static const char *const PerSampleOnly[] = {"batch_time", "sample_throughput",
                                              "energy_per_sample"};
  static const char *const TokenOnly[] = {"ttft.",
                                          "tpot.",
                                          "itl.",
                                          "latency.",
                                          "utilisation",
                                          "prefill_time",
                                          "decode_step_time",
                                          "throughput",
                                          "max_concurrent_sequences",
                                          "energy_per_token",
                                          "cost_per_mtok",
                                          "max_batch_under_tpot",
                                          "accuracy_delta",
                                          "throughput_per_device",
                                          "replicas_needed"};
  static const char *const TrainingOnly[] = {"step_time", "mfu"};
  static const char *const OnInput[] = {
      "accuracy_delta", "max_batch_under_tpot", "replicas_needed"};
  bool PerSample = G.find("sample_throughput") >= 0;
  bool Training = G.Training || G.find("step_time") >= 0;
  for (const MetricSchema &M : S.Schema->Metrics) {
    llvm::StringRef Path(M.Path);
    auto inList = [&](llvm::ArrayRef<const char *> List) {
      return llvm::any_of(List, [&](const char *P) {
        return llvm::StringRef(P).endswith(".") ? Path.startswith(P)
                                                : Path == P;
      });
    };
    if (G.find(M.Path) >= 0)
      G.Metrics.push_back(M.Path);
    else if (!inList(PerSample ? llvm::makeArrayRef(TokenOnly)
                               : llvm::makeArrayRef(PerSampleOnly)) &&
             (Training || !inList(TrainingOnly)) && !inList(OnInput))
      G.Unavailable.push_back(M.Path);
  }
}

std::string ScenarioLowering::enumValue(const ir::Entity &E,
                                        llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  return F && F->Folded ? F->Folded->Text : "";
}

uint32_t ScenarioLowering::none(Dimension D, const char *Spelling,
                                const char *Why) {
  LeafOrigin O;
  O.Spelling = Spelling;
  O.Notes.push_back(Why);
  return B.leaf(0, D, std::move(O));
}

std::optional<ScenarioLowering::System>
ScenarioLowering::system(const ir::Entity &Sys) {
  // An accelerator, a node of them, or a cluster of nodes.
  System R;
  const Dimension Watt = unit("W");
  if (Sys.Kind == "accelerator") {
    R.Accel = &Sys;
    R.Devices = B.constant(1, "a bare accelerator is one device");
    R.Nodes = B.constant(0, "a bare accelerator has no node around it");
    R.Overhead = none(Watt, "0 W", "no node around a bare accelerator");
  } else if (Sys.Kind == "node") {
    R.Node = &Sys;
    R.Accel = entity(Sys, "accelerator");
    R.Devices = required(Sys, "count", "accelerators per node");
    R.Nodes = B.constant(1, "one node");
    R.Overhead = orDefault(Sys, "overhead", 0, Watt,
                           "default: no power beyond the accelerators");
  } else if (Sys.Kind == "cluster") {
    R.Node = entity(Sys, "node");
    if (!R.Node)
      return std::nullopt;
    R.Accel = entity(*R.Node, "accelerator");
    R.Nodes = required(Sys, "nodes", "node count");
    R.Devices = B.op(
        Op::Mul, {required(*R.Node, "count", "accelerators per node"), R.Nodes},
        Dimension());
    R.Overhead = orDefault(*R.Node, "overhead", 0, Watt,
                           "default: no power beyond the accelerators");
  }
  if (!R.Accel)
    return std::nullopt;
  B.name(R.Devices, "devices");
  return R;
}

int ScenarioLowering::leafFor(const ir::Entity &E, llvm::StringRef Path) {
  if (const ir::Field *F = E.field(Path)) {
    auto It = FieldNodes.find(F);
    if (It != FieldNodes.end())
      return G.Nodes[It->second].Kind == Op::Leaf ? static_cast<int>(It->second)
                                                  : -2;
  }
  // A documented default stands in for a field the entity does not write.
  for (uint32_t I = 0; I < G.Nodes.size(); ++I) {
    const graph::Node &N = G.Nodes[I];
    if (N.Kind == Op::Leaf && N.Origin < G.Origins.size() &&
        G.Origins[N.Origin].Entity == E.Name &&
        G.Origins[N.Origin].Field == Path)
      return static_cast<int>(I);
  }
  return -1;
}

uint32_t ScenarioLowering::kernelEfficiency(const ir::Entity &W,
                                            llvm::StringRef Class) {
  if (std::optional<uint32_t> All = field(W, "efficiency"))
    return *All; // one calibrated eta for every kernel class
  const walls::KernelClass &K = walls::kernelClass(Class);
  // An unfused workload's attention reads `kernels.attention_unfused`.
  if (W.field(K.Field)) {
    checkFraction(W, K.Field);
    checkPositive(W, K.Field);
  }
  return orDefault(W, K.Field, K.Default, Dimension(),
                   fmt::format("default (wall 3): {} at {} of dense peak, "
                               "plausible {} to {}; {}",
                               K.Name, K.Default, K.Low, K.High, K.Source),
                   /*Calibrated=*/true);
}

namespace {

/// Scenarios whose metrics an expression reads.
void scenariosOf(const ir::Expr &E, std::set<const ir::Entity *> &Out) {
  if (E.Kind == ir::ExprKind::MetricRef)
    Out.insert(E.Target);
  if (E.Kind == ir::ExprKind::LetRef && E.LetTarget->Value)
    scenariosOf(*E.LetTarget->Value, Out);
  for (const ir::ExprPtr &O : E.Operands)
    scenariosOf(*O, Out);
}

} // namespace

bool runLowerToGraph(Compilation &C) {
  if (C.Diags.hasErrors())
    return false; // lowering assumes a well-typed program
  std::vector<const ir::Entity *> Scenarios;
  for (const auto &E : C.Program.Entities)
    if (E->Kind == "scenario" &&
        C.SM.FindBufferContainingLoc(E->NameRange.Start) ==
            C.Program.MainBufferId)
      Scenarios.push_back(E.get());
  C.Graphs.resize(Scenarios.size());
  std::vector<std::unique_ptr<ScenarioLowering>> Lowerings;
  for (size_t I = 0; I < Scenarios.size(); ++I) {
    Lowerings.push_back(
        std::make_unique<ScenarioLowering>(C, *Scenarios[I], C.Graphs[I]));
    Lowerings.back()->run();
    if (const ir::Field *Sla = Scenarios[I]->field("sla"))
      for (const ir::ExprPtr &Cond : Sla->Conditions)
        Lowerings.back()->condition(*Cond, Cond->Range, false, "");
  }
  for (const ir::Assert &A : C.Program.Asserts) {
    if (A.Folded)
      continue; // constant: decided at compile time
    std::set<const ir::Entity *> Used;
    scenariosOf(*A.Condition, Used);
    if (Used.size() > 1) {
      std::vector<std::string> Names;
      for (const ir::Entity *E : Used)
        Names.push_back("`" + E->Name + "`");
      std::sort(Names.begin(), Names.end());
      C.Diags.report(DiagKind::AssertSpansScenarios, A.Range,
                     fmt::format("assert reads the metrics of {}; write one "
                                 "assert per scenario",
                                 llvm::join(Names, " and ")));
      continue;
    }
    auto It = Used.empty() ? Scenarios.end()
                           : std::find(Scenarios.begin(), Scenarios.end(),
                                       *Used.begin());
    if (It == Scenarios.end())
      continue; // a scenario of an imported module is not evaluated
    Lowerings[It - Scenarios.begin()]->condition(*A.Condition, A.Range, true,
                                                 A.Message);
  }
  lowerQueries(C, Scenarios, Lowerings);
  return !C.Diags.hasErrors();
}

} // namespace mlsc
