//===- TrainingInputs.cpp - What a training step reads -------------------===//
//
// The first step of a decoder's training: the model's shape (multi-head
// latent attention and a mixture of experts included), the precisions, the
// roofline and the kernel efficiencies (wall 3), the layout
// (TrainingLayout.cpp) and the fabrics the collectives cross (wall 14). A
// scenario without a shape or a batch is not an error: the step says what
// it needs, and the run's compute (wall 11) is still lowered.
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/Training.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

using graph::Op;

namespace {

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
  if (T.Moe)
    std::tie(T.AllToAllBW, T.AllToAllLatency) =
        Ctx.allToAllAcross(T.InterBW, T.InterLatency);
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
  if (!Ctx.checkExpertFields(Model))
    return false;
  std::optional<NodeId> Experts = Ctx.field(Model, "experts");
  std::optional<NodeId> TopK = Ctx.field(Model, "top_k");
  T.Moe = Experts && TopK;
  if (!Ctx.checkExpertParallel(W, Model, T.Moe))
    return false;
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
  return Ctx.checkExpertsSplit(W, Model, *Experts, T.EP);
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
  T.Fp8 = Ctx.narrowMath(Precision);
  if (T.Fp8) {
    const char *Note = "training in 8 bits or fewer keeps 16-bit weights "
                       "and activations and casts to the narrow format "
                       "inside the GEMMs (NVIDIA Transformer Engine)";
    T.WeightBytes = Ctx.quantity(2, "B", "2 B", Note);
    T.ActBytes = Ctx.quantity(2, "B", "2 B", Note);
    B.label(T.WeightBytes, "weight_bytes");
    B.label(T.ActBytes, "activation_bytes");
  } else {
    T.WeightBytes = Bytes;
    T.ActBytes = Bytes;
  }
  // Weights stored in another format (fp8 weights gathered by a sharded
  // optimizer, as Megatron-LM's --fp8-param-gather).
  if (const ir::Entity *WP = Ctx.entity(W, "weight_precision"))
    T.WeightBytes = Ctx.storageBytes(*WP, "bytes per stored weight");
  T.Routing = Ctx.expertRouting(W, Model, T.ActBytes, T.Moe);
  if (Ctx.Failed)
    return false;
  T.GradBytes = Ctx.orDefault(W, DefaultId::GradientBytes);
  T.OptBytes = Ctx.orDefault(W, DefaultId::OptimizerBytes);
  T.Zero = Ctx.orDefault(W, DefaultId::Zero);
  double Zero = Ctx.foldedNumber(W, "zero");
  if (W.field("zero") && (!isWhole(Zero) || Zero < 0 || Zero > 3)) {
    Ctx.C.Diags.report(DiagKind::InvalidLayout, fieldAt(W, "zero"),
                       fmt::format("`{}.zero` = {} is not a ZeRO stage; "
                                   "stages are 0, 1, 2 and 3",
                                   W.Name, Zero));
    Ctx.Failed = true;
    return false;
  }
  // Choices a layout search varies by name: leaves, not constants.
  T.SP =
      Ctx.choice(W, "sequence_parallel", 0, "1: sequence parallelism, 0: none");
  T.Recompute = Ctx.choice(W, "recompute", 0,
                           "0: no recomputation, 1: selective, 2: full");
  T.DpSgd = Ctx.choice(W, "dp_sgd", 0,
                       "0: no DP-SGD, 1: naive, 2: ghost clipping, 3: "
                       "book-keeping");
  // 1 with full recomputation, else 0: one more forward pass.
  T.FullRecompute =
      B.op(Op::Max, {B.op(Op::Sub, {T.Recompute, B.constant(1, "selective")}),
                     B.constant(0, "no extra pass")});
  B.label(T.FullRecompute, "full_recompute");
  bool Dropout = W.field("dropout") && Ctx.foldedNumber(W, "dropout") > 0;
  T.Dropout = B.constant(Dropout ? 1 : 0, Dropout ? "dropout: its masks are "
                                                    "kept"
                                                  : "no dropout");
  bool Fused = flag(W, "kernels.fused_attention", true);
  T.FusedAttention = Fused;
  T.Fused = B.constant(Fused ? 1 : 0,
                       Fused ? "fused attention" : "unfused attention");

  // The roofline and wall 3.
  if (!Ctx.checkPeakPrecision(W, Precision, Accel))
    return false;
  T.Peak =
      Ctx.required(Accel, "peak." + Precision.Name,
                   fmt::format("its dense {} peak; the workload trains in {}",
                               Precision.Name, Precision.Name));
  // Communication kernels that keep some of the device's compute units
  // for the whole step (overlap.sm_share) leave the GEMMs and attention
  // the rest of its peak.
  T.ComputePeak = B.op(
      Op::Mul,
      {T.Peak, B.op(Op::Sub, {B.constant(1, "the whole device"),
                              Ctx.orDefault(W, DefaultId::OverlapSmShare)})});
  B.label(T.ComputePeak, "training_compute_peak");
  T.BW = Ctx.required(Accel, "hbm.bandwidth", "memory bandwidth");
  T.Capacity = Ctx.required(Accel, "hbm.capacity", "memory capacity");
  Sys.TDP = Ctx.required(Accel, "tdp", "power draw (wall 18)");
  T.EtaGemm = Ctx.gemmEfficiency(W, Precision);
  // Unfused attention runs its QK^T and scores x V as batched GEMMs and
  // pays for its score tensors in memory traffic (unfused_score_bytes).
  T.EtaAttention = Ctx.attentionAtPeak(
      W, Precision, Accel,
      Fused ? Ctx.kernelEfficiency(W, DefaultId::KernelAttention) : T.EtaGemm,
      T.Peak);
  // Wall 3 in training: the share of the kernel classes' efficiencies a
  // training step reaches (calibrated, docs/validation.md).
  NodeId Training = Ctx.orDefault(W, DefaultId::KernelTraining);
  T.EtaGemm = B.op(Op::Mul, {T.EtaGemm, Training});
  B.label(T.EtaGemm, "training_gemm_efficiency");
  T.EtaAttention = B.op(Op::Mul, {T.EtaAttention, Training});
  B.label(T.EtaAttention, "training_attention_efficiency");
  T.EtaMem = Ctx.memoryEfficiency(W, Ctx.Sys->Accel);
  T.EtaComm = Ctx.orDefault(W, DefaultId::CommEfficiency);
  T.CollectiveOverhead = Ctx.orDefault(W, DefaultId::CollectiveOverhead);
  if (Ctx.Failed || !trainingLayout(Ctx))
    return false;
  trainingFabrics(Ctx, T.FoldedDevices);
  B.G.MainPhase = PhaseId::Train;
  return !Ctx.Failed;
}

} // namespace mlsc
