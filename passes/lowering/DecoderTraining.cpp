//===- DecoderTraining.cpp - A decoder LLM's training step ----------------===//
//
// Three steps lower a decoder trained with tensor, pipeline, context and
// data parallelism (Megatron-LM's layout):
//
// - the inputs: the model's shape, the layout (dp defaults to the devices
//   over tp x pp x cp) and its checks, the global batch and its
//   micro-batches, the precisions, the roofline and the fabrics;
// - the memory a device needs (wall 2): its pipeline stage's weights,
//   gradients and optimizer state, sharded over the data-parallel group by
//   the ZeRO stage, and the activations of the micro-batches in flight
//   (Korthikanti et al.);
// - the step (walls 1-3, 14): one micro-batch's forward and backward on
//   the slowest stage (GEMMs, causal attention, the non-GEMM operations'
//   memory traffic, the tensor-parallel collectives, ring attention, the
//   sends between stages), m of them through the pipeline with its bubble
//   (Narayanan et al.), then the gradient sync and the optimizer. MFU, HFU,
//   tokens per second and the time to train follow.
//
// A mixture of experts routes each token to its top_k experts, split over
// ep ranks carved from the data-parallel ones; multi-head latent attention
// counts its projections.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Steps.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

using graph::LeafOrigin;
using graph::Op;
using PM = PhaseMetricId;

namespace {

/// A leaf of a structural value (a byte width the layout implies), with
/// why it has it.
NodeId implied(LoweringContext &Ctx, double V, const char *Unit,
               const char *Spelling, const char *Why) {
  LeafOrigin O;
  O.Spelling = Spelling;
  O.Notes.push_back(Why);
  return Ctx.B.leaf(V, LoweringContext::unit(Unit), std::move(O));
}

bool whole(double X) { return std::isfinite(X) && X == std::floor(X); }

llvm::SMRange at(const ir::Entity &W, llvm::StringRef Path) {
  if (const ir::Field *F = W.field(Path))
    return F->Value ? F->Value->Range : F->Range;
  return W.NameRange;
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
    if (!whole(Dp) && Dp >= 1) {
      Diagnostic &D = Diags.report(
          DiagKind::InvalidLayout, at(W, "parallel.tp"),
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
                              at(W, "parallel.tp")});
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
    if (!whole(Dp * Cp / Ep)) {
      Diagnostic &D = Diags.report(
          DiagKind::InvalidLayout, at(W, "parallel.ep"),
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
    B.G.DomainChecks.push_back(
        {Groups, ValueDomain::Whole, "dp x cp / ep", at(W, "parallel.ep")});
  }

  // Tensor parallelism stays in the scale-up domain unless the workload
  // allows otherwise: its all-reduces run every layer.
  if (const ir::Entity *Node = Ctx.Sys->Node;
      Node && !flag(W, "parallel.tp_across_nodes", false)) {
    double PerNode = Ctx.foldedNumber(*Node, "count");
    if (!whole(PerNode / Tp)) {
      Diagnostic &D = Diags.report(
          DiagKind::InvalidLayout, at(W, "parallel.tp"),
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
                                at(W, "parallel.tp")});
  }

  if (Vp > 1 && Pp < 2) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout, at(W, "parallel.vp"),
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
    Diagnostic &D = Diags.report(DiagKind::InvalidLayout, at(W, Path), Message);
    D.Message += Hint;
    Ctx.Failed = true;
    return false;
  };
  NodeId Even = B.op(Op::Div, {T.Layers, T.PP});
  B.label(Even, "layers_per_stage");
  if (!First && !Last) {
    if (!whole(Layers / (Pp * Vp)))
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
                                  at(W, "parallel.pp")});
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
        (Pp > 2 && (!whole(Middle) || !whole(Middle / Vp))))
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
      B.G.DomainChecks.push_back({Chunk, ValueDomain::Whole,
                                  "(layers - first - last) / ((pp - 2) x vp)",
                                  at(W, First ? "parallel.first_stage_layers"
                                              : "parallel.last_stage_layers")});
    } else {
      // Two stages hold all the layers: a sweep keeps pp at 2.
      T.MiddleLayers = T.FirstLayers;
      NodeId Two = B.constant(2, "two stages");
      B.G.DomainChecks.push_back(
          {B.op(Op::Sub, {Two, T.PP}), ValueDomain::NonNegative,
           "2 - pp (first and last stages only)", at(W, "parallel.pp")});
      B.G.DomainChecks.push_back(
          {B.op(Op::Sub, {T.PP, B.constant(1, "one stage")}),
           ValueDomain::Whole, "pp - 1 (first and last stages only)",
           at(W, "parallel.pp")});
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
        DiagKind::InvalidLayout, at(W, "global_batch_tokens"),
        fmt::format("`{}.global_batch_tokens` = {} is not global_batch {} x "
                    "seq {} = {} tokens",
                    W.Name, Ctx.foldedNumber(W, "global_batch_tokens"), Global,
                    Seq, Global * Seq));
    D.Message += "; give one of the two";
    Ctx.Failed = true;
    return false;
  }
  if (!Sequences && !whole(Global)) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout, at(W, "global_batch_tokens"),
        fmt::format("`{}.global_batch_tokens` = {} is not a whole number of "
                    "sequences of seq {} tokens ({} of them)",
                    W.Name, Ctx.foldedNumber(W, "global_batch_tokens"), Seq,
                    Global));
    D.Message += "; give a multiple of seq, or `global_batch` in sequences";
    Ctx.Failed = true;
    return false;
  }
  if (Cp > 1 && !whole(Seq / (2 * Cp))) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout, at(W, "parallel.cp"),
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
  if (!whole(PerReplica) || PerReplica < 1) {
    Diagnostic &D = Diags.report(
        DiagKind::InvalidLayout,
        at(W, Sequences ? "global_batch" : "global_batch_tokens"),
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
                              at(W, "micro_batch")});
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

