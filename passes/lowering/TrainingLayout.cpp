//===- TrainingLayout.cpp - A decoder's training layout ------------------===//
//
// The layout of a decoder's training (Megatron-LM's: tensor, context and
// data parallelism within pipeline stages): dp given or derived from the
// devices, its checks against the model and the system, the layers of the
// pipeline's stages (even, or first and last given), the global batch and
// its micro-batches. Every check is also a domain check, so that a sweep
// over the degrees rules out what cannot run.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Training.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

using graph::Op;

StagePick largestStage(GraphBuilder &B, NodeId Last, NodeId First,
                       NodeId Middle) {
  StagePick P;
  P.Last = B.op(Op::And,
                {B.op(Op::Ge, {Last, First}), B.op(Op::Ge, {Last, Middle})});
  P.First =
      B.op(Op::And, {B.op(Op::Not, {P.Last}), B.op(Op::Ge, {First, Middle})});
  P.Middle = B.op(Op::Not, {B.op(Op::Or, {P.Last, P.First})});
  return P;
}

NodeId pickStage(GraphBuilder &B, const StagePick &P, NodeId Last, NodeId First,
                 NodeId Middle) {
  return B.op(Op::Add, {B.op(Op::Add, {B.op(Op::Mul, {P.Last, Last}),
                                       B.op(Op::Mul, {P.First, First})}),
                        B.op(Op::Mul, {P.Middle, Middle})});
}

bool flag(const ir::Entity &E, llvm::StringRef Path, bool Default) {
  const ir::Field *F = E.field(Path);
  if (!F || !F->Folded)
    return Default;
  return F->Folded->Number != 0;
}

