//===- Layout.cpp - Whether a parallel layout fits the model and system ---===//
//
// A layout the model or the system cannot take is an error, not a number:
// tensor parallelism splits the attention heads (tp must divide them) and
// the KV heads (tp must divide them, or be a multiple of them: each KV head
// is then replicated on tp / kv_heads ranks, as vLLM and TensorRT-LLM do);
// a replica takes tp x pp x ep devices (training: tp x pp x dp), which the
// system must have; a pipeline cannot have more stages than layers. The
// folded values are checked here, with a located InvalidLayout error; the
// same conditions are domain checks on the graph, so a sweep or solve that
// varies tp, pp, ep or the devices counts the points they rule out.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

using graph::Op;

namespace {

std::optional<double> folded(const ir::Entity &E, llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Folded || F->Folded->Kind != ir::TypeKind::Quantity)
    return std::nullopt;
  return F->Folded->Number;
}

/// Devices of the system at its folded values; nullopt when not constant.
std::optional<double> systemDevices(const ir::Entity &Sys,
                                    const ir::Entity *Node) {
  if (Sys.Kind == "accelerator")
    return 1;
  if (!Node)
    return std::nullopt;
  std::optional<double> Count = folded(*Node, "count");
  if (Sys.Kind == "node")
    return Count;
  std::optional<double> Nodes = folded(Sys, "nodes");
  if (!Count || !Nodes)
    return std::nullopt;
  return *Count * *Nodes;
}

/// Divisors of \p N up to 64, for the hint.
std::string divisors(double N) {
  std::vector<std::string> D;
  for (int I = 1; I <= 64 && I <= N; ++I)
    if (isWhole(N / I))
      D.push_back(std::to_string(I));
  return llvm::join(D, ", ");
}

} // namespace

bool isWhole(double X) { return std::isfinite(X) && X == std::floor(X); }

llvm::SMRange fieldAt(const ir::Entity &W, llvm::StringRef Path) {
  if (const ir::Field *F = W.field(Path))
    return F->Value ? F->Value->Range : F->Range;
  return W.NameRange;
}