/// The fabrics the collectives cross: the node's and the scale-out one.
void trainingFabrics(LoweringContext &Ctx, double Spans) {
  TrainingState &T = Ctx.Training;
  const ir::Entity *Node = Ctx.Sys->Node;
  const ir::Entity *Fabric = Node ? Ctx.entity(*Node, "intra") : nullptr;
  if (!Fabric) {
    if (Node && Spans > 1)
      Ctx.missing(*Node, "intra",
                  "a fabric for the training step's collectives and sends "
                  "(wall 14)");
    return;
  }
  T.HasFabric = true;
  T.IntraBW = Ctx.required(*Fabric, "bandwidth", "the node's fabric");
  T.IntraLatency = Ctx.required(*Fabric, "latency", "the node's fabric");
  T.NodeRanks = *Ctx.Sys->NodeDevices;
  if (const ir::Entity *Inter = Ctx.entity(*Node, "inter")) {
    T.InterBW = Ctx.required(*Inter, "bandwidth", "the scale-out fabric");
    T.InterLatency = Ctx.required(*Inter, "latency", "the scale-out fabric");
  } else {
    T.InterBW = T.IntraBW;
    T.InterLatency = T.IntraLatency;
    if (Spans > Ctx.foldedNumber(*Node, "count"))
      Ctx.missing(*Node, "inter",
                  "a scale-out fabric: the layout's devices span nodes "
                  "(wall 14)");
  }
}

/// Multi-head latent attention's projections and a mixture of experts'
/// routed and shared weights (DeepSeek-V3, Mixtral): the layer's weights
/// as the GEMMs run them, as a device stores them, and the feed-forward
/// width the activations see.
bool moeAndMla(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity &Model = *Ctx.Model;
  NodeId Zero = B.constant(0, "none");
  T.TimeLayerParams = T.StoredLayerParams = T.LayerParams;
  T.FFNWidth = T.FFN;
  NodeId Attention =
      B.apply(FormulaId::DecoderLayerParams,
              {T.Hidden, T.AttnDim, T.KVDim, Zero, T.FFNMatrices}, "");
  bool Mla = Model.field("mla.kv_rank") != nullptr;
  if (Mla) {
    const char *Why = "multi-head latent attention's projections (wall 1)";
    NodeId HeadDim = Ctx.required(Model, "head_dim", Why);
    NodeId Rope = Ctx.required(Model, "mla.rope_dim", Why);
    NodeId VDim = Ctx.required(Model, "mla.v_head_dim", Why);
    NodeId QRank = Ctx.required(Model, "mla.q_rank", Why);
    NodeId KVRank = Ctx.required(Model, "mla.kv_rank", Why);
    if (Ctx.Failed)
      return false;
    Attention =
        B.apply(FormulaId::MlaAttentionParams,
                {T.Hidden, T.Heads, HeadDim, Rope, VDim, QRank, KVRank}, "");
    T.AttnDim =
        B.apply(FormulaId::MlaPrefillAttentionDim,
                {T.Heads, HeadDim, Rope, VDim}, Model.Name + ".attention_dim");
  }
  NodeId Dense = B.apply(FormulaId::DecoderLayerParams,
                         {T.Hidden, Zero, Zero, T.FFN, T.FFNMatrices}, "");
  std::optional<NodeId> Experts = Ctx.field(Model, "experts");
  std::optional<NodeId> TopK = Ctx.field(Model, "top_k");
  T.Moe = Experts && TopK;
  if (W.field("parallel.ep") && !T.Moe) {
    Ctx.C.Diags.report(DiagKind::InvalidLayout, at(W, "parallel.ep"),
                       fmt::format("`{}.parallel.ep` shards experts, but `{}` "
                                   "has none; drop it",
                                   W.Name, Model.Name));
    Ctx.Failed = true;
    return false;
  }
  if (!T.Moe) {
    if (Mla) {
      T.LayerParams = B.op(Op::Add, {Attention, Dense});
      T.TimeLayerParams = T.StoredLayerParams = T.LayerParams;
    }
    return true;
  }
  T.TopK = *TopK;
  T.EP = Ctx.orDefault(W, DefaultId::EP);
  std::optional<NodeId> MoeFFN = Ctx.field(Model, "moe_ffn");
  NodeId Expert =
      B.apply(FormulaId::DecoderLayerParams,
              {T.Hidden, Zero, Zero, MoeFFN ? *MoeFFN : T.FFN, T.FFNMatrices},
              "expert_params");
  std::optional<NodeId> DenseLayers = Ctx.field(Model, "dense_layers");
  NodeId LD = DenseLayers ? *DenseLayers
                          : B.constant(0, "every layer routes to experts");
  std::optional<NodeId> Shared = Ctx.field(Model, "shared_experts");
  NodeId S = Shared ? *Shared : B.constant(0, "no shared expert");
  auto average = [&](NodeId DenseValue, NodeId MoeValue, const char *Label) {
    return B.apply(FormulaId::MoeLayerAverage,
                   {T.Layers, LD, DenseValue, MoeValue}, Label);
  };
  NodeId SharedAvg =
      B.op(Op::Add, {Attention, average(Dense, B.op(Op::Mul, {S, Expert}),
                                        "shared_params_per_layer")});
  NodeId Routed = average(Zero, B.op(Op::Mul, {T.TopK, Expert}),
                          "routed_active_params_per_layer");
  NodeId Stored = average(Zero, B.op(Op::Mul, {*Experts, Expert}),
                          "routed_stored_params_per_layer");
  // One expert-parallel rank has no busiest rank: 1 + (I - 1) x min(ep -
  // 1, 1), so that a sweep over ep switches it on and off.
  NodeId One = B.constant(1, "balanced");
  T.Imbalance = B.op(
      Op::Add,
      {One,
       B.op(Op::Mul,
            {B.op(Op::Sub, {Ctx.orDefault(W, DefaultId::MoeImbalance), One}),
             B.op(Op::Min, {B.op(Op::Sub, {T.EP, One}),
                            B.constant(1, "more than one rank")})})});
  B.label(T.Imbalance, "moe.imbalance_at_ep");
  T.LayerParams = B.op(Op::Add, {SharedAvg, Routed});
  B.label(T.LayerParams, "active_params_per_layer");
  T.TimeLayerParams =
      B.op(Op::Add, {SharedAvg, B.op(Op::Mul, {T.Imbalance, Routed})});
  B.label(T.TimeLayerParams, "busiest_rank_params_per_layer");
  T.ExpertLayerParams = B.op(Op::Div, {Stored, T.EP});
  T.StoredLayerParams = B.op(Op::Add, {SharedAvg, T.ExpertLayerParams});
  B.label(T.StoredLayerParams, "stored_params_per_layer");
  NodeId MoeWidth =
      B.op(Op::Mul, {B.op(Op::Add, {B.op(Op::Mul, {T.TopK, T.Imbalance}), S}),
                     MoeFFN ? *MoeFFN : T.FFN});
  T.FFNWidth = average(T.FFN, MoeWidth, "ffn_width_per_layer");
  T.MoeShare = B.op(Op::Div, {B.op(Op::Sub, {T.Layers, LD}), T.Layers});
  B.label(T.MoeShare, "moe_layer_share");

  // Experts split over ep; ep is carved from the data-parallel ranks
  // (Megatron-LM's expert-data-parallel group).
  double Ep = Ctx.foldedNumber(W, "parallel.ep");
  double E = Ctx.foldedNumber(Model, "experts");
  if (!whole(E / Ep)) {
    Ctx.C.Diags.report(
        DiagKind::InvalidLayout, at(W, "parallel.ep"),
        fmt::format("`{}.parallel.ep` = {} does not divide the {} experts of "
                    "`{}`; expert parallelism gives each rank the same "
                    "number of experts",
                    W.Name, Ep, E, Model.Name));
    Ctx.Failed = true;
    return false;
  }
  NodeId PerRank = B.op(Op::Div, {*Experts, T.EP});
  B.label(PerRank, "layout.experts_per_ep_rank");
  B.G.DomainChecks.push_back({PerRank, ValueDomain::Whole,
                              Model.Name + ".experts / parallel.ep",
                              at(W, "parallel.ep")});
  return true;
}

} // namespace

