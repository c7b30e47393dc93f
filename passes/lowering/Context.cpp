//===- Context.cpp - What lowering steps share ----------------------------===//

#include "passes/lowering/Context.h"
#include "ir/Schema.h"
#include "ir/Units.h"
#include "passes/lowering/Steps.h"
#include "runtime/Defaults.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mlsc {

using graph::LeafOrigin;
using graph::Op;

LoweringContext::LoweringContext(Compilation &C, const ir::Entity &Scenario,
                                 graph::Graph &G)
    : C(C), Scenario(Scenario), G(G), B(G) {
  G.Scenario = Scenario.Name;
  G.ScenarioRange = Scenario.NameRange;
}

const ir::Entity *LoweringContext::entity(const ir::Entity &E,
                                          llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Folded || F->Folded->Kind != ir::TypeKind::Entity)
    return nullptr;
  return F->Folded->Ref;
}

std::string LoweringContext::enumValue(const ir::Entity &E,
                                       llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  return F && F->Folded ? F->Folded->Text : "";
}

double LoweringContext::foldedNumber(const ir::Entity &E,
                                     llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  return F && F->Folded ? F->Folded->Number : 1;
}

Dimension LoweringContext::unit(const char *Text) {
  UnitParseError Err;
  std::optional<Unit> U = parseUnit(Text, Err);
  if (!U)
    llvm::report_fatal_error(llvm::Twine("lowering: bad unit `") + Text + "`");
  return U->Dim;
}

void LoweringContext::missing(const ir::Entity &Owner, llvm::StringRef Path,
                              llvm::StringRef Why) {
  MissingInputs.push_back(
      fmt::format("`{}.{}` ({})", Owner.Name, Path.str(), Why.str()));
  if (!llvm::is_contained(MissingOwners, &Owner))
    MissingOwners.push_back(&Owner);
  Failed = true;
}

void LoweringContext::reportMissing() {
  if (MissingInputs.empty())
    return;
  Diagnostic &D =
      C.Diags.report(DiagKind::MissingInput, Scenario.NameRange,
                     fmt::format("scenario `{}` needs {}", Scenario.Name,
                                 llvm::join(MissingInputs, ", ")));
  for (const ir::Entity *Owner : MissingOwners)
    D.note(DiagKind::DeclaredHere, Owner->NameRange,
           fmt::format("{} `{}` is declared here", Owner->Kind, Owner->Name));
}

std::optional<NodeId> LoweringContext::field(const ir::Entity &E,
                                             llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Value || F->Value->Ty.Kind != ir::TypeKind::Quantity)
    return std::nullopt;
  auto It = FieldNodes.find(F);
  if (It != FieldNodes.end())
    return It->second;
  std::optional<NodeId> Id;
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
    O.Calibrated = isCalibratedField(F->Path);
    Id = B.leaf(F->Value->Number, F->Value->Ty.Dim, std::move(O));
  } else {
    std::string Ignored;
    Id = expr(*F->Value, Ignored);
    // Folded and checked now, but a solve or sweep may vary what it is
    // computed from.
    const FieldSchema *S = E.Schema ? E.Schema->field(F->Path) : nullptr;
    if (Id && S && S->Domain != ValueDomain::Any)
      B.G.DomainChecks.push_back(
          {*Id, S->Domain, E.Name + "." + F->Path, F->Value->Range});
  }
  if (Id) {
    B.label(*Id, E.Name + "." + F->Path);
    FieldNodes[F] = *Id;
  }
  return Id;
}

