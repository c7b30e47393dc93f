//===- DecoderInputs.cpp - What a decoder LLM's walls read ----------------===//
//
// The first step of a decoder's lowering: the model's shape (and MoE
// routing), the precisions of math, weights (wall 13) and KV cache, the
// device's roofline, the kernel-class efficiencies (wall 3), pruning (wall
// 13), the tensor-parallel fabric (wall 14), weight streaming (wall 6), the
// KV cache per token (wall 2), and the lengths the steps run at. Fails
// when an input is missing, so that no later step reads a placeholder.
//
//===----------------------------------------------------------------------===//

#include "ir/Schema.h"
#include "passes/lowering/Steps.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mlsc {

using graph::LeafOrigin;
using graph::Op;

namespace {

void pruning(LoweringContext &Ctx) {
  // Wall 13: pruned weights take fewer bytes; structured (2:4) pruning also
  // shortens the GEMMs on devices with sparse tensor cores.
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  std::optional<NodeId> Sparsity = Ctx.field(W, "pruning.sparsity");
  if (!Sparsity)
    return;
  const ir::Field *SF = W.field("pruning.structured");
  bool Structured = SF && SF->Folded && SF->Folded->Number != 0;
  NodeId Kind =
      B.constant(Structured ? 1 : 0, Structured ? "N:M structured pruning"
                                                : "unstructured pruning");
  NodeId Speedup = Ctx.orDefault(*Ctx.Sys->Accel, DefaultId::SparseSpeedup);
  D.WeightBytes = B.apply(FormulaId::PrunedBytesPerParam,
                          {D.WeightBytes, *Sparsity, Kind}, "");
  B.publish(MetricId::PruningBytesPerParam, D.WeightBytes);
  D.GemmFactor =
      B.apply(FormulaId::SparseGemmTimeFactor, {*Sparsity, Kind, Speedup}, "");
  B.publish(MetricId::PruningGemmTimeFactor, *D.GemmFactor);
  D.Machine.EtaGemm = B.op(Op::Div, {D.Machine.EtaGemm, *D.GemmFactor});
  B.label(D.Machine.EtaGemm, "pruning.gemm_efficiency");
}

} // namespace