bool lowerTrainingInputs(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity &Model = *Ctx.Model;
  const ir::Entity &Precision = *Ctx.Precision;
  System &Sys = *Ctx.Sys;
  const ir::Entity &Accel = *Sys.Accel;

  // Without the model's shape or the batch there is no step to lower; the
  // run's compute (wall 11) still is. Say what the step needs.
  std::vector<std::string> Absent;
  for (const char *F : {"layers", "hidden", "heads", "ffn", "vocab"})
    if (!Model.field(F))
      Absent.push_back(fmt::format("`{}.{}`", Model.Name, F));
  if (!W.field("seq"))
    Absent.push_back(fmt::format("`{}.seq`", W.Name));
  if (!W.field("global_batch") && !W.field("global_batch_tokens"))
    Absent.push_back(fmt::format("`{}.global_batch` (or "
                                 "`global_batch_tokens`)",
                                 W.Name));
  if (!Absent.empty()) {
    B.G.NotLowered = "the step needs " + llvm::join(Absent, ", ");
    return false;
  }

  // The model's shape.
  const char *Why = "the training step's FLOPs and activations (walls 1-2)";
  T.Layers = Ctx.required(Model, "layers", Why);
  T.Hidden = Ctx.required(Model, "hidden", Why);
  T.Heads = Ctx.required(Model, "heads", Why);
  T.FFN = Ctx.required(Model, "ffn", Why);
  T.Vocab = Ctx.required(Model, "vocab",
                         "the output layer's FLOPs and the embedding");
  std::optional<NodeId> HeadDim = Ctx.field(Model, "head_dim");
  if (!HeadDim) {
    HeadDim = B.op(Op::Div, {T.Hidden, T.Heads});
    B.label(*HeadDim, Model.Name + ".head_dim");
  }
  std::optional<NodeId> KVHeads = Ctx.field(Model, "kv_heads");
  T.AttnDim = B.op(Op::Mul, {T.Heads, *HeadDim});
  B.label(T.AttnDim, Model.Name + ".attention_dim");
  T.KVHeads = KVHeads ? *KVHeads : T.Heads;
  T.KVDim = B.op(Op::Mul, {T.KVHeads, *HeadDim});
  B.label(T.KVDim, Model.Name + ".kv_dim");
  bool Gated = Ctx.enumValue(Model, "ffn_kind") == "gated";
  T.FFNMatrices =
      B.constant(Gated ? 3 : 2, Gated ? "a gated feed-forward: three matrices"
                                      : "a plain feed-forward: two matrices");
  bool Tied = flag(Model, "tied_embeddings", false);
  T.Tied = B.constant(Tied ? 1 : 0, Tied ? "the output layer is the embedding"
                                         : "the output layer has its own "
                                           "weights");
  if (Ctx.Failed)
    return false;
  T.LayerParams =
      B.apply(FormulaId::DecoderLayerParams,
              {T.Hidden, T.AttnDim, T.KVDim, T.FFN, T.FFNMatrices}, "");
  if (!moeAndMla(Ctx))
    return false;

  // Precisions: 8-bit training keeps 16-bit weights and activations and
  // casts inside the GEMMs (Transformer Engine).
  NodeId Bytes = Ctx.required(Precision, "bytes", "bytes per parameter");
  if (Ctx.foldedNumber(Precision, "bytes") < 2) {
    const char *Note = "8-bit training keeps 16-bit weights and activations "
                       "and casts to 8 bits inside the GEMMs (NVIDIA "
                       "Transformer Engine)";
    T.WeightBytes = implied(Ctx, 2, "B", "2 B", Note);
    T.ActBytes = implied(Ctx, 2, "B", "2 B", Note);
  } else {
    T.WeightBytes = Bytes;
    T.ActBytes = Bytes;
  }
  // Weights stored in another format (fp8 weights gathered by a sharded
  // optimizer, as Megatron-LM's --fp8-param-gather).
  if (const ir::Entity *WP = Ctx.entity(W, "weight_precision"))
    T.WeightBytes = Ctx.required(*WP, "bytes", "bytes per stored weight");
  T.GradBytes = Ctx.orDefault(W, DefaultId::GradientBytes);
  T.OptBytes = Ctx.orDefault(W, DefaultId::OptimizerBytes);
  T.Zero = Ctx.orDefault(W, DefaultId::Zero);
  double Zero = Ctx.foldedNumber(W, "zero");
  if (W.field("zero") && (!whole(Zero) || Zero < 0 || Zero > 3)) {
    Ctx.C.Diags.report(DiagKind::InvalidLayout, at(W, "zero"),
                       fmt::format("`{}.zero` = {} is not a ZeRO stage; "
                                   "stages are 0, 1, 2 and 3",
                                   W.Name, Zero));
    Ctx.Failed = true;
    return false;
  }
  bool SP = flag(W, "sequence_parallel", false);
  T.SP = B.constant(SP ? 1 : 0,
                    SP ? "sequence parallelism" : "no sequence parallelism");
  std::optional<Recompute> Re = Ctx.enumField<Recompute>(W, "recompute");
  int ReLevel = !Re || *Re == Recompute::None ? 0
                : *Re == Recompute::Selective ? 1
                                              : 2;
  T.Recompute = B.constant(ReLevel, ReLevel == 0   ? "no recomputation"
                                    : ReLevel == 1 ? "selective recomputation"
                                                   : "full recomputation");
  bool Dropout = W.field("dropout") && Ctx.foldedNumber(W, "dropout") > 0;
  T.Dropout = B.constant(Dropout ? 1 : 0, Dropout ? "dropout: its masks are "
                                                    "kept"
                                                  : "no dropout");
  bool Fused = flag(W, "kernels.fused_attention", true);
  T.FusedAttention = Fused;
  T.Fused = B.constant(Fused ? 1 : 0,
                       Fused ? "fused attention" : "unfused attention");

  // The roofline and wall 3.
  T.Peak =
      Ctx.required(Accel, "peak." + Precision.Name,
                   fmt::format("its dense {} peak; the workload trains in {}",
                               Precision.Name, Precision.Name));
  T.BW = Ctx.required(Accel, "hbm.bandwidth", "memory bandwidth");
  T.Capacity = Ctx.required(Accel, "hbm.capacity", "memory capacity");
  Sys.TDP = Ctx.required(Accel, "tdp", "power draw (wall 18)");
  T.EtaGemm = Ctx.kernelEfficiency(
      W, Ctx.foldedNumber(Precision, "bytes") < 2 && !W.field("kernels.gemm")
             ? DefaultId::KernelGemm8Bit
             : DefaultId::KernelGemm);
  // Unfused attention runs its QK^T and scores x V as batched GEMMs and
  // pays for its score tensors in memory traffic (unfused_score_bytes).
  T.EtaAttention =
      Fused ? Ctx.kernelEfficiency(W, DefaultId::KernelAttention) : T.EtaGemm;
  // 8-bit training computes attention in 16 bits, at that peak.
  if (Ctx.foldedNumber(Precision, "bytes") < 2 && Accel.field("peak.bf16")) {
    NodeId AttnPeak = Ctx.required(
        Accel, "peak.bf16", "its dense bf16 peak, which attention runs at");
    T.EtaAttention =
        B.op(Op::Mul, {T.EtaAttention, B.op(Op::Div, {AttnPeak, T.Peak})});
    B.label(T.EtaAttention, "attention_efficiency_at_" + Precision.Name);
  }
  // Wall 3 in training: the share of the kernel classes' efficiencies a
  // training step reaches (calibrated, docs/validation.md).
  NodeId Training = Ctx.orDefault(W, DefaultId::KernelTraining);
  T.EtaGemm = B.op(Op::Mul, {T.EtaGemm, Training});
  B.label(T.EtaGemm, "training_gemm_efficiency");
  T.EtaAttention = B.op(Op::Mul, {T.EtaAttention, Training});
  B.label(T.EtaAttention, "training_attention_efficiency");
  T.EtaMem = Ctx.orDefault(W, DefaultId::MemoryEfficiency);
  T.EtaComm = Ctx.orDefault(W, DefaultId::CommEfficiency);
  if (Ctx.Failed || !trainingLayout(Ctx))
    return false;
  trainingFabrics(Ctx, T.FoldedDevices);
  B.G.MainPhase = PhaseId::Train;
  return !Ctx.Failed;
}