NodeId LoweringContext::choice(const ir::Entity &E, llvm::StringRef Path,
                               double Default, const char *Why) {
  const ir::Field *F = E.field(Path);
  LeafOrigin O;
  O.Entity = E.Name;
  O.Field = Path.str();
  O.Choice = true;
  O.Notes.push_back(Why);
  double Value = Default;
  if (F && F->Folded && F->Folded->Kind == ir::TypeKind::Bool) {
    Value = F->Folded->Number != 0;
    O.Spelling = Value ? "true" : "false";
  } else if (F && F->Folded && F->Folded->Kind == ir::TypeKind::Enum) {
    const std::vector<std::string> &Symbols = F->Schema->Allowed;
    Value = static_cast<double>(llvm::find(Symbols, F->Folded->Text) -
                                Symbols.begin());
    O.Spelling = F->Folded->Text;
  } else {
    O.Assumed = true;
    const FieldSchema *S = E.Schema ? E.Schema->field(Path) : nullptr;
    size_t At = static_cast<size_t>(Default);
    O.Spelling = S && S->Type == FieldType::Enum && At < S->Allowed.size()
                     ? S->Allowed[At]
                 : Default != 0 ? "true"
                                : "false";
  }
  if (F) {
    O.Range = F->Range;
    O.Notes = F->Notes;
    O.Notes.push_back(Why);
  }
  NodeId Id = B.leaf(Value, Dimension(), std::move(O));
  B.label(Id, E.Name + "." + Path.str());
  return Id;
}

bool LoweringContext::checkPeakPrecision(const ir::Entity &W,
                                         const ir::Entity &Precision,
                                         const ir::Entity &Accel) {
  // The precision the math runs in picks the device's peak. A format the
  // accelerator schema lists no peak for (a block-scaled storage format
  // such as nvfp4, or a user's own) would ask for a field that cannot be
  // given: say which precisions have a peak, and how to store in it.
  const std::string PeakPath = "peak." + Precision.Name;
  if (Accel.Schema &&
      llvm::none_of(Accel.Schema->Fields,
                    [&](const FieldSchema &F) { return F.Path == PeakPath; })) {
    std::vector<std::string> Peaks;
    for (const FieldSchema &F : Accel.Schema->Fields)
      if (llvm::StringRef(F.Path).startswith("peak."))
        Peaks.push_back("`" + F.Path.substr(5) + "`");
    Diagnostic &Dg = C.Diags.report(
        DiagKind::MissingInput, fieldAt(W, "precision"),
        fmt::format("`{}.precision` is `{}`, which no accelerator has a peak "
                    "for: the devices' peaks are in {}",
                    W.Name, Precision.Name, fmt::join(Peaks, ", ")));
    if (enumField<WorkloadMode>(W, "mode") == WorkloadMode::Training)
      Dg.Message += "; train in one of those (a block-scaled format's "
                    "training recipe, its scales and master weights, is not "
                    "modelled)";
    else if (Precision.field("scale_group"))
      Dg.Message += fmt::format(
          "; `{}` is a block-scaled storage format: compute in the math "
          "precision of its width (`precision = fp4` for 4 bits) and store "
          "in it with `weight_precision = {}` (and `kv_precision`)",
          Precision.Name, Precision.Name);
    else
      Dg.Message += fmt::format("; compute in one of those and store in `{}` "
                                "with `weight_precision` (and `kv_precision`)",
                                Precision.Name);
    Failed = true;
    return false;
  }
  return true;
}

NodeId LoweringContext::required(const ir::Entity &E, llvm::StringRef Path,
                                 llvm::StringRef Why) {
  if (std::optional<NodeId> Id = field(E, Path))
    return *Id;
  missing(E, Path, Why);
  return B.constant(0, "placeholder for a missing input");
}

bool LoweringContext::checkExpertFields(const ir::Entity &Model) {
  bool Experts = Model.field("experts"), TopK = Model.field("top_k");
  bool Family = enumField<ModelFamily>(Model, "family") == ModelFamily::Moe;
  if (Experts == TopK && (Experts || !Family))
    return true;
  std::string Message =
      Experts ? fmt::format("`{}` has experts but no top_k", Model.Name)
      : TopK  ? fmt::format("`{}` has top_k but no experts", Model.Name)
              : fmt::format("`{}` is an MoE model (family = moe) without "
                             "experts or top_k",
                            Model.Name);
  Diagnostic &D = C.Diags.report(DiagKind::MissingInput,
                                 Experts ? fieldAt(Model, "experts")
                                 : TopK  ? fieldAt(Model, "top_k")
                                         : fieldAt(Model, "family"),
                                 Message);
  D.Message += "; give both `experts` and `top_k` (the experts a token is "
               "routed to); without them the model is evaluated as dense";
  Failed = true;
  return false;
}