bool lowerDecoderInputs(LoweringContext &Ctx) {
  DecoderState &D = Ctx.Decoder;
  GraphBuilder &B = Ctx.B;
  const ir::Entity &W = *Ctx.Workload;
  const ir::Entity &Model = *Ctx.Model;
  const ir::Entity &Precision = *Ctx.Precision;
  const ir::Entity &Accel = *Ctx.Sys->Accel;
  const char *KVWhy = "the KV cache and attention FLOPs (walls 1-2)";
  D.Params = Ctx.required(Model, "params", "weight bytes (wall 2)");
  D.Layers = Ctx.required(Model, "layers", KVWhy);
  D.Heads = Ctx.required(Model, "heads", KVWhy);
  std::optional<NodeId> HeadDim = Ctx.field(Model, "head_dim");
  if (!HeadDim) {
    NodeId Hidden = Ctx.required(Model, "hidden", KVWhy);
    HeadDim = B.op(Op::Div, {Hidden, D.Heads});
    B.label(*HeadDim, Model.Name + ".head_dim");
  }
  D.HeadDim = *HeadDim;
  std::optional<NodeId> KVHeads = Ctx.field(Model, "kv_heads");
  if (!KVHeads)
    KVHeads = D.Heads; // multi-head attention: one KV head per head
  D.AttnDim = B.op(Op::Mul, {D.Heads, D.HeadDim});
  B.label(D.AttnDim, Model.Name + ".attention_dim");
  D.FFN = Ctx.field(Model, "ffn");

  // MoE: a step reads the experts its tokens are routed to (wall 2).
  std::optional<NodeId> Active = Ctx.field(Model, "active_params");
  std::optional<NodeId> Experts = Ctx.field(Model, "experts");
  std::optional<NodeId> TopK = Ctx.field(Model, "top_k");
  if (!Ctx.checkExpertFields(Model))
    return false;
  // Serving reads an MoE model's per-token weights from active_params;
  // without it the experts would be served as one dense model.
  if (Experts && TopK && !Active) {
    Diagnostic &Dg = Ctx.C.Diags.report(
        DiagKind::InvalidLayout, Model.NameRange,
        fmt::format("`{}` has experts and top_k but no active_params, which "
                    "serving needs to know the weights a token reads",
                    Model.Name));
    Dg.Message += fmt::format(
        "; give `{}.active_params`: the always-active weights (attention, "
        "shared experts, dense layers, embeddings) and top_k routed experts",
        Model.Name);
    Ctx.Failed = true;
    return false;
  }
  if (Active && Experts && TopK) {
    D.Moe = MoeShape{D.Params, *Active, *Experts, *TopK};
    // A token computes with the always-active weights and its top_k
    // experts, so active_params is at least params x top_k / experts (all
    // weights in experts) and at most params: outside, the experts' share
    // and the weights a step reads come out negative.
    double P = Ctx.foldedNumber(Model, "params"),
           A = Ctx.foldedNumber(Model, "active_params"),
           E = Ctx.foldedNumber(Model, "experts"),
           K = Ctx.foldedNumber(Model, "top_k");
    if (A < P * K / E || A > P || K >= E) {
      Diagnostic &Dg = Ctx.C.Diags.report(
          DiagKind::InvalidLayout, fieldAt(Model, "active_params"),
          K >= E ? fmt::format("`{}` routes a token to top_k = {} of its {} "
                               "experts: every expert is active",
                               Model.Name, K, E)
          : A > P
              ? fmt::format("`{}.active_params` = {:g} is more than its {:g} "
                            "parameters",
                            Model.Name, A, P)
              : fmt::format("`{}.active_params` = {:g} is fewer than its "
                            "top_k experts alone hold: params x top_k / "
                            "experts = {:g}",
                            Model.Name, A, P * K / E));
      Dg.Message += "; active_params counts the always-active weights "
                    "(attention, shared experts, dense layers, embeddings) "
                    "and top_k routed experts";
      Ctx.Failed = true;
      return false;
    }
    B.G.DomainChecks.push_back(
        {B.op(Op::Sub,
              {*Active,
               B.op(Op::Div, {B.op(Op::Mul, {D.Params, *TopK}), *Experts})}),
         ValueDomain::NonNegative,
         Model.Name + ".active_params - params x top_k / experts",
         fieldAt(Model, "active_params")});
  }
  D.ComputeParams = Active ? *Active : D.Params;

  // Precisions: math, weights (wall 13: e.g. int4 weights, bf16 math) and
  // the KV cache (e.g. fp8 KV, bf16 weights).
  // Activations: GEMMs in 8 bits or fewer take 8-bit (or narrower) inputs
  // but write 16-bit outputs, so the residual stream and what the
  // all-reduces, pipeline sends and expert all-to-alls carry stay in 16
  // bits (as 8-bit training keeps them).
  D.ActBytes = Ctx.required(Precision, "bytes", "bytes per parameter");
  if (Ctx.narrowMath(Precision)) {
    D.ActBytes = Ctx.quantity(
        2, "B", "2 B",
        "serving in 8 bits or fewer keeps 16-bit activations: the GEMMs "
        "quantize their inputs and write bf16 or fp16 outputs (vLLM's FP8 "
        "W8A8 cutlass_scaled_mm takes out_dtype bf16 or fp16; TensorRT-LLM's "
        "fp8 checkpoints keep the model's --dtype), which the "
        "tensor-parallel all-reduces carry");
    B.label(D.ActBytes, "activation_bytes");
  }
  // Stored weights and KV entries carry a block-scaled format's scales.
  const ir::Entity *WP = Ctx.entity(W, "weight_precision");
  D.WeightBytes =
      Ctx.storageBytes(WP ? *WP : Precision, "bytes per stored weight");
  const ir::Entity *KVP = Ctx.entity(W, "kv_precision");
  D.KVBytes =
      Ctx.storageBytes(KVP ? *KVP : Precision, "bytes per KV-cache element");
  if (Ctx.Failed)
    return false;

  if (!Ctx.checkPeakPrecision(W, Precision, Accel))
    return false;
  D.Peak =
      Ctx.required(Accel, "peak." + Precision.Name,
                   fmt::format("its dense {} peak; the workload runs in {}",
                               Precision.Name, Precision.Name));
  D.BW = Ctx.required(Accel, "hbm.bandwidth", "memory bandwidth");
  D.Capacity = Ctx.required(Accel, "hbm.capacity", "memory capacity");
  Ctx.Sys->TDP = Ctx.required(Accel, "tdp", "power draw (wall 18)");

  D.Batch = Ctx.orDefault(W, DefaultId::Batch);
  D.Prompt = Ctx.required(W, "prompt", "the prefill length");
  D.Output = Ctx.required(W, "output", "the decode length");
  // Wall 12: a reasoning model decodes its thinking tokens before the
  // answer, and an answer may take several samples (self-consistency,
  // best-of-N), each a sequence of its own.
  D.Thinking = Ctx.field(W, "reasoning.tokens");
  D.Samples = Ctx.field(W, "reasoning.samples");
  if (D.Thinking) {
    D.Output = B.op(Op::Add, {D.Output, *D.Thinking});
    B.label(D.Output, "decoded_tokens_per_sequence");
  }
  // `max_output` caps the answer, as `output` is the answer: a sequence
  // decodes its thinking tokens and at most that many more.
  if (std::optional<NodeId> Cap = Ctx.field(W, "max_output")) {
    D.OutputCap = *Cap;
    if (D.Thinking) {
      D.OutputCap = B.op(Op::Add, {*Cap, *D.Thinking});
      B.label(*D.OutputCap, "decoded_tokens_cap");
    }
  }
  // Outputs that vary and a cap: the lengths are drawn about the mean
  // decode and cut at the cap, so the requests decode the capped draw's
  // mean, below the mean the lengths were drawn about (the simulator cuts
  // its draws the same way).
  D.OutputDrawn = D.Output;
  if (std::optional<NodeId> CV = Ctx.field(W, "output_cv"); CV && D.OutputCap) {
    D.Output =
        B.apply(FormulaId::CappedLengthMean, {D.OutputDrawn, *CV, *D.OutputCap},
                "decoded_tokens_capped_mean");
    D.OutputCappedCV =
        B.apply(FormulaId::CappedLengthCV, {D.OutputDrawn, *CV, *D.OutputCap},
                "decoded_tokens_capped_cv");
  }
  if (std::optional<NodeId> Arrival = Ctx.field(W, "arrival")) {
    D.SeqArrival = *Arrival;
    if (D.Samples) {
      D.SeqArrival = B.op(Op::Mul, {*Arrival, *D.Samples});
      B.label(*D.SeqArrival, "sequence_arrival");
    }
  }
  D.TP = Ctx.orDefault(W, DefaultId::TP);
  D.PP = Ctx.orDefault(W, DefaultId::PP);
  if (!Ctx.checkExpertParallel(W, Model, D.Moe.has_value()))
    return false;
  D.EP = D.Moe ? Ctx.orDefault(W, DefaultId::EP)
               : B.constant(1, "a dense model has no experts to shard");
  D.Static =
      Ctx.enumField<BatchingPolicy>(W, "batching") == BatchingPolicy::Static;
  D.ReserveToCompletion = Ctx.enumField<KVAllocation>(W, "kv_allocation") ==
                          KVAllocation::ToCompletion;
  // The output's cap cannot be below the mean output it caps (it would
  // shrink a static batch's service and a reservation below the requests).
  // Outputs that spread (`output_cv`) are drawn about `output` and cut at
  // the cap, which may then lie anywhere: the requests decode the cut
  // draws' mean, at most the cap.
  if (const ir::Field *Cap = W.field("max_output");
      Cap && W.field("output") && !W.field("output_cv")) {
    double CapTokens = Ctx.foldedNumber(W, "max_output");
    double Mean = Ctx.foldedNumber(W, "output");
    if (CapTokens < Mean) {
      Ctx.C.Diags.report(
          DiagKind::ValueOutOfDomain, Cap->Range,
          fmt::format("`{}.max_output` is {:g} tok, below `output` ({:g} "
                      "tok): the longest output cannot be shorter than the "
                      "mean; raise `max_output` to at least {:g} tok, drop "
                      "it, or give `output_cv` to draw outputs about `output` "
                      "and cut them at `max_output`",
                      W.Name, CapTokens, Mean, Mean));
      Ctx.Failed = true;
      return false;
    }
  }
  // A chunk rides in an iteration of at most `max_batch_tokens` tokens
  // (vLLM's max_num_batched_tokens, TensorRT-LLM's max_num_tokens), so a
  // larger `prefill_chunk` runs in chunks of the budget, as the serving
  // simulator runs it (until December 2026 the closed forms took it whole:
  // 32,768-token chunks in an 8,192-token budget, one 935 ms iteration
  // where the simulator ran four).
  D.Chunk = Ctx.field(W, "prefill_chunk");
  if (D.Chunk) {
    D.Chunk =
        B.op(Op::Min, {*D.Chunk, Ctx.orDefault(W, DefaultId::MaxBatchTokens)});
    B.label(*D.Chunk, "prefill_chunk_in_budget");
  }
  D.ReplicaDevices = B.op(Op::Mul, {B.op(Op::Mul, {D.TP, D.PP}), D.EP});
  if (!checkLayout(Ctx, D.TP, D.PP, D.ReplicaDevices, "ep",
                   D.Moe ? Ctx.foldedNumber(W, "parallel.ep") : 1))
    return false;
  if (D.Moe && W.field("parallel.ep") &&
      !Ctx.checkExpertsSplit(W, Model, D.Moe->Experts, D.EP))
    return false;
  // Expert parallelism waits for its busiest rank, whose experts get
  // moe_imbalance times the mean rank's routed tokens: more expert FLOPs,
  // more experts read, a larger share of the all-to-all (wall 14).
  // Built for every MoE model, so that a sweep or solve that moves ep
  // from 1 finds them (the imbalance counts only from ep = 2 on).
  if (D.Moe) {
    NodeId One = B.constant(1, "one rank: no imbalance");
    NodeId Split =
        B.op(Op::Min, {One, B.op(Op::Max, {B.constant(0, "no split"),
                                           B.op(Op::Sub, {D.EP, One})})});
    D.MoeImbalance = B.op(
        Op::Add,
        {One,
         B.op(Op::Mul,
              {B.op(Op::Sub, {Ctx.orDefault(W, DefaultId::MoeImbalance), One}),
               Split})});
    B.label(*D.MoeImbalance, "moe.imbalance_over_ep_ranks");
    D.ComputeParams = B.apply(FormulaId::MoeBusiestRankParams,
                              {D.Moe->Params, D.Moe->Active, D.Moe->Experts,
                               D.Moe->TopK, *D.MoeImbalance},
                              "moe.busiest_rank_params");
    // The ep groups split the batch (attention data-parallel, docs/
    // language.md): each computes the always-active parameters for its
    // own sequences, every rank its experts for all of theirs.
    NodeId PerExpert =
        B.op(Op::Div, {B.op(Op::Sub, {D.Moe->Params, D.Moe->Active}),
                       B.op(Op::Sub, {D.Moe->Experts, D.Moe->TopK})});
    NodeId Always = B.op(
        Op::Sub, {D.Moe->Params, B.op(Op::Mul, {D.Moe->Experts, PerExpert})});
    B.label(Always, "moe.always_active_params");
    NodeId Routed = B.op(
        Op::Mul, {*D.MoeImbalance, B.op(Op::Sub, {D.Moe->Active, Always})});
    B.label(Routed, "moe.busiest_rank_routed_params");
    D.Groups = ExpertGroups{D.EP, Always, Routed};
  }

  // Wall 3 and the memory side of the roofline.
  Roofline &M = D.Machine;
  M.Peak = D.Peak;
  M.BW = D.BW;
  // GEMMs in 8 bits or fewer reach less of their (doubled) peak than in
  // 16: their own default, unless the workload gives `kernels.gemm`.
  M.EtaGemm = Ctx.gemmEfficiency(W, Precision);
  // Serving GEMMs in 8 bits or fewer reach a calibrated share of that
  // (`kernels.serving_8bit`), unless the workload gives its GEMMs' or
  // every kernel's efficiency.
  if (Ctx.narrowMath(Precision) && !W.field("kernels.gemm") &&
      !W.field("efficiency")) {
    M.EtaGemm = B.op(
        Op::Mul, {M.EtaGemm, Ctx.orDefault(W, DefaultId::KernelServing8Bit)});
    B.label(M.EtaGemm, "serving_gemm_efficiency");
  }
  if (const ir::Field *F = W.field("kernels.fused_attention"))
    D.Fused = !F->Folded || F->Folded->Number != 0;
  M.EtaAttention = Ctx.attentionAtPeak(
      W, Precision, Accel,
      Ctx.kernelEfficiency(W, D.Fused ? DefaultId::KernelAttention
                                      : DefaultId::KernelAttentionUnfused),
      D.Peak);
  M.EtaMem = Ctx.memoryEfficiency(W, &Accel);
  // Wall 3: every step's fixed cost, per step and per layer.
  M.StepOverhead = Ctx.orDefault(W, DefaultId::StepOverhead);
  M.LayerOverhead = Ctx.orDefault(W, DefaultId::LayerOverhead);
  M.Overlap = Ctx.orDefault(W, DefaultId::KernelOverlap);
  pruning(Ctx);
  M.Layers = D.Layers;
  M.ActivationBytes = D.ActBytes;
  M.TP = D.TP;
  M.Params = D.ComputeParams;
  M.WeightBytes = D.WeightBytes;

  // Wall 14: tensor-parallel all-reduces and the sends between pipeline
  // stages, on the node's fabric, and on the scale-out fabric (the node's
  // `inter`) where they leave the node. Ranks are placed tensor-parallel
  // group first, then pipeline stages, then expert-parallel groups.
  double Spans = Ctx.foldedNumber(W, "parallel.tp") *
                 Ctx.foldedNumber(W, "parallel.pp") *
                 (D.Moe ? Ctx.foldedNumber(W, "parallel.ep") : 1);
  const ir::Entity *Node = Ctx.Sys->Node;
  const ir::Entity *Fabric = Node ? Ctx.entity(*Node, "intra") : nullptr;
  if (Fabric) {
    M.FabricBW = Ctx.required(*Fabric, "bandwidth", "the TP fabric");
    M.FabricLatency = Ctx.required(*Fabric, "latency", "the TP fabric");
    M.CollectiveOverhead = Ctx.orDefault(W, DefaultId::CollectiveOverhead);
    M.NodeRanks = *Ctx.Sys->NodeDevices;
    const ir::Entity *Inter = Ctx.entity(*Node, "inter");
    if (Inter) {
      M.InterBW = Ctx.required(*Inter, "bandwidth", "the scale-out fabric");
      M.InterLatency = Ctx.required(*Inter, "latency", "the scale-out fabric");
    } else {
      // Nothing leaves the node (checked below): the node's fabric stands in.
      M.InterBW = *M.FabricBW;
      M.InterLatency = *M.FabricLatency;
      if (Spans > Ctx.foldedNumber(*Node, "count"))
        Ctx.missing(*Node, "inter",
                    "a scale-out fabric: the replica's tp x pp x ep devices "
                    "span nodes (wall 14)");
    }
  } else if (Node && Spans > 1) {
    Ctx.missing(*Node, "intra",
                "a fabric for the tensor-parallel all-reduces, pipeline "
                "sends and expert all-to-alls (wall 14)");
  }
  M.PP = D.PP;
  if (D.Moe) {
    // Expert parallelism: dispatch and combine in every MoE layer (the
    // model's first dense_layers have none).
    M.EP = D.EP;
    M.TopK = D.Moe->TopK;
    M.MoeImbalance = D.MoeImbalance;
    M.Routing = Ctx.expertRouting(W, Model, M.ActivationBytes, true);
    std::tie(M.AllToAllBW, M.AllToAllLatency) =
        Ctx.allToAllAcross(M.InterBW, M.InterLatency);
    std::optional<NodeId> Dense = Ctx.field(Model, "dense_layers");
    M.MoeLayers = Dense ? B.op(Op::Sub, {D.Layers, *Dense}) : D.Layers;
    B.label(M.MoeLayers, Model.Name + ".moe_layers");
    M.ReplicaDevices = D.ReplicaDevices;
  } else {
    Ctx.expertRouting(W, Model, M.ActivationBytes, false);
  }
  if (Ctx.Failed)
    return false;
  M.EtaComm = Ctx.orDefault(W, DefaultId::CommEfficiency);
  std::optional<NodeId> Hidden = Ctx.field(Model, "hidden");
  M.Hidden = Hidden ? *Hidden : D.AttnDim;

  // Wall 6: weights that live off the device stream in layer by layer.
  M.InjectBW = Ctx.field(W, "weight_streaming.bandwidth");

  // The KV cache: multi-head latent attention caches a compressed latent.
  std::optional<NodeId> KVRank = Ctx.field(Model, "mla.kv_rank");
  D.DecodeAttnDim = D.AttnDim;
  if (KVRank) {
    NodeId Rope = Ctx.required(Model, "mla.rope_dim",
                               "the MLA KV cache (its rotary key dimension)");
    if (Ctx.Failed)
      return false;
    D.KV = B.apply(FormulaId::MlaKVBytesPerToken,
                   {D.Layers, *KVRank, Rope, D.KVBytes}, "kv_bytes_per_token");
    // Attention FLOPs follow the latent dimensions, not heads x head_dim:
    // prefill unabsorbed (scores over head_dim + rope, values v_head_dim
    // wide), decode absorbed (over the kv_rank latent and the rope key).
    std::optional<NodeId> VHead = Ctx.field(Model, "mla.v_head_dim");
    D.AttnDim = B.apply(FormulaId::MlaPrefillAttentionDim,
                        {D.Heads, D.HeadDim, Rope, VHead ? *VHead : D.HeadDim},
                        Model.Name + ".prefill_attention_dim");
    D.DecodeAttnDim =
        B.apply(FormulaId::MlaDecodeAttentionDim, {D.Heads, *KVRank, Rope},
                Model.Name + ".decode_attention_dim");
    // The latent has no heads to split: tensor parallelism keeps it whole
    // on every rank (the duplication SGLang's data-parallel attention
    // removes; LMSYS, large-scale EP blog, 2025).
    D.KVShards = B.constant(1, "an MLA latent cache is whole on every "
                               "tensor-parallel rank");
  } else {
    if (Ctx.Failed)
      return false;
    D.KV = B.apply(FormulaId::KVBytesPerToken,
                   {D.Layers, *KVHeads, D.HeadDim, D.KVBytes},
                   "kv_bytes_per_token");
    // Each rank holds kv_heads / tp heads; past kv_heads, one head each,
    // replicated (Megatron-style GQA tensor parallelism).
    D.KVShards = B.op(Op::Min, {D.TP, *KVHeads});
    B.label(D.KVShards, "kv_shards");
  }
  D.KVGroupShards = B.op(Op::Mul, {D.KVShards, D.PP});
  B.label(D.KVGroupShards, "kv_store_shards");
  D.KVStoreShards = D.KVGroupShards;
  D.WorkShards = D.TP;
  D.KVWorkShards = D.KVShards;
  if (D.Groups) {
    // Each ep group holds its own sequences' KV cache, and a batch of B >=
    // ep spreads its work over tp x ep ranks.
    D.KVStoreShards = B.op(Op::Mul, {D.KVGroupShards, D.EP});
    B.label(D.KVStoreShards, "kv_store_shards_over_ep_groups");
    D.WorkShards = B.op(Op::Mul, {D.TP, D.EP});
    D.KVWorkShards = B.op(Op::Mul, {D.KVShards, D.EP});
  }
  B.publish(MetricId::TP, D.TP);
  B.publish(MetricId::PP, D.PP);
  B.publish(MetricId::Batch, D.Batch);
  B.publish(MetricId::DeviceMemory, D.Capacity);
  D.Sequence = B.op(Op::Add, {D.Prompt, D.Output});
  B.label(D.Sequence, "sequence_length");
  LeafOrigin PerStep;
  PerStep.Spelling = "1 tok";
  PerStep.Notes.push_back("one new token per sequence per decode step");
  D.OneToken = B.leaf(1, LoweringContext::unit("tok"), std::move(PerStep));
  // The context a decode step attends over, and a slot's KV cache holds,
  // is the running sequences' mean: each sequence reaches prompt + k at
  // its k-th step. With one output length that is prompt + output / 2. When
  // the outputs spread, a running slot is more likely held by a long
  // sequence (it stays longer: the inspection paradox), so the time-average
  // over the slots is E[P] + E[N^2] / (2 E[N]) = E[P] + (1 + cv^2) E[N] / 2,
  // prompts drawn independently of outputs (Kleinrock, Queueing Systems
  // vol. 1, 1975, section 5.2, residual life; a continuous batch's slots
  // are a renewal process of sequences). With `max_output` the spread is
  // that of the capped draws; without, of the draws that fit the model's
  // context (the engines refuse the rest), taken cut at the room the mean
  // prompt leaves: the uncut lognormal's second moment is mostly outputs
  // no engine runs (at cv 3 it doubled the context the simulator holds).
  // A static batch keeps every slot until the batch's longest output
  // ends: its sequences advance together, one length for all.
  NodeId HalfOutput =
      B.op(Op::Div, {D.Output, B.constant(2, "mean over the decode")});
  if (std::optional<NodeId> CV = Ctx.field(W, "output_cv"); CV && !D.Static) {
    NodeId Base = D.Output, Spread = *CV;
    if (D.OutputCappedCV) {
      Spread = *D.OutputCappedCV;
      D.OutputLimit = *D.OutputCap;
    } else if (std::optional<NodeId> Window =
                   Ctx.field(*Ctx.Model, "context")) {
      NodeId Room = B.op(
          Op::Max, {B.op(Op::Sub, {*Window, D.Prompt}),
                    Ctx.quantity(1, "tok", "1 tok", "at least one token")});
      B.label(Room, "decode.output_room");
      D.OutputLimit = Room;
      Base = B.apply(FormulaId::CappedLengthMean, {D.OutputDrawn, *CV, Room},
                     "decoded_tokens_within_context");
      Spread = B.apply(FormulaId::CappedLengthCV, {D.OutputDrawn, *CV, Room},
                       "decoded_tokens_within_context_cv");
    }
    NodeId Paradox =
        B.op(Op::Add, {B.constant(1, "the mean output's own share"),
                       B.op(Op::Mul, {Spread, Spread})});
    B.label(Paradox, "decode.length_biased_factor");
    // The output of the sequence holding a slot, on average over the
    // slots' time: E[N^2] / E[N]. A slot reserved to completion holds it
    // all along (lowerDecoderMemory).
    D.SlotOutput = B.op(Op::Mul, {Base, Paradox});
    B.label(*D.SlotOutput, "decode.slot_output");
    HalfOutput =
        B.op(Op::Div, {*D.SlotOutput, B.constant(2, "mean over the decode")});
  }
  B.label(HalfOutput, "decode.half_output");
  D.Context = B.op(Op::Add, {D.Prompt, HalfOutput});
  B.label(D.Context, "decode.context");
  return true;
}

} // namespace mlsc