bool lowerTrainingMemory(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  // The parameters of the device that holds most: the first stage's
  // layers and embedding, a middle stage's layers, or the last stage's
  // layers and output layer; one stage alone holds both tables unless
  // they are tied.
  bool Tied = Ctx.foldedNumber(*Ctx.Model, "tied_embeddings") != 0 &&
              Ctx.Model->field("tied_embeddings");
  auto stageParams = [&](NodeId Layers, double Tables, const char *Why) {
    return B.apply(FormulaId::TrainingStageParams,
                   {Layers, T.StoredLayerParams, T.Hidden, T.Vocab,
                    B.constant(Tables, Why), T.TP},
                   "");
  };
  // (The stages are built for any pp, so that a sweep may vary it: with
  // one stage the "last" holds every layer and both tables.)
  NodeId OneStage = B.op(
      Op::Sub, {B.constant(1, "one stage"),
                B.op(Op::Min, {B.op(Op::Sub, {T.PP, B.constant(1, "one "
                                                                  "stage")}),
                               B.constant(1, "more than one stage")})});
  NodeId LastTables =
      B.op(Op::Add,
           {B.constant(1, "the last stage's output layer"),
            B.op(Op::Mul, {OneStage,
                           B.constant(Tied ? 0 : 1, Tied ? "tied: one table"
                                                         : "untied: the "
                                                           "embedding too")})});
  NodeId FirstParams =
      stageParams(T.FirstLayers, 1, "the first stage's embedding");
  NodeId LastParams = B.apply(
      FormulaId::TrainingStageParams,
      {T.LastLayers, T.StoredLayerParams, T.Hidden, T.Vocab, LastTables, T.TP},
      "");
  T.StageParams = B.op(
      Op::Max, {B.op(Op::Max, {FirstParams, LastParams}),
                stageParams(T.MiddleLayers, 0, "a middle stage: layers only")});
  B.publish(MetricId::StageParams, T.StageParams);
  // ZeRO shards over the gradient-reducing group, dp x cp; an MoE model's
  // routed experts over their own, dp x cp / ep (each expert lives on one
  // rank of every ep).
  NodeId Group = B.op(Op::Mul, {T.DP, T.CP});
  B.label(Group, "data_parallel_group");
  T.SharedStage = T.StageParams;
  if (T.Moe) {
    NodeId Most = B.op(Op::Max, {B.op(Op::Max, {T.FirstLayers, T.LastLayers}),
                                 T.MiddleLayers});
    T.ExpertStage =
        B.op(Op::Div, {B.op(Op::Mul, {Most, T.ExpertLayerParams}), T.TP});
    B.label(*T.ExpertStage, "expert_params_per_device");
    T.SharedStage = B.op(Op::Sub, {T.StageParams, *T.ExpertStage});
    T.ExpertGroup = B.op(Op::Div, {Group, T.EP});
    B.label(T.ExpertGroup, "expert_data_parallel_group");
  }
  auto sharded = [&](NodeId PerParam, double From, const char *Why) {
    NodeId K = B.constant(From, Why);
    NodeId Bytes = B.apply(FormulaId::ZeroShardedBytes,
                           {T.SharedStage, PerParam, Group, T.Zero, K}, "");
    if (T.Moe)
      Bytes = B.op(Op::Add, {Bytes, B.apply(FormulaId::ZeroShardedBytes,
                                            {*T.ExpertStage, PerParam,
                                             T.ExpertGroup, T.Zero, K},
                                            "")});
    return Bytes;
  };
  NodeId Weights =
      sharded(T.WeightBytes, 3, "ZeRO shards weights from stage 3");
  NodeId Grads = sharded(T.GradBytes, 2, "ZeRO shards gradients from stage 2");
  NodeId Opt =
      sharded(T.OptBytes, 1, "ZeRO shards the optimizer state from stage 1");
  B.publish(MetricId::WeightsPerDevice, Weights);
  B.publish(MetricId::GradientsPerDevice, Grads);
  B.publish(MetricId::OptimizerPerDevice, Opt);

  // Activations: the first stages hold their layers' for the micro-batches
  // in flight; the last, one micro-batch's and the output layer's.
  NodeId Layer =
      B.apply(FormulaId::TrainingLayerActivationBytes,
              {T.LocalSeq, T.MicroBatch, T.Hidden, T.Heads, T.AttnDim, T.KVDim,
               T.FFNWidth, T.FFNMatrices, T.ActBytes, T.TP, T.SP, T.Recompute,
               T.Fused, T.Dropout},
              "activations_per_layer");
  NodeId InFlight = B.apply(FormulaId::MicroBatchesInFlight,
                            {T.PP, T.Microbatches, T.VP}, "");
  NodeId Held = B.op(Op::Max, {T.FirstLayers, T.MiddleLayers});
  NodeId First = B.op(Op::Mul, {B.op(Op::Mul, {Held, Layer}), InFlight});
  NodeId Output =
      B.apply(FormulaId::OutputLayerActivationBytes,
              {T.LocalSeq, T.MicroBatch, T.Hidden, T.Vocab, T.TP}, "");
  NodeId Last = B.op(Op::Add, {B.op(Op::Mul, {T.LastLayers, Layer}), Output});
  NodeId Activations = B.op(Op::Max, {First, Last});
  B.publish(MetricId::ActivationsPerDevice, Activations);
  NodeId Memory =
      B.op(Op::Add, {B.op(Op::Add, {B.op(Op::Add, {Weights, Grads}), Opt}),
                     Activations});
  B.publish(MetricId::MemoryPerDevice, Memory);
  B.publish(MetricId::DeviceMemory, T.Capacity);
  NodeId Fits = B.op(Op::Le, {Memory, T.Capacity});
  B.publish(MetricId::MemoryFits, Fits);
  B.publish(MetricId::Feasible, Fits);
  return true;
}