/// The layout: dp (given, or the devices over tp x pp x cp), its checks
/// against the model and the system, the global batch and the
/// micro-batches it takes.
bool trainingLayout(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity &Model = *Ctx.Model;
  DiagnosticEngine &Diags = Ctx.C.Diags;
  T.TP = Ctx.orDefault(W, DefaultId::TP);
  T.PP = Ctx.orDefault(W, DefaultId::PP);
  T.CP = Ctx.orDefault(W, DefaultId::CP);
  T.VP = Ctx.orDefault(W, DefaultId::VP);
  double Tp = Ctx.foldedNumber(W, "parallel.tp");
  double Pp = Ctx.foldedNumber(W, "parallel.pp");
  double Cp = Ctx.foldedNumber(W, "parallel.cp");
  double Vp = Ctx.foldedNumber(W, "parallel.vp");
  NodeId ModelGroup = B.op(Op::Mul, {B.op(Op::Mul, {T.TP, T.PP}), T.CP});
  double Dp;
  if (std::optional<NodeId> Given = Ctx.field(W, "parallel.dp")) {
    T.DP = *Given;
    Dp = Ctx.foldedNumber(W, "parallel.dp");
  } else {
    T.DP = B.op(Op::Div, {Ctx.Sys->Devices, ModelGroup});
    B.label(T.DP, W.Name + ".parallel.dp");
    double Devices = 1;
    if (const ir::Entity *Node = Ctx.Sys->Node) {
      const ir::Field *Count = Node->field("count");
      Devices = Count && Count->Folded ? Count->Folded->Number : 1;
      if (Ctx.SystemEntity->Kind == "cluster")
        Devices *= Ctx.foldedNumber(*Ctx.SystemEntity, "nodes");
    }
    Dp = Devices / (Tp * Pp * Cp);
    if (!isWhole(Dp) && Dp >= 1) {
      Diagnostic &D = Diags.report(
          DiagKind::InvalidLayout, fieldAt(W, "parallel.tp"),
          fmt::format("the {} devices of `{}` do not divide into "
                      "data-parallel replicas of tp {} x pp {} x cp {} = {}",
                      Devices, Ctx.SystemEntity->Name, Tp, Pp, Cp,
                      Tp * Pp * Cp));
      D.Message += "; give `parallel.dp`, or degrees whose product divides "
                   "the devices";
      Ctx.Failed = true;
      return false;
    }
    Dp = std::max(Dp, 1.0);
  }
  T.FoldedDevices = Tp * Pp * Cp * Dp;
  // A sweep or search that varies the degrees rules out the points where
  // they do not fit: dp a whole number of replicas, chunks of whole layers.
  B.G.DomainChecks.push_back({T.DP, ValueDomain::Whole,
                              "parallel.dp (devices / (tp x pp x cp))",
                              fieldAt(W, "parallel.tp")});
  NodeId Replica = B.op(Op::Mul, {ModelGroup, T.DP});
  if (!checkLayout(Ctx, T.TP, T.PP, Replica, "cp x dp", Cp * Dp,
                   fmt::format("cp {} x dp {}", Cp, Dp)))
    return false;
  T.Devices = Replica;
  B.label(T.Devices, "training_devices");
  // Expert parallelism splits the data-parallel ranks (dp x cp) into
  // groups of ep: it must divide them.
  if (T.Moe) {
    double Ep = Ctx.foldedNumber(W, "parallel.ep");
    if (!isWhole(Dp * Cp / Ep)) {
      Diagnostic &D = Diags.report(
          DiagKind::InvalidLayout, fieldAt(W, "parallel.ep"),
          fmt::format("`{}.parallel.ep` = {} does not divide the dp {} x cp {} "
                      "= {} data-parallel ranks it is carved from",
                      W.Name, Ep, Dp, Cp, Dp * Cp));
      D.Message += "; expert parallelism shares the data-parallel ranks (as "
                   "Megatron-LM's expert-data-parallel groups do)";
      Ctx.Failed = true;
      return false;
    }
    NodeId Groups = B.op(Op::Div, {B.op(Op::Mul, {T.DP, T.CP}), T.EP});
    B.label(Groups, "layout.expert_groups");
    B.G.DomainChecks.push_back({Groups, ValueDomain::Whole, "dp x cp / ep",
                                fieldAt(W, "parallel.ep")});
  }

  // Tensor parallelism stays in the scale-up domain unless the workload
  // allows otherwise: its all-reduces run every layer.
  if (const ir::Entity *Node = Ctx.Sys->Node;
      Node && !flag(W, "parallel.tp_across_nodes", false)) {
    double PerNode = Ctx.foldedNumber(*Node, "count");
    if (!isWhole(PerNode / Tp)) {
      Diagnostic &D = Diags.report(
          DiagKind::InvalidLayout, fieldAt(W, "parallel.tp"),
          fmt::format("`{}.parallel.tp` = {} does not fit the {} devices of "
                      "a `{}` node: tensor parallelism's all-reduces, every "
                      "layer, would cross the scale-out network",
                      W.Name, Tp, PerNode, Node->Name));
      D.Message += "; use a tp that divides the node's devices, or set "
                   "`parallel.tp_across_nodes = true`";
      Ctx.Failed = true;
      return false;
    }
    NodeId Fit = B.op(Op::Div, {*Ctx.Sys->NodeDevices, T.TP});
    B.label(Fit, "layout.tp_groups_per_node");
    B.G.DomainChecks.push_back({Fit, ValueDomain::Whole,
                                Node->Name + ".count / parallel.tp",
                                fieldAt(W, "parallel.tp")});
  }

  if (Vp > 1 && Pp < 2) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout, fieldAt(W, "parallel.vp"),
        fmt::format("`{}.parallel.vp` = {} interleaves a pipeline, but `{}` "
                    "has one stage",
                    W.Name, Vp, W.Name));
    D.Message += "; drop vp, or give `parallel.pp`";
    Ctx.Failed = true;
    return false;
  }
  // The layers of the pipeline's stages: l / pp each, in chunks of whole
  // layers; or, as Megatron-LM's --decoder-first/last-pipeline-num-layers
  // allow (Llama 3 405B: 126 layers on 16 stages, one fewer on the first
  // and the last), given first and last stages and the rest shared evenly.
  double Layers = Ctx.foldedNumber(Model, "layers");
  std::optional<NodeId> First = Ctx.field(W, "parallel.first_stage_layers");
  std::optional<NodeId> Last = Ctx.field(W, "parallel.last_stage_layers");
  auto layoutError = [&](const char *Path, std::string Message,
                         const char *Hint) {
    Diagnostic &D =
        Diags.report(DiagKind::InvalidLayout, fieldAt(W, Path), Message);
    D.Message += Hint;
    Ctx.Failed = true;
    return false;
  };
  NodeId Even = B.op(Op::Div, {T.Layers, T.PP});
  B.label(Even, "layers_per_stage");
  if (!First && !Last) {
    if (!isWhole(Layers / (Pp * Vp)))
      return layoutError(
          W.field("parallel.vp") ? "parallel.vp" : "parallel.pp",
          fmt::format("`{}` has {} layers, which pp {} x vp {} = {} model "
                      "chunks do not divide",
                      Model.Name, Layers, Pp, Vp, Pp * Vp),
          "; each pipeline chunk holds the same whole number of layers, or "
          "give `parallel.first_stage_layers` and "
          "`parallel.last_stage_layers` for an uneven split");
    T.FirstLayers = T.MiddleLayers = T.LastLayers = Even;
    if (std::optional<NodeId> L = Ctx.field(Model, "layers")) {
      NodeId Chunk = B.op(Op::Div, {*L, B.op(Op::Mul, {T.PP, T.VP})});
      B.label(Chunk, "layout.layers_per_chunk");
      B.G.DomainChecks.push_back({Chunk, ValueDomain::Whole,
                                  Model.Name + ".layers / (pp x vp)",
                                  fieldAt(W, "parallel.pp")});
    }
  } else {
    double F = First ? Ctx.foldedNumber(W, "parallel.first_stage_layers")
                     : Layers / Pp;
    double L =
        Last ? Ctx.foldedNumber(W, "parallel.last_stage_layers") : Layers / Pp;
    double Rest = Layers - F - L;
    if (Pp < 2)
      return layoutError(First ? "parallel.first_stage_layers"
                               : "parallel.last_stage_layers",
                         fmt::format("`{}` has one pipeline stage: it has no "
                                     "first and last stage to size",
                                     W.Name),
                         "; drop the stage sizes, or give `parallel.pp`");
    double Middle = Pp > 2 ? Rest / (Pp - 2) : 0;
    if (Rest < 0 || (Pp == 2 && Rest != 0) ||
        (Pp > 2 && (!isWhole(Middle) || !isWhole(Middle / Vp))))
      return layoutError(
          First ? "parallel.first_stage_layers" : "parallel.last_stage_layers",
          fmt::format("`{}` has {} layers: a first stage of {} and a last of "
                      "{} leave {} for the {} other stages of {} chunk{}, "
                      "not a whole number each",
                      Model.Name, Layers, F, L, Rest, Pp - 2, Vp,
                      Vp == 1 ? "" : "s"),
          "; the stages between the first and the last share the rest "
          "evenly, in chunks of whole layers");
    T.FirstLayers = First ? *First : Even;
    T.LastLayers = Last ? *Last : Even;
    if (Pp > 2) {
      T.MiddleLayers = B.op(
          Op::Div,
          {B.op(Op::Sub,
                {B.op(Op::Sub, {T.Layers, T.FirstLayers}), T.LastLayers}),
           B.op(Op::Sub, {T.PP, B.constant(2, "the first and last stages")})});
      B.label(T.MiddleLayers, "layers_per_middle_stage");
      // A sweep that varies pp or vp keeps the middle stages' chunks whole.
      NodeId Chunk = B.op(Op::Div, {T.MiddleLayers, T.VP});
      B.label(Chunk, "layout.layers_per_middle_chunk");
      B.G.DomainChecks.push_back(
          {Chunk, ValueDomain::Whole,
           "(layers - first - last) / ((pp - 2) x vp)",
           fieldAt(W, First ? "parallel.first_stage_layers"
                            : "parallel.last_stage_layers")});
    } else {
      // Two stages hold all the layers: a sweep keeps pp at 2.
      T.MiddleLayers = T.FirstLayers;
      NodeId Two = B.constant(2, "two stages");
      B.G.DomainChecks.push_back(
          {B.op(Op::Sub, {Two, T.PP}), ValueDomain::NonNegative,
           "2 - pp (first and last stages only)", fieldAt(W, "parallel.pp")});
      B.G.DomainChecks.push_back(
          {B.op(Op::Sub, {T.PP, B.constant(1, "one stage")}),
           ValueDomain::Whole, "pp - 1 (first and last stages only)",
           fieldAt(W, "parallel.pp")});
    }
  }
  // The global batch, in sequences or tokens, and its micro-batches.
  T.Seq = Ctx.required(W, "seq", "the training sequence length");
  T.MicroBatch = Ctx.orDefault(W, DefaultId::MicroBatch);
  std::optional<NodeId> Sequences = Ctx.field(W, "global_batch");
  std::optional<NodeId> Tokens = Ctx.field(W, "global_batch_tokens");
  double Seq = Ctx.foldedNumber(W, "seq");
  double Global = Sequences ? Ctx.foldedNumber(W, "global_batch")
                            : Ctx.foldedNumber(W, "global_batch_tokens") / Seq;
  if (Sequences && Tokens &&
      std::abs(Global * Seq - Ctx.foldedNumber(W, "global_batch_tokens")) >
          1e-9 * Global * Seq) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout, fieldAt(W, "global_batch_tokens"),
        fmt::format("`{}.global_batch_tokens` = {} is not global_batch {} x "
                    "seq {} = {} tokens",
                    W.Name, Ctx.foldedNumber(W, "global_batch_tokens"), Global,
                    Seq, Global * Seq));
    D.Message += "; give one of the two";
    Ctx.Failed = true;
    return false;
  }
  if (!Sequences && !isWhole(Global)) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout, fieldAt(W, "global_batch_tokens"),
        fmt::format("`{}.global_batch_tokens` = {} is not a whole number of "
                    "sequences of seq {} tokens ({} of them)",
                    W.Name, Ctx.foldedNumber(W, "global_batch_tokens"), Seq,
                    Global));
    D.Message += "; give a multiple of seq, or `global_batch` in sequences";
    Ctx.Failed = true;
    return false;
  }
  if (Cp > 1 && !isWhole(Seq / (2 * Cp))) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout, fieldAt(W, "parallel.cp"),
        fmt::format("`{}.seq` = {} tokens does not split into 2 x cp = {} "
                    "chunks",
                    W.Name, Seq, 2 * Cp));
    D.Message += "; context parallelism gives each rank two chunks of the "
                 "sequence to balance causal attention (Megatron-LM requires "
                 "seq divisible by 2 x cp)";
    Ctx.Failed = true;
    return false;
  }
  T.GlobalBatch = Sequences ? *Sequences : B.op(Op::Div, {*Tokens, T.Seq});
  B.label(T.GlobalBatch, "global_batch");
  double Micro = Ctx.foldedNumber(W, "micro_batch");
  double PerReplica = Global / (Dp * Micro);
  if (!isWhole(PerReplica) || PerReplica < 1) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout,
        fieldAt(W, Sequences ? "global_batch" : "global_batch_tokens"),
        fmt::format("a global batch of {} sequences does not split into "
                    "micro-batches of {} over dp {} ({} per replica)",
                    Global, Micro, Dp, Global / Dp));
    D.Message += "; the global batch must be a multiple of dp x micro_batch";
    Ctx.Failed = true;
    return false;
  }
  T.Microbatches =
      B.op(Op::Div, {T.GlobalBatch, B.op(Op::Mul, {T.DP, T.MicroBatch})});
  B.label(T.Microbatches, "microbatches");
  B.G.DomainChecks.push_back({T.Microbatches, ValueDomain::Whole,
                              "global_batch / (dp x micro_batch)",
                              fieldAt(W, "micro_batch")});
  // The interleaved schedule's group: pp to the micro-batches a pipeline
  // runs, and no tail group shorter than pp (Megatron-LM's run-time
  // checks in forward_backward_pipelining_with_interleaving).
  T.VPGroup = T.PP;
  if (std::optional<NodeId> Group = Ctx.field(W, "parallel.vp_group")) {
    double N = Ctx.foldedNumber(W, "parallel.vp_group");
    double M = PerReplica;
    double Tail = std::fmod(M, N);
    std::string Why;
    if (Vp <= 1)
      Why = fmt::format("groups the micro-batches of an interleaved "
                        "schedule, but `{}` has vp 1",
                        W.Name);
    else if (N < Pp || N > M)
      Why = fmt::format("must lie between pp = {} and the {} micro-batches "
                        "a pipeline runs",
                        Pp, M);
    else if (Tail > 0 && Tail < Pp)
      Why = fmt::format("leaves a last group of {} of the {} micro-batches, "
                        "fewer than pp = {}",
                        Tail, M, Pp);
    if (!Why.empty())
      return layoutError(
          "parallel.vp_group",
          fmt::format("`{}.parallel.vp_group` = {} {}", W.Name, N, Why),
          "; Megatron-LM runs N micro-batches a model chunk with pp <= N <= "
          "the micro-batches, and no shorter group at the end");
    T.VPGroup = *Group;
    // A sweep or solve over the group, pp or the batch keeps it between
    // pp and the micro-batches.
    B.G.DomainChecks.push_back(
        {B.op(Op::Sub, {*Group, T.PP}), ValueDomain::NonNegative,
         "parallel.vp_group - pp", fieldAt(W, "parallel.vp_group")});
    B.G.DomainChecks.push_back(
        {B.op(Op::Sub, {T.Microbatches, *Group}), ValueDomain::NonNegative,
         "micro-batches - parallel.vp_group", fieldAt(W, "parallel.vp_group")});
  } else {
    // The default group is pp, under the same checks: at least pp
    // micro-batches, and (a tail being shorter than pp) a multiple of pp.
    double M = PerReplica;
    if (Vp > 1 && (M < Pp || !isWhole(M / Pp)))
      return layoutError(
          "parallel.vp",
          fmt::format("`{}.parallel.vp` = {} interleaves {} micro-batches a "
                      "pipeline in groups of pp = {}, {}",
                      W.Name, Vp, M, Pp,
                      M < Pp ? "but there are fewer than pp"
                             : fmt::format("leaving a last group of {}",
                                           std::fmod(M, Pp))),
          "; Megatron-LM's interleaved schedule needs the micro-batches to be "
          "a multiple of pp (or a `parallel.vp_group` N, pp <= N <= the "
          "micro-batches, whose last group is not shorter than pp)");
    // A sweep or solve that varies vp, pp or the batch keeps them so.
    NodeId Interleaved = B.op(
        Op::Min, {B.op(Op::Sub, {T.VP, B.constant(1, "one chunk a stage")}),
                  B.constant(1, "interleaved")});
    B.G.DomainChecks.push_back(
        {B.op(Op::Mul, {Interleaved, B.op(Op::Div, {T.Microbatches, T.PP})}),
         ValueDomain::WholeOrZero, "micro-batches / pp when vp > 1",
         fieldAt(W, "parallel.vp")});
    B.G.DomainChecks.push_back(
        {B.op(Op::Mul, {Interleaved, B.op(Op::Sub, {T.Microbatches, T.PP})}),
         ValueDomain::NonNegative, "micro-batches - pp when vp > 1",
         fieldAt(W, "parallel.vp")});
  }
  T.LocalSeq = B.op(Op::Div, {T.Seq, T.CP});
  B.publish(MetricId::TP, T.TP);
  B.publish(MetricId::PP, T.PP);
  B.publish(MetricId::DP, T.DP);
  B.publish(MetricId::CP, T.CP);
  B.publish(MetricId::VP, T.VP);
  B.publish(MetricId::TrainingDevices, T.Devices);
  B.publish(MetricId::Devices, Ctx.Sys->Devices);
  B.publish(MetricId::GlobalBatch, T.GlobalBatch);
  B.publish(MetricId::Microbatches, T.Microbatches);
  B.publish(MetricId::Batch, T.MicroBatch);
  return !Ctx.Failed;
}

} // namespace mlsc