bool checkLayout(LoweringContext &Ctx, NodeId TP, NodeId PP, NodeId Replica,
                 const char *OtherName, double OtherValue,
                 const std::string &OtherText) {
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity &Model = *Ctx.Model;
  GraphBuilder &B = Ctx.B;
  DiagnosticEngine &Diags = Ctx.C.Diags;
  double Tp = Ctx.foldedNumber(W, "parallel.tp");
  double Pp = Ctx.foldedNumber(W, "parallel.pp");
  double Oth = OtherValue;
  bool OK = true;
  auto error = [&](llvm::SMRange R, std::string Message, std::string Hint) {
    Diagnostic &D = Diags.report(DiagKind::InvalidLayout, R, Message);
    if (!Hint.empty())
      D.Message += "; " + Hint;
    OK = false;
  };

  // The attention heads and KV heads a tensor-parallel rank holds.
  std::optional<double> Heads = folded(Model, "heads");
  std::optional<NodeId> HeadsNode = Ctx.field(Model, "heads");
  bool HeadsSplit = !Heads || isWhole(*Heads / Tp);
  if (!HeadsSplit)
    error(fieldAt(W, "parallel.tp"),
          fmt::format("`{}.parallel.tp` = {} does not divide the {} attention "
                      "heads of `{}`",
                      W.Name, Tp, *Heads, Model.Name),
          fmt::format("tensor parallelism splits the heads; tp can be {}",
                      divisors(*Heads)));
  if (HeadsNode) {
    NodeId PerRank = B.op(Op::Div, {*HeadsNode, TP});
    B.label(PerRank, "layout.heads_per_tp_rank");
    B.G.DomainChecks.push_back({PerRank, ValueDomain::Whole,
                                Model.Name + ".heads / parallel.tp",
                                fieldAt(W, "parallel.tp")});
  }
  std::optional<double> KVHeads = folded(Model, "kv_heads");
  std::optional<NodeId> KVNode = Ctx.field(Model, "kv_heads");
  bool Mla = Model.field("mla.kv_rank") != nullptr;
  // (Reported only when the heads split: one error for one degree.)
  if (KVHeads && !Mla && HeadsSplit && !isWhole(*KVHeads / Tp) &&
      !isWhole(Tp / *KVHeads))
    error(fieldAt(W, "parallel.tp"),
          fmt::format("`{}.parallel.tp` = {} neither divides nor is a "
                      "multiple of the {} KV heads of `{}`",
                      W.Name, Tp, *KVHeads, Model.Name),
          fmt::format("each rank holds kv_heads / tp KV heads, or one KV head "
                      "replicated on tp / kv_heads ranks; tp can be {} or a "
                      "multiple of {}",
                      divisors(*KVHeads), *KVHeads));
  if (KVNode && !Mla) {
    NodeId Ratio = B.op(
        Op::Max, {B.op(Op::Div, {*KVNode, TP}), B.op(Op::Div, {TP, *KVNode})});
    B.label(Ratio, "layout.kv_heads_split");
    B.G.DomainChecks.push_back(
        {Ratio, ValueDomain::Whole,
         "max(" + Model.Name + ".kv_heads / tp, tp / kv_heads)",
         fieldAt(W, "parallel.tp")});
  }

  // A pipeline stage holds at least one layer.
  std::optional<double> Layers = folded(Model, "layers");
  if (Layers && Pp > *Layers)
    error(fieldAt(W, "parallel.pp"),
          fmt::format("`{}.parallel.pp` = {} is more pipeline stages than the "
                      "{} layers of `{}`",
                      W.Name, Pp, *Layers, Model.Name),
          "each stage holds at least one layer");
  if (std::optional<NodeId> LayersNode = Ctx.field(Model, "layers")) {
    NodeId Spare = B.op(Op::Sub, {*LayersNode, PP});
    B.label(Spare, "layout.layers_beyond_stages");
    B.G.DomainChecks.push_back({Spare, ValueDomain::NonNegative,
                                Model.Name + ".layers - parallel.pp",
                                fieldAt(W, "parallel.pp")});
  }

  // The devices one replica takes.
  std::optional<double> Devices =
      systemDevices(*Ctx.SystemEntity, Ctx.Sys->Node);
  double Needed = Tp * Pp * Oth;
  if (Devices && Needed > *Devices)
    error(fieldAt(W, "parallel.tp"),
          fmt::format("the layout of `{}` needs tp {} x pp {} x {} = {} "
                      "devices, but `{}` has {}",
                      W.Name, Tp, Pp,
                      OtherText.empty() ? fmt::format("{} {}", OtherName, Oth)
                                        : OtherText,
                      Needed, Ctx.SystemEntity->Name, *Devices),
          "lower a degree, or give the scenario a system with more devices");
  NodeId Left = B.op(Op::Sub, {Ctx.Sys->Devices, Replica});
  B.label(Left, "layout.devices_beyond_replica");
  B.G.DomainChecks.push_back({Left, ValueDomain::NonNegative,
                              fmt::format("devices - tp x pp x {}", OtherName),
                              fieldAt(W, "parallel.tp")});
  if (!OK)
    Ctx.Failed = true;
  return OK;
}

bool checkPools(LoweringContext &Ctx, NodeId ReplicaDevices,
                NodeId DecodeReplicas) {
  const ir::Entity &W = *Ctx.Workload;
  GraphBuilder &B = Ctx.B;
  double Tp = Ctx.foldedNumber(W, "parallel.tp");
  double Pp = Ctx.foldedNumber(W, "parallel.pp");
  double Ep = Ctx.Decoder.Moe ? Ctx.foldedNumber(W, "parallel.ep") : 1;
  double Prefill = Ctx.foldedNumber(W, "disaggregation.prefill_replicas");
  std::optional<double> Devices =
      systemDevices(*Ctx.SystemEntity, Ctx.Sys->Node);
  (void)ReplicaDevices;
  if (Devices) {
    double Total = std::floor(*Devices / (Tp * Pp * Ep));
    if (Prefill >= Total) {
      Diagnostic &D = Ctx.C.Diags.report(
          DiagKind::InvalidLayout,
          fieldAt(W, "disaggregation.prefill_replicas"),
          fmt::format("`{}` has {} replicas of tp {} x pp {} x ep {} "
                      "devices; {} prefill replicas leave none to decode",
                      Ctx.SystemEntity->Name, Total, Tp, Pp, Ep, Prefill));
      D.Message += "; give the prefill pool fewer replicas, or the "
                   "scenario more devices";
      Ctx.Failed = true;
      return false;
    }
  }
  NodeId Spare =
      B.op(Op::Sub, {DecodeReplicas, B.constant(1, "one decode replica")});
  B.label(Spare, "layout.decode_replicas_beyond_one");
  B.G.DomainChecks.push_back({Spare, ValueDomain::NonNegative,
                              "decode replicas - 1",
                              fieldAt(W, "disaggregation.prefill_replicas")});
  return true;
}

} // namespace mlsc