bool LoweringContext::checkExpertParallel(const ir::Entity &W,
                                          const ir::Entity &Model, bool Moe) {
  if (Moe || !W.field("parallel.ep"))
    return true;
  C.Diags.report(DiagKind::InvalidLayout, fieldAt(W, "parallel.ep"),
                 fmt::format("`{}.parallel.ep` shards experts, but `{}` has "
                             "none; drop it",
                             W.Name, Model.Name));
  Failed = true;
  return false;
}

bool LoweringContext::checkExpertsSplit(const ir::Entity &W,
                                        const ir::Entity &Model, NodeId Experts,
                                        NodeId EP) {
  double Ep = foldedNumber(W, "parallel.ep");
  double E = foldedNumber(Model, "experts");
  if (!isWhole(E / Ep)) {
    C.Diags.report(
        DiagKind::InvalidLayout, fieldAt(W, "parallel.ep"),
        fmt::format("`{}.parallel.ep` = {} does not divide the {} experts of "
                    "`{}`; expert parallelism gives each rank the same "
                    "number of experts",
                    W.Name, Ep, E, Model.Name));
    Failed = true;
    return false;
  }
  NodeId PerRank = B.op(Op::Div, {Experts, EP});
  B.label(PerRank, "layout.experts_per_ep_rank");
  B.G.DomainChecks.push_back({PerRank, ValueDomain::Whole,
                              Model.Name + ".experts / parallel.ep",
                              fieldAt(W, "parallel.ep")});
  return true;
}

NodeId LoweringContext::storageBytes(const ir::Entity &Precision,
                                     llvm::StringRef Why) {
  NodeId Bytes = required(Precision, "bytes", Why);
  std::optional<NodeId> Group = field(Precision, "scale_group");
  std::optional<NodeId> Bits = field(Precision, "scale_bits");
  if (!Group && !Bits)
    return Bytes;
  if (!Group || !Bits) {
    const char *Given = Group ? "scale_group" : "scale_bits";
    const char *Other = Group ? "scale_bits" : "scale_group";
    Diagnostic &D = C.Diags.report(
        DiagKind::MissingInput, fieldAt(Precision, Given),
        fmt::format("`{}.{}` describes a block-scaled format, but `{}` has "
                    "no `{}`",
                    Precision.Name, Given, Precision.Name, Other));
    D.Message += "; give both: the elements that share a scale and the bits "
                 "the scale takes (MXFP4: 32 and 8; NVFP4: 16 and 8)";
    Failed = true;
    return Bytes;
  }
  return B.apply(FormulaId::ScaledElementBytes, {Bytes, *Bits, *Group},
                 Precision.Name + ".storage_bytes");
}

NodeId LoweringContext::orDefault(const ir::Entity &E, DefaultId Which) {
  const DefaultInfo &D = defaultInfo(Which);
  if (std::optional<NodeId> Id = field(E, D.Field))
    return *Id;
  auto [Known, Fresh] = DefaultNodes.try_emplace({&E, Which}, NodeId());
  if (!Fresh)
    return Known->second;
  const FieldSchema *FS = E.Schema ? E.Schema->field(D.Field) : nullptr;
  if (E.Kind != D.Kind || !FS || FS->Type != FieldType::Quantity ||
      !D.hasValue())
    llvm::report_fatal_error(llvm::Twine("lowering: no default for `") +
                             E.Kind + "." + D.Field + "`");
  LeafOrigin O;
  O.Entity = E.Name;
  O.Field = D.Field;
  // As a user would write it: `1 ms`, `0.8`.
  O.Spelling = llvm::StringRef(D.Unit) == "1"
                   ? fmt::format("{}", D.Written)
                   : fmt::format("{} {}", D.Written, D.Unit);
  O.Notes.push_back(D.note());
  O.Assumed = true;
  O.Calibrated = D.Calibrated;
  NodeId Id = B.leaf(D.Value, FS->Dim, std::move(O));
  B.label(Id, E.Name + "." + D.Field);
  Known->second = Id;
  return Id;
}

NodeId LoweringContext::quantity(double SI, const char *Unit,
                                 const char *Spelling, const char *Why) {
  LeafOrigin O;
  O.Spelling = Spelling;
  O.Notes.push_back(Why);
  return B.leaf(SI, unit(Unit), std::move(O));
}