namespace {

/// One micro-batch's forward and backward on a pipeline stage of \p Layers
/// layers (and the output layer with its loss when \p Output), by part.
struct StageTimes {
  NodeId Compute, Memory, Tp, Cp, Ep;
};

StageTimes stageTimes(LoweringContext &Ctx, NodeId Layers, bool Output,
                      NodeId Tokens) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  StageTimes R;
  NodeId Gemm = B.apply(
      FormulaId::TrainingStageGemmFlops,
      {Tokens, Layers, T.TimeLayerParams, T.Hidden, T.Vocab,
       B.constant(Output ? 1 : 0, Output ? "the last stage's output layer"
                                         : "no output layer on this stage"),
       T.Recompute, T.TP},
      "");
  NodeId Attn = B.apply(
      FormulaId::TrainingStageAttentionFlops,
      {Tokens, Layers, T.Seq, T.AttnDim, T.Recompute, T.Fused, T.TP}, "");
  NodeId GemmTime =
      B.apply(FormulaId::ComputeTime, {Gemm, T.Peak, T.EtaGemm}, "");
  NodeId AttnTime =
      B.apply(FormulaId::ComputeTime, {Attn, T.Peak, T.EtaAttention}, "");
  R.Compute = B.op(Op::Add, {GemmTime, AttnTime});

