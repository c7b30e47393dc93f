//===- LowerDecoder.cpp - A decoder LLM's capacity and step times ---------===//
//
// Part of lower-to-graph (ScenarioLowering.h). A dense or MoE decoder served
// on an accelerator, a node or a cluster:
//  - inputs: the model's shape, the precisions of math, weights (wall 13)
//    and KV cache, the roofline of the device, kernel-class efficiencies
//    (wall 3), the tensor-parallel fabric (wall 14);
//  - capacity (walls 2, 5): weights + KV cache + activations + the runtime's
//    reserve against device memory, and the sequences a paged KV cache
//    holds;
//  - the prefill and decode steps (walls 1, 2, 3, 6, 14), speculative
//    decoding, and the throughput-optimal batch under a TPOT limit.
// Requests and the queue follow in LowerServing.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/ScenarioLowering.h"
#include "runtime/walls/Formulas.h"

#include <fmt/format.h>

namespace mlsc {

using graph::LeafOrigin;
using graph::Op;

void ScenarioLowering::decoder(const ir::Entity &W, const System &Sys) {
  Decoder D;
  D.W = &W;
  D.Sys = Sys;
  if (!decoderInputs(D, *entity(W, "model"), *entity(W, "precision")))
    return;
  decoderCapacity(D);
  decoderSteps(D);
  serving(D);
  fidelity(D);
}

bool ScenarioLowering::decoderInputs(Decoder &D, const ir::Entity &Model,
                                     const ir::Entity &Precision) {
  const ir::Entity &W = *D.W;
  const ir::Entity &Accel = *D.Sys.Accel;
  const Dimension One;
  const Dimension Tok = unit("tok");
  const char *KVWhy = "the KV cache and attention FLOPs (walls 1-2)";
  D.Params = required(Model, "params", "weight bytes (wall 2)");
  D.Layers = required(Model, "layers", KVWhy);
  D.Heads = required(Model, "heads", KVWhy);
  std::optional<uint32_t> HeadDim = field(Model, "head_dim");
  if (!HeadDim) {
    uint32_t Hidden = required(Model, "hidden", KVWhy);
    HeadDim = B.op(Op::Div, {Hidden, D.Heads}, One);
    B.name(*HeadDim, Model.Name + ".head_dim");
  }
  D.HeadDim = *HeadDim;
  std::optional<uint32_t> KVHeads = field(Model, "kv_heads");
  if (!KVHeads)
    KVHeads = D.Heads; // multi-head attention: one KV head per head
  D.AttnDim = B.op(Op::Mul, {D.Heads, D.HeadDim}, One);
  B.name(D.AttnDim, Model.Name + ".attention_dim");
  D.FFN = field(Model, "ffn");

  // MoE: a step reads the experts its tokens are routed to (wall 2).
  std::optional<uint32_t> Active = field(Model, "active_params");
  std::optional<uint32_t> Experts = field(Model, "experts");
  std::optional<uint32_t> TopK = field(Model, "top_k");
  if (Active && Experts && TopK)
    D.Moe = std::array<uint32_t, 4>{D.Params, *Active, *Experts, *TopK};
  D.ComputeParams = Active ? *Active : D.Params;

  // Precisions: math, weights (wall 13: e.g. int4 weights, bf16 math) and
  // the KV cache (e.g. fp8 KV, bf16 weights).
  D.Bytes = required(Precision, "bytes", "bytes per parameter");
  D.WeightBytes = D.Bytes;
  if (const ir::Entity *WP = entity(W, "weight_precision"))
    D.WeightBytes = required(*WP, "bytes", "bytes per stored weight");
  D.KVBytes = D.Bytes;
  if (const ir::Entity *KVP = entity(W, "kv_precision"))
    D.KVBytes = required(*KVP, "bytes", "bytes per KV-cache element");

  D.Peak = required(Accel, "peak." + Precision.Name,
                    fmt::format("its dense {} peak; the workload runs in {}",
                                Precision.Name, Precision.Name));
  D.BW = required(Accel, "hbm.bandwidth", "memory bandwidth");
  D.Capacity = required(Accel, "hbm.capacity", "memory capacity");
  D.TDP = required(Accel, "tdp", "power draw (wall 18)");

  D.Batch = orDefault(W, "batch", 1, One, "default: one sequence");
  D.Prompt = required(W, "prompt", "the prefill length");
  D.Output = required(W, "output", "the decode length");
  D.TP = orDefault(W, "parallel.tp", 1, One, "default: no tensor parallelism");
  D.PP =
      orDefault(W, "parallel.pp", 1, One, "default: no pipeline parallelism");
  D.EP = D.Moe ? orDefault(W, "parallel.ep", 1, One,
                           "default: no expert parallelism")
               : B.constant(1, "a dense model has no experts to shard");
  D.Static = enumValue(W, "batching") == "static";
  D.Chunk = field(W, "prefill_chunk");
  checkPositive(W, "prefill_chunk");
  checkPositive(W, "max_output");

  // Wall 3 and the memory side of the roofline.
  Roofline &M = D.Machine;
  M.Peak = D.Peak;
  M.BW = D.BW;
  M.EtaGemm = kernelEfficiency(W, "kernels.gemm");
  if (const ir::Field *F = W.field("kernels.fused_attention"))
    D.Fused = !F->Folded || F->Folded->Number != 0;
  M.EtaAttention = kernelEfficiency(W, D.Fused ? "kernels.attention"
                                               : "kernels.attention_unfused");
  M.EtaMem = orDefault(W, "memory_efficiency", 1, One,
                       "default: the full HBM bandwidth",
                       /*Calibrated=*/true);
  pruning(D);
  M.Layers = D.Layers;
  M.ActivationBytes = D.Bytes;
  M.TP = D.TP;
  M.Params = D.ComputeParams;
  M.WeightBytes = D.WeightBytes;

  // Wall 14: tensor-parallel all-reduces over the node's intra fabric.
  const ir::Entity *Fabric =
      D.Sys.Node ? entity(*D.Sys.Node, "intra") : nullptr;
  if (Fabric) {
    M.FabricBW = required(*Fabric, "bandwidth", "the TP fabric");
    M.FabricLatency = required(*Fabric, "latency", "the TP fabric");
  } else if (D.Sys.Node && foldedNumber(W, "parallel.tp") > 1) {
    missing(*D.Sys.Node, "intra",
            "a fabric for the tensor-parallel all-reduces (wall 14)");
  }
  M.EtaComm =
      orDefault(W, "comm_efficiency", 1, One,
                "default: the fabric's full bandwidth", /*Calibrated=*/true);
  std::optional<uint32_t> Hidden = field(Model, "hidden");
  M.Hidden = Hidden ? *Hidden : D.AttnDim;

  // Wall 6: weights that live off the device stream in layer by layer.
  M.InjectBW = field(W, "weight_streaming.bandwidth");
  checkPositive(W, "weight_streaming.bandwidth");

  // The KV cache: multi-head latent attention caches a compressed latent.
  std::optional<uint32_t> KVRank = field(Model, "mla.kv_rank");
  if (KVRank) {
    uint32_t Rope = required(Model, "mla.rope_dim",
                             "the MLA KV cache (its rotary key dimension)");
    if (Failed)
      return false;
    D.KV = B.apply(FormulaId::MlaKVBytesPerToken,
                   {D.Layers, *KVRank, Rope, D.KVBytes}, "kv_bytes_per_token");
  } else {
    if (Failed)
      return false;
    D.KV = B.apply(FormulaId::KVBytesPerToken,
                   {D.Layers, *KVHeads, D.HeadDim, D.KVBytes},
                   "kv_bytes_per_token");
  }
  B.name(D.TP, "tp");
  B.name(D.PP, "pp");
  B.name(D.Batch, "batch");
  B.name(D.Capacity, "device_memory");
  D.Sequence = B.op(Op::Add, {D.Prompt, D.Output}, Tok);
  B.name(D.Sequence, "sequence_length");
  LeafOrigin PerStep;
  PerStep.Spelling = "1 tok";
  PerStep.Notes.push_back("one new token per sequence per decode step");
  D.OneToken = B.leaf(1, Tok, std::move(PerStep));
  uint32_t HalfOutput =
      B.op(Op::Div, {D.Output, B.constant(2, "mean over the decode")}, Tok);
  B.name(HalfOutput, "decode.half_output");
  D.Context = B.op(Op::Add, {D.Prompt, HalfOutput}, Tok);
  B.name(D.Context, "decode.context");
  return true;
}

void ScenarioLowering::pruning(Decoder &D) {
  // Wall 13: pruned weights take fewer bytes; structured (2:4) pruning also
  // shortens the GEMMs on devices with sparse tensor cores.
  const ir::Entity &W = *D.W;
  std::optional<uint32_t> Sparsity = field(W, "pruning.sparsity");
  if (!Sparsity)
    return;
  checkFraction(W, "pruning.sparsity");
  const ir::Field *SF = W.field("pruning.structured");
  bool Structured = SF && SF->Folded && SF->Folded->Number != 0;
  uint32_t Kind =
      B.constant(Structured ? 1 : 0, Structured ? "N:M structured pruning"
                                                : "unstructured pruning");
  uint32_t Speedup = orDefault(*D.Sys.Accel, "sparse_speedup", 1, Dimension(),
                               "default: no sparse tensor cores");
  D.WeightBytes =
      B.apply(FormulaId::PrunedBytesPerParam, {D.WeightBytes, *Sparsity, Kind},
              "pruning.bytes_per_param");
  D.GemmFactor =
      B.apply(FormulaId::SparseGemmTimeFactor, {*Sparsity, Kind, Speedup},
              "pruning.gemm_time_factor");
  D.Machine.EtaGemm =
      B.op(Op::Div, {D.Machine.EtaGemm, *D.GemmFactor}, Dimension());
  B.name(D.Machine.EtaGemm, "pruning.gemm_efficiency");
}

void ScenarioLowering::decoderCapacity(Decoder &D) {
  const ir::Entity &W = *D.W;
  const Dimension One;
  const Dimension Tok = unit("tok");
  const Dimension Data = unit("B");
  D.ReplicaDevices =
      B.op(Op::Mul, {B.op(Op::Mul, {D.TP, D.PP}, One), D.EP}, One);
  B.name(D.ReplicaDevices, "replica_devices");
  uint32_t Stored;
  if (D.Moe) {
    const auto &[Params, Active, Experts, TopK] = *D.Moe;
    Stored = B.apply(FormulaId::MoeWeightBytesPerDevice,
                     {Params, Active, Experts, TopK, D.WeightBytes,
                      B.op(Op::Mul, {D.TP, D.PP}, One), D.EP},
                     "weights_per_device");
  } else {
    Stored =
        B.apply(FormulaId::WeightBytes, {D.Params, D.WeightBytes, D.TP, D.PP},
                "weights_per_device");
  }
  D.Weights = Stored;
  uint32_t Resident = Stored;
  if (D.Machine.InjectBW) {
    // Wall 6: two layers are resident (one computing, one streaming in).
    Resident = B.op(
        Op::Div,
        {B.op(Op::Mul, {Stored, B.constant(2, "double-buffered layers")}, Data),
         D.Layers},
        Data);
    B.name(Resident, "resident_weights_per_device");
  }

  // Wall 4: a draft model for speculative decoding shares the devices,
  // batch, precision and tensor parallelism; its weights and KV cache
  // count against memory.
  D.Draft = draftModel(W, D.TP, D.PP, D.WeightBytes, D.KVBytes);

  // Activations: the largest forward pass is a request's prefill (the whole
  // batch's with static batching), or one chunk with chunked prefill.
  uint32_t PassTokens = D.Chunk    ? *D.Chunk
                        : D.Static ? B.op(Op::Mul, {D.Batch, D.Prompt}, Tok)
                                   : D.Prompt;
  uint32_t FFN =
      D.FFN ? *D.FFN
            : B.op(Op::Mul,
                   {B.constant(4, "default ffn = 4h"), D.Machine.Hidden}, One);
  uint32_t Activations =
      B.apply(FormulaId::InferenceActivationBytes,
              {PassTokens, D.Machine.Hidden, FFN, D.TP, D.Bytes},
              "activations_per_device");
  if (!D.Fused) {
    uint32_t Scores =
        B.apply(FormulaId::AttentionScoreBytes,
                {D.Static ? D.Batch : B.constant(1, "one request's prefill"),
                 D.Heads, D.Chunk ? *D.Chunk : D.Prompt, D.TP, D.Bytes},
                "attention_scores_per_device");
    Activations = B.op(Op::Add, {Activations, Scores}, Data);
    B.name(Activations, "activations_per_device");
  }

  // Wall 5: the batch must fit a paged KV cache in the memory the serving
  // runtime leaves free (vLLM's defaults: 16-token blocks, 90% usable).
  uint32_t Block =
      orDefault(W, "kv_block", 16, Tok, "default: vLLM's 16-token KV blocks");
  if (W.field("memory_utilization"))
    checkFraction(W, "memory_utilization");
  uint32_t Usable = orDefault(
      W, "memory_utilization", 0.9, One,
      "default: vLLM's gpu_memory_utilization; the rest is runtime reserve",
      /*Calibrated=*/true);
  uint32_t Unused =
      B.op(Op::Sub, {B.constant(1, "all of the memory"), Usable}, One);
  uint32_t Reserve = B.op(Op::Mul, {D.Capacity, Unused}, Data);
  B.name(Reserve, "runtime_reserve");
  uint32_t PerSequence =
      B.apply(FormulaId::PagedKVBytesPerSequence,
              {D.Sequence, Block, D.KV, D.TP}, "kv_bytes_per_sequence");
  uint32_t AllWeights = Resident;
  if (D.Draft) {
    uint32_t DraftPerSequence = B.apply(FormulaId::PagedKVBytesPerSequence,
                                        {D.Sequence, Block, D.Draft->KV, D.TP},
                                        "draft.kv_bytes_per_sequence");
    PerSequence = B.op(Op::Add, {PerSequence, DraftPerSequence}, Data);
    AllWeights = B.op(Op::Add, {Resident, D.Draft->Weights}, Data);
  }
  uint32_t Fixed = B.op(Op::Add, {AllWeights, Activations}, Data);
  B.name(Fixed, "fixed_memory_per_device");
  uint32_t KVCache = B.op(Op::Mul, {D.Batch, PerSequence}, Data);
  B.name(KVCache, "kv_cache_per_device");
  uint32_t Memory =
      B.op(Op::Add, {B.op(Op::Add, {Fixed, KVCache}, Data), Reserve}, Data);
  B.name(Memory, "memory_per_device");
  uint32_t Fits = B.op(Op::Le, {Memory, D.Capacity}, One, true);
  B.name(Fits, "memory_fits");
  uint32_t TPFits = B.op(Op::Le, {D.ReplicaDevices, D.Sys.Devices}, One, true);
  B.name(TPFits, "parallelism_fits");
  D.MaxSequences = B.apply(FormulaId::MaxConcurrentSequences,
                           {D.Capacity, Fixed, Reserve, PerSequence},
                           "max_concurrent_sequences");
  uint32_t BatchFits = B.op(Op::Le, {D.Batch, D.MaxSequences}, One, true);
  B.name(BatchFits, "batch_fits");
  uint32_t Feasible =
      B.op(Op::And, {B.op(Op::And, {Fits, TPFits}, One, true), BatchFits}, One,
           true);
  B.name(Feasible, "feasible");
}

uint32_t ScenarioLowering::weightsRead(const Decoder &D, uint32_t Tokens,
                                       const std::string &Name) {
  if (D.Machine.InjectBW) // wall 6: weights come over the inject link
    return none(unit("B"), "0 B",
                "weights stream in from off the device (wall 6); HBM holds "
                "the KV cache");
  if (!D.Moe)
    return D.Weights;
  const auto &[Params, Active, Experts, TopK] = *D.Moe;
  // Pipeline stages each hold 1/pp of the layers: divide as the dense case.
  uint32_t PerStage = B.op(Op::Mul, {D.TP, D.PP}, Dimension());
  return B.apply(
      FormulaId::MoeWeightBytesRead,
      {Params, Active, Experts, TopK, Tokens, D.WeightBytes, PerStage, D.EP},
      Name);
}

void ScenarioLowering::decoderSteps(Decoder &D) {
  const Dimension Tok = unit("tok");
  uint32_t PromptTokens = B.op(Op::Mul, {D.Batch, D.Prompt}, Tok);
  uint32_t PrefillWeights =
      weightsRead(D, PromptTokens, "prefill.weight_bytes");
  D.PrefillTime = phase(
      "prefill", "prefill_time", D.Machine, D.Batch, D.Prompt,
      B.apply(FormulaId::PrefillFlops,
              {D.ComputeParams, D.Layers, D.AttnDim, D.Batch, D.Prompt, D.TP},
              "prefill.flops"),
      B.apply(FormulaId::PrefillAttentionFlops,
              {D.Layers, D.AttnDim, D.Batch, D.Prompt, D.TP},
              "prefill.attention_flops"),
      B.apply(FormulaId::PrefillBytes,
              {PrefillWeights, D.KV, D.Batch, D.Prompt, D.TP},
              "prefill.bytes"));
  uint32_t StepTokens = B.op(Op::Mul, {D.Batch, D.OneToken}, Tok);
  uint32_t DecodeWeights = weightsRead(D, StepTokens, "decode.weight_bytes");
  D.DecodeStep = phase(
      "decode", "decode_step_time", D.Machine, D.Batch, D.OneToken,
      B.apply(FormulaId::DecodeStepFlops,
              {D.ComputeParams, D.Layers, D.AttnDim, D.Batch, D.Context, D.TP},
              "decode.flops"),
      B.apply(FormulaId::DecodeAttentionFlops,
              {D.Layers, D.AttnDim, D.Batch, D.Context, D.TP},
              "decode.attention_flops"),
      B.apply(FormulaId::DecodeStepBytes,
              {DecodeWeights, D.KV, D.Batch, D.Context, D.TP}, "decode.bytes"));
  uint32_t Eta = G.Named.lookup("decode.efficiency");
  B.apply(FormulaId::MemoryTime, {DecodeWeights, D.BW, D.Machine.EtaMem},
          "decode.weight_read_time");
  B.apply(FormulaId::DecodeCrossoverBatch,
          {D.ComputeParams, D.Layers, D.AttnDim, D.Context, D.TP, DecodeWeights,
           D.KV, D.Peak, Eta, D.BW, D.Machine.EtaMem},
          "decode.crossover_batch");
  B.apply(FormulaId::RidgePoint, {D.Peak, D.BW}, "ridge_point");

  // Wall 5: the throughput-optimal batch under a TPOT limit. Decode
  // throughput B / T(B) never falls as B grows, so it is the largest batch
  // whose roofline step meets the limit (communication not counted).
  if (std::optional<uint32_t> Limit = field(*D.W, "tpot_limit")) {
    const Dimension Data = G.Nodes[D.Weights].Dim;
    const Dimension PeakDim = G.Nodes[D.Peak].Dim;
    const Dimension BWDim = G.Nodes[D.BW].Dim;
    uint32_t PerSequenceFlops =
        B.apply(FormulaId::DecodeStepFlops,
                {D.ComputeParams, D.Layers, D.AttnDim,
                 B.constant(1, "one sequence"), D.Context, D.TP},
                "decode.flops_per_sequence");
    uint32_t PerSequenceBytes =
        B.op(Op::Div, {B.op(Op::Mul, {D.Context, D.KV}, Data), D.TP}, Data);
    B.name(PerSequenceBytes, "decode.kv_bytes_per_sequence");
    B.apply(FormulaId::MaxBatchUnderTPOT,
            {*Limit, PerSequenceFlops, DecodeWeights, PerSequenceBytes,
             B.op(Op::Mul, {D.Peak, Eta}, PeakDim),
             B.op(Op::Mul, {D.BW, D.Machine.EtaMem}, BWDim), D.MaxSequences},
            "max_batch_under_tpot");
  }

  // With speculative decoding a target step verifies k draft tokens and
  // emits E = (1 - a^(k+1)) / (1 - a) of them on average; verifying k + 1
  // tokens is taken to cost one decode step (true while decode is
  // memory-bound).
  D.TPOT = D.DecodeStep;
  if (D.Draft) {
    const DraftModel &Dr = *D.Draft;
    Roofline DraftMachine = D.Machine;
    DraftMachine.Layers = Dr.Layers;
    DraftMachine.Hidden = Dr.Hidden;
    DraftMachine.Params = Dr.Params;
    uint32_t DraftStep = phase(
        "draft.decode", "draft.decode_step_time", DraftMachine, D.Batch,
        D.OneToken,
        B.apply(FormulaId::DecodeStepFlops,
                {Dr.Params, Dr.Layers, Dr.AttnDim, D.Batch, D.Context, D.TP},
                "draft.decode.flops"),
        B.apply(FormulaId::DecodeAttentionFlops,
                {Dr.Layers, Dr.AttnDim, D.Batch, D.Context, D.TP},
                "draft.decode.attention_flops"),
        B.apply(
            FormulaId::DecodeStepBytes,
            {D.Machine.InjectBW ? weightsRead(D, StepTokens, "") : Dr.Weights,
             Dr.KV, D.Batch, D.Context, D.TP},
            "draft.decode.bytes"));
    B.apply(FormulaId::SpeculativeTokensPerStep, {Dr.Acceptance, Dr.Tokens},
            "speculative.tokens_per_step");
    D.TPOT = B.apply(FormulaId::SpeculativeTimePerToken,
                     {DraftStep, D.DecodeStep, Dr.Tokens, Dr.Acceptance},
                     "speculative.time_per_token");
  }
}

std::optional<ScenarioLowering::DraftModel>
ScenarioLowering::draftModel(const ir::Entity &W, uint32_t TP, uint32_t PP,
                             uint32_t Bytes, uint32_t KVBytes) {
  const ir::Entity *M = entity(W, "speculative.draft");
  if (!M)
    return std::nullopt;
  const Dimension One;
  const char *Why = "the draft model's decode step (speculative decoding)";
  DraftModel D;
  D.Params = required(*M, "params", Why);
  D.Layers = required(*M, "layers", Why);
  uint32_t Heads = required(*M, "heads", Why);
  std::optional<uint32_t> HeadDim = field(*M, "head_dim");
  std::optional<uint32_t> Hidden = field(*M, "hidden");
  if (!HeadDim) {
    uint32_t H = Hidden ? *Hidden : required(*M, "hidden", Why);
    HeadDim = B.op(Op::Div, {H, Heads}, One);
  }
  std::optional<uint32_t> KVHeads = field(*M, "kv_heads");
  D.AttnDim = B.op(Op::Mul, {Heads, *HeadDim}, One);
  D.Hidden = Hidden ? *Hidden : D.AttnDim;
  D.Tokens = required(W, "speculative.tokens", "draft tokens per step (k)");
  D.Acceptance = required(W, "speculative.acceptance",
                          "the draft tokens' acceptance rate");
  checkFraction(W, "speculative.acceptance");
  if (Failed)
    return std::nullopt;
  D.Weights = B.apply(FormulaId::WeightBytes, {D.Params, Bytes, TP, PP},
                      "draft.weights_per_device");
  D.KV = B.apply(FormulaId::KVBytesPerToken,
                 {D.Layers, KVHeads ? *KVHeads : Heads, *HeadDim, KVBytes},
                 "draft.kv_bytes_per_token");
  return D;
}

uint32_t ScenarioLowering::phase(const std::string &Phase,
                                 const std::string &TimeName, const Roofline &M,
                                 uint32_t Sequences, uint32_t Tokens,
                                 uint32_t Flops, uint32_t AttentionFlops,
                                 uint32_t Bytes) {
  uint32_t Eta = B.apply(FormulaId::BlendedEfficiency,
                         {Flops, AttentionFlops, M.EtaGemm, M.EtaAttention},
                         Phase + ".efficiency");
  uint32_t Compute = B.apply(FormulaId::ComputeTime, {Flops, M.Peak, Eta},
                             Phase + ".compute_time");
  uint32_t Memory = B.apply(FormulaId::MemoryTime, {Bytes, M.BW, M.EtaMem},
                            Phase + ".memory_time");
  B.apply(FormulaId::Intensity, {Flops, Bytes}, Phase + ".intensity");
  uint32_t Roof = B.apply(FormulaId::RooflineTime, {Compute, Memory},
                          Phase + ".roofline_time");
  const Dimension Second = unit("s");
  if (M.InjectBW) {
    // Wall 6: each layer waits for the slower of its weights streaming in
    // and its GEMMs; attention and the KV cache stay on the device.
    const Dimension One;
    uint32_t LayerParams =
        B.op(Op::Div, {M.Params, B.op(Op::Mul, {M.Layers, M.TP}, One)}, One);
    uint32_t BatchTokens =
        B.op(Op::Mul, {Sequences, Tokens}, G.Nodes[Tokens].Dim);
    uint32_t Layer = B.apply(FormulaId::WeightStreamingLayerTime,
                             {LayerParams, M.WeightBytes, *M.InjectBW,
                              BatchTokens, M.Peak, M.EtaGemm},
                             Phase + ".streaming_layer_time");
    uint32_t Streaming = B.apply(FormulaId::WeightStreamingModelTime,
                                 {M.Layers, Layer}, Phase + ".streaming_time");
    Roof = B.op(Op::Max, {Roof, Streaming}, Second);
    B.name(Roof, Phase + ".bound_time");
  }
  uint32_t Comm;
  if (M.FabricBW) {
    uint32_t Message = B.apply(FormulaId::TensorParallelMessage,
                               {Sequences, Tokens, M.Hidden, M.ActivationBytes},
                               Phase + ".tp_message");
    uint32_t Layer =
        B.apply(FormulaId::TensorParallelLayerTime,
                {Message, M.TP, *M.FabricBW, M.EtaComm, *M.FabricLatency},
                Phase + ".tp_layer_time");
    Comm = B.op(Op::Mul, {M.Layers, Layer}, Second);
  } else {
    Comm = none(Second, "0 s",
                "no intra-node fabric: no tensor-parallel communication is "
                "modelled");
  }
  B.name(Comm, Phase + ".comm_time");
  return B.apply(FormulaId::StepTime, {Roof, Comm}, TimeName);
}

} // namespace mlsc