NodeId LoweringContext::none(const char *Unit, const char *Spelling,
                             const char *Why) {
  return quantity(0, Unit, Spelling, Why);
}

std::optional<System> LoweringContext::system(const ir::Entity &SysE) {
  System R;
  if (SysE.Kind == "accelerator") {
    R.Accel = &SysE;
    R.Devices = B.constant(1, "a bare accelerator is one device");
    R.Nodes = B.constant(0, "a bare accelerator has no node around it");
    R.Overhead = none("W", "0 W", "no node around a bare accelerator");
  } else if (SysE.Kind == "node") {
    R.Node = &SysE;
    R.Accel = entity(SysE, "accelerator");
    R.Devices = required(SysE, "count", "accelerators per node");
    R.NodeDevices = R.Devices;
    R.Nodes = B.constant(1, "one node");
    R.Overhead = orDefault(SysE, DefaultId::NodeOverhead);
  } else if (SysE.Kind == "cluster") {
    R.Node = entity(SysE, "node");
    if (!R.Node)
      return std::nullopt;
    R.Accel = entity(*R.Node, "accelerator");
    R.Nodes = required(SysE, "nodes", "node count");
    R.NodeDevices = required(*R.Node, "count", "accelerators per node");
    R.Devices = B.op(Op::Mul, {*R.NodeDevices, R.Nodes});
    R.Overhead = orDefault(*R.Node, DefaultId::NodeOverhead);
  }
  if (!R.Accel)
    return std::nullopt;
  B.publish(MetricId::Devices, R.Devices);
  return R;
}

std::pair<NodeId, NodeId> LoweringContext::allToAllAcross(NodeId InterBW,
                                                          NodeId InterLatency) {
  return {BisectionPerDevice ? B.op(Op::Min, {InterBW, *BisectionPerDevice})
                             : InterBW,
          Network ? Network->FarLatency : InterLatency};
}

ExpertRouting LoweringContext::expertRouting(const ir::Entity &W,
                                             const ir::Entity &Model,
                                             NodeId ActBytes, bool Moe) {
  ExpertRouting R;
  if (!Moe && (W.field("dispatch_precision") || Model.field("expert_groups") ||
               Model.field("expert_groups_per_token"))) {
    C.Diags.report(
        DiagKind::InvalidLayout,
        W.field("dispatch_precision")
            ? fieldAt(W, "dispatch_precision")
            : fieldAt(Model, Model.field("expert_groups")
                                 ? "expert_groups"
                                 : "expert_groups_per_token"),
        fmt::format("expert groups and `dispatch_precision` shape the expert "
                    "all-to-all, but `{}` routes to no experts (it has no "
                    "`experts` and `top_k`); drop them",
                    Model.Name));
    Failed = true;
    return R;
  }
  std::optional<NodeId> Groups = field(Model, "expert_groups");
  std::optional<NodeId> PerToken = field(Model, "expert_groups_per_token");
  auto error = [&](const ir::Entity &E, llvm::StringRef Path,
                   std::string Message) {
    C.Diags.report(DiagKind::InvalidLayout, fieldAt(E, Path),
                   std::move(Message));
    Failed = true;
  };
  if (PerToken && !Groups)
    error(Model, "expert_groups_per_token",
          fmt::format("`{0}.expert_groups_per_token` limits a token to some "
                      "of the expert groups, but `{0}` declares none; give "
                      "`expert_groups` (DeepSeek-V3: 8 groups, 4 a token)",
                      Model.Name));
  if (Groups) {
    double G = foldedNumber(Model, "expert_groups");
    double E = foldedNumber(Model, "experts");
    if (Model.field("experts") && !isWhole(E / G))
      error(Model, "expert_groups",
            fmt::format("`{}.expert_groups` = {} does not divide the {} "
                        "experts; the groups are equal",
                        Model.Name, G, E));
    if (PerToken && foldedNumber(Model, "expert_groups_per_token") > G)
      error(Model, "expert_groups_per_token",
            fmt::format("`{0}.expert_groups_per_token` = {1} is more groups "
                        "than the {2} of `{0}`; a token may use at most all "
                        "of them",
                        Model.Name,
                        foldedNumber(Model, "expert_groups_per_token"), G));
    // The groups a token may use must hold its top_k experts.
    double Usable =
        (PerToken ? foldedNumber(Model, "expert_groups_per_token") : G) * E / G;
    if (Model.field("experts") && Model.field("top_k") &&
        Usable < foldedNumber(Model, "top_k"))
      error(Model, PerToken ? "expert_groups_per_token" : "expert_groups",
            fmt::format("`{0}` routes a token to {1} experts, but the groups "
                        "it may use hold {2} (groups of {3} experts); allow "
                        "more groups a token",
                        Model.Name, foldedNumber(Model, "top_k"), Usable,
                        E / G));
    // A sweep or solve over the groups meets the same conditions.
    if (std::optional<NodeId> Experts = field(Model, "experts")) {
      B.G.DomainChecks.push_back({B.op(Op::Div, {*Experts, *Groups}),
                                  ValueDomain::Whole,
                                  Model.Name + ".experts / expert_groups",
                                  fieldAt(Model, "expert_groups")});
      if (PerToken)
        B.G.DomainChecks.push_back(
            {B.op(Op::Sub, {*Groups, *PerToken}), ValueDomain::NonNegative,
             Model.Name + ".expert_groups - expert_groups_per_token",
             fieldAt(Model, "expert_groups_per_token")});
    }
  }
  R.Groups = Groups ? *Groups
                    : B.constant(0, "no expert groups: a plain "
                                    "all-to-all");
  R.GroupsPerToken = PerToken ? *PerToken : R.Groups;
  R.DispatchRatio = B.constant(1, "the dispatch sends the activations' bytes");
  if (const ir::Entity *DP = entity(W, "dispatch_precision"))
    R.DispatchRatio = B.op(
        Op::Div, {storageBytes(*DP, "bytes per dispatched element"), ActBytes});
  return R;
}