  NodeId ActInputs = B.op(
      Op::Sub, {T.FFNMatrices, B.constant(1, "the activation function's "
                                             "inputs: one plain, two gated")});
  NodeId Passes = B.op(
      Op::Floor,
      {B.op(Op::Add,
            {B.constant(3, "forward and backward (twice the forward's "
                           "traffic)"),
             B.op(Op::Div, {T.Recompute, B.constant(2, "full recomputation "
                                                       "runs the forward "
                                                       "again")})})});
  NodeId Elementwise = B.apply(
      FormulaId::ElementwiseBytesPerToken,
      {T.Hidden, T.FFNWidth, ActInputs, T.ActBytes, T.TP, T.SP, Passes}, "");
  NodeId Bytes = B.op(Op::Mul, {B.op(Op::Mul, {Elementwise, Tokens}), Layers});
  if (Output)
    Bytes = B.op(Op::Add, {Bytes, B.apply(FormulaId::CrossEntropyBytes,
                                          {Tokens, T.Vocab, T.TP}, "")});
  if (!T.FusedAttention)
    Bytes = B.op(Op::Add, {Bytes, B.apply(FormulaId::UnfusedScoreBytes,
                                          {T.MicroBatch, T.LocalSeq, T.Heads,
                                           Layers, T.ActBytes, T.Dropout, T.TP},
                                          "")});
  R.Memory = B.apply(FormulaId::MemoryTime, {Bytes, T.BW, T.EtaMem}, "");

  R.Tp = R.Cp = R.Ep =
      Ctx.none("s", "0 s", "no fabric: nothing is communicated");
  if (!T.HasFabric)
    return R;
  // Tensor-parallel collectives: two all-reduces a layer forward, two
  // backward, two more with full recomputation.
  NodeId Message =
      B.apply(FormulaId::TensorParallelMessage,
              {T.MicroBatch, T.LocalSeq, T.Hidden, T.ActBytes}, "");
  NodeId PerLayer =
      B.apply(FormulaId::TensorParallelLayerTime,
              {Message, T.TP, T.NodeRanks, T.IntraBW, T.IntraLatency, T.InterBW,
               T.InterLatency, T.EtaComm},
              "");
  NodeId LayerPasses = B.op(
      Op::Add,
      {B.constant(2, "forward and backward"),
       B.op(Op::Floor,
            {B.op(Op::Div, {T.Recompute, B.constant(2, "full recomputation "
                                                       "runs the forward "
                                                       "again")})})});
  // What overlap hides is at most the compute it hides behind.
  auto exposed = [&](NodeId Comm, DefaultId Overlap) {
    NodeId Hidden = B.op(
        Op::Min, {B.op(Op::Mul, {Comm, Ctx.orDefault(W, Overlap)}), R.Compute});
    return B.op(Op::Sub, {Comm, Hidden});
  };
  R.Tp =
      exposed(B.op(Op::Mul, {B.op(Op::Mul, {PerLayer, LayerPasses}), Layers}),
              DefaultId::OverlapTP);
  // Ring attention overlaps its exchange with the attention it feeds.
  NodeId KVWidth = B.op(Op::Mul, {B.constant(2, "keys and values"), T.KVDim});
  NodeId Chunk = B.op(
      Op::Div, {B.apply(FormulaId::TensorParallelMessage,
                        {T.MicroBatch, T.LocalSeq, KVWidth, T.ActBytes}, ""),
                B.op(Op::Min, {T.TP, T.KVHeads})});
  B.label(Chunk, "cp_kv_chunk");
  NodeId Ring =
      B.apply(FormulaId::ContextParallelRingTime,
              {Chunk, T.CP, B.op(Op::Mul, {T.TP, T.CP}), T.NodeRanks, T.IntraBW,
               T.IntraLatency, T.InterBW, T.InterLatency, T.EtaComm},
              "");
  R.Cp =
      B.op(Op::Max, {B.op(Op::Sub, {B.op(Op::Mul, {Ring, Layers}), AttnTime}),
                     Ctx.none("s", "0 s", "the exchange hidden")});
  // Expert parallelism: each MoE layer's dispatch and combine all-to-alls,
  // forward and backward, the busiest rank's routed tokens (top_k x
  // moe_imbalance a token) crossing the links tp x ep ranks span.
  if (T.Moe) {
    NodeId Routed =
        B.op(Op::Mul, {B.apply(FormulaId::TensorParallelMessage,
                               {B.op(Op::Mul, {T.MicroBatch, T.TopK}),
                                T.LocalSeq, T.Hidden, T.ActBytes},
                               ""),
                       T.Imbalance});
    B.label(Routed, "routed_bytes_per_microbatch");
    NodeId PerLayer = B.apply(FormulaId::ExpertAllToAllTime,
                              {Routed, T.EP, B.op(Op::Mul, {T.TP, T.EP}),
                               T.NodeRanks, T.IntraBW, T.IntraLatency,
                               T.InterBW, T.InterLatency, T.EtaComm},
                              "");
    NodeId MoeLayers = B.op(Op::Mul, {Layers, T.MoeShare});
    R.Ep = exposed(
        B.op(Op::Mul,
             {B.op(Op::Mul, {PerLayer, B.constant(2, "forward and backward")}),
              MoeLayers}),
        DefaultId::OverlapEP);
  }
  return R;
}

} // namespace