NodeId LoweringContext::kernelEfficiency(const ir::Entity &W, DefaultId Class) {
  if (std::optional<NodeId> All = field(W, "efficiency"))
    return *All; // one calibrated eta for every kernel class
  // An unfused workload's attention reads `kernels.attention_unfused`.
  return orDefault(W, Class);
}

NodeId LoweringContext::memoryEfficiency(const ir::Entity &W,
                                         const ir::Entity *Accel) {
  // The workload's own figure first; then what the device is measured to
  // sustain (`hbm.efficiency`); then the default.
  if (std::optional<NodeId> Own = field(W, "memory_efficiency"))
    return *Own;
  if (Accel)
    if (std::optional<NodeId> Device = field(*Accel, "hbm.efficiency"))
      return *Device;
  return orDefault(W, DefaultId::MemoryEfficiency);
}

bool LoweringContext::narrowMath(const ir::Entity &Precision) {
  return foldedNumber(Precision, "bytes") < 2;
}

NodeId LoweringContext::gemmEfficiency(const ir::Entity &W,
                                       const ir::Entity &Precision) {
  // GEMMs in 8 bits or fewer reach less of their (doubled) peak than in 16:
  // their own default, unless the workload gives `kernels.gemm`.
  if (!narrowMath(Precision) || W.field("kernels.gemm"))
    return kernelEfficiency(W, DefaultId::KernelGemm);
  if (foldedNumber(Precision, "bytes") > 0.5)
    return kernelEfficiency(W, DefaultId::KernelGemm8Bit);
  // 4-bit math (fp4, int4) reaches less of its doubled peak than 8-bit
  // does: its own default, or the defaults' share of a given 8-bit figure
  // (one source for D71's ratio: the two defaults themselves).
  if (!W.field("efficiency") && !W.field("kernels.gemm_4bit"))
    if (std::optional<NodeId> Eight = field(W, "kernels.gemm_8bit")) {
      double Share = defaultInfo(DefaultId::KernelGemm4Bit).Value /
                     defaultInfo(DefaultId::KernelGemm8Bit).Value;
      NodeId Eta = B.op(
          Op::Mul,
          {*Eight,
           B.constant(Share, "the defaults' kernels.gemm_4bit / "
                             "kernels.gemm_8bit: measured NVFP4 GEMMs reach "
                             "about 0.85 of FP8's share of peak on B200 "
                             "(validation/DEFAULTS-SOURCES.md D71)")});
      B.label(Eta, W.Name + ".kernels.gemm_4bit");
      return Eta;
    }
  return kernelEfficiency(W, DefaultId::KernelGemm4Bit);
}