bool lowerTrainingStep(LoweringContext &Ctx) {
  TrainingState &T = Ctx.Training;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  NodeId Zero = Ctx.none("s", "0 s", "no communication is modelled here");

  // One micro-batch's forward and backward on each kind of stage; the
  // pipeline runs at the slowest, each part taken where it is largest.
  NodeId Tokens = B.op(Op::Mul, {T.MicroBatch, T.LocalSeq});
  B.label(Tokens, "microbatch_tokens_per_device");
  std::vector<StageTimes> Stages{
      stageTimes(Ctx, T.LastLayers, true, Tokens),
      stageTimes(Ctx, T.FirstLayers, false, Tokens),
      stageTimes(Ctx, T.MiddleLayers, false, Tokens)};
  // The slowest stage: the largest total, the last stage winning ties; its
  // parts are the micro-batch's (a 0/1 weight per stage).
  std::vector<NodeId> Totals;
  for (const StageTimes &St : Stages)
    Totals.push_back(
        B.op(Op::Add, {B.op(Op::Add, {St.Compute, St.Memory}),
                       B.op(Op::Add, {B.op(Op::Add, {St.Tp, St.Cp}), St.Ep})}));
  NodeId LastSlowest = B.op(Op::And, {B.op(Op::Ge, {Totals[0], Totals[1]}),
                                      B.op(Op::Ge, {Totals[0], Totals[2]})});
  NodeId FirstSlowest = B.op(Op::And, {B.op(Op::Not, {LastSlowest}),
                                       B.op(Op::Ge, {Totals[1], Totals[2]})});
  NodeId MiddleSlowest =
      B.op(Op::Not, {B.op(Op::Or, {LastSlowest, FirstSlowest})});
  NodeId Weight[] = {LastSlowest, FirstSlowest, MiddleSlowest};
  auto slowest = [&](NodeId StageTimes::*Part) {
    NodeId Sum = B.op(Op::Mul, {Weight[0], Stages[0].*Part});
    for (size_t I = 1; I < Stages.size(); ++I)
      Sum = B.op(Op::Add, {Sum, B.op(Op::Mul, {Weight[I], Stages[I].*Part})});
    return Sum;
  };
  NodeId Compute = slowest(&StageTimes::Compute);
  B.label(Compute, "microbatch_compute_time");
  NodeId MemTime = slowest(&StageTimes::Memory);
  B.label(MemTime, "microbatch_memory_time");
  NodeId TpComm = slowest(&StageTimes::Tp);
  B.label(TpComm, "microbatch_tp_comm_time");
  NodeId CpComm = slowest(&StageTimes::Cp);
  B.label(CpComm, "microbatch_cp_comm_time");
  NodeId EpComm = slowest(&StageTimes::Ep);
  B.label(EpComm, "microbatch_ep_comm_time");

  // The stage's sends to its neighbours, once per model chunk.
  NodeId PpComm = Zero;
  if (T.HasFabric) {
    NodeId Message =
        B.apply(FormulaId::TensorParallelMessage,
                {T.MicroBatch, T.LocalSeq, T.Hidden, T.ActBytes}, "");
    NodeId Activation = B.op(Op::Div, {Message, T.TP});
    NodeId Stride = B.op(Op::Mul, {B.op(Op::Mul, {T.TP, T.CP}), T.DP});
    NodeId Sends =
        B.apply(FormulaId::PipelineStageSendTime,
                {Activation, T.VP, Stride, T.NodeRanks, T.IntraBW,
                 T.IntraLatency, T.InterBW, T.InterLatency, T.EtaComm},
                "");
    NodeId Shown = B.op(Op::Sub, {B.constant(1, "all of it"),
                                  Ctx.orDefault(W, DefaultId::OverlapPP)});
    NodeId HasPipeline =
        B.op(Op::Min, {B.op(Op::Sub, {T.PP, B.constant(1, "one stage")}),
                       B.constant(1, "a pipeline sends")});
    PpComm = B.op(Op::Mul, {B.op(Op::Mul, {Sends, HasPipeline}), Shown});
    B.label(PpComm, "microbatch_pp_comm_time");
  }
  NodeId Micro =
      B.op(Op::Add, {B.op(Op::Add, {B.op(Op::Add, {Compute, MemTime}), TpComm}),
                     B.op(Op::Add, {B.op(Op::Add, {CpComm, PpComm}), EpComm})});
  B.publish(MetricId::MicrobatchTime, Micro);

  // The pipeline: m micro-batches and the fill and drain.
  NodeId Pipeline = B.apply(FormulaId::PipelineStepTime,
                            {T.Microbatches, T.PP, T.VP, Micro}, "");
  NodeId Busy = B.op(Op::Mul, {T.Microbatches, Micro});
  NodeId Bubble = B.op(Op::Sub, {Pipeline, Busy});
  B.publish(MetricId::BubbleFraction,
            B.apply(FormulaId::PipelineBubbleFraction,
                    {T.PP, T.Microbatches, T.VP}, ""));

  // The gradient sync over dp x cp, hidden behind the backward pass up to
  // overlap.dp of it and at most the backward's length.
  NodeId DpComm = Zero;
  NodeId Group = B.op(Op::Mul, {T.DP, T.CP});
  if (T.HasFabric) {
    NodeId PeersInNode = B.op(
        Op::Max, {B.op(Op::Div, {T.NodeRanks, B.op(Op::Mul, {T.TP, T.CP})}),
                  B.constant(1, "at least the rank itself")});
    NodeId Sync =
        B.apply(FormulaId::DataParallelSyncTime,
                {T.SharedStage, T.GradBytes, T.WeightBytes, T.Zero, Group,
                 B.op(Op::Floor, {PeersInNode}), T.IntraBW, T.IntraLatency,
                 T.InterBW, T.InterLatency, T.EtaComm},
                "");
    if (T.Moe)
      Sync = B.op(
          Op::Add,
          {Sync,
           B.apply(FormulaId::DataParallelSyncTime,
                   {*T.ExpertStage, T.GradBytes, T.WeightBytes, T.Zero,
                    T.ExpertGroup,
                    B.op(Op::Max,
                         {B.op(Op::Floor, {B.op(Op::Div, {PeersInNode, T.EP})}),
                          B.constant(1, "at least the rank itself")}),
                    T.IntraBW, T.IntraLatency, T.InterBW, T.InterLatency,
                    T.EtaComm},
                   "expert_sync_time")});
    // The gradients are final only in the last micro-batch's backward
    // pass, which is all a reduce can hide behind; a sharded optimizer's
    // weight all-gather also hides behind the next step's first forward.
    NodeId Window = B.op(
        Op::Mul,
        {Compute,
         B.op(
             Op::Add,
             {B.constant(2.0 / 3.0, "the last micro-batch's backward pass: "
                                    "two thirds of its compute"),
              B.op(Op::Mul,
                   {B.constant(1.0 / 3.0, "the first micro-batch's forward "
                                          "pass: a third of its compute"),
                    B.op(Op::Min, {T.Zero, B.constant(1, "a sharded "
                                                         "optimizer gathers "
                                                         "the weights")})})})});
    B.label(Window, "dp_overlap_window");
    NodeId Hidden = B.op(
        Op::Min, {B.op(Op::Mul, {Sync, Ctx.orDefault(W, DefaultId::OverlapDP)}),
                  Window});
    DpComm = B.op(Op::Sub, {Sync, Hidden});
  }

  // The optimizer step over the state a device updates.
  auto shards = [&](NodeId Over) {
    return B.op(
        Op::Max,
        {B.op(Op::Mul, {Over, B.op(Op::Min, {T.Zero, B.constant(1, "sharded "
                                                                   "from "
                                                                   "ZeRO "
                                                                   "1")})}),
         B.constant(1, "unsharded")});
  };
  NodeId Updated = B.op(Op::Div, {T.SharedStage, shards(Group)});
  if (T.Moe)
    Updated =
        B.op(Op::Add,
             {Updated, B.op(Op::Div, {*T.ExpertStage, shards(T.ExpertGroup)})});
  B.label(Updated, "optimizer_params_per_device");
  NodeId OptBytes =
      B.apply(FormulaId::OptimizerStepBytes,
              {Updated, T.WeightBytes, T.GradBytes, T.OptBytes}, "");
  NodeId OptTime =
      B.apply(FormulaId::MemoryTime, {OptBytes, T.BW, T.EtaMem}, "");

  NodeId Step = B.op(Op::Add, {B.op(Op::Add, {Pipeline, DpComm}), OptTime});
  B.publish(MetricId::StepTime, Step);

  // The phase's parts: they add up to the step; the largest binds.
  auto steps = [&](NodeId PerMicro) {
    return B.op(Op::Mul, {T.Microbatches, PerMicro});
  };
  NodeId TpAll = steps(TpComm), CpAll = steps(CpComm), PpAll = steps(PpComm),
         EpAll = steps(EpComm);
  B.publish(MetricId::EpCommTime, EpAll);
  B.publish(MetricId::TpCommTime, TpAll);
  B.publish(MetricId::CpCommTime, CpAll);
  B.publish(MetricId::PpCommTime, PpAll);
  B.publish(MetricId::DpCommTime, DpComm);
  B.publish(MetricId::OptimizerTime, OptTime);
  B.publish(PhaseId::Train, PM::ComputeTime, steps(Compute));
  B.publish(PhaseId::Train, PM::MemoryTime,
            B.op(Op::Add, {steps(MemTime), OptTime}));
  B.publish(
      PhaseId::Train, PM::CommTime,
      B.op(Op::Add, {B.op(Op::Add, {B.op(Op::Add, {TpAll, CpAll}), PpAll}),
                     B.op(Op::Add, {EpAll, DpComm})}));
  B.publish(PhaseId::Train, PM::BubbleTime, Bubble);

  // Utilisation, throughput and the run.
  NodeId PerToken = B.apply(
      FormulaId::TrainingModelFlopsPerToken,
      {T.Layers, T.LayerParams, T.Seq, T.AttnDim, T.Hidden, T.Vocab}, "");
  NodeId Recomputed =
      B.apply(FormulaId::RecomputeFlopsPerToken,
              {T.Layers, T.LayerParams, T.Seq, T.AttnDim, T.Recompute}, "");
  NodeId StepTokens = B.op(Op::Mul, {T.GlobalBatch, T.Seq});
  B.label(StepTokens, "tokens_per_step");
  NodeId ModelFlops = B.op(Op::Mul, {PerToken, StepTokens});
  B.label(ModelFlops, "model_flops_per_step");
  NodeId HardwareFlops =
      B.op(Op::Mul, {B.op(Op::Add, {PerToken, Recomputed}), StepTokens});
  B.publish(PhaseId::Train, PM::Flops, B.op(Op::Div, {ModelFlops, T.Devices}));
  B.publish(MetricId::Mfu, B.apply(FormulaId::FlopUtilisation,
                                   {ModelFlops, Step, T.Devices, T.Peak}, ""));
  B.publish(MetricId::Hfu,
            B.apply(FormulaId::FlopUtilisation,
                    {HardwareFlops, Step, T.Devices, T.Peak}, ""));
  B.publish(MetricId::ModelFlopsPerDevice,
            B.op(Op::Div, {ModelFlops, B.op(Op::Mul, {Step, T.Devices})}));
  NodeId Throughput = B.op(Op::Div, {StepTokens, Step});
  B.publish(MetricId::TrainingThroughput, Throughput);
  std::optional<NodeId> Run;
  if (std::optional<NodeId> Budget = Ctx.field(W, "tokens"))
    Run = B.apply(FormulaId::TimeToTrain, {*Budget, Throughput}, "");
  else if (std::optional<NodeId> Steps = Ctx.field(W, "steps"))
    Run = B.op(Op::Mul, {*Steps, Step});
  if (Run) {
    B.publish(MetricId::TimeToTrain, *Run);
    B.publish(MetricId::DeviceHours, B.op(Op::Mul, {*Run, T.Devices}));
  }
  return true;
}

} // namespace mlsc