NodeId LoweringContext::attentionAtPeak(const ir::Entity &W,
                                        const ir::Entity &Precision,
                                        const ir::Entity &Accel, NodeId Eta,
                                        NodeId Peak) {
  // Attention that computes in another format than the GEMMs runs at that
  // format's peak: its efficiency against the math precision's peak is
  // scaled by the ratio. By default an 8-bit workload's attention computes
  // in bf16 on a device that has a bf16 peak (vLLM's FlashAttention
  // backends take fp16 and bf16 only; FP8 attention needs FlashAttention 3
  // with an FP8 KV cache; Transformer Engine keeps attention in 16 bits in
  // FP8 training; docs/walls.md).
  const ir::Entity *AttnPrecision = entity(W, "kernels.attention_precision");
  if (!AttnPrecision && narrowMath(Precision) && Accel.field("peak.bf16"))
    AttnPrecision = C.Program.entity("bf16");
  if (!AttnPrecision || AttnPrecision == &Precision)
    return Eta;
  NodeId AttnPeak =
      required(Accel, "peak." + AttnPrecision->Name,
               fmt::format("its dense {} peak, which attention runs at",
                           AttnPrecision->Name));
  NodeId Scaled = B.op(Op::Mul, {Eta, B.op(Op::Div, {AttnPeak, Peak})});
  B.label(Scaled, "attention_efficiency_at_" + Precision.Name);
  return Scaled;
}

namespace {

Op graphOp(ir::BinaryOp O) {
  switch (O) {
  case ir::BinaryOp::Add:
    return Op::Add;
  case ir::BinaryOp::Sub:
    return Op::Sub;
  case ir::BinaryOp::Mul:
    return Op::Mul;
  case ir::BinaryOp::Div:
    return Op::Div;
  case ir::BinaryOp::Pow:
    return Op::Pow;
  case ir::BinaryOp::Lt:
    return Op::Lt;
  case ir::BinaryOp::Le:
    return Op::Le;
  case ir::BinaryOp::Gt:
    return Op::Gt;
  case ir::BinaryOp::Ge:
    return Op::Ge;
  case ir::BinaryOp::Eq:
    return Op::Eq;
  case ir::BinaryOp::Ne:
    return Op::Ne;
  case ir::BinaryOp::And:
    return Op::And;
  case ir::BinaryOp::Or:
    return Op::Or;
  case ir::BinaryOp::In:
    break;
  }
  llvm_unreachable("`in` is not lowered");
}

Op graphOp(ir::Builtin F) {
  static const Op Ops[] = {Op::Min,   Op::Max,   Op::Ceil, Op::Floor,
                           Op::Round, Op::Abs,   Op::Sqrt, Op::Log,
                           Op::Log2,  Op::Log10, Op::Exp};
  return Ops[static_cast<unsigned>(F)];
}

} // namespace

std::optional<NodeId> LoweringContext::expr(const ir::Expr &E,
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
    return B.leaf(E.BoolValue ? 1 : 0, Dimension(), std::move(O), true);
  }
  case K::FieldRef:
    return fieldRef(E);
  case K::MetricRef: {
    std::string Name = llvm::join(E.Path, ".");
    if (E.Target != &Scenario) {
      Missing = E.Target->Name + "." + Name;
      return std::nullopt;
    }
    if (std::optional<MetricId> M = findMetric(Name)) {
      if (!G.has(*M)) {
        Missing = Scenario.Name + "." + Name;
        return std::nullopt;
      }
      return G.get(*M);
    }
    // A phase's metric: `decode.comm_time`, `request.prefill.flops`.
    auto [Prefix, Suffix] = llvm::StringRef(Name).rsplit('.');
    std::optional<PhaseId> P = findPhase(Prefix);
    for (const PhaseMetricInfo &PM : allPhaseMetrics())
      if (P && Suffix == PM.Suffix && G.has(*P, PM.Id))
        return G.get(*P, PM.Id);
    Missing = Scenario.Name + "." + Name;
    return std::nullopt;
  }
  case K::LetRef: {
    auto It = LetNodes.find(E.LetTarget);
    if (It != LetNodes.end())
      return It->second;
    if (!E.LetTarget->Value)
      return std::nullopt;
    std::optional<NodeId> Id = expr(*E.LetTarget->Value, Missing);
    if (Id) {
      LetNodes[E.LetTarget] = *Id;
      B.label(*Id, E.LetTarget->Name);
    }
    return Id;
  }
  case K::Unary: {
    std::optional<NodeId> O = expr(*E.Operands[0], Missing);
    if (!O)
      return std::nullopt;
    if (E.UOp == ir::UnaryOp::Plus)
      return O;
    return B.op(E.UOp == ir::UnaryOp::Not ? Op::Not : Op::Neg, {*O});
  }
  case K::Binary: {
    std::optional<NodeId> L = expr(*E.Operands[0], Missing);
    std::optional<NodeId> R = expr(*E.Operands[1], Missing);
    if (!L || !R || E.BOp == ir::BinaryOp::In)
      return std::nullopt;
    return B.op(graphOp(E.BOp), {*L, *R});
  }
  case K::Call: {
    std::vector<NodeId> In;
    for (const ir::ExprPtr &A : E.Operands) {
      std::optional<NodeId> Id = expr(*A, Missing);
      if (!Id)
        return std::nullopt;
      In.push_back(*Id);
    }
    return B.op(graphOp(E.Fn), In);
  }
  default:
    return std::nullopt;
  }
}

/// Follows entity-typed fields to the final field's node.
std::optional<NodeId> LoweringContext::fieldRef(const ir::Expr &E) {
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

LeafStatus LoweringContext::leafFor(const ir::Entity &E, llvm::StringRef Path,
                                    NodeId &Leaf) {
  if (const ir::Field *F = E.field(Path)) {
    auto It = FieldNodes.find(F);
    if (It != FieldNodes.end()) {
      if (G.node(It->second).Kind != Op::Leaf)
        return LeafStatus::Derived;
      Leaf = It->second;
      return LeafStatus::Leaf;
    }
  }
  // A documented default stands in for a field the entity does not write.
  for (uint32_t I = 0; I < G.Nodes.size(); ++I) {
    const graph::Node &N = G.Nodes[I];
    if (N.Kind == Op::Leaf && N.Origin < G.Origins.size() &&
        G.Origins[N.Origin].Entity == E.Name &&
        G.Origins[N.Origin].Field == Path) {
      Leaf = NodeId(I);
      return LeafStatus::Leaf;
    }
  }
  return LeafStatus::Unread;
}

void LoweringContext::finishMetrics() {
  bool PerSample = G.has(MetricId::SampleThroughput);
  bool Training = G.DecoderTraining || G.has(MetricId::StepTime);
  for (const MetricInfo &M : allMetrics()) {
    if (M.Vis != Visibility::Public)
      continue;
    if (G.has(M.Id)) {
      G.Metrics.push_back(M.Id);
      continue;
    }
    // Metrics that do not apply to the workload are left out (per-sample
    // throughput for an LLM, token latencies for a CNN, training figures
    // for inference), and so are those that answer an optional input the
    // workload does not give.
    bool Applies = false;
    switch (M.Where) {
    case mlsc::Applies::Tokens:
      Applies = !PerSample && !Training;
      break;
    case mlsc::Applies::DecoderTraining:
      Applies = !PerSample && Training;
      break;
    case mlsc::Applies::Samples:
      Applies = PerSample;
      break;
    case mlsc::Applies::Training:
      Applies = Training;
      break;
    case mlsc::Applies::All:
      Applies = true;
      break;
    case mlsc::Applies::TokensOnInput:
    case mlsc::Applies::OnNode:
    case mlsc::Applies::Priced:
    case mlsc::Applies::OnSite:
    case mlsc::Applies::TrainingOnInput:
    case mlsc::Applies::Simulated:
      break;
    }
    if (Applies)
      G.Unavailable.push_back(M.Id);
  }
}

} // namespace mlsc
